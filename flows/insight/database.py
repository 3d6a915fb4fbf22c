"""The database as the read-only commands see it: every block checked, a user's read-only SQL, the recent runs,
and a Parquet snapshot of its tables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from core.errors import StoreError
from core.store.db import open_db, verify
from core.store.readonly import run_read_only
from flows.context import shard_path
from flows.workspace import Workspace

if TYPE_CHECKING:  # `playbook sql` loads neither the run summaries (and the rules they name) nor Parquet writing
    from core.store.runs import RunRow

__all__ = ["Checked", "check", "query", "recent_runs", "snapshot"]


class Checked(BaseModel):
    """A database read in full: tables and rows, every block's checksum verified."""

    tables: int
    rows: int


def check(ws: Workspace) -> Checked:
    """Read every table in full, so DuckDB verifies every block's checksum.

    Raises:
        StoreError: a table is damaged; the message names it and how to recover.
    """
    db = ws.database()
    with open_db(db.path, read_only=True, wait=db.wait_s) as con:
        tables, rows, broken = verify(con)
    if broken:
        names = ", ".join(f"`{t}` ({why})" for t, why in broken[:2]) + (
            f" and {len(broken) - 2} more tables" if len(broken) > 2 else ""
        )
        raise StoreError(
            f"Database `{db.path}` is damaged: {names}. Restore the newest copy from `{db.path}.backups/`"
            " (docs/recovery.md) and run `playbook nightly` again."
        )
    return Checked(tables=tables, rows=rows)


def query(ws: Workspace, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(columns, rows) of one read-only statement (`core.store.readonly`); with shards, over all of them."""
    return run_read_only(ws.settings.db, sql, wait=ws.settings.wait_s, shards=shards_of(ws))


def shards_of(ws: Workspace) -> list[Path]:
    """The playbooks' shards beside the store that exist (`shard = "playbook"`; none otherwise)."""
    if ws.settings.shard != "playbook":
        return []
    store = ws.settings.db
    found = {shard_path(store, name) for name in ws.playbooks}
    found |= set(store.parent.glob(f"{store.stem}.*{store.suffix}"))
    return sorted(p for p in found if p.is_file() and p != store)


def recent_runs(ws: Workspace, limit: int = 20) -> list[RunRow]:
    """The newest runs first."""
    from core.store.runs import list_runs

    with ws.database().read() as con:
        return list_runs(con, limit)


def snapshot(ws: Workspace, folder: Path) -> list[Path]:
    """Every table as Parquet into `folder`, for notebooks and BI tools (a reader while a run holds the file)."""
    from core.store.snapshot import write_parquet

    with ws.database().read() as con:
        return write_parquet(con, folder)
