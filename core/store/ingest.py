"""Incremental, idempotent ingest of transcript files into `files`, `sessions` and `messages`.

A file is skipped when its (size, mtime) or, failing that, its content hash is already recorded, and the reader of
its format has the version that read it (`core.transcripts.reader_versions`): a file a reader of another version read
is read again (`reread`), its messages replaced as a changed file's are. What a
file is and which session it belongs to come from its records (`core.transcripts.detect`): a Claude Code
session is its `sessionId`, so renamed copies, a session resumed into a second file and subagent files
(in `<session>/subagents/` or, in older layouts, at the project root) are all one session, their records
counted once by `uuid`. A file fetched from a team's bucket joins only sessions of the contributor whose folder
it came from (`core.store.session_keys`). `agent-*.meta.json` files describe subagents and are never read as
transcripts.
New and changed files are normalised in batches by DuckDB; each batch replaces the messages of its files
and recomputes the sessions they belong to in ONE transaction, so a session still being written is
replaced atomically when its file grows. A batch that fails is retried file by file, so one bad file is
recorded as failed without costing the others. Every file named is in the summary: ingested, unchanged,
or with the reason it was not.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

import duckdb

from core.errors import StoreError
from core.store.actions import refresh_actions
from core.store.db import transaction
from core.store.schema import project_sql
from core.store.session_keys import LOCAL, assign_keys, backfill_keys, refresh_content
from core.store.sessions import SAME_PART
from core.transcripts import Detected, Format, detect, load_claude_code, load_codex, load_memory, load_messages
from core.transcripts._batch import drop_batch, object_size_bound, reset_batch
from core.transcripts.discovery import META_SUFFIX, discover
from core.transcripts.reader_versions import reader_version

__all__ = ["FileResult", "IngestSummary", "ingest", "needs_ingest"]

# `refused`: an object of a team's store that may not become a file here (`core.io.keys`), never fetched.
# `reread`: the same content, read again because its format's reader changed since it was read.
Status = Literal["new", "changed", "reread", "unchanged", "shrunk", "failed", "empty", "unrecognised", "refused"]
HEAD_BYTES = 64 * 1024
# Each batch costs a fixed ~0.1-0.15 s of CPU (statements, RE2 programs warming up, a commit that checkpoints): at 1 GB,
# batches of 256 MB take 5-13 % less CPU than batches of 128 MB (5 % on a busy machine, 11-13 % on a quiet one), for
# a peak of ~490 MB against ~365 (1.06-1.10x at 2 GB; 1.02x in batches of 128 MB). One batch is in flight at a time,
# holding its lines and its parts in temp tables. The batch size changes no stored row: a record's `seq` is numbered
# within its file (`core.transcripts._batch.number_in_file`).
BATCH_BYTES = 256 * 1024 * 1024
# DuckDB's memory limit while ingesting, in batches. Under it the buffer pool evicts what it must when a batch
# allocates, and DuckDB then hands every freed page back to the system (`FlushAll`), which the next allocation
# faults in again: at 1 GB, two batches in flight under a cap of 3 made ~65 such flushes a batch, 1.0 M minor faults
# and 2.5 s of the kernel's CPU. One batch at a time needs less room, so a cap of 4 is rarely reached within a batch
# (0.47 M faults at 1 GB). What would still reach it is the blocks of stored messages the pool keeps after each
# commit (~10 MB a batch); those are dropped between batches (`_release_cached_blocks`), so peak memory is flat from
# the first GB: 351 and 348 MB at 1 and 2 GB, against 436 and 452 MB with two batches in flight under a cap of 3.
MEMORY_BATCHES = 4
# What the pool is lowered to between batches, to drop the blocks it cached: any lower than what a batch needs.
RELEASE_LIMIT = 64 * 1024 * 1024
# ... and at least this many of the largest line buffer a batch may need (`object_size_bound`): a 20 MB line (a 64 MiB
# buffer) needed more than 512 MiB. A batch that still runs out of memory under the cap is read again without it.
LINE_BUFFERS = 16
# The pool's cached blocks are dropped between batches once they exceed a batch over this (~19 MB of them a batch of
# 256 MB): each drop also hands back what the next batch then allocates again (0.15-0.2 s of CPU, most of it the
# kernel's), so dropping them after every batch cost 7-9 % of ingest at 1 GB. Dropped past a quarter of a batch (every
# fourth batch), they add at most a third of a batch to the peak, whatever the archive's size (at 2 GB, 513-514 MB
# against 491-524 dropped after every batch).
CACHED_SHARE = 4


@dataclass
class FileResult:
    """What ingest did with one file."""

    path: str
    status: Status
    size: int = 0
    format: str | None = None
    session_id: str | None = None
    bad_lines: int = 0
    secrets: int = 0  # secrets replaced by a marker before anything was stored
    error: str | None = None  # why the file was not ingested (failed, empty, unrecognised)
    # ingested, but worth saying (read again: its reader changed; a subagent file whose session has no main file)
    note: str | None = None


@dataclass
class IngestSummary:
    """Counts for the CLI summary and the run report."""

    results: list[FileResult] = field(default_factory=list)
    sessions: int = 0
    messages: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    exposures: int = 0  # rows merged from the SessionStart hook's ledger
    exposure_lines_skipped: int = 0  # ledger lines that were not valid

    def count(self, status: Status) -> int:
        """Number of files with `status`."""
        return sum(1 for r in self.results if r.status == status)

    @property
    def bad_lines(self) -> int:
        """Malformed lines over all files."""
        return sum(r.bad_lines for r in self.results)

    @property
    def secrets(self) -> int:
        """Secrets redacted over all files."""
        return sum(r.secrets for r in self.results)

    @property
    def mb_per_s(self) -> float:
        """Throughput over the bytes actually parsed."""
        return self.bytes_read / 1e6 / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, object]:
        """The summary for `--json`: counts per status and every file with its status and reason."""
        statuses: tuple[Status, ...] = (
            "new",
            "changed",
            "reread",
            "unchanged",
            "shrunk",
            "failed",
            "empty",
            "unrecognised",
            "refused",
        )
        return {
            "files": [asdict(r) for r in self.results],
            "counts": {s: self.count(s) for s in statuses},
            "sessions": self.sessions,
            "messages": self.messages,
            "bad_lines": self.bad_lines,
            "secrets_redacted": self.secrets,
            "bytes_read": self.bytes_read,
            "seconds": round(self.seconds, 3),
        }

    @property
    def nothing_readable(self) -> bool:
        """True when files were named but none could be read at all."""
        return bool(self.results) and all(r.status in ("failed", "unrecognised", "refused") for r in self.results)


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
    agent_id: str | None = None
    agent_type: str | None = None
    agent_description: str | None = None
    note: str | None = None  # why a file of the same content is read again (`reread`)


class _Seen(NamedTuple):
    """What the ledger (`files`) recorded of a file."""

    size: int
    mtime: float
    content_hash: str | None
    status: str
    stored_size: int | None  # the size of the content whose messages are stored
    format: str | None
    reader_version: int | None  # the version of the reader that read it (NULL: nothing read)


def _ledger(con: duckdb.DuckDBPyConnection) -> dict[str, _Seen]:
    # The reader versions come in this one read of the ledger: a re-ingest with nothing new asks nothing per file.
    rows = con.execute(
        "SELECT path, size, mtime, content_hash, status, stored_size, format, reader_version FROM files"
    ).fetchall()
    return {row[0]: _Seen(*row[1:]) for row in rows}


def _outdated(seen: _Seen | None) -> tuple[int | None, int] | None:
    """(the version that read it, the current one) when the messages stored from the file were read by another
    version of its format's reader than today's, else None. Only a file with stored messages (`ok`, `shrunk`) has a
    reading to renew."""
    if seen is None or seen.status not in ("ok", "shrunk"):
        return None
    current = reader_version(seen.format)
    if current is None or seen.reader_version == current:
        return None
    return seen.reader_version, current


def _same_stat(seen: _Seen | None, st: os.stat_result) -> bool:
    """The ledger saw the file at this size and mtime and read it (a failed read counts as never seen)."""
    return seen is not None and seen.status != "failed" and (seen.size, seen.mtime) == (st.st_size, st.st_mtime)


def needs_ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[Path]) -> int:
    """How many files under `paths` are new, grown or changed since the ledger saw them (by size and mtime), or were
    read by another version of their reader than today's.

    A cheap check, a `stat` per file and no reading, so an idle run can stop before any orchestration.
    """
    files, missing = discover(paths)
    known = _ledger(con)
    changed = len(missing)
    for path in files:
        if not _utf8(str(path)):
            continue  # can never be ingested (reported by every ingest), so it is no work either
        previous = known.get(str(path))
        try:
            st = path.stat()
        except OSError:
            changed += 1
            continue
        if not _same_stat(previous, st) or _outdated(previous):
            changed += 1
    return changed


def _agent_meta(path: Path) -> tuple[str | None, str | None]:
    """(agent type, description) from the `agent-<id>.meta.json` beside a subagent file, if there is one."""
    meta = path.with_name(path.stem + META_SUFFIX)
    try:
        data = json.loads(meta.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    kind, description = data.get("agentType"), data.get("description")
    return (kind if isinstance(kind, str) else None, description if isinstance(description, str) else None)


def _digest(path: Path) -> tuple[str, bytes]:
    """The file's content hash (XXH3, 128 bits) and its first bytes.

    Every byte of every new or changed file is hashed, so the hash runs at the speed of reading (SHA-256 took 5x
    as long). The hash only tells a touched file (same content, new mtime) from a changed one: whoever could make
    a collision could as well write the file. A ledger written with another hash differs, so a touched file is
    read once more, as changed."""
    import xxhash  # only once a file is new or changed: a re-ingest with nothing new hashes nothing

    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
        hasher = xxhash.xxh3_128(head)
        while chunk := fh.read(8 * 1024 * 1024):
            hasher.update(chunk)
    return hasher.hexdigest(), head


def _identity(path: Path, fmt: Format | Literal["auto"]) -> Detected:
    """What the records say the file is; a forced `fmt` wins over detection, the records' session id stays."""
    found = detect(path)
    if fmt == "auto" or found.format == fmt:
        return found
    fallback = f"{path.parent.name}/{path.stem}" if fmt == "messages" else path.stem
    return Detected(fmt, found.session_id if found.format is not None else fallback)


