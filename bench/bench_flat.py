"""Benchmark: CPU per session against the size of the playbook (goal: 5,000 entries within 1.2x of 100), with the
default settings, on both provider paths (a model, as an instant in-process stub, and the rules miner) and with both
sentence embedders (the MiniLM model of the `embeddings` extra, and the `lexical` stems every install has); and the
peak memory of a default run that embeds a 5,000-entry playbook of long entries (goal: under 1.5 GB).

Texts are of real length: entries draw their lengths from the hand-labelled lessons of `data/lessons` (median 70
characters) with one in five long (150-480 characters, the limit is 500); each session's reflection is 6 to 10
sentences of 60-260 characters (its findings, which the curator step embeds), and one in four also quotes a long
error output (~1,500 characters, one "sentence" the model cuts at 256 tokens).

For each size and embedder, a playbook of that many entries is stored with its vectors (as a long-lived playbook
has them), `--sessions` synthetic sessions are ingested, and the run loop (`run_curation`, the plain steps, no
Prefect) curates them. With the stub each session tags two entries helpful, adds one lesson and deletes another,
so the playbook stays at its size; with the rules the miner reads each session. Measured: process CPU seconds of
the whole run divided by the sessions (DuckDB's threads included), and the CPU of a one-epoch run in a fresh
process with the export that follows it, as `playbook curate --limit 8` runs (what a run costs whatever its
sessions: reading the playbook and its vectors, the duplicate rate, screening and writing the export), after a
run that exported (the screen's verdicts kept, `core.store.screen_verdicts`) and with none kept (the first run of
a new screen, or under a new set of what the user vouches for: the export screens what its budget would take). Sizes,
paths and embedders are run in alternating rounds (`--rounds`, at least 3), each on a fresh copy of a database
prepared once.

The peak memory is measured in a child process (its own `ru_maxrss`), capped with `RLIMIT_AS` at `--cap-gb` so a
run that would take the machine down fails with MemoryError instead (reported as killed at the cap): a default-
settings run of two epochs against 5,000 long entries (350-500 characters) whose vectors are not stored yet, as
after an import, against the same at 100 entries.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import re
import resource
import shutil
import statistics
import subprocess
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
from core.llm.embed import load_embedder  # noqa: E402
from core.models import Entry, Playbook  # noqa: E402
from core.sections import DEFAULT_SECTIONS  # noqa: E402
from core.selection import SessionFilter  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.embeddings import store_vectors  # noqa: E402
from core.store.exposure import store_ledger_lines  # noqa: E402
from core.store.registry import ensure_playbook  # noqa: E402
from core.store.versions import write_version  # noqa: E402
from flows.config import Settings  # noqa: E402
from flows.delivery.exports import export_files  # noqa: E402
from flows.models.providers import make_provider  # noqa: E402
from flows.run.curation import run_curation  # noqa: E402
from flows.workspace import Workspace  # noqa: E402

WARMUP = 16


def _real_lessons() -> list[str]:
    paraphrases = json.loads((ROOT / "data/lessons/paraphrases.json").read_text())["lessons"]
    lessons = [wording for group in paraphrases for wording in group]
    mined = json.loads((ROOT / "data/lessons/mined.json").read_text())["sessions"]
    return lessons + [lesson["lesson"] for s in mined.values() for lesson in s["lessons"]]


REAL = _real_lessons()
LENGTHS = sorted(len(t) for t in REAL)  # median 70 characters, the longest 153
VOCABULARY = sorted({w for t in REAL for w in re.findall(r"[a-z]{3,}", t.lower())})  # ~700 words


def prose(seed: int, chars: int) -> str:
    """One sentence of about `chars` characters, of words drawn for `seed` (no sentence end inside)."""
    rng = random.Random(seed)
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < chars:
        out.append(rng.choice(VOCABULARY))
    return " ".join(out).capitalize()[: max(20, chars - 1)].rstrip() + "."


def lesson_length(seed: int, long: bool = False) -> int:
    """A lesson's length: a labelled lesson's, or one in five 150-480 characters (all 350-500 when `long`)."""
    rng = random.Random(seed * 7 + 1)
    if long:
        return rng.randint(350, 500)
    return rng.randint(150, 480) if rng.random() < 0.2 else rng.choice(LENGTHS)


def reflection(number: int) -> str:
    """A reflection's analysis of real length: 6-10 sentences, and in one session of four a long quoted error."""
    rng = random.Random(10_000_000 + number)
    said = [prose(20_000_000 + number * 16 + i, rng.randint(60, 260)) for i in range(rng.randint(6, 10))]
    if number % 4 == 0:
        said.insert(2, "The run failed with " + prose(30_000_000 + number, 1500))
    return " ".join(said)


