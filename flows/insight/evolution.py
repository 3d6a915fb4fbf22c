"""The evolution report of `playbook report`: a static HTML page (opens from disk, no network) plus the same
charts as PNG files."""

from __future__ import annotations

import base64
import html
import io
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from pydantic import BaseModel

from core.budget import Budget
from core.impact import Arm, EntryImpact, estimate_counts
from core.io.files import write_atomic
from core.redact import Redactor
from core.runsummary import quality_line
from core.store.analytics import ContributorShare, EvolutionData, evolution_data
from core.store.db import open_db
from core.store.exposure import impact_counts
from core.store.published import StaleEntry, TriggerRecurrence
from core.store.registry import require_playbook
from flows.delivery.sources import outdated
from flows.workspace import Workspace

__all__ = ["CHARTS", "EvolutionReport", "report", "write_evolution_report"]

CHARTS = ("sections", "budget", "operations", "skip_reasons", "prunes", "counters", "lifetimes", "runs")
TITLES = {
    "sections": "Entries per section over versions",
    "budget": "Budget use over versions: share of max entries and of max tokens (100% = full)",
    "operations": "Operations per {period}: applied (solid) and skipped (hatched), by type",
    "skip_reasons": "Top reasons operations were skipped",
    "prunes": "Entries pruned per {period}",
    "counters": "Most helpful and most harmful entries: counters over versions",
    "lifetimes": "Entry lifetimes (versions from birth to removal, or to now)",
    "runs": "Tokens and cost per run",
}
COLORS = {"ADD": "#4C9A2A", "UPDATE": "#2F6DB5", "MERGE": "#8E44AD", "DELETE": "#C0392B", "unknown": "#7F8C8D"}


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="#666", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def _counts(ax: Axes, *, x_too: bool = False) -> None:
    """A count axis: whole numbers only, from zero (no 0.25 of an entry, no axis below nothing)."""
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))  # all zeros: 0 to 1, not fractions of nothing
    if x_too:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _sections(ax: Axes, data: EvolutionData) -> None:
    if not data.section_sizes:
        _empty(ax, "No entries yet")
        return
    points: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for version, section, n in data.section_sizes:
        points[section].append((version, n))
    xs = sorted({v for v, _, _ in data.section_sizes} | {0, data.versions})
    series = []
    for section in data.sections:
        changes = dict(points.get(section, []))
        value, ys = 0, []
        for x in xs:
            value = changes.get(x, value)
            ys.append(value)
        series.append(ys)
    ax.stackplot(xs, series, labels=data.sections, step="post", alpha=0.85)
    ax.set_xlabel("version")
    ax.set_ylabel("entries")
    _counts(ax, x_too=True)
    ax.legend(loc="upper left", fontsize=8)


def _operations(ax: Axes, data: EvolutionData) -> None:
    if not data.ops_by_period:
        _empty(ax, "No operations yet")
        return
    days = sorted({d for d, _, _, _ in data.ops_by_period})
    index = {d: i for i, d in enumerate(days)}
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * len(days))
    for day, op_type, status, n in data.ops_by_period:
        counts[(op_type, status)][index[day]] += int(n)
    width = 0.4
    for offset, status in ((-width / 2, "applied"), (width / 2, "skipped")):
        bottom = [0] * len(days)
        for op_type in COLORS:
            values = counts.get((op_type, status))
            if not values:
                continue
            ax.bar(
                [i + offset for i in range(len(days))],
                values,
                width,
                bottom=bottom,
                color=COLORS[op_type],
                hatch="//" if status == "skipped" else None,
                alpha=0.6 if status == "skipped" else 1.0,
                label=f"{op_type} {status}",
            )
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    step = max(1, len(days) // 12)
    ax.set_xticks(range(0, len(days), step))
    ax.set_xticklabels([days[i].strftime("%Y-%m-%d") for i in range(0, len(days), step)], rotation=30, fontsize=8)
    ax.set_ylabel("operations")
    _counts(ax)
    ax.legend(fontsize=7, ncol=2)


def _skip_reasons(ax: Axes, data: EvolutionData) -> None:
    if not data.skip_reasons:
        _empty(ax, "No skipped operations")
        return
    reasons = [r if len(r) <= 60 else r[:57] + "..." for r, _ in data.skip_reasons][::-1]
    ax.barh(reasons, [n for _, n in data.skip_reasons][::-1], color="#E67E22")
    ax.set_xlabel("operations skipped")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(left=0)
    ax.tick_params(axis="y", labelsize=8)


def _prunes(ax: Axes, data: EvolutionData) -> None:
    if not data.prunes_by_period:
        _empty(ax, "No entries pruned")
        return
    days = [d for d, _ in data.prunes_by_period]
    ax.bar(days, [n for _, n in data.prunes_by_period], color="#C0392B", width=_PERIOD_DAYS[data.period] * 0.8)
    ax.set_ylabel("entries pruned")
    _counts(ax)
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)