class _Noted(NamedTuple):
    """A file the ledger records without reading its messages (unreadable, empty, unrecognised, failed)."""

    result: FileResult
    size: int
    mtime: float
    digest: str | None


def _record_files(con: duckdb.DuckDBPyConnection, noted: Sequence[_Noted]) -> None:
    rows = [
        {
            "path": n.result.path,
            "size": n.size,
            "mtime": n.mtime,
            "digest": n.digest,
            "format": n.result.format,
            "session_id": n.result.session_id,
            "status": n.result.status,
            "bad_lines": n.result.bad_lines,
            "error": n.result.error,
        }
        for n in noted
    ]
    con.execute("DELETE FROM files WHERE path IN (SELECT unnest(?))", [[n.result.path for n in noted]])
    con.execute(
        "INSERT INTO files (path, size, mtime, content_hash, format, session_id, status, bad_lines, error)"
        " SELECT r.path, r.size, r.mtime, r.digest, r.format, r.session_id, r.status, r.bad_lines, r.error"
        " FROM (SELECT unnest(?) AS r)",
        [rows],
    )


# A session's rows exist only when it has a main (non-subagent) file; parts copied into several files (a renamed
# copy, a session resumed into a second file) count once, by `SAME_PART` (a part without a key or record id is its
# own). Its file facts come from its main files first, then by path, so two copies of one session always give the
# same row. Only parts with a key go through the de-duplication (keyed on `source_path || ':' || seq` for every part,
# the statement took 0.24 s at 500 MB, then 0.17 s), the first of each by an aggregate (a window sorting them took a
# third more).
_RECOMPUTE_SESSIONS = f"""
DELETE FROM sessions WHERE session_id IN (SELECT DISTINCT session_id FROM _batch_files);
INSERT INTO sessions BY NAME
WITH affected AS (SELECT DISTINCT session_id FROM _batch_files),
f AS (
    SELECT session_id,
           arg_min(path, (NOT is_main, path)) AS source_path,
           arg_min(format, (NOT is_main, path)) AS format,
           arg_min(cwd, (NOT is_main, path)) FILTER (WHERE cwd IS NOT NULL) AS cwd,
           arg_min(git_branch, (NOT is_main, path)) FILTER (WHERE git_branch IS NOT NULL) AS git_branch,
           arg_min(agent_version, (NOT is_main, path)) FILTER (WHERE agent_version IS NOT NULL) AS agent_version,
           arg_min(title, (NOT is_main, path)) FILTER (WHERE title IS NOT NULL) AS title,
           sum(noise_records) AS noise, sum(bad_lines) AS bad, count(*) AS n_files
    FROM files WHERE status IN ('ok', 'shrunk') AND session_id IN (SELECT session_id FROM affected)
    GROUP BY session_id
    HAVING bool_or(is_main)
),
unique_parts AS (
    SELECT * FROM messages WHERE session_id IN (SELECT session_id FROM affected)
        AND part_key IS NULL AND record_id IS NULL
    UNION ALL
    SELECT * FROM messages WHERE session_id IN (SELECT session_id FROM affected)
        AND (part_key IS NOT NULL OR record_id IS NOT NULL) AND rowid IN (
            SELECT arg_min(rowid, (source_path, seq, rowid)) FROM messages
            WHERE session_id IN (SELECT session_id FROM affected) AND (part_key IS NOT NULL OR record_id IS NOT NULL)
            GROUP BY session_id, {SAME_PART}
        )
),
k AS (  -- each message once, then summed a session: two DISTINCT aggregates over every part took a third more
    SELECT session_id, message_key, min(ts) AS started_at, max(ts) AS ended_at,
           bool_or(role IN ('user', 'assistant') AND NOT is_meta) AS said, bool_or(is_prompt) AS prompted,
           count(*) FILTER (WHERE kind = 'tool_use' AND NOT is_sidechain) AS n_tool_calls,
           count(*) FILTER (WHERE kind = 'tool_result' AND is_error AND NOT is_sidechain) AS n_tool_errors,
           count(*) FILTER (WHERE kind = 'tool_use' AND is_sidechain) AS n_subagent_tool_calls,
           count(*) FILTER (WHERE kind = 'tool_result' AND is_error AND is_sidechain) AS n_subagent_tool_errors
    FROM unique_parts GROUP BY session_id, message_key
),
m AS (
    SELECT session_id, min(started_at) AS started_at, max(ended_at) AS ended_at,
           count(*) FILTER (WHERE message_key IS NOT NULL AND said) AS n_messages,
           count(*) FILTER (WHERE message_key IS NOT NULL AND prompted) AS n_user_prompts,
           sum(n_tool_calls) AS n_tool_calls, sum(n_tool_errors) AS n_tool_errors,
           sum(n_subagent_tool_calls) AS n_subagent_tool_calls, sum(n_subagent_tool_errors) AS n_subagent_tool_errors
    FROM k GROUP BY session_id
),
a AS (
    SELECT session_id, count(DISTINCT agent_id) AS n_subagents FROM unique_parts WHERE is_sidechain GROUP BY session_id
)
SELECT f.session_id, f.format, f.source_path,
       {project_sql("f.cwd")} AS project,
       f.cwd, f.git_branch, f.agent_version, f.title, m.started_at, m.ended_at,
       coalesce(m.n_messages, 0) AS n_messages, coalesce(m.n_user_prompts, 0) AS n_user_prompts,
       coalesce(m.n_tool_calls, 0) AS n_tool_calls, coalesce(m.n_tool_errors, 0) AS n_tool_errors,
       coalesce(m.n_subagent_tool_calls, 0) AS n_subagent_tool_calls,
       coalesce(m.n_subagent_tool_errors, 0) AS n_subagent_tool_errors,
       coalesce(a.n_subagents, 0) AS n_subagents, f.n_files,
       f.noise AS n_noise_records, f.bad AS n_bad_lines, now() AS ingested_at
FROM f LEFT JOIN m USING (session_id) LEFT JOIN a USING (session_id);
"""


