"""Parquet snapshots of the tables, for notebooks and BI tools (they cannot open a locked database)."""

from __future__ import annotations

from pathlib import Path

import duckdb

__all__ = ["SNAPSHOT_TABLES", "write_parquet"]

SNAPSHOT_TABLES = (
    "sessions",
    "playbooks",
    "versions",
    "entries",
    "operations",
    "evaluations",
    "prunes",
    "applied_sessions",
    "llm_calls",
    "rules_findings",
    "runs",
    "files",
)


def write_parquet(con: duckdb.DuckDBPyConnection, out_dir: Path) -> list[Path]:
    """Write every table (messages excluded: large, and re-derivable from the transcripts) as Parquet."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for table in SNAPSHOT_TABLES:
        target = out_dir / f"{table}.parquet"
        con.execute(f"COPY {table} TO '{target.as_posix()}' (FORMAT parquet)")
        written.append(target)
    return written
