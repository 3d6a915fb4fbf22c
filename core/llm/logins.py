"""Whether the subscription CLIs here are logged in, asked without spending a request.

`claude auth status --json` prints `{"loggedIn": true, "authMethod": "claude.ai", ...}` (`false` when not);
`codex login status` exits 0 with `Logged in using ChatGPT` (or `... an API key`) and 1 with `Not logged in`.
A CLI that is missing, hangs or answers something else counts as not logged in: `auto` then tries the next
choice rather than stopping on a guess.
"""

from __future__ import annotations

import json
import os
import shutil

from core.llm._cli_run import run_cli

__all__ = ["claude_login", "codex_login"]

_TIMEOUT_S = 15.0
_MAX_BYTES = 1024 * 1024  # a status is one line; a CLI printing more is not answering the question
# Set inside a Claude Code session (a hook running `playbook`): the child would take itself for a nested session.
_NESTED = {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_PROJECT_DIR"}


def _run(args: list[str]) -> tuple[int, str] | None:
    if shutil.which(args[0]) is None:
        return None
    try:
        done = run_cli(
            args,
            stdin="",
            timeout=_TIMEOUT_S,
            env={k: v for k, v in os.environ.items() if k not in _NESTED},
            max_bytes=_MAX_BYTES,
        )
    except OSError:
        return None
    if done.returncode is None:  # ran over its time, or printed without end
        return None
    return done.returncode, f"{done.stdout}\n{done.stderr}"


def claude_login(executable: str = "claude") -> str | None:
    """How `claude` is logged in (`claude.ai`, `apiKey`, ...), or None when it is not (or cannot say)."""
    found = _run([executable, "auth", "status", "--json"])
    if found is None:
        return None
    for line in found[1].splitlines():
        try:
            status = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(status, dict) and status.get("loggedIn") is True:
            return str(status.get("authMethod") or "logged in")
    return None


def codex_login(executable: str = "codex") -> str | None:
    """How `codex` is logged in (`ChatGPT`, `an API key`), or None when it is not (or cannot say)."""
    found = _run([executable, "login", "status"])
    if found is None or found[0] != 0:
        return None
    line = next((x.strip() for x in found[1].splitlines() if x.strip().startswith("Logged in")), None)
    if line is None:
        return None
    return line.removeprefix("Logged in using").strip().split(" - ")[0] or "logged in"