# A normalised part that does not fit the `SessionMessage` contract the steps read (a content block that is
# not an object, a block without a type, a flag left NULL) is never stored half-valid: it is dropped here
# and its record counted as a bad line of its file, so one hostile line cannot stop every later run.
_INVALID_PART = """
    role IS NULL OR role NOT IN ('user', 'assistant', 'tool')
    OR kind IS NULL OR kind NOT IN ('text', 'thinking', 'tool_use', 'tool_result', 'summary', 'image')
    OR seq IS NULL OR part IS NULL OR session_id IS NULL
    OR is_error IS NULL OR is_meta IS NULL OR is_prompt IS NULL OR is_sidechain IS NULL
"""
_FIND_INVALID_PARTS = f"""
CREATE OR REPLACE TEMP TABLE _rejected AS
    SELECT source_path AS path, count(DISTINCT seq) AS n FROM _parts WHERE {_INVALID_PART} GROUP BY 1
"""
# Only when some were found: a DELETE that finds nothing still scans every part.
_REJECT_INVALID_PARTS = f"""
DELETE FROM _parts WHERE {_INVALID_PART};
UPDATE _file_stats SET bad_lines = _file_stats.bad_lines + r.n FROM _rejected r WHERE _file_stats.path = r.path;
"""


# A file that replays its own records (Claude Code writes a resumed session's earlier records again, under new uuids)
# stores each part once: the first of the parts that are one (`part_key`), in the file's order. Before redaction, so a
# secret in a replayed part is counted once. Parts of other files are left alone: a file's parts are replaced as a
# whole when it grows, so copies in two files are both stored and read once (`SAME_PART`).
# The first is kept by an aggregate, not a window: sorting every keyed part took twice the time.
_DROP_REPLAYED_PARTS = """
DELETE FROM _parts WHERE part_key IS NOT NULL AND rowid NOT IN (
    SELECT arg_min(rowid, (seq, part, rowid)) FROM _parts WHERE part_key IS NOT NULL GROUP BY source_path, part_key
)
"""