def _counters(ax: Axes, data: EvolutionData) -> None:
    if not data.counter_history:
        _empty(ax, "No rated entries yet")
        return
    for name, history in data.counter_history.items():
        xs = [v for v, _, _ in history] + [data.versions]
        line = ax.step(xs, [h for _, h, _ in history] + [history[-1][1]], where="post", label=f"{name} helpful")
        ax.step(
            xs,
            [x for _, _, x in history] + [history[-1][2]],
            where="post",
            linestyle="--",
            color=line[0].get_color(),
            label=f"{name} harmful",
        )
    ax.set_xlabel("version")
    ax.set_ylabel("count")
    _counts(ax, x_too=True)
    ax.legend(fontsize=7, ncol=2)


def _lifetimes(ax: Axes, data: EvolutionData) -> None:
    if not data.lifetimes:
        _empty(ax, "No entries yet")
        return
    ax.hist(data.lifetimes, bins=min(40, max(5, len(set(data.lifetimes)))), color="#16A085")
    ax.set_xlabel("versions alive")
    ax.set_ylabel("entries")
    _counts(ax, x_too=True)


def _runs(ax: Axes, data: EvolutionData) -> None:
    if not data.runs:
        _empty(ax, "No runs yet")
        return
    xs = range(len(data.runs))
    ax.bar(xs, [t for _, _, t, _ in data.runs], color="#95A5A6", label="tokens")
    ax.set_ylabel("tokens")
    _counts(ax)
    twin = ax.twinx()
    twin.plot(list(xs), [c for _, _, _, c in data.runs], color="#2C3E50", marker="o", label="cost (USD)")
    twin.set_ylabel("USD")
    top = max((c for _, _, _, c in data.runs), default=0.0)
    twin.set_ylim(0, top * 1.1 if top > 0 else 1.0)  # a cost is never negative, and $0 sits on the floor
    step = max(1, len(data.runs) // 10)
    ax.set_xticks(list(range(0, len(data.runs), step)))
    ax.set_xticklabels(
        [data.runs[i][1].strftime("%m-%d %H:%M") for i in range(0, len(data.runs), step)], rotation=30, fontsize=8
    )


def _budget(ax: Axes, data: EvolutionData) -> None:
    if not data.budget_use or data.budget is None:
        _empty(ax, "No entries yet")
        return
    # Change points, from version 0 (empty) to the newest version (what the playbook holds now).
    points = [(0, 0, 0), *data.budget_use]
    points.append((max(data.versions, points[-1][0]), points[-1][1], points[-1][2]))
    versions = [v for v, _, _ in points]
    entries = [100 * n / data.budget.max_entries for _, n, _ in points]
    tokens = [100 * t / data.budget.max_tokens for _, _, t in points]
    ax.step(versions, entries, where="post", color="#2F6DB5", label=f"entries (max {data.budget.max_entries})")
    ax.step(versions, tokens, where="post", color="#E67E22", label=f"tokens (max {data.budget.max_tokens:,})")
    ax.axhline(100, color="#C0392B", linestyle="--", linewidth=1)
    ax.set_xlabel("version")
    ax.set_ylabel("% of budget")
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", fontsize=8)


DRAW = {
    "sections": _sections,
    "budget": _budget,
    "operations": _operations,
    "skip_reasons": _skip_reasons,
    "prunes": _prunes,
    "counters": _counters,
    "lifetimes": _lifetimes,
    "runs": _runs,
}


# The width of a bar of the prunes chart (its x axis is dates), in days.
_PERIOD_DAYS = {"day": 1, "week": 7, "month": 30, "quarter": 91, "year": 365}


def _title(name: str, period: str) -> str:
    return TITLES[name].format(period=period)


def _png(name: str, data: EvolutionData) -> bytes:
    fig: Figure = plt.figure(figsize=(9, 4.2), dpi=100)
    ax = fig.add_subplot()
    DRAW[name](ax, data)
    ax.set_title(_title(name, data.period), fontsize=11)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def _table(rows: list[tuple[str, str, int, int]]) -> str:
    if not rows:
        return "<p class='muted'>None yet.</p>"
    body = "".join(
        f"<tr><td><code>{html.escape(n)}</code></td><td>{html.escape(t)}</td><td>{h}</td><td>{x}</td></tr>"
        for n, t, h, x in rows
    )
    return f"<table><tr><th>id</th><th>text</th><th>helpful</th><th>harmful</th></tr>{body}</table>"


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Playbook report: {name}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 960px; margin: 2em auto; color: #222; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; border: 1px solid #ddd; }}
table {{ border-collapse: collapse; width: 100%; font-size: 0.9em; }} td, th {{ border: 1px solid #ddd; padding: 4px; }}
.muted {{ color: #777; }}
</style></head>
<body data-expected-charts="{expected}">
<h1>Playbook <code>{name}</code></h1>
<p class="muted">{summary}</p>
{figures}
<h2>Quality (newest run)</h2><p>{quality}</p>
<h2>Most helpful entries</h2>{helpful}
<h2>Most harmful entries</h2>{harmful}
<h2>Stale entries</h2>
<p class="muted">No session confirmed them (a helpful tag or a rediscovery) for {stale_days};
exports leave them out.</p>
{stale}
<h2>Entries whose sources are gone</h2>
<p class="muted">What they rest on in their project (a file, a folder, a declared script) is no longer there on this
machine; no export or hook gives them until it is back (<code>playbook revalidate</code>).</p>
{outdated}
<h2>Do situations recur? Triggers before and after each entry was first exported</h2>
<p class="muted">An observation, not a causal claim: the sessions before and after differ in more than the
playbook.</p>
{recurrence}
<h2>Does each lesson help? (<code>playbook impact</code>)</h2>
<p class="muted">The share of sessions where an entry's trigger shows up in tool output, with the entry and
without it, and the difference with its 95 % interval (negative: less often with the entry); randomised where
the hook held the entry out of some sessions, else a difference in differences against projects without it.</p>
{impact}
<h2>Contributors</h2>
<p class="muted">Whose sessions changed the playbook (pseudonyms, from <code>playbook push</code>).</p>
{contributors}
<script>
// Marks how many charts decoded, so a headless browser (and a person) can check the page rendered.
window.addEventListener("load", function () {{
  var ok = Array.prototype.filter.call(document.images, function (i) {{ return i.complete && i.naturalWidth > 0; }});
  document.body.setAttribute("data-rendered-charts", String(ok.length));
}});
</script>
</body></html>
"""


class EvolutionReport(BaseModel):
    """The files one evolution report wrote."""

    index: Path
    charts: list[Path]
    seconds: float
    versions: int


def _stale_table(rows: list[StaleEntry], clean: Callable[[str], str]) -> str:
    if not rows:
        return "<p class='muted'>None.</p>"
    body = "".join(
        f"<tr><td><code>{html.escape(r.name)}</code></td><td>{html.escape(clean(r.text))}</td>"
        f"<td>{html.escape(str(r.last_confirmed or 'never'))[:10]}</td></tr>"
        for r in rows
    )
    return f"<table><tr><th>id</th><th>text</th><th>last confirmed</th></tr>{body}</table>"


def _outdated_table(gone: dict[str, str], clean: Callable[[str], str]) -> str:
    if not gone:
        return "<p class='muted'>None.</p>"
    body = "".join(
        f"<tr><td><code>{html.escape(name)}</code></td><td>{html.escape(clean(why))}</td></tr>"
        for name, why in sorted(gone.items())
    )
    return f"<table><tr><th>id</th><th>why it is held</th></tr>{body}</table>"


def _recurrence_table(rows: list[TriggerRecurrence], clean: Callable[[str], str]) -> str:
    if not rows:
        return "<p class='muted'>No live entry has a trigger.</p>"

    def share(seen: int, of: int) -> str:
        return f"{seen} of {of}" + (f" ({seen / of:.0%})" if of else "")

    body = "".join(
        f"<tr><td><code>{html.escape(r.entry_id)}</code></td><td><code>{html.escape(clean(r.triggers))}</code>"
        f"</td><td>{share(r.seen_before, r.sessions_before)}</td><td>"
        + (share(r.seen_after, r.sessions_after) if r.first_exported_at else "not exported yet")
        + "</td></tr>"
        for r in rows
    )
    return f"<table><tr><th>id</th><th>trigger</th><th>sessions with it, before</th><th>after</th></tr>{body}</table>"


def _impact_table(rows: list[EntryImpact], clean: Callable[[str], str]) -> str:
    if not rows:
        return "<p class='muted'>No live entry.</p>"

    def rate(arm: Arm) -> str:
        return f"{arm.triggered} of {arm.sessions}"

    body = "".join(
        f"<tr><td><code>{html.escape(r.entry_id)}</code></td><td>{html.escape(clean(r.text))}</td>"
        f"<td>{rate(r.exposed)}</td><td>{rate(r.unexposed)}</td><td>"
        + (
            f"{r.effect:+.0%} ({r.ci_low:+.0%} to {r.ci_high:+.0%})"
            if r.effect is not None and r.ci_low is not None and r.ci_high is not None
            else "-"
        )
        + f"</td><td>{r.verdict}</td><td>{r.context_tokens:,}</td></tr>"
        for r in rows
    )
    return (
        "<table><tr><th>id</th><th>text</th><th>trigger seen, with</th><th>without</th><th>effect (95 %)</th>"
        f"<th>verdict</th><th>context tokens</th></tr>{body}</table>"
    )


def _contributors_table(rows: list[ContributorShare]) -> str:
    if not rows:
        return "<p class='muted'>No session has a contributor (transcripts read from this machine only).</p>"
    body = "".join(
        f"<tr><td><code>{html.escape(r.contributor)}</code>"
        + (" <span class='muted'>(removed on request)</span>" if r.removed else "")
        + f"</td><td>{r.sessions}</td><td>{r.operations}</td></tr>"
        for r in rows
    )
    return f"<table><tr><th>contributor</th><th>sessions</th><th>operations applied</th></tr>{body}</table>"


def write_evolution_report(
    db: Path,
    playbook: str,
    out_dir: Path,
    redactor: Redactor | None = None,
    *,
    wait: float = 0.0,
    budget: Budget | None = None,
    stale_after_days: float = 0.0,
    impact_min_sessions: int = 20,
    store: Path | None = None,
) -> EvolutionReport:
    """Write `index.html` and one PNG per chart into `out_dir`; entry texts pass `redactor` first.

    `wait`: seconds to keep trying while another command is using the database.
    `budget`, `stale_after_days`, `impact_min_sessions`: the playbook's settings (defaults: the default budget,
    staleness off, 20 sessions an arm). `store`: for a playbook's shard, the store its sessions are read from.
    """
    started = time.perf_counter()
    clean = (redactor or Redactor()).text
    with open_db(db, wait=wait, store=store) as con:
        data = evolution_data(con, playbook, stale_after_days=stale_after_days)
        impact = [estimate_counts(c, impact_min_sessions) for c in impact_counts(con, playbook)]
        gone = outdated(con, playbook)
    data.budget = budget or Budget()
    data.top_helpful = [(n, clean(t), h, x) for n, t, h, x in data.top_helpful]
    data.top_harmful = [(n, clean(t), h, x) for n, t, h, x in data.top_harmful]
    figures = []
    for name in CHARTS:
        png = _png(name, data)
        write_atomic(out_dir / f"{name}.png", png)
        encoded = base64.b64encode(png).decode()
        figures.append(
            f'<figure id="{name}"><img alt="{html.escape(_title(name, data.period))}" '
            f'src="data:image/png;base64,{encoded}"></figure>'
        )
    ops = sum(int(n) for _, _, status, n in data.ops_by_period if status == "applied")
    summary = (
        f"{data.versions + 1} version{'s' * (data.versions != 0)} (0 to {data.versions}) · {ops} operations applied ·"
        f" {len(data.lifetimes)} entries ever ·"
        f" {sum(n for _, n in data.prunes_by_period)} pruned · {len(data.runs)} runs ·"
        f" ${sum(c for _, _, _, c in data.runs):.4f} spent"
    )
    if data.heuristic:
        summary += f" · {data.heuristic} live entries were written by rules, without a model (the heuristic provider)"
    page = PAGE.format(
        name=html.escape(playbook),
        expected=len(CHARTS),
        summary=html.escape(summary),
        figures="\n".join(figures),
        helpful=_table(data.top_helpful),
        harmful=_table(data.top_harmful),
        quality=html.escape(quality_line(data.quality, data.duplicate_measure))
        or "Not measured yet (no run applied a session).",
        stale_days=f"{stale_after_days:g} days" if stale_after_days else "(staleness is off)",
        stale=_stale_table(data.stale, clean),
        outdated=_outdated_table(gone, clean),
        recurrence=_recurrence_table(data.recurrence, clean),
        contributors=_contributors_table(data.contributors),
        impact=_impact_table(impact, clean),
    )
    index = out_dir / "index.html"
    write_atomic(index, page)
    return EvolutionReport(
        index=index,
        charts=[out_dir / f"{n}.png" for n in CHARTS],
        seconds=time.perf_counter() - started,
        versions=data.versions + 1,  # as `history --limit 0` lists them: the empty version 0 included
    )


def report(ws: Workspace, playbook: str, out_dir: Path | None = None) -> EvolutionReport:
    """`playbook report`: write `playbook`'s evolution report (a static page and its PNG charts)."""
    db = ws.database(playbook)
    with db.read() as con:
        require_playbook(con, playbook)
    return write_evolution_report(
        db.path,
        playbook,
        out_dir or ws.out_dir / "report",
        ws.redactor,
        wait=db.wait_s,
        budget=ws.settings.budget(playbook),
        stale_after_days=ws.settings.stale_after_days,
        impact_min_sessions=ws.settings.impact_min_sessions,
        store=db.store,
    )
