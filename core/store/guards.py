"""The typed lessons entries were written from, and the entries a person made hard rules (for the guards)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb

from core.guards import Guard, bound_lesson, guards_of
from core.store.versions import load_version

__all__ = ["entry_guards", "entry_lessons", "hard_entries", "set_hard"]


def entry_lessons(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, str]:
    """Live entry id -> the typed lesson (JSON) its newest ADD carried."""
    rows = con.execute(
        "SELECT l.entry_id, arg_max(l.lesson, l.version) FROM entry_lessons l JOIN entries e"
        " ON e.playbook = l.playbook AND e.name = l.entry_id AND e.valid_to IS NULL"
        " WHERE l.playbook = ? GROUP BY l.entry_id",
        [playbook],
    ).fetchall()
    return {str(entry): str(lesson) for entry, lesson in rows}


def hard_entries(con: duckdb.DuckDBPyConnection, playbook: str) -> set[str]:
    """The entries of `playbook` whose newest decision made them hard rules."""
    rows = con.execute(
        "SELECT entry_id FROM hard_rules WHERE playbook = ? GROUP BY entry_id HAVING arg_max(hard, decided_at)",
        [playbook],
    ).fetchall()
    return {str(r[0]) for r in rows}


def set_hard(
    con: duckdb.DuckDBPyConnection, playbook: str, entry_ids: Sequence[str], hard: bool, by: str | None
) -> None:
    """Record that a person made `entry_ids` hard rules (`hard`) or soft again."""
    con.executemany(
        "INSERT INTO hard_rules (playbook, entry_id, hard, decided_by) VALUES (?, ?, ?, ?)",
        [(playbook, e, hard, by) for e in entry_ids],
    )


def entry_guards(
    con: duckdb.DuckDBPyConnection, playbook: str, shown: Mapping[str, str] | None = None
) -> dict[str, list[Guard]]:
    """Live entry id -> its guards, compiled from the typed lesson it was written from while its text is what that
    lesson renders. `shown`: only these entries, each with the text a guard tells the agent (as exported); default
    every live entry, with its stored text."""
    stored = {e.name: e.text for _, e in load_version(con, playbook).entries()}
    lessons = entry_lessons(con, playbook)
    hard = hard_entries(con, playbook)
    found: dict[str, list[Guard]] = {}
    for entry, text in (shown if shown is not None else stored).items():
        lesson = bound_lesson(lessons.get(entry), stored.get(entry, ""))
        guards = guards_of(lesson, playbook=playbook, entry=entry, text=text, hard=entry in hard) if lesson else []
        if guards:
            found[entry] = guards
    return found
