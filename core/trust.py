"""Which settings a configuration file may set before the user trusts it: an allow-list of harmless keys.

A `playbook.toml` in the working directory (or named by `PLAYBOOK_CONFIG`) may come with a cloned repository,
so until the user trusts that exact file (`playbook trust`, which records its content hash) only keys that change
how much work a run does, how long it waits, or the size of a playbook apply. What runs (executables, templates),
where data goes or is written (base URLs, storage, transcript sources, the database, export targets), what it may
cost (providers, models, prices, caps) and every safeguard (guards, review, consent, redaction patterns) come only
from the user's own config, a trusted file, the environment or a flag. A key not on the list is never harmless.
"""

from __future__ import annotations

import hashlib
import shlex
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from core.playbook_names import is_playbook_name

__all__ = [
    "HARMLESS",
    "HARMLESS_PER_PLAYBOOK",
    "ConfigFile",
    "Standing",
    "StoreRecord",
    "TrustRecord",
    "content_hash",
    "harmless_part",
    "standing_of",
]

# Each key here only sizes, paces or times the work the user's own settings already chose.
HARMLESS = frozenset(
    {
        # Playbook names (checked to be plain names: they become file names under `out_dir`).
        "playbook",
        "playbooks",
        # Budgets of an exported playbook.
        "max_entries",
        "max_tokens",
        # How sessions are batched, chosen and retried.
        "epoch_size",
        "concurrency",
        "warm_cache",
        "min_messages",
        "idle_minutes",
        "max_attempts",
        # Per-call sizes and time limits (what a run may spend stays capped by `cost_cap_usd` and `max_calls`).
        "max_input_tokens",
        "reflector_max_tokens",
        "curator_max_tokens",
        "request_timeout_s",
        "claude_cli_timeout_s",
        "max_retries",
        "retry_after_cap_s",
        "max_run_minutes",
        "breaker_failures",
        "wait_s",
        "busy_wait_s",
        # Thresholds of near-duplicates, consolidation, staleness and the impact measurement.
        "near_duplicates",
        "near_duplicate_threshold",
        "consolidate_above",
        "consolidate_floor",
        "judge_max_entries",
        "rejudge_after_days",
        "stale_after_days",
        "holdout",
        "impact_min_sessions",
    }
)
# Of a `[playbook_settings.NAME]` table: its budget only (`projects`, `review` and `targets` decide what
# reaches which agent).
HARMLESS_PER_PLAYBOOK = frozenset({"max_entries", "max_tokens"})

_NAMES = ("playbook", "playbooks")
_SHOWN = 6  # ignored keys a line names before it counts the rest

# own: the user's config (`~/.config/playbook/config.toml`); trusted: the file as it was trusted; untrusted: never
# trusted; changed: trusted once, with other content then.
Standing = Literal["own", "trusted", "untrusted", "changed"]


class TrustRecord(BaseModel):
    """One trusted file: its resolved path, the SHA-256 of the content the user trusted, and when."""

    path: Path
    sha256: str
    trusted_at: datetime


class StoreRecord(BaseModel):
    """A database at a default place that is the user's own: its resolved path and the file's inode (None: the
    place was empty when recorded, and the database the command made there is taken as it is first seen). Another
    file at the same place (a repository cloned again where one was) has another inode."""

    path: Path
    inode: int | None = None


class ConfigFile(BaseModel):
    """A configuration file that was read: where it was found (as the user would type it), how far it is trusted,
    and the keys of it that were not applied (dotted: `playbook_settings.api.targets`)."""

    path: Path
    standing: Standing
    ignored: list[str]

    def notice(self) -> str | None:
        """The one line saying which keys were ignored and how to trust the file, or None when all apply."""
        if not self.ignored:
            return None
        shown = [f"`{k}`" for k in self.ignored[:_SHOWN]]
        if len(self.ignored) > _SHOWN:
            shown.append(f"{len(self.ignored) - _SHOWN} more")
        names = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
        were = "was" if len(self.ignored) == 1 else "were"
        command = f"`playbook trust {shlex.quote(str(self.path))}`"
        if self.standing == "changed":
            why = "changed since you trusted it"
            return f"`{self.path}` {why}, so its {names} {were} ignored; review it, then run {command}."
        return f"`{self.path}` is not trusted, so its {names} {were} ignored; if you wrote it, run {command}."


def content_hash(data: bytes) -> str:
    """The SHA-256 of a file's bytes, as the trust store records it."""
    return hashlib.sha256(data).hexdigest()


def standing_of(records: list[TrustRecord], resolved: Path, digest: str) -> Standing:
    """Whether the file at `resolved` whose content hashes to `digest` is trusted, changed since, or never was."""
    found = [r for r in records if r.path == resolved]
    if any(r.sha256 == digest for r in found):
        return "trusted"
    return "changed" if found else "untrusted"


def _plain_names(value: Any) -> bool:
    names = value if isinstance(value, list) else [value]
    return all(is_playbook_name(n) for n in names)


def harmless_part(table: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What an untrusted file may set: (the harmless part of `table`, the dotted names of every key left out).

    Every key (and every key of a playbook's table) is either kept or named, never both. Playbook names are kept
    only when they are plain names (letters, digits, `._-`, not starting with a dot); a `[playbook_settings.NAME]`
    table keeps its budget.
    """
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in table.items():
        if key == "playbook_settings" and isinstance(value, dict):
            per: dict[str, Any] = {}
            for name, options in value.items():
                if not isinstance(options, dict):
                    ignored.append(f"{key}.{name}")
                    continue
                ignored += [f"{key}.{name}.{k}" for k in options if k not in HARMLESS_PER_PLAYBOOK]
                per[name] = {k: v for k, v in options.items() if k in HARMLESS_PER_PLAYBOOK}
            kept[key] = {name: options for name, options in per.items() if options}
        elif key in HARMLESS and (key not in _NAMES or _plain_names(value)):
            kept[key] = value
        else:
            ignored.append(key)
    return kept, ignored
