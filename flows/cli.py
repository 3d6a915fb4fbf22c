"""The `playbook` command line: thin commands over `core` and `flows`.

Errors the program raises on purpose (`PlaybookError`) print `Error: <message>` on stderr and exit 1;
usage errors exit 2 (typer's default); Ctrl-C prints one line and exits 130. No traceback.

Each command imports what it uses inside its body: `--help` and the read commands never load Prefect,
the anthropic SDK or the run loop, and start in about half a second (measured by bench/bench_cli.py).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape as markup_escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from core.errors import ConfigError, PlaybookError, PlaybookFileError, StoreError
from core.invisible import removed, visible

if TYPE_CHECKING:
    from core.runsummary import RunSummary
    from core.store.ingest import IngestSummary
    from flows.config import Settings

__all__ = ["app"]

app = typer.Typer(
    name="playbook",
    help="Learn a playbook of lessons from coding-agent transcripts (Prefect + DuckDB).",
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
# User text (entries, transcripts) is printed as it is: no emoji codes such as `:cd:`, no markup from it.
# Piped into a file or a log, Rich would squeeze tables into 80 columns; there they get 160.
out = Console(soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, soft_wrap=True, emoji=False)


def new_table(*columns: str, **options: Any) -> Table:
    """A table whose cells wrap instead of being cut with an ellipsis when the terminal is narrow."""
    grid = Table(**options)
    for name in columns:
        grid.add_column(name, overflow="fold")
    return grid


def escape(text: str) -> str:
    """Untrusted text (ids, project names, entry texts, reasons) as printed: rich markup escaped, and control,
    escape, bidi and other invisible characters written as their escapes (`core.invisible`), so a transcript's
    `sessionId` cannot rewrite the terminal or hide what a reviewer reads."""
    return markup_escape(visible(text))


P = ParamSpec("P")
R = TypeVar("R")

# The brackets are escaped: with rich markup on, `[env: ...]` would be read as a style and vanish.
DbOpt = Annotated[
    Path | None, typer.Option("--db", help="DuckDB file. \\[env: PLAYBOOK_DB] \\[default: data/playbook.duckdb]")
]
WaitOpt = Annotated[
    float | None,
    typer.Option(
        "--wait",
        help="Seconds to wait while another command (a nightly run) is using the database."
        " \\[env: PLAYBOOK_WAIT_S] \\[default: 15]",
        show_default=False,
    ),
]
PlaybookOpt = Annotated[
    str | None,
    typer.Option("--playbook", "-p", help="Playbook name. \\[env: PLAYBOOK_PLAYBOOK] \\[default: default]"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout (for scripts).")]
FormatChoice = Literal["auto", "claude-code", "codex", "messages"]


def handles_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn PlaybookError into `Error: ...` on stderr and exit code 1 (DuckDB's are translated in the store)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except PlaybookError as exc:
            err.print(f"[red]Error:[/red] {escape(str(exc))}", highlight=False)
            raise typer.Exit(code=1) from None
        except KeyboardInterrupt:
            # Every database connection and the run lock were released on the way here; what a run had
            # finished is committed, and the next run resumes the rest. The interpreter's teardown still
            # runs (it stops Prefect's local server), but its noise (leaked bindings, thread tracebacks)
            # would bury this line, so standard error goes to /dev/null after it.
            err.print("Interrupted; run the same command again to resume.", highlight=False)
            sys.stderr.flush()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            raise typer.Exit(code=130) from None

    return wrapper


@contextmanager
def read_db(cfg: Settings) -> Iterator[Any]:
    """A connection to an existing database; read commands never create one."""

    from core.store.db import open_db

    with open_db(cfg.db, create=False, wait=cfg.wait_s) as con:
        yield con


@contextmanager
def run_lock_for(cfg: Settings, what: str) -> Iterator[None]:
    """The run lock every writer takes, without a connection (for steps that open their own)."""

    from core.store.lock import run_lock

    with run_lock(cfg.db, what, wait=cfg.wait_s):
        yield


@contextmanager
def write_db(cfg: Settings, what: str, *, create: bool = True) -> Iterator[Any]:
    """A connection for a command that writes, under the run lock every writer takes (one writer at a time)."""

    from core.store.db import open_db
    from core.store.lock import run_lock

    with run_lock(cfg.db, what, wait=cfg.wait_s), open_db(cfg.db, create=create, wait=cfg.wait_s) as con:
        yield con


def settings(db: Path | None = None, playbook: str | None = None, **extra: Any) -> Settings:
    """Settings with the flags of the current command applied: built once per command, then passed down."""

    from flows.config import load_settings

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
    table = new_table(title="Ingest", show_header=False, title_justify="left")
    for label, value in [
        ("files new", summary.count("new")),
        ("files changed", summary.count("changed")),
        ("files unchanged", summary.count("unchanged")),
        ("files failed", summary.count("failed")),
        ("files shrunk (stored messages kept)", summary.count("shrunk")),
        ("files empty / unrecognised", f"{summary.count('empty')} / {summary.count('unrecognised')}"),
        *([("objects refused (never fetched)", summary.count("refused"))] if summary.count("refused") else []),
        ("sessions written", summary.sessions),
        ("message parts written", summary.messages),
        ("bad lines", summary.bad_lines),
        ("secrets redacted", summary.secrets),
        ("throughput", f"{summary.mb_per_s:.1f} MB/s ({summary.bytes_read / 1e6:.1f} MB in {summary.seconds:.2f} s)"),
    ]:
        table.add_row(label, str(value))
    out.print(table)
    for r in summary.results:
        if r.status in ("failed", "empty", "unrecognised", "shrunk", "refused"):
            err.print(f"[yellow]{r.status}:[/yellow] {escape(r.path)}: {escape(r.error or '')}", highlight=False)
        elif r.bad_lines:
            err.print(f"[yellow]{r.bad_lines} bad line(s):[/yellow] {escape(r.path)}", highlight=False)
        if r.note:
            err.print(f"[yellow]note:[/yellow] {escape(r.path)}: {escape(r.note)}", highlight=False)


def sources(given: list[str] | None) -> list[Path | str]:
    """Command-line transcript sources: object-storage URLs as they are, anything else a path."""
    from core.store.objects import is_url

    return [g if is_url(g) else Path(g).expanduser() for g in given or []]


def ingest_with_progress(cfg: Settings, paths: list[Path | str], fmt: FormatChoice) -> IngestSummary:
    """Ingest with a progress bar on stderr."""

    from flows.runs import run_ingest

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

        return run_ingest(cfg, paths, None if fmt == "auto" else fmt, progress=update)


@app.command("ingest")
@handles_errors
def ingest_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Transcript files or folders, or object-storage URLs (s3://...).", show_default=False),
    ] = None,
    fmt: Annotated[FormatChoice, typer.Option("--format", help="Transcript format, or auto-detect.")] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON, every file with its status.")
    ] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Ingest transcripts into DuckDB (unchanged files are skipped; every other file is named with its reason).

    With no PATH: the configured `transcripts`, by default ~/.claude/projects and ~/.codex/sessions. A URL
    reads what developers pushed there (`playbook push`): new or changed objects are fetched, and each
    session records its contributor.

    Example: [bold]playbook ingest ~/.claude/projects ~/.codex/sessions[/bold]
    """
    from core.store.lock import run_lock

    cfg = settings(db, wait_s=wait)
    with run_lock(cfg.db, "playbook ingest", wait=cfg.wait_s):
        summary = ingest_with_progress(cfg, sources(paths) or cfg.transcripts, fmt)
    if as_json:
        print_json(summary.to_dict())
    else:
        render_ingest(summary)
    if summary.nothing_readable:
        raise typer.Exit(code=1)


