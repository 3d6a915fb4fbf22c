"""Opening the DuckDB file: migrations run forward, newer files refused, DuckDB's errors translated.

This is the one place where DuckDB exceptions become the project's errors (as httpx maps httpcore's in
one function): `open_db` translates whatever a store function lets through, so no caller sees a raw
`duckdb.Error`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb
from pydantic import BaseModel

from core.errors import DatabaseBusyError, PlaybookError, SchemaVersionError, StoreError
from core.io.files import copy_atomic
from core.patterns import Pattern
from core.store.schema import MIGRATIONS, VIEWS

__all__ = [
    "LATEST_SCHEMA",
    "STORE_ALIAS",
    "STORE_TABLES",
    "back_up",
    "connect",
    "fetch_rows",
    "open_db",
    "open_to_read",
    "transaction",
    "verify",
]

LATEST_SCHEMA = max(version for version, _, _ in MIGRATIONS)
_VIEWS_DIGEST = hashlib.sha256(VIEWS.encode()).hexdigest()
_PID_RE = Pattern(r"\(PID ([0-9]+)\)")


def translate_error(path: Path, exc: duckdb.Error, *, opening: bool = False) -> PlaybookError:
    """The project's error for a DuckDB exception on the database at `path` (raise it `from exc`)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    # Another process holds the file, or (within this process) another thread is opening it at the same moment.
    if "Could not set lock" in text or "Conflicting lock" in text or "Unique file handle conflict" in text:
        match = _PID_RE.search(text)
        who = f"process {match.group(1)}" if match else "another process"
        return DatabaseBusyError(
            f"Database `{path}` is in use by {who}; wait for it to finish (`--wait SECONDS`) or pass another `--db`."
        )
    if opening:
        return StoreError(f"Cannot open database `{path}`: {first}")
    return StoreError(f"Database `{path}`: {first}")


def _migrate(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ DEFAULT now())"
    )
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    current = (row[0] if row else None) or 0
    if current > LATEST_SCHEMA:
        raise SchemaVersionError(
            f"Database `{path}` has schema version {current}, newer than this playbook understands"
            f" ({LATEST_SCHEMA}); upgrade playbook or use another `--db`."
        )
    # One transaction a migration, recorded with its version: a failure leaves the file at the last version that
    # committed, and the next open goes on from there. All of them in one transaction failed to commit under DuckDB 1.x
    # ("another transaction has altered this table") once a table changed in one migration (`UPDATE files` in 5) is
    # altered in a later one (`ALTER TABLE files` in 7): 1.x refuses an ALTER after a change to the same table in a
    # transaction. No migration does that within itself.
    for version, name, sql in (m for m in MIGRATIONS if m[0] > current):
        with transaction(con):
            con.execute(sql)
            con.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
    # Views and macros are derived objects, recreated whenever their definition in the code changes.
    digest = _VIEWS_DIGEST
    con.execute("CREATE TABLE IF NOT EXISTS derived_objects (name VARCHAR PRIMARY KEY, digest VARCHAR)")
    row = con.execute("SELECT digest FROM derived_objects WHERE name = 'views'").fetchone()
    if not row or row[0] != digest:
        con.execute("BEGIN TRANSACTION")
        con.execute(VIEWS)
        con.execute("INSERT OR REPLACE INTO derived_objects VALUES ('views', ?)", [digest])
        con.execute("COMMIT")


# The tables ingest writes (sessions and what they came from, and what the SessionStart hook gave them). A
# playbook's shard (`shard = "playbook"`) reads them from the shared store, attached read-only, through views.
STORE_TABLES = (
    "files",
    "sessions",
    "messages",
    "file_noise",
    "exposures",
    "exposure_ledgers",
    "pushed_files",
    "remote_objects",
    "forgotten",
    "session_keys",
    "session_content",
)
STORE_ALIAS = "store"


