"""`playbook sessions` and `retry`: the sessions ingested, those a playbook could not process, and letting them be
tried again."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli._options import DbOpt, PlaybookOpt, ProjectOpt, SinceOpt, WaitOpt, workspace
from flows.cli._render import escape, new_table, out, print_json, print_rows

app = typer.Typer()


@app.command("sessions")
def sessions_cmd(
    project: ProjectOpt = None,
    since: SinceOpt = None,
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
    from flows.run.sessions import failed_of, sessions_of

    ws = workspace(db, playbook, wait_s=wait)
    if failed:
        broken = failed_of(ws, ws.playbook)
        if as_json:
            print_json(broken)
            return
        grid = new_table("session", "status", "attempts", "last reason")
        for b in broken:
            grid.add_row(escape(b.session_id), b.status, str(b.attempts), escape(b.reason or ""))
        out.print(grid if broken else "No failed sessions.")
        return
    rows = sessions_of(ws, project=project, since=since, limit=limit)
    if as_json:
        print_json(rows)
        return
    print_rows(
        ("session", "project", "format", "started", "msgs", "prompts", "tools", "errors"),
        [
            (
                r.session_id[:36],
                r.project or "",
                r.format,
                r.started_at.strftime("%Y-%m-%d %H:%M") if r.started_at else "",
                str(r.n_messages),
                str(r.n_user_prompts),
                str(r.n_tool_calls),
                str(r.n_tool_errors),
            )
            for r in rows
        ],
    )


@app.command("retry")
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
    from flows.run.sessions import retry

    ws = workspace(db, playbook, wait_s=wait)
    n = retry(ws, ws.playbook, list(sessions or []), every=every)
    out.print(f"{n} session(s) of playbook `{ws.playbook}` will be tried again by the next run.", highlight=False)
