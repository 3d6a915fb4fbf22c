"""The run loop, without Prefect: ingest, curate epoch by epoch, export.

`flows.pipeline` passes Prefect tasks as the `Steps` and adds retries and artifacts; tests and
benchmarks pass the plain functions. Either way the loop below is the same code.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, Field

from core.budget import BudgetUse, budget_use, fit_budget
from core.consolidate import candidate_groups, judged_merges, judging_reflection, merge_operations, near_pairs
from core.curator import curator_request, parse_curator
from core.errors import BudgetError, ConfigError, GitError, PlaybookFileError
from core.estimate import Estimate, estimate_cost
from core.export import to_markdown
from core.invisible import strip_unseen, visible
from core.llm.embed import one_blas_thread
from core.llm.guard import CallGuard
from core.llm.pricing import CostCap
from core.models import CuratorOutput, Entry, Playbook, ReflectorOutput
from core.operations import apply_operations
from core.playbook_json import encode, playbook_to_dict
from core.redact import mask_playbook, redact_answer, redact_transcript
from core.reflector import reflector_request
from core.render import estimate_tokens
from core.review import ReviewChange, review_changes
from core.runsummary import RunSummary
from core.scope import in_scope
from core.screen import Screened, screen_playbook
from core.sections import DEFAULT_SECTIONS
from core.selection import too_short
from core.store.consolidation import keep_apart, kept_apart
from core.store.db import open_db
from core.store.embeddings import vectors_for
from core.store.exchanges import cached_response, record_exchange
from core.store.files import read_text, write_atomic
from core.store.git import (
    PUBLISH_TRAILER,
    add_worktree,
    branch_tip,
    commit_all,
    default_branch,
    git,
    is_ancestor,
    published_versions,
    push,
    remote_of,
    remove_worktree,
    set_branch,
    work_tree_root,
)
from core.store.ingest import FileResult, IngestSummary, discover, ingest
from core.store.keys import Refused, cache_path, check_contributor, inside
from core.store.objects import fetch, is_url, list_objects, put_bytes, remove_folder
from core.store.playbooks import (
    approved_version,
    current_version,
    entry_since,
    live_entries,
    load_version,
    playbook_names,
    record_export,
    rediscovery_counts,
    sections_of,
    stale_entries,
    version_changes,
    with_trigger,
    write_version,
)
from core.store.provenance import entries_by_provider
from core.store.runs import finish_run, start_run
from core.store.screening import prompt_hosts, release_holds, released_holds, shared_playbook, support_of
from core.store.sessions import load_messages, pending_sessions
from core.store.team import fetched, forget_contributor, pushed, record_fetch, record_push, tag_contributors
from core.targets import ExportTarget, render_target
from core.transcripts import Format
from core.transcripts.detect import detect
from flows.config import Settings
from flows.progress import emit
from flows.providers import ProviderFactory, ProviderSpec, make_provider
from flows.steps import (
    RunContext,
    RunMemo,
    Steps,
    ask_once,
    excluded,
    next_epoch,
    plain_steps,
    select_sessions,
    template_for,
    timed,
)

__all__ = [
    "Published",
    "estimate_run",
    "export_note",
    "export_playbook",
    "exportable",
    "held_entries",
    "needs_consolidation",
    "new_run_id",
    "pending_review",
    "publish_targets",
    "release_held",
    "run_consolidation",
    "run_curation",
    "run_ingest",
]


def new_run_id(kind: str) -> str:
    """Sortable, unique: kind, UTC time, random suffix."""
    return f"{kind}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def run_ingest(
    settings: Settings,
    paths: Sequence[Path | str],
    fmt: Format | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Ingest transcript files and folders, and the transcripts pushed to object-storage URLs, into the
    settings' database. Objects are fetched when new or changed (their ETag or size), into a cache beside the
    database, and every session read from them records its contributor.

    Raises:
        ConfigError: no paths were given and none are configured.
    """
    if not paths:
        raise ConfigError(
            "No transcript folders given, and none found in ~/.claude/projects or ~/.codex/sessions; pass PATH,"
            " or set `transcripts` in playbook.toml or PLAYBOOK_TRANSCRIPTS."
        )
    local = [Path(p) for p in paths if not is_url(p)]
    urls = [str(p) for p in paths if is_url(p)]
    refused: list[FileResult] = []
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        for url in urls:
            cache, skipped = fetch_remote(con, settings, url)
            local.append(cache)
            refused += skipped
        summary = ingest(
            con,
            local,
            fmt=fmt or "auto",
            progress=progress or (lambda done, total: emit("ingest", done, total)),
            redact_secrets=not settings.keep_raw_text,
        )
        if urls:
            tag_contributors(con)
        summary.results += refused
        return summary


