"""A session's counts (`sessions` as `list_sessions` reads it) against a count straight from the records written: for
any mix of records sharing message ids, meta records, tool calls and failed results, in the main thread and in
subagents, and at any batch size (a session's files may be stored by different batches)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.store.db import open_db
from core.store.ingest import BATCH_BYTES, ingest
from core.store.sessions import list_sessions
from tests.helpers import claude_expected
from tests.profiles import examples

SESSION = "5e55e55e-0000-4000-8000-000000000001"
START = datetime(2026, 5, 1, tzinfo=UTC)

# One record: what it holds, the assistant message id it carries (ids 0-2 are shared by several records, as a streamed
# answer's records are; None: a user record, keyed by its uuid), whether it is meta, and the subagent it is from.
_RECORD = st.tuples(
    st.sampled_from(["prompt", "answer", "call", "result", "failed"]),
    st.one_of(st.none(), st.integers(min_value=0, max_value=2)),
    st.booleans(),
    st.one_of(st.none(), st.sampled_from(["agent-a", "agent-b", "agent-c"])),
)


def _record(i: int, spec: tuple[str, int | None, bool, str | None]) -> dict[str, Any]:
    kind, message_id, meta, agent = spec
    blocks: list[dict[str, Any]]
    if kind == "prompt":
        role, blocks = "user", [{"type": "text", "text": f"please do step {i}"}]
    elif kind == "answer":
        role, blocks = "assistant", [{"type": "text", "text": f"done with step {i}"}]
    elif kind == "call":
        call = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
        role, blocks = "assistant", [call]
    else:
        role = "user"
        blocks = [{"type": "tool_result", "tool_use_id": f"toolu_r{i}", "content": "out", "is_error": kind == "failed"}]
    message: dict[str, Any] = {"role": role, "content": blocks}
    if role == "assistant" and message_id is not None:
        message["id"] = f"msg_{message_id}"
    record: dict[str, Any] = {
        "type": role,
        "sessionId": SESSION,
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "timestamp": (START + timedelta(seconds=i)).isoformat(),  # one time a record: no two are one part
        "isSidechain": agent is not None,
        "message": message,
    }
    if meta:
        record["isMeta"] = True
    if agent is not None:
        record["agentId"] = agent
    return record


@settings(max_examples=examples(40), deadline=None)
@given(
    specs=st.lists(_RECORD, min_size=1, max_size=25),
    in_subagent_files=st.booleans(),
    batch_bytes=st.sampled_from([1, BATCH_BYTES]),
)
def test_counts_are_those_of_the_records(
    specs: list[tuple[str, int | None, bool, str | None]], in_subagent_files: bool, batch_bytes: int
) -> None:
    """Messages (records sharing an id are one), prompts, calls and failed results of the main thread and of subagents,
    and the subagents themselves, as counted from the records; a batch a file (1 byte) or all in one."""
    first = _record(0, ("prompt", None, False, None))  # the main thread starts the session
    records = [first, *(_record(i, spec) for i, spec in enumerate(specs, start=1))]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "projects" / "-work-demo"
        main = project / f"{SESSION}.jsonl"
        files: dict[Path, list[dict[str, Any]]] = {main: []}
        for record in records:
            agent = record.get("agentId")
            path = project / SESSION / "subagents" / f"{agent}.jsonl" if agent and in_subagent_files else main
            files.setdefault(path, []).append(record)
        for path, rows in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with open_db(Path(tmp) / "p.duckdb") as con:
            ingest(con, [Path(tmp) / "projects"], batch_bytes=batch_bytes)
            (row,) = list_sessions(con)
        expected = claude_expected(list(files))
    expected.pop("n_noise_records")
    expected["n_subagents"] = len({r["agentId"] for r in records if r.get("agentId")})
    assert {k: getattr(row, k) for k in expected} == expected
