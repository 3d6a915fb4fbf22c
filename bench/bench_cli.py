"""Benchmark: the CPU of each read command against its own floor, a bare Python that opens the same database
read-only and runs the very queries the command ran; and `--help` and an idle `nightly` against `python -c pass`.

The store is realistic: a playbook of 10,000 versions (60 entries, 3 changes a version, written with SQL) and
300 sessions. Each command's queries are recorded first, by running it in this process with its connection
wrapped (the statements `core.store.db` runs to open and check the file are left out: they are the command's
overhead, not the query); the floor replays them in a child `python -c` that imports only duckdb. Every sample is
a process of its own, its CPU (user + system) read from `getrusage(RUSAGE_CHILDREN)`, so machine load cannot make
a ratio pass; commands and floors alternate (interleaved), --rounds rounds (min / median / max).

Goals: each read command <= 2x its floor; `--help` < 1 s of CPU; an idle `nightly` (the bundled samples, already
curated with the heuristic provider) < 5 s of CPU (it must not start Prefect). A reference row, no goal: the
libraries a read command cannot do without (a Typer command with the options of `sql`, its settings a pydantic
model over the environment, DuckDB) running the same query as `sql "select 1"`, with no code of ours.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

import core.store.db as store_db  # noqa: E402
from bench._table import Row, emit, interleaved  # noqa: E402
from core.store.db import open_db  # noqa: E402
from flows.cli import app  # noqa: E402
from flows.config import Settings  # noqa: E402
from flows.run.curation import run_curation  # noqa: E402
from flows.run.ingest import ingest_with  # noqa: E402
from flows.workspace import Workspace  # noqa: E402
from tests.helpers import long_history  # noqa: E402

GOAL = 2.0
READS = {
    "show": ["show"],
    "history": ["history"],
    "history --limit 0": ["history", "--limit", "0"],
    "diff 1 5000": ["diff", "1", "5000"],
    "why mis-003": ["why", "mis-003"],
    'sql "select 1"': ["sql", "select 1"],
    'sql "select count(*) from entries"': ["sql", "select count(*) from entries"],
    "sessions": ["sessions"],
}
SESSIONS = """
INSERT INTO sessions (session_id, format, source_path, project, cwd, started_at, ended_at, n_messages,
                      n_user_prompts, n_tool_calls, n_tool_errors, title)
    SELECT 's' || i, 'claude-code', '/archive/s' || i || '.jsonl', 'project-' || (i % 12),
           '/work/project-' || (i % 12), TIMESTAMPTZ '2026-01-01' + INTERVAL (i) HOUR,
           TIMESTAMPTZ '2026-01-01' + INTERVAL (i) HOUR + INTERVAL 20 MINUTE,
           40 + i % 50, 3 + i % 7, 12 + i % 30, i % 4, 'session ' || i
    FROM range(1, 301) t(i)
