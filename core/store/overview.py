"""A database at a glance, for `playbook doctor`: schema, sessions, playbooks and their latest versions."""

from __future__ import annotations

import duckdb
from pydantic import BaseModel

__all__ = ["Overview", "database_overview"]


class Overview(BaseModel):
    """Schema version, ingested files and sessions, and each playbook with its latest version."""

    schema_version: int
    files: int
    files_not_ingested: int
    sessions: int
    playbooks: dict[str, int]


def database_overview(con: duckdb.DuckDBPyConnection) -> Overview:
    """Schema version, ingested files and sessions, and each playbook with its latest version."""
    schema = con.execute("SELECT max(version) FROM schema_version").fetchone()
    counts = con.execute(
        "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM sessions),"
        " (SELECT count(*) FROM files WHERE status <> 'ok')"
    ).fetchone()
    playbooks = con.execute(
        "SELECT p.name, coalesce(max(v.version), 0) FROM playbooks p LEFT JOIN versions v ON v.playbook = p.name"
        " GROUP BY p.name ORDER BY p.name"
    ).fetchall()
    assert schema is not None and counts is not None  # aggregates always return a row
    return Overview(
        schema_version=schema[0],
        files=counts[0],
        files_not_ingested=counts[2],
        sessions=counts[1],
        playbooks={name: version for name, version in playbooks},
    )
