"""A session's project: the folder's name, or for a worktree an agent tool made, the project holding it; the same
in Python (the hooks) and in SQL (ingest, and the migration that renames stored sessions)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.projects import project_of
from core.store.db import open_db
from core.store.ingest import ingest
from core.store.schema import project_sql
from tests.helpers import claude_session, store_at


@pytest.mark.parametrize(
    ("cwd", "project"),
    [
        ("/home/u/src/app", "app"),
        ("/home/u/src/app/", "app"),
        ("/Users/alex/workspace/cli/.worktrees/2", "cli"),
        ("/Users/alex/workspace/cli/.worktrees/2/web/src", "cli"),
        ("/home/u/app/.claude/worktrees/bright-running-fox", "app"),
        ("D:\\oh-my-posh\\.claude\\worktrees\\heuristic-robinson-e44709", "oh-my-posh"),
        ("/Users/jdx/.codex/worktrees/f06c/mise", "mise"),
        ("/Users/jdx/.codex/worktrees/f06c/mise/src/cli", "mise"),
        ("/Users/ann/conductor/workspaces/api/warsaw-v2", "api"),
        # A folder that only looks like a worktree's holder keeps its own name.
        ("/home/u/Code/worktrees/flutter-docker-image/sandy-hill/flutter-docker-image", "flutter-docker-image"),
        ("/home/u/app/.worktrees", ".worktrees"),
        ("C:\\Users\\u\\proj\\", "proj"),
        ("/", ""),
        ("", ""),
    ],
)
def test_a_worktree_belongs_to_the_project_that_holds_it(cwd: str, project: str) -> None:
    assert project_of(cwd) == project


_SEGMENTS = st.sampled_from(
    [".worktrees", ".claude", "worktrees", ".codex", "conductor", "workspaces", "app", "a b", "x\n", "", "é", "$"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SEGMENTS, max_size=7), st.sampled_from(["/", "\\"]), st.booleans(), st.booleans())
def test_sql_and_python_name_the_same_project(parts: list[str], sep: str, lead: bool, trail: bool) -> None:
    """Ingest names a session's project in SQL and the hooks in Python: they must agree on every path."""
    cwd = (sep if lead else "") + sep.join(parts) + (sep if trail else "")
    with duckdb.connect() as con:
        row = con.execute(f"SELECT {project_sql('$cwd')}", {"cwd": cwd}).fetchone()
    assert (row[0] if row else None) == (project_of(cwd) or None)


def test_ingest_names_a_worktree_session_for_its_project(tmp_path: Path) -> None:
    start = datetime(2026, 1, 5, tzinfo=UTC)
    claude_session(tmp_path / "t" / "w.jsonl", "w", start, [("user", "hi")], cwd="/u/app/.claude/worktrees/fox")
    claude_session(tmp_path / "t" / "p.jsonl", "p", start, [("user", "hi")], cwd="/u/app")
    with open_db(tmp_path / "p.duckdb") as con:
        ingest(con, [tmp_path / "t"])
        assert con.execute("SELECT session_id, project FROM sessions ORDER BY 1").fetchall() == [
            ("p", "app"),
            ("w", "app"),
        ]


def test_a_store_from_before_renames_its_worktree_sessions_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "v27.duckdb"
    old = store_at(path, 27)
    rows = [("w", "/u/cli/.worktrees/2", "2"), ("p", "/u/api", "api"), ("n", None, None)]
    old.executemany(
        "INSERT INTO sessions (session_id, format, source_path, cwd, project) VALUES (?, 'claude_code', 'f', ?, ?)",
        rows,
    )
    old.close()
    with open_db(path) as con:
        assert con.execute("SELECT session_id, project FROM sessions ORDER BY 1").fetchall() == [
            ("n", None),
            ("p", "api"),
            ("w", "cli"),
        ]
