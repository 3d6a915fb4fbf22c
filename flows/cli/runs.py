"""The run commands: `curate`, `recurate`, `nightly`, `backfill` (one library call, `flows.run.launch`, for the four)
and `consolidate`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from flows.cli._options import (
    AssumeOpt,
    DbOpt,
    DryRunOpt,
    JsonOpt,
    LlmOpt,
    MaxCostOpt,
    PlaybookOpt,
    ProjectOpt,
    SinceOpt,
    WaitOpt,
    provider_name,
    sources,
    workspace,
)
from flows.cli._render import err, escape, out, print_json, progress_bars, render_run

if TYPE_CHECKING:
    from core.runsummary import RunSummary
    from flows.run.launch import Launch, Quote
    from flows.workspace import Workspace

app = typer.Typer()

# Some sessions failed and the rest were applied: neither success (0) nor an error (1).
EXIT_SOME_FAILED = 3


def _report(summaries: list[RunSummary], as_json: bool) -> None:
    if as_json:
        print_json([s.model_dump() for s in summaries])
    else:
        for summary in summaries:
            render_run(summary)
    if any(s.status == "partial" for s in summaries):
        raise typer.Exit(code=EXIT_SOME_FAILED)


def _render_quote(quote: Quote, per_call: int, as_json: bool) -> None:
    est, provider = quote.estimate, quote.provider
    if as_json:
        extra = {"provider": provider.label, "price_usd": quote.price, "max_calls": quote.max_calls, "runs": quote.runs}
        print_json(est.model_dump() | extra)
        return
    tokens = (
        f"~{est.input_tokens:,} input tokens, ~{est.cache_write_tokens:,} written to and ~{est.cache_read_tokens:,}"
        f" read from the prompt cache ({est.cache_reuse:.0%} of prompt tokens), ~{est.output_tokens:,} output"
        f" tokens ({per_call} assumed per call)"
    )
    head = f"Would send {len(est.sessions)} session(s) to {provider.label}"
    if not provider.calls_a_model:
        out.print(f"{head}: the rules read them here; no model is called and nothing is paid.", highlight=False)
    elif provider.subscription:
        plan = "a Claude subscription" if provider.kind == "claude-cli" else "a ChatGPT plan"
        out.print(
            f"{head} ({plan}: nothing is billed per token): {est.calls} calls, at most {quote.max_calls} a run"
            f" (`max_calls`), so {quote.runs} run(s); {tokens}.",
            highlight=False,
        )
    elif provider.local:
        out.print(
            f"{head} (a server of your own, model {provider.reflector_model}): {est.calls} calls, {tokens}."
            f"\nEstimated cost: ${est.live_usd:.4f} (a local server is priced from `prices` only).",
            highlight=False,
        )
    else:
        out.print(
            f"{head} (reflector {provider.reflector_model}, curator {provider.curator_model}): {est.calls} calls,"
            f" {tokens}.\nEstimated cost: ${est.live_usd:.4f} live, ${est.batch_usd:.4f} through batches.",
            highlight=False,
        )
        if provider.kind in ("anthropic", "batch") and provider.key_source is None:
            out.print("No API key is set here: the run itself needs ANTHROPIC_API_KEY.", highlight=False)


def _run(ws: Workspace, request: Launch, *, dry_run: bool = False, as_json: bool = False) -> list[str]:
    """Estimate (`--dry-run`) or launch `request`, print what happened and exit with the code that says it.

    Returns:
        The sessions `recurate` made pending again.
    """
    from core.runsummary import RunFailedError
    from flows.run.launch import estimate, launch

    if dry_run:
        _render_quote(estimate(ws, request), request.per_call, as_json)
        return []
    try:
        launched = launch(ws, request, watching=progress_bars)
    except RunFailedError as exc:
        _report(exc.summaries, as_json)
        raise
    if launched.requeued and not as_json:
        err.print(f"{len(launched.requeued)} session(s) queued again for playbook `{ws.playbook}`.", highlight=False)
    _report(launched.summaries, as_json)
    return launched.requeued


@app.command("curate")
def curate_cmd(
    limit: Annotated[int | None, typer.Option(help="At most this many sessions.")] = None,
    epoch_size: Annotated[int | None, typer.Option(help="Sessions judged against one frozen playbook.")] = None,
    llm: LlmOpt = None,
    project: ProjectOpt = None,
    since: SinceOpt = None,
    until: Annotated[datetime | None, typer.Option(help="Only sessions started before this date.")] = None,
    create: Annotated[bool, typer.Option("--create", help="Create the playbook if it does not exist.")] = False,
    dry_run: DryRunOpt = False,
    max_cost: MaxCostOpt = None,
    assume_output: AssumeOpt = 600,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Reflect on and curate the sessions this playbook has not seen yet.

    `--dry-run` prints the sessions that would be sent, their tokens and the estimated cost, live and through
    batches; `--max-cost` refuses to start a run estimated above it.

    Example: [bold]playbook curate --limit 20 --llm heuristic[/bold]
    """
    from core.selection import SessionFilter
    from flows.run.launch import Launch

    ws = workspace(db, playbook, wait_s=wait)
    chosen = SessionFilter(project=project, since=since, until=until, limit=limit, epoch_size=epoch_size)
    request = Launch(
        kind="curate",
        llm=llm,
        playbook=ws.playbook,
        chosen=chosen,
        create=create,
        max_cost=max_cost,
        per_call=assume_output,
    )
    _run(ws, request, dry_run=dry_run, as_json=as_json)