def _attach_store(con: duckdb.DuckDBPyConnection, path: Path, store: Path, *, read_only: bool) -> None:
    """Attach the shared store read-only and read its session tables through views of the same names (a shard's
    own copies, empty, are dropped the first time: the shard never holds a session)."""
    if not store.exists():
        raise StoreError(f"No database at `{store}` (the sessions the shard `{path}` curates); run `playbook ingest`.")
    quoted = str(store).replace("'", "''")
    con.execute(f"ATTACH '{quoted}' AS {STORE_ALIAS} (READ_ONLY)")
    if read_only:
        return
    kinds = dict(
        con.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_catalog = current_database()"
            " AND table_schema = 'main'"
        ).fetchall()
    )
    for table in STORE_TABLES:
        if kinds.get(table) == "BASE TABLE":
            row = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            if row and row[0]:
                raise StoreError(
                    f"Database `{path}` holds sessions of its own (`{table}`), so it cannot be a playbook's shard;"
                    ' pass another `--db` or set `shard = "one"`.'
                )
            con.execute(f'DROP TABLE "{table}"')
        if kinds.get(table) != "VIEW":
            con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM {STORE_ALIAS}."{table}"')


def connect(
    path: Path | str,
    *,
    read_only: bool = False,
    create: bool = True,
    memory_limit: str | None = "2GB",
    wait: float = 0.0,
    store: Path | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open `path` (created if missing, unless `create` is False or `read_only`), translate lock errors, and
    migrate it to the latest schema. With `store`, `path` is a playbook's shard: the shared store is attached
    read-only and its sessions read through views.

    DuckDB lets one process at a time open a file for writing (and none read while it does); `wait` is
    how many seconds to keep trying while another process has it, before giving up.

    Raises:
        DatabaseBusyError: another process holds the file.
        SchemaVersionError: the file was written by a newer version of playbook.
        StoreError: there is no file and it may not be created, or it cannot be opened for another reason.
    """
    path = Path(path)
    if not path.exists() and (read_only or not create):
        raise StoreError(f"No database at `{path}`; run `playbook ingest` first, or pass `--db`.")
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    give_up = time.monotonic() + wait
    pause = 0.02
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.Error as exc:
            error = translate_error(path, exc, opening=True)
            if not isinstance(error, DatabaseBusyError) or time.monotonic() >= give_up:
                raise error from exc
        time.sleep(pause)
        pause = min(pause * 2, 0.25)
    try:
        _refuse_truncated(con, path)
        if memory_limit:
            con.execute(f"SET memory_limit = '{memory_limit}'")
        if read_only:
            current = _schema_version(con)
            if current > LATEST_SCHEMA:
                raise SchemaVersionError(
                    f"Database `{path}` has schema version {current}, newer than this playbook understands"
                    f" ({LATEST_SCHEMA}); upgrade playbook or use another `--db`."
                )
        else:
            _migrate(con, path)
        if store is not None:
            _attach_store(con, path, store, read_only=read_only)
    except duckdb.Error as exc:
        con.close()
        raise translate_error(store or path, exc, opening=True) from exc
    except Exception:
        con.close()
        raise
    return con


# A DuckDB file is three 4 KiB headers followed by its blocks.
_HEADERS = 3 * 4096


def _refuse_truncated(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse, before anything reads or writes it, a file too short for the blocks its header says are used.

    DuckDB opens such a file and fails only when a missing block is read, perhaps half-way through a run.
    (Free blocks at the end may be cut off by DuckDB itself, so only used blocks are counted.)
    """
    row = con.execute(
        "SELECT block_size, used_blocks FROM pragma_database_size() WHERE database_name = current_database()"
    ).fetchone()
    if not row or not path.exists():
        return
    expected = _HEADERS + int(row[0]) * int(row[1])
    size = path.stat().st_size
    if size < expected:
        raise StoreError(
            f"Database `{path}` is damaged: the file is {size:,} bytes but uses {row[1]} blocks of {row[0]:,}"
            f" ({expected:,} bytes); restore a copy from `{path.name}.backups/` (docs/recovery.md) or pass another"
            " `--db`."
        )


def _schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The newest migration the file has had (0: none, not even the table). Asked of the table itself: the first
    query of `information_schema` costs a command ~10 ms of CPU."""
    try:
        row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0] or 0) if row else 0


@contextmanager
def open_db(
    path: Path | str, *, read_only: bool = False, create: bool = True, wait: float = 0.0, store: Path | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Context manager around `connect` that always closes the connection and translates DuckDB's errors."""
    con = connect(path, read_only=read_only, create=create, wait=wait, store=store)
    try:
        yield con
    except duckdb.Error as exc:
        raise translate_error(Path(path), exc) from exc
    finally:
        con.close()


@contextmanager
def open_to_read(
    path: Path | str, *, wait: float = 0.0, store: Path | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to an existing database, for a command that only reads it: it writes nothing and keeps
    no other reader out. A file behind this code (a migration to run, views to recreate, or a shard whose session
    tables are not views of the store yet) is first opened read-write once, which brings it up to date as every
    write does.

    Raises:
        StoreError: there is no database at `path` (read commands never create one), or it cannot be opened.
        DatabaseBusyError, SchemaVersionError: as `connect`.
    """
    with open_db(path, read_only=True, wait=wait, store=store) as con:
        if _up_to_date(con, store is not None):
            yield con
            return
    with open_db(path, create=False, wait=wait, store=store):
        pass  # `connect` migrated it
    with open_db(path, read_only=True, wait=wait, store=store) as con:
        yield con


def _up_to_date(con: duckdb.DuckDBPyConnection, shard: bool) -> bool:
    """Nothing to write before the database is read: every migration ran, the views are this code's, and (for a
    `shard`) the session tables are views of the attached store."""
    try:
        row = con.execute(
            "SELECT (SELECT max(version) FROM schema_version),"
            " (SELECT digest FROM derived_objects WHERE name = 'views')"
        ).fetchone()
    except duckdb.CatalogException:  # no schema_version or derived_objects table yet
        return False
    if not row or row[0] != LATEST_SCHEMA or row[1] != _VIEWS_DIGEST:
        return False
    if not shard:
        return True
    views = {
        r[0]
        for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    return all(table in views for table in STORE_TABLES)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Explicit BEGIN/COMMIT/ROLLBACK: a multi-statement `execute` is not atomic from Python."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


RowT = TypeVar("RowT", bound=BaseModel)


def columnar_insert(table: str, columns: Sequence[tuple[str, str]]) -> str:
    """An INSERT of `table`'s `columns` (name, DuckDB type) that takes one list per column: many rows in one
    statement (an INSERT costs ~2 ms of CPU however few rows it carries; `executemany` runs one a row)."""
    names = ", ".join(name for name, _ in columns)
    return f"INSERT INTO {table} ({names}) SELECT " + ", ".join(f"unnest(?::{kind}[])" for _, kind in columns)


def fetch_rows(
    con: duckdb.DuckDBPyConnection,
    model: type[RowT],
    sql: str,
    params: list[Any] | dict[str, Any] | None = None,
    *,
    trusted: bool = False,
) -> list[RowT]:
    """The rows of `sql` as `model` instances, column by name: the store's one way to hand back typed rows.

    `trusted`: columns the store wrote from validated values and DuckDB typed, built without validating them
    again (`history --limit 0` at 10,000 versions: 10,000 validations a read)."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    if trusted:
        return [model.model_construct(**dict(zip(names, row, strict=True))) for row in cur.fetchall()]
    return [model.model_validate(dict(zip(names, row, strict=True))) for row in cur.fetchall()]


def verify(con: duckdb.DuckDBPyConnection) -> tuple[int, int, list[tuple[str, str]]]:
    """Read every row of every table, so DuckDB checks every block's checksum.

    Returns (tables read, rows read, [(table, first line of the error)] for the tables that failed).
    """
    tables = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY 1"
        ).fetchall()
    ]
    rows, broken = 0, []
    for table in tables:
        try:
            # hashing every column forces every block of the table to be read (and its checksum verified)
            row = con.execute(f'SELECT count(*), sum(hash(COLUMNS(*))) FROM "{table}"').fetchone()
            rows += int(row[0]) if row else 0
        except duckdb.Error as exc:
            text = str(exc).strip()
            broken.append((table, text.splitlines()[0] if text else type(exc).__name__))
    return len(tables), rows, broken


def back_up(path: Path, keep: int) -> Path | None:
    """Copy the database aside, to `<db>.backups/<UTC time>.duckdb`, keeping the newest `keep` copies.

    Call it under the run lock, with no connection open. Returns the copy, or None when there is no file
    yet or `keep` is 0.

    Raises:
        PlaybookFileError: the copy cannot be written (a full disk: the path and the space needed); no partial
            copy is left.
    """
    if keep <= 0 or not path.exists():
        return None
    folder = path.with_name(path.name + ".backups")
    target = folder / f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}.duckdb"
    copy_atomic(path, target)  # written beside, synced and renamed: a full disk leaves no half copy
    for old in sorted(folder.glob("*.duckdb"))[:-keep]:
        old.unlink()
    return target
