"""Migration 31 checks every stored id once: an entry an older version stored with an id the model refuses (the ids
`import` refuses since) is held (`core.store.held_ids`), and only such an entry; no stored row changes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from core.models import EntryId
from core.store.db import connect
from core.store.held_ids import held_ids
from tests.profiles import examples

_ID: TypeAdapter[str] = TypeAdapter(EntryId)
# Ids near the pattern (ours, with a character changed or added) and anything at all.
_NEAR = st.from_regex(r"(?:[a-z][a-z0-9_]{0,6}-[0-9]{1,4}|kpt_[0-9]{1,4})", fullmatch=True)
_NAMES = st.one_of(
    _NEAR,
    st.tuples(_NEAR, st.sampled_from(["\n", " ", "\u200b", "A", "-", "]", "\r", "\u0661", "１"]), st.booleans()).map(
        lambda t: t[1] + t[0] if t[2] else t[0] + t[1]
    ),
    st.text(max_size=30),
)


def _valid(name: str) -> bool:
    try:
        _ID.validate_python(name, strict=True)
    except ValidationError:
        return False
    return True


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAMES, min_size=1, max_size=20, unique=True))
def test_the_migration_holds_exactly_the_ids_the_model_refuses(tmp_path: Path, names: list[str]) -> None:
    db = tmp_path / f"{abs(hash(tuple(names)))}.duckdb"
    con = connect(db)
    rows = [("default", n, "OTHERS", i, f"Lesson {i}.", 0, 0, 1) for i, n in enumerate(names)]
    con.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)", rows)
    con.execute("INSERT INTO entries VALUES ('other', 'x\ny', 'OTHERS', 0, 'Lesson.', 0, 0, 1, NULL)")
    # As an older version left it: its entries written, the check never run.
    con.execute("DELETE FROM schema_version WHERE version >= 31")
    con.execute("DROP TABLE held_ids")
    con.close()
    con = connect(db)
    try:
        assert held_ids(con, "default") == {n for n in names if not _valid(n)}
        assert held_ids(con, "other") == {"x\ny"}
        kept = con.execute("SELECT name FROM entries WHERE playbook = 'default' ORDER BY position").fetchall()
        assert [r[0] for r in kept] == names  # no row is rewritten
    finally:
        con.close()