class Stub(Provider):
    """Answers at once: two helpful tags, one ADD and one DELETE (the size stays put)."""

    name = "benchstub"
    cacheable = False

    def complete(self, request: LLMRequest) -> LLMResponse:
        # Lazily, so the stub itself costs the same at any size.
        live = (e for items in request.context["playbook"].sections.values() for e in items)
        number = int(str(request.session_id).rsplit("-", 1)[1])
        if request.step == "reflector":
            first = [e.name for e in itertools.islice(live, 2)]
            payload: dict[str, Any] = {
                "analysis": reflection(number),
                "bullet_tags": [{"name": i, "tag": "helpful", "rationale": "bench"} for i in first],
            }
        else:
            # The sessions of an epoch see the same frozen playbook: each deletes a different one of its first
            # entries (by its number), so every DELETE applies and the size stays put.
            victim = next(itertools.islice(live, number % 64, None))
            text = prose(1_000_000 + number, lesson_length(1_000_000 + number))
            payload = {
                "reasoning": "bench",
                "operations": [
                    {"type": "ADD", "text": text, "section": "OTHERS"},
                    {"type": "DELETE", "target_id": victim.name, "reason": "keep the size"},
                ],
            }
        return LLMResponse(text=json.dumps(payload), provider=self.name, model="stub")


def seeded(size: int, long: bool = False) -> Playbook:
    """`size` entries of real lesson length spread over the default sections, as a long-lived playbook holds them."""
    names = DEFAULT_SECTIONS.names
    sections: dict[str, list[Entry]] = {n: [] for n in names}
    for i in range(size):
        section = names[i % len(names)]
        slug = DEFAULT_SECTIONS.slug_of(section)
        text = prose(i, lesson_length(i, long))
        sections[section].append(Entry(name=f"{slug}-{i // len(names) + 1:03d}", text=text, helpful=i % 5))
    return Playbook(sections=sections)


def _settings(work: Path, epoch_size: int, embedder: str = "auto") -> Workspace:
    # The defaults a user runs with (the request budget, the near-duplicate threshold), the embedder aside.
    settings = Settings(db=work / "bench.duckdb", out_dir=work / "out", epoch_size=epoch_size, near_duplicates=embedder)
    return Workspace.of(settings)


def _store_playbook(folder: Path, playbook: Playbook, sessions: int, epoch_size: int, embedder: str) -> Workspace:
    settings = _settings(folder, epoch_size, embedder)
    with open_db(settings.settings.db) as con:
        ensure_playbook(con, "default")
        write_version(con, "default", playbook, source="import")
        con.execute(SESSIONS_SQL.replace("$n", str(sessions)))
        # Each session's agent had the export's entries (the first 40, as the SessionStart hook records it), so the
        # reflector sees them and the stub's tags count.
        had = [e.name for _, e in playbook.entries()][:40]
        lines = [
            LedgerLine(
                session_id=f"bench-{i:05d}",
                at=datetime(2026, 1, 1, tzinfo=UTC),
                playbooks=[Shown(playbook="default", version=1, shown=had)],
            )
            for i in range(sessions)
        ]
        store_ledger_lines(con, "bench", lines, 0, 0)
    return settings


