"""Hostile transcripts: no record shape and no file can stop an ingest, and nothing stored can stop a run.

A poison line appended to a good session (a content block that is not an object, `null`, a block without a
type) used to be stored half-valid and break every later reflect step; a deeply nested line or a file name
that is not UTF-8 used to abort the whole ingest.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.render import render_session
from core.store.db import connect
from core.store.ingest import ingest
from core.store.sessions import load_messages
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
SHORT = ROOT / "data" / "samples" / "claude-code" / "spotter" / "short.jsonl"
SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca"
KEYS = ["type", "text", "content", "name", "id", "input", "tool_use_id", "is_error", "thinking", "role"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.sampled_from(["text", "tool_use", "user"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
# Content lists whose blocks may be anything: the shapes that used to be stored half-valid.
BLOCKS = st.lists(
    st.integers() | st.none() | st.text(max_size=5) | st.dictionaries(st.sampled_from(KEYS), JSON, max_size=3),
    min_size=1,
    max_size=3,
)
RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "assistant", "progress", "permission-mode"]) | JSON},
    optional={
        "sessionId": st.just(SHORT_ID) | JSON,
        "uuid": st.text(max_size=6) | JSON,
        "isSidechain": JSON,
        "isMeta": JSON,
        "timestamp": st.just("2026-02-10T21:12:00Z") | JSON,
        "message": st.fixed_dictionaries({"content": BLOCKS | JSON}, optional={"role": JSON, "id": JSON}) | JSON,
    },
)


def sessions_read_back(con: duckdb.DuckDBPyConnection) -> int:
    """Every stored session loads and renders: nothing half-valid was stored."""
    ids = [r[0] for r in con.execute("SELECT session_id FROM sessions").fetchall()]
    for session_id in ids:
        render_session(load_messages(con, session_id), 2000)
    return len(ids)


@pytest.mark.slow
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(RECORD, min_size=1, max_size=4))
def test_any_appended_records_leave_the_session_readable(records: list[dict[str, Any]], tmp_path: Path) -> None:
    work = tmp_path / f"fuzz-{os.urandom(4).hex()}"
    (work / "p").mkdir(parents=True)
    target = work / "p" / "short.jsonl"
    shutil.copy(SHORT, target)
    with target.open("a", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record) + "\n")
    con = connect(work / "f.duckdb")
    try:
        summary = ingest(con, [work / "p"])
        assert [r.status for r in summary.results] == ["new"]
        assert sessions_read_back(con) >= 1
    finally:
        con.close()


@pytest.mark.parametrize(
    "poison",
    [
        '{"type":"assistant","message":{"content":[1]}}',
        '{"type":"assistant","message":{"content":[null]}}',
        '{"type":"assistant","message":{"content":["a string block"]}}',
        '{"type":"assistant","message":{"content":[{"text":"a block without a type"}]}}',
    ],
)
def test_a_poison_line_is_a_bad_line_not_a_broken_session(poison: str, tmp_path: Path) -> None:
    target = tmp_path / "p" / "short.jsonl"
    target.parent.mkdir()
    target.write_bytes(SHORT.read_bytes() + poison.encode() + b"\n")
    con = connect(tmp_path / "x.duckdb")
    summary = ingest(con, [target])
    assert [(r.status, r.bad_lines) for r in summary.results] == [("new", 1)]
    assert sessions_read_back(con) == 1
    con.close()


def test_hostile_files_are_named_and_the_others_ingested(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    folder.mkdir()
    shutil.copy(SHORT, folder / "good.jsonl")
    (folder / "deep.jsonl").write_text("[" * 2000 + "]" * 2000 + "\n" + '{"a":' * 3000 + "1" + "}" * 3000 + "\n")
    (folder / "brackets.jsonl").write_text("[[[[\n")
    bad_name = os.fsdecode(bytes(folder) + b"/bad\xffname.jsonl")
    shutil.copy(SHORT, bad_name)
    con = connect(tmp_path / "h.duckdb")
    summary = ingest(con, [folder])
    by_name = {Path(r.path).name: (r.status, r.error) for r in summary.results}
    assert by_name["good.jsonl"] == ("new", None)
    assert by_name["bad\\xffname.jsonl"] == ("failed", "the file name is not valid UTF-8; rename the file to ingest it")
    assert by_name["deep.jsonl"][0] == "unrecognised" and "not a JSON object" in str(by_name["deep.jsonl"][1])
    assert by_name["brackets.jsonl"][0] == "unrecognised"
    assert sessions_read_back(con) == 1
    con.close()
