"""Delivery through Claude Code's hooks, and what they record.

`playbook hook install` writes three hooks into a `.claude/settings.json`, beside the hooks already there:
SessionStart gives a starting session its project's playbooks (their digest, when the prompt hook is there too),
UserPromptSubmit the entries a prompt calls up, PreToolUse (on `Bash`) the lesson of a command lesson whose command
is about to run, or a refusal for a rule the user made hard. Each answers from a snapshot written here (screened,
within budget, guards compiled from the typed lessons) and appends what it gave, and what the holdout left out, to
a ledger beside the database (`flows.delivery.hookrun`); none opens the database, so a nightly run holding it never
delays a session. Ingest merges the ledger into `exposures`. `uninstall` takes out only ours.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar

import duckdb
from pydantic import BaseModel

from core.errors import ConfigError, PlaybookFileError
from core.exposure import Snapshot, SnapshotPlaybook, about_projects, parse_feedback, parse_ledger
from core.guards import Guard
from core.hooks import build_index
from core.impact import estimate_counts
from core.io.files import read_text, write_atomic
from core.json_documents import parse_document
from core.redact import Redactor
from core.store.exposure import impact_counts, ledger_read_bytes, store_feedback, store_ledger_lines
from core.store.guards import entry_guards
from core.store.provenance import entry_sources
from core.store.published import entry_triggers
from core.store.sessions import project_names
from core.store.versions import current_version
from flows.context import Database
from flows.delivery.exports import prepare_export
from flows.delivery.hookrun import answer, ledger_path, snapshot_path
from flows.delivery.lessons_server import feedback_path
from flows.workspace import Workspace

__all__ = [
    "HOOK_COMMAND",
    "HookInstall",
    "LedgerMerge",
    "install_hook",
    "merge_ledger",
    "playbook_guards",
    "refreshes_snapshot",
    "run_hook",
    "snapshot_of",
    "uninstall_hook",
    "write_snapshot",
    "write_snapshot_files",
]

HOOK_COMMAND = "hook session-start"  # how an entry of an earlier install is recognised among the user's hooks
_RUNNER = "flows.delivery.hookrun"  # ... and one of this install
_TIMEOUT_S = 10  # what Claude Code waits for a hook at most (the work itself is bounded at half a second)
_LEDGER_LINE_MAX = 256 * 1024  # a line longer than this is not ours
_MERGE_BYTES = 64 << 20  # of a ledger, what one ingest reads at most
# The hooks `install` writes: event, matcher (None: the event has none), the runner's event name and flags.
_HOOKS: tuple[tuple[str, str | None, str, tuple[str, ...]], ...] = (
    ("SessionStart", "startup|resume|clear|compact", "session-start", ("--digest",)),
    ("UserPromptSubmit", None, "user-prompt-submit", ()),
    ("PreToolUse", "Bash", "pre-tool-use", ()),
)


def _details(
    con: duckdb.DuckDBPyConnection, name: str, least: int, citations: dict[str, list[str]], given: set[str]
) -> dict[str, dict[str, Any]]:
    """Per entry the export gives (`given`): the sessions it rests on, its impact verdict, and what it cites. Of
    those only: an entry held from the export (by the screen, or by an id playbook never makes) has no place in the
    snapshot."""
    sources = entry_sources(con, name)
    verdicts = {c.entry_id: estimate_counts(c, least).verdict for c in impact_counts(con, name) if c.entry_id in given}
    return {
        entry: {"sessions": len(sources.get(entry, [])), "impact": verdict, "citations": citations.get(entry, [])}
        for entry, verdict in verdicts.items()
    }


def snapshot_of(db: Database, ws: Workspace) -> Snapshot:
    """Every configured playbook as an export gives it now, with the projects it is for, its prompt index (entry
    text and triggers) and its guards."""
    found: list[SnapshotPlaybook] = []
    for name in ws.playbooks:
        with db.for_playbook(name).read() as con:
            export = prepare_export(con, ws.rules(name))
            newest = current_version(con, name)
            projects = project_names(con)
            entries = export.model.entries()
            triggers = entry_triggers(con, name)
            guards = entry_guards(con, name, {e.name: e.text for _, e in entries})
            given = {e.name for _, e in entries}
            details = _details(con, name, ws.settings.impact_min_sessions, export.citations, given)
        scope = ws.settings.session_scope(name)
        globs, inside = scope if scope is not None else ([], True)
        found.append(
            SnapshotPlaybook(
                name=name,
                version=export.version if export.version is not None else newest,
                globs=globs if inside else [],
                everywhere_else=not inside,
                other_globs=[] if inside else globs,
                entries=entries,
                projects=about_projects(entries, projects),
                index=build_index(" ".join([e.text, *triggers.get(e.name, [])]) for _, e in entries),
                guards=[g for found in guards.values() for g in found],
                details=details,
            )
        )
    return Snapshot(written_at=datetime.now(UTC), holdout=ws.settings.holdout, playbooks=found)


def playbook_guards(ws: Workspace, playbook: str) -> list[Guard]:
    """The guards the hooks' snapshot holds for `playbook` now (its exported command lessons)."""
    return next((pb.guards for pb in snapshot_of(ws.database(), ws).playbooks if pb.name == playbook), [])


