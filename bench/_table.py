"""What every benchmark shares: interleaved rounds, min / median / max, and the rows of `make bench`'s table.

A bench measures its subject and its baseline in the same run, alternating (`interleaved`), so a change in
machine load hits both; it then calls `emit` with its rows. `emit` prints them, and when `BENCH_ROWS` names
a file (as `bench/run_all.py` does) appends them there as JSON lines, from which one table is printed.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field


@dataclass
class Row:
    """One line of the table: a measure's samples, its baseline's, and the goal on their ratio or value."""

    bench: str
    what: str
    unit: str
    samples: list[float]
    baseline: str = ""  # what the ratio is against
    base: list[float] = field(default_factory=list)
    goal: str = ""  # e.g. "<= 1.2x", "< 1 s"
    met: bool | None = None
    modelled: bool = False  # a figure from a model (token counts, prices), not a measurement

    @property
    def ratio(self) -> float | None:
        """Median of the samples over the median of the baseline's."""
        if not self.base or not self.samples:
            return None
        base = statistics.median(self.base)
        return statistics.median(self.samples) / base if base else None


def spread(samples: Sequence[float], scale: float = 1.0, digits: int = 2) -> str:
    """`min / median / max` of `samples` times `scale`."""
    if not samples:
        return "-"
    values = (min(samples), statistics.median(samples), max(samples))
    return " / ".join(f"{v * scale:.{digits}f}" for v in values)


def interleaved(measures: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Run every measure once per round, in turn, `rounds` times; each returns its own sample."""
    out: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            out[name].append(measure())
    return out


def emit(rows: Sequence[Row]) -> None:
    """Print the rows (min / median / max, ratio of medians, goal) and hand them to `run_all` if it asked."""
    for row in rows:
        ratio = f"  ratio {row.ratio:.2f}x against {row.baseline}" if row.ratio is not None else ""
        goal = f"  goal {row.goal}: {'met' if row.met else 'NOT met'}" if row.goal and row.met is not None else ""
        kind = "  (modelled)" if row.modelled else ""
        print(f"  {row.what}: {spread(row.samples)} {row.unit} (min / median / max){ratio}{goal}{kind}")
    target = os.environ.get("BENCH_ROWS")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(asdict(row)) + "\n")


def in_child(target: Callable[..., None], args: tuple[object, ...], timeout: float) -> float | None:
    """What `target(*args, out)` puts on its queue, run in a forked child; None when the child does not finish within
    `timeout` seconds (it is stopped) or puts nothing: a crafted input that blows up shows as a row, not a hang."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=target, args=(*args, out))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.terminate()
        child.join()
        return None
    return out.get() if not out.empty() else None
