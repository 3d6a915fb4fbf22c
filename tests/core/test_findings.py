"""The rules' findings (`core.store.findings`): stored as what they are, one row a session and run, and moved out of
`llm_calls` (where a file written before migration 27 kept them as model exchanges)."""

from __future__ import annotations

from pathlib import Path

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from core.miner import MINER_VERSION
from core.models import BulletTag, CuratorOutput, ReflectorOutput
from core.store.db import LATEST_SCHEMA, connect
from core.store.findings import RulesFinding, record_findings
from core.store.schema import MIGRATIONS
from core.store.team import forget_contributor
from tests.profiles import examples

TEXT = st.text(max_size=30)
REFLECTIONS = st.builds(
    ReflectorOutput,
    analysis=TEXT,
    bullet_tags=st.lists(st.builds(BulletTag, name=TEXT, tag=st.sampled_from(["helpful", "harmful"])), max_size=3),
)
CURATIONS = st.builds(
    CuratorOutput,
    reasoning=TEXT,
    operations=st.lists(st.fixed_dictionaries({"type": st.just("ADD"), "text": TEXT}), max_size=3),
)
FINDINGS = st.lists(
    st.builds(
        RulesFinding,
        session_id=TEXT,
        reflection=st.none() | REFLECTIONS,
        curation=st.none() | CURATIONS,
        error=st.none() | TEXT,
    ),
    max_size=6,
)


@settings(max_examples=examples(50), deadline=None)
@given(findings=FINDINGS)
def test_findings_read_back_as_they_were_found(findings: list[RulesFinding]) -> None:
    con = connect(":memory:")
    record_findings(con, "default", findings, playbook_version=3, run_id="r1")
    rows = con.execute(
        "SELECT playbook, session_id, run_id, playbook_version, miner_version, reflection, curation, error"
        " FROM rules_findings ORDER BY rowid"
    ).fetchall()
    assert [
        RulesFinding(
            r[1],
            ReflectorOutput.model_validate_json(r[5]) if r[5] is not None else None,
            CuratorOutput.model_validate_json(r[6]) if r[6] is not None else None,
            r[7],
        )
        for r in rows
    ] == findings
    assert all(r[0] == "default" and r[2:5] == ("r1", 3, MINER_VERSION) for r in rows)
    assert con.execute("SELECT count(*) FROM llm_calls").fetchone() == (0,)  # no exchange: no model was asked


def _file_at(path: Path, version: int) -> duckdb.DuckDBPyConnection:
    """A database file as an older playbook left it: migrated up to `version` only."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMPTZ DEFAULT now())"
    )
    for number, name, sql in MIGRATIONS:
        if number <= version:
            con.execute(sql)
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [number, name])
    return con


def test_migration_27_moves_the_rules_rows_out_of_the_model_exchanges(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    old = _file_at(db, 26)
    rows = [
        # (step, session, provider, parsed, error, run, version, time): two runs of the rules over s1, one over s2
        # that failed at its curator step, a model's answers for s1, and a rules row of no session.
        ("reflector", "s1", "heuristic", '{"analysis": "first"}', None, "r0", 0, "2026-01-01 10:00:00+00"),
        ("curator", "s1", "heuristic", '{"reasoning": "first ops"}', None, "r0", 0, "2026-01-01 10:00:01+00"),
        ("reflector", "s1", "heuristic", '{"analysis": "grew"}', None, "r1", 4, "2026-01-02 10:00:00+00"),
        ("curator", "s1", "heuristic", '{"reasoning": "ops"}', None, "r1", 4, "2026-01-02 10:00:01+00"),
        ("reflector", "s2", "heuristic", '{"analysis": "a"}', None, "r1", 4, "2026-01-02 10:00:02+00"),
        ("curator", "s2", "heuristic", None, "heuristic input missing: 'x'", "r1", 4, "2026-01-02 10:00:03+00"),
        ("reflector", "s1", "anthropic", '{"analysis": "model"}', None, "r2", 5, "2026-01-03 10:00:00+00"),
        ("curator", None, "heuristic", '{"reasoning": "odd"}', None, "r1", 4, "2026-01-02 10:00:04+00"),
    ]
    old.executemany(
        "INSERT INTO llm_calls (prompt_hash, step, session_id, provider, parsed, error, run_id, playbook,"
        " playbook_version, created_at) VALUES ('h', ?, ?, ?, ?, ?, ?, 'default', ?, ?)",
        rows,
    )
    old.close()

    con = connect(db)
    assert con.execute("SELECT max(version) FROM schema_version").fetchone() == (LATEST_SCHEMA,)
    assert con.execute("SELECT provider, session_id FROM llm_calls").fetchall() == [("anthropic", "s1")]
    moved = con.execute(
        "SELECT session_id, run_id, playbook_version, miner_version, json_extract_string(reflection, '$.analysis'),"
        " json_extract_string(curation, '$.reasoning'), error FROM rules_findings ORDER BY session_id, run_id"
    ).fetchall()
    con.close()
    assert moved == [
        ("s1", "r0", 0, None, "first", "first ops", None),
        ("s1", "r1", 4, None, "grew", "ops", None),
        ("s2", "r1", 4, None, "a", None, "heuristic input missing: 'x'"),
    ]


def test_forgetting_a_contributor_deletes_what_the_rules_found_in_their_sessions() -> None:
    con = connect(":memory:")
    for sid, who in (("a1", "alice"), ("b1", "bob")):
        con.execute(
            "INSERT INTO sessions (session_id, format, source_path, contributor) VALUES (?, 'codex', ?, ?)",
            [sid, f"/t/{who}/{sid}.jsonl", who],
        )
        con.execute("INSERT INTO session_keys (contributor, source_id, session_id) VALUES (?, ?, ?)", [who, sid, sid])
    found = [RulesFinding(sid, ReflectorOutput(analysis=f"of {sid}"), CuratorOutput()) for sid in ("a1", "b1")]
    record_findings(con, "default", found, playbook_version=0, run_id="r1")
    gone = forget_contributor(con, "alice")
    assert gone.sessions == 1 and gone.calls == 0  # the rules' findings are no model calls
    assert con.execute("SELECT session_id FROM rules_findings").fetchall() == [("b1",)]
