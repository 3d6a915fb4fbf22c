"""Prefect settings for local runs (the costs are measured by bench/bench_cli.py and bench/bench_pipeline.py).

The environment defaults (telemetry off, quiet logs) are set by `flows/__init__.py`, which runs before
any module of the shell can import Prefect. Here: the ephemeral server's exit noise is silenced, and with
no Prefect server configured, flow heartbeats are disabled, which otherwise cost ~1 s per flow run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

import prefect.settings as prefect_settings
from prefect.settings import temporary_settings

# The ephemeral server drops task-run events at exit and logs a traceback for it; our metrics live in
# DuckDB, so that noise is silenced.
logging.getLogger("prefect.server.services.task_run_recorder").setLevel(logging.CRITICAL)
logging.getLogger("prefect.server").setLevel(logging.CRITICAL)


class _OurErrorsInOneLine(logging.Filter):
    """A flow that fails on purpose (every session failed, a bad setting) raises one of our errors so the
    flow run is Failed; the CLI prints that error in one line, so Prefect's log keeps the message and drops
    the traceback. Anything else keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        from core.errors import PlaybookError

        if record.exc_info and isinstance(record.exc_info[1], PlaybookError):
            record.exc_info = None
            record.exc_text = None
            record.playbook_error = True
        return True


class _SaidByTheCommand(logging.Filter):
    """On the terminal of a command that runs a flow, that error is the command's own `Error: ...` line; Prefect's
    copy of it would be a second one. (The API handler, which feeds the Prefect UI, still gets the record.)"""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "playbook_error", False)


for _name in ("prefect.flow_runs", "prefect.task_runs"):
    logging.getLogger(_name).addFilter(_OurErrorsInOneLine())

__all__ = ["local_run"]


@contextmanager
def _one_error_line() -> Iterator[None]:
    said = _SaidByTheCommand()
    consoles = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    for handler in consoles:
        handler.addFilter(said)
    try:
        yield
    finally:
        for handler in consoles:
            handler.removeFilter(said)


@contextmanager
def local_run() -> Iterator[None]:
    """A flow run from a command: heartbeats off unless a Prefect server is configured (PREFECT_API_URL), and
    our own errors said once, by the command."""
    with _one_error_line():
        if os.environ.get("PREFECT_API_URL"):
            yield
            return
        with temporary_settings(updates={prefect_settings.PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield
