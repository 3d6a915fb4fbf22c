"""`playbook trust`: the settings files the user trusts, each recorded by resolved path and content hash.

Trusting a file lets every key of it apply, as long as its content stays what it was when trusted; revoking it
(or any change to it) leaves only its harmless keys (`core.trust`). The records live in the user's config folder
(`core.io.trust_store`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from core.errors import ConfigError
from core.io.trust_store import read_trust_store, trust_store_path, update_trust_store
from core.trust import TrustRecord, content_hash, harmless_part
from flows.config import config_path, read_config_file

__all__ = ["Revoked", "Trusted", "TrustedFile", "revoke", "trust", "trusted_files"]


class Trusted(BaseModel):
    """A file now trusted: as the user named it, its record, the store, and the keys that apply only now."""

    path: Path
    record: TrustRecord
    store: Path
    unlocked: list[str]


class Revoked(BaseModel):
    """A file no longer trusted (`was_trusted` False: it never was, and nothing changed)."""

    path: Path
    resolved: Path
    was_trusted: bool


class TrustedFile(BaseModel):
    """One record of the store, and whether the file still holds what was trusted (`changed`) or is gone."""

    path: Path
    sha256: str
    trusted_at: datetime
    state: Literal["trusted", "changed", "missing"]


def trust(file: Path | None = None) -> Trusted:
    """Trust `file` (default: the settings file of the working directory) as it is now: every key of it applies
    until its content changes.

    Raises:
        ConfigError: there is no such file, it is not valid settings TOML, or the trust store is refused.
    """
    path = file or config_path()
    if not path.is_file():
        what = "a folder" if path.is_dir() else "no file"
        raise ConfigError(f"`{path}` is {what}; pass the settings file to trust: `playbook trust FILE`.")
    table, digest = read_config_file(path)
    record = TrustRecord(path=path.resolve(), sha256=digest, trusted_at=datetime.now(UTC))
    update_trust_store(lambda records: sorted([*(r for r in records if r.path != record.path), record], key=_by_path))
    return Trusted(path=path, record=record, store=trust_store_path(), unlocked=harmless_part(table)[1])


def revoke(file: Path | None = None) -> Revoked:
    """Stop trusting `file` (default: the settings file of the working directory), whether or not it still exists.

    Raises:
        ConfigError: the trust store is refused.
    """
    path = file or config_path()
    resolved = path.resolve()
    found: list[TrustRecord] = []

    def drop(records: list[TrustRecord]) -> list[TrustRecord]:
        found.extend(r for r in records if r.path == resolved)
        return [r for r in records if r.path != resolved]

    update_trust_store(drop)
    return Revoked(path=path, resolved=resolved, was_trusted=bool(found))


def trusted_files() -> list[TrustedFile]:
    """Every trusted file, with whether it still holds what was trusted.

    Raises:
        ConfigError: the trust store is refused.
    """
    return [TrustedFile(**r.model_dump(), state=_state(r)) for r in read_trust_store()]


def _state(record: TrustRecord) -> Literal["trusted", "changed", "missing"]:
    try:
        data = record.path.read_bytes()
    except OSError:
        return "missing"
    return "trusted" if content_hash(data) == record.sha256 else "changed"


def _by_path(record: TrustRecord) -> str:
    return str(record.path)
