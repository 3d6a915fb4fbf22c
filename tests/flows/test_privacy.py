"""Personal data planted in a transcript reaches no model request, no playbook entry, no export and no
report: home paths, user names in paths, e-mail addresses and configured patterns are masked on the way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from core.llm.claude import AnthropicProvider, make_client
from core.llm.pricing import CostCap
from core.store.db import open_db
from core.store.ingest import ingest
from core.store.versions import load_version
from flows.config import Settings
from flows.delivery.exports import export_playbook
from flows.insight.evolution import write_evolution_report
from flows.models.providers import ProviderSpec
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import message

PLANTED = ["alice", "build-01", "Alice Example", "/home/", "/Users/"]


def record(i: int, kind: str, message: dict[str, Any]) -> str:
    return json.dumps(
        {
            "type": kind,
            "sessionId": "priv-1",
            "uuid": f"u{i}",
            "cwd": "/home/alice/acme-proj",
            "timestamp": f"2026-03-01T10:00:{i:02d}Z",
            "message": message,
        }
    )


def planted_session(path: Path, session_id: str = "priv-1") -> None:
    tool = {"type": "tool_use", "name": "Bash", "input": {"command": "cat /home/alice/acme-proj/app.py"}}
    lines = [
        record(
            0, "user", {"role": "user", "content": "Fix /Users/alice/acme-proj/app.py, then mail alice@example.com"}
        ),
        record(1, "assistant", {"role": "assistant", "id": "m1", "content": [{**tool, "id": "t1"}]}),
        record(
            2,
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": "Error: /home/alice/acme-proj/app.py not found on build-01.acme.internal",
                    }
                ],
            },
        ),
        record(3, "assistant", {"role": "assistant", "id": "m2", "content": [{**tool, "id": "t2"}]}),
        record(
            4,
            "user",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "print('ok')"}]},
        ),
        record(5, "user", {"role": "user", "content": "No, always ask Alice Example before editing /home/alice"}),
        record(6, "assistant", {"role": "assistant", "id": "m3", "content": [{"type": "text", "text": "Done."}]}),
    ]
    lines = [line.replace('"priv-1"', json.dumps(session_id)) for line in lines]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def leaks(text: str) -> list[str]:
    return [p for p in PLANTED if p.lower() in text.lower()]


def model_answer(request: httpx2.Request) -> httpx2.Response:
    body = json.loads(request.content)
    curator = "operations" in json.dumps(body.get("output_config", {})) or "CuratorOutput" in json.dumps(body)
    text = (
        json.dumps(
            {
                "reasoning": "r",
                "operations": [
                    {"type": "ADD", "text": "Run it from /home/alice/acme-proj, ask alice@example.com first."}
                ],
            }
        )
        if curator
        else json.dumps({"analysis": "the file path was wrong", "bullet_tags": []})
    )
    return httpx2.Response(200, json=message(text, input_tokens=10, output_tokens=5))


@pytest.mark.slow
def test_personal_data_reaches_no_request_entry_export_or_report(tmp_path: Path) -> None:
    planted_session(tmp_path / "projects" / "-home-alice-acme-proj" / "priv-1.jsonl")
    # The same error in a second session: the heuristic proposes only what recurs.
    planted_session(tmp_path / "projects" / "-home-alice-acme-proj" / "priv-2.jsonl", "priv-2")
    settings = Workspace.of(
        Settings(
            db=tmp_path / "p.duckdb",
            out_dir=tmp_path / "out",
            min_messages=1,
            personal_patterns=["Alice Example", r"build-01\.acme\.internal"],
        )
    )
    with open_db(settings.settings.db) as con:
        ingest(con, [tmp_path / "projects"])
    bodies: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(request.content.decode())
        return model_answer(request)

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(
            api_key="sk-ant-test-key-000000000000", http_client=httpx2.Client(transport=httpx2.MockTransport(handler))
        )
        return AnthropicProvider(client, cost_cap=cap)

    model = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")
    summary = run_curation(settings, "default", model, factory=factory)
    assert summary.sessions_applied == 2 and len(bodies) == 4
    assert [leaks(b) for b in bodies] == [[]] * 4  # neither the reflector nor the curator request
    heuristic = Workspace.of(settings.settings.model_copy(update={"playbook": "rules"}))
    assert run_curation(heuristic, "rules", heuristic.provider("heuristic")).sessions_applied == 2
    with open_db(settings.settings.db) as con:
        entries = [e.text for name in ("default", "rules") for _, e in load_version(con, name).entries()]
        counts = con.execute("SELECT n_secrets_redacted, n_personal_masked FROM sessions").fetchone()
    assert len(entries) >= 2 and [leaks(t) for t in entries] == [[]] * len(entries)
    assert any("~/acme-proj" in t for t in entries)  # the path stays useful, without the person
    assert counts is not None and counts[1] >= 6
    written = export_playbook(settings, "default") + export_playbook(heuristic, "rules")
    report = write_evolution_report(settings.settings.db, "rules", tmp_path / "report", settings.redactor)
    for path in [*written, report.index]:
        assert leaks(path.read_text()) == [], path