@app.command("push")
@handles_errors
def push_cmd(
    url: Annotated[str, typer.Argument(help="Where the team's nightly job reads: s3://bucket/team, file:///..., ...")],
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Transcript folders (default: the configured ones).", show_default=False)
    ] = None,
    contributor: Annotated[
        str | None, typer.Option(help="The name your sessions are filed under (default: a stable pseudonym).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Upload your new or grown transcripts to the team's object storage, redacted on this machine first.

    Secrets and personal data (home paths, user names, e-mail addresses, `personal_patterns`) are removed
    from every record before anything leaves; files go to URL/<contributor>/<format>/..., and a ledger in
    the local database remembers what was sent, so the next push sends only what changed.

    Example: [bold]playbook push s3://team-transcripts/acme[/bold]
    """
    from core.store.objects import is_url
    from flows.runs import push_transcripts

    if not is_url(url):
        raise ConfigError(f"`{url}` is not an object-storage URL; use s3://bucket/prefix, gs://..., file:///...")
    cfg = settings(db, wait_s=wait)
    folders = [p.expanduser() for p in paths] if paths else cfg.local_transcripts()
    if not folders:
        raise ConfigError("No transcript folders to push; pass PATH or set `transcripts` in playbook.toml.")
    who = contributor or cfg.contributor_name()
    with run_lock_for(cfg, "playbook push"):
        summary = push_transcripts(cfg, url, folders, who)
    if as_json:
        print_json(summary.model_dump())
        return
    out.print(
        f"Pushed {len(summary.pushed)} file{'s' * (len(summary.pushed) != 1)} to {escape(url)}/{escape(who)}/"
        f" ({summary.unchanged} unchanged); removed before sending: {summary.secrets} secrets,"
        f" {summary.personal} personal-data spans.",
        highlight=False,
    )
    for path, why in summary.failed.items():
        err.print(f"[yellow]Not pushed[/yellow] {escape(path)}: {escape(why)}", highlight=False)


@app.command("forget")
@handles_errors
def forget_cmd(
    contributor: Annotated[str, typer.Option(help="The contributor (pseudonym) to forget.", show_default=False)],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was deleted as JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Delete a contributor's transcripts, messages and stored model exchanges from the database and the
    configured buckets (consent withdrawn). The playbook's history stays: entries their sessions shaped
    keep their provenance, marked "removed on request". Add them to `exclude_contributors` so a later push
    is not read again.

    Example: [bold]playbook forget --contributor dev-3f9a1c2b7e --yes[/bold]
    """
    from flows.runs import forget

    cfg = settings(db, wait_s=wait)
    if not yes and not typer.confirm(f"Delete everything of contributor {contributor!r}?"):
        raise typer.Exit(code=1)
    with run_lock_for(cfg, "playbook forget"):
        done = forget(cfg, contributor)
    if as_json:
        print_json(done.model_dump())
        return
    out.print(
        f"Forgot {escape(contributor)}: {done.sessions} sessions, {done.messages} messages, {done.calls} model"
        f" exchanges, {done.objects} objects in buckets, {done.files} fetched files.",
        highlight=False,
    )
    for name, ids in done.held.items():
        out.print(
            f"Held in playbook `{escape(name)}` (their only support was {escape(contributor)}):"
            f" {escape(', '.join(ids))}; `playbook review` lists them.",
            highlight=False,
        )


@app.command("sessions")
@handles_errors
def sessions_cmd(
    project: Annotated[str | None, typer.Option(help="Only sessions of this project.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Only sessions started on or after this date.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    limit: Annotated[int, typer.Option(help="At most this many rows (newest first).")] = 1000,
    failed: Annotated[
        bool, typer.Option("--failed", help="Only sessions a playbook failed to process (attempts, quarantine).")
    ] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """List ingested sessions, or with --failed the ones a playbook could not process.

    Example: [bold]playbook sessions --project spotter --since 2026-02-01 --json[/bold]
    """

    from core.store.playbooks import failed_sessions
    from core.store.sessions import list_sessions

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        if failed:
            require_playbook_or_configured(con, cfg, cfg.playbook)
            broken = failed_sessions(con, cfg.playbook)
        else:
            rows = list_sessions(con, project=project, since=since, limit=limit)
    if failed:
        if as_json:
            print_json(broken)
            return
        grid = new_table("session", "status", "attempts", "last reason")
        for r in broken:
            grid.add_row(escape(r["session_id"]), r["status"], str(r["attempts"]), escape(r["reason"]))
        out.print(grid if broken else "No failed sessions.")
        return
    if as_json:
        print_json(rows)
        return
    table = new_table("session", "project", "format", "started", "msgs", "prompts", "tools", "errors")
    for r in rows:
        table.add_row(
            escape(r["session_id"][:36]),
            escape(r["project"] or ""),
            escape(r["format"]),
            r["started_at"].strftime("%Y-%m-%d %H:%M") if r["started_at"] else "",
            str(r["n_messages"]),
            str(r["n_user_prompts"]),
            str(r["n_tool_calls"]),
            str(r["n_tool_errors"]),
        )
    out.print(table)


@app.command("retry")
@handles_errors
def retry_cmd(
    sessions: Annotated[list[str] | None, typer.Argument(help="Session ids (default: with --all).")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every failed or quarantined session.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Let quarantined or held sessions be curated again by the next run (their attempts start over).

    A session held for a mass change is held again unless that run allows it, for example with
    `PLAYBOOK_MAX_REMOVED=100 playbook curate`.

    Example: [bold]playbook retry --all[/bold]
    """
    from core.store.playbooks import release_failures, require_playbook

    if not sessions and not every:
        raise ConfigError("Name the sessions to retry, or pass `--all`; `playbook sessions --failed` lists them.")
    cfg = settings(db, playbook, wait_s=wait)
    with write_db(cfg, "playbook retry", create=False) as con:
        require_playbook(con, cfg.playbook)
        n = release_failures(con, cfg.playbook, None if every else list(sessions or []))
    out.print(f"{n} session(s) of playbook `{cfg.playbook}` will be tried again by the next run.", highlight=False)


@app.command("import")
@handles_errors
def import_cmd(
    file: Annotated[Path, typer.Argument(help="A playbook.json in the seeds' format.", show_default=False)],
    sections: Annotated[
        Path | None, typer.Option(help="A sections.yaml for a new playbook (name, slug, description per section).")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="The new version is exactly the file (entries not in it go).")
    ] = False,
    merge: Annotated[
        bool, typer.Option("--merge", help="Add the file's entries whose text is not there yet; keep the rest.")
    ] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Import a playbook.json as a new version (a playbook that has entries needs --replace or --merge).

    Example: [bold]playbook import ~/.claude/playbook.json --playbook team --merge[/bold]
    """

    from core.compat import load_playbook
    from core.operations import apply_operations, normalize_playbook, without_unseen
    from core.playbook_json import playbook_from_dict
    from core.sections import DEFAULT_SECTIONS, load_sections_yaml
    from core.store.files import read_text
    from core.store.playbooks import ensure_playbook, load_version, write_version

    cfg = settings(db, playbook, wait_s=wait)
    if replace and merge:
        raise ConfigError("Pass either `--replace` or `--merge`, not both.")
    if not file.exists():
        raise PlaybookFileError(f"File `{file}` does not exist; pass the path of a playbook.json.")
    checked = load_playbook(file)  # a corrupt file stops here, with a message naming it
    section_set = load_sections_yaml(sections) if sections else DEFAULT_SECTIONS
    raw = json.loads(read_text(file)) if sections else checked
    with write_db(cfg, "playbook import") as con:
        section_set = ensure_playbook(con, cfg.playbook, section_set)
        incoming = normalize_playbook(playbook_from_dict(raw, sections=section_set), section_set)
        incoming, stripped = without_unseen(incoming)
        current = load_version(con, cfg.playbook)
        if current.size() and not (replace or merge):
            raise ConfigError(
                f"Playbook `{cfg.playbook}` has {current.size()} entries; pass `--replace` to make the file the new"
                " version, or `--merge` to add the entries that are not there yet. Nothing was imported."
            )
        if merge and current.size():
            adds = [{"type": "ADD", "text": e.text, "section": s} for s, e in incoming.entries()]
            model, report = apply_operations(current, adds, sections=section_set, limit=None)
            note = f"merge of {file}"
            how = f"merged: added {report.applied('ADD')} of {len(adds)} entries, the rest were already there"
        else:
            model, note = incoming, f"import of {file}"
            how = f"replaced {current.size()} entries" if current.size() else "new"
        version = write_version(con, cfg.playbook, model, source="import", note=note)
    out.print(
        f"Imported {model.size()} entries from {file} as version {version} of playbook `{cfg.playbook}` ({how}).",
        highlight=False,
    )
    for name, found in stripped.items():
        err.print(f"Note: removed invisible characters from {escape(name)}: {found}.", highlight=False)


@app.command("new")
@handles_errors
def new_cmd(
    name: Annotated[str, typer.Argument(help="The playbook's name.", show_default=False)],
    sections: Annotated[
        Path | None, typer.Option(help="A sections.yaml (name, slug, description per section).")
    ] = None,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Create an empty playbook (curate and import write only to playbooks that exist or are configured).

    Example: [bold]playbook new team --sections sections.yaml[/bold]
    """

    from core.sections import DEFAULT_SECTIONS, load_sections_yaml
    from core.store.playbooks import ensure_playbook, playbook_names

    cfg = settings(db, wait_s=wait)
    section_set = load_sections_yaml(sections) if sections else DEFAULT_SECTIONS
    with write_db(cfg, "playbook new") as con:
        if name in playbook_names(con):
            raise StoreError(f"Playbook `{name}` already exists; pick another name.")
        ensure_playbook(con, name, section_set)
    out.print(f"Created playbook `{name}` (version 0, empty).", highlight=False)


ShowFormat = Literal["text", "json", "markdown"]


@app.command("show")
@handles_errors
def show_cmd(
    version: Annotated[int | None, typer.Option(help="Version to show (default: newest).")] = None,
    fmt: Annotated[
        ShowFormat, typer.Option("--format", help="text, json (seeds' playbook.json) or markdown.")
    ] = "text",
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Show a playbook version.

    Example: [bold]playbook show --version 12 --format json[/bold]
    """

    from core.export import format_bullets, to_markdown
    from core.playbook_json import encode, playbook_to_dict
    from core.redact import mask_playbook
    from core.store.playbooks import load_version
    from core.store.provenance import entries_by_provider

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        model = mask_playbook(load_version(con, cfg.playbook, version), cfg.redactor())
        ruled = sorted(entries_by_provider(con, cfg.playbook, "heuristic") & {e.name for _, e in model.entries()})
    for _, entry in model.entries():
        found = removed(entry.text)
        if found:  # stored before cleaning removed them, or imported: exports leave them out
            err.print(
                f"Note: {escape(entry.name)} holds invisible characters ({found}), shown here as escapes;"
                " exports remove them.",
                highlight=False,
            )
    if ruled and fmt != "json":  # the seeds' JSON has no place for it; stderr keeps stdout parseable
        err.print(
            f"Note: {len(ruled)} entr{'y' if len(ruled) == 1 else 'ies'} ({', '.join(ruled[:8])}"
            f"{', …' if len(ruled) > 8 else ''}) were written by rules, without a model (the heuristic provider);"
            " `playbook recurate` has a model look at their sessions again.",
            highlight=False,
        )
    if fmt == "json":
        sys.stdout.write(encode(playbook_to_dict(model)))  # the file contract, versioned
    elif fmt == "markdown":
        sys.stdout.write(visible(to_markdown(model)))
    else:
        text = format_bullets(model)
        sys.stdout.write(visible(text or "(empty playbook)") + "\n")


@app.command("history")
@handles_errors
def history_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    limit: Annotated[int, typer.Option(help="Show the newest N versions (0: all of them).")] = 50,
    since: Annotated[datetime | None, typer.Option(help="Only versions created on or after this date.")] = None,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """One row per version: what produced it and what changed (the newest 50 unless --limit says otherwise).

    Example: [bold]playbook history --limit 20 --since 2026-11-01[/bold]
    """

    from core.store.playbooks import count_versions, history

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        rows = history(con, cfg.playbook, limit=limit or None, since=since)
        total = count_versions(con, cfg.playbook)
    if as_json:
        print_json(rows)
        return
    table = new_table("version", "created", "source", "session", "applied", "skipped", "pruned", "entries")
    for r in rows:
        table.add_row(
            str(r["version"]),
            r["created_at"].strftime("%Y-%m-%d %H:%M:%S"),
            escape(r["source"]),
            escape((r["session_id"] or "")[:20]),
            str(r["ops_applied"]),
            str(r["ops_skipped"]),
            str(r["pruned"]),
            str(r["n_entries"]),
        )
    out.print(table)
    if len(rows) < total:
        err.print(f"Showing {len(rows)} of {total} versions; --limit 0 shows all, --since narrows by date.")


@app.command("diff")
@handles_errors
def diff_cmd(
    v1: Annotated[int, typer.Argument(help="From version.")],
    v2: Annotated[int, typer.Argument(help="To version.")],
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Entries added, removed or changed between two versions.

    Example: [bold]playbook diff 3 7 --json[/bold]
    """

    from core.store.playbooks import diff_versions

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        changes = diff_versions(con, cfg.playbook, v1, v2)
    if as_json:
        print_json(
            [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "before": c.before.model_dump() if c.before else None,
                    "after": c.after.model_dump() if c.after else None,
                }
                for c in changes
            ]
        )
        return
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
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Make a new version equal to VERSION (history is never rewritten).

    Example: [bold]playbook revert 12[/bold]
    """

    from core.store.playbooks import revert

    cfg = settings(db, playbook, wait_s=wait)
    with write_db(cfg, "playbook revert", create=False) as con:
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
    whole: Annotated[
        bool, typer.Option("--all", help="Every entry, ignoring the budget (max_entries, max_tokens).")
    ] = False,
    sources: Annotated[
        bool, typer.Option("--sources", help="JSON: add each entry's `sources`, the sessions that shaped it.")
    ] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Export a playbook version, or snapshot the tables as Parquet.

    Exports fit the budget (`max_entries`, `max_tokens`): the entries with the best evidence are kept and
    the export says how many were left out; `--all` writes every entry.

    `claude-md` replaces only the marked block of an existing CLAUDE.md / AGENTS.md given with --out.

    Example: [bold]playbook export --format claude-md --out CLAUDE.md[/bold]
    """

    from core.export import replace_block, to_markdown
    from core.playbook_json import encode, playbook_to_dict
    from core.store.files import read_text, write_atomic
    from core.store.playbooks import record_export
    from core.store.provenance import entry_sources
    from core.store.snapshot import write_parquet
    from flows.runs import export_note, exportable, exported_version

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        if parquet is not None:
            written = write_parquet(con, parquet)
            out.print(f"Wrote {len(written)} Parquet files to {parquet}.")
            return
        model, use = exportable(con, cfg, cfg.playbook, version, whole=whole)
        shaped_by = entry_sources(con, cfg.playbook) if sources else {}
        note = export_note(con, cfg.playbook, model, use)
    if fmt == "json":
        data = playbook_to_dict(model)
        if sources:
            for items in data["sections"].values():
                for item in items:
                    item["sources"] = shaped_by.get(item["name"], [])
        text = encode(data)
    elif fmt == "markdown":
        text = to_markdown(model, note=note)
    else:
        existing = read_text(out_file) if out_file and out_file.exists() else ""
        block = to_markdown(model, title=None, counters=False, note=note)
        text = replace_block(existing, block, source=str(out_file))
    if note:
        err.print(f"[yellow]Note:[/yellow] {escape(note)}", highlight=False)
    if out_file is None:
        sys.stdout.write(text)
        return
    write_atomic(out_file, text)
    # A file agents may load: from now on its entries' triggers count as "after" (v_trigger_recurrence).
    with write_db(cfg, "export", create=False) as con:
        shipped = version if version is not None else exported_version(con, cfg, cfg.playbook)
        record_export(con, cfg.playbook, shipped, str(out_file), [e.name for _, e in model.entries()])
    err.print(f"Wrote {out_file}")


def _numbers(spec: str | None, changes: list[Any]) -> set[int]:
    """`--reject 1,3,mis-002`: change numbers or entry ids, as numbers; anything else is a usage error."""
    if not spec:
        return set()
    by_name = {c.name: c.number for c in changes}
    picked = set()
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if part.isdigit() and 1 <= int(part) <= len(changes):
            picked.add(int(part))
        elif part in by_name:
            picked.add(by_name[part])
        else:
            raise ConfigError(f"`{part}` is not a pending change (numbers 1-{len(changes)} or their entry ids).")
    return picked


def render_held(held: list[Any]) -> None:
    """The entries the screen holds: id, the rules and what matched, the text as it is (invisible characters
    shown as escapes)."""
    if not held:
        return
    out.print(f"[bold]{len(held)} entr{'y' if len(held) == 1 else 'ies'} held by the screen[/bold] (never exported):")
    for h in held:
        out.print(f"  [red]![/red] [bold]{escape(h.name)}[/bold] ({escape(h.section)}): {escape(h.text)}")
        for x in h.holds:
            out.print(f"      {x.rule}: {escape(x.detail)}")
    out.print("  Release one with `playbook review --release ID` after reading it.", highlight=False)


def render_changes(changes: list[Any]) -> None:
    """The pending changes as a numbered, readable diff."""
    for c in changes:
        sign = {"added": "[green]+[/green]", "removed": "[red]-[/red]", "changed": "[yellow]~[/yellow]"}[c.kind]
        out.print(f"{sign} {c.number}. {c.kind} [bold]{escape(c.name)}[/bold] ({escape(c.section)})")
        if c.before is not None:
            out.print(f"    [red]- {escape(c.before)}[/red]")
        if c.after is not None:
            out.print(f"    [green]+ {escape(c.after)}[/green]")


@app.command("review")
@handles_errors
def review_cmd(
    approve_all: Annotated[
        bool, typer.Option("--approve-all", help="Approve every pending change not rejected.")
    ] = False,
    reject: Annotated[
        str | None, typer.Option("--reject", help="Reject these changes: numbers or entry ids, comma-separated.")
    ] = None,
    reject_all: Annotated[bool, typer.Option("--reject-all", help="Reject every pending change.")] = False,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Decide change by change (the default on a terminal).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    release: Annotated[
        str | None,
        typer.Option(
            "--release", help="Export these held entries anyway, as they read now (entry ids, comma-separated)."
        ),
    ] = None,
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Review what changed since the last approved version of a playbook that has `review = "required"`, and
    the entries the screen holds (never exported until released).

    Without a decision it lists the pending changes and the held entries with the rule that holds each.
    Approved changes are published from then on; a rejected change becomes a new version that undoes it (the
    history keeps both). Every change must be decided at once. `--release ID,...` lets held entries be exported
    as they read now; a later change of their text is screened again.

    Example: [bold]playbook review --reject 2 --approve-all[/bold]
    """

    from core.review import review_changes, undo_changes
    from core.store.playbooks import approved_version, current_version, load_version, record_review, write_version
    from flows.runs import held_entries, release_held

    cfg = settings(db, playbook, wait_s=wait)
    if release is not None:
        names = [n.strip() for n in release.split(",") if n.strip()]
        with run_lock_for(cfg, "playbook review"):
            freed = release_held(cfg, cfg.playbook, names, os.environ.get("USER"))
        if as_json:
            print_json({"released": [h.model_dump() for h in freed]})
            return
        for h in freed:
            out.print(f"Released {escape(h.name)} ({', '.join(x.rule for x in h.holds)}): {escape(h.text)}")
        return
    held = held_entries(cfg, cfg.playbook)
    if not as_json:
        render_held(held)
    with write_db(cfg, "playbook review", create=False) as con:
        require_playbook_or_configured(con, cfg, cfg.playbook)
        base, newest = approved_version(con, cfg.playbook), current_version(con, cfg.playbook)
        approved, current = load_version(con, cfg.playbook, base), load_version(con, cfg.playbook, newest)
        changes = review_changes(approved, current)
        asking = interactive or (sys.stdin.isatty() and not (approve_all or reject or reject_all or as_json))
        decided = approve_all or reject_all or reject is not None
        if not changes or not (decided or asking):
            if as_json:
                print_json(
                    {
                        "approved_version": base,
                        "newest_version": newest,
                        "pending": [c.model_dump() for c in changes],
                        "held": [h.model_dump() for h in held],
                    }
                )
                return
            if cfg.options(cfg.playbook).review != "required":
                err.print(f'Note: playbook `{cfg.playbook}` has review = "auto": every version is published.')
            if not changes:
                out.print(f"Nothing to review: version {newest} is what is published.", highlight=False)
                return
            render_changes(changes)
            out.print(
                f"{len(changes)} change(s) since approved version {base} await review:"
                " `playbook review --approve-all`, `--reject N,...`, or `-i` to decide one by one.",
                highlight=False,
            )
            return
        rejected = {c.number for c in changes} if reject_all else _numbers(reject, changes)
        if asking:
            rejected = set()
            for c in changes:
                render_changes([c])
                answer = typer.prompt("  approve or reject? [a/r]", default="a").strip().lower()
                if answer.startswith("r"):
                    rejected.add(c.number)
        elif not approve_all and len(rejected) < len(changes):
            raise ConfigError(
                f"{len(changes) - len(rejected)} change(s) are neither approved nor rejected; add --approve-all to"
                " approve the rest."
            )
        drop = [c for c in changes if c.number in rejected]
        if not yes and (asking or sys.stdin.isatty()):
            if not typer.confirm(f"Approve {len(changes) - len(drop)} and reject {len(drop)} change(s)?"):
                out.print("Nothing was changed.")
                return
        version = newest
        if drop:
            version = write_version(
                con,
                cfg.playbook,
                undo_changes(current, approved, drop),
                source="review",
                note=f"review: rejected {', '.join(c.name for c in drop)}",
                expected_parent=newest,
            )
        record_review(con, cfg.playbook, version, len(changes) - len(drop), len(drop), os.environ.get("USER"))
    if as_json:
        print_json(
            {"approved_version": version, "approved": len(changes) - len(drop), "rejected": [c.name for c in drop]}
        )
        return
    out.print(
        f"Approved version {version}: {len(changes) - len(drop)} change(s) approved, {len(drop)} rejected"
        + (f" (undone in version {version})" if drop else "")
        + ". Exports and `playbook publish` use it from now on.",
        highlight=False,
    )


@app.command("publish")
@handles_errors
def publish_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print one object per target as JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: Annotated[
        str | None, typer.Option("--playbook", "-p", help="Only this playbook (default: every configured one).")
    ] = None,
    git_repo: Annotated[
        Path | None,
        typer.Option(
            "--git",
            help="A working copy of the team repository: commit the targets there on --branch (through review)"
            " and push the branch when the repository has a remote.",
            show_default=False,
        ),
    ] = None,
    branch: Annotated[
        str, typer.Option(help="The branch --git commits on; never the default branch.")
    ] = "playbook/update",
) -> None:
    """Write every configured export target (CLAUDE.md, AGENTS.md, GEMINI.md, Cursor and Claude Code rules,
    Copilot instructions) of every playbook, within budget; `nightly` does this last.

    Targets are set per playbook in playbook.toml, `[playbook_settings.NAME] targets = [{kind, path or repo}]`.
    Shared files get a marked block (hand-written text is kept); files playbook owns are written whole, and a
    file it did not write is refused. Exits 3 when a target was refused.

    With --git, the repository targets go into the team repository instead, as a commit on --branch whose
    message sums up the versions, operations and sessions since the last publish (a playbook without
    targets publishes CLAUDE.md and AGENTS.md); the checkout you pass is never changed, and nothing is
    committed when nothing changed.

    Example: [bold]playbook publish --git ~/src/team-repo[/bold]
    """

    from core.store.playbooks import require_playbook
    from flows.runs import publish_git, publish_targets

    cfg = settings(db, None, wait_s=wait)
    names = [playbook] if playbook else cfg.playbooks
    with read_db(cfg) as con:
        for name in names:
            require_playbook(con, name)
    if git_repo is None and not any(cfg.options(n).targets for n in names):
        raise ConfigError(
            'No export targets are configured; add `targets = [{ kind = "claude-md", repo = "~/src/app" }]` under'
            f" `[playbook_settings.{names[0]}]` in playbook.toml (README: Export targets), or pass --git REPO."
        )
    with run_lock_for(cfg, "playbook publish"):
        if git_repo is not None:
            done = publish_git(cfg, names, git_repo, branch)
            results = done.files
        else:
            results = publish_targets(cfg, names)
    if as_json:
        print_json(done.model_dump() if git_repo is not None else [r.model_dump() for r in results])
    else:
        table = new_table("playbook", "kind", "file", "result")
        for r in results:
            result = "[red]refused[/red]: " + escape(r.message) if r.status == "refused" else r.status
            table.add_row(r.playbook, r.kind, escape(r.path), result)
        out.print(table)
        if git_repo is not None:
            where = f", pushed to {done.pushed_to}" if done.pushed_to else " (no remote: not pushed)"
            out.print(
                f"Committed {done.commit[:10]} on {done.branch}{where}."
                if done.commit
                else "Nothing changed since the last publish; nothing committed.",
                highlight=False,
            )
    if any(r.status == "refused" for r in results):
        raise typer.Exit(code=3)


# --- pipeline commands -------------------------------------------------------------------------

LlmOpt = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="anthropic, batch, openai (an OpenAI-compatible server), claude-cli (a subscription), heuristic,"
        " replay:FILE or auto"
        " (anthropic with a key, else openai when openai_base_url is set, else heuristic).",
    ),
]


def render_run(summary: RunSummary) -> None:
    """The end-of-run summary."""
    for notice in summary.notices:
        err.print(f"[yellow]Notice:[/yellow] {escape(notice)}", highlight=False)
    table = new_table(title=f"{summary.kind} · playbook `{summary.playbook}`", show_header=False, title_justify="left")
    for label, value in summary.summary_rows():
        table.add_row(label, escape(value))
    out.print(table)
    for session_id, reason in summary.failures.items():
        err.print(
            f"[yellow]failed (retried next run):[/yellow] {escape(session_id)}: {escape(reason)}", highlight=False
        )


@contextmanager
def progress_bars() -> Iterator[None]:
    """Progress bars on stderr for the phases a flow reports (ingest bytes, curated sessions)."""
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
            yield
        finally:
            listen(None)


def run_flow(fn: Callable[..., R], cfg: Settings, what: str, **kwargs: Any) -> R:
    """Run a flow locally: the run lock is taken here, before Prefect starts (the flow finds it held)."""

    from core.store.lock import run_lock

    with run_lock(cfg.db, what, wait=cfg.wait_s):
        from flows._runtime import local_run

        with progress_bars(), local_run():
            return fn(settings=cfg, **kwargs)


def require_playbook_or_configured(con: Any, cfg: Settings, name: str) -> None:
    """Configured playbooks (`playbooks` in the settings) are created on first use; any other must exist."""

    from core.store.playbooks import require_playbook

    if name not in cfg.playbooks:
        require_playbook(con, name)


def _idle(cfg: Settings, sources: list[Path | str], playbooks: list[str], *, create: bool) -> str | None:
    """Why there is nothing to do (no file to ingest, no session to curate), or None when there is work.

    Checked before any orchestration, so an idle nightly or curate never starts Prefect. It also fails
    loudly on a transcript folder that does not exist and on a playbook that nobody created. An
    object-storage source always counts as work (listing it is the ingest step's job).
    """
    transcripts = [s for s in sources if isinstance(s, Path)]
    if len(transcripts) < len(sources):
        return None

    from core.store.db import open_db
    from core.store.ingest import needs_ingest
    from core.store.playbooks import require_playbook
    from core.store.sessions import count_pending

    for path in transcripts:
        if not path.exists():
            raise ConfigError(f"Transcript folder `{path}` does not exist; check the path or `transcripts`.")
    if create and not cfg.db.exists():
        return None  # the first run: everything is work
    with open_db(cfg.db, create=False, wait=cfg.wait_s) as con:
        for name in playbooks:
            if not create:
                require_playbook(con, name)
        if transcripts and needs_ingest(con, transcripts):
            return None
        if any(count_pending(con, name, cfg.idle_minutes) for name in playbooks):
            return None
    return "nothing new to ingest or curate"


def _quiet_run(cfg: Settings, name: str, provider: Any, kind: str) -> RunSummary:
    """A run with nothing to do: recorded like any other, without Prefect (it would only add start-up time)."""

    from core.store.lock import run_lock
    from flows.runs import run_curation

    with run_lock(cfg.db, f"playbook {kind}", wait=cfg.wait_s):
        return run_curation(cfg, name, provider, kind=kind)


# Exit codes of the run commands: 0 done, 1 error (every attempted session failed included), 3 ran but
# some sessions failed (they are retried next run, or quarantined).
EXIT_SOME_FAILED = 3


def _report_runs(summaries: list[RunSummary], as_json: bool) -> None:
    if as_json:
        print_json([s.model_dump() for s in summaries])
    else:
        for summary in summaries:
            render_run(summary)
    if any(s.status == "partial" for s in summaries):
        raise typer.Exit(code=EXIT_SOME_FAILED)


def run_and_report(start: Callable[[], list[RunSummary]], as_json: bool) -> None:
    """Run, print the summaries, and exit with the code that says what happened."""
    from core.errors import RunFailedError
    from core.runsummary import RunSummary

    try:
        summaries = start()
    except RunFailedError as exc:
        _report_runs([s for s in exc.summaries if isinstance(s, RunSummary)], as_json)
        raise
    _report_runs(summaries, as_json)


DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print what would be sent and its estimated cost; call no model.")
]
MaxCostOpt = Annotated[
    float | None, typer.Option("--max-cost", help="Refuse to start when the estimated cost (USD) is above this.")
]
AssumeOpt = Annotated[int, typer.Option("--assume-output", help="Output tokens assumed per call for the estimate.")]


def estimate_first(
    cfg: Settings, provider: Any, *, dry_run: bool, max_cost: float | None, per_call: int, as_json: bool, **filters: Any
) -> bool:
    """For `--dry-run` and `--max-cost`: estimate the run; print it (dry run) or refuse it (over the limit).

    Returns:
        True when the command is done (a dry run).
    """
    if not dry_run and max_cost is None:
        return False
    from flows.runs import estimate_run

    est = estimate_run(cfg, cfg.playbook, provider, per_call=per_call, **filters)
    price = est.batch_usd if provider.kind == "batch" else est.live_usd
    if dry_run:
        if as_json:
            print_json(est.model_dump() | {"provider": provider.label})
        else:
            out.print(
                f"Would send {len(est.sessions)} session(s) to {provider.label} (reflector {provider.reflector_model},"
                f" curator {provider.curator_model}): {est.calls} calls, ~{est.input_tokens:,} input tokens,"
                f" ~{est.cache_write_tokens:,} written to and ~{est.cache_read_tokens:,} read from the prompt cache"
                f" ({est.cache_reuse:.0%} of prompt tokens), ~{est.output_tokens:,} output tokens ({per_call} assumed"
                f" per call).\nEstimated cost: ${est.live_usd:.4f} live, ${est.batch_usd:.4f} through batches.",
                highlight=False,
            )
        return True
    if max_cost is not None and price > max_cost:
        raise ConfigError(
            f"The estimated cost, ${price:.4f} for {len(est.sessions)} session(s), is above --max-cost ${max_cost:.4f};"
            " nothing was sent (`--dry-run` shows the estimate)."
        )
    return False


@app.command("curate")
@handles_errors
def curate_cmd(
    limit: Annotated[int | None, typer.Option(help="At most this many sessions.")] = None,
    epoch_size: Annotated[int | None, typer.Option(help="Sessions judged against one frozen playbook.")] = None,
    llm: LlmOpt = None,
    project: Annotated[str | None, typer.Option(help="Only sessions of this project.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Only sessions started on or after this date.")] = None,
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

    from flows.providers import resolve_provider

    cfg = settings(db, playbook, wait_s=wait)
    provider = resolve_provider(llm or cfg.llm, cfg)  # fails fast, before Prefect starts
    filters = {"project": project, "since": since, "until": until, "limit": limit, "epoch_size": epoch_size}
    if estimate_first(
        cfg, provider, dry_run=dry_run, max_cost=max_cost, per_call=assume_output, as_json=as_json, **filters
    ):
        return
    idle = _idle(cfg, [], [cfg.playbook], create=create or cfg.playbook in cfg.playbooks)
    if idle is not None:
        _report_runs([_quiet_run(cfg, cfg.playbook, provider, "curate")], as_json)
        return
    from flows.pipeline import curate_flow

    run_and_report(
        lambda: [
            run_flow(
                curate_flow,
                cfg,
                "playbook curate",
                llm=provider,
                playbook=cfg.playbook,
                limit=limit,
                epoch_size=epoch_size,
                project=project,
                since=since,
                until=until,
            )
        ],
        as_json,
    )


@app.command("recurate")
@handles_errors
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

    from core.store.playbooks import require_playbook
    from core.store.provenance import requeue_sessions, sessions_applied_by
    from flows.pipeline import curate_flow
    from flows.providers import resolve_provider

    cfg = settings(db, playbook, wait_s=wait)
    provider = resolve_provider(llm or cfg.llm, cfg)
    if provider.kind == "heuristic" and not dry_run:
        raise ConfigError(
            "recurate needs a model: set ANTHROPIC_API_KEY, or `openai_base_url` for a local server, or pass"
            " `--llm anthropic` / `--llm openai` / `--llm replay:FILE`."
        )
    with write_db(cfg, "playbook recurate", create=False) as con:
        require_playbook(con, cfg.playbook)
        ids = sessions_applied_by(con, cfg.playbook, None if source == "any" else "heuristic", since)
        if not dry_run:
            requeue_sessions(con, cfg.playbook, ids)
    if dry_run or not ids:
        if as_json:
            print_json({"sessions": ids, "dry_run": dry_run})
        else:
            out.print(f"{len(ids)} session(s) to curate again: {', '.join(ids[:10]) or 'none'}", highlight=False)
        return
    err.print(f"{len(ids)} session(s) queued again for playbook `{cfg.playbook}`.", highlight=False)
    run_and_report(
        lambda: [run_flow(curate_flow, cfg, "playbook recurate", llm=provider, playbook=cfg.playbook, since=since)],
        as_json,
    )


@app.command("nightly")
@handles_errors
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

    from flows.providers import resolve_provider

    cfg = settings(db, wait_s=wait)
    provider = resolve_provider(llm or cfg.llm, cfg)
    targets = sources(transcripts) or cfg.transcripts
    if _idle(cfg, targets, cfg.playbooks, create=True) is not None:
        _report_runs([_quiet_run(cfg, name, provider, "nightly") for name in cfg.playbooks], as_json)
        return
    from flows.pipeline import nightly_flow

    run_and_report(lambda: run_flow(nightly_flow, cfg, "playbook nightly", llm=provider, transcripts=targets), as_json)
    if not as_json:
        err.print(f"Exported to {cfg.out_dir}/")


@app.command("backfill")
@handles_errors
def backfill_cmd(
    since: Annotated[datetime, typer.Option(help="First day (inclusive).")],
    until: Annotated[datetime, typer.Option(help="Last day (exclusive).")],
    llm: Annotated[str, typer.Option("--llm", help="Provider; batch by default (half price).")] = "batch",
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

    from flows.providers import resolve_provider

    cfg = settings(db, playbook, wait_s=wait)
    provider = resolve_provider(llm, cfg)
    if estimate_first(
        cfg,
        provider,
        dry_run=dry_run,
        max_cost=max_cost,
        per_call=assume_output,
        as_json=as_json,
        since=since,
        until=until,
        epoch_size=epoch_size,
    ):
        return
    with read_db(cfg) as con:
        require_playbook_or_configured(con, cfg, cfg.playbook)
    from flows.pipeline import backfill_flow

    run_and_report(
        lambda: [
            run_flow(
                backfill_flow,
                cfg,
                "playbook backfill",
                since=since,
                until=until,
                llm=provider,
                playbook=cfg.playbook,
                epoch_size=epoch_size,
            )
        ],
        as_json,
    )


@app.command("consolidate")
@handles_errors
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
    from core.store.lock import run_lock
    from flows.providers import resolve_provider
    from flows.runs import run_consolidation

    cfg = settings(db, playbook, wait_s=wait)
    provider = None if dry_run else resolve_provider(llm or cfg.llm, cfg)
    with run_lock(cfg.db, "playbook consolidate", wait=cfg.wait_s):
        with read_db(cfg) as con:
            require_playbook_or_configured(con, cfg, cfg.playbook)
        summary, ops = run_consolidation(cfg, cfg.playbook, dry_run=dry_run, provider=provider)
    for notice in summary.notices:
        err.print(f"[yellow]Note:[/yellow] {escape(notice)}", highlight=False)
    if as_json:
        print_json({"dry_run": dry_run, "version": summary.last_version, "merges": ops})
        return
    if not ops:
        out.print(f"No near-duplicate entries in playbook `{cfg.playbook}`; nothing to merge.", highlight=False)
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


@app.command("stale")
@handles_errors
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
    from core.store.playbooks import require_playbook, stale_entries

    cfg = settings(db, playbook, wait_s=wait)
    window = days if days is not None else cfg.stale_after_days
    with read_db(cfg) as con:
        require_playbook(con, cfg.playbook)
        rows = stale_entries(con, cfg.playbook, window) if window else []
    if as_json:
        print_json(rows)
        return
    if not rows:
        out.print(f"No stale entries in playbook `{cfg.playbook}` (window: {window:g} days).", highlight=False)
        return
    table = new_table("entry", "section", "last confirmed", "text")
    for r in rows:
        when = r["last_confirmed"] or r["created"]
        label = f"{when:%Y-%m-%d}" + ("" if r["last_confirmed"] else " (never; created)")
        table.add_row(escape(r["name"]), escape(r["section"]), label, escape(r["text"]))
    out.print(table)
    err.print(
        f"{len(rows)} stale entr{'y' if len(rows) == 1 else 'ies'} (no confirmation for {window:g} days); exports"
        " leave them out, `export --all` keeps them.",
        highlight=False,
    )


def render_life(life: dict[str, Any], indent: str = "") -> None:
    """`playbook why`: an entry's life as a timeline, the sessions behind it, and its sources' lives."""
    now = life["now"]
    head = f"{indent}[bold]{escape(life['entry_id'])}[/bold]"
    if now:
        out.print(
            f"{head} ({escape(now['section'])}; helpful {now['helpful']}, harmful {now['harmful']}):"
            f" {escape(now['text'])}"
        )
    else:
        out.print(f"{head} (no longer live)")
    table = new_table("version", "date", "what", "session", "detail")
    for e in life["events"]:
        detail = {
            "ADD": f"added: {e['new_text']}" + (f' (trigger "{e["trigger"]}")' if e["trigger"] else ""),
            "UPDATE": f"was: {e['old_text']}\nnow: {e['new_text']}",
            "MERGE": f"merged from {', '.join(e['target_ids'])}: {e['new_text']}",
            "MERGED INTO": f"merged into {e['entry_id']}",
            "DELETE": f"deleted: {e['reason'] or ''}",
            "TAG": f"{e['rating']}: {e['rationale'] or ''}",
            "PRUNE": e["reason"] or "",
        }.get(e["event"], e["reason"] or "")
        session = e["session_id"] or e["source"]
        table.add_row(str(e["version"]), (e["at"] or "")[:10], e["event"], escape(session), escape(detail))
    out.print(table)
    for sid, info in life["sessions"].items():
        where = ", ".join(
            str(x)
            for x in (info["project"], (info["started_at"] or "")[:10], info.get("contributor"), info.get("removed"))
            if x
        )
        out.print(f"{indent}session {escape(sid)} ({escape(where)}): {escape(repr(info['first_prompt'] or ''))}")
        if info["analysis"]:
            out.print(f"{indent}  reflector: {escape(info['analysis'])}")
        if info["reasoning"]:
            out.print(f"{indent}  curator: {escape(info['reasoning'])}")
    if life["rediscoveries"]:
        found = life["rediscoveries"]
        mean = sum(r["similarity"] or 0 for r in found) / len(found)
        out.print(f"{indent}rediscovered {len(found)} time(s) (mean similarity {mean:.2f})")
    for row in life["triggers"]:
        out.print(f'{indent}trigger "{escape(row["triggers"])}": {describe_recurrence(row)} (an observation)')
    for source in life["sources"]:
        out.print(f"{indent}[dim]source of the merge:[/dim]")
        render_life(source, indent + "  ")


@app.command("why")
@handles_errors
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

    from core.store.provenance import entry_life

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        life = entry_life(con, cfg.playbook, entry)
    if not life["events"] and life["now"] is None:
        raise PlaybookError(f"No entry `{entry}` in playbook `{cfg.playbook}`; `playbook show` lists the ids.")
    if as_json:
        print_json(life)
        return
    render_life(life)


def describe_recurrence(row: dict[str, Any]) -> str:
    """`trigger seen in 9 of 35 sessions before, 2 of 40 after` (after: since the entry was first exported)."""
    before = f"seen in {row['seen_before']} of {row['sessions_before']} sessions before"
    if row["first_exported_at"] is None:
        return f"{before}; not exported yet"
    return f"{before}, {row['seen_after']} of {row['sessions_after']} after"


@app.command("triggers")
@handles_errors
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

    from core.store.playbooks import require_playbook, trigger_recurrence

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        require_playbook(con, cfg.playbook)
        rows = trigger_recurrence(con, cfg.playbook, entry)
    if as_json:
        print_json(rows)
        return
    if not rows:
        out.print("No live entry has a trigger." if entry is None else f"Entry {entry} has no trigger (or is gone).")
        return
    table = new_table("entry", "trigger", "observed (trigger text in a session's messages)")
    for row in rows:
        table.add_row(escape(row["entry_id"]), escape(row["triggers"]), describe_recurrence(row))
    out.print(table)


@app.command("runs")
@handles_errors
def runs_cmd(
    limit: Annotated[int, typer.Option(help="How many runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Recent pipeline runs with their counts, tokens and cost.

    Example: [bold]playbook runs --limit 5[/bold]
    """

    from core.store.runs import list_runs

    cfg = settings(db, wait_s=wait)
    with read_db(cfg) as con:
        rows = list_runs(con, limit)
    if as_json:
        print_json(rows)
        return
    table = new_table("run", "status", "playbook", "provider", "sessions a/s/f", "ops a/s", "pruned", "cost", "time")
    for r in rows:
        table.add_row(
            r["run_id"],
            r["status"],
            escape(r["playbook"] or ""),
            escape(r["provider"] or ""),
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
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Totals for a playbook: sessions, versions, operations by type and status, prunes, cost.

    Example: [bold]playbook stats --json[/bold]
    """

    from core.store.playbooks import playbook_stats

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        data = playbook_stats(con, cfg.playbook)
    if as_json:
        print_json(data)
        return
    table = new_table(title=f"playbook `{cfg.playbook}`", show_header=False, title_justify="left")
    for key, value in data.items():
        if key != "operations":
            table.add_row(key.replace("_", " "), f"{value:.4f}" if isinstance(value, float) else str(value))
    table.add_row("operations", ", ".join(f"{o['type']} {o['status']} {o['n']}" for o in data["operations"]) or "none")
    out.print(table)


@app.command("sql")
@handles_errors
def sql_cmd(
    query: Annotated[str, typer.Argument(help="A SQL query over the tables and views.", show_default=False)],
    as_json: JsonOpt = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """Run one read-only SQL query on the database (no `duckdb` CLI needed); the views are listed in the README.

    Allowed: queries (select, with, describe, show, summarize), explain, and pragmas that only report. The
    connection is read-only and cannot open any other file, database or extension (copy, attach, read_text,
    install are refused); the database is left byte for byte as it was.

    Example: [bold]playbook sql "select type, code, sum(n) from v_skip_reasons group by all"[/bold]
    """

    from core.store.readonly import run_read_only

    cfg = settings(db, wait_s=wait)
    columns, rows = run_read_only(cfg.db, query, wait=cfg.wait_s)
    if as_json:
        print_json([dict(zip(columns, r, strict=True)) for r in rows])
        return
    table = new_table(*columns)
    for r in rows:
        table.add_row(*(escape("" if v is None else str(v)) for v in r))
    out.print(table)


@app.command("check")
@handles_errors
def check_cmd(db: DbOpt = None, wait: WaitOpt = None) -> None:
    """Read every table in full, so every block's checksum is verified, and say how to recover if one fails.

    Example: [bold]playbook check[/bold]
    """
    from core.store.db import open_db, verify

    cfg = settings(db, wait_s=wait)
    with open_db(cfg.db, read_only=True, wait=cfg.wait_s) as con:
        tables, rows, broken = verify(con)
    if broken:
        names = ", ".join(f"`{t}` ({why})" for t, why in broken[:2]) + (
            f" and {len(broken) - 2} more tables" if len(broken) > 2 else ""
        )
        raise StoreError(
            f"Database `{cfg.db}` is damaged: {names}. Restore the newest copy from `{cfg.db}.backups/`"
            " (README, Recovering a database) and run `playbook nightly` again."
        )
    out.print(f"Database `{cfg.db}`: {tables} tables, {rows:,} rows read, every checksum verified.", highlight=False)


@app.command("report")
@handles_errors
def report_cmd(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Folder for index.html and the PNG charts.")] = None,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Write the playbook evolution report: a static HTML page and the same charts as PNG files.

    Example: [bold]playbook report --out data/out/report[/bold]  (then open data/out/report/index.html)
    """

    from core.store.playbooks import require_playbook
    from flows.evolution import write_evolution_report

    cfg = settings(db, playbook, wait_s=wait)
    with read_db(cfg) as con:
        require_playbook(con, cfg.playbook)
    result = write_evolution_report(
        cfg.db,
        cfg.playbook,
        out_dir or cfg.out_dir / "report",
        cfg.redactor(),
        wait=cfg.wait_s,
        budget=cfg.budget(cfg.playbook),
        stale_after_days=cfg.stale_after_days,
    )
    out.print(
        f"Wrote {result.index} and {len(result.charts)} PNG charts"
        f" ({result.versions} versions, {result.seconds:.1f} s)."
    )


@app.command("serve")
@handles_errors
def serve_cmd() -> None:
    """Serve the `nightly` (03:00 UTC) and `backfill` deployments of prefect.yaml from this process.

    Needs a running Prefect server: `prefect server start`, then PREFECT_API_URL=http://127.0.0.1:4200/api.

    Example: [bold]PREFECT_API_URL=http://127.0.0.1:4200/api playbook serve[/bold]
    """
    import os

    if not os.environ.get("PREFECT_API_URL"):
        raise ConfigError(
            "Schedules need a running Prefect server; start one with `prefect server start` and set"
            " PREFECT_API_URL=http://127.0.0.1:4200/api."
        )
    from flows.deployments import serve_all

    serve_all()


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("playbook")
        except PackageNotFoundError:  # a checkout on sys.path without an install
            number = "unknown (not installed)"
        out.print(f"playbook {number}")
        raise typer.Exit()


@app.callback()
def root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Learn a playbook of lessons from coding-agent transcripts (Prefect + DuckDB)."""


@app.command("doctor")
@handles_errors
def doctor_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
) -> None:
    """What playbook would use here, and what is wrong with the fix: transcript folders (files and sessions
    per format), the database, the provider `auto` picks and why, and the Prefect API.

    Exits 1 when something needs fixing.

    Example: [bold]playbook doctor[/bold]
    """

    import os

    from core.store.db import open_db
    from core.store.ingest import survey
    from core.store.overview import database_overview
    from flows.config import default_transcripts
    from flows.providers import resolve_provider

    cfg = settings(db, wait_s=wait)
    problems: list[str] = []
    defaults = cfg.transcripts == default_transcripts()
    folders = survey(cfg.local_transcripts())
    if not folders:
        problems.append(
            "No transcript folder found (looked for ~/.claude/projects, $CLAUDE_CONFIG_DIR/projects and"
            " ~/.codex/sessions); pass PATH to `playbook ingest`, or set `transcripts` in playbook.toml."
        )
    for folder in folders:
        if not folder.exists:
            problems.append(f"Transcript folder `{folder.path}` does not exist; fix `transcripts` or create it.")
    database: dict[str, Any] = {"path": str(cfg.db), "exists": cfg.db.exists()}
    if cfg.db.exists():
        try:
            with open_db(cfg.db, read_only=True, wait=cfg.wait_s) as con:
                database.update(database_overview(con))
        except PlaybookError as exc:
            problems.append(str(exc))
    key_source = next((k for k in ("ANTHROPIC_API_KEY", "PLAYBOOK_ANTHROPIC_API_KEY") if os.environ.get(k)), None)
    spec = resolve_provider("auto", cfg)
    provider = {
        "auto_picks": spec.kind,
        "why": f"an API key is set ({key_source})" if spec.kind == "anthropic" else "no ANTHROPIC_API_KEY is set",
        "configured": cfg.llm,
    }
    api = os.environ.get("PREFECT_API_URL")
    prefect = {
        "api": api or "none: each run starts a temporary local Prefect API; schedules need `prefect server start`",
    }
    report = {
        "transcripts": {"defaults": defaults, "folders": [f.__dict__ for f in folders]},
        "database": database,
        "provider": provider,
        "prefect": prefect,
        "problems": problems,
    }
    if as_json:
        print_json(report)
    else:
        out.print(
            f"[bold]Transcripts[/bold] ({'found on this machine' if defaults else 'configured'})", highlight=False
        )
        for f in folders:
            files = ", ".join(f"{k} {n}" for k, n in sorted(f.files.items())) or "no transcript files"
            found = ", ".join(f"{k} {n}" for k, n in sorted(f.sessions.items())) or "none"
            out.print(f"  {escape(f.path)}: files {escape(files)}; sessions {escape(found)}", highlight=False)
        if not folders:
            out.print("  none found", highlight=False)
        state = (
            f"schema {database.get('schema_version')}, {database.get('sessions')} sessions, playbooks "
            + (", ".join(f"{k} (version {v})" for k, v in database.get("playbooks", {}).items()) or "none")
            if "schema_version" in database
            else ("exists" if database["exists"] else "not created yet; `playbook ingest` creates it")
        )
        out.print(f"[bold]Database[/bold] {escape(str(cfg.db))}: {escape(state)}", highlight=False)
        out.print(f"[bold]Provider[/bold] auto picks {spec.kind}: {provider['why']}", highlight=False)
        out.print(f"[bold]Prefect[/bold] {escape(prefect['api'])}", highlight=False)
        for problem in problems:
            err.print(f"[red]Problem:[/red] {escape(problem)}", highlight=False)
        if not problems:
            out.print("No problems found.")
    if problems:
        raise typer.Exit(code=1)


def main() -> None:
    """Entry point."""
    app()


if __name__ == "__main__":
    main()