def write_snapshot(ws: Workspace, *, only_if_present: bool = False) -> Path | None:
    """Write the hooks' snapshot of the configured playbooks; with `only_if_present`, only when a hook was
    installed before (the file exists), so runs of people without the hook leave nothing behind."""
    db = ws.store
    path = snapshot_path(db.path)
    if only_if_present and not path.exists():
        return None
    write_snapshot_files(db.path, snapshot_of(ws.database(), ws))
    return path


_P = ParamSpec("_P")
_R = TypeVar("_R")


def refreshes_snapshot(command: Callable[Concatenate[Workspace, _P], _R]) -> Callable[Concatenate[Workspace, _P], _R]:
    """`command` (a library call that takes the workspace first and may write a playbook version, or change which
    one is exported), then `write_snapshot(ws, only_if_present=True)`: the hooks and the MCP server read only the
    snapshot, so without it a retired or reverted entry is served until the next publish or nightly. Once here,
    for every such command, rather than a call each command could forget."""

    @functools.wraps(command)
    def refreshing(ws: Workspace, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        result = command(ws, *args, **kwargs)
        write_snapshot(ws, only_if_present=True)  # after the command's lock and write: the snapshot reads anew
        return result

    return refreshing


def write_snapshot_files(db: Path, snapshot: Snapshot) -> None:
    """Write `snapshot` for the hooks of database `db`: one file per hook with only what it reads (a hook's time
    is mostly reading its file), the SessionStart one last (`only_if_present` looks for it)."""
    parts = {"guards": {"entries", "index"}, "prompt": {"guards"}, "snapshot": {"guards", "index"}}
    snapshot_path(db).parent.mkdir(parents=True, exist_ok=True)
    for part, left_out in parts.items():
        data = snapshot.model_dump(mode="json", exclude={"playbooks": {"__all__": left_out}})
        write_atomic(snapshot_path(db, part), json.dumps(data, ensure_ascii=False))


def run_hook(event: str, db: Database, stdin: str, *, digest: bool = False) -> str:
    """What the hook `event` (`session-start`, `user-prompt-submit`, `pre-tool-use`) prints for `stdin`, as the
    installed hook answers it (`flows.delivery.hookrun`). Never raises."""
    return answer(event, db.path, stdin, digest=digest)


class LedgerMerge(BaseModel):
    """What ingest took from the hooks' ledger and the MCP server's feedback."""

    lines: int = 0
    skipped: int = 0
    rows: int = 0
    feedback: int = 0


def _new_lines(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[str, list[str], int, int] | None:
    """The complete lines appended to `path` since it was last merged (a line still being written waits for the
    next ingest; a file that shrank, rotated by hand, is read again from its start): (its key, the lines, the
    offset they end at, how many were too long to be ours); None when there is nothing new."""
    if not path.exists():
        return None
    key = str(path.resolve())
    start = ledger_read_bytes(con, key)
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size < start:
            start = 0
        fh.seek(start)
        data = fh.read(min(size - start, _MERGE_BYTES))  # the rest waits for the next ingest
    end = data.rfind(b"\n") + 1
    if end == 0:
        return None
    raw = data[:end].split(b"\n")
    texts = [r.decode("utf-8", "replace") for r in raw if r.strip() and len(r) <= _LEDGER_LINE_MAX]
    return key, texts, start + end, sum(1 for r in raw if len(r) > _LEDGER_LINE_MAX)


def merge_ledger(con: duckdb.DuckDBPyConnection, db: Database, redactor: Redactor | None = None) -> LedgerMerge:
    """Merge the new complete lines of the hooks' ledger into `exposures`, and of the MCP server's feedback file
    into `feedback` (each note redacted with `redactor`, secrets at least)."""
    found = LedgerMerge()
    new = _new_lines(con, ledger_path(db.path))
    if new is not None:
        key, texts, end, long = new
        lines, bad = parse_ledger(texts)
        rows = store_ledger_lines(con, key, lines, end, bad + long)
        found = LedgerMerge(lines=len(lines), skipped=bad + long, rows=rows)
    said = _new_lines(con, feedback_path(db.path))
    if said is not None:
        key, texts, end, long = said
        outcomes, bad = parse_feedback(texts)
        clean = redactor or Redactor()
        outcomes = [o.model_copy(update={"note": clean.text(o.note)}) for o in outcomes]
        store_feedback(con, key, outcomes, end, bad + long)
        found = found.model_copy(update={"feedback": len(outcomes), "skipped": found.skipped + bad + long})
    return found


class HookInstall(BaseModel):
    """What `hook install` or `uninstall` did to one settings file."""

    settings_file: Path
    command: str
    status: Literal["installed", "already", "removed", "absent"]
    snapshot: Path | None = None


def _settings_file(scope: Literal["project", "user"], project: Path) -> Path:
    base = project if scope == "project" else Path.home()
    return base / ".claude" / "settings.json"


# The largest settings.json read: Claude's settings are a few KB; a bigger file is no settings file to edit.
_MAX_SETTINGS_BYTES = 16 * 2**20


def _load_settings(path: Path) -> dict[str, Any]:
    """The settings object of `path` ({} when it is missing or blank), refused in one line when it is too large,
    not JSON, nests deeper than `MAX_DEPTH` (it is written back with an indent, which recurses) or is no object."""
    if not path.exists():
        return {}
    text = read_text(path, max_bytes=_MAX_SETTINGS_BYTES)
    try:
        data = parse_document(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise PlaybookFileError(
            f"`{path}` is not valid JSON (line {exc.lineno}): {exc.msg}; fix it by hand, it was left untouched."
        ) from exc
    except ValueError as exc:
        raise PlaybookFileError(f"`{path}` is not a settings file: {exc}; it was left untouched.") from exc
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise PlaybookFileError(
            f"`{path}` does not hold a settings object with a `hooks` object; it was left untouched."
        )
    return data


def _ours(hook: object) -> bool:
    command = str(hook.get("command", "")) if isinstance(hook, dict) else ""
    return HOOK_COMMAND in command or _RUNNER in command


def _current(hook: object) -> bool:
    """One of ours written by this install (an earlier one's `playbook hook session-start` is replaced)."""
    return isinstance(hook, dict) and _RUNNER in str(hook.get("command", ""))


def _groups(data: dict[str, Any], event: str, path: Path) -> list[Any]:
    groups = data.setdefault("hooks", {}).setdefault(event, [])
    if not isinstance(groups, list):
        raise PlaybookFileError(f"`{path}`: `hooks.{event}` is not a list; it was left untouched.")
    return groups


def _has_ours(groups: object, mine: Callable[[object], bool] = _ours) -> bool:
    return isinstance(groups, list) and any(
        mine(h) for g in groups if isinstance(g, dict) for h in g.get("hooks", []) or []
    )


def _without_ours(groups: list[Any]) -> list[Any]:
    """`groups` with our hooks taken out (a group left with no hook goes too)."""
    kept = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            rest = [h for h in group["hooks"] if not _ours(h)]
            if not rest:
                continue
            group = {**group, "hooks": rest}
        kept.append(group)
    return kept


def install_hook(ws: Workspace, scope: Literal["project", "user"], project: Path) -> HookInstall:
    """Add the hooks (SessionStart, UserPromptSubmit, PreToolUse on `Bash`) to the project's (or the user's)
    `.claude/settings.json`, keeping every other setting and hook, and write the snapshot they read. An event that
    already has this install's hook is left as it is; an earlier install's `playbook hook session-start` is
    replaced (it gave the whole playbook, which the prompt hook would then give twice).

    Raises:
        PlaybookFileError: the settings file is not a JSON object (left as it was).
    """
    db = ws.store
    if not db.path.exists():
        raise ConfigError(f"Database `{db.path}` does not exist yet; run `playbook nightly` first, or pass `--db`.")
    path = _settings_file(scope, project)
    data = _load_settings(path)
    missing = [hook for hook in _HOOKS if not _has_ours(_groups(data, hook[0], path), _current)]
    snapshot = write_snapshot(ws)
    command = _command("session-start", db.path, ("--digest",))
    if not missing:
        return HookInstall(settings_file=path, command=command, status="already", snapshot=snapshot)
    for event, matcher, name, flags in missing:
        hook = {"type": "command", "command": _command(name, db.path, flags), "timeout": _TIMEOUT_S}
        groups = _without_ours(_groups(data, event, path))  # an earlier install's hook gives way to this one
        groups.append({"matcher": matcher, "hooks": [hook]} if matcher else {"hooks": [hook]})
        data["hooks"][event] = groups
    for event, *_ in _HOOKS:
        if not data["hooks"].get(event):
            del data["hooks"][event]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return HookInstall(settings_file=path, command=command, status="installed", snapshot=snapshot)


def _command(event: str, db: Path, flags: tuple[str, ...]) -> str:
    """The shell command of one hook: this installation's interpreter (so a hook runs the version the nightly
    runs), isolated (`-I`: the session's folder is not on its import path, so a repository cannot stand in for
    the runner), the runner, and the database."""
    parts = (sys.executable, "-I", "-m", _RUNNER, event, "--db", str(db.resolve()), *flags)
    return " ".join(shlex.quote(part) for part in parts)


def uninstall_hook(scope: Literal["project", "user"], project: Path) -> HookInstall:
    """Take our hooks out of the settings file again; everything else stays as it is.

    Raises:
        PlaybookFileError: the settings file is not a JSON object (left as it was).
    """
    path = _settings_file(scope, project)
    data = _load_settings(path)
    hooks = data.get("hooks", {})
    if not any(_has_ours(hooks.get(event)) for event, *_ in _HOOKS):
        return HookInstall(settings_file=path, command="", status="absent")
    for event, *_ in _HOOKS:
        groups = hooks.get(event)
        if not _has_ours(groups):
            continue
        kept = _without_ours(groups)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return HookInstall(settings_file=path, command="", status="removed")
