"""`playbook doctor` (what it would use here, and what is wrong), `playbook trust` (the settings files the user
trusts) and `playbook serve` (the schedules)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flows.cli._options import DbOpt, JsonOpt, WaitOpt, workspace
from flows.cli._render import err, escape, out, print_json

if TYPE_CHECKING:
    from core.trust import ConfigFile

app = typer.Typer()


@app.command("serve")
def serve_cmd() -> None:
    """Serve the `nightly` (03:00 UTC) and `backfill` deployments of prefect.yaml from this process.

    Needs a running Prefect server: `prefect server start`, then PREFECT_API_URL=http://127.0.0.1:4200/api.

    Example: [bold]PREFECT_API_URL=http://127.0.0.1:4200/api playbook serve[/bold]
    """
    from flows.run.deployments import serve_all

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
    from flows.insight.doctor import doctor

    ws = workspace(db, wait_s=wait, warn=False)  # doctor says it in its own lines
    found = doctor(ws)
    if as_json:
        print_json(found)
    else:
        out.print("[bold]Settings files[/bold]", highlight=False)
        for read in found.config:
            out.print(f"  {escape(_config_line(read))}", highlight=False)
        if not found.config:
            out.print("  none (flags, environment and defaults only)", highlight=False)
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


def _config_line(found: ConfigFile) -> str:
    notice = found.notice()
    if notice:
        return notice
    if found.standing == "own":
        return f"`{found.path}`: your own; every key applies."
    if found.standing == "trusted":
        return f"`{found.path}`: trusted; every key applies."
    return f"`{found.path}`: not trusted, and it sets only harmless keys, which apply."


@app.command("trust")
def trust_cmd(
    file: Annotated[
        Path | None,
        typer.Argument(help="The settings file (default: the one PLAYBOOK_CONFIG names, else ./playbook.toml)."),
    ] = None,
    list_all: Annotated[
        bool, typer.Option("--list", help="List the trusted files and whether each still holds what was trusted.")
    ] = False,
    revoke_it: Annotated[bool, typer.Option("--revoke", "--untrust", help="Stop trusting FILE.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Trust a settings file as it is now: every key of it applies (executables, base URLs, storage, transcript
    folders, export targets, templates, patterns), until its content changes.

    Until then a playbook.toml found here (or named by PLAYBOOK_CONFIG) may set only harmless keys (budgets,
    epoch sizes, thresholds, timeouts, playbook names); your own ~/.config/playbook/config.toml, the environment
    and flags are always trusted. The record (path and SHA-256) goes to ~/.config/playbook/trusted.json.

    Example: [bold]playbook trust playbook.toml[/bold]  (or [bold]playbook trust --list[/bold])
    """
    from flows.trust import revoke, trust, trusted_files

    if list_all and (revoke_it or file is not None):
        raise typer.BadParameter("`--list` takes no FILE and no `--revoke`.")
    if list_all:
        listed = trusted_files()
        if as_json:
            print_json(listed)
            return
        for t in listed:
            when = t.trusted_at.astimezone().strftime("%Y-%m-%d %H:%M")
            out.print(f"{escape(str(t.path))}  {t.state}  sha256 {t.sha256[:12]}  trusted {when}", highlight=False)
        if not listed:
            out.print("No file is trusted; trust one with `playbook trust FILE`.", highlight=False)
        return
    if revoke_it:
        revoked = revoke(file)
        if as_json:
            print_json(revoked)
        elif revoked.was_trusted:
            out.print(
                f"`{escape(str(revoked.path))}` is no longer trusted; only its harmless keys apply.", highlight=False
            )
        else:
            out.print(f"`{escape(str(revoked.path))}` was not trusted; nothing changed.", highlight=False)
        return
    done = trust(file)
    if as_json:
        print_json(done)
        return
    unlocked = ", ".join(f"`{k}`" for k in done.unlocked)
    what = f"its {unlocked} apply now too" if unlocked else "it sets only harmless keys, which applied already"
    out.print(
        f"Trusted `{escape(str(done.path))}` (sha256 {done.record.sha256[:12]}, in `{escape(str(done.store))}`):"
        f" {escape(what)}; any change to it untrusts it.",
        highlight=False,
    )
