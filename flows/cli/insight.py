"""What the database says: `stale`, `why`, `triggers`, `impact`, `runs`, `sql`, `check` and `report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli._options import DbOpt, JsonOpt, PlaybookOpt, WaitOpt, workspace
from flows.cli._render import (
    describe_recurrence,
    err,
    escape,
    ingest_bars,
    new_table,
    out,
    print_json,
    print_rows,
    render_impact,
    render_life,
)

app = typer.Typer()


@app.command("stale")
def stale_cmd(
    days: Annotated[
        float | None, typer.Option("--days", help="Unconfirmed for this many days. \\[default: stale_after_days]")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entries as JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """List entries no session has confirmed (helpful tag or rediscovery) lately; exports leave them out.

    Example: [bold]playbook stale --days 30[/bold]
    """
    from flows.insight.entries import stale_of

    ws = workspace(db, playbook, wait_s=wait)
    stale = stale_of(ws, ws.playbook, days)
    if as_json:
        print_json(stale.entries)
        return
    if stale.ineffective:
        render_impact(stale.ineffective, ws.playbook)
        err.print("These entries hurt or make no difference; each costs its tokens in every session that loads it.")
    if stale.unused:
        table = new_table("entry", "why it is proposed for retirement", "text")
        for u in stale.unused:
            if u.trigger_fired is False:
                why = "its trigger never came up"
            else:
                since = f"{u.last_exposed:%Y-%m-%d}" if u.last_exposed else "it was added"
                why = f"no session was given it since {since}"
            table.add_row(escape(u.name), why, escape(u.text))
        out.print(table)
        err.print(
            f"{len(stale.unused)} unused entr{'y' if len(stale.unused) == 1 else 'ies'} (expire_days):"
            " `playbook retire ID ...` makes a version without them (revertible).",
            highlight=False,
        )
    if stale.unfollowed:
        render_impact(stale.unfollowed, ws.playbook)
        err.print(
            "These command lessons are not followed when their situation comes up, or are followed no more than"
            " without them: retire them (`playbook retire ID ...`, revertible) or make them hard rules (`playbook"
            " review --hard ID`)."
        )
    if not stale.entries:
        out.print(f"No stale entries in playbook `{ws.playbook}` (window: {stale.window:g} days).", highlight=False)
        return
    table = new_table("entry", "section", "last confirmed", "text")
    for r in stale.entries:
        when = r.last_confirmed or r.created
        label = f"{when:%Y-%m-%d}" + ("" if r.last_confirmed else " (never; created)")
        table.add_row(escape(r.name), escape(r.section), label, escape(r.text))
    out.print(table)
    n = len(stale.entries)
    err.print(
        f"{n} stale entr{'y' if n == 1 else 'ies'} (no confirmation for {stale.window:g} days); exports"
        " leave them out, `export --all` keeps them.",
        highlight=False,
    )


@app.command("why")
def why_cmd(
    entry: Annotated[str, typer.Argument(help="The entry id, as in `playbook show` (e.g. mis-003).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Why an entry is in the playbook: every operation that created, changed, merged or tagged it, with its
    session (project, date, first prompt), what the reflector and the curator said, rediscoveries and trigger
    figures; a merged entry shows its sources' lives too.

    Example: [bold]playbook why mis-003[/bold]
    """
    from flows.insight.entries import why

    ws = workspace(db, playbook, wait_s=wait)
    life = why(ws, ws.playbook, entry)
    if as_json:
        print_json(life)
        return
    render_life(life)


