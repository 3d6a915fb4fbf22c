"""The version of each format's reader, recorded in the ingest ledger with every file it read.

A reader's `READER_VERSION` is bumped whenever what it extracts from the same bytes changes (a flag, a bound, a key):
the ingest then reads again every file of that format a reader of another version read, as if the file had changed,
so a store never keeps a reading the current reader would not make (`core.store.ingest`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from core.transcripts import claude_code, codex, memory, messages
from core.transcripts.detect import FORMATS, Format

__all__ = ["READER_VERSIONS", "reader_version"]

_BY_FORMAT: dict[Format, int] = {
    "claude-code": claude_code.READER_VERSION,
    "codex": codex.READER_VERSION,
    "messages": messages.READER_VERSION,
    "memory": memory.READER_VERSION,
}
READER_VERSIONS: Mapping[str, int] = MappingProxyType({str(fmt): n for fmt, n in _BY_FORMAT.items()})
assert set(READER_VERSIONS) == set(FORMATS), "every format has a reader version"


def reader_version(fmt: str | None) -> int | None:
    """The current version of the reader of `fmt` (a format as the ledger stores it), or None for a format no
    reader reads (a file recorded as unreadable, empty or unrecognised has none)."""
    return READER_VERSIONS.get(fmt) if fmt is not None else None
