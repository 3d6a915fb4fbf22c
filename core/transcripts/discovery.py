"""Where the transcripts are: the files of the folders given (walked once), and what a folder holds by format,
read without ingesting (for `playbook doctor`)."""

from __future__ import annotations

import os
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
            found.extend(_files_in(path))
        elif path.exists():
            found.extend([path.resolve()] if not path.name.endswith(META_SUFFIX) else [])
        else:
            missing.append(path)
    return list(dict.fromkeys(found)), missing


def _files_in(folder: Path) -> list[Path]:
    """The transcript and memory files `folder.rglob("*")` finds, resolved, in the order of their paths; no meta file
    (by the name it is found under).

    As `rglob`: every folder once, a symbolic link to a folder not entered, a link to a file followed. Without its
    cost: a `stat` of each entry and `resolve` of each file (an `lstat` per part of its path) took a re-ingest of
    416 files 27 ms of CPU, this 9 ms. Under the resolved folder only a file that is itself a link resolves elsewhere.
    """
    real = folder.resolve()
    entries: list[tuple[tuple[str, ...], os.DirEntry[str]]] = []
    pending: list[tuple[str, ...]] = [()]
    while pending:
        parts = pending.pop()
        try:
            with os.scandir(real.joinpath(*parts)) as listing:
                inside = list(listing)
        except PermissionError:  # as `rglob`: an unreadable folder holds nothing
            continue
        for entry in inside:
            if entry.is_dir(follow_symlinks=False):
                pending.append((*parts, entry.name))
            else:
                entries.append(((*parts, entry.name), entry))
    entries.sort(key=lambda item: item[0])  # the order of the paths, as sorting them gives it
    files = []
    for parts, entry in entries:
        path = folder.joinpath(*parts)  # as `rglob` names it: what `is_memory` reads
        if (path.suffix in SUFFIXES or is_memory(path)) and not path.name.endswith(META_SUFFIX) and entry.is_file():
            files.append(path.resolve() if entry.is_symlink() else real.joinpath(*parts))
    return files


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
