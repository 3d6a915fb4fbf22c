"""The nightly job, without Prefect: back up, ingest, then for each playbook curate, consolidate when it needs it,
export and write its evolution report, and last publish every export target and the SessionStart hook's snapshot.
`flows.run.pipeline` runs it as a flow, handing it Prefect tasks for the ingest and the curation steps, and turns what
it returns into artifacts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

from core.errors import StoreError
from core.review import ReviewChange
from core.runsummary import RunSummary
from core.store.db import back_up
from core.store.ingest import IngestSummary
from core.store.runs import latest_run
from flows.context import Database
from flows.delivery.exports import Published, export_files, publish_targets
from flows.delivery.hook import write_snapshot
from flows.delivery.review import pending_review
from flows.insight.evolution import write_evolution_report
from flows.models.providers import ProviderFactory, ProviderSpec, make_provider
from flows.run.consolidation import needs_consolidation, run_consolidation
from flows.run.curation import run_curation
from flows.run.steps import Steps, plain_steps
from flows.workspace import Workspace

__all__ = [
    "NightlyPlaybook",
    "NightlyResult",
    "curate_for_nightly",
    "finish_nightly",
    "publish_nightly",
    "run_nightly",
]


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


Ingest = Callable[[Workspace, list[Path | str]], IngestSummary]


def run_nightly(
    ws: Workspace,
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
    names = list(playbooks or ws.playbooks)
    store = ws.store
    for db in {store, *(ws.database(n) for n in names)}:  # before anything writes: copies to go back to
        if db.path.exists():
            back_up(db.path, db.backups)
    # The rules wait on no model: with every playbook in the one file, the job goes through one opening of it (each
    # costs ~20 ms of CPU: its checks and a checkpoint), up to the hooks' snapshot, which reads it on its own.
    one = not provider.calls_a_model and all(ws.database(n).store is None for n in names)
    with store.held() if one else nullcontext(None) as held:
        ingest(ws, list(transcripts))
        summaries = [curate_for_nightly(ws, name, provider, steps=steps, factory=factory, db=held) for name in names]
        result = _publish(ws, summaries, held)
    write_snapshot(ws, only_if_present=True)  # what the SessionStart hook gives sessions from now on
    return result


def curate_for_nightly(
    ws: Workspace,
    playbook: str,
    provider: ProviderSpec,
    *,
    steps: Steps | None = None,
    factory: ProviderFactory = make_provider,
    slot: Callable[[], AbstractContextManager[object]] | None = None,
    db: Database | None = None,
) -> RunSummary:
    """One playbook's part of the nightly: its curation run, then a consolidation when it needs one. `db`: the
    database as the nightly holds it (`run_curation`)."""
    summary = run_curation(
        ws, playbook, provider, steps=steps or plain_steps(), factory=factory, kind="nightly", slot=slot, db=db
    )
    why = needs_consolidation(ws, summary, provider)
    if why is not None:
        merged, _ = run_consolidation(ws, playbook, provider=provider, factory=factory)
        summary.notices.append(
            f"Consolidated because {why}: {merged.ops.get('MERGE', {}).get('applied', 0)} cluster(s) merged,"
            f" {merged.entries_before} -> {merged.entries_after} entries."
        )
        summary.notices.extend(merged.notices)
        summary.entries_after = merged.entries_after
    return summary


def finish_nightly(ws: Workspace, playbooks: Sequence[str], *, since: datetime) -> NightlyResult:
    """The nightly's end when its playbooks were curated elsewhere (flow runs on a work pool): their runs' summaries
    read from their shards (the newest nightly run of each since `since`), then `publish_nightly`.

    Raises:
        StoreError: a playbook has no nightly run since `since` (its flow run crashed before it started).
    """
    summaries = []
    for name in playbooks:
        with ws.database(name).read() as con:
            summary = latest_run(con, name, "nightly", since)
        if summary is None:
            raise StoreError(
                f"Playbook `{name}` has no nightly run since {since:%Y-%m-%d %H:%M:%S} UTC; see its flow run in the"
                " Prefect UI, then run `playbook nightly` again (what finished is kept)."
            )
        summaries.append(summary)
    return publish_nightly(ws, summaries)


def publish_nightly(ws: Workspace, summaries: Sequence[RunSummary]) -> NightlyResult:
    """After the curation runs: each playbook's exports, evolution report and what awaits review, then every export
    target and the SessionStart hook's snapshot."""
    result = _publish(ws, summaries, None)
    write_snapshot(ws, only_if_present=True)  # what the SessionStart hook gives sessions from now on
    return result


def _publish(ws: Workspace, summaries: Sequence[RunSummary], held: Database | None) -> NightlyResult:
    """`publish_nightly` but the hooks' snapshot; `held`: the one database of every playbook, as the nightly holds
    it."""
    done: list[NightlyPlaybook] = []
    for summary in summaries:
        name = summary.playbook or ws.playbook
        db = held if held is not None else ws.database(name)
        rules = ws.rules(name)
        exported = export_files(db, rules, ws.out_dir)
        page = write_evolution_report(
            db.path,
            name,
            ws.out_dir / "report" / name,
            rules.redactor,
            wait=db.busy_wait_s,
            budget=rules.budget,
            stale_after_days=rules.stale_after_days,
            impact_min_sessions=ws.settings.impact_min_sessions,
            store=db.store,
        ).index
        pending = pending_review(db, rules)
        if pending:
            summary.notices.append(f"{len(pending)} change(s) await `playbook review -p {name}`.")
        done.append(NightlyPlaybook(summary=summary, exported=exported, report=page, pending=pending))
    names = [p.summary.playbook or ws.playbook for p in done]
    published = publish_targets(held if held is not None else ws.database(), [ws.rules(n) for n in names])
    for result in published:
        owner = next((p.summary for p in done if p.summary.playbook == result.playbook), None)
        if owner is not None and result.status == "refused":
            owner.notices.append(f"Export target refused: {result.message}")
    return NightlyResult(playbooks=done, published=published)