def remote_sources(settings: Settings) -> list[str]:
    """The object-storage URLs among the configured `transcripts`."""
    return [str(t) for t in settings.transcripts if is_url(t)]


def remote_cache(settings: Settings, url: str) -> Path:
    """Where the objects of `url` are kept once fetched (beside the database, one folder per URL)."""
    return settings.db.parent / "remote" / hashlib.sha256(url.encode()).hexdigest()[:12]


def fetch_remote(con: duckdb.DuckDBPyConnection, settings: Settings, url: str) -> tuple[Path, list[FileResult]]:
    """Fetch the new or changed objects of `url` into its cache (contributors in `exclude_contributors` are
    not fetched). A key that would not stay inside the cache (`..`, an absolute path, a link), that is too long
    or not a contributor's, or that cannot be written here, is skipped with its reason; the others go on.

    Returns:
        The cache folder, for ingest, and the objects refused (status `refused`, for the ingest summary).
    """
    cache = remote_cache(settings, url)
    cache.mkdir(parents=True, exist_ok=True)
    known = fetched(con, url)
    excluded = set(settings.exclude_contributors)
    refused: list[FileResult] = []
    for obj in list_objects(url, settings.storage_options):
        local = cache_path(cache, obj.key)
        if isinstance(local, Refused):
            refused.append(FileResult(path=f"{url}/{visible(obj.key)}", status="refused", error=local.reason))
            continue
        contributor = obj.key.split("/", 1)[0]
        if contributor in excluded:
            continue
        if known.get(obj.key) == obj.tag and local.exists():
            continue
        try:
            fetch(url, obj.key, local, settings.storage_options)
        except PlaybookFileError as exc:
            refused.append(FileResult(path=f"{url}/{visible(obj.key)}", status="refused", error=str(exc)))
            continue
        record_fetch(con, url, obj.key, obj.tag, obj.size, str(local), contributor)
    return cache, refused


class PushSummary(BaseModel):
    """What `push_transcripts` did."""

    url: str
    contributor: str
    pushed: list[str] = Field(default_factory=list)  # object keys written
    unchanged: int = 0
    failed: dict[str, str] = Field(default_factory=dict)  # local path -> why
    secrets: int = 0
    personal: int = 0


def push_transcripts(settings: Settings, url: str, paths: Sequence[Path], contributor: str) -> PushSummary:
    """Upload the new or grown transcript files under `paths` to `url/<contributor>/<format>/...`, redacted
    here first (secrets and personal data, in every string of every record, ids kept); the object keys are
    masked the same way. A ledger in the local database remembers what was pushed (size and mtime)."""
    summary = PushSummary(url=url, contributor=check_contributor(contributor))
    redactor = settings.redactor()
    files, missing = discover(paths)
    for m in missing:
        summary.failed[m.path] = m.error or "missing"
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        done = pushed(con, url)
        for path in files:
            key_path = str(path)
            try:
                st = path.stat()
                if done.get(key_path) == (st.st_size, st.st_mtime):
                    summary.unchanged += 1
                    continue
                found = detect(path)
                if found.format is None:
                    continue  # not a transcript (an index, a settings file): never leaves the machine
                text, secrets, personal = redact_transcript(path.read_bytes().decode("utf-8", "replace"), redactor)
            except OSError as exc:
                summary.failed[key_path] = f"unreadable: {exc.strerror or exc}"
                continue
            root = next((Path(p) for p in paths if path.is_relative_to(Path(p).resolve())), path.parent)
            inner = path.relative_to(root.resolve()) if path.is_relative_to(root.resolve()) else Path(path.name)
            # Names carry personal data (Claude Code's folders encode the home path), not secrets: each part is
            # masked, ids kept.
            masked = "/".join(redactor.personal(part)[0] for part in inner.parts)
            key = f"{contributor}/{found.format}/{masked}"
            put_bytes(url, key, text.encode(), settings.storage_options)
            record_push(con, url, key_path, key, st.st_size, st.st_mtime, secrets, personal)
            summary.pushed.append(key)
            summary.secrets += secrets
            summary.personal += personal
    return summary


