"""Queries behind the evolution report (the HTML page): plain rows from the analytics views, nothing drawn here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from core.models import skip_label
from core.store.playbooks import current_version, sections_of

__all__ = ["EvolutionData", "evolution_data"]


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, params).fetchall()]


@dataclass
class EvolutionData:
    """Everything the evolution report draws, for one playbook."""

    playbook: str
    versions: int
    sections: list[str]
    section_sizes: list[tuple[int, str, int]] = field(default_factory=list)  # version, section, entries
    ops_daily: list[tuple[Any, str, str, int]] = field(default_factory=list)  # day, type, status, n
    skip_reasons: list[tuple[str, int]] = field(default_factory=list)
    prunes_daily: list[tuple[Any, int]] = field(default_factory=list)
    top_helpful: list[tuple[str, str, int, int]] = field(default_factory=list)  # name, text, helpful, harmful
    top_harmful: list[tuple[str, str, int, int]] = field(default_factory=list)
    counter_history: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # name -> (v, h, x)
    lifetimes: list[int] = field(default_factory=list)
    runs: list[tuple[str, Any, int, float]] = field(default_factory=list)  # run_id, started, tokens, cost


def evolution_data(con: duckdb.DuckDBPyConnection, playbook: str, *, top: int = 5) -> EvolutionData:
    """Collect the report's series from the views (section sizes, operations, prunes, entries, runs)."""
    latest = current_version(con, playbook)
    data = EvolutionData(playbook=playbook, versions=latest, sections=sections_of(con, playbook).names)
    # Section sizes per version: from the type-2 rows directly, as change points (a step function), so
    # 10,000 versions cost one pass over the entry rows rather than 10,000 rebuilds.
    data.section_sizes = _rows(
        con,
        """
        WITH deltas AS (
            SELECT section, valid_from AS version, 1 AS d FROM entries WHERE playbook = ?
            UNION ALL
            SELECT section, valid_to, -1 FROM entries WHERE playbook = ? AND valid_to IS NOT NULL
        )
        SELECT version, section, sum(sum(d)) OVER (PARTITION BY section ORDER BY version) AS n
        FROM deltas GROUP BY version, section ORDER BY version, section""",
        [playbook, playbook],
    )
    data.ops_daily = _rows(
        con,
        "SELECT day, type, status, sum(n) FROM v_operations_daily WHERE playbook = ?"
        " AND status <> 'truncated' GROUP BY ALL ORDER BY day",
        [playbook],
    )
    # Grouped by machine code, so skips that differ only in the ids or texts they name are one bar.
    data.skip_reasons = [
        (skip_label(op_type, code), n)
        for op_type, code, n in _rows(
            con,
            "SELECT type, code, sum(n)::BIGINT AS n FROM v_skip_reasons WHERE playbook = ?"
            " GROUP BY type, code ORDER BY n DESC, type, code LIMIT 8",
            [playbook],
        )
    ]
    data.prunes_daily = _rows(
        con,
        "SELECT date_trunc('day', created_at) AS day, count(*) FROM v_prunes"
        " WHERE playbook = ? GROUP BY day ORDER BY day",
        [playbook],
    )
    current = "SELECT name, text, helpful, harmful FROM playbook_at(?, ?)"
    data.top_helpful = _rows(
        con, current + " WHERE helpful > 0 ORDER BY helpful DESC, name LIMIT ?", [playbook, latest, top]
    )
    data.top_harmful = _rows(
        con, current + " WHERE harmful > 0 ORDER BY harmful DESC, name LIMIT ?", [playbook, latest, top]
    )
    names = list(dict.fromkeys([r[0] for r in data.top_helpful[:3] + data.top_harmful[:3]]))  # legible chart
    for name in names:
        data.counter_history[name] = _rows(
            con,
            "SELECT valid_from, helpful, harmful FROM entries WHERE playbook = ? AND name = ? ORDER BY valid_from",
            [playbook, name],
        )
    data.lifetimes = [
        r[0]
        for r in _rows(
            con,
            "SELECT coalesce(CASE WHEN alive THEN ? ELSE died_raw END, ?) - born FROM v_entry_lifetimes"
            " WHERE playbook = ?",
            [latest, latest, playbook],
        )
    ]
    data.runs = _rows(
        con,
        "SELECT run_id, started_at, input_tokens + output_tokens, cost_usd FROM runs"
        " WHERE playbook = ? ORDER BY started_at",
        [playbook],
    )
    return data
