"""A run sends a model server no more requests at once than it has slots (llama.cpp's `GET /props` says how many),
so the others wait in playbook's queue, not in the server's where their deadline runs; each answered call is a
progress line."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES
from tests.servers import JsonHandler, chat_completion, serving

runner = CliRunner()
REFLECTION = {"analysis": "x", "bullet_tags": []}
CURATION = {"reasoning": "nothing new", "operations": []}


class SlotServer:
    """An OpenAI-compatible server on loopback that takes `answer_s` an answer and counts the most requests it held
    at once; `slots`: what its `/props` says (None: it has no `/props`, as vLLM or Ollama)."""

    def __init__(self, slots: int | None, answer_s: float = 0.3) -> None:
        self.slots, self.most, self.calls = slots, 0, 0
        lock, held = threading.Lock(), [0]
        owner = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path == "/props" and owner.slots is not None:
                    self.answer({"total_slots": owner.slots, "model_path": "smol.gguf"})
                else:
                    self.answer({"error": "not found"}, status=404)

            def do_POST(self) -> None:
                body = self.body()
                with lock:
                    held[0] += 1
                    owner.most, owner.calls = max(owner.most, held[0]), owner.calls + 1
                time.sleep(answer_s)
                with lock:
                    held[0] -= 1
                system = body["messages"][0]["content"]
                text = REFLECTION if system.startswith("You are the Reflector") else CURATION
                self.answer(chat_completion(json.dumps(text)))

        self.handler = Handler


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    shutil.copytree(SAMPLES / "claude-code", tmp_path / "samples")
    db = ["--db", str(tmp_path / "p.duckdb")]
    assert runner.invoke(app, ["ingest", str(tmp_path / "samples"), *db]).exit_code == 0
    yield db


def curate(db: list[str], url: str) -> tuple[dict, str]:
    env = {"PLAYBOOK_OPENAI_BASE_URL": f"{url}/v1", "PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_CONCURRENCY": "4"}
    env |= {"PLAYBOOK_EPOCH_SIZE": "8", "PLAYBOOK_NEAR_DUPLICATES": "off"}
    done = runner.invoke(app, ["curate", "--llm", "openai", "--json", *db], env=env)
    assert done.exit_code == 0, done.output
    (summary,) = json.loads(done.stdout)
    return summary, done.stderr


@pytest.mark.slow
def test_a_one_slot_server_gets_one_request_at_a_time_and_each_answer_is_a_progress_line(
    sessions: list[str],
) -> None:
    server = SlotServer(slots=1)
    with serving(server.handler) as url:
        summary, stderr = curate(sessions, url)
    assert summary["sessions_applied"] >= 3 and summary["calls_made"] == server.calls >= 6
    assert server.most == 1  # asked for 4 at a time; the server said it answers one
    # An epoch a slot: each session is reflected on and curated before the next one's calls start.
    reflected = summary["sessions_applied"]
    assert summary["epochs"] == reflected
    assert stderr.count("reflector: 1/1 calls") == reflected  # (the curator's same answer is reused after the first)
    assert "curator: 1/1 calls" in stderr


@pytest.mark.slow
def test_a_server_that_does_not_say_its_slots_gets_the_runs_concurrency(sessions: list[str]) -> None:
    server = SlotServer(slots=None)
    with serving(server.handler) as url:
        summary, _ = curate(sessions, url)
    assert summary["sessions_applied"] >= 3 and 1 < server.most <= 4
    assert summary["epochs"] < summary["sessions_applied"]  # the setting's epochs of 8
