"""prefect.yaml: the deployments exist, point at real flows, and carry the schedule and parameters."""

from __future__ import annotations

import inspect


def test_prefect_yaml_deployments() -> None:
    from flows.run.deployments import deployments

    built = {d.name: d for d in deployments()}
    assert set(built) == {"nightly", "backfill", "curate-playbook"}
    assert built["curate-playbook"].parameters == {"llm": "anthropic"} and not built["curate-playbook"].schedules
    nightly = built["nightly"]
    assert nightly.parameters == {"llm": "anthropic"}
    assert [s.schedule.cron for s in nightly.schedules] == ["0 3 * * *"]
    assert built["backfill"].parameters["llm"] == "batch" and not built["backfill"].schedules
    from flows.run.deployments import backfill, nightly

    for flow_obj, name in ((nightly, "nightly"), (backfill, "backfill")):
        params = inspect.signature(flow_obj.fn).parameters
        assert set(built[name].parameters) <= set(params)