# The batch's parts, each redacted one (`_redacted`, by rowid) with its redacted text and tool input.
_STORE_PARTS = """
INSERT INTO messages BY NAME
SELECT p.* REPLACE (CASE WHEN r.id IS NULL THEN p.text ELSE r.text END AS text,
                    CASE WHEN r.id IS NULL THEN p.tool_input ELSE r.tool_input END AS tool_input)
FROM _parts p LEFT JOIN _redacted r ON r.id = p.rowid
"""


def _normalise(con: duckdb.DuckDBPyConnection, batch: list[_Work]) -> None:
    """Normalise `batch` into the connection's temp tables; no permanent table is touched."""
    reset_batch(con, [(str(w.path), w.session_id, w.fmt, w.is_main) for w in batch])
    by_format: dict[str, list[_Work]] = {}
    for w in batch:
        by_format.setdefault(w.fmt, []).append(w)
    for fmt, items in by_format.items():
        paths = [str(w.path) for w in items]
        longest_line = object_size_bound(w.size for w in items)
        if fmt == "claude-code":
            load_claude_code(con, paths, longest_line)
        elif fmt == "codex":
            load_codex(con, paths, longest_line)
        elif fmt == "memory":
            load_memory(con, [(str(w.path), w.session_id) for w in items])
        else:
            load_messages(con, [(str(w.path), w.session_id) for w in items])
    con.execute(_FIND_INVALID_PARTS)
    rejected = con.execute("SELECT count(*) FROM _rejected").fetchone()
    if rejected and rejected[0]:
        con.execute(_REJECT_INVALID_PARTS)
    con.execute("DROP TABLE _rejected")
    con.execute(_DROP_REPLAYED_PARTS)


