"""Consolidation: merge near-duplicate live entries into one (counters summed), with a model judging the groups
that may say one lesson in other words, as `playbook consolidate` and the nightly run it."""

from __future__ import annotations

import time
from typing import Any

from core.budget import budget_use
from core.consolidate import candidate_groups, judged_merges, judging_reflection, merge_operations
from core.curator import curator_request, parse_curator
from core.models import CuratorOutput, Entry, Playbook
from core.operations import apply_operations
from core.redact import redact_answer
from core.runsummary import RunSummary
from core.store.consolidation import keep_apart, kept_apart
from core.store.embeddings import vectors_for
from core.store.exchanges import cached_response, record_exchange
from core.store.provenance import entries_by_provider
from core.store.registry import require_playbook, sections_of
from core.store.runs import finish_run, start_run
from core.store.versions import current_version, load_version, rediscovery_counts, write_version
from flows.context import Database, RunConfig
from flows.delivery.hook import refreshes_snapshot
from flows.models.providers import ProviderFactory, ProviderHandle, ProviderSpec, make_provider
from flows.run.curation import new_run_id
from flows.run.fanout import ask_once
from flows.run.steps import template_for
from flows.workspace import Workspace

__all__ = ["consolidate", "needs_consolidation", "run_consolidation"]


@refreshes_snapshot
def consolidate(
    ws: Workspace, playbook: str, *, dry_run: bool = False, llm: str | None = None
) -> tuple[RunSummary, list[dict[str, Any]]]:
    """`playbook consolidate`: `run_consolidation` under the run lock, on a playbook that exists (or is
    configured, and so created on first use), judged by the provider `llm` names (None: no model).

    Raises:
        ConfigError: the playbook is neither configured nor created, or the provider is unusable.
    """
    provider = ws.provider(llm) if llm is not None else None
    db = ws.database(playbook)
    with db.lock("playbook consolidate"):
        with db.read() as con:
            if playbook not in ws.playbooks:
                require_playbook(con, playbook)
        return run_consolidation(ws, playbook, dry_run=dry_run, provider=provider)


