"""Files the product writes: one atomic writer for every export, CLAUDE.md, playbook.json, report file and backup.

A reader (an agent loading CLAUDE.md, a browser opening the report) sees either the old file or the new
one, never half of it: the bytes go to a temporary file in the same folder, are flushed to disk, and the
temporary file is renamed over the target. What is replaced keeps what the user gave it: its mode (and owner,
where this user may set it), a symbolic link stays a link (the file it points to is what is replaced, as
in a dotfiles setup), and a file with several hard links (`AGENTS.md` a link of `CLAUDE.md`) is overwritten in
place, so every name still shows the one file. A new file gets 0644 less the umask. A full disk leaves the old
file as it was and says, in one line, which path and how much space.

No write goes through a link someone else made: a link inside a git working copy must lead to a file of that
same working copy (`target_of`), and the files playbook keeps open or appends to (the run lock, the hook's
ledger) are opened without following any link at all (`open_own`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from core.errors import PlaybookFileError

__all__ = ["append_line", "copy_atomic", "open_own", "read_text", "target_of", "write_atomic"]

_NEW_FILE_MODE = 0o644  # the kernel takes the umask off
_CHUNK = 1024 * 1024
_OWN_FLAGS = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def target_of(path: Path) -> Path:
    """The file a write to `path` replaces: `path` itself, or the file the links on its way lead to.

    A link inside a git working copy must lead inside that working copy: its author is whoever committed it,
    not the user, so a cloned repository's `CLAUDE.md -> ../../.bashrc` is never written through. A working
    copy that is the home folder (or holds it) is no such boundary: links there are the user's own dotfiles,
    and so are links in any folder outside a working copy.

    Raises:
        PlaybookFileError: a link on the way leads out of its working copy, or links loop; nothing was written.
    """
    here = Path(os.path.abspath(path))
    at = Path(here.anchor)
    for name in here.parts[1:]:
        step = at / name
        if not step.is_symlink():
            at = step
            continue
        to = Path(os.path.realpath(step))
        if to.is_symlink():  # realpath stops at a loop and returns the link itself
            raise PlaybookFileError(f"Cannot write `{path}`: the links at `{step}` loop; fix or remove the link.")
        top = _work_tree(at)
        if top is not None and not to.is_relative_to(top):
            raise PlaybookFileError(
                f"Refusing to write through `{step}`: it links to `{to}`, outside its repository `{top}`; replace the"
                " link with a file, or name the file it links to instead. Nothing was written."
            )
        at = to
    return at


def _work_tree(folder: Path) -> Path | None:
    """The git working copy `folder` (a resolved path) is in, unless it is the home folder or holds it."""
    try:
        home = Path(os.path.realpath(Path.home()))
    except RuntimeError:  # no home folder known: every working copy is a boundary
        home = None
    for top in (folder, *folder.parents):
        if os.path.lexists(top / ".git"):
            return None if home is not None and home.is_relative_to(top) else top
    return None


def _space(folder: Path, needed: int) -> str:
    try:
        import shutil  # here, on the disk-full path only: its import (bz2, lzma) is a hook's cost otherwise

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
    try:
        target = target_of(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        old = target.stat() if target.exists() else None
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise PlaybookFileError(f"Cannot write `{path}`: it is not a regular file (a FIFO, a device, a folder).")
        if old is not None and not old.st_mode & stat.S_IWUSR:
            # a rename replaces a file whatever its mode (and root writes any): its owner made it read-only to keep it
            raise PlaybookFileError(
                f"Cannot write `{path}`: it is read-only (mode {stat.S_IMODE(old.st_mode):04o}); make it writable"
                " to let playbook update it. It was left as it was."
            )
        tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")  # secrets.token_hex, unimported
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
        if old is not None and old.st_nlink > 1:
            _overwrite(target, tmp)
            tmp.unlink()
        else:
            os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _failed(path, exc, needed) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _overwrite(target: Path, complete: Path) -> None:
    """Write the bytes of `complete` (flushed to disk) over `target` in place: the same inode, so each of its hard
    links shows the new content. A rename would give the name a new inode and split the links into two files.

    Not atomic for a reader during the copy (a rename is the only atomic swap, and it breaks the link): the space
    is reserved first, so a full disk fails before a byte of `target` changes, and until `target` is whole the
    complete new content is on disk in `complete`.
    """
    size = complete.stat().st_size
    with complete.open("rb") as src, target.open("r+b") as dst:
        try:
            os.posix_fallocate(dst.fileno(), 0, size)
        except OSError as exc:  # a file system without it (EOPNOTSUPP, EINVAL) is written as it is
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise
        while chunk := src.read(_CHUNK):
            dst.write(chunk)
        dst.truncate(size)
        dst.flush()
        os.fsync(dst.fileno())


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
        while chunk := reader.read(_CHUNK):
            fh.write(chunk)

    with reader:
        _replace(path, fill, size)


def open_own(path: Path, flags: int) -> int:
    """Open the regular file `path` (created 0644 less the umask when missing) for `flags`, never through a link:
    neither `path` nor its folder may be a symbolic link, and the file may have no other hard link. For the
    files playbook keeps open or appends to in place (the run lock, the hook's ledger), where a link planted
    there would have them truncate or grow someone else's file. Returns the file descriptor.

    Raises:
        PlaybookFileError: `path` or its folder is a link, `path` is not a regular file of its own, or it cannot
            be opened; nothing was written.
    """
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        at = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise _not_ours(folder, "folder") if folder.is_symlink() else _failed(path, exc, 0) from exc
    try:
        # O_NONBLOCK: a FIFO planted there fails (or opens) at once instead of hanging; a regular file ignores it.
        fd = os.open(path.name, flags | _OWN_FLAGS, _NEW_FILE_MODE, dir_fd=at)
    except OSError as exc:
        raise _not_ours(path, "file") if exc.errno == errno.ELOOP else _failed(path, exc, 0) from exc
    finally:
        os.close(at)
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_nlink != 1:
        os.close(fd)
        what = "is not a regular file" if not stat.S_ISREG(found.st_mode) else f"has {found.st_nlink} hard links"
        raise PlaybookFileError(
            f"`{path}` {what}, so playbook did not make it; remove it and run again. Nothing was written to it."
        )
    return fd


def _not_ours(path: Path, what: str) -> PlaybookFileError:
    try:
        to = f" (to `{os.readlink(path)}`)"
    except OSError:
        to = ""
    return PlaybookFileError(
        f"`{path}` is a symbolic link{to}, not a {what} playbook made; remove the link and run again."
        " Nothing was written through it."
    )


def append_line(path: Path, line: str) -> None:
    """Append `line` to `path` in one write with O_APPEND (writers that append together never interleave), never
    through a link (`open_own`).

    Raises:
        PlaybookFileError: `path` or its folder is a link, or the file cannot be written; nothing was written.
    """
    data = line.encode("utf-8")
    fd = open_own(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
    except OSError as exc:
        raise _failed(path, exc, len(data)) from exc
    finally:
        os.close(fd)


def _size(count: int) -> str:
    return f"{count / 2**20:g} MB" if count >= 2**20 else f"{count:,} bytes"


def read_text(path: Path, *, max_bytes: int | None = None) -> str:
    """The UTF-8 text of `path`, with line endings exactly as stored.

    Args:
        path: the file.
        max_bytes: the most a file of its kind can hold; a larger one is refused having read at most this many
            bytes and one more (a 3 GB file given by mistake is not read whole into memory first).

    Raises:
        PlaybookFileError: the file cannot be read, is larger than `max_bytes`, or is not UTF-8.
    """
    try:
        # O_NONBLOCK: a FIFO opens at once and is refused below instead of waiting for a writer forever (round 9)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PlaybookFileError(f"Cannot read `{path}`: it is not a regular file (a FIFO, a device).")
            if max_bytes is None:
                return fh.read().decode("utf-8")
            # The size the file says it has, then what is read: a file can grow, or not tell (`/proc`).
            data = b"" if info.st_size > max_bytes else fh.read(max_bytes + 1)
            if info.st_size > max_bytes or len(data) > max_bytes:
                raise PlaybookFileError(
                    f"`{path}` is larger than {_size(max_bytes)}, more than a file of its kind holds; check it is"
                    " the right file. It was left untouched."
                )
            return data.decode("utf-8")
    except OSError as exc:
        raise PlaybookFileError(f"Cannot read `{path}`: {exc.strerror or exc}; check its permissions.") from exc
    except UnicodeDecodeError as exc:
        raise PlaybookFileError(
            f"`{path}` is not UTF-8 text ({exc.reason} at byte {exc.start}); it was left untouched."
        ) from exc
