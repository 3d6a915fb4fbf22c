"""Files the product writes: one atomic writer for every export, CLAUDE.md, playbook.json and report file.

A reader (an agent loading CLAUDE.md, a browser opening the report) sees either the old file or the new
one, never half of it: the bytes go to a temporary file in the same folder, are flushed to disk, and the
temporary file is renamed over the target.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from core.errors import PlaybookFileError

__all__ = ["read_text", "write_atomic"]


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` atomically (text is written as UTF-8, line endings untouched).

    Raises:
        PlaybookFileError: the folder or file cannot be written; `path` is left as it was.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise PlaybookFileError(f"Cannot write `{path}`: {exc.strerror or exc}; check the folder.") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise PlaybookFileError(f"Cannot write `{path}`: {exc.strerror or exc}.") from exc


def read_text(path: Path) -> str:
    """The UTF-8 text of `path`, with line endings exactly as stored.

    Raises:
        PlaybookFileError: the file cannot be read or is not UTF-8.
    """
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise PlaybookFileError(f"Cannot read `{path}`: {exc.strerror or exc}; check its permissions.") from exc
    except UnicodeDecodeError as exc:
        raise PlaybookFileError(
            f"`{path}` is not UTF-8 text ({exc.reason} at byte {exc.start}); it was left untouched."
        ) from exc