def run_consolidation(
    ws: Workspace,
    playbook: str,
    *,
    dry_run: bool = False,
    provider: ProviderSpec | None = None,
    factory: ProviderFactory = make_provider,
) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Merge near-duplicate live entries: one version for the pass, its own run row.

    Entries at or above the near-duplicate threshold merge in any case. When `provider` is a model, it also
    judges groups of entries that may say the same lesson in other words (candidates from the sentence model's
    floor, or each entry's closest neighbours; one call for the pass): its MERGEs within a group are taken, its
    merged text is used where a MERGE is exactly a cluster, and the pairs it keeps apart are not shown to it
    again for `rejudge_after_days`. Otherwise the merged text is the member's with the best evidence. The engine
    sums the counters and keeps the sources' provenance in `operations`. With `dry_run`, nothing is written and
    no model is called.

    Returns:
        The run summary and the MERGE operations (planned, or applied).
    """
    db = ws.database(playbook)
    config = ws.run_config(playbook, provider)
    embedder, threshold = config.sentence_model()
    summary = RunSummary(
        run_id=new_run_id("consolidate"), kind="consolidate", playbook=playbook, provider=embedder.name
    )
    started = time.perf_counter()
    current, version, entries, vectors, found_again, apart = _plan_consolidation(db, config, embedder)
    ops = merge_operations(entries, vectors, threshold, found_again)
    summary.entries_before = summary.entries_after = current.size()
    judge = provider is not None and provider.calls_a_model and not dry_run
    floor = config.consolidate_floor if config.consolidate_floor is not None else embedder.floor
    groups = _shown_groups(entries, vectors, floor, apart, config.judge_max_entries) if judge else []
    if not ops and not groups:
        summary.status = "nothing-to-do"
        return summary, ops
    if dry_run:
        summary.status = "ok"
        return summary, ops
    kept: list[frozenset[str]] = []
    if groups and provider is not None:
        summary.provider = f"{embedder.name} + {provider.label}"
        models = ws.handle(provider, factory)
        answer = _ask_judge(db, config, provider, models, current, version, entries, groups, threshold, summary)
        limit = config.guards.max_entry_chars
        ops, kept, taken = judged_merges(entries, ops, groups, answer, limit, found_again)
        shown = sum(len(g) for g in groups)
        summary.notices.append(
            f"The curator judged {len(groups)} group(s) of {shown} entries that may say the same lesson: {taken} of"
            f" its merges taken, {len(kept)} pair(s) kept apart (not shown again for {config.rejudge_after_days:g}"
            " days)."
            if answer is not None
            else f"The curator gave no usable answer on {len(groups)} group(s) of {shown} entries; only entries at"
            f" similarity {threshold:.2f} or more were merged, with the text of the one with the best evidence."
        )
    with db.open() as con:
        start_run(con, summary.run_id, "consolidate", playbook, summary.provider)
        keep_apart(con, playbook, kept, summary.run_id)
        if ops:
            merged, report = apply_operations(current, ops, sections=sections_of(con, playbook), limit=None)
            written = write_version(
                con,
                playbook,
                merged,
                source="consolidate",
                report=report,
                run_id=summary.run_id,
                note=f"consolidation: {report.applied('MERGE')} cluster(s) of near-duplicates merged"
                f" ({summary.provider})",
                expected_parent=version,
            )
            summary.add_apply(report, written)
            summary.entries_after = merged.size()
        summary.sessions_applied = 0  # a consolidation applies no session
        summary.status = "ok" if ops else "nothing-to-do"
        summary.duration_s = time.perf_counter() - started
        finish_run(con, summary)
    return summary, ops


def _shown_groups(
    entries: list[tuple[str, Entry]],
    vectors: dict[str, Any],
    floor: float,
    apart: set[frozenset[str]],
    most: int,
) -> list[list[int]]:
    """The candidate groups a model is shown in one pass, most similar first, at most `most` entries in all
    (the rest wait for the next pass; pairs kept apart are not candidates)."""
    groups = candidate_groups(entries, vectors, floor=floor, judged_different=apart)
    shown: list[list[int]] = []
    for group in groups:
        if sum(map(len, shown)) + len(group) > most:
            break
        shown.append(group)
    return shown


def needs_consolidation(ws: Workspace, summary: RunSummary, provider: ProviderSpec | None = None) -> str | None:
    """Why the nightly run should consolidate after `summary` (its quality figures), or None. With a model
    (`provider`), every run that added entries: the model judges the new ones against their neighbours."""
    q = summary.quality
    if ws.settings.near_duplicates == "off" or not q:
        return None
    if q.get("duplicate_rate", 0.0) > ws.settings.consolidate_above:
        return f"duplicate rate {q['duplicate_rate']:.1%} is above {ws.settings.consolidate_above:.1%}"
    if max(q.get("budget_entries", 0.0), q.get("budget_tokens", 0.0)) > 1.0:
        return "the playbook is over its budget"
    added = summary.ops.get("ADD", {}).get("applied", 0) + summary.ops.get("MERGE", {}).get("applied", 0)
    if provider is not None and provider.calls_a_model and added:
        return f"{added} new entr{'y' if added == 1 else 'ies'} for the model to judge against their neighbours"
    return None


def _plan_consolidation(
    db: Database, config: RunConfig, embedder: Any
) -> tuple[Playbook, int, list[tuple[str, Entry]], dict[str, Any], dict[str, int], set[frozenset[str]]]:
    """(the newest version, its number, its entries, their vectors, rediscoveries, pairs kept apart lately)."""
    playbook = config.playbook
    with db.open() as con:
        version = current_version(con, playbook)
        current = load_version(con, playbook, version)
        # The rules' lessons are distinct by meaning (one wording per lesson); a sentence model would merge them by
        # their shared template ("lint with `mix credo`" and "build with `mix compile`" score 0.71).
        ruled = entries_by_provider(con, playbook, "heuristic")
        entries = [(s, e) for s, e in current.entries() if e.name not in ruled]
        vectors = vectors_for(con, embedder, [e.text for _, e in entries])
        apart = kept_apart(con, playbook, config.rejudge_after_days)
        return current, version, entries, vectors, rediscovery_counts(con, playbook), apart


def _ask_judge(
    db: Database,
    config: RunConfig,
    spec: ProviderSpec,
    models: ProviderHandle,
    current: Playbook,
    version: int,
    entries: list[tuple[str, Entry]],
    groups: list[list[int]],
    threshold: float,
    summary: RunSummary,
) -> CuratorOutput | None:
    """The curator's answer on the candidate groups (one call, recorded like any exchange), or None."""
    playbook = config.playbook
    brief = judging_reflection(entries, groups, threshold)
    with db.open() as con:
        request = curator_request(
            template_for(config, "curator"),
            brief,
            current,
            sections_of(con, playbook),
            model=spec.curator_model,
            session_id=None,
            max_tokens=config.limits.curator_max_tokens,
            context={"reflection": brief, "playbook": current},
            budget=budget_use(current, config.budget),
        )
        cached = cached_response(con, request)
    response = cached or ask_once(models.get(), request)
    if response.text:  # a model's words are untrusted: nothing it echoes is stored or applied
        response = response.model_copy(update={"text": redact_answer(response.text, config.redactor)})
    parsed = parse_curator(response.text) if response.ok else None
    with db.open() as con:
        record_exchange(
            con, request, response, parsed=parsed, playbook=playbook, playbook_version=version, run_id=summary.run_id
        )
    summary.add_call("curator", response)
    return parsed
