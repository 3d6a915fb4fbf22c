"""`playbook new`, `import`, `show`, `history`, `diff`, `revert` and `stats`: a playbook and its versions."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

import typer

from flows.cli._options import DbOpt, JsonOpt, PlaybookOpt, WaitOpt, workspace
from flows.cli._render import (
    err,
    escape,
    new_table,
    note,
    out,
    print_json,
    print_marked,
    print_rows,
    render_sources,
)

app = typer.Typer()
ShowFormat = Literal["text", "json", "markdown"]


@app.command("import")
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
    from flows.insight.authoring import import_playbook

    ws = workspace(db, playbook, wait_s=wait)
    done = import_playbook(ws, ws.playbook, file, sections=sections, replace=replace, merge=merge)
    out.print(
        f"Imported {done.entries} entries from {file} as version {done.version} of playbook `{ws.playbook}`"
        f" ({done.how}).",
        highlight=False,
    )
    for name, found in done.stripped.items():
        err.print(f"Note: removed invisible characters from {escape(name)}: {found}.", highlight=False)


@app.command("new")
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
    from flows.insight.authoring import create_playbook

    create_playbook(workspace(db, wait_s=wait), name, sections)
    out.print(f"Created playbook `{name}` (version 0, empty).", highlight=False)


@app.command("show")
def show_cmd(
    version: Annotated[int | None, typer.Option(help="Version to show (default: newest).")] = None,
    fmt: Annotated[
        Literal["text", "json", "markdown"],
        typer.Option("--format", help="text, json (seeds' playbook.json) or markdown."),
    ] = "text",
    sources: Annotated[
        bool, typer.Option("--sources", help="Also list what each entry rests on in its project, checked now.")
    ] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Show a playbook version.

    Example: [bold]playbook show --version 12 --format json[/bold]
    """
    from flows.insight.playbooks import show_playbook

    ws = workspace(db, playbook, wait_s=wait)
    shown = show_playbook(ws, ws.playbook, version, sources=sources)
    for name, found in shown.invisible.items():  # stored before cleaning removed them: exports leave them out
        err.print(
            f"Note: {escape(name)} holds invisible characters ({found}), shown here as escapes; exports remove them.",
            highlight=False,
        )
    ruled = shown.ruled
    if ruled and fmt != "json":  # the seeds' JSON has no place for it; stderr keeps stdout parseable
        err.print(
            f"Note: {len(ruled)} entr{'y' if len(ruled) == 1 else 'ies'} ({', '.join(ruled[:8])}"
            f"{', …' if len(ruled) > 8 else ''}) were written by rules, without a model (the heuristic provider);"
            " `playbook recurate` has a model look at their sessions again.",
            highlight=False,
        )
    sys.stdout.write(shown.text(fmt))
    if sources and fmt != "json":
        render_sources(shown.sources)


@app.command("history")
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
    from flows.insight.playbooks import playbook_history

    ws = workspace(db, playbook, wait_s=wait)
    found = playbook_history(ws, ws.playbook, limit=limit or None, since=since)
    if as_json:
        print_json(found.rows)
        return
    print_rows(
        ("version", "created", "source", "session", "applied", "skipped", "pruned", "entries"),
        [
            (
                str(r.version),
                r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                r.source,
                (r.session_id or (f"{r.sessions} sessions" if r.sessions > 1 else ""))[:20],
                str(r.ops_applied),
                str(r.ops_skipped),
                str(r.pruned),
                str(r.n_entries),
            )
            for r in found.rows
        ],
    )
    if len(found.rows) < found.total:
        note(f"Showing {len(found.rows)} of {found.total} versions; --limit 0 shows all, --since narrows by date.")


@app.command("diff")
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
    from flows.insight.playbooks import diff_playbook

    ws = workspace(db, playbook, wait_s=wait)
    changes = diff_playbook(ws, ws.playbook, v1, v2)
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
        print(f"No differences between versions {v1} and {v2}.")
    for c in changes:
        if c.kind == "added" and c.after:
            print_marked("green", f"+ [{c.name}]", c.after.text)
        elif c.kind == "removed" and c.before:
            print_marked("red", f"- [{c.name}]", c.before.text)
        elif c.before and c.after:
            detail = []
            if c.before.text != c.after.text:
                detail.append(f"text: {c.before.text!r} -> {c.after.text!r}")
            if (c.before.helpful, c.before.harmful) != (c.after.helpful, c.after.harmful):
                detail.append(f"counters: {c.before.helpful}/{c.before.harmful} -> {c.after.helpful}/{c.after.harmful}")
            print_marked("yellow", f"~ [{c.name}]", "; ".join(detail or ["moved"]))


@app.command("revert")
def revert_cmd(
    version: Annotated[int, typer.Argument(help="The version to restore.")],
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Make a new version equal to VERSION (history is never rewritten).

    Example: [bold]playbook revert 12[/bold]
    """
    from flows.insight.authoring import revert_playbook

    ws = workspace(db, playbook, wait_s=wait)
    new = revert_playbook(ws, ws.playbook, version)
    out.print(f"Version {new} of playbook `{ws.playbook}` restores version {version}.")


@app.command("retire")
def retire_cmd(
    entries: Annotated[list[str], typer.Argument(help="The entry ids to retire (as `playbook stale` proposes them).")],
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Retire entries: a new version without them (`playbook revert` brings them back).

    Example: [bold]playbook retire ctx-004 mis-002[/bold]
    """
    from flows.insight.authoring import retire_entries

    ws = workspace(db, playbook, wait_s=wait)
    new = retire_entries(ws, ws.playbook, entries)
    out.print(
        f"Version {new} of playbook `{ws.playbook}` retires {', '.join(entries)}; `playbook revert {new - 1}` brings"
        " them back.",
        highlight=False,
    )


@app.command("stats")
def stats_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOpt = None,
    wait: WaitOpt = None,
    playbook: PlaybookOpt = None,
) -> None:
    """Totals for a playbook: sessions, versions, operations by type and status, prunes, cost.

    Example: [bold]playbook stats --json[/bold]
    """
    from flows.insight.playbooks import playbook_totals

    ws = workspace(db, playbook, wait_s=wait)
    data = playbook_totals(ws, ws.playbook)
    if as_json:
        print_json(data)
        return
    table = new_table(title=f"playbook `{ws.playbook}`", show_header=False, title_justify="left")
    for key, value in data.model_dump(exclude={"operations"}).items():
        table.add_row(key.replace("_", " "), f"{value:.4f}" if isinstance(value, float) else str(value))
    table.add_row("operations", ", ".join(f"{o.type} {o.status} {o.n}" for o in data.operations) or "none")
    out.print(table)