"""
# What `core.store.db` runs to open, check or migrate a file: the command's overhead, not its query.
_OVERHEAD = ("schema_version", "derived_objects", "information_schema", "pragma_database_size", "SET ")
# The libraries every read command loads, with no code of ours: a Typer command with the options of `sql`, settings
# a pydantic model over the PLAYBOOK_* variables (as flows.config reads them; pydantic-settings is no longer one of
# them), and the same query as `sql "select 1"` (Rich only on a terminal).
# What a read command would cost if it were only its libraries: a reference, not a goal.
LIBRARIES = (
    "import os\n"
    "from pathlib import Path\n"
    "from typing import Annotated\n"
    "import typer\n"
    "from pydantic import BaseModel, ConfigDict\n"
    "class Settings(BaseModel):\n"
    "    model_config = ConfigDict(extra='ignore', validate_default=True)\n"
    "    db: Path = Path('data/playbook.duckdb')\n"
    "    wait_s: float = 15.0\n"
    "def sql(query: str, as_json: Annotated[bool, typer.Option('--json')] = False,\n"
    "        db: Annotated[Path | None, typer.Option('--db')] = None,\n"
    "        wait: Annotated[float | None, typer.Option('--wait')] = None) -> None:\n"
    "    import duckdb\n"
    "    env = {k.lower()[9:]: v for k, v in os.environ.items() if k.lower().startswith('playbook_')}\n"
    "    flags = {k: v for k, v in (('db', db), ('wait_s', wait)) if v is not None}\n"
    "    settings = Settings(**{**env, **flags})\n"
    "    con = duckdb.connect(str(settings.db), read_only=True)\n"
    "    print(con.execute(query).fetchall())\n"
    "typer.run(sql)\n"
)
FLOOR = (
    "import pickle, sys, duckdb\n"
    "con = duckdb.connect(sys.argv[1], read_only=True)\n"
    "for sql, params in pickle.load(open(sys.argv[2], 'rb')):\n"
    "    print(con.execute(sql, params).fetchall())\n"
)


class _Recording:
    """A DuckDB connection that keeps every statement run through it (and its parameters)."""

    def __init__(self, con: Any, log: list[tuple[str, Any]]) -> None:
        self._con, self._log = con, log

    def execute(self, sql: str, params: Any = None) -> Any:
        self._log.append((sql, params))
        return self._con.execute(sql, params) if params is not None else self._con.execute(sql)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


@contextmanager
def _recorded(log: list[tuple[str, Any]]) -> Iterator[None]:
    original = store_db.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        return _Recording(original(*args, **kwargs), log)

    store_db.connect = connect  # type: ignore[assignment]
    try:
        yield
    finally:
        store_db.connect = original


def queries_of(args: list[str], db: Path) -> list[tuple[str, Any]]:
    """The statements `playbook ARGS` runs on `db` once it is open (not those that open and check it)."""
    log: list[tuple[str, Any]] = []
    with _recorded(log):
        done = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert done.exit_code == 0, done.output
    return [(sql, params) for sql, params in log if not any(mark in sql for mark in _OVERHEAD)]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def cpu(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """The CPU seconds (user + system) of `command`, run to its end as a child process."""
    before = _children_cpu()
    subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=True)
    return _children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--versions", type=int, default=10_000)
    args = parser.parse_args()
    rounds = max(3, args.rounds)
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-cli-"))
    db = work / "history.duckdb"
    long_history(db, args.versions)
    with open_db(db) as con:
        con.execute(SESSIONS)
    samples = ROOT / "data" / "samples"
    idle = Workspace.of(Settings(db=work / "samples.duckdb", out_dir=work / "out"))
    ingest_with(idle, [samples])
    run_curation(idle, "default", idle.provider("heuristic"))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "PREFECT_API"))}
    env["PLAYBOOK_OUT_DIR"] = str(work / "out")
    playbook = str(Path(sys.executable).with_name("playbook"))
    measures = {}
    for name, command in READS.items():
        floor_file = work / f"floor-{len(measures)}.pickle"
        floor_file.write_bytes(pickle.dumps(queries_of(command, db)))
        measures[name] = [playbook, *command, "--db", str(db)]
        measures[f"floor {name}"] = [sys.executable, "-c", FLOOR, str(db), str(floor_file)]
    measures["libraries"] = [sys.executable, "-c", LIBRARIES, "select 1", "--db", str(db)]
    measures["python -c pass"] = [sys.executable, "-c", "pass"]
    measures["--help"] = [playbook, "--help"]
    measures["nightly (idle)"] = [
        playbook,
        "nightly",
        str(samples),
        "--llm",
        "heuristic",
        "--db",
        str(idle.settings.db),
    ]
    samples_cpu = interleaved({n: (lambda c=c: cpu(c, env, work)) for n, c in measures.items()}, rounds)

    rows = []
    for name in READS:
        row = Row(
            "cli",
            f"playbook {name}",
            "s CPU",
            samples_cpu[name],
            "a bare Python running the same queries",
            samples_cpu[f"floor {name}"],
            goal=f"<= {GOAL}x",
        )
        row.met = row.ratio is not None and row.ratio <= GOAL
        rows.append(row)
    reference = Row(
        "cli",
        'the libraries alone (a Typer command, a pydantic model, DuckDB) and sql "select 1"',
        "s CPU",
        samples_cpu["libraries"],
        "a bare Python running the same queries",
        samples_cpu['floor sql "select 1"'],
    )
    rows.append(reference)
    for name, limit in (("--help", 1.0), ("nightly (idle)", 5.0)):
        row = Row(
            "cli", f"playbook {name}", "s CPU", samples_cpu[name], "python -c pass", samples_cpu["python -c pass"]
        )
        row.goal, row.met = f"< {limit} s", statistics.median(samples_cpu[name]) < limit
        rows.append(row)
    print(f"store: {args.versions:,} versions, 300 sessions; floors: the command's own queries in `python -c`")
    for name in READS:
        floor = samples_cpu[f"floor {name}"]
        spread = (min(floor), statistics.median(floor), max(floor))
        print(f"  floor of {name}: " + " / ".join(f"{v:.3f}" for v in spread) + " s CPU")
    emit(rows)


if __name__ == "__main__":
    main()
