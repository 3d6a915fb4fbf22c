"""Prompt manifests fail closed; sessions render within budget on the real transcripts; exchanges are reused."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from core.errors import PromptError
from core.llm.base import LLMRequest, LLMResponse, Usage
from core.prompts import DEFAULT_PROMPTS_DIR, load_template, parse_template
from core.render import render_session
from core.store.exchanges import cached_response, record_exchange
from core.store.ingest import ingest
from core.store.sessions import load_messages

MANIFEST = '{"prompt_id": "x", "version": 1, "placeholders": ["playbook", "reflection"], "output_schema": "%s"}'


def test_seed_prompt_requirements() -> None:
    curator = load_template("curator")
    text = curator.system + curator.user
    for snippet in (
        '"type": "ADD"',
        '"type": "UPDATE"',
        '"type": "MERGE"',
        '"type": "DELETE"',
        '"target_id"',
        '"source_ids"',
        '"merged_text"',
        "At most 10 operations",
        '"operations": []',
    ):
        assert (
            snippet.replace("{", "{{").replace("}", "}}") in text
            or snippet in curator.render(sections="", playbook="", reflection="")[0]
        ), snippet
    assert "transcript" not in curator.manifest.placeholders
    reflection = load_template("reflection")
    system, _ = reflection.render(sections="", playbook="[pat-001] helpful=0 harmful=0 :: x", transcript="t")
    assert "Maximum 10 operations" in system and '"operations": []' in system and "[pat-001]" in system
    reflector = load_template("reflector")
    assert reflector.manifest.output_schema == "ReflectorOutput"


@pytest.mark.parametrize(
    ("body", "schema", "message"),
    [
        (
            "=== SYSTEM ===\n{playbook}\n=== USER ===\nno reflection here",
            "CuratorOutput",
            "lacks placeholder(s) ['reflection']",
        ),
        ("=== SYSTEM ===\n{playbook}\n=== USER ===\n{reflection}", "Essay", "names unknown output schema `Essay`"),
        (
            "=== SYSTEM ===\n{playbook} {extra}\n=== USER ===\n{reflection}",
            "CuratorOutput",
            "uses placeholder(s) ['extra']",
        ),
        ("{playbook}{reflection}", "CuratorOutput", "needs a `=== SYSTEM ===` part"),
    ],
)
def test_bad_templates_fail_before_any_call(tmp_path: Path, body: str, schema: str, message: str) -> None:
    with pytest.raises(PromptError) as err:
        parse_template((MANIFEST % schema) + "\n" + body, tmp_path / "curator.txt")
    assert message in str(err.value)


def test_playbook_override_falls_back_to_default(tmp_path: Path) -> None:
    (tmp_path / "curator.txt").write_text(
        (MANIFEST % "CuratorOutput").replace('"reflection"]', '"reflection", "sections"]')
        + "\n=== SYSTEM ===\nCustom {playbook} {sections}\n=== USER ===\n{reflection}"
    )
    assert load_template("curator", override_dirs=[tmp_path]).system.startswith("Custom")
    assert load_template("reflector", override_dirs=[tmp_path]).source == str(DEFAULT_PROMPTS_DIR / "reflector.txt")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    from core.store.db import connect

    con = connect(tmp_path_factory.mktemp("render") / "r.duckdb")
    ingest(con, [Path(__file__).resolve().parents[2] / "data" / "samples"])
    return con


def _visible(text: str | None) -> str:
    return re.sub(r"<system-reminder>.*?(</system-reminder>|$)", "", text or "", flags=re.S).strip()


@pytest.mark.parametrize("budget", [2_000, 8_000])
def test_budget_compaction_on_real_transcripts(real: duckdb.DuckDBPyConnection, budget: int) -> None:
    sessions = [r[0] for r in real.execute("SELECT session_id FROM sessions WHERE n_messages > 0").fetchall()]
    assert len(sessions) >= 8
    for session_id in sessions:
        messages = load_messages(real, session_id)
        result = render_session(messages, budget)
        prompts = [
            m
            for m in messages
            if m.role == "user" and m.kind == "text" and not m.is_meta and not m.is_sidechain and _visible(m.text)
        ]
        errors = [m for m in messages if m.kind == "tool_result" and m.is_error]  # subagent errors too
        # Every user message and every tool error is still there, at least its beginning.
        assert result.user_messages == len(prompts), session_id
        assert result.tool_errors == len(errors), session_id
        for m in prompts:
            head = _visible(m.text)[:40]
            assert head.split("\n")[0][:20] in result.text, (session_id, head)
        if result.raw_tokens_est > budget:
            assert result.tokens_est <= budget or result.compaction_steps[-1].startswith("user messages"), session_id
        assert "<system-reminder>" not in result.text
        assert result.compacted == bool(result.compaction_steps)
        if result.compacted:
            assert result.dropped


def test_exchanges_are_reused(real: duckdb.DuckDBPyConnection) -> None:
    request = LLMRequest(
        step="curator", session_id="s", model="claude-sonnet-4-5", system="S", user="U", schema_name="CuratorOutput"
    )
    assert cached_response(real, request) is None
    failed = LLMResponse(provider="anthropic", model="m", error="HTTP 529: busy")
    record_exchange(real, request, failed, parsed=None, playbook="default", playbook_version=0, run_id="r1")
    assert cached_response(real, request) is None  # failures are never reused
    good = LLMResponse(
        text='{"reasoning": "r", "operations": []}',
        provider="anthropic",
        model="m",
        usage=Usage(input_tokens=10, output_tokens=5),
        cost_usd=0.01,
    )
    record_exchange(
        real,
        request,
        good,
        parsed={"reasoning": "r", "operations": []},
        playbook="default",
        playbook_version=0,
        run_id="r1",
    )
    hit = cached_response(real, request)
    assert hit is not None and hit.cached and hit.text == good.text
    other = request.model_copy(update={"user": "different"})
    assert cached_response(real, other) is None
