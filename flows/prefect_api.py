"""Which Prefect API a run reports to, found without importing Prefect (which costs seconds): the environment, else
the active profile's file; and whether it answers."""

from __future__ import annotations

import os
import tomllib
import urllib.request
from pathlib import Path

__all__ = ["HEALTH_TIMEOUT_S", "answers", "prefect_api"]

HEALTH_TIMEOUT_S = 5.0


def prefect_api() -> str | None:
    """The Prefect API runs report to: `PREFECT_API_URL`, else the active profile's in `$PREFECT_HOME/profiles.toml`
    (read as a file: importing Prefect costs seconds); None when there is none. `PLAYBOOK_PREFECT=ephemeral` asks
    for Prefect's own ephemeral server even so."""
    if os.environ.get("PLAYBOOK_PREFECT") == "ephemeral":
        return "ephemeral"
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    try:
        profiles = tomllib.loads((home / "profiles.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or profiles.get("active")
    found = profiles.get("profiles", {}).get(active, {}).get("PREFECT_API_URL") if isinstance(active, str) else None
    return str(found) if found else None


def answers(api: str) -> bool:
    """True when the Prefect API answers its health check in time (the ephemeral server is started by Prefect)."""
    if api == "ephemeral":
        return True
    try:
        with urllib.request.urlopen(f"{api.rstrip('/')}/health", timeout=HEALTH_TIMEOUT_S) as response:
            return bool(response.status == 200)
    except (OSError, ValueError):
        return False
