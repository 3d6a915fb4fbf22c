"""Benchmark: ingest of a synthetic archive, against a raw DuckDB scan of the same files in the same run.

1. Build an archive of at least --size-mb MB by replicating data/samples with fresh session ids.
2. Baseline: `SELECT count(*) FROM read_ndjson_objects(<all files>)`.
3. Ingest into a fresh database (in a child process, so its peak RSS is measured alone).
4. Storage: 500 entries x 10,000 versions with 5 changed entries per version; database size and the time
   to rebuild one version with `load_version`.

Prints MB/s, peak RSS, the ratio ingest / raw scan (target <= 3), and the storage figures.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"
sys.path.insert(0, str(ROOT))

from core.store.db import connect  # noqa: E402
from core.store.playbooks import ensure_playbook, load_version  # noqa: E402


def session_ids(path: Path) -> list[str]:
    """Ids to replace in one file: its stem, and for subagents its parent session folder."""
    ids = [path.stem.split("rollout-")[-1][-36:]]
    if path.parent.name == "subagents":
        ids.append(path.parent.parent.name)
    return [i for i in ids if len(i) == 36]


def build_archive(target: Path, size_mb: int) -> tuple[list[Path], int]:
    files = [p for p in SAMPLES.rglob("*.jsonl") if p.stat().st_size > 0]
    total = 0
    copy = 0
    written: list[Path] = []
    while total < size_mb * 1_000_000:
        copy += 1
        mapping: dict[str, str] = {}
        for src in files:
            for old in session_ids(src):
                mapping.setdefault(old, str(uuid.uuid4()))
        for src in files:
            rel = src.relative_to(SAMPLES)
            text = src.read_bytes()
            rel_text = str(rel)
            for old, new in mapping.items():
                text = text.replace(old.encode(), new.encode())
                rel_text = rel_text.replace(old, new)
            if not session_ids(src):  # a stem that is no uuid (short.jsonl) names its session: make it unique
                rel_text = rel_text.replace(src.stem, f"{src.stem}-{copy:04d}")
            dest = target / f"copy{copy:04d}" / rel_text
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(text)
            written.append(dest)
            total += len(text)
    return written, total


INGEST_CHILD = """
import sys, time, resource, json
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from core.store.db import connect
from core.store.ingest import ingest
con = connect(sys.argv[1])
t = time.perf_counter()
s = ingest(con, [Path(sys.argv[2])])
elapsed = time.perf_counter() - t
con.close()
print(json.dumps({"seconds": elapsed, "sessions": s.sessions, "messages": s.messages, "new": s.count("new"),
                  "failed": s.count("failed"), "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def bench_ingest(archive: Path, files: list[Path], total: int, work: Path) -> None:
    con = duckdb.connect()
    con.execute("SET memory_limit = '2GB'")
    listing = [str(f) for f in files]
    start = time.perf_counter()
    lines = con.execute(
        "SELECT count(*) FROM read_ndjson_objects(?, ignore_errors = true, maximum_object_size = 268435456)",
        [listing],
    ).fetchone()
    raw_s = time.perf_counter() - start
    con.close()
    db = work / "bench.duckdb"
    proc = subprocess.run(
        [sys.executable, "-c", INGEST_CHILD, str(db), str(archive), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    result = json.loads(proc.stdout.strip().splitlines()[-1])
    ingest_s = result["seconds"]
    print(f"archive: {total / 1e6:.0f} MB in {len(files)} files, {lines[0] if lines else 0} lines")
    print(f"raw read_ndjson_objects count: {raw_s:.2f} s ({total / 1e6 / raw_s:.0f} MB/s)")
    print(
        f"ingest: {ingest_s:.2f} s ({total / 1e6 / ingest_s:.0f} MB/s), {result['sessions']} sessions,"
        f" {result['messages']} message parts, {result['failed']} failed files"
    )
    print(f"peak RSS of the ingest process: {result['rss_kb'] / 1024:.0f} MB (target < 2048)")
    print(f"ratio ingest / raw scan: {ingest_s / raw_s:.2f} (target <= 3)")
    print(f"database size after ingest: {db.stat().st_size / 1e6:.0f} MB")


HISTORY_SQL = """
INSERT INTO versions (playbook, version, source, n_entries)
    SELECT 'bench', v, 'session', 500 FROM range(1, $versions + 1) t(v);
CREATE TEMP TABLE changes AS
    SELECT 'oth-' || lpad(((v * 37 + k * 101) % 500 + 1)::VARCHAR, 3, '0') AS name, v
    FROM range(2, $versions + 1) a(v), range(5) b(k)
    UNION SELECT 'oth-' || lpad((i + 1)::VARCHAR, 3, '0'), 1 FROM range(500) c(i);
INSERT INTO entries
    SELECT 'bench', name, 'OTHERS', v, 'lesson ' || name || ' revised at ' || v, v % 7, v % 3,
           v, lead(v) OVER (PARTITION BY name ORDER BY v)
    FROM changes;
"""


def bench_history(work: Path, versions: int = 10_000) -> None:
    path = work / "history.duckdb"
    con = connect(path)
    ensure_playbook(con, "bench")
    start = time.perf_counter()
    con.execute(HISTORY_SQL.replace("$versions", str(versions)))
    con.execute("CHECKPOINT")
    build_s = time.perf_counter() - start
    rows = con.execute("SELECT count(*) FROM entries").fetchone()
    samples = []
    for v in (1, versions // 3, versions // 2, versions - 1, versions):
        for _ in range(5):
            t = time.perf_counter()
            model = load_version(con, "bench", v)
            samples.append(time.perf_counter() - t)
            assert model.size() == 500, model.size()
    con.close()
    print(
        f"history: 500 entries x {versions} versions x 5 changes: {rows[0] if rows else 0} entry rows,"
        f" built in {build_s:.1f} s"
    )
    print(
        f"database size: {path.stat().st_size / 1e6:.1f} MB; rebuild one version (load_version):"
        f" median {statistics.median(samples) * 1e3:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the archive and databases")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-"))
    try:
        archive = work / "archive"
        t = time.perf_counter()
        files, total = build_archive(archive, args.size_mb)
        print(f"built archive in {time.perf_counter() - t:.1f} s under {archive}")
        bench_ingest(archive, files, total, work)
        bench_history(work)
        print(f"bench process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
