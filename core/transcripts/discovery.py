"""Where the transcripts are: the files of the folders given (walked once), and what a folder holds by format,
read without ingesting (for `playbook doctor`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.transcripts.detect import Detected, detect
from core.transcripts.memory import is_memory

__all__ = ["META_SUFFIX", "SUFFIXES", "FolderSurvey", "discover", "survey"]

SUFFIXES = (".jsonl", ".json")
META_SUFFIX = ".meta.json"  # `agent-<id>.meta.json`: a subagent's type and description, not a transcript


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Expand folders to their `*.jsonl` / `*.json` transcripts and agents' memory files (sorted), each folder
    walked once; and the paths that do not exist."""
    found: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if (p.suffix in SUFFIXES or is_memory(p)) and p.is_file()))
        elif path.exists():
            found.append(path)
        else:
            missing.append(path)
    unique = list(dict.fromkeys(p.resolve() for p in found if not p.name.endswith(META_SUFFIX)))
    return unique, missing


@dataclass
class FolderSurvey:
    """What a transcript folder holds, read without ingesting: files and sessions per format."""

    path: str
    exists: bool
    files: dict[str, int] = field(default_factory=dict)  # per format, plus `unrecognised`
    sessions: dict[str, int] = field(default_factory=dict)  # per format: distinct sessions with a main file


def survey(paths: Iterable[Path]) -> list[FolderSurvey]:
    """For `playbook doctor`: each folder's transcripts by format and the sessions they hold."""
    out = []
    for path in paths:
        item = FolderSurvey(str(path), path.exists())
        files, _ = discover([path]) if item.exists else ([], [])
        sessions: dict[str, set[str]] = {}
        for file in files:
            try:
                found = detect(file) if file.stat().st_size else Detected(None)
            except OSError:
                found = Detected(None)
            kind = found.format or "unrecognised"
            item.files[kind] = item.files.get(kind, 0) + 1
            if found.format and found.session_id and found.is_main:
                sessions.setdefault(found.format, set()).add(found.session_id)
        item.sessions = {k: len(v) for k, v in sessions.items()}
        out.append(item)
    return out
