"""Delivery through Claude Code's SessionStart hook, and what it records.

`playbook hook session-start` gives a starting session its project's playbooks (as last exported, screened and
within budget) and appends what it gave, and what it held out, to a ledger beside the database; it never opens
the database, so a nightly run holding it never delays a session, and it gives up in silence rather than block
one. Ingest merges the ledger into `exposures`. `playbook hook install` writes the hook into a
`.claude/settings.json` beside the hooks already there, and `uninstall` takes out only ours.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, ValidationError

from core.errors import ConfigError, PlaybookFileError
from core.exposure import (
    HookInput,
    Snapshot,
    SnapshotPlaybook,
    about_projects,
    context_for,
    hook_output,
    parse_ledger,
)
from core.io.files import append_line, read_text, write_atomic
from core.store.exposure import ledger_read_bytes, store_ledger_lines
from core.store.sessions import project_names
from core.store.versions import current_version
from flows.context import Database
from flows.delivery.exports import prepare_export
from flows.workspace import Workspace

__all__ = [
    "HOOK_COMMAND",
    "HookInstall",
    "LedgerMerge",
    "install_hook",
    "merge_ledger",
    "session_start",
    "snapshot_of",
    "uninstall_hook",
    "write_snapshot",
]

HOOK_COMMAND = "hook session-start"  # how our entry is recognised among the user's hooks
_TIMEOUT_S = 10  # what Claude Code waits for the hook at most (the work itself is bounded well under a second)
_LEDGER_LINE_MAX = 256 * 1024  # a line longer than this is not ours


def snapshot_path(db: Database) -> Path:
    """The playbooks as the hook gives them (beside the database)."""
    return db.path.parent / "hook" / f"{db.path.stem}-snapshot.json"


def ledger_path(db: Database) -> Path:
    """The hook's append-only exposure ledger (beside the database)."""
    return db.path.parent / "hook" / f"{db.path.stem}-exposure.jsonl"


def snapshot_of(db: Database, ws: Workspace) -> Snapshot:
    """Every configured playbook as an export gives it now, with the projects it is for."""
    found: list[SnapshotPlaybook] = []
    for name in ws.playbooks:
        with db.for_playbook(name).read() as con:
            export = prepare_export(con, ws.rules(name))
            newest = current_version(con, name)
            projects = project_names(con)
        scope = ws.settings.session_scope(name)
        globs, inside = scope if scope is not None else ([], True)
        found.append(
            SnapshotPlaybook(
                name=name,
                version=export.version if export.version is not None else newest,
                globs=globs if inside else [],
                everywhere_else=not inside,
                other_globs=[] if inside else globs,
                entries=export.model.entries(),
                projects=about_projects(export.model.entries(), projects),
            )
        )
    return Snapshot(written_at=datetime.now(UTC), holdout=ws.settings.holdout, playbooks=found)


def write_snapshot(ws: Workspace, *, only_if_present: bool = False) -> Path | None:
    """Write the hook's snapshot of the configured playbooks; with `only_if_present`, only when a hook was
    installed before (the file exists), so runs of people without the hook leave nothing behind."""
    db = ws.store
    path = snapshot_path(db)
    if only_if_present and not path.exists():
        return None
    snapshot = snapshot_of(ws.database(), ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, snapshot.model_dump_json())
    return path


def session_start(db: Database, stdin: str) -> str:
    """What the hook prints for the session described by `stdin` (Claude Code's hook input): the JSON that adds
    its project's playbooks to the session, or nothing when there is nothing to give; what it gave and held out
    is appended to the ledger. Never raises: a session must start whatever happens here."""
    try:
        hook = HookInput.model_validate_json(stdin)
        snapshot = Snapshot.model_validate_json(snapshot_path(db).read_bytes())
    except (OSError, ValueError, ValidationError):
        return ""
    text, got = context_for(snapshot, hook)
    line = {
        "session_id": hook.session_id,
        "at": datetime.now(UTC).isoformat(),
        "cwd": hook.cwd,
        "source": hook.source,
        "playbooks": [g.model_dump() for g in got],
    }
    try:
        # One write with O_APPEND (hooks of sessions that start together never interleave), never through a link.
        append_line(ledger_path(db), json.dumps(line, ensure_ascii=False) + "\n")
    except (OSError, PlaybookFileError) as exc:  # the session still gets its playbook; only the record is missing
        print(f"playbook hook: exposure not recorded: {exc}", file=sys.stderr)
    return json.dumps(hook_output(text), ensure_ascii=False) if text else ""


class LedgerMerge(BaseModel):
    """What ingest took from the hook's ledger."""

    lines: int = 0
    skipped: int = 0
    rows: int = 0


