"""The steps of a curation run as plain functions: select, reflect, curate, apply.

Prefect tasks in `flows.run.pipeline` are thin wrappers around these, and `flows.run.curation` sequences either
kind, so the logic is read and tested without Prefect. Each step receives a `RunContext` and an epoch,
opens DuckDB itself, and closes it (tasks receive paths and models, never connections). The values they take
and return are in `flows.run.run_state`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Literal

import duckdb

from core.budget import budget_use
from core.consolidate import merged_wordings
from core.curator import curator_request, phantom_targets, read_curator
from core.errors import AnswerError, AuthError, BudgetError
from core.llm.base import ANSWER_FAILURES, LLMRequest, LLMResponse, Provider
from core.llm.embed import neighbour_finder, sentences
from core.llm.guard import GuardedProvider
from core.miner import History, Observed, observe
from core.models import ApplyReport, CuratorOutput, Playbook, ReflectorOutput
from core.operations import NearFinder, apply_session
from core.prompts import PromptTemplate, load_template
from core.redact import mask_playbook, redact_answer
from core.reflector import phantom_tags, read_reflector, reflector_request
from core.request import Relevance, build_request, playbook_text
from core.scope import GLOBAL_PREFIX, combine, scope_note, split_output
from core.sections import SectionSet
from core.selection import SessionFilter, choose
from core.store.consolidation import merge_history
from core.store.db import transaction
from core.store.embeddings import store_missing_vectors, vectors_for
from core.store.exchanges import cached_response, record_exchanges, reusable_reflection
from core.store.exposure import exposed_entries
from core.store.findings import RulesFinding, record_findings
from core.store.ledger import (
    applied_among,
    mark_all_applied,
    mark_applied,
    mark_session,
    pending_sessions,
    previous_applies,
    previous_apply,
    record_failure,
)
from core.store.observations import (
    evidence_sessions,
    session_place,
    session_places,
    store_observations,
    stored_observations,
)
from core.store.registry import ensure_playbook
from core.store.runs import close_epoch, open_epochs, plan_epoch
from core.store.sessions import load_messages, load_messages_of, record_redactions, session_label
from core.store.versions import SessionChange, current_version, tip_of, write_version
from core.tokens import estimate_tokens
from flows.context import RunConfig
from flows.run.fanout import answer_requests
from flows.run.near import RULES_NEAR, near_duplicates, only_close
from flows.run.progress import emit
from flows.run.run_state import (
    Epoch,
    ErrorKind,
    OutputT,
    RunContext,
    Selection,
    SessionApply,
    StepResult,
    Steps,
)
from flows.run.shown import KNOWN_IDS, exposed_playbooks, exposure_names, known_ids

__all__ = [
    "apply_epoch_sessions",
    "curate_sessions",
    "next_epoch",
    "plain_steps",
    "reflect_sessions",
    "select_sessions",
    "template_for",
    "timed",
]

# The most of a curator request a playbook may take; a larger one is cut to each session's relevant entries.
PLAYBOOK_SHARE = 0.5
# Entries shown to the curator as close to a finding: at least this share of the near-duplicate threshold
# (closer than that and an ADD would be skipped anyway; a little below, the curator should still see them).
NEIGHBOUR_SHARE = 0.8
STORE_EVERY_S = 1.0  # answers are held in memory at most this long before they are stored
# The rules weigh a lesson by the project's sessions that showed it: this run's, and this many observed before
# (a project's recent months at a few sessions a day; its oldest sessions no longer change what is routine).
RECENT_EVIDENCE = 200
EVIDENCE_READ = 64  # sessions read in one query for the evidence (a bound on the messages held at once)


def select_sessions(ctx: RunContext, chosen: SessionFilter | None = None) -> Selection:
    """Sessions to curate (within the playbook's scope); too-short ones are marked skipped with their reason."""
    with ctx.db.open() as con:
        ensure_playbook(con, ctx.playbook)
        resumed: list[Epoch] = []
        in_open: set[str] = set()
        for epoch_no, base, ids in open_epochs(con, ctx.playbook):
            done = applied_among(con, ctx.playbook, ids)
            remaining = [i for i in ids if i not in done]
            in_open.update(ids)
            if remaining:
                resumed.append(Epoch(epoch_no=epoch_no, base_version=base, session_ids=remaining))
            else:
                close_epoch(con, ctx.playbook, epoch_no)
        taken, skipped = choose(
            pending_sessions(con, ctx.playbook, chosen, idle_minutes=ctx.config.idle_minutes),
            scope=ctx.config.scope,
            min_messages=ctx.config.min_messages,
            consent=ctx.config.consent,
            left_out=in_open,
        )
        for session_id, reason in skipped.items():
            mark_session(con, ctx.playbook, session_id, "skipped", reason)
    return Selection([s.session_id for s in taken], skipped, resumed)


def next_epoch(ctx: RunContext, session_ids: list[str]) -> Epoch:
    """Record the next epoch, frozen at the playbook's current version."""
    with ctx.db.open() as con:
        base = current_version(con, ctx.playbook)
        number = plan_epoch(con, ctx.playbook, base, session_ids, ctx.run_id)
    return Epoch(epoch_no=number, base_version=base, session_ids=session_ids)


def _run_step(
    ctx: RunContext,
    epoch: Epoch,
    build: Callable[
        [duckdb.DuckDBPyConnection, Playbook, SectionSet, PromptTemplate], tuple[list[LLMRequest], dict[str, str]]
    ],
    template_name: str,
    read: Callable[[str | None], OutputT],
    reuse: Callable[[duckdb.DuckDBPyConnection, LLMRequest], LLMResponse | None] | None = None,
    check: Callable[[OutputT, set[str]], str | None] | None = None,
) -> list[StepResult[OutputT]]:
    """Build the requests, answer them (reused from earlier runs where possible) and record every exchange.

    `read` turns an answer's text into the step's output, or raises `AnswerError` (cut short, wrong shape, no JSON);
    `check` says why an output of the right shape answers no request of ours, given the ids its session may name
    (`KNOWN_IDS` in the request's context). Such an answer, like one the provider says was cut short
    (`ANSWER_FAILURES`), fails the session and counts against it; a failed call (the API, the network, a
    deadline) fails it without counting.

    The rules' answers are not stored here (`apply_epoch_sessions` stores them as findings). No connection is open
    while the model works: the database is opened briefly to prepare, and again to store the answers that arrived
    within `STORE_EVERY_S` of the first one held (so a run killed later reuses them instead of paying again, and
    loses at most that second of answers), which leaves the file free for other commands in between. Answers that
    arrive together (an instant or local model, a batch) are stored with one opening of the file, whose cost (~20 ms
    of CPU) would otherwise be paid per answer.
    """
    config = ctx.config

    def judge(request: LLMRequest, response: LLMResponse) -> tuple[OutputT | None, str | None, ErrorKind | None]:
        parsed, error, kind = _read(read, response)
        known = request.context.get(KNOWN_IDS)
        problem = check(parsed, known) if parsed is not None and check is not None and known is not None else None
        return (None, problem, "output") if problem is not None else (parsed, error, kind)

    requests, unprepared, provider, reused = _prepare(ctx, epoch, build, template_name, reuse, judge)
    results: dict[int, StepResult[OutputT]] = {}

    def take(i: int, answer: LLMResponse) -> tuple[LLMRequest, LLMResponse, OutputT | None]:
        # A model's words are untrusted text too: nothing it echoes (a key, a home path) is stored or applied. The
        # rules' are not redacted again: every field they write from a session they redact as they write it.
        response = (
            answer.model_copy(update={"text": redact_answer(answer.text, ctx.redactor)})
            if answer.text and ctx.spec.calls_a_model
            else answer
        )
        parsed, error, kind = judge(requests[i], response)
        results[i] = StepResult[OutputT](
            session_id=requests[i].session_id or "", response=response, error=error, error_kind=kind, output=parsed
        )
        stored = response if error is None or response.error else response.model_copy(update={"error": error})
        return requests[i], stored, parsed

    def store(answers: list[tuple[int, LLMResponse]]) -> None:
        # Its own frame, so no connection object outlives the `with` (an exception's traceback keeps frames).
        exchanges = [take(i, answer) for i, answer in answers]
        if not ctx.spec.calls_a_model:  # the rules' results are no exchanges: stored as findings when applied
            return
        with ctx.db.open() as con, transaction(con):
            record_exchanges(
                con, exchanges, playbook=ctx.playbook, playbook_version=epoch.base_version, run_id=ctx.run_id
            )

    held: list[tuple[int, LLMResponse]] = list(reused.items())
    since = time.monotonic()
    todo = [i for i in range(len(requests)) if i not in reused]
    answered = 0
    if todo and provider.name != "heuristic":  # a model's calls take seconds to minutes each: say how many are done
        emit(template_name, 0, len(todo))
    answers = (
        answer_requests(provider, requests, todo, config.concurrency, config.warm_cache, tick=STORE_EVERY_S)
        if ctx.spec.calls_a_model
        else _answered_here(provider, requests, todo)
    )
    for batch in answers:
        if batch and not held:
            since = time.monotonic()
        held += batch
        if batch and provider.name != "heuristic":
            answered += len(batch)
            emit(template_name, answered, len(todo))
        refused = next((answer for _, answer in batch if answer.failure == "auth"), None)
        if held and (refused is not None or time.monotonic() - since >= STORE_EVERY_S):
            store(held)
            held = []
        if refused is not None:  # every other call would be refused the same way
            raise AuthError(
                f"The model API refused the key from {ctx.spec.key_source or 'the settings'}"
                f" ({refused.error}); set a valid key, or run with `--llm heuristic`."
            )
    if held:
        store(held)
    failed = [
        StepResult[OutputT](session_id=sid, error=reason, error_kind="preparation")
        for sid, reason in unprepared.items()
    ]
    return [results[i] for i in range(len(requests))] + failed


def _read(
    read: Callable[[str | None], OutputT], response: LLMResponse
) -> tuple[OutputT | None, str | None, ErrorKind | None]:
    """(the step's output, or why there is none and whether that counts against the session: `output` does,
    `call` does not)."""
    if response.error is not None or response.text is None:
        kind: ErrorKind = "output" if response.failure in ANSWER_FAILURES else "call"
        return None, response.error or "the model gave no text", kind
    try:
        return read(response.text), None, None
    except AnswerError as exc:
        return None, str(exc), "output"


def template_for(config: RunConfig, name: str) -> PromptTemplate:
    """The prompt template `name` for the run's playbook: its own override, the settings' folder, else the
    shipped one."""
    return load_template(name, override_dirs=list(config.prompt_dirs))


def _prepare(
    ctx: RunContext,
    epoch: Epoch,
    build: Callable[
        [duckdb.DuckDBPyConnection, Playbook, SectionSet, PromptTemplate], tuple[list[LLMRequest], dict[str, str]]
    ],
    template_name: str,
    reuse: Callable[[duckdb.DuckDBPyConnection, LLMRequest], LLMResponse | None] | None,
    judge: Callable[[LLMRequest, LLMResponse], tuple[Any, str | None, ErrorKind | None]],
) -> tuple[list[LLMRequest], dict[str, str], Provider, dict[int, LLMResponse]]:
    """(requests, sessions that could not be prepared, the guarded provider, answers reused from earlier).

    An answer stored by an earlier version that reads it more leniently (a cut-off answer taken for its first
    inner object), or that `judge` now refuses, is not reused: the call is made again."""
    with ctx.db.open() as con:
        frozen = ctx.memo.version(con, ctx.playbook, epoch.base_version)
        companion = ctx.config.companion
        if companion is not None:  # the prompts show the global playbook too, ids prefixed
            ensure_playbook(con, companion)
            frozen = combine(frozen, ctx.memo.version(con, companion))
        sections = ctx.memo.section_set(con, ctx.playbook)
        template = template_for(ctx.config, template_name)  # fails before any model call
        requests, unprepared = build(con, frozen, sections, template)
        provider = GuardedProvider(ctx.provider, ctx.guard, ctx.slot if ctx.spec.calls_a_model else None)
        reused = {
            i: hit
            for i, r in enumerate(requests)
            if provider.cacheable
            and (hit := cached_response(con, r) or (reuse(con, r) if reuse else None)) is not None
            and judge(r, hit)[1] is None
        }
    return requests, unprepared, provider, reused


def _mining(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    session_id: str,
    messages: list[Any],
    place: tuple[str | None, str | None] | None = None,
    whole: bool = False,
) -> dict[str, Any]:
    """For the rules (no model): what the miner observes in this session's messages, and the evidence of the
    project's sessions this run weighs, its own and those observed before (`evidence_sessions`; each observed once
    and stored; added up once per run). `place`: the session's (project, folder), when the caller has it; `whole`:
    the messages are the whole session (then what the evidence pass observed in it, in the same folder, is it)."""
    if ctx.spec.calls_a_model:
        return {}
    project, cwd = session_place(con, session_id) if place is None else place
    history = ctx.memo.histories.get(project)
    if history is None:
        sizes = evidence_sessions(con, project, session_id, ctx.memo.chosen, RECENT_EVIDENCE)
        stored = stored_observations(con, sizes)
        unseen = [sid for sid in sizes if sid not in stored]
        new: dict[str, tuple[int, Observed]] = {}
        for at in range(0, len(unseen), EVIDENCE_READ):  # a query per session cost more than observing it
            for sid, found in load_messages_of(con, unseen[at : at + EVIDENCE_READ]):
                new[sid] = (sizes[sid], observe(found, cwd))
                if sid in ctx.memo.chosen:
                    ctx.memo.evidence[sid] = (cwd, new[sid][1])
        store_observations(con, new)
        stored.update((sid, seen) for sid, (_, seen) in new.items())
        history = ctx.memo.histories[project] = History.of((sid, stored[sid]) for sid in sizes)
    seen = ctx.memo.evidence.pop(session_id, None)
    if not (whole and seen is not None and seen[0] == cwd):
        seen = (cwd, observe(messages, cwd))
    observed = ctx.memo.observed[session_id] = seen[1]
    return {"observed": observed, "history": history, "project": project}


def _rules_context(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, session_id: str, place: tuple[str | None, str | None]
) -> dict[str, Any]:
    """For the rules' curator step: the same observations and evidence as its reflector step (typed lessons are
    built from them again; no text passes between the steps). `place`: the session's (project, folder)."""
    if ctx.spec.calls_a_model:
        return {}
    if session_id not in ctx.memo.observed:  # the reflection came from another run: observe the session again
        before = previous_apply(con, ctx.playbook, session_id)
        messages = load_messages(con, session_id, after=before[0] if before else None)
        return _mining(con, ctx, session_id, messages, place)
    project = place[0]
    return {"observed": ctx.memo.observed[session_id], "history": ctx.memo.histories.get(project), "project": project}


def _places(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, session_ids: list[str]
) -> dict[str, tuple[str | None, str | None]]:
    """`session_places` of the sessions, taken from their reflector step where it read them (a session's project
    and folder do not change while it is curated)."""
    unread = [sid for sid in session_ids if sid not in ctx.memo.places]
    if unread:
        ctx.memo.places.update(session_places(con, unread))
    return {sid: ctx.memo.places.pop(sid) for sid in session_ids}


def _exposure(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, epoch: Epoch, session_ids: list[str]
) -> dict[str, set[str]]:
    """`exposure_names` of the epoch's sessions, read once for its steps (no session of an epoch is running: what it
    had does not change while the epoch is curated)."""
    held = ctx.memo.exposed.get(epoch.epoch_no)
    if held is None or not set(session_ids) <= held.keys():
        held = ctx.memo.exposed[epoch.epoch_no] = exposure_names(con, ctx, epoch.session_ids)
    return {sid: held[sid] for sid in session_ids}


def _answered_here(
    provider: Provider, requests: list[LLMRequest], todo: list[int]
) -> Iterator[list[tuple[int, LLMResponse]]]:
    """The rules' answers, in this thread and at once: they are computed, not waited for (a thread per request cost
    more than the answer)."""
    if todo:
        yield [(i, provider.complete(requests[i])) for i in todo]


def _unread_request(
    template: PromptTemplate, session_id: str, parts: int, *, model: str, max_tokens: int, context: dict[str, Any]
) -> LLMRequest:
    """The rules' reflector request: they read the session's messages (`context`), never a prompt, so its
    transcript is not rendered, redacted or fitted to a budget (a model's context), only counted."""
    unread = "(the rules read no prompt)"
    values = {"sections": unread, "playbook": unread, "session_meta": session_id}
    return build_request(
        template,
        values | {"transcript": f"({parts:,} message parts; the rules read no prompt)"},
        model=model,
        session_id=session_id,
        max_tokens=max_tokens,
        context=context,
    )


def reflect_sessions(ctx: RunContext, epoch: Epoch) -> list[StepResult[ReflectorOutput]]:
    """Reflector calls for an epoch's sessions, against the epoch's frozen playbook. The epoch's sessions are
    read in one query. For the rules no prompt is rendered (no model reads one), so no redaction is counted either:
    what they read was redacted at ingest, and what they write is redacted as they write it."""

    def build(
        con: duckdb.DuckDBPyConnection, frozen: Playbook, sections: SectionSet, template: PromptTemplate
    ) -> tuple[list[LLMRequest], dict[str, str]]:
        requests = []
        unprepared: dict[str, str] = {}
        redacted: dict[str, tuple[int, int]] = {}
        names = _exposure(con, ctx, epoch, epoch.session_ids)
        had = exposed_playbooks(con, ctx, frozen, epoch.session_ids, names)  # each session: what its agent had
        may_name = known_ids(con, ctx, frozen, epoch.session_ids, names)
        places = session_places(con, epoch.session_ids) if not ctx.spec.calls_a_model else {}
        ctx.memo.places.update(places)  # for the curator step
        limits = ctx.config.limits
        # A session that grew since it was applied is judged on its new part only.
        before = ctx.memo.applied[epoch.epoch_no] = previous_applies(con, ctx.playbook, epoch.session_ids)
        after = {sid: applied[0] for sid, applied in before.items()}
        for session_id, messages in load_messages_of(con, epoch.session_ids, after=after):
            try:
                context = {"messages": messages, "playbook": had[session_id], KNOWN_IDS: may_name[session_id]}
                if not ctx.spec.calls_a_model:
                    requests.append(
                        _unread_request(
                            template,
                            session_id,
                            len(messages),
                            model=ctx.spec.reflector_model,
                            max_tokens=limits.reflector_max_tokens,
                            context=context
                            | _mining(con, ctx, session_id, messages, places[session_id], session_id not in before),
                        )
                    )
                    continue
                request, rendered = reflector_request(
                    template,
                    messages,
                    had[session_id],
                    sections,
                    budget_tokens=limits.max_input_tokens,
                    redactor=ctx.redactor,
                    model=ctx.spec.reflector_model,
                    session_id=session_id,
                    max_tokens=limits.reflector_max_tokens,
                    session_meta=session_label(con, session_id),
                    context=context,
                )
            except BudgetError as exc:  # refused before any call, with the reason
                unprepared[session_id] = str(exc)
                continue
            except Exception as exc:  # one session that cannot be read must not stop the epoch
                unprepared[session_id] = f"preparation failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
                continue
            redacted[session_id] = (rendered.redactions, rendered.personal)
            requests.append(request)
        record_redactions(con, redacted)
        return requests, unprepared

    def earlier(con: duckdb.DuckDBPyConnection, request: LLMRequest) -> LLMResponse | None:
        return reusable_reflection(con, ctx.playbook, request)

    return _run_step(ctx, epoch, build, "reflector", read_reflector, earlier, phantom_tags)


def curate_sessions(
    ctx: RunContext, epoch: Epoch, reflections: list[StepResult[ReflectorOutput]]
) -> list[StepResult[CuratorOutput]]:
    """Curator calls for the sessions whose reflection succeeded (reflector output only, no transcript); a
    reflection that found nothing gets no call (no call, no cost; its tags still apply)."""
    usable = [(r.session_id, r.output) for r in reflections if r.output is not None and r.output.analysis.strip()]
    nothing = {
        r.session_id: StepResult[CuratorOutput](
            session_id=r.session_id, output=CuratorOutput(reasoning="", operations=[])
        )
        for r in reflections
        if r.output is not None and not r.output.analysis.strip()
    }

    def build(
        con: duckdb.DuckDBPyConnection, frozen: Playbook, sections: SectionSet, template: PromptTemplate
    ) -> tuple[list[LLMRequest], dict[str, str]]:
        # The rules read no prompt: theirs names the playbook only (rendering thousands of entries is their cost),
        # and carries neither the budget nor each finding's closest entries, which would be weighed and searched
        # over every entry of the playbook each epoch for no reader.
        reads = ctx.spec.calls_a_model
        entries = [e for _, e in frozen.entries()] if reads else []
        use = budget_use(_own(frozen), ctx.config.budget) if reads else None
        companion = ctx.config.companion
        findings = {session_id: sentences(output.analysis) for session_id, output in usable}
        known: dict[str, Any] = {}
        floor = 1.0
        index = None
        similarity = ctx.config.similarity()
        if similarity is not None and frozen.size():
            embedder, threshold = similarity
            said = [s for found in findings.values() for s in found]
            if reads:
                known = vectors_for(con, embedder, [e.text for e in entries] + said, memo=ctx.memo.vectors)
            else:  # the findings' vectors stored all the same (a run stores the same rows whoever reads the prompt)
                store_missing_vectors(con, embedder, said, ctx.memo.stored.setdefault(embedder.name, set()))
            floor = threshold * NEIGHBOUR_SHARE
            index = ctx.memo.index(embedder.name)  # the run's: an epoch adds only its new texts
        limits = ctx.config.limits
        shown = playbook_text(frozen) if reads else f"({frozen.size():,} entries; the rules read no prompt)"
        # A playbook larger than its share of the request goes in cut to what each session's findings are about.
        room = int(limits.max_input_tokens * PLAYBOOK_SHARE)
        relevance = Relevance(frozen) if reads and estimate_tokens(shown) > room else None
        neighbours = neighbour_finder(known, entries, floor=floor, index=index) if known and entries else None
        requests: list[LLMRequest] = []
        refused: dict[str, str] = {}
        ids = [session_id for session_id, _ in usable]
        may_name = known_ids(con, ctx, frozen, ids, _exposure(con, ctx, epoch, ids))
        places = {} if reads else _places(con, ctx, ids)
        for session_id, output in usable:
            near = neighbours(findings[session_id]) if neighbours else ()
            if relevance is not None:
                close = {e.name for _, found in near for e, _ in found}
                shown = relevance.text(output.analysis, room, keep=close)
            try:
                requests.append(
                    curator_request(
                        template,
                        output,
                        frozen,
                        sections,
                        model=ctx.spec.curator_model,
                        session_id=session_id,
                        max_tokens=limits.curator_max_tokens,
                        context={"reflection": output, "playbook": frozen, KNOWN_IDS: may_name[session_id]}
                        | _rules_context(con, ctx, session_id, places.get(session_id, (None, None))),
                        neighbours=near,
                        budget=use,
                        note=scope_note(companion) if companion else None,
                        budget_tokens=limits.max_input_tokens if reads else None,  # no model context to fit
                        shown=shown,
                    )
                )
            except BudgetError as exc:  # refused before any call, with the reason
                refused[session_id] = str(exc)
        return requests, refused

    curated = nothing | (
        {r.session_id: r for r in _run_step(ctx, epoch, build, "curator", read_curator, check=phantom_targets)}
        if usable
        else {}
    )
    return [
        curated.get(r.session_id)
        or StepResult[CuratorOutput](session_id=r.session_id, error=f"reflector: {r.error}", error_kind=r.error_kind)
        for r in reflections
    ]


def _own(frozen: Playbook) -> Playbook:
    """`frozen` without the global playbook's entries (a bound playbook's prompt shows them, its budget counts them
    not)."""
    return frozen.model_copy(
        update={
            "sections": {n: [e for e in v if not e.name.startswith(GLOBAL_PREFIX)] for n, v in frozen.sections.items()}
        }
    )


def apply_epoch_sessions(
    ctx: RunContext,
    epoch: Epoch,
    reflections: list[StepResult[ReflectorOutput]],
    curations: list[StepResult[CuratorOutput]],
) -> list[SessionApply]:
    """Apply strictly in session order; failed sessions stay pending. A model's run writes one new version per
    session; the rules (no model, no companion playbook) write one per epoch, holding each session's changes under
    its own id (`SessionChange`), since a version per session was most of a keyless run's cost."""
    by_session = {c.session_id: c for c in curations}
    results: list[SessionApply] = []
    with ctx.db.open() as con:
        sections = ctx.memo.section_set(con, ctx.playbook)
        base = parent = current_version(con, ctx.playbook)
        current = ctx.memo.version(con, ctx.playbook, parent)  # kept in memory: no rebuild per session
        tip = ctx.memo.tips.get(ctx.playbook)
        if tip is None or tip.version != parent:  # the open rows each write compares with, read once
            tip = ctx.memo.tips[ctx.playbook] = tip_of(con, ctx.playbook)
        companion = ctx.config.companion
        one_version = not ctx.spec.calls_a_model and not companion
        changes: list[SessionChange] = []  # the epoch's version, when it writes one
        quiet: dict[str, bool] = {}  # sessions that changed nothing: whether an earlier one of the epoch did
        near = near_duplicates(con, ctx.config, ctx.memo, current, curations)
        if near is not None and not ctx.spec.calls_a_model:
            near = only_close(near, RULES_NEAR)
        # Wordings merged into a live entry are that entry's: proposed again, they are rediscoveries of it.
        merged = _merged(con, ctx) if near is not None else None
        aliases = merged[1] if merged is not None else None
        # Tags count only on entries the session's agent had.
        ids = [r.session_id for r in reflections]
        had = exposed_entries(con, ctx.playbook, ids) if companion else _exposure(con, ctx, epoch, ids)
        had_global = exposed_entries(con, companion, [r.session_id for r in reflections]) if companion else {}
        earlier = ctx.memo.applied.pop(epoch.epoch_no, None)
        if earlier is None:  # the reflector step's reading is not held (a step retried in another process)
            earlier = previous_applies(con, ctx.playbook, ids)
        if not ctx.spec.calls_a_model:  # what the rules found, stored once, with what it changes (`_run_step`)
            record_findings(
                con,
                ctx.playbook,
                [_finding(r, by_session.get(r.session_id)) for r in reflections],
                playbook_version=epoch.base_version,
                run_id=ctx.run_id,
            )
        for reflection in reflections:
            curation = by_session.get(reflection.session_id)
            if reflection.output is None or curation is None or curation.output is None:
                reason = reflection.error or (curation.error if curation else None) or "no curator result"
                kind = reflection.error_kind or (curation.error_kind if curation else None)
                status: Literal["failed", "quarantined"] = "failed"
                if kind in ("output", "preparation"):  # a failed call is retried as is, never counted
                    attempts = record_failure(
                        con, ctx.playbook, reflection.session_id, reason, ctx.run_id, ctx.config.max_attempts
                    )
                    status = "quarantined" if attempts >= ctx.config.max_attempts else "failed"
                results.append(SessionApply(session_id=reflection.session_id, status=status, reason=reason))
                continue
            mine, theirs = (
                split_output(reflection.output, curation.output)
                if companion
                else (
                    (reflection.output, curation.output),
                    None,
                )
            )
            new, report = apply_session(
                current,
                mine[0],
                mine[1],
                sections=sections,
                guards=ctx.config.guards,
                near=near,
                aliases=aliases,
                exposed=had[reflection.session_id],
                reported=ctx.memo.reported(con, ctx.playbook),
            )
            ctx.memo.carry_reports(ctx.playbook, report)
            if report.held:  # valid, but it would take too much away: kept for a person to look at
                record_failure(
                    con,
                    ctx.playbook,
                    reflection.session_id,
                    report.held,
                    ctx.run_id,
                    ctx.config.max_attempts,
                    hold=True,
                )
                results.append(SessionApply(session_id=reflection.session_id, status="held", reason=report.held))
                continue
            before = earlier.get(reflection.session_id)
            if report.empty() and not (companion and theirs and (theirs[0].bullet_tags or theirs[1].operations)):
                # Nothing proposed, tagged or pruned: no version, the session is applied at the current one.
                if one_version:
                    quiet[reflection.session_id] = bool(changes)
                else:
                    with transaction(con):
                        mark_applied(con, ctx.playbook, reflection.session_id, parent, "applied", None)
                results.append(SessionApply(session_id=reflection.session_id, status="applied", report=report))
                continue
            # No entry keeps a secret or personal data a model wrote.
            new = mask_playbook(new, ctx.redactor, clean=ctx.memo.clean)
            notes = [f"the session's new part (it was first applied in version {before[1]})"] if before else []
            if not mine[0].analysis.strip():
                notes.append("no curator call: the reflector found nothing")  # said where it shows
            if one_version:  # written with the rest of the epoch's changes, below
                changes.append(SessionChange(reflection.session_id, report, "; ".join(notes) or None))
                current = new
                results.append(SessionApply(session_id=reflection.session_id, status="applied", report=report))
                continue
            version = write_version(
                con,
                ctx.playbook,
                new,
                source="session",
                session_id=reflection.session_id,
                report=report,
                run_id=ctx.run_id,
                expected_parent=parent,
                note="; ".join(notes) or None,
                tip=tip,
            )
            ctx.memo.wrote(ctx.playbook, version, new)
            parent, current = version, new
            if companion and theirs and (theirs[0].bullet_tags or theirs[1].operations):
                _apply_to_companion(
                    con,
                    ctx,
                    companion,
                    reflection.session_id,
                    theirs,
                    near,
                    had_global.get(reflection.session_id, set()),
                )
            results.append(
                SessionApply(session_id=reflection.session_id, status="applied", version=version, report=report)
            )
        if changes:
            version = write_version(
                con,
                ctx.playbook,
                current,
                source="session",
                changes=changes,
                run_id=ctx.run_id,
                expected_parent=parent,
                tip=tip,
            )
            ctx.memo.wrote(ctx.playbook, version, current)
            wrote = {c.session_id for c in changes}
            results = [r.model_copy(update={"version": version}) if r.session_id in wrote else r for r in results]
            parent = version
        if quiet:  # applied at the version current when each was reached: before the epoch's changes, or with them
            with transaction(con):
                mark_all_applied(con, ctx.playbook, {sid: parent if after else base for sid, after in quiet.items()})
        if merged is not None:
            _keep_merged(ctx, merged, [r.report for r in results if r.report is not None])
        close_epoch(con, ctx.playbook, epoch.epoch_no)
        ctx.memo.exposed.pop(epoch.epoch_no, None)
    return results


def _merged(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> tuple[frozenset[str], dict[str, str]]:
    """The wordings merged into the playbook's live entries (`merged_wordings` of its `merge_history`), with the entry
    ids that history names: as the run's epoch before left them (`_keep_merged`), else read (a query of every MERGE,
    ~3 ms of CPU an epoch, for what only a MERGE changes). Taken out of the run's memory until the epoch is applied:
    an epoch that fails half-way leaves nothing stale behind."""
    held = ctx.memo.merged.pop(ctx.playbook, None)
    if held is None:
        history = merge_history(con, ctx.playbook)
        held = (frozenset(r[0] for r in history), merged_wordings(history))
    return held


def _keep_merged(ctx: RunContext, held: tuple[frozenset[str], dict[str, str]], reports: list[ApplyReport]) -> None:
    """Keep the merged wordings for the next epoch, unless this one changed what `merge_history` reads: it applied a
    MERGE, or an ADD of an id some MERGE gave out."""
    if not any(
        o.status == "applied" and (o.type == "MERGE" or (o.type == "ADD" and o.entry_id in held[0]))
        for report in reports
        for o in report.outcomes
    ):
        ctx.memo.merged[ctx.playbook] = held


def _finding(reflection: StepResult[ReflectorOutput], curation: StepResult[CuratorOutput] | None) -> RulesFinding:
    """A session's result of the rules, from its two steps."""
    output = curation.output if curation is not None else None
    error = reflection.error or (curation.error if curation is not None else None)
    return RulesFinding(reflection.session_id, reflection.output, output, error)


def _apply_to_companion(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    companion: str,
    session_id: str,
    part: tuple[ReflectorOutput, CuratorOutput],
    near: NearFinder | None,
    exposed: set[str],
) -> None:
    """The global playbook's part of a bound playbook's session: its own version, from the same model call."""
    current = ctx.memo.version(con, companion)
    new, report = apply_session(
        current,
        part[0],
        part[1],
        sections=ctx.memo.section_set(con, companion),
        guards=ctx.config.guards,
        near=near,
        exposed=exposed,
        reported=ctx.memo.reported(con, companion),
    )
    ctx.memo.carry_reports(companion, report)
    if report.held:
        record_failure(con, companion, session_id, report.held, ctx.run_id, ctx.config.max_attempts, hold=True)
        return
    new = mask_playbook(new, ctx.redactor, clean=ctx.memo.clean)
    version = write_version(
        con,
        companion,
        new,
        source="session",
        session_id=session_id,
        report=report,
        run_id=ctx.run_id,
        note=f"from a session of playbook `{ctx.playbook}` (one model call for both)",
    )
    ctx.memo.wrote(companion, version, new)


def plain_steps() -> Steps:
    """The steps as plain functions (tests, benchmarks, and runs that need no Prefect)."""
    return Steps(reflect_sessions, curate_sessions, apply_epoch_sessions)


def timed(phases: dict[str, float], name: str) -> Callable[[], None]:
    """Start timing a phase; call the returned function to add the elapsed seconds."""
    started = time.perf_counter()

    def stop() -> None:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

    return stop