@app.command("replay")
def replay_cmd(
    transcripts: Annotated[
        list[Path] | None, typer.Argument(help="Transcript folders or files (default: the configured folders).")
    ] = None,
    llm: Annotated[
        str, typer.Option("--llm", help="What learns the playbook from the sessions before each one.")
    ] = "heuristic",
    as_json: JsonOpt = False,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Replay real sessions to the hooks in the order they happened, each against the playbook learned only from
    the sessions before it: what the hooks would have given, the guards' fires, the failing calls they would have
    caught and the working calls they fired on, and the tokens added against the whole playbook at each start.
    Works in a scratch folder; your database is not touched.

    Example: [bold]playbook replay ~/.claude/projects/-home-me-src-api --json[/bold]
    """
    from flows.run.replay import replay

    ws = workspace(db, playbook)
    with ingest_bars("replay", "sessions") as progress:
        done = replay(ws, [p.expanduser() for p in transcripts or []] or list(ws.settings.transcripts), llm, progress)
    if as_json:
        print_json({**done.model_dump(), "totals": done.totals()})
        return
    table = new_table(
        "session",
        "project",
        "entries known",
        "calls (failed)",
        "guard fires",
        "caught",
        "false",
        "tokens added / whole",
    )
    for r in done.sessions:
        table.add_row(
            escape(r.session_id[:12]),
            escape(r.project or "-"),
            str(r.entries_known),
            f"{r.calls} ({r.failed_calls})",
            str(r.fires),
            str(r.caught),
            str(r.false_fires),
            f"{r.added_tokens:,} / {r.whole_tokens:,}",
        )
    out.print(table)
    t = done.totals()
    err.print(
        f"{len(done.sessions)} sessions, {t['calls']} shell calls ({t['failed_calls']} failed): guards fired"
        f" {t['fires']} times, on {t['caught']} calls that then failed and {t['false_fires']} that worked; the hooks"
        f" added {t['added_tokens']:,} tokens where the whole playbook at each start is {t['whole_tokens']:,}"
        f" (learned by {done.provider}).",
        highlight=False,
    )


@app.command("triggers")
def triggers_cmd(
    entry: Annotated[
        str | None, typer.Argument(help="One entry id (default: every live entry with a trigger).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """How often each entry's situation (its trigger text) occurs in sessions before and after the entry was
    first exported. An observation, not a causal claim: other things change between the two periods.

    Example: [bold]playbook triggers --json[/bold]
    """
    from flows.insight.entries import triggers_of

    ws = workspace(db, playbook, wait_s=wait)
    rows = triggers_of(ws, ws.playbook, entry)
    if as_json:
        print_json(rows)
        return
    if not rows:
        out.print("No live entry has a trigger." if entry is None else f"Entry {entry} has no trigger (or is gone).")
        return
    table = new_table("entry", "trigger", "observed (trigger text in a session's messages)")
    for row in rows:
        table.add_row(escape(row.entry_id), escape(row.triggers), describe_recurrence(row))
    out.print(table)


@app.command("impact")
def impact_cmd(
    entry: Annotated[str | None, typer.Argument(help="One entry id (default: every live entry).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON rows.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Whether each entry helps: how often its situation (its trigger, in what the tools said) comes up in
    sessions that had the entry against sessions that did not, with a 95 % interval and a verdict (helps,
    hurts, no-effect, insufficient), and its context cost (tokens x sessions that loaded it). From the hook's
    random holdout where there is one, else a difference in differences against projects without the entry.

    Example: [bold]playbook impact mis-003 --json[/bold]
    """
    from flows.insight.impact import entry_impact

    ws = workspace(db, playbook, wait_s=wait)
    rows = entry_impact(ws, ws.playbook, entry)
    if as_json:
        print_json(rows)
        return
    render_impact(rows, ws.playbook)


@app.command("runs")
def runs_cmd(
    limit: Annotated[int, typer.Option(help="How many runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Recent pipeline runs with their counts, tokens and cost.

    Example: [bold]playbook runs --limit 5[/bold]
    """
    from flows.insight.database import recent_runs

    ws = workspace(db, wait_s=wait)
    rows = recent_runs(ws, limit)
    if as_json:
        print_json(rows)
        return
    table = new_table("run", "status", "playbook", "provider", "sessions a/s/f", "ops a/s", "pruned", "cost", "time")
    for r in rows:
        table.add_row(
            r.run_id,
            r.status,
            escape(r.playbook or ""),
            escape(r.provider or ""),
            f"{r.sessions_applied}/{r.sessions_skipped}/{r.sessions_failed}",
            f"{r.ops_applied}/{r.ops_skipped}",
            str(r.pruned),
            f"${r.cost_usd or 0:.4f}",
            f"{r.duration_s or 0:.1f} s",
        )
    out.print(table)


@app.command("sql")
def sql_cmd(
    query: Annotated[str, typer.Argument(help="A SQL query over the tables and views.", show_default=False)],
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Run one read-only SQL query on the database (no `duckdb` CLI needed); the views are listed in docs/analytics.md.

    Allowed: queries (select, with, describe, show, summarize), explain, and pragmas that only report. The
    connection is read-only and cannot open any other file, database or extension (copy, attach, read_text,
    install are refused); the database is left byte for byte as it was.

    Example: [bold]playbook sql "select type, code, sum(n) from v_skip_reasons group by all"[/bold]
    """
    from flows.insight.database import query as run_query

    ws = workspace(db, wait_s=wait)
    columns, rows = run_query(ws, query)
    if as_json:
        print_json([dict(zip(columns, r, strict=True)) for r in rows])
        return
    print_rows(columns, [["" if v is None else str(v) for v in r] for r in rows])


@app.command("check")
def check_cmd(db: DbOpt = None, wait: WaitOpt = None) -> None:
    """Read every table in full, so every block's checksum is verified, and say how to recover if one fails.

    Example: [bold]playbook check[/bold]
    """
    from flows.insight.database import check

    ws = workspace(db, wait_s=wait)
    checked = check(ws)
    out.print(
        f"Database `{ws.settings.db}`: {checked.tables} tables, {checked.rows:,} rows read, every checksum verified.",
        highlight=False,
    )


@app.command("report")
def report_cmd(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for index.html and the PNG charts.")] = None,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Write the playbook evolution report: a static HTML page and the same charts as PNG files.

    Example: [bold]playbook report --out data/out/report[/bold]  (then open data/out/report/index.html)
    """
    from flows.insight.evolution import report

    ws = workspace(db, playbook, wait_s=wait)
    result = report(ws, ws.playbook, out_dir)
    out.print(
        f"Wrote {result.index} and {len(result.charts)} PNG charts"
        f" ({result.versions} versions, {result.seconds:.1f} s)."
    )
