"""Hook refusals: a call a hook the user configured refused. One whose message named another program that then
worked in the shell (`hooked`: said as that program, held for a person to read), and a change to a file of the
project refused once as a warning and let through when made again (`warned`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePosixPath

import re2

from core.corrections import PROJECT_PATH, Found, bypasses
from core.failures import error_line
from core.lessons import Command, Correction
from core.models import SessionMessage
from core.programs import INTERPRETERS, RUNS_ANYTHING, SHELLS, program_family
from core.runs import SHELL_TOOLS, Run, command_key, command_of, key_words, parse, relative

__all__ = ["hooked", "warned"]


# Claude Code's words when a PreToolUse hook refused a call: the tool, the hook's command in brackets, then the
# hook's own message. Claude Code writes it in place of the call's result (a shell command that failed begins
# `Exit code N` instead), so a program's output cannot pass for it.
_HOOK_REFUSED = re2.compile(r"^PreToolUse:(\w+) hook (?:error|blocking error)[^:\n]*: (?:\[[^\]\n]*\]: )?")
_HOOK_WORD = re2.compile(r"[\w.-]+")
# Calls after a refusal in which the program the hook's message named must have worked.
_MOST_AFTER = 3


def hooked(messages: Sequence[SessionMessage], runs: Sequence[Run]) -> list[Found]:
    """A call a hook of the user's refused (their configuration: the hook's message is theirs, not a page's), whose
    message named a program the agent then ran in the shell (`runs`, the session's), and it worked within the next
    few commands: one
    correction per refused tool or command, said as the program that worked (`WebFetch` -> `defuddle parse`)."""
    if not any(m.is_error and m.kind == "tool_result" and (m.text or "").startswith("PreToolUse:") for m in messages):
        return []  # most sessions: no hook refused anything
    calls = {m.tool_use_id: m for m in messages if m.kind == "tool_use" and m.tool_use_id and not m.is_sidechain}
    by_call = {run.call_id: run for run in runs}
    found: dict[str, Found] = {}
    refused: tuple[tuple[str, ...], set[str], str] | None = None  # what was refused, the message's words, its line
    after = 0
    for m in messages:
        if m.kind != "tool_result" or m.is_sidechain or m.tool_use_id not in calls:
            continue
        call = calls[m.tool_use_id]
        hook = _HOOK_REFUSED.match(m.text or "") if m.is_error else None
        if hook is not None and hook.group(1) == call.tool_name:
            what: tuple[str, ...] = (hook.group(1),)
            if call.tool_name in SHELL_TOOLS and (shell := command_of(call.tool_input)) is not None:
                parsed = parse(*shell)
                what = key_words(command_key(parsed.words)) if parsed is not None else what
            message = (m.text or "")[hook.end() :]
            refused, after = (what, set(_HOOK_WORD.findall(message)), error_line(message) or "refused by a hook"), 0
            continue
        run = by_call.get(m.tool_use_id or "")
        if refused is None or run is None:
            continue
        after += 1
        worked = parse(run.command, run.folder) if run.ok else None
        if (
            worked is not None
            and _instead(refused[0], worked.words)
            and PurePosixPath(worked.words[0]).name in refused[1]
        ):
            key = " ".join(refused[0])
            lesson = Correction(
                how="hook", failed=Command(words=refused[0]), worked=Command(words=key_words(command_key(worked.words)))
            )
            found.setdefault(key, Found(f"correction|hook|{key}", lesson, refused[2], _HOOK_NAMED))
            refused = None
        elif after >= _MOST_AFTER:
            refused = None
    return list(found.values())


# A hook's message is configuration, the user's or a repository's (`.claude/settings.json` comes with a clone), and
# may name any program: what it asked for waits for a person (`curl`, `scp`, `nc` were named in an attack).
_HOOK_NAMED = "the program came from a hook's message, which a cloned repository may have written: a person reads it"


def _instead(refused: Sequence[str], words: Sequence[str]) -> bool:
    """True when `words`, a command a hook's message named, may be taught as what to use instead of the `refused`
    call: another program than the refused one (the same program with other arguments is the hook's policy for that
    program, `git push origin feature:main`, which only the user may state), no shell or interpreter (which runs
    whatever it is given), and nothing that switches a safeguard off."""
    family = program_family(PurePosixPath(words[0]).name)
    if family in SHELLS or family in INTERPRETERS or family in RUNS_ANYTHING:
        return False
    return family != program_family(PurePosixPath(refused[0]).name) and not bypasses(words)


# Claude Code's tools that change one file, and the field that names it.
_FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_FILE_FIELDS = ("file_path", "notebook_path")


def _file_of(tool_input: str | None) -> str | None:
    try:
        value = json.loads(tool_input or "")
    except ValueError:
        return None
    found = next((value.get(f) for f in _FILE_FIELDS if isinstance(value, dict) and f in value), None)
    return found if isinstance(found, str) else None


def warned(messages: Sequence[SessionMessage], cwd: str | None) -> list[Found]:
    """A change to a file of the project that a hook of the user's refused (Claude Code's `PreToolUse:Write hook
    error`), then let through when the agent made it again with the same tool on the same file: the hook warns
    once. One correction per project folder, said with the tool it refused first."""
    if not any(m.is_error and m.kind == "tool_result" and (m.text or "").startswith("PreToolUse:") for m in messages):
        return []  # most sessions: no hook refused anything
    calls = {m.tool_use_id: m for m in messages if m.kind == "tool_use" and m.tool_use_id and not m.is_sidechain}
    refused: dict[tuple[str, str], str] = {}  # (tool, file) -> the hook's line (evidence)
    found: dict[str, Found] = {}
    for m in messages:
        call = calls.get(m.tool_use_id or "") if m.kind == "tool_result" and not m.is_sidechain else None
        if call is None or call.tool_name not in _FILE_TOOLS or (path := _file_of(call.tool_input)) is None:
            continue
        hook = _HOOK_REFUSED.match(m.text or "") if m.is_error else None
        if hook is not None and hook.group(1) == call.tool_name:
            refused.setdefault((call.tool_name, path), error_line((m.text or "")[hook.end() :]) or "refused by a hook")
            continue
        said = refused.pop((call.tool_name, path), None)
        folder = relative(str(PurePosixPath(path).parent), cwd) if said is not None and not m.is_error else None
        if said is None or folder is None or not PROJECT_PATH.match(folder) or folder in found:
            continue
        lesson = Correction(how="warned", failed=Command(words=(call.tool_name,)), under=folder)
        found[folder] = Found(f"correction|warned|{folder}", lesson, said, None)
    return list(found.values())