def _store(con: duckdb.DuckDBPyConnection, batch: list[_Work], *, redact_secrets: bool) -> tuple[list[FileResult], int]:
    """Normalise `batch`, redact it, commit it."""
    _normalise(con, batch)
    from core.store.batch_redaction import redact_batch  # the redactor's rules, only once there is a batch

    secrets = redact_batch(con) if redact_secrets else {}
    return _commit_batch(con, batch, secrets)


def _commit_batch(
    con: duckdb.DuckDBPyConnection, batch: list[_Work], secrets: dict[str, int]
) -> tuple[list[FileResult], int]:
    """Replace the batch's messages, ledger rows and sessions in one transaction."""
    ledger = [
        {
            "path": str(w.path),
            "size": w.size,
            "mtime": w.mtime,
            "digest": w.digest,
            "is_main": w.is_main,
            "agent_id": w.agent_id,
            "agent_type": w.agent_type,
            "agent_description": w.agent_description,
            "secrets": secrets.get(str(w.path), 0),
            "reader_version": reader_version(w.fmt),
        }
        for w in batch
    ]
    with transaction(con):
        con.execute("DELETE FROM messages WHERE source_path IN (SELECT path FROM _batch_files)")
        con.execute(_STORE_PARTS)
        con.execute("DELETE FROM file_noise WHERE path IN (SELECT path FROM _batch_files)")
        con.execute("INSERT INTO file_noise SELECT * FROM _file_noise")
        # The actions read from the messages just replaced are read again (`refresh_actions`): a file read again with
        # the same content (`reread`) has the content hash its actions were recorded with.
        con.execute("DELETE FROM action_files WHERE path IN (SELECT path FROM _batch_files)")
        # A file that moved to another session (its records now name it) leaves its old session.
        previous = [r[0] for r in con.execute(_PREVIOUS_SESSIONS).fetchall()]
        con.execute("DELETE FROM files WHERE path IN (SELECT path FROM _batch_files)")
        con.execute(
            "INSERT INTO files (path, size, mtime, content_hash, format, session_id, status, n_lines, bad_lines,"
            " noise_records, is_main, cwd, git_branch, agent_version, title, agent_id, agent_type, agent_description,"
            " n_secrets, stored_size, reader_version)"
            " SELECT l.path, l.size, l.mtime, l.digest, b.format, b.session_id, 'ok', coalesce(s.n_lines, 0),"
            " coalesce(s.bad_lines, 0), coalesce(s.noise_records, 0), l.is_main, m.cwd, m.git_branch,"
            " m.agent_version, m.title, l.agent_id, l.agent_type, l.agent_description, l.secrets, l.size,"
            " l.reader_version"
            " FROM (SELECT unnest(?) AS l) JOIN _batch_files b ON b.path = l.path"
            " LEFT JOIN _file_stats s ON s.path = l.path LEFT JOIN _file_meta m ON m.path = l.path",
            [ledger],
        )
        if previous:
            con.execute("INSERT INTO _batch_files SELECT NULL, unnest(?), NULL, NULL", [previous])
        con.execute(_RECOMPUTE_SESSIONS)
        con.execute(_FORGET_SESSIONS_WITHOUT_FILES)
        affected = con.execute("SELECT DISTINCT session_id FROM _batch_files WHERE session_id IS NOT NULL").fetchall()
        refresh_content(con, [str(r[0]) for r in affected])
    bad = dict(con.execute("SELECT path, bad_lines FROM _file_stats").fetchall())
    orphans = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT session_id FROM _batch_files WHERE session_id IS NOT NULL"
            " AND session_id NOT IN (SELECT session_id FROM sessions)"
        ).fetchall()
    }
    row = con.execute("SELECT count(*) FROM _parts").fetchone()
    results = [
        FileResult(
            str(w.path),
            w.status,
            w.size,
            w.fmt,
            w.session_id,
            int(bad.get(str(w.path), 0)),
            secrets.get(str(w.path), 0),
            note="; ".join(
                n
                for n in (
                    w.note,
                    f"subagent file of session `{w.session_id}`, whose main file has not been ingested: kept, and"
                    " joined to its session when the main file arrives"
                    if w.session_id in orphans
                    else None,
                )
                if n
            )
            or None,
        )
        for w in batch
    ]
    return results, int(row[0]) if row else 0


