"""One run of a model's CLI: the prompt in on standard input, its output read up to `MAX_ANSWER_BYTES`, the whole
run within a timeout, and nothing of it left running after.

`subprocess.run(capture_output=True)` reads all a child prints into memory: a CLI that printed without end would
take the process with it. Here the pipes are read as the output comes, by one thread with a selector (as
`Popen.communicate` does on POSIX), and the child is killed at the bound or the timeout. It runs in a process
group of its own, so killing it kills what it started too (a helper still holding the output pipe would keep
the read waiting).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Literal

from core.llm.base import MAX_ANSWER_BYTES

__all__ = ["CliRun", "run_cli"]

_CHUNK = 64 * 1024


@dataclass(frozen=True)
class CliRun:
    """How one run went: its exit code (None when it was stopped), what it printed (as UTF-8, any other byte
    replaced), and why it was stopped: it ran past its timeout, or printed more than the bound."""

    returncode: int | None
    stdout: str
    stderr: str
    stopped: Literal["timeout", "too_large"] | None = None


def run_cli(
    args: list[str],
    *,
    stdin: str,
    timeout: float,
    env: dict[str, str],
    cwd: str | None = None,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> CliRun:
    """Run `args` in `cwd` with `env`, `stdin` written to it, for at most `timeout` seconds and `max_bytes` of
    output on each of stdout and stderr.

    Raises:
        OSError: the executable could not be started (missing, not executable, or its arguments too long).
    """
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,  # its own process group, killed as one
    )
    out, err = bytearray(), bytearray()
    try:
        stopped = _exchange(proc, stdin.encode("utf-8"), time.monotonic() + timeout, max_bytes, out, err)
    finally:
        if proc.returncode is None:  # stopped, or interrupted (Ctrl-C): it must not outlive the call
            # Not reaped yet, so the group id is still this child's own: no other process can hold it.
            with contextlib.suppress(ProcessLookupError, PermissionError):  # gone already (macOS: EPERM for zombies)
                os.killpg(proc.pid, signal.SIGKILL)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        proc.wait()
    return CliRun(
        returncode=None if stopped else proc.returncode,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        stopped=stopped,
    )


def _exchange(
    proc: subprocess.Popen[bytes], data: bytes, deadline: float, max_bytes: int, out: bytearray, err: bytearray
) -> Literal["timeout", "too_large"] | None:
    """Write `data` to the child and read its two outputs into `out` and `err` until it closes them and exits;
    stop early (and say why) at `deadline` or when an output passes `max_bytes`."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None  # all three are pipes
    pending = memoryview(data)
    with selectors.DefaultSelector() as selector:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(stream.fileno(), False)
        if pending:
            selector.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            for key, _ in selector.select(left):
                pipe = key.fileobj
                if pipe is proc.stdin:
                    try:
                        pending = pending[os.write(proc.stdin.fileno(), pending[:_CHUNK]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # it stopped reading: what it printed says why
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                buffer = out if pipe is proc.stdout else err
                try:
                    chunk = os.read(key.fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(pipe)
                    continue
                buffer += chunk
                if len(buffer) > max_bytes:
                    return "too_large"
    try:
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return "timeout"
    return None
