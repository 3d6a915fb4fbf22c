"""Benchmark: what redacting secrets at ingest costs. The bundled samples (and, when present, the shared
corpus beside the checkout) are ingested into fresh databases with redaction and without
(`keep_raw_text`), interleaved, 5 rounds; the ratio of the medians is printed, plus the redactor's own
throughput over the stored text.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit  # noqa: E402
from core.redact import redact  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.ingest import ingest  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sources = [ROOT / "data" / "samples"]
    shared = ROOT.parent / "shared" / "data" / "transcripts"
    if shared.is_dir():
        sources.append(shared)
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-redact-"))
    times: dict[bool, list[float]] = {True: [], False: []}
    size = 0
    for i in range(args.rounds):
        for redacting in (False, True):
            db = work / f"r{i}-{redacting}.duckdb"
            with open_db(db) as con:
                started = time.perf_counter()
                summary = ingest(con, sources, redact_secrets=redacting)
                times[redacting].append(time.perf_counter() - started)
                size = summary.bytes_read
    with open_db(work / f"r0-{False}.duckdb") as con:
        texts = [t for row in con.execute("SELECT text, tool_input FROM messages").fetchall() for t in row if t]
    started = time.perf_counter()
    found = sum(redact(t)[1] for t in texts)
    seconds = time.perf_counter() - started
    raw, red = statistics.median(times[False]), statistics.median(times[True])
    print(f"ingest of {size / 1e6:.1f} MB of transcript files, median of {args.rounds} interleaved rounds:")
    print(f"  without redaction (keep_raw_text): {raw:.2f} s ({size / 1e6 / raw:.1f} MB/s)")
    print(f"  with redaction (default):          {red:.2f} s ({size / 1e6 / red:.1f} MB/s)")
    print(f"  ratio: {red / raw:.2f}x")
    emit([Row("redact", f"ingest of {size / 1e6:.1f} MB with redaction", "s", times[True], "without", times[False])])
    chars = sum(map(len, texts))
    print(f"redactor alone: {chars / 1e6:.2f} M characters in {seconds:.2f} s ({chars / 1e6 / seconds:.1f} M chars/s),")
    print(f"  {found} spans replaced")


if __name__ == "__main__":
    main()