_PREVIOUS_SESSIONS = """
SELECT DISTINCT f.session_id FROM files f JOIN _batch_files b USING (path)
WHERE f.session_id IS NOT NULL AND f.session_id <> b.session_id
"""
# Sessions whose every file went elsewhere (or that predate identity from records) are gone.
_FORGET_SESSIONS_WITHOUT_FILES = """
DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM _batch_files)
AND session_id NOT IN (SELECT session_id FROM files WHERE status IN ('ok', 'shrunk') AND session_id IS NOT NULL)
"""


def _key_sessions(con: duckdb.DuckDBPyConnection, work: list[_Work]) -> None:
    """Each file's session by its contributor and the id its records carry: the contributor is the team folder the
    file was fetched from (`remote_objects`), never what the file says, and a pair new to the store claims the id
    only when no one else holds it (`core.store.session_keys`). This machine's files come first, so they keep
    their ids."""
    if not work:
        return
    rows = con.execute(
        "SELECT local_path, contributor FROM remote_objects WHERE local_path IN (SELECT unnest(?))",
        [[str(w.path) for w in work]],
    ).fetchall()
    owners = {str(p): str(c) for p, c in rows if c}
    pairs = [(owners.get(str(w.path), LOCAL), w.session_id) for w in work]
    keys = assign_keys(con, pairs)
    for w, pair in zip(work, pairs, strict=True):
        w.session_id = keys[pair]


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


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# What the system said, through DuckDB, when a write found no room: the disk or the user's quota full, or the file at
# the largest size this process may write.
_NO_ROOM = ("No space left", "Disk quota exceeded", "File too large")
_KEPT = "nothing of the last batch was stored and what was ingested before is intact"


def _database_failure(exc: duckdb.Error) -> str | None:
    """What to tell the user when `exc` is the database failing rather than the batch's files (every other batch
    would fail the same way), or None when it is the files'.

    Classified by what DuckDB said: no room to write is the disk; any other error writing, the file or its disk (an
    I/O error reading a transcript is that file's); a failed commit or an invalidated database for any other
    reason, an error inside DuckDB, named as DuckDB named it (a full disk was said for all three before)."""
    text, said = str(exc), _duckdb_said(exc)
    if any(m in text for m in _NO_ROOM):
        return (
            f"The database could not be written ({said}): out of space; {_KEPT}. Free disk space and run ingest again."
        )
    if "Could not write" in text or ("Failed to commit" in text and "IO Error" in text):
        return (
            f"The database could not be written ({said}); {_KEPT}. Check that the database's folder is writable and"
            " its disk healthy, then run ingest again."
        )
    if isinstance(exc, duckdb.FatalException) or "Failed to commit" in text:
        return (
            f"DuckDB failed while storing the last batch ({said}): an error inside DuckDB, not a full disk. What"
            " earlier batches stored is intact; run ingest again: it reads only the files not stored yet."
        )
    return None


def _duckdb_said(exc: duckdb.Error) -> str:
    """DuckDB's own error: for a database it invalidated, the error that did it (its first line is only that)."""
    text = str(exc)
    original = text.partition('Original error: "')[2]
    return original.rstrip().removesuffix('"') if original else _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@contextmanager