class ForgetSummary(BaseModel):
    """What `forget` deleted."""

    contributor: str
    sessions: int
    messages: int
    calls: int
    objects: int
    files: int
    # Per playbook, the live entries whose only support was this contributor's sessions: the screen holds them
    # from now on (`withdrawn`), until a person releases them in `playbook review`.
    held: dict[str, list[str]] = Field(default_factory=dict)


def forget(settings: Settings, contributor: str) -> ForgetSummary:
    """Delete `contributor`'s transcripts, messages and stored exchanges from the database, their fetched
    copies, and their objects in every configured bucket (only keys under `<url>/<contributor>/`); the
    deletion is recorded in `forgotten`.

    Raises:
        ConfigError: `contributor` is not a valid contributor name; nothing is deleted.
    """
    check_contributor(contributor)
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        held: dict[str, list[str]] = {}
        for name in playbook_names(con):
            texts = {e.name: e.text for _, e in load_version(con, name).entries()}
            only = [e for e, support in support_of(con, name, texts).items() if support.contributors == {contributor}]
            if only:
                held[name] = only
        done = forget_contributor(con, contributor)
    files = 0
    caches = settings.db.parent / "remote"
    for local in done["paths"]:
        # Only fetched copies: a path recorded before keys were checked could point anywhere.
        if not inside(caches, Path(local)):
            continue
        with contextlib.suppress(FileNotFoundError):
            Path(local).unlink()
            files += 1
    objects = sum(remove_folder(str(url), contributor, settings.storage_options) for url in remote_sources(settings))
    return ForgetSummary(
        contributor=contributor,
        sessions=done["sessions"],
        messages=done["messages"],
        calls=done["calls"],
        objects=objects,
        files=files,
        held=held,
    )


def run_curation(
    settings: Settings,
    playbook: str,
    provider: ProviderSpec,
    *,
    steps: Steps | None = None,
    factory: ProviderFactory = make_provider,
    kind: str = "curate",
    run_id: str | None = None,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    epoch_size: int | None = None,
    guard: CallGuard | None = None,
) -> RunSummary:
    """Curate one playbook: select pending sessions, then reflect, curate and apply epoch by epoch.

    Args:
        steps: the per-epoch steps; the plain functions unless the caller passes Prefect tasks.
        factory: builds the provider for each step (tests and benchmarks pass their own).
        guard: the run's deadline and circuit breaker; by default from `max_run_minutes` and
            `breaker_failures`.

    Raises:
        AuthError: the model API refused the key (at the first call; nothing else is tried).
    """
    steps = steps or plain_steps()
    ctx = RunContext(
        settings=settings,
        playbook=playbook,
        provider=provider,
        run_id=run_id or new_run_id(kind),
        redactor=settings.redactor(),
        factory=factory,
        guard=guard
        or CallGuard(
            deadline=time.time() + settings.max_run_minutes * 60 if settings.max_run_minutes else None,
            breaker_after=settings.breaker_failures,
        ),
    )
    summary = RunSummary(
        run_id=ctx.run_id, kind=kind, playbook=playbook, provider=provider.label, notices=list(provider.notices)
    )
    started = time.perf_counter()
    _start(settings, summary)
    # numpy's OpenBLAS threads spin between the run's small vector products (a lesson against a few thousand
    # entries): one thread does the same work with a third less of the run's CPU at 5,000 entries.
    with one_blas_thread():
        try:
            stop = timed(summary.phase_seconds, "select")
            selection = select_sessions(ctx, project=project, since=since, until=until, limit=limit)
            stop()
            summary.skips = selection.skipped
            summary.sessions_skipped = len(selection.skipped)
            size = max(1, epoch_size or settings.epoch_size)
            resumed = list(selection.resumed)
            queue = list(selection.pending)
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
                    if result.status == "applied" and result.report is not None and result.version is not None:
                        summary.add_apply(result.report, result.version)
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
            _finish(settings, summary, ctx.memo)
    return summary


# The run's own opens live in their own frames: an exception that ends a run keeps the frames it passed
# through alive (Prefect holds it in the flow's state), and with them any connection object they name.
def _start(settings: Settings, summary: RunSummary) -> None:
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        start_run(con, summary.run_id, summary.kind, summary.playbook, summary.provider)
        summary.entries_before = live_entries(con, summary.playbook or "")


