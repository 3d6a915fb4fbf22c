"""`playbook hook`: deliver lessons through Claude Code's hooks, and record what each session got."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from flows.cli._options import DbOpt, JsonOpt, PlaybookOpt, workspace
from flows.cli._render import render_guards, render_hook

app = typer.Typer(
    name="hook",
    help="Claude Code's hooks: a session gets its project's lessons when it starts, when a prompt calls them up and"
    " before a command they are about; what it got is recorded."
    "\n\nExample: [bold]playbook hook install[/bold]",
    no_args_is_help=True,
)

ScopeOpt = Annotated[
    Literal["project", "user"],
    typer.Option("--scope", help="project: ./.claude/settings.json; user: ~/.claude/settings.json."),
]


def _run(event: str, db: Path | None, digest: bool = False) -> None:
    from flows.context import Database
    from flows.delivery.hook import run_hook

    # With --db (as `hook install` writes it) no settings are read: the session's folder is not ours to parse.
    printed = run_hook(event, Database(path=db) if db else workspace(None).database(), sys.stdin.read(), digest=digest)
    if printed:
        sys.stdout.write(printed + "\n")


@app.command("session-start")
def session_start_cmd(
    db: DbOpt = None,
    digest: Annotated[bool, typer.Option(help="Give each playbook's digest (the prompt hook gives the rest).")] = False,
) -> None:
    """Read the SessionStart hook's JSON on stdin and print the project's playbook as `additionalContext`;
    append what the session got (and what the holdout left out) to the exposure ledger. Never blocks a session:
    no database is opened, and anything slow or wrong ends it with no output and exit 0.

    Example: [bold]echo '{"session_id": "abc", "cwd": "/src/app"}' | playbook hook session-start[/bold]
    """
    _run("session-start", db, digest)


@app.command("user-prompt-submit")
def user_prompt_submit_cmd(db: DbOpt = None) -> None:
    """Read the UserPromptSubmit hook's JSON on stdin and print the entries the prompt calls up (BM25 over their
    text and triggers, within a budget) as `additionalContext`; recorded like SessionStart.

    Example: [bold]echo '{"session_id": "abc", "cwd": "/src/app", "prompt": "run the tests"}' | playbook hook
    user-prompt-submit[/bold]
    """
    _run("user-prompt-submit", db)


@app.command("pre-tool-use")
def pre_tool_use_cmd(db: DbOpt = None) -> None:
    """Read the PreToolUse hook's JSON on stdin (a `Bash` call) and print the lesson of each guard the command sets
    off as `additionalContext`, or `permissionDecision: "deny"` for a rule made hard in `playbook review --hard`.

    Example: [bold]echo '{"session_id": "abc", "cwd": "/src/app", "tool_name": "Bash", "tool_input": {"command":
    "npm install"}}' | playbook hook pre-tool-use[/bold]
    """
    _run("pre-tool-use", db)


@app.command("guards")
def guards_cmd(db: DbOpt = None, playbook: PlaybookOpt = None, as_json: JsonOpt = False) -> None:
    """List the guards of a playbook: each command lesson as the PreToolUse hook checks it (the command that sets it
    off, and whether it refuses the call or adds the lesson).

    Example: [bold]playbook hook guards[/bold]
    """
    from flows.delivery.hook import playbook_guards

    ws = workspace(db, playbook)
    render_guards(playbook_guards(ws, ws.playbook), as_json)


@app.command("install")
def install_cmd(
    scope: ScopeOpt = "project",
    project: Annotated[Path, typer.Option(help="The project whose settings to change (scope project).")] = Path("."),
    db: DbOpt = None,
) -> None:
    """Add the hooks (SessionStart, UserPromptSubmit, PreToolUse on Bash) to `.claude/settings.json` (the project's
    or the user's), beside any hooks already there, and write the snapshot they read; `playbook hook uninstall`
    takes them out again.

    Example: [bold]playbook hook install --scope user[/bold]
    """
    from flows.delivery.hook import install_hook

    render_hook(install_hook(workspace(db), scope, project.resolve()))


@app.command("uninstall")
def uninstall_cmd(
    scope: ScopeOpt = "project",
    project: Annotated[Path, typer.Option(help="The project whose settings to change (scope project).")] = Path("."),
) -> None:
    """Take playbook's hooks out of `.claude/settings.json`; every other setting and hook stays.

    Example: [bold]playbook hook uninstall --scope user[/bold]
    """
    from flows.delivery.hook import uninstall_hook

    render_hook(uninstall_hook(scope, project.resolve()))
