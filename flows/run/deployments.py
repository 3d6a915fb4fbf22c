"""The deployments of prefect.yaml as Python objects, for `playbook serve` (no work pool needed)."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from prefect import flow
from prefect.schedules import Cron

from core.errors import ConfigError
from core.io.objects import is_url
from core.runsummary import RunSummary
from core.selection import SessionFilter
from flows.config import load_settings
from flows.run.nightly import curate_for_nightly
from flows.run.pipeline import backfill_flow, model_call_slot, nightly_flow, task_steps
from flows.workspace import Workspace

__all__ = ["FLOWS", "PREFECT_YAML", "backfill", "curate_playbook", "deployments", "nightly", "serve_all"]


# A deployment's parameters are strings: these adapters resolve them at the edge, as the CLI does, and hand the
# flows typed values.
@flow(name="nightly", log_prints=True)
def nightly(llm: str = "anthropic", transcripts: list[str] | None = None) -> list[RunSummary]:
    """The nightly deployment: the settings of this machine, `llm` resolved here; `transcripts` (folders or
    object-storage URLs) instead of the configured ones."""
    ws = Workspace.of(load_settings())
    sources: list[Path | str] = [t if is_url(t) else Path(t) for t in transcripts or []]
    return nightly_flow.fn(ws, ws.provider(llm), sources or None)


@flow(name="curate-playbook", log_prints=True)
def curate_playbook(playbook: str, llm: str = "anthropic") -> RunSummary:
    """One playbook's part of a nightly that fans out (`shard = "playbook"`, `work_pool`): its curation run on
    its own shard, under the shard's lock, each model call holding a slot of `model_calls_limit`, then a
    consolidation when it needs one; the nightly that submitted it writes the reports and publishes."""
    ws = Workspace.of(load_settings())
    db, spec = ws.database(playbook), ws.provider(llm)
    with db.lock(f"playbook curate-playbook {playbook}", patient=True):
        return curate_for_nightly(ws, playbook, spec, steps=task_steps(spec), slot=model_call_slot(ws))


@flow(name="backfill", log_prints=True)
def backfill(since: datetime, until: datetime, llm: str = "batch", epoch_size: int = 50) -> RunSummary:
    """The backfill deployment: one date range of the configured playbook, through batches by default."""
    ws = Workspace.of(load_settings())
    chosen = SessionFilter(since=since, until=until, epoch_size=epoch_size)
    return backfill_flow.fn(ws, ws.provider(llm), ws.playbook, chosen)


# Package data beside this module (a link to the repository root's prefect.yaml, copied into the wheel as a file),
# so an installed wheel serves the same deployments as a checkout.
PREFECT_YAML = Path(__file__).resolve().parent / "prefect.yaml"
FLOWS: dict[str, Any] = {
    "flows/run/deployments.py:nightly": nightly,
    "flows/run/deployments.py:backfill": backfill,
    "flows/run/deployments.py:curate_playbook": curate_playbook,
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

    Raises:
        ConfigError: PREFECT_API_URL is not set (schedules need a running server).
    """
    if not os.environ.get("PREFECT_API_URL"):
        raise ConfigError(
            "Schedules need a running Prefect server; start one with `prefect server start` and set"
            " PREFECT_API_URL=http://127.0.0.1:4200/api."
        )
    from prefect import serve

    serve(*deployments(), pause_on_shutdown=False)
