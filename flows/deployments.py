"""The deployments of prefect.yaml as Python objects, for `playbook serve` (no work pool needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from flows.pipeline import backfill_flow, nightly_flow

__all__ = ["PREFECT_YAML", "deployments", "serve_all"]

# Package data beside this module, so an installed wheel serves the same deployments as a checkout.
PREFECT_YAML = Path(__file__).resolve().parent / "prefect.yaml"
FLOWS: dict[str, Any] = {
    "flows/pipeline.py:nightly_flow": nightly_flow,
    "flows/pipeline.py:backfill_flow": backfill_flow,
}


def deployments(path: Path = PREFECT_YAML) -> list[Any]:
    """`RunnerDeployment`s with the names, parameters and schedules declared in prefect.yaml."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    built = []
    for item in spec["deployments"]:
        schedules = item.get("schedules") or []
        cron = schedules[0]["cron"] if schedules else None
        built.append(
            FLOWS[item["entrypoint"]].to_deployment(
                name=item["name"],
                description=item.get("description"),
                parameters=item.get("parameters") or {},
                cron=cron,
            )
        )
    return built


def serve_all() -> None:
    """Serve every deployment from this process until interrupted (needs PREFECT_API_URL)."""
    from prefect import serve

    serve(*deployments())
