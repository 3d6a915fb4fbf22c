"""The trust store of the settings files the user trusted, in the user's config folder (beside `config.toml`).

The folder is `$XDG_CONFIG_HOME/playbook` (an absolute `XDG_CONFIG_HOME`), else `~/.config/playbook`. The trust
store, `trusted.json` there, lists each trusted file by resolved path with the SHA-256 of the content the user
trusted (as `mise trust` and `direnv allow` do): a file that changed is untrusted again. It also lists the
databases at a default place that are the user's own (`stores`). The store is only ever
read from and written to a regular file this user owns: a link planted in its place, or a file someone else
owns, is refused in one line, never followed. A rewrite goes to a temporary file beside it, synced and renamed
over it, keeping the store's mode (0600 when new); writers take turns on a lock of the folder.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, ValidationError

from core.errors import ConfigError
from core.trust import StoreRecord, TrustRecord

__all__ = [
    "known_stores",
    "read_trust_store",
    "remember_store",
    "trust_store_path",
    "update_trust_store",
    "user_config_dir",
    "user_config_file",
]

_STORE = "trusted.json"
_VERSION = 1
_NEW_MODE = 0o600


class _Store(BaseModel):
    version: int = _VERSION
    trusted: list[TrustRecord] = []
    # Databases at the default place (`data/playbook.duckdb` of a folder) that playbook made there for this user or
    # that the user named: one a cloned repository shipped is in no one's list (`flows.config.load_settings`).
    stores: list[StoreRecord] = []


def user_config_dir() -> Path:
    """`$XDG_CONFIG_HOME/playbook` when that variable holds an absolute path (the XDG rule), else
    `~/.config/playbook`."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".config") / "playbook"


def user_config_file() -> Path:
    """The user's own settings file, `config.toml` in the user's config folder: every key of it applies."""
    return user_config_dir() / "config.toml"


def trust_store_path() -> Path:
    """The trust store, `trusted.json` in the user's config folder."""
    return user_config_dir() / _STORE


def _refuse(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"Trust store `{path}` {why}, so playbook neither reads nor writes it; remove it, then trust your files"
        " again with `playbook trust FILE`."
    )


def _open_own(path: Path, flags: int) -> int | None:
    """A descriptor of the store opened without following a link, or None when it does not exist.

    Raises:
        ConfigError: it is a link, not a regular file, or owned by another user.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():
            raise _refuse(path, "is a symbolic link") from None
        raise ConfigError(f"Cannot read trust store `{path}` ({exc.strerror}); fix its permissions.") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        raise _refuse(path, "is not a regular file of yours")
    return fd


def _read(path: Path) -> tuple[_Store, int | None]:
    """(the store, its mode), an empty store with no mode when there is none."""
    fd = _open_own(path, os.O_RDONLY)
    if fd is None:
        return _Store(), None
    with os.fdopen(fd, "rb") as fh:
        mode = stat.S_IMODE(os.fstat(fh.fileno()).st_mode)
        data = fh.read()
    try:
        return _Store.model_validate(json.loads(data)), mode
    except (ValueError, ValidationError):
        raise ConfigError(
            f"Trust store `{path}` is not a list of trusted files; fix it, or delete it and trust your files again"
            " with `playbook trust FILE`."
        ) from None


def read_trust_store() -> list[TrustRecord]:
    """The trusted files (none when there is no store yet).

    Raises:
        ConfigError: the store is a link, someone else's, or not valid.
    """
    return _read(trust_store_path())[0].trusted


@contextlib.contextmanager
def _folder_locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def known_stores() -> list[StoreRecord]:
    """The databases at a default place that are the user's own (none when there is no store yet).

    Raises:
        ConfigError: the store is a link, someone else's, or not valid.
    """
    return _read(trust_store_path())[0].stores


def remember_store(record: StoreRecord) -> None:
    """Record the database at `record.path` as the user's own, replacing what was recorded of that place.

    Raises:
        ConfigError: as `update_trust_store`.
    """

    def change(store: _Store) -> _Store:
        kept = [r for r in store.stores if r.path != record.path]
        return store.model_copy(update={"stores": sorted([*kept, record], key=lambda r: str(r.path))})

    _rewrite(change)


def update_trust_store(change: Callable[[list[TrustRecord]], list[TrustRecord]]) -> list[TrustRecord]:
    """Rewrite the store with `change` applied to its records (one writer at a time); returns the new records.

    Raises:
        ConfigError: the store is a link, someone else's, or not valid, or the folder cannot be written; the
            store is then left as it was.
    """
    return _rewrite(lambda store: store.model_copy(update={"trusted": change(store.trusted)})).trusted


def _rewrite(change: Callable[[_Store], _Store]) -> _Store:
    """Rewrite the store with `change` applied (one writer at a time); returns the new store.

    Raises:
        ConfigError: as `update_trust_store`.
    """
    path = trust_store_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"Cannot create `{path.parent}` ({exc.strerror}); fix its permissions.") from exc
    with _folder_locked(path.parent):
        store, mode = _read(path)
        store = change(store)
        data = store.model_dump_json(indent=2).encode() + b"\n"
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{_STORE}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fchmod(fh.fileno(), _NEW_MODE if mode is None else mode)
                os.fsync(fh.fileno())
            if path.is_symlink():  # planted while we wrote (a rename would replace the link, not its target)
                raise _refuse(path, "is a symbolic link")
            os.replace(tmp, path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise ConfigError(f"Cannot write trust store `{path}` ({exc.strerror}); nothing changed.") from exc
            raise
    return store
