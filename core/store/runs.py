"""Run metrics (`runs`) and resumable epochs (`epochs`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import duckdb
from pydantic import BaseModel

from core.runsummary import RunSummary
from core.store.db import fetch_rows

__all__ = [
    "RunRow",
    "close_epoch",
    "finish_run",
    "latest_run",
    "list_runs",
    "open_epochs",
    "plan_epoch",
    "run_spend",
    "start_run",
]


def start_run(con: duckdb.DuckDBPyConnection, run_id: str, kind: str, playbook: str | None, provider: str) -> None:
    """Record a run as running; runs still `running` were left by a process that died (the caller holds the
    run lock, so no other run is alive) and become `interrupted`."""
    con.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
    con.execute(
        "INSERT INTO runs (run_id, kind, playbook, provider, started_at, status) VALUES (?, ?, ?, ?, ?, 'running')",
        [run_id, kind, playbook, provider, datetime.now(UTC)],
    )


def finish_run(con: duckdb.DuckDBPyConnection, report: RunSummary) -> None:
    """Store the final counts of a run."""
    con.execute(
        "UPDATE runs SET finished_at = ?, status = ?, sessions_considered = ?, sessions_applied = ?,"
        " sessions_skipped = ?, sessions_failed = ?, ops_applied = ?, ops_skipped = ?, pruned = ?, evaluations = ?,"
        " input_tokens = ?, output_tokens = ?, cost_usd = ?, duration_s = ?, report = ? WHERE run_id = ?",
        [
            datetime.now(UTC),
            report.status,
            report.sessions_considered,
            report.sessions_applied,
            report.sessions_skipped,
            report.sessions_failed,
            report.ops_applied,
            report.ops_skipped,
            report.pruned,
            report.evaluations,
            report.input_tokens,
            report.output_tokens,
            report.cost_usd,
            report.duration_s,
            report.model_dump_json(),
            report.run_id,
        ],
    )


def latest_run(con: duckdb.DuckDBPyConnection, playbook: str, kind: str, since: datetime) -> RunSummary | None:
    """The summary of `playbook`'s newest finished run of `kind` started at or after `since`, or None."""
    row = con.execute(
        "SELECT report FROM runs WHERE playbook = ? AND kind = ? AND started_at >= ? AND report IS NOT NULL"
        " ORDER BY started_at DESC LIMIT 1",
        [playbook, kind, since],
    ).fetchone()
    return RunSummary.model_validate_json(row[0]) if row else None


def run_spend(con: duckdb.DuckDBPyConnection, run_id: str) -> float:
    """Dollars spent on model calls by `run_id` so far (for the cost cap across tasks)."""
    row = con.execute("SELECT coalesce(sum(cost_usd), 0) FROM llm_calls WHERE run_id = ?", [run_id]).fetchone()
    return float(row[0]) if row else 0.0


class RunRow(BaseModel):
    """One run, as `playbook runs` lists it."""

    run_id: str
    kind: str
    playbook: str | None
    provider: str | None
    started_at: datetime | None
    finished_at: datetime | None
    status: str
    sessions_considered: int | None
    sessions_applied: int | None
    sessions_skipped: int | None
    sessions_failed: int | None
    ops_applied: int | None
    ops_skipped: int | None
    pruned: int | None
    evaluations: int | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    duration_s: float | None


def list_runs(con: duckdb.DuckDBPyConnection, limit: int = 20) -> list[RunRow]:
    """Newest runs first."""
    return fetch_rows(
        con,
        RunRow,
        "SELECT run_id, kind, playbook, provider, started_at, finished_at, status, sessions_considered,"
        " sessions_applied, sessions_skipped, sessions_failed, ops_applied, ops_skipped, pruned, evaluations,"
        " input_tokens, output_tokens, cost_usd, duration_s FROM runs ORDER BY started_at DESC LIMIT ?",
        [limit],
    )


def open_epochs(con: duckdb.DuckDBPyConnection, playbook: str) -> list[tuple[int, int, list[str]]]:
    """(epoch_no, base_version, session ids) of epochs a killed run left unfinished, oldest first."""
    rows = con.execute(
        "SELECT epoch_no, base_version, session_ids FROM epochs WHERE playbook = ? AND status = 'open'"
        " ORDER BY epoch_no",
        [playbook],
    ).fetchall()
    return [(r[0], r[1], json.loads(r[2])) for r in rows]


def plan_epoch(
    con: duckdb.DuckDBPyConnection, playbook: str, base_version: int, session_ids: list[str], run_id: str
) -> int:
    """Record a new epoch before any of its calls are made; returns its number. One statement (atomic on its own),
    not a transaction of two: a transaction costs about a millisecond of CPU, and a keyless run plans 125 epochs for
    1,000 sessions."""
    row = con.execute(
        "INSERT INTO epochs (playbook, epoch_no, base_version, session_ids, run_id, status)"
        " SELECT $p, coalesce(max(epoch_no), 0) + 1, $base, $ids, $run, 'open' FROM epochs WHERE playbook = $p"
        " RETURNING epoch_no",
        {"p": playbook, "base": base_version, "ids": json.dumps(session_ids), "run": run_id},
    ).fetchone()
    assert row is not None  # an INSERT ... SELECT of an aggregate inserts one row
    return int(row[0])


def close_epoch(con: duckdb.DuckDBPyConnection, playbook: str, epoch_no: int) -> None:
    """Mark an epoch done (its failed sessions stay pending and join a later epoch)."""
    con.execute("UPDATE epochs SET status = 'done' WHERE playbook = ? AND epoch_no = ?", [playbook, epoch_no])
