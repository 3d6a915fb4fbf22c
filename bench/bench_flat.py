"""Benchmark: CPU per session against the size of the playbook (goal: 5,000 entries within 1.2x of 100), with the
default settings, on both provider paths: a model (an instant in-process stub) and the rules miner (`heuristic`).

For each size, a playbook of that many entries is stored, `--sessions` synthetic sessions are ingested, and
the run loop (`run_curation`, the plain steps, no Prefect) curates them. With the stub each session tags two
entries helpful, adds one lesson and deletes another, so the playbook stays at its size; with the rules the
miner reads each session (the synthetic ones teach it the same two lessons, added once). Measured: process CPU
seconds of the whole run divided by the sessions, which includes DuckDB's own
threads (every open, query, version write and exchange record) as well as ours. The sizes are run in
alternating rounds (`--rounds`, at least 3), each on a fresh copy of a database prepared once per size (the
playbook, the sessions and the vectors of its entries, as a long-lived playbook has them); the table gives
min / median / max per size and the ratio of medians.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit  # noqa: E402
from bench.bench_pipeline import SESSIONS_SQL  # noqa: E402
from core.exposure import LedgerLine, Shown  # noqa: E402
from core.llm.base import LLMRequest, LLMResponse, Provider  # noqa: E402
from core.models import Entry, Playbook  # noqa: E402
from core.sections import DEFAULT_SECTIONS  # noqa: E402
from core.selection import SessionFilter  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.exposure import store_ledger_lines  # noqa: E402
from core.store.registry import ensure_playbook  # noqa: E402
from core.store.versions import write_version  # noqa: E402
from flows.config import Settings  # noqa: E402
from flows.models.providers import make_provider  # noqa: E402
from flows.run.curation import run_curation  # noqa: E402
from flows.workspace import Workspace  # noqa: E402

WARMUP = 16
VOCABULARY = (
    "build cache test deploy schema index retry timeout lock parser fixture migration branch commit review"
    " lint format type import module package version config secret token session socket thread process queue"
    " worker backend frontend browser render layout style route handler request response header cookie query"
    " column table join filter sort page stream buffer file folder path shell script docker image volume port"
).split()


def words(seed: int, n: int = 8) -> str:
    """A sentence of `n` words drawn for `seed`: distinct lessons, not near-duplicates of each other."""
    return " ".join(random.Random(seed).sample(VOCABULARY, n))


class Stub(Provider):
    """Answers at once: two helpful tags, one ADD and one DELETE (the size stays put)."""

    name = "benchstub"
    cacheable = False

    def complete(self, request: LLMRequest) -> LLMResponse:
        # Lazily, so the stub itself costs the same at any size.
        live = (e for items in request.context["playbook"].sections.values() for e in items)
        if request.step == "reflector":
            first = [e.name for e in itertools.islice(live, 2)]
            payload: dict[str, Any] = {
                "analysis": "bench",
                "bullet_tags": [{"name": i, "tag": "helpful", "rationale": "bench"} for i in first],
            }
        else:
            # The sessions of an epoch see the same frozen playbook: each deletes a different one of its first
            # entries (by its number), so every DELETE applies and the size stays put.
            number = int(str(request.session_id).rsplit("-", 1)[1])
            victim = next(itertools.islice(live, number % 64, None))
            payload = {
                "reasoning": "bench",
                "operations": [
                    {"type": "ADD", "text": f"Check the {words(1_000_000 + number)} first.", "section": "OTHERS"},
                    {"type": "DELETE", "target_id": victim.name, "reason": "keep the size"},
                ],
            }
        return LLMResponse(text=json.dumps(payload), provider=self.name, model="stub")


def seeded(size: int) -> Playbook:
    """`size` entries spread over the default sections, as a long-lived playbook would hold them."""
    names = DEFAULT_SECTIONS.names
    sections: dict[str, list[Entry]] = {n: [] for n in names}
    for i in range(size):
        section = names[i % len(names)]
        slug = DEFAULT_SECTIONS.slug_of(section)
        text = f"Lesson {i}: check the {words(i)} first."
        sections[section].append(Entry(name=f"{slug}-{i // len(names) + 1:03d}", text=text, helpful=i % 5))
    return Playbook(sections=sections)


def _settings(work: Path, epoch_size: int) -> Workspace:
    # The defaults a user runs with: the request budget (a 5,000-entry playbook is cut to what each session is
    # about) and the near-duplicate threshold.
    return Workspace.of(Settings(db=work / "bench.duckdb", out_dir=work / "out", epoch_size=epoch_size))


def prepare(size: int, sessions: int, epoch_size: int, work: Path) -> Path:
    """A database every round at `size` starts from: the playbook stored, the sessions ingested, and the first
    epochs curated (not measured: they embed every seeded entry once, stored as a long-lived playbook's vectors
    are). Built once per size; each round runs on a copy."""
    folder = work / f"template-{size}"
    settings = _settings(folder, epoch_size)
    with open_db(settings.settings.db) as con:
        ensure_playbook(con, "default")
        write_version(con, "default", seeded(size), source="import")
        con.execute(SESSIONS_SQL.replace("$n", str(sessions + WARMUP)))
        # Each session's agent had the export's entries (the first 40, as the SessionStart hook records it), so the
        # reflector sees them and the stub's tags count.
        had = [e.name for _, e in seeded(size).entries()][:40]
        lines = [
            LedgerLine(
                session_id=f"bench-{i:05d}",
                at=datetime(2026, 1, 1, tzinfo=UTC),
                playbooks=[Shown(playbook="default", version=1, shown=had)],
            )
            for i in range(sessions + WARMUP)
        ]
        store_ledger_lines(con, "bench", lines, 0, 0)
    stub = Stub()
    run_curation(
        settings,
        "default",
        settings.provider("heuristic"),
        factory=lambda s, t, c: stub,
        chosen=SessionFilter(limit=WARMUP),
    )
    return folder


def one_run(template: Path, size: int, sessions: int, epoch_size: int, rules: bool) -> float:
    """CPU seconds per session for one run at `size` entries, on a fresh copy of the size's template: the stub
    model, or the rules miner (`rules`)."""
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-flat-"))
    try:
        shutil.copytree(template, work, dirs_exist_ok=True)
        settings = _settings(work, epoch_size)
        stub = Stub()
        spec = settings.provider("heuristic")
        factory = make_provider if rules else (lambda s, t, c: stub)
        # Warm-up outside the measure: one epoch fills this process's caches as a long run's earlier epochs would.
        run_curation(settings, "default", spec, factory=factory, chosen=SessionFilter(limit=epoch_size))
        cpu = time.process_time()
        summary = run_curation(settings, "default", spec, factory=factory)
        used = time.process_time() - cpu
        assert summary.sessions_applied == sessions - epoch_size, summary.model_dump_json()
        with open_db(settings.settings.db) as con:
            row = con.execute(
                "SELECT n_entries FROM versions WHERE playbook = 'default' ORDER BY version DESC LIMIT 1"
            ).fetchone()
        # The playbook stayed at its size (the rules add the few lessons the synthetic sessions teach, once).
        assert row is not None and size <= row[0] <= size + 5, (row, size)
        return used / summary.sessions_applied
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,5000", help="playbook sizes, the first is the baseline")
    parser.add_argument("--sessions", type=int, default=160)
    parser.add_argument("--epoch-size", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = {"a model (stub)": False, "the rules miner": True}
    samples: dict[tuple[str, int], list[float]] = {(k, s): [] for k in kinds for s in sizes}
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-flat-templates-"))
    try:
        templates = {size: prepare(size, args.sessions + args.epoch_size, args.epoch_size, work) for size in sizes}
        for _ in range(max(3, args.rounds)):
            for kind, rules in kinds.items():
                for size in sizes:
                    n = args.sessions + args.epoch_size
                    samples[(kind, size)].append(one_run(templates[size], size, n, args.epoch_size, rules))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"CPU per session, {args.sessions} sessions per run, epochs of {args.epoch_size}, {args.rounds} rounds")
    rows = []
    for kind in kinds:
        base = statistics.median(samples[(kind, sizes[0])])
        print(f"{kind}:\n{'entries':>8} {'min ms':>8} {'median ms':>10} {'max ms':>8} {'ratio':>6}")
        for size in sizes:
            got = samples[(kind, size)]
            print(
                f"{size:>8} {min(got) * 1e3:8.1f} {statistics.median(got) * 1e3:10.1f} {max(got) * 1e3:8.1f}"
                f" {statistics.median(got) / base:5.2f}x"
            )
        for size in sizes[1:]:
            ms = [x * 1e3 for x in samples[(kind, size)]]
            row = Row("flat", f"CPU per session, {size:,} entries, {kind}", "ms", ms, f"{sizes[0]:,} entries")
            row.base = [x * 1e3 for x in samples[(kind, sizes[0])]]
            row.goal, row.met = "<= 1.2x", (row.ratio or 0) <= 1.2
            rows.append(row)
    print("goal: the largest size within 1.2x of the first")
    emit(rows)


if __name__ == "__main__":
    main()