def merge_ledger(con: duckdb.DuckDBPyConnection, db: Database) -> LedgerMerge:
    """Merge the new complete lines of the hook's ledger into `exposures` (a line still being written waits for
    the next ingest; a ledger that shrank, rotated by hand, is read again from its start)."""
    path = ledger_path(db)
    if not path.exists():
        return LedgerMerge()
    key = str(path.resolve())
    start = ledger_read_bytes(con, key)
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size < start:
            start = 0
        fh.seek(start)
        data = fh.read(size - start)
    end = data.rfind(b"\n") + 1
    if end == 0:
        return LedgerMerge()
    raw = data[:end].split(b"\n")
    texts = [r.decode("utf-8", "replace") for r in raw if r.strip() and len(r) <= _LEDGER_LINE_MAX]
    lines, bad = parse_ledger(texts)
    bad += sum(1 for r in raw if len(r) > _LEDGER_LINE_MAX)
    rows = store_ledger_lines(con, key, lines, start + end, bad)
    return LedgerMerge(lines=len(lines), skipped=bad, rows=rows)


class HookInstall(BaseModel):
    """What `hook install` or `uninstall` did to one settings file."""

    settings_file: Path
    command: str
    status: Literal["installed", "already", "removed", "absent"]
    snapshot: Path | None = None


def _settings_file(scope: Literal["project", "user"], project: Path) -> Path:
    base = project if scope == "project" else Path.home()
    return base / ".claude" / "settings.json"


def _load_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = read_text(path)
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise PlaybookFileError(
            f"`{path}` is not valid JSON (line {exc.lineno}): {exc.msg}; fix it by hand, it was left untouched."
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise PlaybookFileError(
            f"`{path}` does not hold a settings object with a `hooks` object; it was left untouched."
        )
    return data


def _ours(hook: object) -> bool:
    return isinstance(hook, dict) and HOOK_COMMAND in str(hook.get("command", ""))


def install_hook(ws: Workspace, scope: Literal["project", "user"], project: Path) -> HookInstall:
    """Add the SessionStart hook to the project's (or the user's) `.claude/settings.json`, keeping every other
    setting and hook, and write the snapshot it reads.

    Raises:
        PlaybookFileError: the settings file is not a JSON object (left as it was).
    """
    db = ws.store
    if not db.path.exists():
        raise ConfigError(f"Database `{db.path}` does not exist yet; run `playbook nightly` first, or pass `--db`.")
    path = _settings_file(scope, project)
    data = _load_settings(path)
    command = " ".join(
        shlex.quote(part) for part in (_executable(), *HOOK_COMMAND.split(), "--db", str(db.path.resolve()))
    )
    groups = data.setdefault("hooks", {}).setdefault("SessionStart", [])
    if not isinstance(groups, list):
        raise PlaybookFileError(f"`{path}`: `hooks.SessionStart` is not a list; it was left untouched.")
    present = any(_ours(h) for g in groups if isinstance(g, dict) for h in g.get("hooks", []) or [])
    snapshot = write_snapshot(ws)
    if present:
        return HookInstall(settings_file=path, command=command, status="already", snapshot=snapshot)
    groups.append(
        {
            "matcher": "startup|resume|clear|compact",
            "hooks": [{"type": "command", "command": command, "timeout": _TIMEOUT_S}],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return HookInstall(settings_file=path, command=command, status="installed", snapshot=snapshot)


def _executable() -> str:
    """This installation's `playbook` (beside the interpreter), so the hook runs the same version as the nightly."""
    beside = Path(sys.executable).with_name("playbook")
    return str(beside) if beside.exists() else "playbook"


def uninstall_hook(scope: Literal["project", "user"], project: Path) -> HookInstall:
    """Take our SessionStart hook out of the settings file again; everything else stays as it is.

    Raises:
        PlaybookFileError: the settings file is not a JSON object (left as it was).
    """
    path = _settings_file(scope, project)
    data = _load_settings(path)
    groups = data.get("hooks", {}).get("SessionStart")
    if not isinstance(groups, list) or not any(
        _ours(h) for g in groups if isinstance(g, dict) for h in g.get("hooks", []) or []
    ):
        return HookInstall(settings_file=path, command="", status="absent")
    kept = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            rest = [h for h in group["hooks"] if not _ours(h)]
            if not rest:
                continue
            group = {**group, "hooks": rest}
        kept.append(group)
    if kept:
        data["hooks"]["SessionStart"] = kept
    else:
        del data["hooks"]["SessionStart"]
        if not data["hooks"]:
            del data["hooks"]
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return HookInstall(settings_file=path, command="", status="removed")
