"""Which database at the default place is the user's own (a cloned repository can ship one at `data/playbook.duckdb`).

Beside `playbook trust`: that records the settings files a user trusts, this the databases they made or named.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import ConfigError
from core.io.trust_store import known_stores, remember_store
from core.trust import StoreRecord

# Where the database is when no flag, variable or file names one: the working folder's.
DEFAULT_DB = Path("data/playbook.duckdb")


def check_default_store(db: Path, *, named: bool) -> None:
    """A database at the default place (`data/playbook.duckdb` of the working folder) is used only when it is the
    user's own: playbook made it there for them, or they named it (`--db`, `PLAYBOOK_DB`, a settings file). One a
    cloned repository shipped would otherwise be read, published and served to agents as if reviewed (round 10).
    The record is of the file (its inode), as `playbook trust` records a file's content: a repository cloned again
    where one was brings another file, which is the user's only once named.

    Raises:
        ConfigError: the default place holds a database (or the hooks' snapshots beside one) not known to be the
            user's.
    """
    place = DEFAULT_DB.resolve()
    if db.resolve() != place:
        return
    try:
        inode: int | None = os.stat(place).st_ino
    except FileNotFoundError:
        inode = None
    except OSError as exc:
        raise ConfigError(f"Cannot read `{DEFAULT_DB}` ({exc.strerror}); fix its permissions or pass `--db`.") from exc
    record = next((r for r in known_stores() if r.path == place), None)
    if named:
        if record is None or record.inode != inode:
            remember_store(StoreRecord(path=place, inode=inode))
        return
    if inode is not None and record is not None and record.inode in (inode, None):
        if record.inode is None:  # made by the command that found the place empty: now it is known by its inode
            remember_store(StoreRecord(path=place, inode=inode))
        return
    # Nothing of playbook's there yet (no database, no hook snapshots, no shard): the place is this user's to fill.
    empty = not os.path.lexists(place) and not os.path.lexists(place.parent / "hook")
    if inode is None and empty and not any(place.parent.glob(f"{place.stem}.*{place.suffix}")):
        if record is None or record.inode is not None:
            remember_store(StoreRecord(path=place))
        return
    raise ConfigError(
        f"`{DEFAULT_DB}` here was not made by playbook for you (a cloned repository can ship one), so it is not"
        f" used; to use it, name it once: `--db {DEFAULT_DB}`."
    )
