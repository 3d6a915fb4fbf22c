"""How the commands print: the consoles, untrusted text escaped, tables, JSON for scripts, and the rendering of
the library's typed results (ingest summaries, run summaries, review changes, held entries, an entry's life)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from core.invisible import visible

if TYPE_CHECKING:  # the commands start without DuckDB or the store loaded (`--help` in ~0.3 s)
    from rich.console import Console
    from rich.table import Table

    from core.guards import Guard
    from core.impact import EntryImpact
    from core.playbook_screen import Screened
    from core.review import ReviewChange
    from core.runsummary import RunSummary
    from core.store.ingest import IngestSummary
    from core.store.published import TriggerRecurrence
    from flows.delivery.exports import Published
    from flows.delivery.hook import HookInstall
    from flows.delivery.sources import Source

__all__ = [
    "describe_recurrence",
    "err",
    "escape",
    "ingest_bars",
    "new_table",
    "note",
    "out",
    "print_json",
    "print_marked",
    "print_rows",
    "print_styled",
    "progress_bars",
    "render_changes",
    "render_guards",
    "render_held",
    "render_hook",
    "render_impact",
    "render_ingest",
    "render_life",
    "render_published",
    "render_run",
    "render_sources",
]


class _Console:
    """A Rich console made on first use: Rich costs a command ~20 ms of CPU to load, and a read command whose output
    is plain lines in a pipe (`history`, `sessions`, `sql`, `show`) never needs it."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    @property
    def started(self) -> bool:
        """Whether Rich was loaded for it."""
        return self._console is not None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return getattr(self._console, name)


# User text (entries, transcripts) is printed as it is: no emoji codes such as `:cd:`, no markup from it.
# Piped into a file or a log, Rich would squeeze tables into 80 columns; there they get 160.
_PIPED_WIDTH = 160
out = cast("Console", _Console(soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else _PIPED_WIDTH))
err = cast("Console", _Console(stderr=True, soft_wrap=True, emoji=False))


def escape(text: str) -> str:
    """Untrusted text (ids, project names, entry texts, reasons) as printed: rich markup escaped, and control,
    escape, bidi and other invisible characters written as their escapes (`core.invisible`), so a transcript's
    `sessionId` cannot rewrite the terminal or hide what a reviewer reads."""
    from rich.markup import escape as markup_escape

    return markup_escape(visible(text))


def note(text: str) -> None:
    """A line of our own on standard error, as `err.print(text, highlight=False)` prints it (plain words: no markup,
    no untrusted text), without loading Rich."""
    sys.stderr.write(text + "\n")


def new_table(*columns: str, **options: Any) -> Table:
    """A table whose cells wrap instead of being cut with an ellipsis when the terminal is narrow."""
    from rich.table import Table

    grid = Table(**options)
    for name in columns:
        grid.add_column(name, overflow="fold")
    return grid


