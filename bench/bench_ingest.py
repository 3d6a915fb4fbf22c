"""Benchmark: ingest at two archive sizes against DuckDB floors, interleaved; and a re-ingest with nothing new.

1. Build archives of --sizes MB (default 1000 and 2000) by replicating data/samples, every copy with fresh session ids
   (the ids the records carry, as `detect` reads them, and the ones in file and folder names) and its own mark at the
   end of every text, so no text repeats across copies.
2. For each size, in rounds (--rounds, at least 3), each in its own child process so its peak RSS is its own:
   - raw: `SELECT count(*) FROM read_ndjson_objects(<all files>)` under the ingest's memory limit, with
     `maximum_object_size` set to the archive's longest line rounded up;
   - typed: the scan ingest's readers cannot avoid (`read_json` of the typed columns they read, counted);
   - load: the same columns written into typed tables of a database file (CREATE TABLE AS): a load's floor;
   - ingest: `core.store.ingest.ingest` into a fresh database.
3. Re-ingest of the smallest archive with nothing new, through the CLI (`playbook ingest PATH --db DB`), against a
   floor that stats every file and opens the database (reading the ledger): CPU of each child process; and, for
   reference, the libraries alone (a Typer command with ingest's options, a pydantic model) doing the floor's work.
4. Prints min / median / max of CPU seconds (both cores count) and peak RSS of each, and the ratios of the medians
   (CPU, not wall). Goals: ingest CPU <= 2x the typed load's at each size; peak RSS < 2 GB at each size, and at the
   largest size <= 1.1x that at the smallest (memory stops growing with the archive); re-ingest <= 2x its floor.

Peak memory rises until DuckDB's memory reaches the ingest's cap (four batches, one batch in flight, the blocks the
pool keeps dropped once they pass a quarter of a batch), by about 1 GB, and is flat past it (3 interleaved rounds,
median: 361 MB at 1 GB, 368 at 2 GB; 355 and 362 before issue 47's round on CPU; with two batches in flight under a
cap of three it was 431 and 446). So the verdict on memory compares two sizes past that bound, where a slope is what
it measures: below it, the ratio says how far the cap is from the smallest size's peak, not whether memory keeps
growing.

The CPU ratio moves with the machine as much as with the code: the load runs on every core and costs less when the
machine is quiet. Last run (3 rounds): ingest 8.45 s at 1 GB, 2.49x the load's 3.39 s, and 16.48 s at 2 GB, 2.54x
6.50 s; the code before issue 47's round, run just before on the same machine, 2.49x and 2.35x (its 2.13x was
measured against a load of 4.37 s). Old and new ingest interleaved is the fairer comparison (docs/benchmarks.md).
With batches of 256 MB (issue 47's next stop), ingest alone at 1 GB on a quiet machine: 8.15 s against 9.12 before
(medians of 5 interleaved rounds), 2.23x the load's 3.66 s against 2.50x; peak RSS 490 MB (median) against 367, and
518-528 MB at 2 GB (1.06-1.10x).
DuckDB 2.0.1 against 2.0.0 (`--against-python`, an interpreter with 2.0.0 first on its path; 5 interleaved rounds at
1 GB): 6.24 s against 6.10 (1.02x), 1.89x the load against 1.85x, peak RSS 476 MB against 480. DuckDB 1.5.6 took 3.2x
the CPU of 2.0.1 (300 MB, 3 rounds: 6.30 s against 1.99).
Issue 47's flat cost, the secret screen asking each distinct text once (3 interleaved rounds at 1 GB, `--against` main):
6.13 s against 6.50 (0.94x), 1.77x the load's 3.45 s against 1.88x; at 2 GB 12.64 s against 12.99 (0.97x), 1.67x
the load's 7.56 s against 1.72x. Read it as an upper bound: the archive is copies
of data/samples, so a batch holds each text some thirty times and the screen's regex work all but vanishes here; in
data/samples alone about half the text bytes repeat (after replayed parts are dropped), so a real archive keeps about
half of that gain.
Since 2026-11-28 each copy's texts end in a mark of their own (`build_archive`), so a text repeats across the archive
only as it repeats within data/samples; `--same-texts` builds the old archive. At cb7c027, 3 rounds at 1 GB on a
machine shared with other work: 7.84 s, 1.96x the load's 4.00 s (the identical-copies archive read 1.77x).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved, spread  # noqa: E402
from core.transcripts import detect  # noqa: E402

MEMORY_LIMIT = "2GB"
# Peak RSS at the largest size over that at the smallest, both past the bound where DuckDB's memory reaches its cap.
FLAT_GOAL = 1.1
# Below this many MB the peak is still rising to the cap (see the docstring): the memory ratio is no slope there.
BOUND_MB = 1000


def session_ids(path: Path) -> list[str]:
    """Ids to replace in one file: the session its records name, its stem, its subagent folder's session."""
    found = detect(path).session_id
    ids = [found] if found else []
    ids.append(path.stem.split("rollout-")[-1][-36:])
    if path.parent.name == "subagents":
        ids.append(path.parent.parent.name)
    return list(dict.fromkeys(i for i in ids if len(i) == 36))


