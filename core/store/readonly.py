"""A user's own SQL (`playbook sql`), run so that it can only read the database.

Two guards, each enough on its own for what the other misses:
- a statement allow-list, checked with DuckDB's own parser before anything runs: one statement, a query
  (SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE), an EXPLAIN of one, or a PRAGMA that only
  reports (`table_info`, `database_size`, ...);
- a read-only connection with DuckDB's own switches: `enable_external_access = false` (no file, extension or
  other database is opened: `COPY ... TO`, `ATTACH`, `read_text`, `INSTALL` all fail) and
  `lock_configuration = true` (no statement can turn it back on).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from core.errors import StoreError
from core.patterns import SPACE, Pattern
from core.store.db import STORE_TABLES, open_to_read
from core.store.schema import VIEWS

__all__ = ["READ_ONLY_PRAGMAS", "refusal", "run_read_only"]

# PRAGMAs that report and change nothing.
READ_ONLY_PRAGMAS = frozenset(
    {
        "collations",
        "database_list",
        "database_size",
        "functions",
        "metadata_info",
        "platform",
        "show",
        "show_databases",
        "show_tables",
        "show_tables_expanded",
        "storage_info",
        "table_info",
        "version",
    }
)
_ALLOWED = "SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN and PRAGMAs that only report"
_LEADING_COMMENTS = Pattern(rf"^(?:[{SPACE}]+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", dotall=True)
_EXPLAIN = Pattern(rf"explain(?:[{SPACE}]+analyze)?[{SPACE}]+", ignore_case=True)
_PRAGMA = Pattern(rf"pragma[{SPACE}]+(\w+)[{SPACE}]*(?:\(|;|$)", ignore_case=True)


def refusal(sql: str, parser: duckdb.DuckDBPyConnection | None = None) -> str | None:
    """Why `sql` is refused, in words for the user, or None when it may run. `parser`: a connection to parse it with
    (nothing runs); without one, DuckDB's default in-memory connection is made for it (~12 ms of CPU)."""
    try:
        statements = (parser or duckdb).extract_statements(sql)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"it does not parse: {first}"
    if len(statements) != 1:
        return f"it holds {len(statements)} statements; run one at a time"
    (statement,) = statements
    text = _LEADING_COMMENTS.sub("", statement.query).strip()
    kind = statement.type
    if kind == duckdb.StatementType.SELECT:
        return None
    if kind == duckdb.StatementType.EXPLAIN:
        # EXPLAIN ANALYZE runs what it explains: the statement inside must pass too.
        inner = _EXPLAIN.match(text)
        if inner is None:
            return "only `EXPLAIN [ANALYZE] <query>` is allowed"
        why = refusal(text[inner.end() :], parser)
        return f"the explained statement is refused: {why}" if why else None
    if kind == duckdb.StatementType.PRAGMA:
        pragma = _PRAGMA.match(text)
        if pragma and (pragma.group(1) or "").lower() in READ_ONLY_PRAGMAS:
            return None
        return f"that PRAGMA may change settings; allowed: {', '.join(sorted(READ_ONLY_PRAGMAS))}"
    word = text.split(None, 1)[0].upper() if text else kind.name
    return f"`{word}` is not a read-only statement"


def run_read_only(
    path: Path, sql: str, *, wait: float = 0.0, shards: Sequence[Path] = ()
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of `sql` over the database at `path`, which it cannot change, nor any other file.
    `shards`: playbooks' shards beside it (`shard = "playbook"`), attached read-only: each playbook table is read as
    the union of theirs, and the views over them too, so a query sees one schema.

    Raises:
        StoreError: the statement is refused (nothing ran), or DuckDB refused it while running (one line).
    """
    with open_to_read(path, wait=wait) as con:
        why = refusal(sql, con)  # parsed, not run: nothing ran when it is refused
        if why:
            raise StoreError(f"`playbook sql` runs read-only queries only ({_ALLOWED}); refused because {why}.")
        if shards:
            _union_of(con, shards)
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        cur = con.execute(sql)
        columns = [d[0] for d in cur.description] if cur.description else []
        return columns, [tuple(r) for r in cur.fetchall()] if columns else []


def _union_of(con: duckdb.DuckDBPyConnection, shards: Sequence[Path]) -> None:
    """Attach `shards` read-only, and read each of their own tables (not the store's sessions, which they read through
    views) as one temporary view of the same name, their union; the analytic views are made again over those."""
    aliases = []
    for i, shard in enumerate(shards):
        alias = f"shard_{i}"
        quoted = str(shard).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")
        aliases.append(alias)
    own = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT table_name FROM information_schema.tables WHERE table_catalog IN (SELECT unnest(?))"
            " AND table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY 1",
            [aliases],
        ).fetchall()
        if r[0] not in STORE_TABLES and r[0] not in ("schema_version", "derived_objects")
    ]
    for table in own:
        union = " UNION ALL BY NAME ".join(f'SELECT * FROM {a}.main."{table}"' for a in aliases)
        con.execute(f'CREATE OR REPLACE TEMP VIEW "{table}" AS {union}')
    con.execute(
        VIEWS.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW").replace(
            "CREATE OR REPLACE MACRO", "CREATE OR REPLACE TEMP MACRO"
        )
    )
