"""`playbook hook`: deliver the playbook through Claude Code's SessionStart hook, and record what each session got."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from flows.cli._options import DbOpt, workspace
from flows.cli._render import render_hook

app = typer.Typer(
    name="hook",
    help="Claude Code's SessionStart hook: each session gets its project's playbook, and what it got is recorded."
    "\n\nExample: [bold]playbook hook install[/bold]",
    no_args_is_help=True,
)

# The hook's own work (read a small file, hash, append a line) takes milliseconds; past this it gives up in silence
# so that no session ever waits on playbook.
_WORK_LIMIT_S = 0.5
ScopeOpt = Annotated[
    Literal["project", "user"],
    typer.Option("--scope", help="project: ./.claude/settings.json; user: ~/.claude/settings.json."),
]


class _TooSlow(Exception):
    pass


def _give_up(signum: int, frame: object) -> None:
    raise _TooSlow


@app.command("session-start")
def session_start_cmd(db: DbOpt = None) -> None:
    """Read the SessionStart hook's JSON on stdin and print the project's playbook as `additionalContext`;
    append what the session got (and what the holdout left out) to the exposure ledger. Never blocks a session:
    no database is opened, and anything slow or wrong ends it with no output and exit 0.

    Example: [bold]echo '{"session_id": "abc", "cwd": "/src/app"}' | playbook hook session-start[/bold]
    """
    from flows.context import Database
    from flows.delivery.hook import session_start

    signal.signal(signal.SIGALRM, _give_up)
    signal.setitimer(signal.ITIMER_REAL, _WORK_LIMIT_S)
    try:
        # With --db (as `hook install` writes it) no settings are read: the session's folder is not ours to parse.
        printed = session_start(Database(path=db) if db else workspace(None).database(), sys.stdin.read())
    except (_TooSlow, Exception):  # a session must start whatever happened here
        printed = ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if printed:
        sys.stdout.write(printed + "\n")


@app.command("install")
def install_cmd(
    scope: ScopeOpt = "project",
    project: Annotated[Path, typer.Option(help="The project whose settings to change (scope project).")] = Path("."),
    db: DbOpt = None,
) -> None:
    """Add the SessionStart hook to `.claude/settings.json` (the project's or the user's), beside any hooks already
    there, and write the snapshot it reads; `playbook hook uninstall` takes it out again.

    Example: [bold]playbook hook install --scope user[/bold]
    """
    from flows.delivery.hook import install_hook

    render_hook(install_hook(workspace(db), scope, project.resolve()))


@app.command("uninstall")
def uninstall_cmd(
    scope: ScopeOpt = "project",
    project: Annotated[Path, typer.Option(help="The project whose settings to change (scope project).")] = Path("."),
) -> None:
    """Take playbook's SessionStart hook out of `.claude/settings.json`; every other setting and hook stays.

    Example: [bold]playbook hook uninstall --scope user[/bold]
    """
    from flows.delivery.hook import uninstall_hook

    render_hook(uninstall_hook(scope, project.resolve()))
