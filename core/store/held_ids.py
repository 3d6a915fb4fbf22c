"""Entries held by their id: stored by an older version with an id playbook never makes (migration 31 found them
once, `core.models.ENTRY_ID_PATTERN`), so no export, publish, hook or MCP answer renders them."""

from __future__ import annotations

import duckdb

__all__ = ["held_ids"]


def held_ids(con: duckdb.DuckDBPyConnection, playbook: str) -> set[str]:
    """The ids of `playbook`'s entries held because playbook never makes such an id (none, nearly always)."""
    return {str(r[0]) for r in con.execute("SELECT entry_id FROM held_ids WHERE playbook = ?", [playbook]).fetchall()}