def prepare(size: int, sessions: int, epoch_size: int, embedder: str, work: Path) -> Path:
    """A database every round at `size` with `embedder` starts from: the playbook stored with its entries' vectors
    (embedded here, 64 at a time, as a long-lived playbook has them), the sessions ingested, and the first epochs
    curated and exported. Built once per size and embedder; each round runs on a copy."""
    folder = work / f"template-{size}-{embedder}"
    playbook = seeded(size)
    settings = _settings(folder, epoch_size, embedder)
    _store_playbook(folder, playbook, sessions + WARMUP, epoch_size, embedder)
    model = load_embedder(embedder)
    texts = [e.text for _, e in playbook.entries()]
    with open_db(settings.settings.db) as con:
        for start in range(0, len(texts), 64):
            chunk = texts[start : start + 64]
            store_vectors(con, model, dict(zip(chunk, model.embed(chunk), strict=True)))
    stub = Stub()
    run_curation(
        settings,
        "default",
        settings.provider("heuristic"),
        factory=lambda s, t, c: stub,
        chosen=SessionFilter(limit=WARMUP),
    )
    # Exported, as the nightly before left it: its files, and the screen's verdicts it kept.
    export_files(settings.database("default"), settings.rules("default"), settings.out_dir)
    return folder


def one_run(
    template: Path, size: int, sessions: int, epoch_size: int, embedder: str, rules: bool
) -> tuple[float, float]:
    """(CPU seconds of a one-epoch run as `playbook curate` makes it, CPU seconds per session of the rest) at `size`
    entries, on a fresh copy of the template: the stub model, or the rules miner (`rules`). The one-epoch run is a
    fresh process (`epoch_child`: its imports, the run, the export), so nothing a process keeps hides a run's cost."""
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-flat-"))
    try:
        shutil.copytree(template, work, dirs_exist_ok=True)
        settings = _settings(work, epoch_size, embedder)
        first = _epoch_cpu(work, epoch_size, embedder, rules)
        stub = Stub()
        spec = settings.provider("heuristic")
        factory = make_provider if rules else (lambda s, t, c: stub)
        # The rest in this process, whose caches the earlier rounds filled as a long run's earlier epochs would.
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
        return first, used / summary.sessions_applied
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _epoch_cpu(work: Path, epoch_size: int, embedder: str, rules: bool) -> float:
    """The CPU seconds of `epoch_child` on the database in `work`."""
    command = [sys.executable, __file__, "--epoch-child", str(work), "--epoch-size", str(epoch_size)]
    done = subprocess.run(
        [*command, "--embedders", embedder, *(["--rules"] if rules else [])], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])


def cold_run(template: Path, epoch_size: int, embedder: str, rules: bool) -> float:
    """The CPU seconds of a one-epoch run and its export when the screen kept no verdict (the first run of a new
    screen, or under a new set of what the user vouches for): every entry screened."""
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-flat-cold-"))
    try:
        shutil.copytree(template, work, dirs_exist_ok=True)
        with open_db(_settings(work, epoch_size, embedder).settings.db) as con:
            con.execute("DELETE FROM screen_verdicts")
        return _epoch_cpu(work, epoch_size, embedder, rules)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def epoch_child(folder: Path, epoch_size: int, embedder: str, rules: bool) -> None:
    """In a child: one epoch curated and the playbook exported, as `playbook curate --limit` does; prints the
    process's CPU seconds (imports included: the same at every size)."""
    gc.freeze()  # start-up's objects out of the collector's reach, as `playbook` does for a long command
    settings = _settings(folder, epoch_size, embedder)
    stub = Stub()
    factory = make_provider if rules else (lambda s, t, c: stub)
    spec = settings.provider("heuristic")
    summary = run_curation(settings, "default", spec, factory=factory, chosen=SessionFilter(limit=epoch_size))
    assert summary.sessions_applied == epoch_size, summary.model_dump_json()
    export_files(settings.database("default"), settings.rules("default"), settings.out_dir)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime}))


