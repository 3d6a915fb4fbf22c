"""Benchmark: what redacting secrets at ingest costs. The bundled samples (and, when present, the shared
corpus beside the checkout) are ingested into fresh databases with redaction and without
(`keep_raw_text`), interleaved, 5 rounds; the ratio of the medians is printed, plus the redactor's own
throughput over the stored text.

Every figure is CPU (`time.process_time`: every thread of the process, so DuckDB's and ingest's background
batch too), not wall, so machine load cannot pass or fail the ratio. An ingest is a fraction of a second of CPU
and the redactor's pass over every text about as long, so each is timed as one call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from core.redact import redact  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.ingest import ingest  # noqa: E402


def one_ingest(work: Path, sources: list[Path], redacting: bool, read: list[int]) -> Callable[[], float]:
    """A measure: CPU seconds to ingest `sources` into a fresh database; appends the bytes read to `read`."""
    counter = iter(range(1_000_000))

    def measure() -> float:
        db = work / f"r{next(counter)}-{redacting}.duckdb"
        with open_db(db) as con:
            started = time.process_time()
            summary = ingest(con, sources, redact_secrets=redacting)
            took = time.process_time() - started
        read.append(summary.bytes_read)
        return took

    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = max(3, args.rounds)
    sources = [ROOT / "data" / "samples"]
    shared = ROOT.parent / "shared" / "data" / "transcripts"
    if shared.is_dir():
        sources.append(shared)
    read: list[int] = []
    with tempfile.TemporaryDirectory(prefix="playbook-bench-redact-") as tmp:
        work = Path(tmp)
        times = interleaved(
            {
                "raw": one_ingest(work, sources, False, read),
                "redacted": one_ingest(work, sources, True, read),
            },
            rounds,
        )
        with open_db(work / "r0-False.duckdb") as con:
            texts = [t for row in con.execute("SELECT text, tool_input FROM messages").fetchall() for t in row if t]
    size = read[-1]
    started = time.process_time()
    found = sum(redact(t)[1] for t in texts)
    seconds = time.process_time() - started
    raw, red = statistics.median(times["raw"]), statistics.median(times["redacted"])
    print(f"ingest of {size / 1e6:.1f} MB of transcript files, CPU, median of {rounds} interleaved rounds:")
    print(f"  without redaction (keep_raw_text): {raw:.2f} s ({size / 1e6 / raw:.1f} MB per CPU second)")
    print(f"  with redaction (default):          {red:.2f} s ({size / 1e6 / red:.1f} MB per CPU second)")
    print(f"  ratio: {red / raw:.2f}x")
    emit(
        [
            Row(
                "redact",
                f"ingest of {size / 1e6:.1f} MB with redaction",
                "s CPU",
                times["redacted"],
                "without",
                times["raw"],
            )
        ]
    )
    chars = sum(map(len, texts))
    print(
        f"redactor alone: {chars / 1e6:.2f} M characters in {seconds:.2f} s of CPU"
        f" ({chars / 1e6 / seconds:.1f} M chars per CPU second),"
    )
    print(f"  {found} spans replaced")


if __name__ == "__main__":
    main()
