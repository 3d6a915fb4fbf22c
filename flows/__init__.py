"""The imperative shell: the run loop, Prefect flows and tasks, and the `playbook` CLI.

Prefect reads its settings from the environment when it is imported; every module of this package is
imported after this file runs, so these defaults hold whatever imports Prefect first.
"""

from __future__ import annotations

import os

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")

__all__: list[str] = []