@app.command("recurate")
def recurate_cmd(
    since: Annotated[datetime, typer.Option(help="Sessions started on or after this date.")],
    source: Annotated[
        Literal["heuristic", "any"],
        typer.Option("--from", help="Sessions a heuristic run applied (default), or any applied session."),
    ] = "heuristic",
    llm: LlmOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the sessions; change nothing.")] = False,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Curate again, with the model now configured, sessions that the heuristic provider (no model) applied.

    Each session becomes pending again and is curated into new versions; the versions the heuristic wrote
    stay in the history (`playbook why` shows both).

    Example: [bold]playbook recurate --since 2026-01-01 --llm anthropic[/bold]
    """
    from core.selection import SessionFilter
    from flows.run.launch import Launch, Requeue
    from flows.run.sessions import requeue

    ws = workspace(db, playbook, wait_s=wait)
    if dry_run:
        ids = requeue(ws, ws.playbook, since, source, dry_run=True)
    else:
        again = Requeue(since=since, source=source)
        request = Launch(kind="curate", llm=llm, playbook=ws.playbook, chosen=SessionFilter(since=since), requeue=again)
        ids = _run(ws, request, as_json=as_json)
        if ids:
            return
    if as_json:
        print_json({"sessions": ids, "dry_run": dry_run})
    else:
        out.print(f"{len(ids)} session(s) to curate again: {', '.join(ids[:10]) or 'none'}", highlight=False)


@app.command("nightly")
def nightly_cmd(
    transcripts: Annotated[
        list[str] | None, typer.Argument(help="Transcript folders or object-storage URLs (default: configured).")
    ] = None,
    llm: LlmOpt = None,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Ingest, curate every configured playbook, report and export.

    With nothing new to ingest or curate it finishes at once, without starting Prefect.

    Example: [bold]playbook nightly ~/.claude/projects --llm auto[/bold]
    """
    from flows.run.launch import Launch

    ws = workspace(db, wait_s=wait)
    _run(ws, Launch(kind="nightly", llm=llm, playbook=ws.playbook, transcripts=sources(transcripts)), as_json=as_json)
    if not as_json:
        err.print(f"Exported to {ws.out_dir}/")


@app.command("backfill")
def backfill_cmd(
    since: Annotated[datetime, typer.Option(help="First day (inclusive).")],
    until: Annotated[datetime, typer.Option(help="Last day (exclusive).")],
    llm: Annotated[
        str, typer.Option("--llm", help="Provider; batch by default (half price).", callback=provider_name)
    ] = "batch",
    epoch_size: Annotated[int, typer.Option(help="Sessions per epoch (one batch per step).")] = 50,
    dry_run: DryRunOpt = False,
    max_cost: MaxCostOpt = None,
    assume_output: AssumeOpt = 600,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Curate historical sessions in a date range.

    `--dry-run` prints the sessions, their tokens and the estimated cost (live and through batches) without
    calling a model; `--max-cost` refuses to start above it.

    Example: [bold]playbook backfill --since 2026-01-01 --until 2026-07-01 --dry-run[/bold]
    """
    from core.selection import SessionFilter
    from flows.run.launch import Launch

    ws = workspace(db, playbook, wait_s=wait)
    request = Launch(
        kind="backfill",
        llm=llm,
        playbook=ws.playbook,
        chosen=SessionFilter(since=since, until=until, epoch_size=epoch_size),
        max_cost=max_cost,
        per_call=assume_output,
    )
    _run(ws, request, dry_run=dry_run, as_json=as_json)


@app.command("consolidate")
def consolidate_cmd(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the merges; write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the merges as JSON.")] = False,
    llm: LlmOpt = None,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Merge near-duplicate entries into one (counters summed).

    Entries at the near-duplicate threshold always merge, with the text that has the best evidence. With a
    model configured (`--llm`, or `llm` in the settings), the curator also judges groups of entries that may
    say the same lesson in other words: its merges within a group are taken, with its text, and the pairs it
    keeps apart are not shown to it again for `rejudge_after_days`. One new version for the whole pass, with
    its own run row; `playbook diff` shows it, `revert` undoes it.

    Example: [bold]playbook consolidate --dry-run[/bold]
    """
    from flows.run.consolidation import consolidate

    ws = workspace(db, playbook, wait_s=wait)
    summary, ops = consolidate(ws, ws.playbook, dry_run=dry_run, llm=None if dry_run else llm or ws.settings.llm)
    for notice in summary.notices:
        err.print(f"[yellow]Note:[/yellow] {escape(notice)}", highlight=False)
    if as_json:
        print_json({"dry_run": dry_run, "version": summary.last_version, "merges": ops})
        return
    if not ops:
        out.print(f"No near-duplicate entries in playbook `{ws.playbook}`; nothing to merge.", highlight=False)
        return
    for op in ops:
        out.print(f"MERGE {', '.join(op['source_ids'])} -> {escape(op['merged_text'])}", highlight=False)
    if dry_run:
        out.print(f"{len(ops)} merge(s) planned; nothing was written (run without --dry-run).", highlight=False)
    else:
        out.print(
            f"{len(ops)} cluster(s) merged: version {summary.last_version}, {summary.entries_before} ->"
            f" {summary.entries_after} entries.",
            highlight=False,
        )
