"""Benchmark: the rules miner (the `heuristic` provider) on the bundled real transcripts, scored against the
labelled set of data/lessons/mined.json: recall of the labelled lessons, the share of entries that state one,
and entries of a junk kind (the same figures tests/flows/test_miner.py asserts). Then its cost: observing and
mining every session, interleaved with the floor of reading the same sessions' messages from DuckDB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from core.miner import History, mine, observe  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.ingest import ingest  # noqa: E402
from core.store.sessions import load_messages  # noqa: E402
from tests.labelled import score  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-miner-"))
    db = work / "m.duckdb"
    with open_db(db) as con:
        ingest(con, [ROOT / "data" / "samples"])
        rows = con.execute("SELECT session_id, project, cwd FROM sessions ORDER BY started_at, session_id").fetchall()

    def read() -> list[tuple[str, str | None, str | None, list]]:  # type: ignore[type-arg]
        with open_db(db, read_only=True) as con:
            return [(sid, project, cwd, load_messages(con, sid)) for sid, project, cwd in rows]

    def lessons() -> list[str]:
        sessions = read()
        observed = {sid: observe(messages, cwd) for sid, _, cwd, messages in sessions}
        texts: list[str] = []
        for sid, project, _, _ in sessions:
            history = History.of((s, observed[s]) for s, p, _, _ in sessions if p == project)
            texts += [f.text for f in mine(observed[sid], history, project)]
        return list(dict.fromkeys(texts))  # the engine adds a rediscovered lesson once

    def timed(fn: object) -> float:
        started = time.process_time()
        fn()  # type: ignore[operator]
        return time.process_time() - started

    found = score(lessons())
    print(f"{found.entries} entries from {len(rows)} sessions against {found.lessons} labelled lessons:")
    print(f"  recall {found.recall:.0%} ({len(found.found)} found), precision {found.precision:.0%}")
    for text in sorted(set(lessons()) - set(found.matching)):
        print(f"  matches no labelled lesson: {text}")
    for kind, texts in found.junk.items():
        print(f"  junk ({kind}): {texts}")
    cpu = interleaved({"mine": lambda: timed(lessons), "read": lambda: timed(read)}, args.rounds)
    emit(
        [
            Row(
                "miner",
                "recall of the labelled lessons",
                "share",
                [found.recall],
                goal=">= 0.5",
                met=found.recall >= 0.5,
            ),
            Row(
                "miner",
                "entries that state a labelled lesson",
                "share",
                [found.precision],
                goal=">= 0.7",
                met=found.precision >= 0.7,
            ),
            Row("miner", "entries of a junk kind", "entries", [found.junk_count], goal="0", met=found.junk_count == 0),
            Row(
                "miner",
                f"read + mine {len(rows)} sessions (CPU)",
                "s",
                cpu["mine"],
                "reading their messages",
                cpu["read"],
            ),
        ]
    )


if __name__ == "__main__":
    main()
