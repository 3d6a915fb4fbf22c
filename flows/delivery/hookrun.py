"""The hooks as Claude Code runs them: `python -m flows.delivery.hookrun EVENT --db DB` reads the event's JSON on
stdin, answers from the snapshot beside the database, and appends what it gave to the exposure ledger.

Events: `session-start` (the project's playbooks, or with `--digest` each one's digest), `user-prompt-submit` (the
entries the prompt calls up), `pre-tool-use` (the guards a shell command sets off: the lesson as context, or a
refusal for a rule the user made hard). Standard library only, and no database: a hook starts, answers and ends in
milliseconds, and a nightly run holding the database never delays a session. It fails open: on any error, a
missing snapshot, input it does not recognise or more than half a second of work, it prints nothing and exits 0.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.hooks import SESSION_ID, Given, guard_answer, prompt_context, start_context
from core.io.files import append_line

__all__ = ["EVENTS", "MAX_INPUT", "answer", "ledger_path", "main", "read_snapshot", "snapshot_path"]

EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit", "pre-tool-use": "PreToolUse"}
_SESSION = re.compile(SESSION_ID)
_WORK_LIMIT_S = 0.5  # past this the hook gives up in silence: no session waits on playbook
_SHELLS = frozenset({"Bash"})
MAX_INPUT = 1 << 20  # of the event on stdin, what a hook reads: Claude Code's events are a few KB
MAX_SNAPSHOT = 64 << 20  # a snapshot file larger than this (or not a regular file) is not ours
_CWD_CHARS = 4096
_START_SOURCES = frozenset({"startup", "resume", "clear", "compact"})
_PROMPT_CHARS = 20_000  # of a prompt, what the prompt hook reads


def snapshot_path(db: Path, part: str = "snapshot") -> Path:
    """The playbooks as the hooks give them (beside the database), one file per hook so that each reads only what
    it needs: `snapshot` (SessionStart: the entries), `prompt` (the entries and their index), `guards`."""
    return db.parent / "hook" / f"{db.stem}-{part}.json"


def ledger_path(db: Path) -> Path:
    """The hooks' append-only exposure ledger (beside the database)."""
    return db.parent / "hook" / f"{db.stem}-exposure.jsonl"


def read_snapshot(db: Path, part: str = "snapshot") -> dict[str, Any]:
    """One of the snapshot's files as JSON, or {} when it is missing, not a regular file, too large or not a JSON
    object (the timer cannot interrupt a read or a parse: both are bounded here instead)."""
    path = snapshot_path(db, part)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SNAPSHOT:
            return {}
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = json.loads(fh.read(MAX_SNAPSHOT + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else {}


def _record(db: Path, event: dict[str, Any], cwd: str, source: str, got: list[Given]) -> None:
    line = {
        "session_id": event["session_id"],
        "at": datetime.now(UTC).isoformat(),
        "cwd": cwd,
        "source": source,
        "playbooks": [g.line() for g in got],
    }
    try:
        # One write with O_APPEND (hooks of sessions that run together never interleave), never through a link.
        append_line(ledger_path(db), json.dumps(line, ensure_ascii=False) + "\n")
    except Exception as exc:  # the session still gets its lessons; only the record is missing
        print(f"playbook hook: exposure not recorded: {exc}", file=sys.stderr)


def _output(name: str, **fields: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": name, **fields}}, ensure_ascii=False)


class _TooSlow(Exception):
    pass


def _give_up(signum: int, frame: object) -> None:
    raise _TooSlow


def answer(event_name: str, db: Path, stdin: str, *, digest: bool = False) -> str:
    """What the hook `event_name` prints for the event JSON `stdin` (Claude Code's documented hook input), or ""
    when there is nothing to give; what it gave is appended to the ledger. Never raises; gives up in silence after
    half a second of work (on the main thread, where a timer can interrupt it)."""
    timed = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGALRM, _give_up) if timed else None
    if timed:
        signal.setitimer(signal.ITIMER_REAL, _WORK_LIMIT_S)
    try:
        if len(stdin) > MAX_INPUT:  # not an event of Claude Code's; parsing it could take longer than the timer
            return ""
        return _answer(event_name, db, stdin, digest)
    except _TooSlow:
        return ""
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, before)


def _answer(event_name: str, db: Path, stdin: str, digest: bool) -> str:
    try:
        event = json.loads(stdin)
        name = EVENTS[event_name]
        if not isinstance(event, dict) or not _SESSION.fullmatch(str(event.get("session_id", ""))):
            return ""
        given_cwd = event.get("cwd")
        cwd = given_cwd if isinstance(given_cwd, str) and len(given_cwd) <= _CWD_CHARS else ""
        part = {"SessionStart": "snapshot", "UserPromptSubmit": "prompt", "PreToolUse": "guards"}[name]
        snapshot = read_snapshot(db, part)
        if not snapshot:
            return ""
        if name == "SessionStart":
            text, got = start_context(snapshot, event["session_id"], cwd, digest=digest)
            source = event.get("source") if event.get("source") in _START_SOURCES else "startup"
            _record(db, event, cwd, str(source), got)
            return _output(name, additionalContext=text) if text else ""
        if name == "UserPromptSubmit":
            prompt = event.get("prompt")
            if not isinstance(prompt, str):
                return ""
            # A pasted log says little about what the request is about, and reading it all would take the time.
            text, got = prompt_context(snapshot, event["session_id"], cwd, prompt[:_PROMPT_CHARS])
            if got:
                _record(db, event, cwd, name, got)
            return _output(name, additionalContext=text) if text else ""
        tool_input = event.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if event.get("tool_name") not in _SHELLS or not isinstance(command, str):
            return ""
        decision, text, got = guard_answer(snapshot, event["session_id"], cwd, command)
        if got:
            _record(db, event, cwd, name, got)
        if decision == "deny":
            return _output(name, permissionDecision="deny", permissionDecisionReason=text)
        return _output(name, additionalContext=text) if text else ""
    except Exception:  # a session must go on whatever happened here
        return ""


def main(argv: list[str] | None = None) -> int:
    """`EVENT --db DB [--digest]`: answer one hook event read from stdin. Always exits 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        event_name = args[0]
        db = Path(args[args.index("--db") + 1])
    except (IndexError, ValueError):
        return 0
    signal.signal(signal.SIGALRM, _give_up)
    signal.setitimer(signal.ITIMER_REAL, _WORK_LIMIT_S)  # a writer that never closes stdin does not hold us
    try:
        stdin = sys.stdin.buffer.read(MAX_INPUT + 1).decode("utf-8", errors="replace")  # bounded
    except (OSError, _TooSlow):
        return 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    printed = answer(event_name, db, stdin, digest="--digest" in args)
    if printed:
        sys.stdout.write(printed + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
