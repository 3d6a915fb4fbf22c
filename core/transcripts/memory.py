"""Agents' own memory files, read as evidence: Claude Code's auto memory (`~/.claude/projects/<project>/memory/*.md`)
and Codex's memories (`~/.codex/memories/*.md`). Each file is one source of its own kind (`memory`): its text, as
one note of the developer whose machine it is on, redacted at ingest like every transcript, and turned into
entries only through the same curation, review, quorum and screen as any other evidence."""

from __future__ import annotations

from pathlib import Path

import duckdb

from core.patterns import Pattern
from core.transcripts._batch import PART_COLUMNS

__all__ = ["MAX_MEMORY_BYTES", "READER_VERSION", "is_memory", "load_memory", "memory_session"]

# What this reader extracts, as a number: bump it whenever a change here stores other rows from the same file, so the
# ingest reads every file it read before again (`core.transcripts.reader_versions`).
READER_VERSION = 1

MAX_MEMORY_BYTES = 256 * 1024  # a memory file is notes; past this it is read no further
MAX_MEMORY_FILE = 4 << 20  # a larger file in a memory folder is no memory (and would be hashed whole): left out
_UNSAFE = Pattern(r"[^A-Za-z0-9._-]+")


def is_memory(path: Path) -> bool:
    """True for a Markdown file in a Claude Code project's `memory/` folder or under Codex's `memories/`, of at
    most `MAX_MEMORY_FILE` bytes."""
    if path.suffix.lower() != ".md":
        return False
    try:
        if path.stat().st_size > MAX_MEMORY_FILE:
            return False
    except OSError:
        return False
    parts = path.parts
    in_claude = len(parts) >= 4 and parts[-2] == "memory" and parts[-4] == "projects"
    return in_claude or "memories" in parts[:-1]


def memory_session(path: Path) -> str:
    """The session id a memory file is kept under: its agent, its project (Claude Code's folder name) and its
    name, in the characters a session id may hold."""
    parts = path.parts
    if len(parts) >= 4 and parts[-2] == "memory":
        raw = f"memory.claude.{parts[-3]}.{path.stem}"
    else:
        raw = f"memory.codex.{path.stem}"
    return _UNSAFE.sub("-", raw).strip("-.")[:120] or "memory"


def load_memory(con: duckdb.DuckDBPyConnection, files: list[tuple[str, str]]) -> None:
    """Read `(path, session_id)` memory files into the batch temp tables: one note each."""
    for path, session_id in files:
        with open(path, "rb") as fh:
            text = fh.read(MAX_MEMORY_BYTES).decode("utf-8", errors="replace").replace("\x00", "")
        row = {
            "session_id": session_id,
            "source_path": path,
            "seq": 1,
            "part": 0,
            "ts": None,
            "role": "user",
            "kind": "text",
            "text": text,
            "tool_name": None,
            "tool_input": None,
            "tool_use_id": None,
            "is_error": False,
            "message_key": f"{path}:1",
            "is_sidechain": False,
            "agent_id": None,
            "is_meta": False,
            "is_prompt": False,  # notes the agent kept, not words the developer typed to it
            "record_id": None,
            "part_key": None,
        }
        if text.strip():
            con.execute(
                f"INSERT INTO _parts ({', '.join(PART_COLUMNS)}) VALUES ({', '.join('?' * len(PART_COLUMNS))})",
                [row[c] for c in PART_COLUMNS],
            )
        con.execute("INSERT INTO _file_stats VALUES (?, ?, ?, ?)", [path, 1, 0, 0])
        con.execute("INSERT INTO _file_meta VALUES (?, ?, NULL, NULL, NULL, NULL)", [path, session_id])