def _finish(settings: Settings, summary: RunSummary, memo: RunMemo | None = None) -> None:
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        summary.entries_after = live_entries(con, summary.playbook or "")
        if summary.sessions_applied and summary.playbook:
            summary.quality = _quality(con, settings, summary, memo or RunMemo())
        shrink = summary.shrink_share()
        if shrink > settings.shrink_warning_share:
            summary.notices.append(
                f"This run shrank the playbook from {summary.entries_before} to {summary.entries_after} entries"
                f" ({shrink:.0%}); `playbook diff` shows what went, `playbook revert` undoes it."
            )
        finish_run(con, summary)


def _quality(
    con: duckdb.DuckDBPyConnection, settings: Settings, summary: RunSummary, memo: RunMemo
) -> dict[str, float]:
    """Duplicate rate (pairs above the near-duplicate threshold / live entries), budget use, churn; from what
    the run already holds in `memo` where it can."""
    playbook = memo.version(con, summary.playbook or "")
    entries = [e for _, e in playbook.entries()]
    figures: dict[str, float] = dict(summary.churn_per_100())
    use = budget_use(playbook, settings.budget(summary.playbook))
    figures["budget_entries"] = use.entries / use.max_entries if use.max_entries else 0.0
    figures["budget_tokens"] = use.tokens / use.max_tokens if use.max_tokens else 0.0
    similarity = settings.similarity()
    if similarity is not None and entries:
        embedder, threshold = similarity
        vectors = vectors_for(con, embedder, [e.text for e in entries], memo=memo.vectors)
        figures["duplicate_rate"] = near_pairs(entries, vectors, threshold) / len(entries)
    if entries:
        figures["trigger_share"] = len(with_trigger(con, summary.playbook or "")) / len(entries)
    return figures


