"""A curation run of one playbook, without Prefect: select the pending sessions, then reflect, curate and apply
them epoch by epoch, and record the run. `flows.run.pipeline` passes Prefect tasks as the `Steps` and adds retries and
artifacts; tests and benchmarks pass the plain functions. Either way the loop below is the same code."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import NamedTuple

import duckdb

from core.budget import budget_use
from core.consolidate import near_pairs, near_pairs_since, texts_digest
from core.llm.embed import Embedder, one_blas_thread
from core.llm.guard import CallGuard
from core.miner import quiet
from core.models import ApplyReport, Entry, skip_label
from core.operations import apply_evaluations, spared_by_reports
from core.runsummary import RunFailedError, RunKind, RunSummary
from core.selection import SessionFilter
from core.store.embeddings import keep_pair_count, kept_pair_count, vectors_for
from core.store.exposure import exposed_entries, mark_counted, reported_harm, uncounted_feedback
from core.store.provenance import entries_by_provider
from core.store.published import with_trigger
from core.store.runs import finish_run, start_run
from core.store.versions import live_entries, load_version, write_version
from flows.context import Database, RunConfig
from flows.models.providers import ProviderFactory, ProviderSpec, make_provider
from flows.run.progress import emit
from flows.run.run_state import RunContext, RunMemo, Steps
from flows.run.steps import next_epoch, plain_steps, select_sessions, timed
from flows.workspace import Workspace

__all__ = ["fail_if_nothing_worked", "new_run_id", "run_curation"]


def fail_if_nothing_worked(summaries: list[RunSummary]) -> None:
    """Raise when every session the run attempted failed (so cron and Prefect see a failed run), with the runs'
    summaries on the error.

    Raises:
        RunFailedError: every playbook's run failed.
    """
    failed = [s for s in summaries if s.status == "failed"]
    if failed and len(failed) == len(summaries):
        first = next(iter(failed[0].failures.values()), "no reason recorded")
        attempted = sum(s.sessions_failed for s in failed)
        raise RunFailedError(
            f"Every session this run attempted failed ({attempted}); the first reason: {first}", list(summaries)
        )


def new_run_id(kind: str) -> str:
    """Sortable, unique: kind, UTC time, random suffix."""
    return f"{kind}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


class Feedback(NamedTuple):
    """What `count_feedback` did: how many reports it counted, and the entries that only agents' reports would
    prune (`core.operations.should_prune`), kept for a person."""

    counted: int
    kept: list[str]


def count_feedback(db: Database, playbook: str) -> Feedback:
    """Count the outcomes agents reported (`playbook mcp`) that no run counted yet: `helped` as a helpful tag,
    `hurt` and `wrong` as harmful ones, one per session and entry, and only on an entry that session was given, in
    one version of their own (an entry's text never changes); how many were read, and which entries the pruning
    rule would take but for agents' reports."""
    with db.open() as con:
        reported = uncounted_feedback(con, playbook)
        new = load_version(con, playbook) if reported else None
        if new is not None:
            latest = {(r.session_id, r.entry_id): r for r in reported}  # one outcome a session and entry: its last
            had = exposed_entries(con, playbook, sorted({session for session, _ in latest}))
            outcomes = []
            for (session, entry), r in latest.items():
                verdict = {
                    "name": entry,
                    "rating": "helpful" if r.outcome == "helped" else "harmful",
                    "rationale": f"an agent reported `{r.outcome}` in session {session}",
                }
                # Only an entry the session was given (the MCP server or a hook recorded it) counts: `unexposed` else.
                new, found = apply_evaluations(new, [verdict], exposed=had.get(session, set()))
                outcomes += found
            version = write_version(
                con,
                playbook,
                new,
                source="feedback",
                report=ApplyReport(evaluations=outcomes),
                note=f"{len(reported)} outcome(s) reported by agents",
            )
            mark_counted(con, playbook, reported, version)
        harm = reported_harm(con, playbook)
        # A playbook no agent ever reported on (the usual case) is not rebuilt for this.
        kept = spared_by_reports(new if new is not None else load_version(con, playbook), harm) if harm else []
    return Feedback(len(reported), kept)


def run_curation(
    ws: Workspace,
    playbook: str,
    provider: ProviderSpec,
    *,
    steps: Steps | None = None,
    factory: ProviderFactory = make_provider,
    kind: RunKind = "curate",
    run_id: str | None = None,
    chosen: SessionFilter | None = None,
    guard: CallGuard | None = None,
    slot: Callable[[], AbstractContextManager[object]] | None = None,
    db: Database | None = None,
) -> RunSummary:
    """Curate one playbook: select pending sessions, then reflect, curate and apply epoch by epoch.

    Everything the run needs of `settings` is resolved here, once: the database, the run's configuration
    (`flows.context.RunConfig`), and one provider for all its calls (built on first use).

    Args:
        steps: the per-epoch steps; the plain functions unless the caller passes Prefect tasks.
        factory: builds the run's provider (tests and benchmarks pass their own).
        chosen: which pending sessions (project, dates, how many, epoch size).
        guard: the run's deadline and circuit breaker; by default from `max_run_minutes` and
            `breaker_failures`.
        db: the playbook's database as the caller holds it (`Database.held`), when the job the run is part of
            keeps one opening of the file for all its steps; by default the run opens it itself.

    Raises:
        AuthError: the model API refused the key (at the first call; nothing else is tried).
    """
    db = db if db is not None else ws.database(playbook)
    with nullcontext(db) if provider.calls_a_model else db.held() as db:
        return _curate(ws, db, playbook, provider, steps or plain_steps(), factory, kind, run_id, chosen, guard, slot)


def _curate(
    ws: Workspace,
    db: Database,
    playbook: str,
    provider: ProviderSpec,
    steps: Steps,
    factory: ProviderFactory,
    kind: RunKind,
    run_id: str | None,
    chosen: SessionFilter | None,
    guard: CallGuard | None,
    slot: Callable[[], AbstractContextManager[object]] | None,
) -> RunSummary:
    chosen = chosen or SessionFilter()
    ctx = RunContext(
        db=db,
        config=ws.run_config(playbook, provider),
        spec=provider,
        handle=ws.handle(provider, factory),
        run_id=run_id or new_run_id(kind),
        guard=guard
        or CallGuard(
            deadline=time.time() + ws.settings.max_run_minutes * 60 if ws.settings.max_run_minutes else None,
            breaker_after=ws.settings.breaker_failures,
            max_calls=ws.settings.max_calls if provider.subscription else None,
        ),
        slot=slot,
    )
    summary = RunSummary(
        run_id=ctx.run_id, kind=kind, playbook=playbook, provider=provider.label, notices=list(provider.notices)
    )
    started = time.perf_counter()
    before: list[str] | None = None
    _start(db, summary)
    feedback = count_feedback(db, playbook)
    if feedback.counted:
        summary.notices.append(
            f"{feedback.counted} outcome(s) agents reported through `playbook mcp` were counted as helpful or harmful"
            " tags (a version of their own; the entries' text is unchanged)."
        )
    if feedback.kept:
        summary.notices.append(
            f"{len(feedback.kept)} entr{'y' if len(feedback.kept) == 1 else 'ies'} would be pruned only because agents"
            f" reported them harmful ({', '.join(feedback.kept[:5])}{', ...' if len(feedback.kept) > 5 else ''}):"
            " kept for you to decide; `playbook retire ID` removes one."
        )
    # numpy's OpenBLAS threads spin between the run's small vector products (a lesson against a few thousand
    # entries): one thread does the same work with a third less of the run's CPU at 5,000 entries.
    with one_blas_thread():
        try:
            stop = timed(summary.phase_seconds, "select")
            selection = select_sessions(ctx, chosen.within_calls(ctx.guard.max_calls))
            stop()
            summary.skips = selection.skipped
            summary.sessions_skipped = len(selection.skipped)
            resumed = list(selection.resumed)
            queue = list(selection.pending)
            ctx.memo.chosen.update(queue, *(e.session_ids for e in resumed))
            before = _mergeable_texts(ctx, playbook) if resumed or queue else None
            size = _epoch_size(ctx, chosen, bool(queue))
            total = sum(len(e.session_ids) for e in resumed) + len(queue)
            summary.sessions_considered = total + len(selection.skipped)
            done = 0
            emit("curate", 0, total)
            while resumed or queue:
                if resumed:
                    epoch = resumed.pop(0)
                else:
                    chunk, queue = queue[:size], queue[size:]
                    epoch = next_epoch(ctx, chunk)
                summary.epochs += 1
                stop = timed(summary.phase_seconds, "reflect")
                reflections = steps.reflect(ctx, epoch)
                stop()
                stop = timed(summary.phase_seconds, "curate")
                curations = steps.curate(ctx, epoch, reflections)
                stop()
                for r in reflections:
                    if r.response is not None:
                        summary.add_call("reflector", r.response)
                for c in curations:
                    if c.response is not None:
                        summary.add_call("curator", c.response)
                stop = timed(summary.phase_seconds, "apply")
                applied = steps.apply(ctx, epoch, reflections, curations)
                stop()
                for result in applied:
                    if result.status == "applied" and result.report is not None:
                        summary.add_apply(result.report, result.version)
                        if not result.report.applied():
                            summary.quiet[result.session_id] = _why_quiet(ctx, result.session_id, result.report)
                    elif result.status == "held":
                        summary.held[result.session_id] = result.reason or "mass_change"
                    else:
                        summary.sessions_failed += 1
                        summary.failures[result.session_id] = result.reason or "failed"
                        if result.status == "quarantined":
                            summary.quarantined.append(result.session_id)
                done += len(epoch.session_ids)
                emit("curate", done, total)
                if ctx.guard.stopped:  # no call may start: end cleanly, the rest waits for the next run
                    left = total - done
                    summary.notices.append(
                        f"Stopped starting model calls: {ctx.guard.stopped}. {left} more session(s) wait for the next"
                        " run; the sessions of this epoch whose calls did not start are retried then too."
                    )
                    summary.stopped = ctx.guard.stopped
                    break
            if summary.sessions_failed and not summary.sessions_applied and not summary.held:
                summary.status = "failed"  # every session it attempted failed
            elif summary.sessions_failed or summary.held or summary.stopped:
                summary.status = "partial"  # some failed, some wait for a person, or the rest waits for the next run
            elif not total:
                summary.status = "nothing-to-do"
            else:
                summary.status = "ok"
        except BaseException:
            summary.status = "failed"
            raise
        finally:
            summary.duration_s = time.perf_counter() - started
            _finish(ctx, summary, before)
    return summary


# The run's own opens live in their own frames: an exception that ends a run keeps the frames it passed
# through alive (Prefect holds it in the flow's state), and with them any connection object they name.
def _why_quiet(ctx: RunContext, session_id: str, report: ApplyReport) -> str:
    """Why an applied session changed no entry: what it proposed was already known (or skipped for another
    reason), or, for the rules, why the miner found nothing in it (`core.miner.quiet`)."""
    skipped = Counter(skip_label(o.type, o.code) for o in report.outcomes if o.status == "skipped")
    if skipped:
        reason, _ = skipped.most_common(1)[0]
        return f"its lessons were skipped ({reason})"
    observed = ctx.memo.observed.get(session_id)
    if not ctx.spec.calls_a_model and observed is not None:
        return quiet(observed)
    return "the model proposed no change"


def _start(db: Database, summary: RunSummary) -> None:
    with db.open() as con:
        start_run(con, summary.run_id, summary.kind, summary.playbook, summary.provider)
        summary.entries_before = live_entries(con, summary.playbook or "")


def _epoch_size(ctx: RunContext, chosen: SessionFilter, pending: bool) -> int:
    """Sessions an epoch judges together: the request's, else the setting; for a server that says it answers N
    requests at once (a local model's slots), N unless the request named a size, so the first sessions are curated
    while the rest wait instead of every reflection coming first (8 calls of a minute each on one slot)."""
    size = max(1, chosen.epoch_size or ctx.config.epoch_size)
    if chosen.epoch_size is None and pending and ctx.spec.calls_a_model:
        slots = ctx.provider.slots()
        size = min(size, slots) if slots else size
    return size


def _mergeable_texts(ctx: RunContext, playbook: str) -> list[str] | None:
    """The texts of the entries the duplicate rate counts (`_mergeable`) as the run starts, when it measures one:
    the count kept by the run before (of these texts) is then brought up to date from the entries the run changed.
    The version is the one the first epoch starts from, rebuilt once for both (`RunMemo.version`)."""
    if ctx.config.similarity() is None:
        return None
    with ctx.db.open() as con:
        live = ctx.memo.version(con, playbook).sections.values()
        return [e.text for e in _mergeable(con, playbook, (e for items in live for e in items))]


def _mergeable(con: duckdb.DuckDBPyConnection, name: str, entries: Iterable[Entry]) -> list[Entry]:
    """The entries consolidation could merge: the rules' lessons are distinct by meaning and never merged, so
    counting their template-alike wordings would ask for a consolidation that merges nothing."""
    ruled = entries_by_provider(con, name, "heuristic")
    return [e for e in entries if e.name not in ruled]


def _finish(ctx: RunContext, summary: RunSummary, before: list[str] | None = None) -> None:
    with ctx.db.open() as con:
        summary.entries_after = live_entries(con, summary.playbook or "")
        if summary.sessions_applied and summary.playbook:
            summary.quality = _quality(con, ctx.config, summary, ctx.memo, before)
        shrink = summary.shrink_share()
        if shrink > ctx.config.shrink_warning_share:
            summary.notices.append(
                f"This run shrank the playbook from {summary.entries_before} to {summary.entries_after} entries"
                f" ({shrink:.0%}); `playbook diff` shows what went, `playbook revert` undoes it."
            )
        finish_run(con, summary)


def _quality(
    con: duckdb.DuckDBPyConnection,
    config: RunConfig,
    summary: RunSummary,
    memo: RunMemo,
    before: list[str] | None = None,
) -> dict[str, float]:
    """Duplicate rate (pairs above the near-duplicate threshold / live entries), budget use, churn; from what
    the run already holds in `memo` where it can. `before`: the counted texts as the run started."""
    name = summary.playbook or ""
    playbook = memo.version(con, name)
    entries = [e for items in playbook.sections.values() for e in items]  # no (section, entry) pair each
    figures: dict[str, float] = dict(summary.churn_per_100())
    use = budget_use(playbook, config.budget)
    figures["budget_entries"] = use.entries / use.max_entries if use.max_entries else 0.0
    figures["budget_tokens"] = use.tokens / use.max_tokens if use.max_tokens else 0.0
    similarity = config.similarity()
    if similarity is not None and entries:
        embedder, threshold = similarity
        figures["duplicate_rate"] = _near_pairs(con, name, embedder, threshold, before, entries, memo) / len(entries)
        summary.duplicate_measure = embedder.name
    if entries:
        figures["trigger_share"] = len(with_trigger(con, name)) / len(entries)
    return figures


def _near_pairs(
    con: duckdb.DuckDBPyConnection,
    name: str,
    embedder: Embedder,
    threshold: float,
    before: list[str] | None,
    entries: list[Entry],
    memo: RunMemo,
) -> int:
    """The near pairs among the mergeable live entries, kept for the next run: from the count the run before kept,
    when it counted exactly the texts this run started from, by the pairs of the entries that changed since
    (`near_pairs_since`, the same number: tests/core/test_near_pairs.py); else every pair (`near_pairs`)."""
    mergeable = _mergeable(con, name, entries)
    after = [e.text for e in mergeable]
    count = None
    if before is not None:
        kept = kept_pair_count(con, name, embedder.name, threshold, texts_digest(before))
        if kept is not None and Counter(before) == Counter(after):
            return kept  # the same texts, so the same count, kept already; and no vector read for it
        if kept is not None:
            gone = set(before).difference(after)
            vectors = vectors_for(con, embedder, [*after, *gone], memo=memo.vectors)
            count = near_pairs_since(before, after, vectors, threshold, kept)
    if count is None:
        count = near_pairs(mergeable, vectors_for(con, embedder, after, memo=memo.vectors), threshold)
    keep_pair_count(con, name, embedder.name, threshold, texts_digest(after), count)
    return count
