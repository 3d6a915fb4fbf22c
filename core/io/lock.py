"""One run at a time per database: an advisory lock file beside it, naming the holder.

DuckDB's own lock lasts only while a connection is open; a pipeline run opens and closes connections
between its tasks, so the run holds this lock for its whole duration instead. The lock is re-entrant
within a process: the CLI takes it before Prefect starts (failing fast), and the flow it then runs
finds it already held instead of taking it a second time.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from core.errors import DatabaseBusyError
from core.io.files import open_own

__all__ = ["run_lock"]

_held: dict[Path, int] = {}  # lock files this process holds, with their nesting depth


@contextmanager
def run_lock(db: Path, what: str, *, wait: float = 0.0) -> Iterator[None]:
    """Hold `<db>.lock` for the duration.

    Raises:
        DatabaseBusyError: the lock is still taken after `wait` seconds (the message names the holder).
        PlaybookFileError: `<db>.lock` is a link or not a file of its own (`open_own`); nothing was written.
    """
    db.parent.mkdir(parents=True, exist_ok=True)
    path = db.resolve().with_name(db.name + ".lock")
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    # Never through a link: a `<db>.lock` planted as a link would have its target truncated below.
    fh = os.fdopen(open_own(path, os.O_RDWR), "r+")
    try:
        give_up = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    fh.seek(0)
                    holder = fh.read().strip() or "another process"
                    raise DatabaseBusyError(
                        f"Database `{db}` is in use by {holder}; wait for it to finish (`--wait SECONDS`) or pass"
                        " another `--db`."
                    ) from None
                time.sleep(0.1)
        fh.seek(0)
        fh.truncate()
        fh.write(f"process {os.getpid()} ({what} since {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC)")
        fh.flush()
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    finally:
        fh.close()
