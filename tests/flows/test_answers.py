"""A model answer cut at its output limit, or of the wrong shape, is a failed call with its reason: the session is
tried again by the next runs and quarantined after `max_attempts`, never applied as a session that found nothing.
Through the command line against real model stand-ins: a Messages API server on loopback (`stop_reason:
max_tokens`), an OpenAI-compatible one (`finish_reason: length`), and the fake `claude` on PATH
(tests/data/fake_claude)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from core.store.db import open_db
from flows.cli import app
from tests.helpers import message
from tests.servers import JsonHandler, chat_completion, serving

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "data" / "samples" / "claude-code" / "spotter" / "short.jsonl"
FAKE_CLAUDE = ROOT / "tests" / "data" / "fake_claude"

REFLECTION = {
    "analysis": "The agent pushed before the checks ran, and the push was refused.",
    "bullet_tags": [],  # the session had no entry to tag
}
TAGGED = REFLECTION | {"bullet_tags": [{"name": "pat-001", "tag": "helpful", "rationale": "it was followed"}]}
CURATION = {
    "reasoning": "one lesson",
    "operations": [
        {"type": "ADD", "text": "Let the checks finish before pushing.", "section": "PATTERNS & APPROACHES"}
    ],
}
# Cut just after its first complete inner object (a bullet tag), the answer an earlier version took for the whole.
CUT = json.dumps(TAGGED)[: json.dumps(TAGGED).index("}") + 1]
CURATOR_HEADER = (ROOT / "prompts" / "curator.txt").read_text().splitlines()[0]


class ModelServer:
    """A model on loopback answering `POST /v1/messages` (Anthropic) and `POST /v1/chat/completions` (OpenAI-
    compatible): `answers[step]` is the text for the reflector's or the curator's request and whether the model
    stopped at its output limit there. `calls` lists the steps asked, in order."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[str, bool]] = {
            "reflector": (json.dumps(REFLECTION), False),
            "curator": (json.dumps(CURATION), False),
        }
        self.calls: list[str] = []
        owner = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = self.body()
                chat = self.path.endswith("/chat/completions")
                system = body["messages"][0]["content"] if chat else body["system"][0]["text"]
                step = "reflector" if system.startswith("You are the Reflector") else "curator"
                owner.calls.append(step)
                text, cut = owner.answers[step]
                if chat:
                    reply = chat_completion(text, "length" if cut else "stop", prompt=300, completion=40)
                else:
                    reply = {**message(text, input_tokens=300, output_tokens=40)}
                    reply["stop_reason"] = "max_tokens" if cut else "end_turn"
                self.answer(reply)

        self.handler = Handler
        self.url = ""


@pytest.fixture
def model() -> Iterator[ModelServer]:
    stand_in = ModelServer()
    with serving(stand_in.handler) as url:
        stand_in.url = url
        yield stand_in


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exports go to this test's folder; no Prefect server is asked (the runs go straight through the steps)."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))


def ingested(tmp_path: Path) -> list[str]:
    db = ["--db", str(tmp_path / "a.duckdb")]
    assert CliRunner().invoke(app, ["ingest", str(SESSION), *db]).exit_code == 0
    return db


def curate(db: list[str], llm: str, env: dict[str, str]) -> tuple[Result, dict[str, Any]]:
    """`playbook curate --json` and its one summary."""
    done = CliRunner().invoke(
        app,
        ["curate", "--llm", llm, "--json", *db],
        env={"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_MAX_ATTEMPTS": "2"} | env,
    )
    (summary,) = json.loads(done.stdout)
    return done, summary


