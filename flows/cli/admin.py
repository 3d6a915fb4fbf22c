"""`playbook doctor` (what it would use here, and what is wrong) and `playbook serve` (the schedules)."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli._options import DbOpt, WaitOpt, settings
from flows.cli._render import err, escape, out, print_json

app = typer.Typer()


@app.command("serve")
def serve_cmd() -> None:
    """Serve the `nightly` (03:00 UTC) and `backfill` deployments of prefect.yaml from this process.

    Needs a running Prefect server: `prefect server start`, then PREFECT_API_URL=http://127.0.0.1:4200/api.

    Example: [bold]PREFECT_API_URL=http://127.0.0.1:4200/api playbook serve[/bold]
    """
    from flows.deployments import serve_all

    serve_all()


@app.command("doctor")
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
    from flows.database import doctor

    cfg = settings(db, wait_s=wait)
    found = doctor(cfg)
    if as_json:
        print_json(found)
    else:
        where = "found on this machine" if found.transcripts.defaults else "configured"
        out.print(f"[bold]Transcripts[/bold] ({where})", highlight=False)
        for f in found.transcripts.folders:
            files = ", ".join(f"{k} {n}" for k, n in sorted(f.files.items())) or "no transcript files"
            sessions = ", ".join(f"{k} {n}" for k, n in sorted(f.sessions.items())) or "none"
            out.print(f"  {escape(f.path)}: files {escape(files)}; sessions {escape(sessions)}", highlight=False)
        if not found.transcripts.folders:
            out.print("  none found", highlight=False)
        view = found.database.overview
        state = (
            f"schema {view.schema_version}, {view.sessions} sessions, playbooks "
            + (", ".join(f"{k} (version {v})" for k, v in view.playbooks.items()) or "none")
            if view is not None
            else ("exists" if found.database.exists else "not created yet; `playbook ingest` creates it")
        )
        out.print(f"[bold]Database[/bold] {escape(str(found.database.path))}: {escape(state)}", highlight=False)
        out.print(
            f"[bold]Provider[/bold] auto picks {found.provider.auto_picks}: {found.provider.why}", highlight=False
        )
        out.print(f"[bold]Prefect[/bold] {escape(found.prefect_api)}", highlight=False)
        for problem in found.problems:
            err.print(f"[red]Problem:[/red] {escape(problem)}", highlight=False)
        if not found.problems:
            out.print("No problems found.")
    if found.problems:
        raise typer.Exit(code=1)
