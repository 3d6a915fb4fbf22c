"""A tool's input with secrets used as keys of one object, ingested: the stored input keeps them apart as `push` does
(` #2`), so no value is lost to a duplicate key, and holds no secret."""

from __future__ import annotations

import json
import string
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.store.db import open_db
from core.store.ingest import ingest
from core.transcript_redaction import keys_kept_apart
from tests.profiles import examples

_ALNUM = string.ascii_letters + string.digits
# Tokens every redactor rule set finds alone, as a key or a value: their prefix and length say what they are.
_SECRET = st.one_of(
    st.text(_ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s),
    st.text(_ALNUM, min_size=20, max_size=20).map(lambda s: "glpat-" + s),
    st.text(_ALNUM, min_size=40, max_size=40).map(lambda s: "sk-ant-api03-" + s),
).filter(lambda s: any(c.isdigit() for c in s) and any(c.isupper() for c in s))
_KEY = st.one_of(_SECRET, st.sampled_from(["path", "command", "k1", "k2"]))
_VALUE = st.one_of(st.integers(0, 10**6).map(lambda n: f"value {n}"), st.integers(), _SECRET)
_NODE = st.recursive(
    _VALUE, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=4), max_leaves=12
)


def _leaves(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [x for v in node.values() for x in _leaves(v)]
    if isinstance(node, list):
        return [x for v in node for x in _leaves(v)]
    return [node]


def _secrets(node: Any) -> set[str]:
    if isinstance(node, dict):
        return {k for k in node if k.startswith(("ghp_", "glpat-", "sk-ant-"))} | {
            s for v in node.values() for s in _secrets(v)
        }
    if isinstance(node, list):
        return {s for v in node for s in _secrets(v)}
    return {node} if isinstance(node, str) and node.startswith(("ghp_", "glpat-", "sk-ant-")) else set()


def _stored_input(tmp_path: Path, tool_input: dict[str, Any]) -> str:
    """The tool input the store keeps for one call whose input is `tool_input`, from a Claude Code file."""
    use = {"type": "tool_use", "id": "t1", "name": "Edit", "input": tool_input}
    lines = [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "cwd": "/work/proj", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "edit it"}},
        {"type": "assistant", "sessionId": "s1", "uuid": "u2", "cwd": "/work/proj",
         "timestamp": "2026-01-01T00:00:01Z", "message": {"id": "m1", "role": "assistant", "content": [use]}},
    ]  # fmt: skip
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open_db(tmp_path / "p.duckdb") as con:
        ingest(con, [folder])
        row = con.execute("SELECT tool_input FROM messages WHERE kind = 'tool_use'").fetchone()
    assert row is not None
    return str(row[0])


def test_two_secret_keys_of_one_object_are_both_kept(tmp_path: Path) -> None:
    one, two = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8", "ghp_" + "Z9y8X7w6V5" * 3 + "U4t3S2"
    stored = _stored_input(tmp_path, {"edits": {one: "first", two: "second"}})
    assert json.loads(stored) == {"edits": {"[REDACTED:github_token]": "first", "[REDACTED:github_token] #2": "second"}}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(node=st.dictionaries(_KEY, _NODE, min_size=1, max_size=4))
def test_an_ingested_object_keeps_every_value_and_no_secret(tmp_path_factory: Any, node: dict[str, Any]) -> None:
    stored = _stored_input(tmp_path_factory.mktemp("ingest"), node)
    read = json.loads(stored)  # as a reader reads it: a key given twice keeps its last value only
    plain = [x for x in _leaves(node) if x not in _secrets(node)]
    assert Counter(map(json.dumps, plain)) <= Counter(map(json.dumps, _leaves(read)))
    assert len(_leaves(read)) == len(_leaves(node))
    assert not any(secret in stored for secret in _secrets(node))


def test_a_key_the_original_gives_twice_stays_as_it_was() -> None:
    original = '{"a": 1, "a": 2, "ghp_' + "A1b2C3d4E5" * 3 + 'F6g7H8": 3}'
    redacted = original.replace("ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8", "[REDACTED:github_token]")
    assert keys_kept_apart(original, redacted) == redacted  # nothing to keep apart: written as it was
    twice = original[:-1] + ', "ghp_' + "Z9y8X7w6V5" * 3 + 'U4t3S2": 4}'
    both = twice.replace("ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8", "[REDACTED:github_token]").replace(
        "ghp_" + "Z9y8X7w6V5" * 3 + "U4t3S2", "[REDACTED:github_token]"
    )
    assert keys_kept_apart(twice, both) == ('{"a":1,"a":2,"[REDACTED:github_token]":3,"[REDACTED:github_token] #2":4}')
