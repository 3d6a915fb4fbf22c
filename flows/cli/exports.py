"""`playbook export` and `publish`: one version to standard output or a file, and every export target (through a
review branch with --git)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from flows.cli._options import DbOpt, PlaybookOpt, WaitOpt, workspace
from flows.cli._render import err, escape, out, print_json, render_published

app = typer.Typer()
ExportFormat = Literal["json", "markdown", "claude-md"]


@app.command("export")
def export_cmd(
    fmt: Annotated[
        ExportFormat, typer.Option("--format", help="json (seeds' playbook.json), markdown, or claude-md (a block).")
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
    from flows.delivery.exports import export_to
    from flows.insight.database import snapshot

    ws = workspace(db, playbook, wait_s=wait)
    if parquet is not None:
        written = snapshot(ws, parquet)
        out.print(f"Wrote {len(written)} Parquet files to {parquet}.")
        return
    done = export_to(ws, ws.playbook, fmt, out_file, version=version, whole=whole, sources=sources)
    if done.note:
        err.print(f"[yellow]Note:[/yellow] {escape(done.note)}", highlight=False)
    if done.text is not None:
        sys.stdout.write(done.text)
    elif done.empty:
        where = "" if out_file is None else f"; {out_file} was not created"
        err.print(f"The playbook has no entries: nothing for agents to read{where}.", highlight=False)
    else:
        err.print(f"Wrote {out_file}")


@app.command("publish")
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

    Targets are set per playbook in playbook.toml, `\\[playbook_settings.NAME] targets = [{kind, path or repo}]`.
    Shared files get a marked block (hand-written text is kept); files playbook owns are written whole, and a
    file it did not write is refused. Exits 3 when a target was refused. Where no playbook has a target (a
    fresh set-up), the playbook's own files in `out_dir` are written, and one line says how to add targets.

    With --git, the repository targets go into the team repository instead, as a commit on --branch whose
    message sums up the versions, operations and sessions since the last publish (a playbook without
    targets publishes CLAUDE.md and AGENTS.md); the checkout you pass is never changed, and nothing is
    committed when nothing changed.

    Example: [bold]playbook publish --git ~/src/team-repo[/bold]
    """
    from flows.delivery.publish import publish_configured, publish_to_git

    ws = workspace(db, playbook, wait_s=wait)  # a -p name is checked with the settings, as every command's is
    names = [ws.playbook] if playbook else ws.playbooks
    if git_repo is None:
        publication = publish_configured(ws, names)
        results = publication.files
        if as_json:
            print_json(results)
        else:
            render_published(results)
        if publication.note:
            err.print(escape(publication.note), highlight=False)  # its TOML table name is no markup
    else:
        done = publish_to_git(ws, names, git_repo, branch)
        results = done.files
        if as_json:
            print_json(done)
        else:
            render_published(results)
            where = f", pushed to {done.pushed_to}" if done.pushed_to else " (no remote: not pushed)"
            out.print(
                f"Committed {done.commit[:10]} on {done.branch}{where}."
                if done.commit
                else "Nothing changed since the last publish; nothing committed.",
                highlight=False,
            )
    if any(r.status == "refused" for r in results):
        raise typer.Exit(code=3)


@app.command("mcp")
def mcp_cmd(db: DbOpt = None) -> None:
    """Serve the lessons to an agent over MCP (stdio): `search_lessons`, `get_lesson` and `report_outcome`.
    Read-only: it answers from the hooks' snapshot (written by every nightly, `publish` and `hook install`) and
    never opens the database; outcomes go to a feedback file the next `ingest` merges.

    Claude Code: `claude mcp add playbook -- playbook mcp`; Codex (`~/.codex/config.toml`):
    `\\[mcp_servers.playbook]` with `command = "playbook"` and `args = ["mcp"]`.

    Example: [bold]playbook mcp --db ~/playbook/playbook.duckdb[/bold]
    """
    from flows.delivery.lessons_server import serve

    # With --db (as the plugin and `claude mcp add` write it) no settings are read: the folder is not ours to parse.
    # Without it, a note is redacted as the settings' redactor will redact it in the store (personal patterns too).
    if db:
        serve(db)
    else:
        ws = workspace(None)
        serve(ws.database().path, ws.redactor)
