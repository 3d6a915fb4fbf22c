"""Ingest's secret screen (`core.store.batch_redaction`): DuckDB picks the records that may hold a secret and the
rules to run on them, and what it stores must be what the full redactor makes of every part."""

from __future__ import annotations

import re

import duckdb
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.redact import RULES, Rule, redact, redact_parts
from core.store.batch_redaction import redact_batch
from tests.secret_kinds import HELD_OUT, KINDS, NEW_SHAPES

_PLANTED = [k.text for k in [*KINDS, *HELD_OUT, *NEW_SHAPES]]


def _drawn(rule: Rule) -> st.SearchStrategy[str]:
    """Texts from the rule's own pattern (the syntax Python's parser and RE2 share), or from its shape where the
    pattern alone lacks the context its check wants (Twilio's word)."""
    source = rule.shape if rule.name == "twilio_token" and rule.shape else rule.pattern.source
    flags = re.IGNORECASE if rule.ignore_case else 0
    flags |= re.DOTALL if "s" in rule.pattern.flags else 0
    flags |= re.MULTILINE if "m" in rule.pattern.flags else 0
    return st.from_regex(re.compile(source, flags))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# A piece of a text: a rule's secret drawn from its pattern, a planted kind in its sentence (base64 among them: its
# pattern alone draws no credential), a random token, or noise.
_PIECE = st.one_of(
    st.sampled_from([rule for rule in RULES if rule.name != "base64_credential"]).flatmap(_drawn),
    st.sampled_from(_PLANTED),
    st.from_regex(r"[A-Za-z0-9+/_\-]{30,40}", fullmatch=True),
    # a Twilio SID whose hex happens to be all digits: no lower-case letter, so no mixed run flags it
    st.from_regex(r"(?:AC|SK)[0-9]{32}", fullmatch=True),
    st.text(max_size=8),
)
_TEXT = st.lists(_PIECE, max_size=3).map(" ".join)
# A part as the readers never make one too: a text and a tool input both (the screen joins them). A part holding
# neither is no block: the blocks either side of it are scanned as neighbours (a secret across them is found).
_PART = st.tuples(st.none() | _TEXT, st.none() | _TEXT).filter(lambda part: part != (None, None))


def _batch(records: list[list[tuple[str | None, str | None]]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TEMP TABLE _parts (source_path VARCHAR, seq BIGINT, part INTEGER, role VARCHAR, kind VARCHAR,"
        " is_meta BOOLEAN, text VARCHAR, tool_input VARCHAR)"
    )
    con.execute("CREATE TEMP TABLE _file_meta (path VARCHAR, title VARCHAR)")
    con.execute("CREATE TEMP TABLE _redacted (id BIGINT, text VARCHAR, tool_input VARCHAR)")
    rows = [
        ("f.jsonl", seq, part, "assistant", "tool_use" if tool_input is not None else "text", False, text, tool_input)
        for seq, parts in enumerate(records)
        for part, (text, tool_input) in enumerate(parts)
    ]
    if rows:
        con.executemany("INSERT INTO _parts VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return con


def _stored(records: list[list[tuple[str | None, str | None]]]) -> list[tuple[str | None, str | None]]:
    con = _batch(records)
    redact_batch(con)
    return con.execute(
        "SELECT coalesce(r.text, p.text), coalesce(r.tool_input, p.tool_input)"
        " FROM _parts p LEFT JOIN _redacted r ON r.id = p.rowid ORDER BY p.seq, p.part"
    ).fetchall()


def test_a_twilio_sid_of_digits_alone_is_screened_in_though_its_record_holds_nothing_else() -> None:
    """A SID's 32 hex digits may all be digits: its run has no lower-case letter, and it is redacted all the same."""
    sid = "AC" + "0123456789" * 3 + "42"
    key = "SK" + "9" * 32
    stored = _stored([[(f"client = Client({sid})", None)], [(None, f"use {key} here")], [("nothing here", None)]])
    assert stored == [
        ("client = Client([REDACTED:token])", None),
        (None, "use [REDACTED:token] here"),
        ("nothing here", None),
    ]
    assert stored[0][0] == redact(f"client = Client({sid})")[0]


@given(st.lists(st.lists(_PART, min_size=1, max_size=3), min_size=1, max_size=4))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
def test_what_the_screen_lets_through_is_what_the_full_redactor_makes_of_every_part(
    records: list[list[tuple[str | None, str | None]]],
) -> None:
    """Every text the full redactor (every rule, every random token, the blocks of a message together) would change
    is screened in, with the rules that change it, whether a part holds a text, a tool input or both."""
    assume(all(_encodable(t) for parts in records for part in parts for t in part if t is not None))
    stored = _stored(records)
    expected = []
    for parts in records:
        texts, _ = redact_parts([text or "" for text, _ in parts])
        for (text, tool_input), new in zip(parts, texts, strict=True):
            expected.append((None if text is None else new, None if tool_input is None else redact(tool_input)[0]))
    assert stored == expected


@given(st.lists(st.lists(_PART, min_size=1, max_size=3), min_size=1, max_size=3), st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
def test_a_text_repeated_in_other_records_is_redacted_in_each_as_on_its_own(
    records: list[list[tuple[str | None, str | None]]], data: st.DataObject
) -> None:
    """The screen asks each distinct text once: every record that repeats a text (a file read twice, a subagent's
    prompt in its parent), beside other parts or alone, is stored as the full redactor makes it."""
    assume(all(_encodable(t) for parts in records for part in parts for t in part if t is not None))
    parts = [part for record in records for part in record]
    repeats = data.draw(st.lists(st.lists(st.sampled_from(parts), min_size=1, max_size=3), min_size=1, max_size=3))
    batch = [*records, *repeats]
    expected = []
    for record in batch:
        texts, _ = redact_parts([text or "" for text, _ in record])
        for (text, tool_input), new in zip(record, texts, strict=True):
            expected.append((None if text is None else new, None if tool_input is None else redact(tool_input)[0]))
    assert _stored(batch) == expected