# A terminal gets Rich's own table (styled) up to this many rows; past it, or in a pipe, the lines are drawn here.
RICH_ROWS = 200


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[str]], *, title: str = "", header: bool = True) -> None:
    """A table of plain cells (untrusted text is fine: no markup is read from it, invisible characters are escaped),
    exactly as `new_table` draws it. Drawn here, a line at a time, when every line fits the console and no cell
    holds a line break or a tab: Rich measures and wraps each cell, 4 s of CPU for 10,000 rows. Otherwise, and on
    a terminal for short tables (its styles), by Rich, which folds cells to fit.

    Args:
        title: a line above the table, left-justified (none when empty).
        header: False: no row of column names.
    """
    heads = [_shown(c) for c in columns]
    cells: list[Sequence[str]] = []
    simple: list[bool] = []  # per row: every cell printable ASCII (`_ascii_plain`)
    title = _shown(title)
    widths = [_width(c) if header else 0 for c in heads]  # Rich measures the names only when it shows them
    printable = True  # every cell printed by Rich as it is (`_plain`)
    for row in rows:
        simple.append(_ascii_plain("".join(row)))
        if simple[-1]:  # most rows: every cell shown as it is, as wide as it is long
            cells.append(row)
            for i, cell in enumerate(row):
                if len(cell) > widths[i]:
                    widths[i] = len(cell)
            continue
        shown = [_shown(c) for c in row]
        cells.append(shown)
        for i, cell in enumerate(shown):
            widths[i] = max(widths[i], _width(cell))
            printable = printable and _plain(cell)
    printable = printable and all(_plain(h) for h in heads) and _plain(title)
    width, encoding, terminal = _stdout()
    drawn = sum(widths) + 3 * len(widths) + 1
    plain = (
        printable
        and drawn <= width
        and _width(title) <= drawn  # a longer title is wrapped by Rich
        and (header or bool(cells))
        and encoding.lower().startswith("utf")
        and not (terminal and len(cells) <= RICH_ROWS)
    )
    if not plain:
        from rich.markup import escape as markup_escape

        options: dict[str, Any] = {"title": markup_escape(title), "title_justify": "left"} if title else {}
        table = new_table(*(markup_escape(h) for h in heads), show_header=header, **options)
        for row in cells:
            table.add_row(*(markup_escape(cell) for cell in row))
        out.print(table)
        return
    b = _HeavyHead
    bold = ("\x1b[1m", "\x1b[0m") if terminal else ("", "")

    def rule(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    def line(left: str, middle: str, right: str, row: Sequence[str], style: tuple[str, str] = ("", "")) -> str:
        padded = (
            f" {style[0]}{cell}{style[1]}{' ' * (w - _width(cell))} " for cell, w in zip(row, widths, strict=True)
        )
        return left + middle.join(padded) + right

    # a row of printable ASCII cells, each padded to its column's width (`line` for those, in one format)
    body = f"{b.mid_left} " + f" {b.mid_vertical} ".join(f"{{:<{w}}}" for w in widths) + f" {b.mid_right}"
    head = [
        rule(b.top_left, b.top, b.top_divider, b.top_right),
        line(b.head_left, b.head_vertical, b.head_right, heads, bold),
        rule(b.head_row_left, b.head_row_horizontal, b.head_row_cross, b.head_row_right),
    ]
    lines = [
        *([title] if title else []),
        *(head if header else [rule(b.headless_left, b.headless_top, b.headless_divider, b.headless_right)]),
        *(
            body.format(*row) if fast else line(b.mid_left, b.mid_vertical, b.mid_right, row)
            for row, fast in zip(cells, simple, strict=True)
        ),
        rule(b.bottom_left, b.bottom, b.bottom_divider, b.bottom_right),
    ]
    (sys.stdout if isinstance(out, _Console) and not out.started else out.file).write("\n".join(lines) + "\n")


def print_marked(style: str, head: str, text: str) -> None:
    """`head` in `style` (a Rich colour), a space, then `text`; both plain (untrusted text is fine: nothing in it is
    read as markup, invisible characters are escaped). On a terminal through Rich, in colour; into a pipe the very
    line Rich would print there, written without loading Rich."""
    print_styled((style, head), ("", f" {text}"), highlight=False)


def print_styled(*parts: tuple[str, str], highlight: bool = True) -> None:
    """One line of (style, text) parts: `style` a Rich style ("" for none), `text` plain (untrusted text is fine:
    nothing in it is read as markup, invisible characters are escaped). On a terminal through Rich, styled (and
    highlighted unless `highlight` is False); into a pipe the very line Rich would print there, written without
    loading Rich."""
    line = "".join(_shown(text) for _, text in parts)
    lazy = isinstance(out, _Console) and not out.started
    if not lazy or _stdout()[2] or not _plain(line):
        marked = "".join(f"[{style}]{escape(text)}[/{style}]" if style else escape(text) for style, text in parts)
        out.print(marked, highlight=highlight)
        return
    sys.stdout.write(line + "\n")


def _stdout() -> tuple[int, str, bool]:
    """(width, encoding, is a terminal) of `out`, as Rich's console has them; read without loading Rich when
    standard output is not a terminal and nothing forces one (Rich then takes the width it was given and the
    stream's encoding)."""
    if isinstance(out, _Console) and not out.started and not sys.stdout.isatty() and not _FORCED & os.environ.keys():
        return _PIPED_WIDTH, getattr(sys.stdout, "encoding", None) or "utf-8", False
    return out.width, out.encoding, out.is_terminal


def _stderr_terminal() -> bool:
    """Whether `err` writes to a terminal, as Rich's console has it; known without loading Rich when standard error is
    not a terminal and nothing forces one."""
    if isinstance(err, _Console) and not err.started and not sys.stderr.isatty() and not _FORCED & os.environ.keys():
        return False
    return bool(err.is_terminal)


# What makes Rich treat a pipe as a terminal.
_FORCED = {"FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES"}


class _HeavyHead:
    """Rich's `box.HEAVY_HEAD`, the box of its default table, character for character."""

    top_left, top, top_divider, top_right = "┏", "━", "┳", "┓"
    head_left, head_vertical, head_right = "┃", "┃", "┃"
    head_row_left, head_row_horizontal, head_row_cross, head_row_right = "┡", "━", "╇", "┩"
    mid_left, mid_vertical, mid_right = "│", "│", "│"
    bottom_left, bottom, bottom_divider, bottom_right = "└", "─", "┴", "┘"
    # its top without a header row (Rich's `box.SQUARE`, as it draws a headless table)
    headless_left, headless_top, headless_divider, headless_right = "┌", "─", "┬", "┐"


def _plain(text: str) -> bool:
    """Whether Rich prints `text`, markup escaped, as it is: no line break or tab (which it expands), no backslash
    (a trailing one comes out doubled), and no character it counts as taking no column (a lone skin-tone modifier:
    Rich crops a cell to its column's width and drops it)."""
    if not (text.isprintable() and "\\" not in text):
        return False
    if text.isascii():
        return True
    from rich.cells import get_character_cell_size

    return all(get_character_cell_size(ch) > 0 for ch in text)


def _ascii_plain(text: str) -> bool:
    """Printable ASCII without a backslash: shown as it is (`_shown`), printed by Rich as it is (`_plain`), as many
    columns wide as it is long (`_width`)."""
    return text.isascii() and text.isprintable() and "\\" not in text


def _width(cell: str) -> int:
    """The columns `cell` takes on a terminal (an ASCII cell: its length)."""
    if cell.isascii():
        return len(cell)
    from rich.cells import cell_len

    return cell_len(cell)


def _shown(cell: str) -> str:
    """`cell` with its invisible characters escaped (`core.invisible.visible`); printable ASCII, most cells, as it is
    without a pattern run over it."""
    return cell if cell.isascii() and cell.isprintable() else visible(cell)


def _json_default(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def print_json(data: object) -> None:
    """JSON on stdout, nothing else (so it can be piped); typed rows as their fields."""
    sys.stdout.write(json.dumps(data, indent=2, default=_json_default, ensure_ascii=False) + "\n")


# Files read again because their reader changed, named one a line before the rest are counted in one.
REREAD_SHOWN = 20


def render_ingest(summary: IngestSummary) -> None:
    """The ingest summary table, failed files listed with their error."""
    rows = [
        (label, str(value))
        for label, value in [
            ("files new", summary.count("new")),
            ("files changed", summary.count("changed")),
            *(
                [("files read again (their reader changed)", summary.count("reread"))]
                if summary.count("reread")
                else []
            ),
            ("files unchanged", summary.count("unchanged")),
            ("files failed", summary.count("failed")),
            ("files shrunk (stored messages kept)", summary.count("shrunk")),
            ("files empty / unrecognised", f"{summary.count('empty')} / {summary.count('unrecognised')}"),
            *([("objects refused (never fetched)", summary.count("refused"))] if summary.count("refused") else []),
            *([("exposures from the hook", summary.exposures)] if summary.exposures else []),
            *(
                [("hook ledger lines skipped (not valid)", summary.exposure_lines_skipped)]
                if summary.exposure_lines_skipped
                else []
            ),
            ("sessions written", summary.sessions),
            ("message parts written", summary.messages),
            ("bad lines", summary.bad_lines),
            ("secrets redacted", summary.secrets),
            (
                "throughput",
                f"{summary.mb_per_s:.1f} MB/s ({summary.bytes_read / 1e6:.1f} MB in {summary.seconds:.2f} s)",
            ),
        ]
    ]
    print_rows(("", ""), rows, title="Ingest", header=False)  # into a pipe without loading Rich
    reread = 0
    for r in summary.results:
        if r.status == "reread":
            # Once after an upgrade whose reader changed, every file of its format: the first few are named here,
            # the rest said in one line (`--json` names every one).
            reread += 1
            if reread <= REREAD_SHOWN:
                why = (r.note or "").removeprefix("read again: ")
                err.print(f"[yellow]read again:[/yellow] {escape(r.path)}: {escape(why)}", highlight=False)
            if r.bad_lines:
                err.print(f"[yellow]{r.bad_lines} bad line(s):[/yellow] {escape(r.path)}", highlight=False)
            continue
        if r.status in ("failed", "empty", "unrecognised", "shrunk", "refused"):
            err.print(f"[yellow]{r.status}:[/yellow] {escape(r.path)}: {escape(r.error or '')}", highlight=False)
        elif r.bad_lines:
            err.print(f"[yellow]{r.bad_lines} bad line(s):[/yellow] {escape(r.path)}", highlight=False)
        if r.note:
            err.print(f"[yellow]note:[/yellow] {escape(r.path)}: {escape(r.note)}", highlight=False)
    if reread > REREAD_SHOWN:
        err.print(
            f"[yellow]read again:[/yellow] {reread - REREAD_SHOWN:,} more file(s) whose reader changed since they were"
            " read (`playbook ingest --json` lists every file).",
            highlight=False,
        )


@contextmanager
def ingest_bars(label: str = "ingest", unit: str = "bytes") -> Iterator[Any]:
    """A progress bar on stderr for one ingest (or another long job: `label`, counted in `unit`, bytes or
    sessions); yields the function to report (done, total) to. With no terminal attached (a log file, a
    scheduler), nothing: the summary that follows says what was done."""
    if not _stderr_terminal():
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    counted = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    with Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        counted,
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


# With no terminal attached (a log file, a scheduler), progress is a line this often at most, and at the end.
PROGRESS_LINE_EVERY_S = 30.0


# What each phase counts: `ingest` bytes, `curate` sessions, a step (`reflector`, `curator`) its model calls.
_UNITS = {"ingest": "bytes", "curate": "sessions"}


@contextmanager
def _progress_lines() -> Iterator[None]:
    from flows.run.progress import listen

    started = time.monotonic()
    last: dict[str, float] = {}

    def update(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last.get(phase, -PROGRESS_LINE_EVERY_S) < PROGRESS_LINE_EVERY_S:
            return
        last[phase] = now
        err.print(f"{phase}: {done:,}/{total:,} {_UNITS.get(phase, 'calls')} ({now - started:.0f} s)", highlight=False)

    listen(update)
    try:
        yield
    finally:
        listen(None)


@contextmanager
def progress_bars() -> Iterator[None]:
    """Progress bars on stderr for the phases a flow reports (ingest bytes, curated sessions); plain lines when
    no terminal is attached (a local model can take minutes a session)."""
    from flows.run.progress import listen

    if not err.is_terminal:
        with _progress_lines():
            yield
        return
    from rich.progress import BarColumn, Progress, TextColumn  # only with a terminal: the read commands skip it

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(f"{phase} {_UNITS.get(phase, 'calls')}", total=total)
            bar.update(tasks[phase], completed=done, total=total)

        listen(update)
        try:
            yield
        finally:
            listen(None)


def render_run(summary: RunSummary) -> None:
    """The end-of-run summary."""
    for notice in summary.notices:
        err.print(f"[yellow]Notice:[/yellow] {escape(notice)}", highlight=False)
    table = new_table(title=f"{summary.kind} · playbook `{summary.playbook}`", show_header=False, title_justify="left")
    for label, value in summary.summary_rows():
        table.add_row(label, escape(value))
    out.print(table)
    for session_id, reason in summary.failures.items():
        err.print(
            f"[yellow]failed (retried next run):[/yellow] {escape(session_id)}: {escape(reason)}", highlight=False
        )


def render_changes(changes: list[ReviewChange]) -> None:
    """The pending changes as a numbered, readable diff."""
    for c in changes:
        sign = {"added": "[green]+[/green]", "removed": "[red]-[/red]", "changed": "[yellow]~[/yellow]"}[c.kind]
        out.print(f"{sign} {c.number}. {c.kind} [bold]{escape(c.name)}[/bold] ({escape(c.section)})")
        if c.before is not None:
            out.print(f"    [red]- {escape(c.before)}[/red]")
        if c.after is not None:
            out.print(f"    [green]+ {escape(c.after)}[/green]")


def render_held(held: list[Screened]) -> None:
    """The entries the screen holds: id, the rules and what matched, the text as it is (invisible characters
    shown as escapes)."""
    if not held:
        return
    out.print(f"[bold]{len(held)} entr{'y' if len(held) == 1 else 'ies'} held by the screen[/bold] (never exported):")
    for h in held:
        out.print(f"  [red]![/red] [bold]{escape(h.name)}[/bold] ({escape(h.section)}): {escape(h.text)}")
        for x in h.holds:
            out.print(f"      {x.rule}: {escape(x.detail)}")
    out.print("  Release one with `playbook review --release ID` after reading it.", highlight=False)


def describe_recurrence(row: TriggerRecurrence | dict[str, Any]) -> str:
    """`trigger seen in 9 of 35 sessions before, 2 of 40 after` (after: since the entry was first exported)."""
    from core.store.published import TriggerRecurrence

    r = row if isinstance(row, TriggerRecurrence) else TriggerRecurrence.model_validate(row)
    before = f"seen in {r.seen_before} of {r.sessions_before} sessions before"
    if r.first_exported_at is None:
        return f"{before}; not exported yet"
    return f"{before}, {r.seen_after} of {r.sessions_after} after"


def render_sources(sources: dict[str, Source]) -> None:
    """`playbook show --sources` and `playbook revalidate`: what each entry rests on, and whether it is there."""
    table = new_table("entry", "rests on", "in", "status")
    for name, s in sorted(sources.items()):
        status = f"held: {s.reason}" if s.status == "held" else s.status + (f" at {s.commit[:12]}" if s.commit else "")
        table.add_row(
            escape(name), escape(", ".join(c.shown() for c in s.citations)), escape(s.root or "?"), escape(status)
        )
    out.print(table)


def render_life(life: dict[str, Any], indent: str = "") -> None:
    """`playbook why`: an entry's life as a timeline, the sessions behind it, and its sources' lives. Into a pipe
    without loading Rich where its lines and table are plain (`print_styled`, `print_rows`)."""
    now = life["now"]
    head = ("bold", life["entry_id"])
    if now:
        print_styled(
            ("", indent),
            head,
            ("", f" ({now['section']}; helpful {now['helpful']}, harmful {now['harmful']}): {now['text']}"),
        )
    else:
        print_styled(("", indent), head, ("", " (no longer live)"))
    sources = life.get("rests_on")
    if sources and sources["citations"]:
        from core.citations import Citation

        cited = ", ".join(Citation.model_validate(c).shown() for c in sources["citations"])
        said = {"held": f"held: {sources['reason']}", "ok": "all there", "unchecked": "not checked here"}
        where = (sources["root"] or "?") + (f" at {sources['commit'][:12]}" if sources.get("commit") else "")
        print_styled(("", f"{indent}rests on {cited} in {where}: {said[sources['status']]}"))
    rows = []
    for e in life["events"]:
        detail = {
            "ADD": f"added: {e['new_text']}"
            + (f' (trigger "{e["trigger"]}")' if e["trigger"] else "")
            + (f"\nevidence: {e['evidence']}" if e.get("evidence") else ""),
            "UPDATE": f"was: {e['old_text']}\nnow: {e['new_text']}",
            "MERGE": f"merged from {', '.join(e['target_ids'])}: {e['new_text']}",
            "MERGED INTO": f"merged into {e['entry_id']}",
            "DELETE": f"deleted: {e['reason'] or ''}",
            "TAG": f"{e['rating']}: {e['rationale'] or ''}",
            "PRUNE": e["reason"] or "",
        }.get(e["event"], e["reason"] or "")
        rows.append((str(e["version"]), (e["at"] or "")[:10], e["event"], e["session_id"] or e["source"], detail))
    print_rows(("version", "date", "what", "session", "detail"), rows)
    for sid, info in life["sessions"].items():
        where = ", ".join(
            str(x)
            for x in (info["project"], (info["started_at"] or "")[:10], info.get("contributor"), info.get("removed"))
            if x
        )
        print_styled(("", f"{indent}session {sid} ({where}): {info['first_prompt'] or ''!r}"))
        if info["analysis"]:
            print_styled(("", f"{indent}  reflector: {info['analysis']}"))
        if info["reasoning"]:
            print_styled(("", f"{indent}  curator: {info['reasoning']}"))
    if life["rediscoveries"]:
        found = life["rediscoveries"]
        mean = sum(r["similarity"] or 0 for r in found) / len(found)
        print_styled(("", f"{indent}rediscovered {len(found)} time(s) (mean similarity {mean:.2f})"))
    for row in life["triggers"]:
        print_styled(("", f'{indent}trigger "{row["triggers"]}": {describe_recurrence(row)} (an observation)'))
    if life.get("impact"):
        print_styled(("", f"{indent}impact: {describe_impact(life['impact'])}"))
    for source in life["sources"]:
        print_styled(("", indent), ("dim", "source of the merge:"))
        render_life(source, indent + "  ")


def describe_impact(row: EntryImpact | dict[str, Any]) -> str:
    """One line: the verdict, the effect on the trigger's rate with its interval, and how it was estimated."""
    r = row if isinstance(row, dict) else row.model_dump()
    if r["effect"] is None:
        return f"{r['verdict']} ({r['why']})"
    return (
        f"{r['verdict']}: the trigger comes up {r['effect']:+.0%} of sessions with it"
        f" (95 % interval {r['ci_low']:+.0%} to {r['ci_high']:+.0%}; {r['why']})"
    )


def render_impact(rows: list[EntryImpact], playbook: str) -> None:
    """`playbook impact`: one row per entry, then what the verdicts mean."""
    if not rows:
        out.print(f"Playbook `{playbook}` has no live entry.", highlight=False)
        return
    table = new_table(
        "entry", "verdict", "effect (95 % interval)", "with / without", "followed", "context tokens", "text"
    )
    for r in rows:
        effect = f"{r.effect:+.0%} ({r.ci_low:+.0%} to {r.ci_high:+.0%})" if r.effect is not None else "-"
        rates = f"{r.exposed.triggered}/{r.exposed.sessions} / {r.unexposed.triggered}/{r.unexposed.sessions}"
        a = r.adherence
        followed = (
            f"{a.exposed.followed}/{a.exposed.fired} / {a.held_out.followed}/{a.held_out.fired}"
            + (f" {a.verdict}" if a.verdict != "insufficient" else "")
            if a is not None
            else "-"
        )
        table.add_row(escape(r.entry_id), r.verdict, effect, rates, followed, f"{r.context_tokens:,}", escape(r.text))
    out.print(table)
    err.print(
        "effect: change in the share of sessions where the entry's trigger shows up in tool output or in what the"
        " agent ran (negative: less often with the entry). followed: for a command lesson, the sessions that ran a"
        " command it is about and did what it says, with the entry / held out of it. 'insufficient' means too few"
        " sessions to tell; docs/impact.md",
        highlight=False,
    )


def render_hook(done: HookInstall) -> None:
    """What `hook install` or `hook uninstall` did."""
    hooks = "SessionStart, UserPromptSubmit and PreToolUse hooks"
    said = {
        "installed": f"Installed the {hooks} in {done.settings_file}",
        "already": f"The {hooks} are already in {done.settings_file}",
        "removed": f"Removed playbook's hooks from {done.settings_file}; the other settings are as they were",
        "absent": f"No playbook hook in {done.settings_file}; nothing changed",
    }[done.status]
    out.print(escape(said) + ".", highlight=False)
    if done.snapshot is not None:
        err.print(
            f"They give each session the lessons in {escape(str(done.snapshot))} (refreshed by every nightly"
            " and publish): a digest at its start, the lessons a prompt calls up, and a command lesson's guard before"
            " the command it names.",
            highlight=False,
        )


def render_guards(guards: list[Guard], as_json: bool) -> None:
    """The guards of a playbook, as `playbook hook guards` lists them."""
    if as_json:
        print_json([g.model_dump() for g in guards])
        return
    if not guards:
        out.print("No guards: no exported entry is a command lesson the rules miner wrote.")
        return
    table = new_table("entry", "set off by", "answer", "lesson")
    for g in guards:
        when = " ".join(g.words) + (f" ... {' '.join(g.contains)}" if g.contains else "")
        when += f" outside {g.folder}/" if g.folder else ""
        when += f" | {g.piped_into}" if g.piped_into else ""
        when += f" (not {' '.join(g.unless)})" if g.unless else ""
        table.add_row(g.entry, escape(when), "refuse" if g.hard else "context", escape(g.text))
    out.print(table)


def render_published(results: list[Published]) -> None:
    """What `publish` did with each target file."""
    table = new_table("playbook", "kind", "file", "result")
    for r in results:
        result = "[red]refused[/red]: " + escape(r.message) if r.status == "refused" else r.status
        table.add_row(r.playbook, r.kind, escape(r.path), result)
    out.print(table)
