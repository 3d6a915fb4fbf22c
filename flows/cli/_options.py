"""The options the commands share, and the workspace a command builds from them.

The options are `Annotated` aliases; a command builds its workspace once and passes it down."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

if TYPE_CHECKING:
    from flows.workspace import Workspace

__all__ = [
    "AssumeOpt",
    "DbOpt",
    "DryRunOpt",
    "FormatChoice",
    "JsonOpt",
    "LlmOpt",
    "MaxCostOpt",
    "PlaybookOpt",
    "ProjectOpt",
    "SinceOpt",
    "WaitOpt",
    "provider_name",
    "sources",
    "workspace",
]

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
ProjectOpt = Annotated[str | None, typer.Option(help="Only sessions of this project.")]
SinceOpt = Annotated[datetime | None, typer.Option(help="Only sessions started on or after this date.")]
FormatChoice = Literal["auto", "claude-code", "codex", "messages", "memory"]


def provider_name(value: str | None) -> str | None:
    """A `--llm` that names no provider is a usage error (exit 2), with the closest name."""
    if value is None:
        return None
    from flows.config import check_provider_name

    try:
        return check_provider_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


LlmOpt = Annotated[
    str | None,
    typer.Option(
        "--llm",
        callback=provider_name,
        help="anthropic, batch, claude-cli, codex-cli (subscriptions), openai (an OpenAI-compatible server),"
        " heuristic (the rules miner), replay:FILE or auto (a key, else a logged-in claude, else a logged-in"
        " codex, else openai_base_url, else the rules).",
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print what would be sent and its estimated cost; call no model.")
]
MaxCostOpt = Annotated[
    float | None, typer.Option("--max-cost", help="Refuse to start when the estimated cost (USD) is above this.")
]
AssumeOpt = Annotated[int, typer.Option("--assume-output", help="Output tokens assumed per call for the estimate.")]


def workspace(db: Path | None = None, playbook: str | None = None, warn: bool = True, **extra: Any) -> Workspace:
    """The workspace of the settings with the flags of the current command applied: built once per command, then
    passed down.

    `warn`: one line on stderr for each settings file whose keys were ignored (it is not trusted).
    """
    from flows.cli._render import err, escape
    from flows.config import load_settings
    from flows.workspace import Workspace

    found = load_settings(db=db, playbook=playbook, **extra)
    for notice in (f.notice() for f in found.config_files if warn):
        if notice:
            err.print(f"[yellow]Warning:[/yellow] {escape(notice)}", highlight=False)
    return Workspace.of(found)


def sources(given: list[str] | None) -> list[Path | str]:
    """Command-line transcript sources: object-storage URLs as they are, anything else a path."""
    from core.io.objects import is_url

    return [g if is_url(g) else Path(g).expanduser() for g in given or []]
