"""Queries behind the evolution report (the HTML page): plain rows from the analytics views, nothing drawn here."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import duckdb
from pydantic import BaseModel

from core.budget import Budget
from core.models import skip_label
from core.store.db import fetch_rows
from core.store.provenance import entries_by_provider
from core.store.published import StaleEntry, TriggerRecurrence, stale_entries, trigger_recurrence
from core.store.registry import sections_of
from core.store.versions import current_version
from core.tokens import TOKENS_PER_NEWLINE, TOKENS_PER_SYMBOL, TOKENS_PER_WORD

__all__ = [
    "MAX_BARS",
    "MAX_POINTS",
    "ContributorShare",
    "EvolutionData",
    "budget_use_sql",
    "contributor_shares",
    "evolution_data",
]

# A chart over time draws at most about this many bars: a longer history is counted per week, month, quarter or
# year instead of per day, so the report costs the same at 100 versions or 10,000.
MAX_BARS = 40
_PERIODS = (("day", 1), ("week", 7), ("month", 31), ("quarter", 92), ("year", 366))
# A line over versions keeps at most about this many change points (the last of each run of versions): a chart is
# 900 pixels wide, and 10,000 points a line cost the drawing more than they show.
MAX_POINTS = 400


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, params).fetchall()]


@dataclass
class EvolutionData:
    """Everything the evolution report draws, for one playbook."""

    playbook: str
    versions: int
    sections: list[str]
    # version, section, entries: where they changed, at most about `MAX_POINTS` a section
    section_sizes: list[tuple[int, str, int]] = field(default_factory=list)
    period: str = "day"  # what one bar of the charts over time counts: day, week, month, quarter or year
    ops_by_period: list[tuple[Any, str, str, int]] = field(default_factory=list)  # period start, type, status, n
    skip_reasons: list[tuple[str, int]] = field(default_factory=list)
    prunes_by_period: list[tuple[Any, int]] = field(default_factory=list)  # period start, entries pruned
    top_helpful: list[tuple[str, str, int, int]] = field(default_factory=list)  # name, text, helpful, harmful
    top_harmful: list[tuple[str, str, int, int]] = field(default_factory=list)
    # name -> (version, helpful, harmful) where they changed, at most about `MAX_POINTS`
    counter_history: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    lifetimes: list[int] = field(default_factory=list)
    runs: list[tuple[str, Any, int, float]] = field(default_factory=list)  # run_id, started, tokens, cost
    budget_use: list[tuple[int, int, int]] = field(default_factory=list)  # version, entries, tokens (change points)
    stale: list[StaleEntry] = field(default_factory=list)
    recurrence: list[TriggerRecurrence] = field(default_factory=list)  # v_trigger_recurrence rows
    quality: dict[str, float] = field(default_factory=dict)  # the newest curation run's figures
    duplicate_measure: str | None = None  # what measured its duplicate rate
    budget: Budget | None = None  # set by the caller: the limits the budget chart draws against
    heuristic: int = 0  # live entries written by rules (the heuristic provider), not a model
    contributors: list[ContributorShare] = field(default_factory=list)  # whose sessions changed the playbook


# An entry row's tokens as exported (`core.budget.entry_tokens`: the estimate of `core.render`, plus 4), in SQL.
# Words are runs of ASCII letters, symbols the UTF-8 bytes left once letters and whitespace are taken out (as
# `core.tokens.token_pieces` counts them), weighed in hundredths as there.
_ENTRY_TOKENS = (
    f"(ceil(({round(TOKENS_PER_WORD * 100)} * len(regexp_extract_all(text, '[A-Za-z]+'))"
    f" + {round(TOKENS_PER_SYMBOL * 100)}"
    r" * octet_length(encode(regexp_replace(text, '[A-Za-z\t\n\x0b\x0c\r ]', '', 'g')))"
    f" + {round(TOKENS_PER_NEWLINE * 100)} * (length(text) - length(replace(text, chr(10), ''))))"
    " / 100)::BIGINT + 4)"
)


def budget_use_sql(con: duckdb.DuckDBPyConnection, playbook: str) -> list[tuple[int, int, int]]:
    """(version, live entries, their tokens as exported) at each version where they changed: running sums over
    each entry row's birth and death, in SQL, so a long history sends DuckDB's totals, not its rows, to Python."""
    return _rows(
        con,
        f"""
        WITH alive AS (
            SELECT valid_from, valid_to, {_ENTRY_TOKENS} AS tokens FROM entries
            WHERE playbook = ? AND (valid_to IS NULL OR valid_from <> valid_to)
        ), deltas AS (
            SELECT valid_from AS version, 1 AS d, tokens AS t FROM alive
            UNION ALL
            SELECT valid_to, -1, -tokens FROM alive WHERE valid_to IS NOT NULL
        )
        SELECT version, (sum(sum(d)) OVER w)::BIGINT, (sum(sum(t)) OVER w)::BIGINT
        FROM deltas GROUP BY version WINDOW w AS (ORDER BY version) ORDER BY version""",
        [playbook],
    )


def _period(con: duckdb.DuckDBPyConnection, playbook: str, most: int) -> str:
    """The shortest of day, week, month, quarter and year that counts `playbook`'s history in `most` bars or
    fewer."""
    row = con.execute(
        "SELECT date_diff('day', min(created_at), max(created_at)) FROM versions WHERE playbook = ?", [playbook]
    ).fetchone()
    span = int(row[0] or 0) if row else 0
    return next((unit for unit, days in _PERIODS if span // days + 1 <= most), "year")


def evolution_data(
    con: duckdb.DuckDBPyConnection, playbook: str, *, top: int = 5, stale_after_days: float = 0.0
) -> EvolutionData:
    """Collect the report's series from the views (section sizes, operations, prunes, entries, runs, budget use,
    stale entries, trigger recurrence)."""
    latest = current_version(con, playbook)
    data = EvolutionData(playbook=playbook, versions=latest, sections=sections_of(con, playbook).names)
    # Section sizes per version: from the type-2 rows directly, as change points (a step function), so
    # 10,000 versions cost one pass over the entry rows rather than 10,000 rebuilds.
    data.section_sizes = _rows(
        con,
        """
        WITH deltas AS (
            SELECT section, valid_from AS version, 1 AS d FROM entries WHERE playbook = $p
            UNION ALL
            SELECT section, valid_to, -1 FROM entries WHERE playbook = $p AND valid_to IS NOT NULL
        ), sizes AS (
            SELECT version, section, sum(sum(d)) OVER (PARTITION BY section ORDER BY version) AS n
            FROM deltas GROUP BY version, section
        )
        SELECT max(version) AS version, section, arg_max(n, version)
        FROM sizes GROUP BY section, version * $points // $span ORDER BY version, section""",
        {"p": playbook, "points": MAX_POINTS, "span": max(latest, 1)},
    )
    # Operations and prunes per day, or per a longer period once the days outnumber the bars (`MAX_BARS`).
    data.period = unit = _period(con, playbook, MAX_BARS)
    data.ops_by_period = _rows(
        con,
        f"SELECT date_trunc('{unit}', day) AS period, type, status, sum(n)::BIGINT FROM v_operations_daily"
        " WHERE playbook = ? AND status <> 'truncated' GROUP BY ALL ORDER BY period, type, status",
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
    data.prunes_by_period = _rows(
        con,
        f"SELECT date_trunc('{unit}', created_at) AS period, count(*) FROM v_prunes"
        " WHERE playbook = ? GROUP BY period ORDER BY period",
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
            "SELECT max(valid_from) AS v, arg_max(helpful, valid_from), arg_max(harmful, valid_from) FROM entries"
            " WHERE playbook = ? AND name = ? GROUP BY valid_from * ? // ? ORDER BY v",
            [playbook, name, MAX_POINTS, max(latest, 1)],
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
    data.budget_use = budget_use_sql(con, playbook)
    data.stale = stale_entries(con, playbook, stale_after_days) if stale_after_days else []
    data.recurrence = trigger_recurrence(con, playbook)
    data.contributors = contributor_shares(con, playbook)
    data.heuristic = len(entries_by_provider(con, playbook, "heuristic"))
    newest = con.execute(
        "SELECT json_extract(report, '$.quality'), json_extract_string(report, '$.duplicate_measure') FROM runs"
        " WHERE playbook = ? AND kind <> 'consolidate' AND json_extract_string(report, '$.quality') <> '{}'"
        " ORDER BY started_at DESC LIMIT 1",
        [playbook],
    ).fetchone()
    data.quality = json.loads(newest[0]) if newest and newest[0] else {}
    data.duplicate_measure = newest[1] if newest else None
    return data


class ContributorShare(BaseModel):
    """One contributor's part in a playbook: sessions whose operations changed it, and the operations applied."""

    contributor: str
    removed: bool  # forgotten on request (their sessions still count, under their name)
    sessions: int
    operations: int


def contributor_shares(con: duckdb.DuckDBPyConnection, playbook: str) -> list[ContributorShare]:
    """Per contributor (pseudonym): sessions whose operations changed `playbook`, and the operations applied;
    the sessions of a forgotten contributor count under their name, marked removed on request."""
    return fetch_rows(
        con,
        ContributorShare,
        """
        WITH who AS (
            SELECT session_id, contributor, false AS removed FROM sessions WHERE contributor IS NOT NULL
            UNION ALL
            SELECT unnest(session_ids), contributor, true FROM forgotten
        )
        SELECT w.contributor, bool_or(w.removed) AS removed, count(DISTINCT o.session_id) AS sessions,
               count(*) AS operations
        FROM operations o JOIN who w USING (session_id)
        WHERE o.playbook = ? AND o.status = 'applied'
        GROUP BY w.contributor ORDER BY operations DESC, w.contributor
        """,
        [playbook],
    )
