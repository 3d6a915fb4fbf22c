"""Files the product writes: one atomic writer for every export, CLAUDE.md, playbook.json, report file and backup.

A reader (an agent loading CLAUDE.md, a browser opening the report) sees either the old file or the new
one, never half of it: the bytes go to a temporary file in the same folder, are flushed to disk, and the
temporary file is renamed over the target. What is replaced keeps what the user gave it: its mode (and owner,
where this user may set it), and a symbolic link stays a link (the file it points to is what is replaced, as
in a dotfiles setup). A new file gets 0644 less the umask. A full disk leaves the old file as it was and says,
in one line, which path and how much space.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from core.errors import PlaybookFileError

__all__ = ["copy_atomic", "read_text", "write_atomic"]

_NEW_FILE_MODE = 0o644  # the kernel takes the umask off
_CHUNK = 1024 * 1024


def _target(path: Path) -> Path:
    """The file a write to `path` replaces: `path` itself, or the file its symbolic link (chain) points to."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _space(folder: Path, needed: int) -> str:
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return f"{needed:,} bytes needed"
    return f"{needed:,} bytes needed, {free:,} free"


def _failed(path: Path, exc: OSError, needed: int) -> PlaybookFileError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return PlaybookFileError(
            f"Disk full: cannot write `{path}` ({_space(path.parent, needed)}); free some space and run again."
            " The file was left as it was."
        )
    return PlaybookFileError(f"Cannot write `{path}`: {exc.strerror or exc}; check the folder and its permissions.")


def _replace(path: Path, fill: Callable[[BinaryIO], None], needed: int) -> None:
    """Write a new `path` through `fill` and rename it into place, keeping the mode, owner and link of what it
    replaces."""
    target = _target(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        old = target.stat() if target.exists() else None
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _NEW_FILE_MODE)
    except OSError as exc:
        raise _failed(path, exc, needed) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
            if old is not None:  # owner first: a chown clears the set-id bits the chmod then restores
                with contextlib.suppress(PermissionError):  # only root may give a file to another user
                    os.chown(fh.fileno(), old.st_uid, old.st_gid)
                os.chmod(fh.fileno(), stat.S_IMODE(old.st_mode))
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _failed(path, exc, needed) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` atomically (text is written as UTF-8, line endings untouched).

    Raises:
        PlaybookFileError: the folder or file cannot be written, or the disk is full; `path` is left as it was.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data

    def fill(fh: BinaryIO) -> None:
        fh.write(payload)

    _replace(path, fill, len(payload))


def copy_atomic(source: Path, path: Path) -> None:
    """Copy `source` to `path` the same way: a full disk never leaves half a copy behind.

    Raises:
        PlaybookFileError: `source` cannot be read, or `path` cannot be written (disk full: the space needed).
    """
    try:
        size = source.stat().st_size
        reader = source.open("rb")
    except OSError as exc:
        raise PlaybookFileError(f"Cannot read `{source}`: {exc.strerror or exc}.") from exc

    def fill(fh: BinaryIO) -> None:
        shutil.copyfileobj(reader, fh, _CHUNK)

    with reader:
        _replace(path, fill, size)


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
