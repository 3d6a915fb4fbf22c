"""The `playbook` command line: thin commands over `core` and `flows`.

Errors the program raises on purpose (`PlaybookError`) print `Error: <message>` on stderr and exit 1;
usage errors exit 2 (typer's default). No traceback, no local variables.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

import duckdb
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from core.compat import format_playbook, load_playbook, playbook_from_dict, playbook_to_dict
from core.errors import PlaybookError, StoreError
from core.export import replace_block, to_markdown
from core.store.db import open_db
from core.store.ingest import IngestSummary, ingest
from core.store.playbooks import (
    diff_versions,
    ensure_playbook,
    history,
    load_version,
    revert,
    write_version,
)
from core.store.snapshot import write_parquet
from flows.config import Settings, load_settings

__all__ = ["app"]

app = typer.Typer(
    name="playbook",
    help="Learn a playbook of lessons from coding-agent transcripts (Prefect + DuckDB).",
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

P = ParamSpec("P")
R = TypeVar("R")

DbOpt = Annotated[
    Path | None, typer.Option("--db", help="DuckDB file. [env: PLAYBOOK_DB] [default: data/playbook.duckdb]")
]
PlaybookOpt = Annotated[
    str | None, typer.Option("--playbook", "-p", help="Playbook name. [env: PLAYBOOK_PLAYBOOK] [default: default]")
]
FormatChoice = Literal["auto", "claude-code", "codex", "messages"]


def handles_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn PlaybookError (and stray database errors) into `Error: ...` on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except PlaybookError as exc:
            err.print(f"[red]Error:[/red] {escape(str(exc))}", highlight=False)
            raise typer.Exit(code=1) from None
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            err.print(f"[red]Error:[/red] database error: {escape(first)}", highlight=False)
            raise typer.Exit(code=1) from None

    return wrapper


def settings(db: Path | None = None, playbook: str | None = None, **extra: Any) -> Settings:
    """Settings with the flags of the current command applied."""
    return load_settings(db=db, playbook=playbook, **extra)


def _json_default(value: object) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def print_json(data: object) -> None:
    """JSON on stdout, nothing else (so it can be piped)."""
    sys.stdout.write(json.dumps(data, indent=2, default=_json_default, ensure_ascii=False) + "\n")


def render_ingest(summary: IngestSummary) -> None:
    """The ingest summary table, failed files listed with their error."""
    table = Table(title="Ingest", show_header=False, title_justify="left")
    for label, value in [
        ("files new", summary.count("new")),
        ("files changed", summary.count("changed")),
        ("files unchanged", summary.count("unchanged")),
        ("files failed", summary.count("failed")),
        ("files empty / unrecognised", f"{summary.count('empty')} / {summary.count('unrecognised')}"),
        ("sessions written", summary.sessions),
        ("message parts written", summary.messages),
        ("bad lines", summary.bad_lines),
        ("throughput", f"{summary.mb_per_s:.1f} MB/s ({summary.bytes_read / 1e6:.1f} MB in {summary.seconds:.2f} s)"),
    ]:
        table.add_row(label, str(value))
    out.print(table)
    for r in summary.results:
        if r.status == "failed":
            err.print(f"[yellow]failed:[/yellow] {escape(r.path)}: {escape(r.error or '')}", highlight=False)
        elif r.bad_lines:
            err.print(f"[yellow]{r.bad_lines} bad line(s):[/yellow] {escape(r.path)}", highlight=False)


def ingest_with_progress(con: duckdb.DuckDBPyConnection, paths: list[Path], fmt: FormatChoice) -> IngestSummary:
    """Ingest with a progress bar on stderr."""
    with Progress(
        TextColumn("[bold]ingest"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("ingest", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return ingest(con, paths, fmt=fmt, progress=update)


@app.command("ingest")
@handles_errors
def ingest_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(help="Transcript files or folders.", show_default=False)] = None,
    fmt: Annotated[FormatChoice, typer.Option("--format", help="Transcript format, or auto-detect.")] = "auto",
    db: DbOpt = None,
) -> None:
    """Ingest transcripts into DuckDB (unchanged files are skipped).

    Example: [bold]playbook ingest ~/.claude/projects ~/.codex/sessions[/bold]
    """
    cfg = settings(db)
    targets = paths or cfg.transcripts
    if not targets:
        raise StoreError(
            "No transcript folders given; pass PATH, or set `transcripts` in playbook.toml or PLAYBOOK_TRANSCRIPTS."
        )
    with open_db(cfg.db) as con:
        summary = ingest_with_progress(con, list(targets), fmt)
    render_ingest(summary)
    if summary.nothing_readable:
        raise typer.Exit(code=1)


@app.command("sessions")
@handles_errors
def sessions_cmd(
    project: Annotated[str | None, typer.Option(help="Only sessions of this project.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Only sessions started on or after this date.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    limit: Annotated[int, typer.Option(help="At most this many rows (newest first).")] = 1000,
    db: DbOpt = None,
) -> None:
    """List ingested sessions.

    Example: [bold]playbook sessions --project spotter --since 2026-02-01 --json[/bold]
    """
    cfg = settings(db)
    with open_db(cfg.db) as con:
        cur = con.execute(
            "SELECT session_id, project, format, source_path, started_at, ended_at, n_messages, n_user_prompts,"
            " n_tool_calls, n_tool_errors, git_branch, title FROM sessions"
            " WHERE (? IS NULL OR project = ?) AND (?::TIMESTAMPTZ IS NULL OR started_at >= ?::TIMESTAMPTZ)"
            " ORDER BY started_at DESC NULLS LAST LIMIT ?",
            [project, project, since, since, limit],
        )
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    if as_json:
        print_json(rows)
        return
    table = Table("session", "project", "format", "started", "msgs", "prompts", "tools", "errors")
    for r in rows:
        table.add_row(
            r["session_id"][:36],
            r["project"] or "",
            r["format"],
            r["started_at"].strftime("%Y-%m-%d %H:%M") if r["started_at"] else "",
            str(r["n_messages"]),
            str(r["n_user_prompts"]),
            str(r["n_tool_calls"]),
            str(r["n_tool_errors"]),
        )
    out.print(table)


@app.command("import")
@handles_errors
def import_cmd(
    file: Annotated[Path, typer.Argument(help="A playbook.json in the seeds' format.", show_default=False)],
    sections: Annotated[
        Path | None, typer.Option(help="A sections.yaml for a new playbook (name, slug, description per section).")
    ] = None,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Import a playbook.json as a new version.

    Example: [bold]playbook import ~/.claude/playbook.json --playbook team[/bold]
    """
    from core.operations import normalize_playbook
    from core.sections import DEFAULT_SECTIONS, load_sections_yaml

    cfg = settings(db, playbook)
    if not file.exists():
        raise StoreError(f"File `{file}` does not exist; pass the path of a playbook.json.")
    checked = load_playbook(file)  # a corrupt file stops here, with a message naming it
    section_set = load_sections_yaml(sections) if sections else DEFAULT_SECTIONS
    raw = json.loads(file.read_text(encoding="utf-8")) if sections else checked
    with open_db(cfg.db) as con:
        section_set = ensure_playbook(con, cfg.playbook, section_set)
        model = normalize_playbook(playbook_from_dict(raw, sections=section_set), section_set)
        version = write_version(con, cfg.playbook, model, source="import", note=f"import of {file}")
    out.print(f"Imported {model.size()} entries from {file} as version {version} of playbook `{cfg.playbook}`.")


