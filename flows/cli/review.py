"""`playbook review`: the changes awaiting approval and the entries the screen holds, and deciding them."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from flows.cli._options import DbOpt, JsonOpt, PlaybookOpt, WaitOpt, workspace
from flows.cli._render import err, escape, out, print_json, render_changes, render_held, render_sources

if TYPE_CHECKING:
    from core.review import ReviewChange

app = typer.Typer()


@app.command("review")
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
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation at a terminal.")] = False,
    release: Annotated[
        str | None,
        typer.Option(
            "--release", help="Export these held entries anyway, as they read now (entry ids, comma-separated)."
        ),
    ] = None,
    hard: Annotated[
        str | None,
        typer.Option(
            "--hard",
            help="Make these entries' guards hard rules: the failing command they name is refused, with the lesson"
            " as the reason (entry ids, comma-separated).",
        ),
    ] = None,
    soft: Annotated[
        str | None,
        typer.Option("--soft", help="Make hard rules soft again: the lesson is added to the context (entry ids)."),
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
    as they read now; a later change of their text is screened again. `--hard ID,...` makes a command lesson's
    guard refuse the command it names (Claude Code's PreToolUse hook); `--soft ID,...` undoes it.

    Example: [bold]playbook review --reject 2 --approve-all[/bold]
    """
    from flows.delivery.review import Decision, harden, release_held, review

    ws = workspace(db, playbook, wait_s=wait)
    if hard is not None or soft is not None:
        chosen = hard if hard is not None else soft or ""
        done = harden(
            ws, ws.playbook, [n.strip() for n in chosen.split(",") if n.strip()], hard is not None, _reviewer()
        )
        if as_json:
            print_json({"rules": [d.model_dump() for d in done]})
            return
        for d in done:
            how = "refuses the command it names" if d.hard and d.refuses else "adds the lesson to the context"
            out.print(f"{escape(d.name)}: its guard now {how}: {escape(d.text)}", highlight=False)
        return
    if release is not None:
        freed = release_held(ws, ws.playbook, [n.strip() for n in release.split(",") if n.strip()], _reviewer())
        if as_json:
            print_json({"released": freed})
            return
        for h in freed:
            out.print(f"Released {escape(h.name)} ({', '.join(x.rule for x in h.holds)}): {escape(h.text)}")
        return
    asking = interactive or (sys.stdin.isatty() and not (approve_all or reject or reject_all or as_json))
    decided = approve_all or reject_all or reject is not None
    decision = Decision(approve_all=approve_all, reject=reject, reject_all=reject_all)

    def confirmed(changes: list[ReviewChange]) -> set[int] | None:
        rejected = decision.rejected(changes)
        if yes or not sys.stdin.isatty():
            return rejected
        question = f"Approve {len(changes) - len(rejected)} and reject {len(rejected)} change(s)?"
        return rejected if typer.confirm(question) else None

    outcome = review(ws, ws.playbook, _ask if asking else confirmed if decided else None, _reviewer())
    if not outcome.decided:
        if as_json:
            print_json(
                {
                    "approved_version": outcome.approved_version,
                    "newest_version": outcome.newest_version,
                    "pending": outcome.pending,
                    "held": outcome.held,
                    "outdated": outcome.outdated,
                    "held_ids": outcome.held_ids,
                    "reported": outcome.reported,
                }
            )
            return
        render_held(outcome.held)
        for name, why in sorted(outcome.outdated.items()):
            err.print(f"[yellow]held:[/yellow] {escape(name)}: {escape(why)} (`playbook revalidate`)", highlight=False)
        if outcome.held_ids:
            n = len(outcome.held_ids)
            err.print(
                f"[yellow]Warning:[/yellow] {n} entr{'y' if n == 1 else 'ies'} held, never delivered: an older version"
                " stored an id playbook never makes (it may carry markup or commands); `playbook review --json` lists"
                " them (`held_ids`).",
                highlight=False,
            )
        for name in outcome.reported:
            err.print(
                f"[yellow]kept:[/yellow] {escape(name)}: only agents' reports (`playbook mcp`) would prune it; it stays"
                f" until you decide (`playbook retire {escape(name)}` removes it).",
                highlight=False,
            )
        if not outcome.required:
            err.print(f'Note: playbook `{ws.playbook}` has review = "auto": every version is published.')
        if not outcome.pending:
            out.print(f"Nothing to review: version {outcome.newest_version} is what is published.", highlight=False)
        elif decided or asking:
            out.print("Nothing was changed.")
        else:
            render_changes(outcome.pending)
            if outcome.required:
                said = (
                    f"{len(outcome.pending)} change(s) since approved version {outcome.approved_version} await review:"
                    " `playbook review --approve-all`, `--reject N,...`, or `-i` to decide one by one."
                )
            else:  # published already: reviewing them is looking back, and `--reject` undoes them in a new version
                said = (
                    f"{len(outcome.pending)} change(s) since the last review (version {outcome.approved_version}), all"
                    " published already; `--reject N,...` undoes one in a new version."
                )
            out.print(said, highlight=False)
        return
    if as_json:
        print_json({"approved_version": outcome.version, "approved": outcome.approved, "rejected": outcome.rejected})
        return
    out.print(
        f"Approved version {outcome.version}: {outcome.approved} change(s) approved, {len(outcome.rejected)} rejected"
        + (f" (undone in version {outcome.version})" if outcome.rejected else "")
        + ". Exports and `playbook publish` use it from now on.",
        highlight=False,
    )


def _reviewer() -> str | None:
    return os.environ.get("USER")


def _ask(changes: list[ReviewChange]) -> set[int] | None:
    """Change by change at the terminal, then one confirmation; None when the reviewer says no."""
    rejected = set()
    for c in changes:
        render_changes([c])
        answer = typer.prompt("  approve or reject? [a/r]", default="a").strip().lower()
        if answer.startswith("r"):
            rejected.add(c.number)
    if not typer.confirm(f"Approve {len(changes) - len(rejected)} and reject {len(rejected)} change(s)?"):
        return None
    return rejected


@app.command("revalidate")
def revalidate_cmd(
    as_json: JsonOpt = False, db: DbOpt = None, wait: WaitOpt = None, playbook: PlaybookOpt = None
) -> None:
    """Check now what each entry rests on in its project (the files, folders, declared scripts and own programs
    its lesson names) against the project's folder on this machine, and record it (with the commit, in a git
    repository). An entry whose source is gone is held from every export and hook until it is back.

    Example: [bold]playbook revalidate[/bold]
    """
    from flows.delivery.review import revalidate

    ws = workspace(db, playbook, wait_s=wait)
    found = revalidate(ws, ws.playbook)
    if as_json:
        print_json([s.model_dump() for s in found])
        return
    if not found:
        out.print(f"No entry of playbook `{ws.playbook}` cites a file, folder or script.", highlight=False)
        return
    render_sources({s.entry_id: s for s in found})
    held = sum(s.status == "held" for s in found)
    err.print(
        f"{held} of {len(found)} entries held: what they rest on is gone; they come back when it is.", highlight=False
    )
