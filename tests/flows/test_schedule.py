"""The nightly deployment against a real `prefect server`: served from prefect.yaml, it gets scheduled runs
at 03:00 UTC (time zone kept), a triggered run completes with the heuristic provider on the bundled
samples, and stopping the server process leaves the schedule active."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from tests.servers import stop

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture
def client(prefect_api: str) -> Iterator[Any]:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: prefect_api}), get_client(sync_client=True) as api:
        yield api


def wait_for(what: str, probe: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def test_served_nightly_is_scheduled_at_three_utc_and_a_triggered_run_completes(
    prefect_api: str, client: Any, tmp_path: Path
) -> None:
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PLAYBOOK_", "ANTHROPIC_"))}
    env.update(
        PREFECT_API_URL=prefect_api,
        PREFECT_RUNNER_POLL_FREQUENCY="1",
        PLAYBOOK_DB=str(tmp_path / "served.duckdb"),
        PLAYBOOK_OUT_DIR=str(tmp_path / "out"),
        HOME=str(tmp_path / "home"),
    )
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("playbook")), "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def deployment() -> Any:
            try:
                return client.read_deployment_by_name("nightly/nightly")
            except Exception:
                assert server.poll() is None, log.read_text()[-3000:]
                return None

        nightly = wait_for("the served nightly deployment", deployment, 120)
        (schedule,) = nightly.schedules
        assert (schedule.schedule.cron, schedule.schedule.timezone, schedule.active) == ("0 3 * * *", "UTC", True)
        by_deployment = DeploymentFilter(id=DeploymentFilterId(any_=[nightly.id]))
        scheduled = FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED])))
        runs = wait_for(
            "runs created by the server's scheduler",
            lambda: client.read_flow_runs(deployment_filter=by_deployment, flow_run_filter=scheduled),
            60,
        )
        for run in runs:
            start = run.expected_start_time.astimezone(UTC)
            assert (start.hour, start.minute) == (3, 0), start
        triggered = client.create_flow_run_from_deployment(
            nightly.id,
            parameters={
                "llm": "heuristic",
                "transcripts": [str(ROOT / "data" / "samples" / "claude-code" / "spotter" / "short.jsonl")],
            },
        )
        final = wait_for(
            "the triggered nightly run to finish",
            lambda: (r := client.read_flow_run(triggered.id)).state and r.state.is_final() and r,
            240,
        )
        assert final.state.is_completed(), (final.state, log.read_text()[-3000:])
        assert (tmp_path / "out" / "default.md").read_text().startswith("# Playbook `default`")
    finally:
        stop(server)
    after = client.read_deployment_by_name("nightly/nightly")
    assert after.paused is False and after.schedules[0].active  # stopping `serve` left the schedule on
