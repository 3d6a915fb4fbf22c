"""The nightly job, without Prefect: back up, ingest, then for each playbook curate, consolidate when it needs it,
export and write its evolution report, and last publish every export target and the SessionStart hook's snapshot.
`flows.pipeline` runs it as a flow, handing it Prefect tasks for the ingest and the curation steps, and turns what
it returns into artifacts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from core.review import ReviewChange
from core.runsummary import RunSummary
from core.store.db import back_up
from core.store.ingest import IngestSummary
from flows.config import Settings
from flows.consolidation import needs_consolidation, run_consolidation
from flows.context import Database
from flows.curation import run_curation
from flows.evolution import write_evolution_report
from flows.exports import ExportRules, Published, export_files, publish_targets
from flows.hook import write_snapshot
from flows.providers import ProviderFactory, ProviderSpec, make_provider
from flows.review import pending_review
from flows.steps import Steps, plain_steps

__all__ = ["NightlyPlaybook", "NightlyResult", "run_nightly"]


class NightlyPlaybook(BaseModel):
    """What the nightly did for one playbook: its run, the files exported, its report, what awaits review."""

    summary: RunSummary
    exported: list[Path]
    report: Path
    pending: list[ReviewChange]


class NightlyResult(BaseModel):
    """What the nightly did: one entry per playbook, and the export targets published at the end."""

    playbooks: list[NightlyPlaybook]
    published: list[Published]

    @property
    def summaries(self) -> list[RunSummary]:
        """The runs' summaries, one per playbook."""
        return [p.summary for p in self.playbooks]


Ingest = Callable[[Settings, list[Path | str]], IngestSummary]


def run_nightly(
    settings: Settings,
    provider: ProviderSpec,
    transcripts: Sequence[Path | str],
    *,
    ingest: Ingest,
    steps: Steps | None = None,
    factory: ProviderFactory = make_provider,
    playbooks: Sequence[str] | None = None,
) -> NightlyResult:
    """The nightly job under the caller's run lock (see the module docstring). A playbook's run that fails in
    part does not stop the others; the summaries say what each did."""
    db = Database.of(settings)
    back_up(db.path, db.backups)  # before anything writes: a copy to go back to
    ingest(settings, list(transcripts))
    done: list[NightlyPlaybook] = []
    names = list(playbooks or settings.playbooks)
    for name in names:
        summary = run_curation(settings, name, provider, steps=steps or plain_steps(), factory=factory, kind="nightly")
        why = needs_consolidation(settings, summary, provider)
        if why is not None:
            merged, _ = run_consolidation(settings, name, provider=provider, factory=factory)
            summary.notices.append(
                f"Consolidated because {why}: {merged.ops.get('MERGE', {}).get('applied', 0)} cluster(s) merged,"
                f" {merged.entries_before} -> {merged.entries_after} entries."
            )
            summary.notices.extend(merged.notices)
            summary.entries_after = merged.entries_after
        rules = ExportRules.of(settings, name)
        exported = export_files(db, rules, settings.out_dir)
        page = write_evolution_report(
            db.path,
            name,
            settings.out_dir / "report" / name,
            rules.redactor,
            wait=db.busy_wait_s,
            budget=rules.budget,
            stale_after_days=rules.stale_after_days,
            impact_min_sessions=settings.impact_min_sessions,
        ).index
        pending = pending_review(db, rules)
        if pending:
            summary.notices.append(f"{len(pending)} change(s) await `playbook review -p {name}`.")
        done.append(NightlyPlaybook(summary=summary, exported=exported, report=page, pending=pending))
    published = publish_targets(db, [ExportRules.of(settings, n) for n in names])
    write_snapshot(settings, only_if_present=True)  # what the SessionStart hook gives sessions from now on
    for result in published:
        owner = next((p.summary for p in done if p.summary.playbook == result.playbook), None)
        if owner is not None and result.status == "refused":
            owner.notices.append(f"Export target refused: {result.message}")
    return NightlyResult(playbooks=done, published=published)
