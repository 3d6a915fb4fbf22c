"""Learning with a Claude subscription and no API key: each request runs `claude -p --output-format json`
(the Claude Code CLI in print mode), the prompt on standard input and the system prompt in a file, and its JSON
envelope is parsed (result text, usage, the cost it reports). Never raises: every failure shape comes back as
`LLMResponse.error`; an answer that stopped at the output limit (the envelope's `stop_reason` `max_tokens`, or the
CLI's own "exceeded the ... output token maximum" error) is a failed call (`truncated`), and so is output past
`MAX_ANSWER_BYTES` (`bad_reply`, the CLI stopped there)."""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

from core.llm._cli_run import run_cli
from core.llm.base import Failure, LLMRequest, LLMResponse, Provider, Usage, answer_too_large, cut_short, failed
from core.llm.pricing import CostCap

__all__ = ["ISOLATION", "ClaudeCliProvider", "cli_arguments"]

# Set inside a Claude Code session (a hook running `playbook`): the child would take itself for a nested session.
_INHERITED_NOT = {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_PROJECT_DIR"}


# Nothing of the user's own Claude Code set-up may act during a curation call: their hooks (a SessionEnd hook
# could run `playbook push`), settings, plugins, MCP servers, skills and slash commands, CLAUDE.md files, tools;
# and the call leaves no session file of its own. Flags as Claude Code's CLI reference gives them (`--bare` would
# do most of it but refuses subscription logins, the reason this provider exists).
ISOLATION = [
    "--setting-sources=",  # no user, project or local settings: their hooks, plugins and permissions stay out
    "--strict-mcp-config",  # only the MCP servers given here, and none are
    "--mcp-config",
    '{"mcpServers":{}}',
    "--tools",
    "",  # no tool at all: the model reads text and answers
    "--disable-slash-commands",
    "--no-session-persistence",  # no transcript of this call under ~/.claude/projects
]


def cli_arguments(executable: str, request: LLMRequest, system_file: str) -> list[str]:
    """The command line for one request: print mode, JSON envelope, one turn, the system prompt replaced by the
    one in `system_file`, and nothing of the user's set-up (`ISOLATION`).

    The system prompt holds the playbook, hundreds of KB for a large one: on the command line it would pass the
    kernel's bound on one argument (128 KiB on Linux) and every call would fail with "Argument list too long".
    `--system-prompt-file` (print mode only, Claude Code's CLI reference) reads it from a file instead.
    """
    return [
        executable,
        "-p",
        "--output-format",
        "json",
        "--model",
        request.model,
        "--max-turns",
        "1",
        "--system-prompt-file",
        system_file,
        *ISOLATION,
    ]


def _write_private(path: str, text: str) -> None:
    """`text` into a new file at `path` that only this user may read (it holds the playbook and the prompt)."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as fh:
        fh.write(text)


class ClaudeCliProvider(Provider):
    """Runs the `claude` CLI once per request (the run's `concurrency` bounds how many at a time)."""

    name = "claude-cli"
    cacheable = True

    def __init__(self, executable: str = "claude", *, timeout: float = 300.0, cost_cap: CostCap | None = None) -> None:
        """`timeout`: seconds one CLI run may take before it is stopped and recorded as a timeout."""
        self.executable = executable
        self.timeout = timeout
        self.cost_cap = cost_cap or CostCap(None)

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One CLI run; its envelope's `result` is the model's text."""
        if self.cost_cap.exhausted():
            return failed(self.name, request, self.cost_cap.message(), "cost_cap", time.perf_counter())
        started = time.perf_counter()
        try:
            # In a folder of its own (mode 0700) holding only the system prompt's file: no project CLAUDE.md,
            # .claude/ or .mcp.json is found from there, and no other user reads the prompt.
            with tempfile.TemporaryDirectory(prefix="playbook-claude-") as private:
                system_file = os.path.join(private, "system-prompt.txt")
                _write_private(system_file, request.system)
                done = run_cli(
                    cli_arguments(self.executable, request, system_file),
                    stdin=request.user,
                    timeout=self.timeout,
                    cwd=private,
                    env={k: v for k, v in os.environ.items() if k not in _INHERITED_NOT},
                )
        except OSError as exc:
            return failed(
                self.name, request, f"cannot run `{self.executable}`: {exc.strerror or exc}", "other", started
            )
        if done.stopped == "timeout":
            return failed(self.name, request, f"timeout: `claude -p` ran over {self.timeout:.0f} s", "timeout", started)
        if done.stopped == "too_large":
            return failed(self.name, request, answer_too_large("`claude -p`"), "bad_reply", started)
        envelope = _envelope(done.stdout)
        if envelope is None:
            said = " ".join((done.stderr or done.stdout or "").split())[:300] or f"exit code {done.returncode}"
            failure: Failure = "auth" if "login" in said.lower() or "auth" in said.lower() else "bad_reply"
            return failed(self.name, request, f"`claude -p` gave no JSON envelope: {said}", failure, started)
        said = " ".join(str(envelope.get("result") or envelope.get("subtype") or "error").split())[:300]
        if envelope.get("is_error") and "output token maximum" in said:  # Claude Code's own output limit
            return failed(self.name, request, f"truncated: `claude -p` reported: {said}", "truncated", started)
        if envelope.get("is_error") or envelope.get("subtype") not in (None, "success"):
            return failed(self.name, request, f"`claude -p` reported an error: {said}", "other", started)
        found = envelope.get("usage")
        usage: dict[str, Any] = found if isinstance(found, dict) else {}
        cost = float(envelope.get("total_cost_usd") or 0.0)
        self.cost_cap.add(cost)
        response = LLMResponse(
            text=str(envelope.get("result") or ""),
            provider=self.name,
            model=request.model,
            usage=Usage(
                input_tokens=int(usage.get("input_tokens") or 0),
                output_tokens=int(usage.get("output_tokens") or 0),
                cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
                cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            ),
            cost_usd=cost,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        if envelope.get("stop_reason") == "max_tokens":  # the result message's stop reason (Agent SDK docs)
            return cut_short(response, "`claude -p` said `stop_reason: max_tokens`")
        return response


def _envelope(stdout: str) -> dict[str, Any] | None:
    """The result object: the whole output, or the last JSON line of it (newer CLIs may print more)."""
    for candidate in [stdout, *reversed(stdout.strip().splitlines())]:
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict) and ("result" in data or "is_error" in data):
            return data
    return None