def _memory_capped(con: duckdb.DuckDBPyConnection, limit: int) -> Iterator[int | None]:
    """DuckDB's memory limit lowered to `limit` bytes (never raised) while the ingest runs, restored after; yields
    the limit set, or None when the one in force was already as low.

    DuckDB shows a limit truncated to one decimal ("1.8 GiB" for 2 GB), and sets that string one step lower, so the
    old limit is set back half a step up ("1.85 GiB"), which reads back as it was."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    shown = str(row[0]) if row else ""
    number, _, unit = shown.partition(" ")
    try:
        before = float(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
    except (KeyError, ValueError):
        before = None
    if before is not None and before <= limit:
        yield None
        return
    con.execute(f"SET memory_limit = '{limit // (1 << 20)}MiB'")
    try:
        yield limit
    finally:
        with suppress(duckdb.FatalException):  # an invalidated database keeps no setting; what invalidated it is said
            con.execute(f"SET memory_limit = '{float(number) + 0.05:.2f} {unit}'" if before else "RESET memory_limit")


def _release_cached_blocks(con: duckdb.DuckDBPyConnection, limit: int, most: int) -> None:
    """Drop the blocks DuckDB's buffer pool keeps after a batch (those of the messages it stored: ~19 MB a batch of
    256 MB) once they take more than `most` bytes, by lowering its limit for a moment and setting `limit` (what
    `_memory_capped` set) back.

    Left there, they fill the pool to its limit within a GB, and from then on every allocation of a batch evicts
    one and has DuckDB return all freed memory to the system, to be faulted in again. Dropped here, between
    batches, with no temp table left to spill, the pool does that once every few batches. A pool that cannot go that
    low (pinned blocks) keeps what it cannot drop."""
    row = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory() WHERE tag = 'BASE_TABLE'").fetchone()
    if row is not None and row[0] is not None and int(row[0]) <= most:
        return  # not worth what the next batch would pay to allocate again
    try:
        con.execute(f"SET memory_limit = '{RELEASE_LIMIT // (1 << 20)}MiB'")
    except duckdb.Error:
        pass  # it evicted what it could; the limit stays as it was
    con.execute(f"SET memory_limit = '{limit // (1 << 20)}MiB'")


@contextmanager
def _one_thread_fewer(con: duckdb.DuckDBPyConnection, batched: bool) -> Iterator[None]:
    """DuckDB's threads one fewer while an ingest of several batches runs, restored after.

    A statement runs on the thread that calls it as well as on DuckDB's pool (`threads` - 1 workers). On 2 cores,
    1 GB ingested a batch at a time took 10-20 % less CPU with one thread than with two: a worker left idle while
    this thread redacts a batch returns its memory to the system, and the next batch faults it in again.
    """
    if not batched:
        yield
        return
    row = con.execute("SELECT current_setting('threads')").fetchone()
    threads = int(row[0]) if row else 1
    con.execute(f"SET threads = {max(1, threads - 1)}")
    try:
        yield
    finally:
        with suppress(duckdb.FatalException):  # an invalidated database keeps no setting; what invalidated it is said
            con.execute(f"SET threads = {threads}")


def ingest(
    con: duckdb.DuckDBPyConnection,
    paths: Sequence[Path],
    *,
    discovered: bool = False,
    fmt: Format | Literal["auto"] = "auto",
    progress: Callable[[int, int], None] | None = None,
    batch_bytes: int = BATCH_BYTES,
    redact_secrets: bool = True,
) -> IngestSummary:
    """Ingest transcript files and folders.

    Args:
        con: an open read-write connection.
        paths: files or folders (searched recursively for *.jsonl and *.json).
        discovered: `paths` are already what `discover` makes of them (transcript files, resolved, each once), as
            a caller that checked them first has them: they are not walked or resolved a second time.
        fmt: a format, or "auto" to detect each file's.
        progress: called with (bytes done, bytes total) as batches complete.
        batch_bytes: how many bytes of files DuckDB normalises at once; DuckDB's memory is capped at
            `MEMORY_BATCHES` of them while the ingest runs, so peak memory does not grow with the archive.
        redact_secrets: replace secrets by markers before storing (off only for `keep_raw_text`).

    Returns:
        The summary; files that could not be read are in it as `failed`, never raised.
    """
    started = time.perf_counter()
    files, missing = (list(paths), []) if discovered else discover(paths)
    summary = IngestSummary(results=[FileResult(str(m), "failed", error="no such file or folder") for m in missing])
    backfill_keys(con)  # once, for a store written before sessions were keyed
    known = _ledger(con)
    work: list[_Work] = []
    noted: list[_Noted] = []
    touched: list[tuple[float, str]] = []  # (mtime, path): same content, new mtime
    for path in files:
        key = str(path)
        if not _utf8(key):
            # DuckDB names files in UTF-8: a name with other bytes cannot be read or stored as it is. It is
            # reported by its bytes (escaped) and the rest of the ingest goes on.
            shown = os.fsencode(path).decode("utf-8", "backslashreplace")
            summary.results.append(
                FileResult(shown, "failed", error="the file name is not valid UTF-8; rename the file to ingest it")
            )
            continue
        try:
            st = path.stat()
            previous = known.get(key)
            outdated = _outdated(previous)
            if _same_stat(previous, st) and not outdated:
                summary.results.append(FileResult(key, "unchanged", st.st_size))
                continue
            digest, head = _digest(path)
        except OSError as exc:
            result = FileResult(key, "failed", error=f"unreadable: {exc.strerror or exc}")
            summary.results.append(result)
            noted.append(_Noted(result, 0, 0.0, None))
            continue
        same_content = previous is not None and previous.content_hash == digest and previous.status != "failed"
        if same_content and not outdated:
            touched.append((st.st_mtime, key))
            summary.results.append(FileResult(key, "unchanged", st.st_size))
            continue
        stored = previous.stored_size if previous and previous.status in ("ok", "shrunk") else None
        shrank = stored is not None and st.st_size < stored
        if shrank and not outdated:
            # Transcripts only grow: a shorter file was truncated or replaced. What was read from it before
            # is kept (reading it again would delete it); the ledger notes the new size so it is said once.
            result = FileResult(
                key,
                "shrunk",
                st.st_size,
                error=f"the file shrank from {stored:,} to {st.st_size:,} bytes; the messages stored from it are"
                " kept, and it is read again once it grows past its old size",
            )
            summary.results.append(result)
            with transaction(con):
                con.execute(
                    "UPDATE files SET size = ?, mtime = ?, content_hash = ?, status = 'shrunk', error = ?"
                    " WHERE path = ?",
                    [st.st_size, st.st_mtime, digest, result.error, key],
                )
            continue
        status: Status = "changed" if previous and previous.status in ("ok", "shrunk") else "new"
        note = None
        if outdated and previous and (same_content or shrank):
            # Read only because its reader changed: replaced as a changed file's messages are (`_commit_batch`). A
            # file that shrank is read as it is now: what was stored from its longer content is a reading the current
            # reader would not make and cannot make again, and keeping it would keep what the change was made to drop.
            status = "reread"
            was, now = outdated
            note = (
                f"read again: the {previous.format} reader changed since this file was read"
                f" (version {was if was is not None else 'unknown'}, now {now})"
            )
            if shrank:
                note += (
                    f"; the file had shrunk from {stored:,} to {st.st_size:,} bytes, so what was stored from its"
                    " longer content is replaced by what it holds now"
                )
        if st.st_size == 0 or not head.strip():
            result = FileResult(key, "empty", 0, error="empty file")
            summary.results.append(result)
            noted.append(_Noted(result, st.st_size, st.st_mtime, digest))
            continue
        try:
            found = _identity(path, fmt)
        except OSError as exc:
            found = Detected(None, reason=f"unreadable: {exc.strerror or exc}")
        if found.format is None or found.session_id is None:
            result = FileResult(key, "unrecognised", st.st_size, error=found.reason or "not a known transcript format")
            summary.results.append(result)
            noted.append(_Noted(result, st.st_size, st.st_mtime, digest))
            continue
        agent_type, agent_description = _agent_meta(path) if not found.is_main else (None, None)
        work.append(
            _Work(
                path,
                st.st_size,
                st.st_mtime,
                digest,
                found.format,
                found.session_id,
                found.is_main,
                status,
                found.agent_id,
                agent_type,
                agent_description,
                note,
            )
        )

    _key_sessions(con, work)
    if noted or touched:  # one transaction for every file that needs a ledger row and no reading
        with transaction(con):
            if noted:
                # An empty file keeps no messages from what it held; an unreadable or unrecognised one keeps them.
                emptied = [n.result.path for n in noted if n.result.status == "empty"]
                if emptied:
                    con.execute("DELETE FROM messages WHERE source_path IN (SELECT unnest(?))", [emptied])
                _record_files(con, noted)
            if touched:
                con.executemany("UPDATE files SET mtime = ? WHERE path = ?", touched)
    total = sum(w.size for w in work)
    done = 0
    sessions: set[str] = set()
    batches = list(_batches(work, batch_bytes))
    # One batch at a time: two in flight (the next normalised on a second connection while this one was redacted and
    # committed) needed a memory cap that each batch's allocations kept reaching, which cost more CPU than the overlap
    # saved (at 1 GB on 2 cores, 11.4-12.6 s of CPU against 9.3-10.0 s, and more memory).
    capped, lifted = ExitStack(), False
    try:
        cap = None
        if batches:  # over the reading of actions too, which scans what the batches stored
            widest = object_size_bound(w.size for w in work)
            cap = capped.enter_context(_memory_capped(con, max(MEMORY_BATCHES * batch_bytes, LINE_BUFFERS * widest)))
        with _one_thread_fewer(con, len(batches) > 1):
            for i, batch in enumerate(batches):
                pending: list[list[_Work]] = [batch]
                while pending:
                    current = pending.pop()
                    try:
                        batch_results, n_parts = _store(con, current, redact_secrets=redact_secrets)
                    except duckdb.Error as exc:
                        if "Out of Memory" in str(exc) and not lifted:
                            lifted = True  # the cap was too low for this batch: lifted, for the rest too
                            capped.close()
                            pending.append(current)
                            continue
                        failure = _database_failure(exc)
                        if failure:  # the database, not the files: every other batch would fail the same way
                            raise StoreError(failure) from exc
                        if len(current) > 1:
                            pending.extend([w] for w in current)  # isolate the file that fails
                            continue
                        w = current[0]
                        result = FileResult(str(w.path), "failed", w.size, w.fmt, w.session_id, error=_first_line(exc))
                        summary.results.append(result)
                        with transaction(con):
                            _record_files(con, [_Noted(result, w.size, w.mtime, w.digest)])
                        continue
                    finally:
                        with suppress(duckdb.FatalException):  # an invalidated database: its own error is said
                            drop_batch(con)
                    summary.results.extend(batch_results)
                    summary.messages += n_parts
                    summary.bytes_read += sum(w.size for w in current)
                    sessions.update(w.session_id for w in current)
                if cap is not None and not lifted and i + 1 < len(batches):
                    _release_cached_blocks(con, cap, batch_bytes // CACHED_SHARE)
                done += sum(w.size for w in batch)
                if progress:
                    progress(done, total)
            # What the agent did, for triggers: the files just stored (and any read before this). On the thread the
            # batches ran on: with a worker too it took 10-25 % more CPU (0.42-0.50 s against 0.39 at 1 GB).
            refresh_actions(con)
    except duckdb.FatalException as exc:  # DuckDB invalidated the database outside a batch's own statements
        raise StoreError(_database_failure(exc) or _first_line(exc)) from exc
    finally:
        capped.close()
    summary.sessions = len(sessions)
    summary.seconds = time.perf_counter() - started
    return summary
