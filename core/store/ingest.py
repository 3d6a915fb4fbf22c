"""Incremental, idempotent ingest of transcript files into `files`, `sessions` and `messages`.

A file is skipped when its (size, mtime) or, failing that, its content hash is already recorded. New
and changed files are normalised in batches by DuckDB; each batch replaces the messages of its files and
recomputes the sessions they belong to in ONE transaction, so a session still being written is replaced
atomically when its file grows. A batch that fails is retried file by file, so one bad file is recorded
as failed without costing the others.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb

from core.store.db import transaction
from core.transcripts import Format, detect_format, load_claude_code, load_codex, load_messages, session_id_for
from core.transcripts._batch import drop_batch, reset_batch

__all__ = ["FileResult", "IngestSummary", "discover", "ingest"]

Status = Literal["new", "changed", "unchanged", "failed", "empty", "unrecognised"]
HEAD_BYTES = 64 * 1024
BATCH_BYTES = 256 * 1024 * 1024
SUFFIXES = (".jsonl", ".json")


@dataclass
class FileResult:
    """What ingest did with one file."""

    path: str
    status: Status
    size: int = 0
    format: str | None = None
    session_id: str | None = None
    bad_lines: int = 0
    error: str | None = None


@dataclass
class IngestSummary:
    """Counts for the CLI summary and the run report."""

    results: list[FileResult] = field(default_factory=list)
    sessions: int = 0
    messages: int = 0
    bytes_read: int = 0
    seconds: float = 0.0

    def count(self, status: Status) -> int:
        """Number of files with `status`."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def bad_lines(self) -> int:
        """Malformed lines over all files."""
        return sum(r.bad_lines for r in self.results)

    @property
    def mb_per_s(self) -> float:
        """Throughput over the bytes actually parsed."""
        return self.bytes_read / 1e6 / self.seconds if self.seconds else 0.0

    @property
    def nothing_readable(self) -> bool:
        """True when files were named but none could be read at all."""
        return bool(self.results) and all(r.status in ("failed", "unrecognised") for r in self.results)


@dataclass
class _Work:
    path: Path
    size: int
    mtime: float
    digest: str
    fmt: Format
    session_id: str
    is_main: bool
    status: Status


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[FileResult]]:
    """Expand folders to their `*.jsonl` / `*.json` files (sorted); report paths that do not exist."""
    found: list[Path] = []
    missing: list[FileResult] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()))
        elif path.exists():
            found.append(path)
        else:
            missing.append(FileResult(str(path), "failed", error="no such file or folder"))
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique, missing


def _digest(path: Path) -> tuple[str, bytes]:
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
        hasher = hashlib.blake2b(head, digest_size=16)
        while chunk := fh.read(8 * 1024 * 1024):
            hasher.update(chunk)
    return hasher.hexdigest(), head


def _record_file(con: duckdb.DuckDBPyConnection, r: FileResult, size: int, mtime: float, digest: str | None) -> None:
    con.execute("DELETE FROM files WHERE path = ?", [r.path])
    con.execute(
        "INSERT INTO files (path, size, mtime, content_hash, format, session_id, status, bad_lines, error)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [r.path, size, mtime, digest, r.format, r.session_id, r.status, r.bad_lines, r.error],
    )


