"""A run summary's words for what a run did: model calls against the rules' steps, tags the engine could not
place, and a duplicate rate named by what measured it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.llm.base import LLMResponse
from core.models import ApplyReport, EvaluationOutcome
from core.runsummary import RunSummary, quality_line


def rows(summary: RunSummary) -> dict[str, str]:
    return dict(summary.summary_rows())


@given(st.lists(st.sampled_from(["heuristic", "anthropic", "openai"]), max_size=12))
def test_a_call_reached_a_model_or_the_rules_answered_it(providers: list[str]) -> None:
    summary = RunSummary(run_id="r", kind="curate")
    for provider in providers:
        summary.add_call("reflector", LLMResponse(text="{}", provider=provider, model="m"))
    assert summary.rule_steps == providers.count("heuristic")
    assert summary.calls_made == len(providers) - summary.rule_steps
    said = rows(summary)["model calls"]
    assert said.startswith("none:") == (summary.calls_made == 0 and summary.rule_steps > 0)


def test_tags_on_entries_the_playbook_lacks_are_said() -> None:
    summary = RunSummary(run_id="r", kind="curate")
    report = ApplyReport(
        evaluations=[
            EvaluationOutcome(name="pat-001", rating="helpful", status="applied"),
            EvaluationOutcome(name="pat-404", rating="helpful", status="unknown_name"),
        ]
    )
    summary.add_apply(report, 2)
    assert (summary.evaluations, summary.unknown_tags) == (1, 1)
    assert "1 tag(s) on entries the playbook does not have" in rows(summary)["pruned / evaluations"]


def test_the_duplicate_rate_names_its_measure() -> None:
    figures = {"duplicate_rate": 0.05, "budget_entries": 0.5}
    assert quality_line(figures, "lexical-stems-v1").startswith("duplicate rate 5.0% (by lexical-stems-v1);")
    assert quality_line({}, "x") == ""


@given(st.lists(st.one_of(st.none(), st.integers(min_value=1, max_value=10_000)), max_size=8))
def test_the_versions_row_names_what_the_run_wrote(written: list[int | None]) -> None:
    summary = RunSummary(run_id="r", kind="curate")
    for version in written:
        summary.add_apply(ApplyReport(), version)
    made = [v for v in written if v is not None]
    said = rows(summary)["versions"]
    if not made:
        assert said == "none written"
    elif made[0] == made[-1]:
        assert said == f"{made[0]} written"
    else:
        assert said == f"{made[0]} to {made[-1]} written"
