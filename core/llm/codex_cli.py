"""Learning with a ChatGPT plan and no API key: each request runs `codex exec --json` (the Codex CLI without its
interface), the prompt on standard input, and reads its JSONL events: the last `agent_message` item is the
answer, `turn.completed` carries the usage, `turn.failed` and `error` say what went wrong (the event shapes of
codex-rs/exec/src/exec_events.rs). Never raises: every failure comes back as `LLMResponse.error`; a turn that
failed because the Responses API stopped at the output limit ("Incomplete response returned, reason:
max_output_tokens") is a failed call of its own kind (`truncated`), and output past `MAX_ANSWER_BYTES` is one
too (`bad_reply`, the CLI stopped there). Nothing of the prompt is on the command line, which has a size bound."""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

from core.llm._cli_run import run_cli
from core.llm.base import Failure, LLMRequest, LLMResponse, Provider, Usage, answer_too_large, failed

__all__ = ["ISOLATION", "CodexCliProvider", "cli_arguments"]

# Nothing of the user's Codex set-up may act during a curation call: no config.toml (its MCP servers, profiles,
# notify hooks), no execution-policy rules, a read-only sandbox in an empty folder of its own, no session file.
# Flags as codex-rs/exec/src/cli.rs declares them; the login (CODEX_HOME/auth.json) is still used.
ISOLATION = [
    "--ignore-user-config",
    "--ignore-rules",
    "--sandbox",
    "read-only",
    "--skip-git-repo-check",
    "--ephemeral",
    "--color",
    "never",
]


def cli_arguments(executable: str, folder: str, model: str | None) -> list[str]:
    """The command line for one request: JSONL events, isolated (`ISOLATION`), the prompt read from stdin."""
    chosen = ["--model", model] if model else []
    return [executable, "exec", "--json", *ISOLATION, "--cd", folder, *chosen, "-"]


def _events(stdout: str) -> list[dict[str, Any]]:
    found = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            found.append(event)
    return found


class CodexCliProvider(Provider):
    """Runs the `codex` CLI once per request (the run's `concurrency` bounds how many at a time)."""

    name = "codex-cli"
    cacheable = True

    def __init__(self, executable: str = "codex", *, model: str | None = None, timeout: float = 300.0) -> None:
        """`model`: passed as `--model` (None: the CLI's own default); `timeout`: seconds one run may take."""
        self.executable = executable
        self.model = model
        self.timeout = timeout

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One CLI run; the last agent message is the model's text."""
        started = time.perf_counter()
        # Codex has no system-prompt flag in exec mode: the instructions come first in the one prompt.
        prompt = f"{request.system}\n\n{request.user}"
        try:
            with tempfile.TemporaryDirectory(prefix="playbook-codex-") as empty:
                done = run_cli(
                    cli_arguments(self.executable, empty, self.model),
                    stdin=prompt,
                    timeout=self.timeout,
                    cwd=empty,
                    env=dict(os.environ),
                )
        except OSError as exc:
            return failed(
                self.name, request, f"cannot run `{self.executable}`: {exc.strerror or exc}", "other", started
            )
        if done.stopped == "timeout":
            return failed(
                self.name, request, f"timeout: `codex exec` ran over {self.timeout:.0f} s", "timeout", started
            )
        if done.stopped == "too_large":
            return failed(self.name, request, answer_too_large("`codex exec`"), "bad_reply", started)
        events = _events(done.stdout)
        errors = [
            str((e.get("error") or {}).get("message") if e["type"] == "turn.failed" else e.get("message"))
            for e in events
            if e["type"] in ("turn.failed", "error")
        ]
        answers = [
            e["item"].get("text")
            for e in events
            if e["type"] == "item.completed"
            and isinstance(e.get("item"), dict)
            and e["item"].get("type") == "agent_message"
        ]
        if errors or not answers:
            said = " ".join((errors[-1] if errors else done.stderr or done.stdout or "").split())[:300]
            said = said or f"exit code {done.returncode}"
            lowered = said.lower()
            if "max_output_tokens" in lowered:  # the Responses API's `response.incomplete`, as codex reports it
                return failed(self.name, request, f"truncated: `codex exec` reported: {said}", "truncated", started)
            failure: Failure = (
                "auth"
                if "log in" in lowered or "not logged in" in lowered or "login" in lowered
                else ("other" if errors else "bad_reply")
            )
            return failed(self.name, request, f"`codex exec` gave no answer: {said}", failure, started)
        usage = next((e.get("usage") for e in reversed(events) if e["type"] == "turn.completed"), None)
        counted: dict[str, Any] = usage if isinstance(usage, dict) else {}
        cached = int(counted.get("cached_input_tokens") or 0)
        return LLMResponse(
            text=str(answers[-1] or ""),
            provider=self.name,
            model=self.model or request.model,
            usage=Usage(
                input_tokens=max(0, int(counted.get("input_tokens") or 0) - cached),
                output_tokens=int(counted.get("output_tokens") or 0),
                cache_read_tokens=cached,
            ),
            cost_usd=0.0,  # the plan pays: nothing is billed per token
            latency_ms=(time.perf_counter() - started) * 1000,
        )