def peak_template(size: int, epoch_size: int, work: Path) -> Path:
    """`size` long entries (350-500 characters) whose vectors are not stored yet, and two epochs of sessions."""
    folder = work / f"peak-{size}"
    _store_playbook(folder, seeded(size, long=True), 2 * epoch_size, epoch_size, "auto")
    return folder


def peak_child(folder: Path, epoch_size: int) -> None:
    """In the child: one default-settings run over the copy in `folder`; prints its peak RSS (bytes) and CPU."""
    settings = _settings(folder, epoch_size)
    stub = Stub()
    try:
        summary = run_curation(settings, "default", settings.provider("heuristic"), factory=lambda s, t, c: stub)
    except MemoryError:
        print(json.dumps({"peak": None}))
        return
    assert summary.sessions_applied == 2 * epoch_size, summary.model_dump_json()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"peak": usage.ru_maxrss * 1024, "cpu": usage.ru_utime + usage.ru_stime}))


def peak_rss(template: Path, epoch_size: int, cap: int) -> tuple[float | None, float]:
    """(peak RSS in MB, or None when the run hit the cap; CPU seconds) of a child run on a copy of `template`."""
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-flat-peak-"))
    try:
        shutil.copytree(template, work, dirs_exist_ok=True)

        def capped() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

        done = subprocess.run(
            [sys.executable, __file__, "--peak-child", str(work), "--epoch-size", str(epoch_size)],
            capture_output=True,
            text=True,
            preexec_fn=capped,
            check=False,
        )
        if done.returncode != 0 and "MemoryError" in done.stderr:
            return None, 0.0
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        got = json.loads(done.stdout.strip().splitlines()[-1])
        return (None if got["peak"] is None else got["peak"] / 1e6), got.get("cpu", 0.0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,5000", help="playbook sizes, the first is the baseline")
    parser.add_argument("--sessions", type=int, default=160)
    parser.add_argument("--epoch-size", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedders", default="minilm,lexical", help="minilm (when installed), lexical")
    parser.add_argument("--cap-gb", type=float, default=6.0, help="the address-space cap of the peak-memory child")
    parser.add_argument("--no-peak", action="store_true", help="leave out the peak-memory rows")
    parser.add_argument("--no-flat", action="store_true", help="leave out the CPU rows")
    parser.add_argument(
        "--peak-rounds",
        type=int,
        default=3,
        help="rounds of the peak-memory rows (a run of 5,000 long entries costs about two minutes of CPU a round; "
        "its peak is a value against a goal, not a ratio that load moves)",
    )
    parser.add_argument("--peak-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--epoch-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rules", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_child:
        peak_child(args.peak_child, args.epoch_size)
        return
    if args.epoch_child:
        epoch_child(args.epoch_child, args.epoch_size, args.embedders, args.rules)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    embedders = [e for e in args.embedders.split(",") if e != "minilm" or load_embedder("auto").name != "lexical"]
    kinds = {f"{path}, {e}": (rules, e) for path, rules in (("stub model", False), ("rules", True)) for e in embedders}
    rounds = max(3, args.rounds)
    per_session: dict[tuple[str, int], list[float]] = {(k, s): [] for k in kinds for s in sizes}
    fixed: dict[tuple[str, int], list[float]] = {(k, s): [] for k in kinds for s in sizes}
    cold: dict[tuple[str, int], list[float]] = {(k, s): [] for k in kinds for s in sizes}
    peaks: dict[int, list[float | None]] = {s: [] for s in (sizes[0], sizes[-1])}
    cap = int(args.cap_gb * 1e9)
    n = args.sessions + args.epoch_size
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-flat-templates-"))
    try:
        templates = {}
        if not args.no_flat:
            templates = {(s, e): prepare(s, n, args.epoch_size, e, work) for s in sizes for e in embedders}
        unembedded = {} if args.no_peak else {s: peak_template(s, args.epoch_size, work) for s in peaks}
        for round_ in range(rounds):
            for kind, (rules, embedder) in kinds.items():
                for size in sizes if templates else []:
                    first, each = one_run(templates[(size, embedder)], size, n, args.epoch_size, embedder, rules)
                    fixed[(kind, size)].append(first)
                    per_session[(kind, size)].append(each)
                    cold[(kind, size)].append(cold_run(templates[(size, embedder)], args.epoch_size, embedder, rules))
            for size, template in unembedded.items() if round_ < args.peak_rounds else ():
                peak, cpu = peak_rss(template, args.epoch_size, cap)
                peaks[size].append(peak)
                said = "killed at the cap" if peak is None else f"{peak:,.0f} MB"
                print(f"  peak RSS at {size:,} long entries: {said} ({cpu:.1f} s CPU)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    if templates:
        print(f"CPU per session, {args.sessions} sessions per run, epochs of {args.epoch_size}, {rounds} rounds")
        for kind in kinds:
            base = statistics.median(per_session[(kind, sizes[0])])
            head = (
                f"{'entries':>8} {'min ms':>8} {'median ms':>10} {'max ms':>8} {'ratio':>6} {'run s':>6} {'cold s':>6}"
            )
            print(f"{kind}:\n{head}")
            for size in sizes:
                got = per_session[(kind, size)]
                print(
                    f"{size:>8} {min(got) * 1e3:8.1f} {statistics.median(got) * 1e3:10.1f} {max(got) * 1e3:8.1f}"
                    f" {statistics.median(got) / base:5.2f}x {statistics.median(fixed[(kind, size)]):6.2f}"
                    f" {statistics.median(cold[(kind, size)]):6.2f}"
                )
            for size in sizes[1:]:
                row = Row("flat", f"CPU per session, {size:,} entries, {kind}", "ms", [], f"{sizes[0]:,} entries")
                row.samples = [x * 1e3 for x in per_session[(kind, size)]]
                row.base = [x * 1e3 for x in per_session[(kind, sizes[0])]]
                row.goal, row.met = "<= 1.2x", (row.ratio or 0) <= 1.2
                rows.append(row)
                what = f"CPU of a one-epoch curate (fresh process, export included), {size:,} entries, {kind}"
                more = Row("flat", what, "s", fixed[(kind, size)])
                more.baseline, more.base = f"{sizes[0]:,} entries", fixed[(kind, sizes[0])]
                growth = statistics.median(more.samples) - statistics.median(more.base)
                more.goal, more.met = "<= +1 s", growth <= 1.0
                rows.append(more)
                unkept = Row("flat", f"{what}, no screen verdict kept", "s", cold[(kind, size)])
                unkept.baseline, unkept.base = f"{sizes[0]:,} entries", cold[(kind, sizes[0])]
                growth = statistics.median(unkept.samples) - statistics.median(unkept.base)
                unkept.goal, unkept.met = "<= +1 s", growth <= 1.0
                rows.append(unkept)
        print("goal: the largest size within 1.2x of the first per session, and a run's fixed cost within +1 s")
    if any(peaks.values()):
        small, large = (peaks[s] for s in peaks)
        killed = [p for p in large if p is None]
        what = f"peak RSS of a default run embedding {sizes[-1]:,} long entries"
        what += f" (killed at the {args.cap_gb:g} GB cap in {len(killed)} of {len(large)})" if killed else ""
        row = Row("flat", what, "MB", [cap / 1e6 if p is None else p for p in large], f"{sizes[0]:,} long entries")
        row.base = [cap / 1e6 if p is None else p for p in small]
        row.goal, row.met = "< 1,500 MB", not killed and max(row.samples) < 1500
        rows.append(row)
    emit(rows)


if __name__ == "__main__":
    main()