_RECOMPUTE_SESSIONS = """
DELETE FROM sessions WHERE session_id IN (SELECT DISTINCT session_id FROM _batch_files);
INSERT INTO sessions
WITH affected AS (SELECT DISTINCT session_id FROM _batch_files),
f AS (
    SELECT session_id,
           coalesce(arg_min(path, NOT is_main), any_value(path)) AS source_path,
           arg_min(format, NOT is_main) AS format,
           arg_min(cwd, NOT is_main) FILTER (WHERE cwd IS NOT NULL) AS cwd,
           arg_min(git_branch, NOT is_main) FILTER (WHERE git_branch IS NOT NULL) AS git_branch,
           arg_min(agent_version, NOT is_main) FILTER (WHERE agent_version IS NOT NULL) AS agent_version,
           arg_min(title, NOT is_main) FILTER (WHERE title IS NOT NULL) AS title,
           sum(noise_records) AS noise, sum(bad_lines) AS bad
    FROM files WHERE status = 'ok' AND session_id IN (SELECT session_id FROM affected)
    GROUP BY session_id
),
m AS (
    SELECT session_id, min(ts) AS started_at, max(ts) AS ended_at,
           count(DISTINCT message_key) FILTER (WHERE role IN ('user', 'assistant') AND NOT is_meta) AS n_messages,
           count(DISTINCT message_key) FILTER (WHERE is_prompt) AS n_user_prompts,
           count(*) FILTER (WHERE kind = 'tool_use') AS n_tool_calls,
           count(*) FILTER (WHERE kind = 'tool_result' AND is_error) AS n_tool_errors
    FROM messages WHERE session_id IN (SELECT session_id FROM affected)
    GROUP BY session_id
)
SELECT f.session_id, f.format, f.source_path,
       nullif(regexp_extract(rtrim(f.cwd, '/'), '[^/\\\\]+$'), '') AS project,
       f.cwd, f.git_branch, f.agent_version, f.title, m.started_at, m.ended_at,
       coalesce(m.n_messages, 0), coalesce(m.n_user_prompts, 0), coalesce(m.n_tool_calls, 0),
       coalesce(m.n_tool_errors, 0), f.noise, f.bad, now()
FROM f LEFT JOIN m USING (session_id);
"""


def _load_batch(con: duckdb.DuckDBPyConnection, batch: list[_Work]) -> None:
    """Normalise `batch` into the temp tables (no permanent table is touched)."""
    reset_batch(con, [(str(w.path), w.session_id, w.fmt, w.is_main) for w in batch])
    by_format: dict[str, list[_Work]] = {}
    for w in batch:
        by_format.setdefault(w.fmt, []).append(w)
    for fmt, items in by_format.items():
        paths = [str(w.path) for w in items]
        if fmt == "claude-code":
            load_claude_code(con, paths)
        elif fmt == "codex":
            load_codex(con, paths)
        else:
            load_messages(con, [(str(w.path), w.session_id) for w in items])


def _commit_batch(con: duckdb.DuckDBPyConnection, batch: list[_Work]) -> tuple[list[FileResult], int]:
    """Replace the batch's messages, ledger rows and sessions in one transaction."""
    ledger = [
        {"path": str(w.path), "size": w.size, "mtime": w.mtime, "digest": w.digest, "is_main": w.is_main} for w in batch
    ]
    with transaction(con):
        con.execute("DELETE FROM messages WHERE source_path IN (SELECT path FROM _batch_files)")
        con.execute("INSERT INTO messages BY NAME SELECT * FROM _parts")
        con.execute("DELETE FROM files WHERE path IN (SELECT path FROM _batch_files)")
        con.execute(
            "INSERT INTO files (path, size, mtime, content_hash, format, session_id, status, n_lines, bad_lines,"
            " noise_records, is_main, cwd, git_branch, agent_version, title)"
            " SELECT l.path, l.size, l.mtime, l.digest, b.format, b.session_id, 'ok', coalesce(s.n_lines, 0),"
            " coalesce(s.bad_lines, 0), coalesce(s.noise_records, 0), l.is_main, m.cwd, m.git_branch,"
            " m.agent_version, m.title"
            " FROM (SELECT unnest(?) AS l) JOIN _batch_files b ON b.path = l.path"
            " LEFT JOIN _file_stats s ON s.path = l.path LEFT JOIN _file_meta m ON m.path = l.path",
            [ledger],
        )
        con.execute(_RECOMPUTE_SESSIONS)
    bad = dict(con.execute("SELECT path, bad_lines FROM _file_stats").fetchall())
    row = con.execute("SELECT count(*) FROM _parts").fetchone()
    results = [
        FileResult(str(w.path), w.status, w.size, w.fmt, w.session_id, int(bad.get(str(w.path), 0))) for w in batch
    ]
    return results, int(row[0]) if row else 0


