"""`playbook ingest`, `push` and `forget`: transcripts into the database, a developer's into the team's bucket,
and a contributor's out of both."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from flows.cli._options import DbOpt, FormatChoice, WaitOpt, sources, workspace
from flows.cli._render import err, escape, ingest_bars, out, print_json, render_ingest

app = typer.Typer()


@app.command("ingest")
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
    from flows.run.ingest import ingest_command

    ws = workspace(db, wait_s=wait)
    with ingest_bars() as progress:
        summary = ingest_command(
            ws, sources(paths) or ws.settings.transcripts, None if fmt == "auto" else fmt, progress
        )
    if as_json:
        print_json(summary.to_dict())
    else:
        render_ingest(summary)
    if summary.nothing_readable:
        raise typer.Exit(code=1)


@app.command("push")
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
    from flows.team import push_command

    summary = push_command(workspace(db, wait_s=wait), url, [p.expanduser() for p in paths or []], contributor)
    if as_json:
        print_json(summary.model_dump())
        return
    out.print(
        f"Pushed {len(summary.pushed)} file{'s' * (len(summary.pushed) != 1)} to {escape(url)}/"
        f"{escape(summary.contributor)}/ ({summary.unchanged} unchanged); removed before sending: {summary.secrets}"
        f" secrets, {summary.personal} personal-data spans.",
        highlight=False,
    )
    for path, why in summary.failed.items():
        err.print(f"[yellow]Not pushed[/yellow] {escape(path)}: {escape(why)}", highlight=False)
    for path, n in summary.left_out.items():
        err.print(
            f"[yellow]Left out[/yellow] {n} record(s) of {escape(path)}: nested deeper than any reader goes.",
            highlight=False,
        )


@app.command("forget")
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
    from flows.team import forget_command

    ws = workspace(db, wait_s=wait)
    confirm = None if yes else (lambda: typer.confirm(f"Delete everything of contributor {contributor!r}?"))
    done = forget_command(ws, contributor, confirm)
    if done is None:
        raise typer.Exit(code=1)
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
