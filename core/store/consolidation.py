"""What consolidations leave behind: the wordings merged into each entry, and the pairs a model kept apart."""

from __future__ import annotations

import json
from collections.abc import Iterable

import duckdb

__all__ = ["keep_apart", "kept_apart", "merge_history"]


def merge_history(con: duckdb.DuckDBPyConnection, playbook: str) -> list[tuple[str, list[str], str]]:
    """The MERGEs applied to `playbook`, oldest first, as `merged_wordings` takes them: (new entry id, source ids,
    the sources' texts joined by newlines); with them, as (its id, [], ""), each applied ADD that gave out an id
    some MERGE gave out too (the only ADDs that change what a merged wording belongs to). Grows with the merges,
    not with every ADD ever applied: it is read once an epoch."""
    rows = con.execute(
        "WITH m AS (SELECT * FROM operations WHERE playbook = $1 AND type = 'MERGE' AND status = 'applied'"
        " AND entry_id IS NOT NULL)"
        " SELECT entry_id, target_ids, old_text, version, idx FROM m"
        " UNION ALL SELECT entry_id, NULL, NULL, version, idx FROM operations WHERE playbook = $1 AND type = 'ADD'"
        " AND status = 'applied' AND entry_id IN (SELECT entry_id FROM m)"
        " ORDER BY version, idx",
        [playbook],
    ).fetchall()
    return [(r[0], json.loads(r[1] or "[]"), r[2] or "") for r in rows]


def kept_apart(con: duckdb.DuckDBPyConnection, playbook: str, days: float) -> set[frozenset[str]]:
    """The pairs of texts a model kept apart within the last `days` (older verdicts are asked again)."""
    rows = con.execute(
        "SELECT text_a, text_b FROM kept_apart WHERE playbook = ?"
        " AND judged_at >= now() - to_seconds(CAST(? * 86400 AS BIGINT))",
        [playbook, days],
    ).fetchall()
    return {frozenset(r) for r in rows}


def keep_apart(
    con: duckdb.DuckDBPyConnection, playbook: str, pairs: Iterable[frozenset[str]], run_id: str | None
) -> int:
    """Record that a model kept each pair of texts apart now (a verdict given again replaces the older one)."""
    rows = [(playbook, *sorted(p), run_id) for p in set(pairs) if len(p) == 2]
    if rows:
        con.executemany(
            "INSERT OR REPLACE INTO kept_apart (playbook, text_a, text_b, run_id, judged_at)"
            " VALUES (?, ?, ?, ?, now())",
            rows,
        )
    return len(rows)
