"""The deployments of prefect.yaml as Python objects, for `playbook serve` (no work pool needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prefect.schedules import Cron

from flows.pipeline import backfill_flow, nightly_flow

__all__ = ["PREFECT_YAML", "deployments", "serve_all"]

# Package data beside this module, so an installed wheel serves the same deployments as a checkout.
PREFECT_YAML = Path(__file__).resolve().parent / "prefect.yaml"
FLOWS: dict[str, Any] = {
    "flows/pipeline.py:nightly_flow": nightly_flow,
    "flows/pipeline.py:backfill_flow": backfill_flow,
}


def deployments(path: Path = PREFECT_YAML) -> list[Any]:
    """`RunnerDeployment`s with the names, parameters and schedules (time zone included) of prefect.yaml."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    built = []
    for item in spec["deployments"]:
        schedules = [Cron(s["cron"], timezone=s.get("timezone")) for s in item.get("schedules") or []]
        built.append(
            FLOWS[item["entrypoint"]].to_deployment(
                name=item["name"],
                description=item.get("description"),
                parameters=item.get("parameters") or {},
                schedules=schedules or None,
            )
        )
    return built


def serve_all() -> None:
    """Serve every deployment from this process until interrupted (needs PREFECT_API_URL).

    Schedules stay active when it stops (`pause_on_shutdown=False`): a restart of the serving process
    must not silently stop the nightly runs.
    """
    from prefect import serve

    serve(*deployments(), pause_on_shutdown=False)
