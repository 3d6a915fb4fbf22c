"""Benchmark: finding a model's answer (`core.jsonx.find_json`) in crafted text, against an ordinary answer of the
same size in bytes (prose around one valid JSON document), at 50 KB and 500 KB.

The crafted texts are the shapes that make a naive extractor quadratic or recursive: runs of opening braces or
brackets (deeper than the decoder recurses), spans that balance but are no JSON, endless strings of escapes,
fences around broken blocks. A model's answer is some kilobytes; an extractor that is linear keeps every ratio
near the ordinary answer's at both sizes, so the ratio does not grow tenfold from 50 KB to 500 KB.

Every figure is CPU (`time.process_time`), not wall, so machine load cannot pass or fail a ratio; a call shorter
than `--budget` is timed in a batch of calls lasting about that long and divided.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._table import Row, emit, interleaved
from bench.bench_apply import per_call
from core.jsonx import find_json

CRAFTED: dict[str, Callable[[int], str]] = {
    "opening braces": lambda n: "{" * n,
    "opening brackets": lambda n: "[" * n,
    "closing brackets": lambda n: "]}" * (n // 2),
    "spans that balance but are no JSON": lambda n: "{]" * (n // 2),
    "objects with one bad token": lambda n: '{"a":1 x}' * (n // 9),
    "valid lists before nothing": lambda n: "[1]" * (n // 3),
    "an endless string of escapes": lambda n: '{"' + '\\"' * (n // 2),
    "fences around broken blocks": lambda n: "```json\n{\n```\n" * (n // 14),
}


def ordinary(n: int) -> str:
    """An answer of about `n` bytes: a line of prose, then a curator document with as many operations as fit."""
    op = {"type": "ADD", "section": "OTHERS", "text": "Run the tests before you commit."}
    count = max(1, (n - 40) // (len(json.dumps(op)) + 2))
    return "Here is my analysis of the session:\n" + json.dumps({"reasoning": "x", "operations": [op] * count})


def timed(text: str, budget: float) -> Callable[[], float]:
    """A measure: CPU seconds per `find_json` over `text`, over a batch of calls lasting about `budget`."""
    return per_call(lambda: find_json(text), budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02, help="CPU seconds per timed batch of calls")
    args = parser.parse_args()
    rows: list[Row] = []
    at_small: dict[str, float] = {}
    for size in (50_000, 500_000):
        measures = {name: timed(make(size), args.budget) for name, make in CRAFTED.items()}
        measures["floor"] = timed(ordinary(size), args.budget)
        got = interleaved(measures, max(3, args.rounds))
        floor = [x * 1e3 for x in got.pop("floor")]
        for name, samples in got.items():
            row = Row(
                "jsonx",
                f"find_json, {name}, {size // 1000} KB",
                "ms CPU",
                [x * 1e3 for x in samples],
                f"an ordinary answer of {size // 1000} KB",
                floor,
            )
            if name in at_small and row.ratio is not None:
                # linear: ten times the text keeps the ratio (a quadratic scan would multiply it by ten)
                row.goal = f"<= 1.5 x the 50 KB ratio ({at_small[name]:.2f}x)"
                row.met = row.ratio <= 1.5 * at_small[name]
            elif row.ratio is not None:
                at_small[name] = row.ratio
            rows.append(row)
    emit(rows)


if __name__ == "__main__":
    main()