# Where each copy's mark goes: the end of every text the records carry (a message's text, a tool's content or
# output). A byte string no sample holds, so `bytes.replace` finds only the marks.
_MARK = b"@@playbook-bench-copy@@"
_TEXT_KEYS = frozenset({"text", "content", "output"})


def _marked(value: object) -> object:
    """`value` (a parsed record) with `_MARK` at the end of every text under `_TEXT_KEYS`."""
    if isinstance(value, dict):
        return {
            k: (v + _MARK.decode() if k in _TEXT_KEYS and isinstance(v, str) and v else _marked(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_marked(v) for v in value]
    return value


def _template(src: Path) -> bytes:
    """`src` with `_MARK` at the end of its texts (a line that is not a JSON object is kept as it is)."""
    lines = []
    for line in src.read_bytes().splitlines(keepends=True):
        try:
            record = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        end = b"\n" if line.endswith(b"\n") else b""
        lines.append(json.dumps(_marked(record), ensure_ascii=False, separators=(",", ":")).encode() + end)
    return b"".join(lines)


def build_archive(target: Path, size_mb: int, same_texts: bool = False) -> tuple[list[Path], int, int]:
    """Copies of the samples with distinct ids: (files, bytes, longest line in bytes). Each copy's texts end in a
    mark of their own (` [copy 0007]`), so a text repeats across the archive only as often as it repeats within
    data/samples, as in a real archive; `same_texts` keeps the copies' texts identical (the bench before 2026-11-28,
    which flattered whatever reads each distinct text once)."""
    files = [p for p in SAMPLES.rglob("*.jsonl") if p.stat().st_size > 0]
    ids = {src: session_ids(src) for src in files}
    templates = {src: src.read_bytes() if same_texts else _template(src) for src in files}
    # Every copy's mark is as long as the first's (up to copy 9999).
    shown = [text.replace(_MARK, b" [copy 0001]") for text in templates.values()]
    longest = max(len(line) for text in shown for line in text.splitlines())
    total, copy, written = 0, 0, []
    while total < size_mb * 1_000_000:
        copy += 1
        mapping: dict[str, str] = {}
        for src in files:
            for old in ids[src]:
                mapping.setdefault(old, str(uuid.uuid4()))
        for src in files:
            text, rel = templates[src], str(src.relative_to(SAMPLES))
            for old, new in mapping.items():
                text, rel = text.replace(old.encode(), new.encode()), rel.replace(old, new)
            if not same_texts:
                text = text.replace(_MARK, f" [copy {copy:04d}]".encode())
            if not ids[src]:  # a file whose records name no uuid session (short.jsonl): its name is its id
                rel = rel.replace(src.stem, f"{src.stem}-{copy:04d}")
            dest = target / f"copy{copy:04d}" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(text)
            written.append(dest)
            total += len(text)
    return written, total, longest


RAW_CHILD = """
import json, resource, sys, time
import duckdb
files, size, limit = json.loads(open(sys.argv[1]).read()), int(sys.argv[2]), sys.argv[3]
con = duckdb.connect()
con.execute(f"SET memory_limit = '{limit}'")
t, c = time.perf_counter(), time.process_time()
n = con.execute("SELECT count(*) FROM read_ndjson_objects(?, ignore_errors = true, maximum_object_size = ?)",
                [files, size]).fetchone()[0]
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "lines": n,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

# The typed columns of each format, as `read_json` gives them: Claude Code's message content as JSON text (its
# reader types the content blocks in the same parse instead, with `json_transform`), Codex's as its reader declares.
CC_COLUMNS = (
    "{type: 'VARCHAR', sessionId: 'VARCHAR', timestamp: 'VARCHAR', uuid: 'VARCHAR', cwd: 'VARCHAR',"
    " gitBranch: 'VARCHAR', version: 'VARCHAR', isSidechain: 'BOOLEAN', isMeta: 'BOOLEAN',"
    " isCompactSummary: 'BOOLEAN', agentId: 'VARCHAR', summary: 'VARCHAR',"
    " message: 'STRUCT(id VARCHAR, content JSON)'}"
)

# The scan ingest's readers cannot avoid: every line parsed into the typed columns, nothing else.
TYPED_CHILD = """
import json, resource, sys, time
import duckdb
sys.path.insert(0, sys.argv[4])
from core.transcripts import codex
files, size, limit, cc_columns = json.loads(open(sys.argv[1]).read()), int(sys.argv[2]), sys.argv[3], sys.argv[5]
con = duckdb.connect()
con.execute(f"SET memory_limit = '{limit}'")
t, c = time.perf_counter(), time.process_time()
n = 0
for kind, column, columns in (("cc", "message", cc_columns), ("codex", "payload", codex._COLUMNS)):
    group = [f for f in files if ("/codex/" in f) == (kind == "codex")]
    n += con.execute(f"SELECT count({column}) FROM read_json(?, format = 'newline_delimited', ignore_errors = true,"
                     f" maximum_object_size = {size}, columns = {columns})", [group]).fetchone()[0]
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "lines": n,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

# The floor of a load: the same columns parsed and written into typed tables of a database file (CREATE TABLE AS),
# on one connection, as the ingest must at least do.
LOAD_CHILD = """
import json, resource, sys, time
import duckdb
sys.path.insert(0, sys.argv[4])
from core.transcripts import codex
files, size, limit, db, cc_columns = (json.loads(open(sys.argv[1]).read()), int(sys.argv[2]), sys.argv[3], sys.argv[5],
                                       sys.argv[6])
con = duckdb.connect(db)
con.execute(f"SET memory_limit = '{limit}'")
t, c = time.perf_counter(), time.process_time()
n = 0
for name, columns in (("cc", cc_columns), ("codex", codex._COLUMNS)):
    group = [f for f in files if ("/codex/" in f) == (name == "codex")]
    con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_json(?, format = 'newline_delimited', ignore_errors = true,"
                f" maximum_object_size = {size}, columns = {columns})", [group])
    n += con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
con.close()
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "lines": n,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

INGEST_CHILD = """
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from core.store.db import connect
from core.store.ingest import ingest
con = connect(sys.argv[1])
t, c = time.perf_counter(), time.process_time()
s = ingest(con, [Path(sys.argv[2])], **({"batch_bytes": int(sys.argv[4]) << 20} if sys.argv[4] != "0" else {}))
seconds, cpu = time.perf_counter() - t, time.process_time() - c
con.close()
print(json.dumps({"seconds": seconds, "cpu": cpu, "sessions": s.sessions, "messages": s.messages,
                  "failed": s.count("failed"), "bad_lines": s.bad_lines,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


# The floor of a re-ingest with nothing new: what it cannot avoid, Python and DuckDB started, the ledger read from the
# database and every file under the folder found and stat'ed.
FLOOR_CHILD = """
import os, sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
known = {p: (s, m) for p, s, m in con.execute("SELECT path, size, mtime FROM files").fetchall()}
changed = 0
for root, _, names in os.walk(sys.argv[2]):
    for name in names:
        path = os.path.join(root, name)
        st = os.stat(path)
        changed += known.get(path) != (st.st_size, st.st_mtime)
print(changed)
"""


# The libraries a re-ingest cannot do without, with no code of ours, doing the floor's work: a Typer command with the
# options of `ingest`, its settings a pydantic model over the PLAYBOOK_* variables (as flows.config reads them), then
# the floor's reads. A reference, not a goal.
LIBRARIES_CHILD = """
import os
from pathlib import Path
from typing import Annotated, Literal
import typer
from pydantic import BaseModel, ConfigDict
class Settings(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_default=True)
    db: Path = Path("data/playbook.duckdb")
    wait_s: float = 15.0
def ingest(paths: Annotated[list[str] | None, typer.Argument()] = None,
           fmt: Annotated[Literal["auto", "claude-code", "codex", "messages", "memory"],
                          typer.Option("--format")] = "auto",
           as_json: Annotated[bool, typer.Option("--json")] = False,
           db: Annotated[Path | None, typer.Option("--db")] = None,
           wait: Annotated[float | None, typer.Option("--wait")] = None) -> None:
    import duckdb
    env = {k.lower()[9:]: v for k, v in os.environ.items() if k.lower().startswith("playbook_")}
    flags = {k: v for k, v in (("db", db), ("wait_s", wait)) if v is not None}
    settings = Settings(**{**env, **flags})
    con = duckdb.connect(str(settings.db), read_only=True)
    known = {p: (s, m) for p, s, m in con.execute("SELECT path, size, mtime FROM files").fetchall()}
    changed = 0
    for folder in paths or []:
        for root, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(root, name)
                st = os.stat(path)
                changed += known.get(path) != (st.st_size, st.st_mtime)
    print(changed)
typer.run(ingest)
"""


def child(code: str, *args: str, python: str = sys.executable) -> dict:
    proc = subprocess.run([python, "-c", code, *args], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"bench child failed: {proc.stderr.strip().splitlines()[-1]}")
    # DuckDB draws its progress bar on stdout when a query runs past 2 s of wall time (a busy machine, 2 GB), with no
    # line break before the result: the result is the last line's JSON object.
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    try:
        return json.loads(last[0][last[0].find("{") :])
    except ValueError:
        raise SystemExit(f"bench child printed no result: {proc.stdout[-500:]!r} {proc.stderr[-500:]!r}") from None


def child_cpu(argv: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of one child process running `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if proc.returncode:
        raise SystemExit(f"bench child failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_size(
    work: Path,
    size_mb: int,
    rounds: int,
    batch_mb: int,
    against: Path | None = None,
    against_python: str | None = None,
    same_texts: bool = False,
) -> dict[str, list[dict]]:
    """Build an archive of `size_mb` and run the four children on it in interleaved rounds (five with `against` or
    `against_python`: the ingest of another checkout, or of this one under another interpreter, in the same rounds)."""
    archive = work / f"archive-{size_mb}"
    t = time.perf_counter()
    files, total, longest = build_archive(archive, size_mb, same_texts)
    object_size = 1 << max(20, (longest + 1).bit_length())  # the longest line, rounded up, at least 1 MiB
    print(
        f"archive: {total / 1e6:.0f} MB in {len(files)} files built in {time.perf_counter() - t:.1f} s;"
        f" longest line {longest:,} bytes, baseline maximum_object_size {object_size:,}"
    )
    listing = work / f"listing-{size_mb}.json"
    listing.write_text(json.dumps([str(f) for f in files]))
    results: dict[str, list[dict]] = {"raw": [], "typed": [], "load": [], "ingest": []}

    def raw() -> float:
        results["raw"].append(child(RAW_CHILD, str(listing), str(object_size), MEMORY_LIMIT))
        return float(results["raw"][-1]["cpu"])

    def typed() -> float:
        results["typed"].append(child(TYPED_CHILD, str(listing), str(object_size), MEMORY_LIMIT, str(ROOT), CC_COLUMNS))
        return float(results["typed"][-1]["cpu"])

    def load() -> float:
        db = work / f"load-{size_mb}-{len(results['load'])}.duckdb"
        results["load"].append(
            child(LOAD_CHILD, str(listing), str(object_size), MEMORY_LIMIT, str(ROOT), str(db), CC_COLUMNS)
        )
        db.unlink()
        return float(results["load"][-1]["cpu"])

    def ingest() -> float:
        db = work / f"bench-{size_mb}-{len(results['ingest'])}.duckdb"
        results["ingest"].append(child(INGEST_CHILD, str(db), str(archive), str(ROOT), str(batch_mb)))
        db.unlink()
        return float(results["ingest"][-1]["cpu"])

    children = {"raw": raw, "typed": typed, "load": load, "ingest": ingest}
    if against is not None or against_python is not None:
        results["against"] = []
        code, python = str(against or ROOT), against_python or sys.executable

        def other() -> float:
            db = work / f"against-{size_mb}-{len(results['against'])}.duckdb"
            results["against"].append(child(INGEST_CHILD, str(db), str(archive), code, str(batch_mb), python=python))
            db.unlink()
            return float(results["against"][-1]["cpu"])

        children["against"] = other
    interleaved(children, max(3, rounds))
    last = results["ingest"][-1]
    print(
        f"raw scan: {results['raw'][-1]['lines']:,} lines; ingest: {last['sessions']:,} sessions,"
        f" {last['messages']:,} message parts, {last['failed']} failed files, {last['bad_lines']} bad lines"
    )
    for name, got in results.items():
        print(
            f"{name:7s} CPU {spread([r['cpu'] for r in got])} s, wall {spread([r['seconds'] for r in got])} s,"
            f" peak RSS {spread([r['rss_kb'] / 1024 for r in got], digits=0)} MB"
        )
    results["total"] = [{"bytes": total}]
    return results


def measure_reingest(work: Path, archive: Path, rounds: int) -> dict[str, list[float]]:
    """CPU of `playbook ingest` of `archive` with nothing new, of its floor, and of the libraries alone doing the
    floor's work, interleaved."""
    db = work / "reingest.duckdb"
    home = work / "home"  # no settings of the machine's user
    home.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "flows.cli", "ingest", str(archive), "--db", str(db)]
    child_cpu(command, home)  # the first ingest reads everything
    measures = {
        "reingest": lambda: child_cpu(command, home),
        "floor": lambda: child_cpu([sys.executable, "-c", FLOOR_CHILD, str(db), str(archive)], home),
        "libraries": lambda: child_cpu([sys.executable, "-c", LIBRARIES_CHILD, str(archive), "--db", str(db)], home),
    }
    return interleaved(measures, max(3, rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes", default="1000,2000", help="archive sizes in MB, comma-separated (default 1000,2000: past the bound)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-mb", type=int, default=0, help="ingest batch size (default: the product's)")
    parser.add_argument("--keep", action="store_true", help="keep the archives and databases")
    parser.add_argument(
        "--same-texts",
        action="store_true",
        help="every copy's texts identical (as before 2026-11-28: flatters reading each distinct text once)",
    )
    parser.add_argument(
        "--against", type=Path, help="another checkout (say, main's) whose ingest runs in the same rounds, as a row"
    )
    parser.add_argument(
        "--against-python",
        help="the interpreter of that row (say, an environment with another DuckDB); alone, it runs this checkout",
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if len(sizes) > 1 and sizes[0] < BOUND_MB:
        print(f"note: below {BOUND_MB} MB peak memory still rises to the cap; the memory ratio is not a slope there")
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-"))
    try:
        rows: list[Row] = []
        by_size: dict[int, dict[str, list[dict]]] = {}
        for size_mb in sizes:
            got = by_size[size_mb] = measure_size(
                work, size_mb, args.rounds, args.batch_mb, args.against, args.against_python, args.same_texts
            )
            label = f"ingest {got['total'][0]['bytes'] / 1e6:.0f} MB"
            cpu = {name: [float(r["cpu"]) for r in got[name]] for name in ("raw", "typed", "load", "ingest")}
            rows.append(
                Row("ingest", f"{label}, CPU", "s", cpu["ingest"], "raw read_ndjson_objects count, CPU", cpu["raw"])
            )
            against_load = Row(
                "ingest", f"{label}, CPU", "s", cpu["ingest"], "typed load (CREATE TABLE AS), CPU", cpu["load"]
            )
            against_load.goal, against_load.met = "<= 2x", (against_load.ratio or 0) <= 2
            if "against" in got:
                other = [float(r["cpu"]) for r in got["against"]]
                name = " under ".join(str(x) for x in (args.against, args.against_python) if x is not None)
                rows += [
                    Row("ingest", f"{label}, CPU", "s", cpu["ingest"], f"ingest of {name}, CPU", other),
                    Row(
                        "ingest",
                        f"{label}, {name}, CPU",
                        "s",
                        other,
                        "typed load (CREATE TABLE AS), CPU",
                        cpu["load"],
                    ),
                    Row(
                        "ingest",
                        f"{label}, {name}, peak RSS",
                        "MB",
                        [r["rss_kb"] / 1024 for r in got["against"]],
                    ),
                ]
            rss = [r["rss_kb"] / 1024 for r in got["ingest"]]
            rows += [
                against_load,
                Row("ingest", f"{label}, peak RSS", "MB", rss, goal="< 2048 MB", met=max(rss) < 2048),
            ]
        if len(sizes) > 1:
            small, large = by_size[sizes[0]], by_size[sizes[-1]]
            flat = Row(
                "ingest",
                f"peak RSS at {large['total'][0]['bytes'] / 1e6:.0f} MB",
                "MB",
                [r["rss_kb"] / 1024 for r in large["ingest"]],
                f"peak RSS at {small['total'][0]['bytes'] / 1e6:.0f} MB",
                [r["rss_kb"] / 1024 for r in small["ingest"]],
            )
            flat.goal, flat.met = f"<= {FLAT_GOAL}x", (flat.ratio or 0) <= FLAT_GOAL
            rows.append(flat)
        again = measure_reingest(work, work / f"archive-{sizes[0]}", args.rounds)
        floor = "stat every file + open the database and read the ledger, CPU"
        reingest = Row(
            "ingest",
            f"re-ingest of {sizes[0]} MB, nothing new (CLI), CPU",
            "s",
            again["reingest"],
            floor,
            again["floor"],
        )
        reingest.goal, reingest.met = "<= 2x", (reingest.ratio or 0) <= 2
        libraries = Row(
            "ingest",
            "the same with the libraries alone (a Typer command, a pydantic model, DuckDB), CPU",
            "s",
            again["libraries"],
            floor,
            again["floor"],
        )
        rows += [reingest, libraries]
        emit(rows)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
