"""Nothing learned is lost to timing: a session still being written waits until it is idle, a session that
grows after it was applied is curated again for its new part only (a new version, linked to the first),
and a "too short" skip is reconsidered when the session grows."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx2
import pytest

from core.llm.claude import AnthropicProvider, make_client
from core.llm.pricing import CostCap
from core.store.db import open_db
from core.store.history import history
from core.store.ingest import ingest
from flows.config import Settings
from flows.models.providers import ProviderSpec
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import message

MODEL = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")


def write_session(path: Path, session_id: str, texts: list[str], start: datetime) -> None:
    lines = []
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "sessionId": session_id,
                    "uuid": f"{session_id}-{i}",
                    "timestamp": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
                    "message": {"role": role, "content": text},
                }
            )
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.slow
def test_sessions_wait_until_idle_grow_into_new_parts_and_short_ones_are_reconsidered(tmp_path: Path) -> None:
    bodies: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = request.content.decode()
        bodies.append(body)
        curator = "operations" in json.dumps(json.loads(body).get("output_config", {}))
        n = len(bodies)
        text = (
            json.dumps({"reasoning": "r", "operations": [{"type": "ADD", "text": f"Lesson number {n}."}]})
            if curator
            else json.dumps({"analysis": "a", "bullet_tags": []})
        )
        return httpx2.Response(200, json=message(text, input_tokens=5, output_tokens=5))

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        return AnthropicProvider(client, cost_cap=cap)

    folder = tmp_path / "t"
    old = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    now = datetime.now(UTC)
    first = [f"old prompt {i} about ALPHA" for i in range(6)]
    write_session(folder / "a.jsonl", "grows", first, old)
    write_session(folder / "b.jsonl", "short", ["hi", "hello"], old)
    write_session(folder / "c.jsonl", "live", [f"live {i}" for i in range(6)], now - timedelta(minutes=5))
    settings = Workspace.of(
        Settings(db=tmp_path / "g.duckdb", out_dir=tmp_path / "out", min_messages=4, idle_minutes=30)
    )

    def run() -> object:
        with open_db(settings.settings.db) as con:
            ingest(con, [folder])
        return run_curation(settings, "default", MODEL, factory=factory)

    one = run()
    assert one.sessions_applied == 1 and one.skips == {"short": one.skips["short"]}  # "live" is still being written
    assert "too short" in one.skips["short"]

    # The applied session grows by a new part; the short one grows past the minimum; "live" went quiet.
    write_session(folder / "a.jsonl", "grows", first + [f"new prompt {i} about BETA" for i in range(4)], old)
    write_session(folder / "b.jsonl", "short", ["hi", "hello", "now a real task", "done", "thanks", "ok"], old)
    write_session(folder / "c.jsonl", "live", [f"live {i}" for i in range(6)], now - timedelta(hours=2))
    seen = len(bodies)
    two = run()
    assert two.sessions_applied == 3 and two.sessions_skipped == 0
    reflector_prompt = next(b for b in bodies[seen:] if "BETA" in b)
    assert "ALPHA" not in reflector_prompt  # only the new part is judged again
    with open_db(settings.settings.db) as con:
        notes = [v.note for v in history(con, "default") if v.session_id == "grows"]
    assert notes == [None, "the session's new part (it was first applied in version 1)"]
    assert run().sessions_considered == 0  # nothing grew since: nothing to do
