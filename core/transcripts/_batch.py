"""Temp tables one ingest batch fills: normalised parts, per-file stats and per-file metadata, and the parts' redacted
texts (`_redacted`: by rowid of `_parts`, stored in their place)."""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

# The columns of a normalised message part, by name: readers fill `_parts` BY NAME and the store copies
# it into `messages` BY NAME, so neither depends on the column order of the other.
PART_COLUMNS = (
    "session_id",
    "source_path",
    "seq",
    "part",
    "ts",
    "role",
    "kind",
    "text",
    "tool_name",
    "tool_input",
    "tool_use_id",
    "is_error",
    "message_key",
    "is_sidechain",
    "agent_id",
    "is_meta",
    "is_prompt",
    "record_id",
    "part_key",
)

# Real lines reach 1 MB; allow far more so a big tool result is parsed rather than lost.
MAX_OBJECT_SIZE = 256 * 1024 * 1024
# DuckDB sets aside a buffer of `maximum_object_size` for each file it reads: at 256 MiB, reading a batch of
# ordinary transcripts took a third more CPU than at 16 MiB (below which it gains nothing).
MIN_OBJECT_SIZE = 16 * 1024 * 1024


def object_size_bound(sizes: Iterable[int]) -> int:
    """`maximum_object_size` for reading files of these sizes: no line is longer than its file. Twice the
    largest (a live session may grow while it is read), as a power of two, between `MIN_OBJECT_SIZE` and
    `MAX_OBJECT_SIZE`."""
    largest = max(sizes, default=0)
    return min(MAX_OBJECT_SIZE, max(MIN_OBJECT_SIZE, 1 << (2 * largest).bit_length()))


def json_type_of(expr: str) -> str:
    """SQL for `json_type(expr)` of a JSON value the reader wrote, from its first character.

    `read_json` and `from_json` write a JSON column's value compactly, so its first character says its type;
    `json_type` parses the whole value to say it (a tenth of the CPU of reading a batch's lines). Anything
    else falls back to `json_type`."""
    return (
        f"CASE left({expr}::VARCHAR, 1) WHEN '[' THEN 'ARRAY' WHEN '\"' THEN 'VARCHAR' WHEN '{{' THEN 'OBJECT'"
        f" WHEN 'n' THEN 'NULL' ELSE json_type({expr}) END"
    )


def number_in_file(table: str) -> str:
    """SQL that renumbers `table`'s `seq` (its rows' number in the batch's scan) as each row's number within its file.

    A record's `seq` is then its line's place in its file, whatever else was read with it: the same at any batch size,
    so the batch size can change without changing a stored row. The scan keeps the order of its files and of their
    lines, so a file's rows are numbered one after the other and each file's first number is its offset: a subtraction
    (~10 ms a 200 MB batch), where numbering each file's rows again by a window took three times as long. Files are
    told apart by `fid` (`files_table`): grouped and joined by their paths, it took twice as long."""
    return (
        f"UPDATE {table} SET seq = {table}.seq - f.base"
        f" FROM (SELECT fid, min(seq) - 1 AS base FROM {table} GROUP BY fid) f WHERE {table}.fid = f.fid"
    )


# What DuckDB's file readers take as a pattern rather than a name (`FileSystem::HasGlob`).
_GLOB = frozenset("*?[")


def read_names(con: duckdb.DuckDBPyConnection, files: list[str]) -> list[str]:
    """`files` as a DuckDB reader is to be given them, so each is read as itself and its `file_index` is its place in
    `files` (what `files_table` numbers it).

    A name holding `*`, `?` or `[` is a pattern to the reader: `x*.jsonl` also read `xy.jsonl` beside it (its lines
    counted twice), and every later file's index would be off. Such a name is given with those characters bracketed
    (`x[*].jsonl`), or as it is, whichever DuckDB's own glob says names this file and no other; if neither does (a
    backslash before one of them: DuckDB's glob fails on the folder), this raises, so the batch is retried file by
    file and this one recorded as failed, as it was when the reader failed on it."""
    names = []
    for path in files:
        if _GLOB.isdisjoint(path):
            names.append(path)
            continue
        bracketed = "".join(f"[{c}]" if c in _GLOB else c for c in path)
        name = next((n for n in (bracketed, path) if _glob(con, n) == [path]), None)
        if name is None:
            raise duckdb.InvalidInputException(
                f"DuckDB reads the file name {path!r} as a pattern, not as the file's name; rename it to ingest it"
            )
        names.append(name)
    return names


def _glob(con: duckdb.DuckDBPyConnection, pattern: str) -> list[str] | None:
    """The files DuckDB's glob finds for `pattern`, or None when it fails."""
    try:
        return [str(row[0]) for row in con.execute("SELECT file FROM glob(?)", [pattern]).fetchall()]
    except duckdb.Error:
        return None


def files_table(table: str) -> str:
    """SQL for a temp table `table` of `(fid, path, session_id)`: each of the files a reader read (`$files`, in that
    order) by its `file_index` in the read, with its path and session (`_batch_files`).

    A reader's lines carry only `fid` (an integer), and take the path and session from here once per file, where they
    are stored: carried on every line (Codex writes ~2,700 lines a MB), each line copied both strings and the lines
    were joined to their files by the path's text."""
    return (
        f"CREATE OR REPLACE TEMP TABLE {table} AS"
        " SELECT f.fid::INTEGER AS fid, b.path, b.session_id"
        " FROM (SELECT unnest(range(len($files))) AS fid, unnest($files) AS path) f JOIN _batch_files b USING (path)"
    )


_TABLES = """
CREATE OR REPLACE TEMP TABLE _batch_files (path VARCHAR, session_id VARCHAR, format VARCHAR, is_main BOOLEAN);
CREATE OR REPLACE TEMP TABLE _parts AS SELECT * FROM messages LIMIT 0;
CREATE OR REPLACE TEMP TABLE _file_stats (path VARCHAR, n_lines BIGINT, bad_lines BIGINT, noise_records BIGINT);
CREATE OR REPLACE TEMP TABLE _file_noise (path VARCHAR, record_type VARCHAR, n BIGINT);
CREATE OR REPLACE TEMP TABLE _file_meta (
    path VARCHAR, session_id VARCHAR, cwd VARCHAR, git_branch VARCHAR, agent_version VARCHAR, title VARCHAR
);
CREATE OR REPLACE TEMP TABLE _redacted (id BIGINT, text VARCHAR, tool_input VARCHAR);
"""


def reset_batch(con: duckdb.DuckDBPyConnection, files: list[tuple[str, str, str, bool]]) -> None:
    """Create empty batch tables and register `(path, session_id, format, is_main)` rows."""
    con.execute(_TABLES)
    if files:  # one statement for the whole batch: `executemany` runs one per file
        rows = [{"path": p, "session_id": s, "format": f, "is_main": m} for p, s, f, m in files]
        con.execute("INSERT INTO _batch_files SELECT unnest(?, recursive := true)", [rows])


def drop_batch(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the batch temp tables."""
    for table in ("_batch_files", "_parts", "_file_stats", "_file_noise", "_file_meta", "_redacted"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