ShowFormat = Literal["text", "json", "markdown"]


@app.command("show")
@handles_errors
def show_cmd(
    version: Annotated[int | None, typer.Option(help="Version to show (default: newest).")] = None,
    fmt: Annotated[
        ShowFormat, typer.Option("--format", help="text, json (seeds' playbook.json) or markdown.")
    ] = "text",
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Show a playbook version.

    Example: [bold]playbook show --version 12 --format json[/bold]
    """
    cfg = settings(db, playbook)
    with open_db(cfg.db) as con:
        model = load_version(con, cfg.playbook, version)
    if fmt == "json":
        print_json(playbook_to_dict(model))
    elif fmt == "markdown":
        sys.stdout.write(to_markdown(model))
    else:
        text = format_playbook(model)
        sys.stdout.write((text or "(empty playbook)") + "\n")


@app.command("history")
@handles_errors
def history_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """One row per version: what produced it and what changed.

    Example: [bold]playbook history --json[/bold]
    """
    cfg = settings(db, playbook)
    with open_db(cfg.db) as con:
        rows = history(con, cfg.playbook)
    if as_json:
        print_json(rows)
        return
    table = Table("version", "created", "source", "session", "applied", "skipped", "pruned", "entries")
    for r in rows:
        table.add_row(
            str(r["version"]),
            r["created_at"].strftime("%Y-%m-%d %H:%M:%S"),
            r["source"],
            (r["session_id"] or "")[:20],
            str(r["ops_applied"]),
            str(r["ops_skipped"]),
            str(r["pruned"]),
            str(r["n_entries"]),
        )
    out.print(table)


@app.command("diff")
@handles_errors
def diff_cmd(
    v1: Annotated[int, typer.Argument(help="From version.")],
    v2: Annotated[int, typer.Argument(help="To version.")],
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Entries added, removed or changed between two versions.

    Example: [bold]playbook diff 3 7[/bold]
    """
    cfg = settings(db, playbook)
    with open_db(cfg.db) as con:
        changes = diff_versions(con, cfg.playbook, v1, v2)
    if not changes:
        out.print(f"No differences between versions {v1} and {v2}.")
    for c in changes:
        if c.kind == "added" and c.after:
            out.print(f"[green]+ {escape(f'[{c.name}]')}[/green] {escape(c.after.text)}", highlight=False)
        elif c.kind == "removed" and c.before:
            out.print(f"[red]- {escape(f'[{c.name}]')}[/red] {escape(c.before.text)}", highlight=False)
        elif c.before and c.after:
            detail = []
            if c.before.text != c.after.text:
                detail.append(f"text: {c.before.text!r} -> {c.after.text!r}")
            if (c.before.helpful, c.before.harmful) != (c.after.helpful, c.after.harmful):
                detail.append(f"counters: {c.before.helpful}/{c.before.harmful} -> {c.after.helpful}/{c.after.harmful}")
            out.print(
                f"[yellow]~ {escape(f'[{c.name}]')}[/yellow] " + escape("; ".join(detail or ["moved"])), highlight=False
            )


@app.command("revert")
@handles_errors
def revert_cmd(
    version: Annotated[int, typer.Argument(help="The version to restore.")],
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Make a new version equal to VERSION (history is never rewritten).

    Example: [bold]playbook revert 12[/bold]
    """
    cfg = settings(db, playbook)
    with open_db(cfg.db) as con:
        new = revert(con, cfg.playbook, version)
    out.print(f"Version {new} of playbook `{cfg.playbook}` restores version {version}.")


ExportFormat = Literal["json", "markdown", "claude-md"]


@app.command("export")
@handles_errors
def export_cmd(
    fmt: Annotated[
        ExportFormat, typer.Option("--format", help="json, markdown, or claude-md (marked block).")
    ] = "json",
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of stdout.")] = None,
    version: Annotated[int | None, typer.Option(help="Version to export (default: newest).")] = None,
    parquet: Annotated[Path | None, typer.Option("--parquet", help="Write every table as Parquet into DIR.")] = None,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Export a playbook version, or snapshot the tables as Parquet.

    `claude-md` replaces only the marked block of an existing CLAUDE.md / AGENTS.md given with --out.

    Example: [bold]playbook export --format claude-md --out CLAUDE.md[/bold]
    """
    cfg = settings(db, playbook)
    with open_db(cfg.db) as con:
        if parquet is not None:
            written = write_parquet(con, parquet)
            out.print(f"Wrote {len(written)} Parquet files to {parquet}.")
            return
        model = load_version(con, cfg.playbook, version)
    if fmt == "json":
        text = json.dumps(playbook_to_dict(model), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        text = to_markdown(model)
    else:
        existing = out_file.read_bytes().decode("utf-8") if out_file and out_file.exists() else ""
        text = replace_block(existing, to_markdown(model, title=None, counters=False))
    export_text(text, out_file)


def export_text(text: str, out_file: Path | None) -> None:
    """Write `text` atomically to `out_file`, or to stdout."""
    if out_file is None:
        sys.stdout.write(text)
        return
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_name(f".{out_file.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    tmp.replace(out_file)
    err.print(f"Wrote {out_file}")


# --- pipeline commands -------------------------------------------------------------------------

LlmOpt = Annotated[
    str | None,
    typer.Option("--llm", help="anthropic, batch, heuristic, replay:FILE or auto (anthropic when a key is set)."),
]


def render_run(report: dict[str, Any]) -> None:
    """The end-of-run summary."""
    from core.runreport import RunReport

    model = RunReport.model_validate(report)
    for notice in model.notices:
        err.print(f"[yellow]Notice:[/yellow] {escape(notice)}", highlight=False)
    table = Table(title=f"{model.kind} · playbook `{model.playbook}`", show_header=False, title_justify="left")
    for label, value in model.summary_rows():
        table.add_row(label, escape(value))
    out.print(table)
    for session_id, reason in model.failures.items():
        err.print(f"[yellow]failed (retried next run):[/yellow] {session_id}: {escape(reason)}", highlight=False)


def run_flow(fn: Callable[..., Any], db: Path, **kwargs: Any) -> Any:
    """Run a flow locally with a progress bar on stderr (failing fast, before Prefect starts, if busy)."""
    from core.store.lock import run_lock
    from flows.providers import resolve_llm

    if "llm" in kwargs:
        resolve_llm(kwargs["llm"], load_settings(db=db))
    with run_lock(db, "a lock probe"):
        pass
    from flows._runtime import local_run
    from flows.progress import listen

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task("sessions" if phase == "curate" else "bytes", total=total)
            bar.update(tasks[phase], completed=done, total=total)

        listen(update)
        try:
            with local_run():
                return fn(db=str(db), **kwargs)
        finally:
            listen(None)


@app.command("curate")
@handles_errors
def curate_cmd(
    limit: Annotated[int | None, typer.Option(help="At most this many sessions.")] = None,
    epoch_size: Annotated[int | None, typer.Option(help="Sessions judged against one frozen playbook.")] = None,
    llm: LlmOpt = None,
    project: Annotated[str | None, typer.Option(help="Only sessions of this project.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Only sessions started on or after this date.")] = None,
    until: Annotated[datetime | None, typer.Option(help="Only sessions started before this date.")] = None,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Reflect on and curate the sessions this playbook has not seen yet.

    Example: [bold]playbook curate --limit 20 --llm heuristic[/bold]
    """
    from flows.pipeline import curate_flow

    cfg = settings(db, playbook)
    report = run_flow(
        curate_flow,
        cfg.db,
        playbook=cfg.playbook,
        llm=llm or cfg.llm,
        limit=limit,
        epoch_size=epoch_size,
        project=project,
        since=since,
        until=until,
    )
    render_run(report)


@app.command("nightly")
@handles_errors
def nightly_cmd(
    transcripts: Annotated[list[Path] | None, typer.Argument(help="Transcript folders (default: configured).")] = None,
    llm: LlmOpt = None,
    db: DbOpt = None,
) -> None:
    """Ingest, curate every configured playbook, report and export.

    Example: [bold]playbook nightly ~/.claude/projects --llm auto[/bold]
    """
    from flows.pipeline import nightly_flow

    cfg = settings(db)
    reports = run_flow(
        nightly_flow, cfg.db, llm=llm or cfg.llm, transcripts=[str(p) for p in transcripts] if transcripts else None
    )
    for report in reports:
        render_run(report)
    err.print(f"Exported to {cfg.out_dir}/")


@app.command("backfill")
@handles_errors
def backfill_cmd(
    since: Annotated[datetime, typer.Option(help="First day (inclusive).")],
    until: Annotated[datetime, typer.Option(help="Last day (exclusive).")],
    llm: Annotated[str, typer.Option("--llm", help="Provider; batch by default (half price).")] = "batch",
    epoch_size: Annotated[int, typer.Option(help="Sessions per epoch (one batch per step).")] = 50,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Curate historical sessions in a date range.

    Example: [bold]playbook backfill --since 2026-01-01 --until 2026-07-01[/bold]
    """
    from flows.pipeline import backfill_flow

    cfg = settings(db, playbook)
    render_run(
        run_flow(backfill_flow, cfg.db, since=since, until=until, llm=llm, playbook=cfg.playbook, epoch_size=epoch_size)
    )


@app.command("runs")
@handles_errors
def runs_cmd(
    limit: Annotated[int, typer.Option(help="How many runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    db: DbOpt = None,
) -> None:
    """Recent pipeline runs with their counts, tokens and cost.

    Example: [bold]playbook runs --limit 5[/bold]
    """
    from core.store.runs import list_runs

    cfg = settings(db)
    with open_db(cfg.db) as con:
        rows = list_runs(con, limit)
    if as_json:
        print_json(rows)
        return
    table = Table("run", "status", "playbook", "sessions a/s/f", "ops a/s", "pruned", "cost", "time")
    for r in rows:
        table.add_row(
            r["run_id"],
            r["status"],
            r["playbook"] or "",
            f"{r['sessions_applied']}/{r['sessions_skipped']}/{r['sessions_failed']}",
            f"{r['ops_applied']}/{r['ops_skipped']}",
            str(r["pruned"]),
            f"${r['cost_usd']:.4f}",
            f"{r['duration_s']:.1f} s",
        )
    out.print(table)


@app.command("stats")
@handles_errors
def stats_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Totals for a playbook: sessions, versions, operations by type and status, prunes, cost.

    Example: [bold]playbook stats --json[/bold]
    """
    cfg = settings(db, playbook)
    with open_db(cfg.db) as con:
        one = con.execute(
            "SELECT (SELECT count(*) FROM sessions),"
            " (SELECT count(*) FROM applied_sessions WHERE playbook = $p AND status = 'applied'),"
            " (SELECT count(*) FROM applied_sessions WHERE playbook = $p AND status = 'skipped'),"
            " (SELECT coalesce(max(version), 0) FROM versions WHERE playbook = $p),"
            " (SELECT count(*) FROM prunes WHERE playbook = $p),"
            " (SELECT coalesce(sum(cost_usd), 0) FROM llm_calls WHERE playbook = $p),"
            " (SELECT count(*) FROM llm_calls WHERE playbook = $p)",
            {"p": cfg.playbook},
        ).fetchone()
        ops = con.execute(
            "SELECT type, status, count(*) FROM operations WHERE playbook = ? GROUP BY ALL ORDER BY ALL",
            [cfg.playbook],
        ).fetchall()
    assert one is not None
    data = {
        "playbook": cfg.playbook,
        "sessions_ingested": one[0],
        "sessions_applied": one[1],
        "sessions_skipped": one[2],
        "latest_version": one[3],
        "prunes": one[4],
        "cost_usd": one[5],
        "llm_calls": one[6],
        "operations": [{"type": t, "status": s, "n": n} for t, s, n in ops],
    }
    if as_json:
        print_json(data)
        return
    table = Table(title=f"playbook `{cfg.playbook}`", show_header=False, title_justify="left")
    for key, value in data.items():
        if key != "operations":
            table.add_row(key.replace("_", " "), f"{value:.4f}" if isinstance(value, float) else str(value))
    table.add_row("operations", ", ".join(f"{o['type']} {o['status']} {o['n']}" for o in data["operations"]) or "none")
    out.print(table)


@app.command("report")
@handles_errors
def report_cmd(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for index.html and the PNG charts.")] = None,
    db: DbOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Write the playbook evolution report: a static HTML page and the same charts as PNG files.

    Example: [bold]playbook report --out data/out/report[/bold]  (then open data/out/report/index.html)
    """
    from flows.report import build_report

    cfg = settings(db, playbook)
    target = out_dir or cfg.out_dir / "report"
    result = build_report(cfg.db, cfg.playbook, target)
    out.print(
        f"Wrote {result['index']} and {len(result['charts'])} PNG charts"
        f" ({result['versions']} versions, {result['seconds']:.1f} s)."
    )


@app.command("serve")
@handles_errors
def serve_cmd() -> None:
    """Serve the `nightly` (03:00 UTC) and `backfill` deployments of prefect.yaml from this process.

    Needs a running Prefect server: `prefect server start`, then PREFECT_API_URL=http://127.0.0.1:4200/api.

    Example: [bold]PREFECT_API_URL=http://127.0.0.1:4200/api playbook serve[/bold]
    """
    import os

    from core.errors import ConfigError

    if not os.environ.get("PREFECT_API_URL"):
        raise ConfigError(
            "Schedules need a running Prefect server; start one with `prefect server start` and set"
            " PREFECT_API_URL=http://127.0.0.1:4200/api."
        )
    from flows.deployments import serve_all

    serve_all()


def main() -> None:
    """Entry point."""
    app()


if __name__ == "__main__":
    main()
