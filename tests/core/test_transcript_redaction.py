"""`redact_transcript`, what `push` sends: a secret leaves no record, as a string value or as an object key at any
depth, and each record is still JSON of the same shape (keys that clean to one text stay apart)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.redact import Redactor, redact
from core.transcript_redaction import redact_transcript
from tests.secret_kinds import KINDS

# The kinds the redactor finds standing alone (as a key or a whole value is): the others need words around them.
ALONE = sorted({p.secret for p in KINDS if p.secret not in redact(p.secret)[0]})
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
secrets = st.sampled_from(ALONE) | st.text(_ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s)
# Plain words: no secret, no personal data, never a key the walk treats apart (ids, message texts), so each is kept.
plain = st.text("abcdefghij ", max_size=12)
plain_keys = st.text("abcdefghij", min_size=1, max_size=6).map(lambda s: "k_" + s)


class Secret(str):
    """A string that holds a planted secret (the test's own bookkeeping)."""


def _holding(s: str, embed: bool) -> Secret:
    return Secret(f"with {s} inside" if embed else s)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return dict(pairs)  # a repeated key keeps its last value, as JSON would


secret_strings = st.builds(_holding, secrets, st.booleans())
# Keys: plain, a secret, or text that already reads like the marker a secret key becomes (a collision to keep apart).
keys = plain_keys | secret_strings | st.sampled_from(["[REDACTED:github_token]", "[REDACTED:github_token] #2"])
# Below a record's own keys, the names the formats give ids are an agent's or a tool's words too (`{"id": "<token>"}`
# in a tool's input): cleaned like any other.
nested_keys = keys | st.sampled_from(["id", "type", "uuid", "timestamp", "signature", "model"])
leaves = st.none() | st.booleans() | st.integers() | plain | secret_strings
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.lists(st.tuples(nested_keys, inner), max_size=5).map(_object),
    max_leaves=20,
)
records = st.lists(st.lists(st.tuples(keys, values), min_size=1, max_size=5).map(_object), min_size=1, max_size=4)


def _planted(value: Any) -> set[str]:
    """The secrets planted in `value`, keys and values."""
    if isinstance(value, Secret):
        return {s for s in ALONE if s in value} | {w for w in value.split() if w.startswith("ghp_")}
    if isinstance(value, dict):
        return set().union(*(_planted(k) | _planted(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_planted(v) for v in value))
    return set()


def _same_shape(before: Any, after: Any) -> None:
    """`after` is `before` with only its secrets' keys and strings changed: the same objects, lists and scalars in
    the same order, every plain key and string as it was."""
    if isinstance(before, dict):
        assert isinstance(after, dict) and len(after) == len(before)
        for (k, v), (k2, v2) in zip(before.items(), after.items(), strict=True):
            if not isinstance(k, Secret):
                assert k2 == k
            _same_shape(v, v2)
    elif isinstance(before, list):
        assert isinstance(after, list) and len(after) == len(before)
        for v, v2 in zip(before, after, strict=True):
            _same_shape(v, v2)
    elif isinstance(before, Secret):
        assert isinstance(after, str)
    else:
        assert after == before and type(after) is type(before)


@settings(max_examples=150, deadline=None)
@given(records)
def test_no_secret_leaves_as_key_or_value_and_each_record_keeps_its_shape(lines: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in lines)
    out, found, _, dropped = redact_transcript(text, Redactor())
    planted = set().union(*(_planted(r) for r in lines))
    for secret in planted:
        assert secret not in out
    assert dropped == 0 and (found >= 1 if planted else True)
    sent = [json.loads(line) for line in out.splitlines()]
    assert len(sent) == len(lines)
    for before, after in zip(lines, sent, strict=True):
        _same_shape(before, after)


def test_keys_that_clean_to_one_text_keep_both_values() -> None:
    one, two = "ghp_" + "A1b2" * 9, "ghp_" + "C3d4" * 9
    record = {"input": {"command": "env", one: "x", two: "y", "[REDACTED:github_token]": "z", "env": {one: one}}}
    out, found, _, _ = redact_transcript(json.dumps(record) + "\n", Redactor())
    sent = json.loads(out)["input"]
    assert one not in out and two not in out and found == 4
    # The key that read like a marker already is kept as written; the two secrets' keys get suffixes, in order.
    assert sent == {
        "command": "env",
        "[REDACTED:github_token] #2": "x",
        "[REDACTED:github_token] #3": "y",
        "[REDACTED:github_token]": "z",
        "env": {"[REDACTED:github_token]": "[REDACTED:github_token]"},
    }


def test_an_id_is_kept_where_the_format_writes_it_and_cleaned_in_a_tool_s_input() -> None:
    token = "ghp_" + "E5f6" * 9
    block = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "X",
        "input": {"id": token, "type": token, "n": {"id": token}},
    }
    record = {
        "type": "assistant",
        "uuid": "u1",
        "message": {"id": "msg_1", "content": [block]},
        "toolUseResult": {"id": token},
    }
    out, found, _, _ = redact_transcript(json.dumps(record) + "\n", Redactor())
    sent = json.loads(out)
    assert token not in out and found == 4
    assert (
        sent["uuid"] == "u1" and sent["message"]["id"] == "msg_1" and sent["message"]["content"][0]["id"] == "toolu_01"
    )
