"""Benchmark: what one curator answer costs with 10,000 operations, against one with 11 (the floor: the same
truncation note, the same 10 operations considered).

Each round parses the model's text (`parse_curator`, which keeps the first 10 operations), applies the session
to a 100-entry playbook and writes the version with its operation rows into a DuckDB file, for both answers,
interleaved, in CPU (`time.process_time`: every thread of the process, DuckDB's included), not wall, so machine
load cannot pass or fail the ratio. Before operations were cut where they are parsed, each dropped one was a row
of its own: a 10,000-operation answer took 217 s and 3.3 GB for 2 sessions through `curate` (measured once, by
hand).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._table import Row, emit, interleaved
from bench.bench_apply import make_playbook
from core.curator import parse_curator
from core.models import ReflectorOutput
from core.operations import apply_session
from core.sections import DEFAULT_SECTIONS
from core.store.db import open_db
from core.store.registry import ensure_playbook
from core.store.versions import write_version


def answer(n: int) -> str:
    """A curator answer proposing `n` ADDs (about 180 bytes each)."""
    ops = [
        {"type": "ADD", "section": "OTHERS", "text": f"Lesson {i}: check the exit code of step {i}."} for i in range(n)
    ]
    return json.dumps({"reasoning": "many lessons", "operations": ops})


def one_answer(folder: Path, text: str) -> Callable[[], float]:
    """A measure: CPU seconds to parse `text`, apply it and write the version, on a fresh copy of the playbook.

    One call, not a batch: each needs a fresh database, and even the floor's is milliseconds of CPU.
    """
    playbook = make_playbook(100)
    reflection = ReflectorOutput(analysis="bench")
    counter = iter(range(1_000_000))

    def measure() -> float:
        db = folder / f"answer-{next(counter)}.duckdb"
        with open_db(db) as con:
            ensure_playbook(con, "default", DEFAULT_SECTIONS)
            write_version(con, "default", playbook, source="import")
            start = time.process_time()
            curation = parse_curator(text)
            assert curation is not None
            new, report = apply_session(playbook, reflection, curation)
            write_version(con, "default", new, source="session", session_id="s", report=report)
            took = time.process_time() - start
            rows = con.execute("SELECT count(*) FROM operations").fetchone()
        assert rows is not None and rows[0] == 11, rows  # 10 considered + one truncation note
        db.unlink()
        return took

    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--operations", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-answer-") as tmp:
        got = interleaved(
            {
                "big": one_answer(Path(tmp), answer(args.operations)),
                "floor": one_answer(Path(tmp), answer(11)),
            },
            max(3, args.rounds),
        )
    ms = {name: [x * 1e3 for x in samples] for name, samples in got.items()}
    row = Row(
        "answer",
        f"parse + apply + write, an answer of {args.operations:,} operations",
        "ms CPU",
        ms["big"],
        "an answer of 11",
        ms["floor"],
        goal="<= 3x",
    )
    row.met = row.ratio is not None and row.ratio <= 3
    emit([row])


if __name__ == "__main__":
    main()
