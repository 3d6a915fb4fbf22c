"""Prefect settings for local runs, applied before Prefect is imported (measured costs in DESIGN.md).

Telemetry is off; Prefect's own per-task logging is quiet (the CLI prints progress and a summary); and
with no Prefect server configured, flow heartbeats are disabled, which otherwise cost ~1 s per flow run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")

import prefect.settings as prefect_settings
from prefect.settings import temporary_settings

# The ephemeral server drops task-run events at exit and logs a traceback for it; our metrics live in
# DuckDB, so that noise is silenced.
logging.getLogger("prefect.server.services.task_run_recorder").setLevel(logging.CRITICAL)
logging.getLogger("prefect.server").setLevel(logging.CRITICAL)

__all__ = ["local_run"]


@contextmanager
def local_run() -> Iterator[None]:
    """Heartbeats off unless a Prefect server is configured (PREFECT_API_URL)."""
    if os.environ.get("PREFECT_API_URL"):
        yield
        return
    with temporary_settings(updates={prefect_settings.PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield
