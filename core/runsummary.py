"""The summary of one pipeline run: what was considered, applied, skipped, failed, and what it cost."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from core.errors import TerminalError
from core.llm.base import LLMResponse
from core.models import CONTRACT_VERSION, MAX_OPERATIONS, ApplyReport, skip_label

__all__ = ["RunFailedError", "RunKind", "RunSummary"]

# What a run row records as its kind.
RunKind = Literal["curate", "nightly", "backfill", "consolidate"]


_QUIET_LISTED = 5  # sessions that taught nothing, listed one by one up to this many


class RunSummary(BaseModel):
    """Counts for the `runs` table, the CLI summary and the Prefect artifact."""

    contract_version: Literal[1] = CONTRACT_VERSION
    run_id: str
    kind: RunKind
    playbook: str | None = None
    provider: str = ""
    status: Literal["running", "ok", "partial", "failed", "nothing-to-do"] = "running"
    notices: list[str] = Field(default_factory=list)
    sessions_considered: int = 0
    sessions_applied: int = 0
    sessions_skipped: int = 0
    sessions_failed: int = 0
    failures: dict[str, str] = Field(default_factory=dict)
    quarantined: list[str] = Field(default_factory=list)  # failed too often: left out until `playbook retry`
    stopped: str | None = None  # why the run stopped starting model calls early (deadline, breaker)
    held: dict[str, str] = Field(default_factory=dict)  # valid output not applied (mass change), with the reason
    quality: dict[str, float] = Field(default_factory=dict)  # duplicate rate, budget use, churn per 100 sessions
    entries_before: int | None = None  # live entries when the run started and when it ended
    entries_after: int | None = None
    skips: dict[str, str] = Field(default_factory=dict)
    quiet: dict[str, str] = Field(default_factory=dict)  # applied sessions that taught nothing, and why
    ops: dict[str, dict[str, int]] = Field(default_factory=dict)
    skip_reasons: dict[str, int] = Field(default_factory=dict)
    ops_dropped: int = 0  # operations past MAX_OPERATIONS in a curator answer, never considered
    pruned: int = 0
    evaluations: int = 0
    unknown_tags: int = 0  # the reflector's tags on entries the playbook does not have (reported, never applied)
    calls_made: int = 0  # calls that reached a model
    calls_cached: int = 0
    rule_steps: int = 0  # steps the rules answered (the heuristic provider): no model was called
    duplicate_measure: str | None = None  # what measured `quality["duplicate_rate"]` (a sentence model, word stems)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    cost_by_step: dict[str, float] = Field(default_factory=dict)
    tokens_by_step: dict[str, int] = Field(default_factory=dict)
    phase_seconds: dict[str, float] = Field(default_factory=dict)
    duration_s: float = 0.0
    first_version: int | None = None
    last_version: int | None = None
    epochs: int = 0

    @property
    def ops_applied(self) -> int:
        """Operations applied over all types."""
        return sum(v.get("applied", 0) for v in self.ops.values())

    @property
    def ops_skipped(self) -> int:
        """Operations skipped over all types."""
        return sum(v.get("skipped", 0) for v in self.ops.values())

    def churn_per_100(self) -> dict[str, float]:
        """Entries added, merged and retired (deleted or pruned) per 100 applied sessions."""
        if not self.sessions_applied:
            return {}
        per = 100 / self.sessions_applied

        def applied(op: str) -> int:
            return self.ops.get(op, {}).get("applied", 0)

        return {
            "added_per_100": round(applied("ADD") * per, 1),
            "merged_per_100": round(applied("MERGE") * per, 1),
            "retired_per_100": round((applied("DELETE") + self.pruned) * per, 1),
        }

    def quality_line(self) -> str:
        """The quality figures in one line."""
        return quality_line(self.quality, self.duplicate_measure)

    def calls_line(self) -> str:
        """Calls that reached a model, and steps the rules answered without one."""
        made = f"{self.calls_made} made, {self.calls_cached} reused from earlier runs"
        if self.rule_steps and not (self.calls_made or self.calls_cached):
            return f"none: the rules answered {self.rule_steps} step(s)"
        return made + (f"; the rules answered {self.rule_steps} step(s)" if self.rule_steps else "")

    def shrink_share(self) -> float:
        """The share of the playbook's entries this run took away (0 when it grew or stayed)."""
        if not self.entries_before or self.entries_after is None:
            return 0.0
        return max(0.0, (self.entries_before - self.entries_after) / self.entries_before)

    def add_call(self, step: str, response: LLMResponse) -> None:
        """Count one model exchange (cached answers cost nothing); an answer of the rules is no model call."""
        if response.provider == "heuristic":
            self.rule_steps += 1
            return
        if response.cached:
            self.calls_cached += 1
            return
        self.calls_made += 1
        u = response.usage
        self.input_tokens += u.input_tokens
        self.output_tokens += u.output_tokens
        self.cache_read_tokens += u.cache_read_tokens
        self.cache_write_tokens += u.cache_write_tokens
        self.cost_usd += response.cost_usd
        self.cost_by_step[step] = self.cost_by_step.get(step, 0.0) + response.cost_usd
        self.tokens_by_step[step] = self.tokens_by_step.get(step, 0) + u.input_tokens + u.output_tokens

    def add_apply(self, report: ApplyReport, version: int | None) -> None:
        """Count one applied session's operations, evaluations and prunes; `version`: the one it wrote (None: it
        changed nothing, so it wrote none)."""
        self.sessions_applied += 1
        for op_type, counts in report.counts().items():
            slot = self.ops.setdefault(op_type, {"applied": 0, "skipped": 0})
            slot["applied"] += counts["applied"]
            slot["skipped"] += counts["skipped"]
        if report.truncated_from is not None:
            self.ops_dropped += report.truncated_from - MAX_OPERATIONS
        reasons = Counter(self.skip_reasons)
        for outcome in report.outcomes:
            if outcome.status == "skipped":
                reasons[skip_label(outcome.type, outcome.code)] += 1
        self.skip_reasons = dict(reasons)
        self.pruned += len(report.pruned)
        self.evaluations += sum(1 for e in report.evaluations if e.status == "applied")
        self.unknown_tags += sum(1 for e in report.evaluations if e.status == "unknown_name")
        if version is not None:
            self.first_version = version if self.first_version is None else self.first_version
            self.last_version = version

    def session_skip_kinds(self) -> str:
        """Skipped sessions grouped by reason (`too short ×3`), the ids left out."""
        kinds = Counter(reason.split(":")[0] for reason in self.skips.values())
        return ", ".join(f"{kind} ×{n}" for kind, n in kinds.most_common())

    def quiet_kinds(self) -> str:
        """Sessions that taught nothing and why: each by its id's start when they are few, else grouped by why
        (`no failure and no correction ×3`)."""
        if len(self.quiet) <= _QUIET_LISTED:
            return "; ".join(f"{sid[:8]}: {why}" for sid, why in self.quiet.items())
        kinds = Counter(self.quiet.values())
        return ", ".join(f"{kind} ×{n}" for kind, n in kinds.most_common()) + " (each in --json)"

    def summary_rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for the CLI table and the markdown artifact."""
        ops = ", ".join(
            f"{t} {c['applied']}/{c['skipped']}" for t, c in sorted(self.ops.items()) if c["applied"] or c["skipped"]
        )
        # The versions this run wrote: "1 → 1" read as "nothing changed", so one version is named alone.
        if self.first_version is None or self.last_version is None:
            versions = "none written"
        elif self.first_version == self.last_version:
            versions = f"{self.first_version} written"
        else:
            versions = f"{self.first_version} to {self.last_version} written"
        rows = [
            ("run", f"{self.run_id} ({self.kind}, {self.status})"),
            (
                "playbook",
                f"{self.playbook or '-'} via {self.provider or '-'}"
                + (
                    " (rules, no model: the miner's lessons, with their evidence)"
                    if self.provider == "heuristic"
                    else ""
                ),
            ),
            (
                "sessions",
                f"{self.sessions_considered} considered, {self.sessions_applied} applied,"
                f" {self.sessions_skipped} skipped, {self.sessions_failed} failed",
            ),
            ("why sessions were skipped", self.session_skip_kinds() or "none"),
            (
                "sessions that taught nothing",
                f"{len(self.quiet)}: {self.quiet_kinds()}" if self.quiet else "none",
            ),
            ("quarantined (see `playbook sessions --failed`)", str(len(self.quarantined))),
            ("held: would remove too much (see `playbook sessions --failed`)", str(len(self.held))),
            (
                "operations (applied/skipped)",
                (ops or "none")
                + (
                    f"; {self.ops_dropped:,} past the limit of {MAX_OPERATIONS} a call dropped"
                    if self.ops_dropped
                    else ""
                ),
            ),
            (
                "top skip reasons",
                "; ".join(f"{r} ×{n}" for r, n in Counter(self.skip_reasons).most_common(3)) or "none",
            ),
            (
                "pruned / evaluations",
                f"{self.pruned} / {self.evaluations}"
                + (
                    f"; {self.unknown_tags} tag(s) on entries the playbook does not have (not applied: a model that"
                    " answers another prompt, or makes ids up)"
                    if self.unknown_tags
                    else ""
                ),
            ),
            ("quality", self.quality_line() or "not measured (no session applied)"),
            ("versions", versions),
            ("model calls", self.calls_line()),
            (
                "tokens",
                f"{self.input_tokens:,} in, {self.output_tokens:,} out, {self.cache_read_tokens:,} cache read,"
                f" {self.cache_write_tokens:,} cache write",
            ),
            ("cost", f"${self.cost_usd:.4f}"),
            (
                "duration",
                f"{self.duration_s:.1f} s"
                + (
                    " (" + ", ".join(f"{k} {v:.1f} s" for k, v in self.phase_seconds.items()) + ")"
                    if self.phase_seconds
                    else ""
                ),
            ),
        ]
        return rows

    def to_markdown(self, report_path: str | None = None) -> str:
        """The run summary as a markdown artifact."""
        lines = [f"# playbook {self.kind} run `{self.run_id}`", ""]
        lines += [f"> {n}" for n in self.notices]
        lines += ["", "| | |", "|---|---|"]
        lines += [f"| {label} | {value} |" for label, value in self.summary_rows()]
        if self.held:
            lines += ["", "## Sessions held for review (not applied)", ""]
            lines += [f"- `{sid}`: {reason}" for sid, reason in self.held.items()]
            lines += ["", "Look at them with `playbook sessions --failed`; `playbook retry ID` lets one run again."]
        if self.failures:
            lines += ["", "## Sessions that failed (retried next run)", ""]
            lines += [f"- `{sid}`: {reason}" for sid, reason in self.failures.items()]
        if report_path:
            lines += ["", f"Evolution report: `{report_path}`"]
        return "\n".join(lines) + "\n"


class RunFailedError(TerminalError):
    """A run that ran but could process none of the sessions it attempted (the flow run is Failed too); it
    carries the runs' summaries, which the command still prints."""

    def __init__(self, message: str, summaries: list[RunSummary] | None = None) -> None:
        super().__init__(message)
        self.summaries: list[RunSummary] = summaries or []


def quality_line(q: dict[str, float], measure: str | None = None) -> str:
    """A run's quality figures in one line ("" when none was measured); `measure`: what measured the duplicate
    rate (the figure depends on it: word stems and a sentence model score the same pair differently)."""
    if not q:
        return ""
    by = f" (by {measure})" if measure else ""
    return (
        f"duplicate rate {q.get('duplicate_rate', 0):.1%}{by}; budget {q.get('budget_entries', 0):.0%} of entries,"
        f" {q.get('budget_tokens', 0):.0%} of tokens; per 100 sessions: {q.get('added_per_100', 0):g} added,"
        f" {q.get('merged_per_100', 0):g} merged, {q.get('retired_per_100', 0):g} retired;"
        f" {q.get('trigger_share', 0):.0%} of entries have a trigger"
    )