def run_consolidation(
    settings: Settings,
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
    embedder, threshold = settings.sentence_model()
    summary = RunSummary(
        run_id=new_run_id("consolidate"), kind="consolidate", playbook=playbook, provider=embedder.name
    )
    started = time.perf_counter()
    current, version, entries, vectors, found_again, apart = _plan_consolidation(settings, playbook, embedder)
    ops = merge_operations(entries, vectors, threshold, found_again)
    summary.entries_before = summary.entries_after = current.size()
    judge = provider is not None and provider.kind != "heuristic" and not dry_run
    groups = (
        _shown_groups(entries, vectors, settings.consolidate_floor or embedder.floor, apart, settings.judge_max_entries)
        if judge
        else []
    )
    if not ops and not groups:
        summary.status = "nothing-to-do"
        return summary, ops
    if dry_run:
        summary.status = "ok"
        return summary, ops
    kept: list[frozenset[str]] = []
    if groups and provider is not None:
        summary.provider = f"{embedder.name} + {provider.label}"
        answer = _ask_judge(
            settings, playbook, provider, factory, current, version, entries, groups, threshold, summary
        )
        limit = settings.guards().max_entry_chars
        ops, kept, taken = judged_merges(entries, ops, groups, answer, limit, found_again)
        shown = sum(len(g) for g in groups)
        summary.notices.append(
            f"The curator judged {len(groups)} group(s) of {shown} entries that may say the same lesson: {taken} of"
            f" its merges taken, {len(kept)} pair(s) kept apart (not shown again for {settings.rejudge_after_days:g}"
            " days)."
            if answer is not None
            else f"The curator gave no usable answer on {len(groups)} group(s) of {shown} entries; only entries at"
            f" similarity {threshold:.2f} or more were merged, with the text of the one with the best evidence."
        )
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
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


def needs_consolidation(settings: Settings, summary: RunSummary, provider: ProviderSpec | None = None) -> str | None:
    """Why the nightly run should consolidate after `summary` (its quality figures), or None. With a model
    (`provider`), every run that added entries: the model judges the new ones against their neighbours."""
    q = summary.quality
    if settings.near_duplicates == "off" or not q:
        return None
    if q.get("duplicate_rate", 0.0) > settings.consolidate_above:
        return f"duplicate rate {q['duplicate_rate']:.1%} is above {settings.consolidate_above:.1%}"
    if max(q.get("budget_entries", 0.0), q.get("budget_tokens", 0.0)) > 1.0:
        return "the playbook is over its budget"
    added = summary.ops.get("ADD", {}).get("applied", 0) + summary.ops.get("MERGE", {}).get("applied", 0)
    if provider is not None and provider.kind != "heuristic" and added:
        return f"{added} new entr{'y' if added == 1 else 'ies'} for the model to judge against their neighbours"
    return None


def _plan_consolidation(
    settings: Settings, playbook: str, embedder: Any
) -> tuple[Playbook, int, list[tuple[str, Entry]], dict[str, Any], dict[str, int], set[frozenset[str]]]:
    """(the newest version, its number, its entries, their vectors, rediscoveries, pairs kept apart lately)."""
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        version = current_version(con, playbook)
        current = load_version(con, playbook, version)
        entries = list(current.entries())
        vectors = vectors_for(con, embedder, [e.text for _, e in entries])
        apart = kept_apart(con, playbook, settings.rejudge_after_days)
        return current, version, entries, vectors, rediscovery_counts(con, playbook), apart


def _ask_judge(
    settings: Settings,
    playbook: str,
    spec: ProviderSpec,
    factory: ProviderFactory,
    current: Playbook,
    version: int,
    entries: list[tuple[str, Entry]],
    groups: list[list[int]],
    threshold: float,
    summary: RunSummary,
) -> CuratorOutput | None:
    """The curator's answer on the candidate groups (one call, recorded like any exchange), or None."""
    redactor = settings.redactor()
    brief = judging_reflection(entries, groups, threshold)
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        cap = CostCap(settings.cost_cap_usd)
        request = curator_request(
            template_for(settings, playbook, "curator"),
            brief,
            current,
            sections_of(con, playbook),
            model=spec.curator_model,
            session_id=None,
            max_tokens=settings.limits(spec.kind).curator_max_tokens,
            context={"reflection": brief, "playbook": current},
            budget=budget_use(current, settings.budget(playbook)),
        )
        cached = cached_response(con, request)
    response = cached or ask_once(factory(spec, settings, cap), request)
    if response.text:  # a model's words are untrusted: nothing it echoes is stored or applied
        response = response.model_copy(update={"text": redact_answer(response.text, redactor)})
    parsed = parse_curator(response.text) if response.ok else None
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        record_exchange(
            con, request, response, parsed=parsed, playbook=playbook, playbook_version=version, run_id=summary.run_id
        )
    summary.add_call("curator", response)
    return parsed


def exported_version(con: duckdb.DuckDBPyConnection, settings: Settings, playbook: str) -> int | None:
    """The version exports of `playbook` carry: the newest approved one when it requires review (curated
    versions wait for `playbook review`), else None (the newest)."""
    return approved_version(con, playbook) if settings.options(playbook).review == "required" else None


def screened(
    con: duckdb.DuckDBPyConnection, settings: Settings, playbook: str, model: Playbook
) -> tuple[Playbook, list[Screened]]:
    """`model` as it may reach an agent: invisible characters removed, and without the entries the screen holds
    (`core.screen`) unless a person released their text; the held entries, with the rules that hold them."""
    texts = {e.name: e.text for _, e in model.entries()}
    visible_only = {
        s: [e if strip_unseen(e.text) == e.text else e.model_copy(update={"text": strip_unseen(e.text)}) for e in items]
        for s, items in model.sections.items()
    }
    model = model.model_copy(update={"sections": visible_only})
    return screen_playbook(
        model,
        prompt_hosts(con),
        support_of(con, playbook, texts),
        released_holds(con, playbook),
        shared=shared_playbook(con, playbook),
        min_contributors=settings.min_contributors,
    )


def exportable(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    playbook: str,
    version: int | None = None,
    *,
    whole: bool = False,
) -> tuple[Playbook, BudgetUse]:
    """What an export of `playbook` writes: redacted, screened (held entries never go out), without stale
    entries, and cut to the budget; all of it (redacted and screened) when `whole`. With `review = "required"`,
    the newest approved version unless `version` names one. `use.held` counts the entries the screen held."""
    latest = version is None
    version = exported_version(con, settings, playbook) if latest else version
    model, held = screened(
        con, settings, playbook, mask_playbook(load_version(con, playbook, version), settings.redactor())
    )
    if whole:
        return model, budget_use(model, settings.budget(playbook)).model_copy(update={"held": len(held)})
    if settings.stale_after_days and latest:  # staleness is about now, so only for what is exported now
        stale = {r["name"] for r in stale_entries(con, playbook, settings.stale_after_days)}
        if stale:
            kept = {s: [e for e in items if e.name not in stale] for s, items in model.sections.items()}
            model = model.model_copy(update={"sections": kept})
    model, use = fit_budget(
        model,
        settings.budget(playbook),
        rediscoveries=rediscovery_counts(con, playbook),
        since=entry_since(con, playbook),
    )
    return model, use.model_copy(update={"held": len(held)})


def export_note(con: duckdb.DuckDBPyConnection, playbook: str, model: Playbook, use: BudgetUse) -> str | None:
    """The lines an export ends with: entries written by rules rather than a model, and entries left out to
    fit the budget."""
    lines = []
    ruled = entries_by_provider(con, playbook, "heuristic") & {e.name for _, e in model.entries()}
    if ruled:
        lines.append(
            f"{len(ruled)} of these entries were written by rules, without a model (the heuristic provider);"
            " `playbook recurate` has a model look at their sessions again."
        )
    if use.held:
        lines.append(
            f"{use.held} entr{'y' if use.held == 1 else 'ies'} held by the screen (a command fetched and run, a"
            " credential path, an instruction to the agent, an unknown host, too little support); `playbook review`"
            " lists them."
        )
    if use.left_out:
        lines.append(
            f"{use.left_out} more entr{'y' if use.left_out == 1 else 'ies'} left out to fit the budget"
            f" ({use.max_entries} entries, {use.max_tokens:,} tokens); `playbook show` lists them all."
        )
    return " ".join(lines) or None


def export_playbook(settings: Settings, playbook: str) -> list[Path]:
    """Write `<out_dir>/<playbook>.md` and `.json` (the seeds' playbook.json), each atomically, within budget."""
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        model, use = exportable(con, settings, playbook)
        md = settings.out_dir / f"{playbook}.md"
        js = settings.out_dir / f"{playbook}.json"
        note = export_note(con, playbook, model, use)
        write_atomic(md, to_markdown(model, title=f"Playbook `{playbook}`", note=note))
        write_atomic(js, encode(playbook_to_dict(model)))
        for path in (md, js):
            record_export(
                con,
                playbook,
                exported_version(con, settings, playbook),
                str(path),
                [e.name for _, e in model.entries()],
            )
    return [md, js]


class Published(BaseModel):
    """What `publish_targets` did with one export target."""

    playbook: str
    kind: str
    path: str
    status: Literal["written", "unchanged", "refused"]
    message: str = ""
    file: Path | None = Field(default=None, exclude=True)  # where it was written (a worktree for --git)


def publish_targets(
    settings: Settings,
    playbooks: list[str],
    *,
    root: Path | None = None,
    default_kinds: Sequence[str] = (),
    recorded_as: Callable[[Path], str] = str,
) -> list[Published]:
    """Write every configured export target of `playbooks` (`[playbook_settings.NAME] targets`), each within
    budget; a file that cannot be written safely is refused with its reason and the others still go out.

    `root`: write the repository targets into this working copy instead (`publish --git`); targets named by
    `path` are left out there. `default_kinds`: the kinds a playbook without targets gets under `root`.
    `recorded_as`: the name the `exports` table keeps for a written file.
    """
    results: list[Published] = []
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        for name in playbooks:
            targets = list(settings.options(name).targets)
            if root is not None:
                rooted = [t.in_repo(root) for t in targets]
                targets = [t for t in rooted if t is not None] or (
                    [] if targets else [ExportTarget(kind=k, repo=root) for k in default_kinds]  # type: ignore[arg-type]
                )
            if not targets:
                continue
            model, use = exportable(con, settings, name)
            note = export_note(con, name, model, use)
            ids = [e.name for _, e in model.entries()]
            for target in targets:
                path = target.file()
                try:
                    existing = read_text(path) if path.exists() else None
                    text = render_target(target, name, model, existing, note=note)
                    if text == existing:
                        status: Literal["written", "unchanged", "refused"] = "unchanged"
                    else:
                        write_atomic(path, text)
                        status = "written"
                except PlaybookFileError as exc:
                    results.append(
                        Published(playbook=name, kind=target.kind, path=str(path), status="refused", message=str(exc))
                    )
                    continue
                record_export(con, name, exported_version(con, settings, name), recorded_as(path), ids)
                results.append(
                    Published(playbook=name, kind=target.kind, path=recorded_as(path), status=status, file=path)
                )
    return results


class GitPublished(BaseModel):
    """What `publish_git` did: the branch, the commit (None when nothing changed), where it was pushed."""

    repo: str
    branch: str
    commit: str | None = None
    pushed_to: str | None = None
    message: str = ""
    files: list[Published] = Field(default_factory=list)


DEFAULT_GIT_KINDS = ("claude-md", "agents-md")  # what a playbook without targets publishes into a repository


def publish_git(settings: Settings, playbooks: list[str], repo: Path, branch: str) -> GitPublished:
    """Write the export targets of `playbooks` into a worktree of `repo` on `branch`, commit them with a
    summary of what changed since the last publish, and push the branch when the repository has a remote.

    The branch grows from its last publish (from the default branch the first time); nothing is committed
    when nothing changed; the default branch is refused.

    Raises:
        ConfigError: `branch` is the repository's default branch.
        GitError: `repo` is not a working copy, or a git command failed.
    """
    top = work_tree_root(repo.expanduser())
    remote = remote_of(top)
    default = default_branch(top, remote)
    if branch in {default, "main", "master"}:
        raise ConfigError(f"Refusing to publish on `{branch}`, the default branch: pass --branch playbook/update.")
    if remote:
        git(top, "fetch", "--quiet", remote)
    base = _publish_base(top, remote, branch) or (
        (branch_tip(top, f"{remote}/{default}") if remote else None) or branch_tip(top, "HEAD")
    )
    if base is None:
        raise GitError(f"`{top}` has no commit to start the `{branch}` branch from; commit something first.")
    since = published_versions(top, base)
    result = GitPublished(repo=str(top), branch=branch)
    with tempfile.TemporaryDirectory(prefix="playbook-publish-") as tmp:
        tree = Path(tmp) / "tree"
        add_worktree(top, tree, base)
        try:
            files = publish_targets(
                settings,
                playbooks,
                root=tree,
                default_kinds=DEFAULT_GIT_KINDS,
                recorded_as=lambda p: f"{top / p.relative_to(tree)} ({branch})",
            )
            written = [f.file for f in files if f.status == "written" and f.file is not None]
            with open_db(settings.db, wait=settings.busy_wait_s) as con:
                upto = {name: _published_version(con, settings, name) for name in playbooks}
                changes = {name: version_changes(con, name, since.get(name, 0), v) for name, v in upto.items()}
            message = publish_message(upto, since, changes)
            commit = commit_all(tree, written, message) if written else None
            if commit:
                set_branch(top, branch, commit)
                if remote:
                    push(top, remote, branch)
        finally:
            remove_worktree(top, tree)
    return result.model_copy(
        update={
            "commit": commit,
            "pushed_to": remote if commit else None,
            "message": message if commit else "nothing changed since the last publish",
            "files": files,
        }
    )


def _publish_base(top: Path, remote: str | None, branch: str) -> str | None:
    """Where the next publish commit grows from: the newer of the local `branch` and the remote's, so that
    commits only one of them has are built on, never orphaned; None when neither exists.

    Raises:
        GitError: the two have diverged (each has commits the other lacks); nothing is changed.
    """
    local = branch_tip(top, f"refs/heads/{branch}")
    theirs = branch_tip(top, f"refs/remotes/{remote}/{branch}") if remote else None
    if local is None or theirs is None or local == theirs:
        return local or theirs
    if is_ancestor(top, theirs, local):
        return local  # commits made here and not pushed yet: the publish goes on top and pushes them too
    if is_ancestor(top, local, theirs):
        return theirs
    raise GitError(
        f"Local branch `{branch}` and `{remote}/{branch}` have diverged (each has commits the other lacks);"
        f" merge or rebase `{branch}` and push it, or pass another --branch. Nothing was changed."
    )


def _published_version(con: duckdb.DuckDBPyConnection, settings: Settings, playbook: str) -> int:
    found = exported_version(con, settings, playbook)
    return current_version(con, playbook) if found is None else found


def publish_message(upto: dict[str, int], since: dict[str, int], changes: dict[str, dict[str, Any]]) -> str:
    """A publish commit's message: a subject, one line per playbook (versions, operations, sessions since the
    last publish) and one trailer per playbook, where the next publish starts counting."""
    subject = "playbook: " + ", ".join(f"{name} v{v}" for name, v in upto.items())
    lines = []
    for name, v in upto.items():
        c = changes[name]
        ops = ", ".join(f"{n} {t}" for t, n in c["operations"].items()) or "no operations"
        start = since.get(name, 0)
        lines.append(
            f"- {name}: version {start} -> {v} ({c['versions']} new version{'s' * (c['versions'] != 1)}),"
            f" {ops}, from {c['sessions']} session{'s' * (c['sessions'] != 1)}"
        )
    trailers = [f"{PUBLISH_TRAILER}: {name}={v}" for name, v in upto.items()]
    return "\n".join([subject, "", "Since the last publish:", *lines, "", *trailers]) + "\n"


def held_entries(settings: Settings, playbook: str) -> list[Screened]:
    """The entries of `playbook`'s exported version that the screen holds, with the rules that hold them."""
    with open_db(settings.db, create=False, wait=settings.busy_wait_s) as con:
        model = mask_playbook(
            load_version(con, playbook, exported_version(con, settings, playbook)), settings.redactor()
        )
        return screened(con, settings, playbook, model)[1]


def release_held(settings: Settings, playbook: str, names: Sequence[str], by: str | None) -> list[Screened]:
    """Release held entries for export, as they read now (a later change of the text is screened again).

    Raises:
        ConfigError: a name is not a held entry (nothing is released then).
    """
    with open_db(settings.db, create=False, wait=settings.busy_wait_s) as con:
        model = mask_playbook(
            load_version(con, playbook, exported_version(con, settings, playbook)), settings.redactor()
        )
        held = {h.name: h for h in screened(con, settings, playbook, model)[1]}
        unknown = [n for n in names if n not in held]
        if unknown:
            raise ConfigError(
                f"`{unknown[0]}` is not held by the screen in playbook `{playbook}`; `playbook review` lists the held"
                " entries. Nothing was released."
            )
        chosen = [held[n] for n in names]
        release_holds(con, playbook, chosen, by)
        return chosen


def pending_review(settings: Settings, playbook: str) -> list[ReviewChange]:
    """The changes of `playbook` awaiting `playbook review` (none when it does not require review)."""
    if settings.options(playbook).review != "required":
        return []
    with open_db(settings.db, wait=settings.busy_wait_s) as con:
        approved = load_version(con, playbook, approved_version(con, playbook))
        return review_changes(approved, load_version(con, playbook))


def estimate_run(
    settings: Settings,
    playbook: str,
    spec: ProviderSpec,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    project: str | None = None,
    limit: int | None = None,
    epoch_size: int | None = None,
    per_call: int = 600,
) -> Estimate:
    """What curating `playbook`'s pending sessions would send and cost, from the same renderer and prompt
    builders as a run (the playbook as it is now); nothing is written and no model is called."""
    redactor = settings.redactor()
    scope = settings.session_scope(playbook)
    shapes: dict[str, list[tuple[int, int]]] = {"reflector": [], "curator": []}
    ids: list[str] = []
    with open_db(settings.db, create=False, wait=settings.busy_wait_s) as con:  # an estimate creates nothing
        exists = playbook in playbook_names(con)
        current = load_version(con, playbook) if exists else Playbook(sections={})
        sections = sections_of(con, playbook) if exists else DEFAULT_SECTIONS
        reflector = template_for(settings, playbook, "reflector")
        curator = template_for(settings, playbook, "curator")
        reflection = ReflectorOutput(analysis="x " * (per_call * 2))  # about `per_call` tokens of findings
        for row in pending_sessions(
            con, playbook, project=project, since=since, until=until, limit=limit, idle_minutes=settings.idle_minutes
        ):
            if too_short(row["n_messages"], row["n_user_prompts"], settings.min_messages) is not None:
                continue
            if excluded(settings, row["project"], row["cwd"], row["contributor"]) is not None:
                continue
            if scope is not None and in_scope(scope[0], row["project"], row["cwd"]) != scope[1]:
                continue
            sid = row["session_id"]
            try:
                ask, _ = reflector_request(
                    reflector,
                    load_messages(con, sid),
                    current,
                    sections,
                    budget_tokens=settings.limits(spec.kind).max_input_tokens,
                    redactor=redactor,
                    model=spec.reflector_model,
                    session_id=sid,
                )
            except BudgetError:
                continue  # a run refuses it before any call: it costs nothing
            asks = (
                ask,
                curator_request(
                    curator,
                    reflection,
                    current,
                    sections,
                    model=spec.curator_model,
                    session_id=sid,
                    budget=budget_use(current, settings.budget(playbook)),
                ),
            )
            for step, request in zip(("reflector", "curator"), asks, strict=True):
                shapes[step].append((estimate_tokens(request.system), estimate_tokens(request.user)))
            ids.append(sid)
    return estimate_cost(
        ids,
        [(spec.reflector_model, shapes["reflector"]), (spec.curator_model, shapes["curator"])],
        epoch_size=epoch_size or settings.epoch_size,
        per_call=per_call,
        prices=settings.prices,
        local=settings.local_server(spec.kind),
    )