def _batches(work: list[_Work], limit: int) -> Iterable[list[_Work]]:
    batch: list[_Work] = []
    size = 0
    for w in work:
        if batch and size + w.size > limit:
            yield batch
            batch, size = [], 0
        batch.append(w)
        size += w.size
    if batch:
        yield batch


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def ingest(
    con: duckdb.DuckDBPyConnection,
    paths: Sequence[Path],
    *,
    fmt: Format | Literal["auto"] = "auto",
    progress: Callable[[int, int], None] | None = None,
    batch_bytes: int = BATCH_BYTES,
) -> IngestSummary:
    """Ingest transcript files and folders.

    Args:
        con: an open read-write connection.
        paths: files or folders (searched recursively for *.jsonl and *.json).
        fmt: a format, or "auto" to detect each file's.
        progress: called with (bytes done, bytes total) as batches complete.
        batch_bytes: how many bytes of files DuckDB normalises at once (bounds memory).

    Returns:
        The summary; files that could not be read are in it as `failed`, never raised.
    """
    started = time.perf_counter()
    files, results = discover(paths)
    summary = IngestSummary(results=results)
    known = {
        row[0]: row[1:] for row in con.execute("SELECT path, size, mtime, content_hash, status FROM files").fetchall()
    }
    work: list[_Work] = []
    for path in files:
        key = str(path)
        try:
            st = path.stat()
            previous = known.get(key)
            if previous and previous[0] == st.st_size and previous[1] == st.st_mtime and previous[3] != "failed":
                summary.results.append(FileResult(key, "unchanged", st.st_size))
                continue
            digest, head = _digest(path)
        except OSError as exc:
            result = FileResult(key, "failed", error=f"unreadable: {exc.strerror or exc}")
            summary.results.append(result)
            with transaction(con):
                _record_file(con, result, 0, 0.0, None)
            continue
        if previous and previous[2] == digest and previous[3] != "failed":
            con.execute("UPDATE files SET mtime = ? WHERE path = ?", [st.st_mtime, key])
            summary.results.append(FileResult(key, "unchanged", st.st_size))
            continue
        status: Status = "changed" if previous and previous[3] == "ok" else "new"
        if st.st_size == 0 or not head.strip():
            result = FileResult(key, "empty", 0)
            summary.results.append(result)
            with transaction(con):
                con.execute("DELETE FROM messages WHERE source_path = ?", [key])
                _record_file(con, result, st.st_size, st.st_mtime, digest)
            continue
        detected = detect_format(path, head) if fmt == "auto" else fmt
        if detected is None:
            result = FileResult(key, "unrecognised", st.st_size, error="not a known transcript format")
            summary.results.append(result)
            with transaction(con):
                _record_file(con, result, st.st_size, st.st_mtime, digest)
            continue
        is_main = not (detected == "claude-code" and path.parent.name == "subagents")
        work.append(
            _Work(
                path, st.st_size, st.st_mtime, digest, detected, session_id_for(path, detected, head), is_main, status
            )
        )

    total = sum(w.size for w in work)
    done = 0
    sessions: set[str] = set()
    for batch in _batches(work, batch_bytes):
        pending = [batch]
        while pending:
            current = pending.pop()
            try:
                _load_batch(con, current)
                batch_results, n_parts = _commit_batch(con, current)
            except duckdb.Error as exc:
                if len(current) > 1:
                    pending.extend([w] for w in current)  # isolate the file that fails
                    continue
                w = current[0]
                result = FileResult(str(w.path), "failed", w.size, w.fmt, w.session_id, error=_first_line(exc))
                summary.results.append(result)
                with transaction(con):
                    _record_file(con, result, w.size, w.mtime, w.digest)
                continue
            finally:
                drop_batch(con)
            summary.results.extend(batch_results)
            summary.messages += n_parts
            summary.bytes_read += sum(w.size for w in current)
            sessions.update(w.session_id for w in current)
        done += sum(w.size for w in batch)
        if progress:
            progress(done, total)
    summary.sessions = len(sessions)
    summary.seconds = time.perf_counter() - started
    return summary
