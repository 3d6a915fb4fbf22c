"""What entries rest on in their projects (`entry_citations`), and the checks `playbook revalidate` made."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from core.citations import Citation

__all__ = ["entry_citations", "record_checks"]


def entry_citations(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, tuple[str | None, list[Citation]]]:
    """Live entry id -> (its project's folder as the session that taught it had it, its citations), from the
    newest version that added it."""
    rows = con.execute(
        "SELECT c.entry_id, c.root, c.kind, c.value, c.manifest, c.folder FROM entry_citations c"
        " JOIN entries e ON e.playbook = c.playbook AND e.name = c.entry_id AND e.valid_to IS NULL"
        " WHERE c.playbook = ? AND c.version = (SELECT max(version) FROM entry_citations x"
        " WHERE x.playbook = c.playbook AND x.entry_id = c.entry_id) ORDER BY c.entry_id, c.kind, c.value",
        [playbook],
    ).fetchall()
    found: dict[str, tuple[str | None, list[Citation]]] = {}
    for entry, root, kind, value, manifest, folder in rows:
        cited = Citation(kind=kind, value=value, manifest=manifest, folder=folder)
        found.setdefault(str(entry), (root, []))[1].append(cited)
    return found


def record_checks(
    con: duckdb.DuckDBPyConnection, playbook: str, checks: Sequence[tuple[str, str | None, str | None, str | None]]
) -> None:
    """Record `playbook revalidate`'s checks: (entry id, the folder checked, its commit, why it no longer holds)."""
    if checks:
        con.executemany(
            "INSERT INTO entry_checks (playbook, entry_id, root, commit_id, reason) VALUES (?, ?, ?, ?, ?)",
            [(playbook, *c) for c in checks],
        )