def anthropic(model: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-ant-test-0000000000000000", "ANTHROPIC_BASE_URL": model.url}


def failed_rows(db: list[str]) -> list[tuple[str, int, str, str]]:
    listed = CliRunner().invoke(app, ["sessions", "--failed", "--json", *db])
    return [(r["session_id"], r["attempts"], r["status"], r["reason"]) for r in json.loads(listed.stdout)]


def stored(db: list[str]) -> tuple[int, list[str | None]]:
    """(session versions written, the error of every stored exchange)."""
    with open_db(Path(db[1])) as con:
        (versions,) = con.execute("SELECT count(*) FROM versions WHERE source = 'session'").fetchone() or (0,)
        errors = [e for (e,) in con.execute("SELECT error FROM llm_calls ORDER BY created_at").fetchall()]
    return versions, errors


@pytest.mark.slow
def test_a_reflection_cut_at_max_tokens_is_tried_again_then_quarantined_never_applied(
    tmp_path: Path, model: ModelServer
) -> None:
    db = ingested(tmp_path)
    model.answers["reflector"] = (CUT, True)
    first, summary = curate(db, "anthropic", anthropic(model))
    assert first.exit_code == 1, first.output  # every session it attempted failed, as the house says
    assert (summary["status"], summary["sessions_applied"], summary["sessions_failed"]) == ("failed", 0, 1)
    ((session, reason),) = summary["failures"].items()
    assert reason == (
        "truncated: the model stopped at its output limit (`stop_reason: max_tokens`) before the answer ended; raise"
        " `reflector_max_tokens` (now 4,096) if it repeats"
    )
    assert first.stderr.strip().splitlines()[-1] == (
        f"Error: Every session this run attempted failed (1); the first reason: {reason}"
    )
    assert model.calls == ["reflector"]  # nothing went on to the curator
    assert failed_rows(db) == [(session, 1, "failed", reason)]

    second, summary = curate(db, "anthropic", anthropic(model))  # the next run tries it again: cut again
    assert second.exit_code == 1 and summary["quarantined"] == [session]
    assert model.calls == ["reflector", "reflector"]  # called again, not answered from the stored cut-off text
    assert failed_rows(db) == [(session, 2, "quarantined", reason)]
    third, summary = curate(db, "anthropic", anthropic(model))
    assert third.exit_code == 0 and summary["status"] == "nothing-to-do" and len(model.calls) == 2
    assert stored(db) == (0, [reason, reason])  # no version, and each exchange says why it failed
    runs = json.loads(CliRunner().invoke(app, ["runs", "--json", *db]).stdout)
    assert [(r["status"], r["sessions_applied"], r["sessions_failed"]) for r in runs[:3]] == [
        ("nothing-to-do", 0, 0),
        ("failed", 0, 1),
        ("failed", 0, 1),
    ]

    model.answers["reflector"] = (json.dumps(REFLECTION), False)  # the model answers whole again
    assert CliRunner().invoke(app, ["retry", "--all", *db]).exit_code == 0
    fixed, summary = curate(db, "anthropic", anthropic(model))
    assert fixed.exit_code == 0 and (summary["status"], summary["sessions_applied"]) == ("ok", 1)
    assert model.calls[2:] == ["reflector", "curator"] and stored(db)[0] == 1


@pytest.mark.parametrize(
    ("step", "text", "reason"),
    [
        (
            "reflector",
            json.dumps(CURATION),  # the curator's answer to the reflector
            "wrong shape: not the reflector's answer (an object of `analysis`, `bullet_tags`): `reasoning` is not one"
            " of its keys; `operations` is not one of its keys",
        ),
        ("reflector", json.dumps([REFLECTION]), "wrong shape: the answer's JSON is a list, not an object"),
        (
            "curator",
            CURATOR_HEADER,  # the prompt's own manifest, copied back
            "wrong shape: not the curator's answer (an object of `reasoning`, `operations`): `prompt_id` is not one"
            " of its keys; `version` is not one of its keys; `placeholders` is not one of its keys",
        ),
        ("reflector", "I found nothing worth a lesson.", "unparseable model output (no JSON object)"),
        (
            "reflector",
            CUT,  # no stop reason says so, but the document never closes
            f"truncated: the answer's JSON never closes (it stops {len(CUT):,} characters after it opens): the model"
            " was cut short",
        ),
        (  # what the bundled 135M model answered: its prompt's shape, with ids of an empty playbook made up
            "reflector",
            json.dumps(TAGGED | {"bullet_tags": [{"name": f"pat-00{i}", "tag": "helpful"} for i in range(1, 6)]}),
            "wrong answer: every entry it tags is one the playbook does not have (`pat-001`, `pat-002`, `pat-003`"
            " and 2 more)",
        ),
        (
            "curator",
            json.dumps(
                {
                    "reasoning": "Why these changes",
                    "operations": [{"type": "MERGE", "source_ids": ["pat-001", "pat-002"]}],
                }
            ),
            "wrong answer: every entry its operations name is one the playbook does not have (`pat-001`, `pat-002`)",
        ),
    ],
)
def test_a_wrong_shaped_answer_is_a_failed_call_with_its_reason(
    tmp_path: Path, model: ModelServer, step: str, text: str, reason: str
) -> None:
    db = ingested(tmp_path)
    model.answers[step] = (text, False)
    done, summary = curate(db, "anthropic", anthropic(model))
    assert done.exit_code == 1, done.output
    assert (summary["status"], summary["sessions_applied"], list(summary["failures"].values())) == (
        "failed",
        0,
        [reason],
    )
    ((_, attempts, status, said),) = failed_rows(db)
    assert (attempts, status, said) == (1, "failed", reason)
    assert stored(db) == (0, [reason] if step == "reflector" else [None, reason])


def test_a_whole_answer_still_applies(tmp_path: Path, model: ModelServer) -> None:
    db = ingested(tmp_path)
    done, summary = curate(db, "anthropic", anthropic(model))
    assert done.exit_code == 0, done.output
    assert (summary["status"], summary["sessions_applied"], summary["failures"]) == ("ok", 1, {})
    assert model.calls == ["reflector", "curator"] and stored(db) == (1, [None, None])


@pytest.mark.slow
def test_an_openai_compatible_answer_cut_at_length_fails_then_a_whole_one_applies(
    tmp_path: Path, model: ModelServer
) -> None:
    db = ingested(tmp_path)
    env = {"PLAYBOOK_OPENAI_BASE_URL": f"{model.url}/v1"}
    model.answers["curator"] = (json.dumps(CURATION)[:-30], True)
    cut, summary = curate(db, "openai", env)
    assert cut.exit_code == 1, cut.output
    (reason,) = summary["failures"].values()
    assert reason.startswith(
        "truncated: the model stopped at its output limit (`finish_reason: length`) before the answer ended; raise"
        " `curator_max_tokens`"
    )
    assert model.calls == ["reflector", "curator"]  # not asked a second time for JSON only: it would stop there too
    model.answers["curator"] = (json.dumps(CURATION), False)
    whole, summary = curate(db, "openai", env)  # the next run tries the session again
    assert whole.exit_code == 0 and (summary["sessions_applied"], summary["failures"]) == (1, {})
    assert model.calls[2:] == ["curator"]  # its reflection was whole: reused, not asked again


@pytest.mark.slow
def test_the_claude_cli_cut_or_wrong_shaped_answer_fails_and_a_whole_one_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_CLAUDE}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(tmp_path / "claude.log"))
    db = ingested(tmp_path)
    env = {"PLAYBOOK_CLAUDE_CLI": "claude", "PLAYBOOK_MAX_ATTEMPTS": "3"}
    cut, summary = curate(db, "claude-cli", env | {"FAKE_CLAUDE_MODE": "truncated"})
    assert cut.exit_code == 1 and list(summary["failures"].values()) == [
        "truncated: the model stopped at its output limit (`claude -p` said `stop_reason: max_tokens`) before the"
        " answer ended"
    ]
    wrong, summary = curate(db, "claude-cli", env | {"FAKE_CLAUDE_MODE": "wrong-shape"})
    (reason,) = summary["failures"].values()
    assert wrong.exit_code == 1 and reason.startswith("wrong shape: not the reflector's answer")
    ((_, attempts, status, _),) = failed_rows(db)
    assert (attempts, status) == (2, "failed")
    whole, summary = curate(db, "claude-cli", env)
    assert whole.exit_code == 0 and (summary["sessions_applied"], summary["failures"]) == (1, {})
    assert failed_rows(db) == []
