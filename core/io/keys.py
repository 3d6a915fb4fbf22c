"""Names from other machines that become paths here: contributor names and object keys, checked once.

A contributor names a folder in a team's bucket and in the fetch cache; an object key names a file on the
machine that runs the nightly job. Both come from outside (a teammate's `--contributor`, an object anyone with
write access to the bucket can create), so each is checked here before it is used as a path or a prefix:
a contributor is a slug, and a key becomes a cache path only when the normalised path provably stays inside
the cache. `push`, `forget`, `ingest URL` and `exclude_contributors` all go through this module.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Annotated, NamedTuple

from pydantic import AfterValidator

from core.errors import ConfigError
from core.patterns import Pattern

__all__ = ["Contributor", "Refused", "cache_path", "check_contributor", "contributor_error", "inside", "key_error"]

_SLUG = Pattern(r"[A-Za-z0-9._-]{1,64}")
# S3 refuses keys over 1,024 bytes; a file name over NAME_MAX (255 bytes on Linux and macOS) cannot be created.
MAX_KEY_BYTES = 1024
NAME_MAX = 255


def contributor_error(name: object) -> str | None:
    """Why `name` cannot be a contributor, or None when it can (a slug: letters, digits, `._-`, 1-64 chars,
    not `.` or `..`)."""
    if not isinstance(name, str) or not _SLUG.fullmatch(name):
        return "a contributor is 1-64 letters, digits, `.`, `_` or `-`"
    if name in (".", ".."):
        return "a contributor cannot be `.` or `..`"
    return None


def check_contributor(name: str) -> str:
    """`name`, when it is a valid contributor.

    Raises:
        ConfigError: it is not (one line, with the rule).
    """
    why = contributor_error(name)
    if why:
        raise ConfigError(f"Contributor `{name}` is refused: {why}; pick another name.")
    return name


def _validate(name: str) -> str:
    why = contributor_error(name)
    if why:
        raise ValueError(why)
    return name


# A contributor in a pydantic model (settings, summaries): validated on the way in.
Contributor = Annotated[str, AfterValidator(_validate)]


class Refused(NamedTuple):
    """A key that does not become a file here, and why."""

    key: str
    reason: str


def key_error(key: str) -> str | None:
    """Why `key` may not name an object of a team's store (length, encoding, control characters, empty, `.` or
    `..` parts, no contributor slug first), or None."""
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        return "the key is not valid UTF-8"
    if size > MAX_KEY_BYTES:
        return f"the key is {size:,} bytes (at most {MAX_KEY_BYTES:,})"
    if any(unicodedata.category(c) == "Cc" for c in key):
        return "the key holds control characters"
    parts = key.split("/")
    if len(parts) < 2:
        return "the key is not under a contributor's folder"
    if any(p in ("", ".", "..") for p in parts):
        return "the key has an empty, `.` or `..` part"
    if any(len(p.encode("utf-8")) > NAME_MAX for p in parts):
        return f"a part of the key is longer than {NAME_MAX} bytes"
    why = contributor_error(parts[0])
    return f"its contributor folder is refused: {why}" if why else None


def cache_path(cache: Path, key: str) -> Path | Refused:
    """The file under `cache` that holds the object `key`, or why it may not have one.

    The key is checked part by part (length, control characters, empty, `.` and `..` parts, a contributor
    slug first), then the joined path is normalised (`resolve()`, which also follows any link already in the
    cache) and must still be inside `cache`.
    """
    why = key_error(key)
    if why:
        return Refused(key, why)
    try:
        root = cache.resolve()
        path = (root / key).resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a name the file system refuses
        return Refused(key, f"the key cannot be a path here: {exc}")
    if not inside(root, path):
        return Refused(key, "the key leads outside the cache")
    if len(os.fsencode(path)) >= 4096:  # PATH_MAX on Linux
        return Refused(key, "the key makes a path longer than this file system allows")
    return path


def inside(root: Path, path: Path) -> bool:
    """True when `path`, normalised, is `root` or below it (links followed on both sides)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False
