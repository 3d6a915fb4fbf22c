"""Benchmark: a team, one night at a time, through push -> ingest -> curate on one machine.

Each simulated night, every contributor writes `--per-day` sessions (real Claude Code transcripts from
data/samples, replicated with distinct session and record ids, dated that day, in their own home folder),
runs `playbook push` to a bucket (a `file://` URL: fsspec's local store; the S3 path is the same code and is
tested against a real S3 server), and the team machine then ingests the bucket and curates the new sessions
with an instant in-process model stub (it tags two entries and adds one lesson per session, deleting the
oldest beyond 40, so the playbook stays at its intended size).

Measured per night: CPU seconds (this process's threads and any child's) and wall seconds of push (all
contributors), ingest and curate; rows (sessions, messages, model exchanges); the database's size. The verdict
(goal <= 1.5x: history must not make a night dearer) is in CPU, not wall, and interleaved, so machine load hits both
sides alike: the whole team's state (bucket, databases, homes) is copied
after the first three nights (a young history) and after the last (an old one), and the same new night runs on
a fresh copy of each, in turn, `--rounds` times. Modelled, not measured: the tokens a real run
would send are the requests' own estimates (`estimate_tokens`, the whole request as built), plus an assumed
600 output tokens per call.

Defaults are the issue's 50 contributors x 20 sessions x 90 days (90,000 sessions); pass smaller numbers
to run in minutes.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from core.llm.base import LLMRequest, LLMResponse, Provider  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.registry import ensure_playbook  # noqa: E402
from flows.config import Settings  # noqa: E402
from flows.run.curation import run_curation  # noqa: E402
from flows.run.ingest import ingest_with  # noqa: E402
from flows.team import push_command  # noqa: E402
from flows.workspace import Workspace  # noqa: E402

SAMPLES = ROOT / "data" / "samples" / "claude-code"
# A mix of real sizes: two short sessions for each long one (10 KB and 506 KB).
TEMPLATES = [
    SAMPLES / "spotter" / "short.jsonl",
    SAMPLES / "spotter" / "short.jsonl",
    SAMPLES
    / "claude-code-log"
    / "-Users-dain-workspace-JSSoundRecorder"
    / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
]
ASSUMED_OUTPUT = 600


def cpu() -> float:
    """CPU seconds so far, user and system, of this process (every thread) and of its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Stub(Provider):
    """Answers at once; the playbook stays near 40 entries. Counts the input tokens a real run would send."""

    name = "benchstub"
    cacheable = False

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.input_tokens = 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        ids = [e.name for _, e in request.context["playbook"].entries()]
        if request.step == "reflector":
            payload: dict[str, Any] = {
                "analysis": f"session {request.session_id} went as sessions go",
                "bullet_tags": [{"name": i, "tag": "helpful", "rationale": "bench"} for i in ids[:2]],
            }
        else:
            ops: list[dict[str, Any]] = [
                {"type": "ADD", "text": f"Lesson {request.session_id}: check the build first.", "section": "OTHERS"}
            ]
            if len(ids) >= 40:
                ops.append({"type": "DELETE", "target_id": ids[0], "reason": "keep the playbook short"})
            payload = {"reasoning": "bench", "operations": ops}
        with self.lock:
            self.calls += 1
            self.input_tokens += request.payload.tokens_est if request.payload else 0
        return LLMResponse(text=json.dumps(payload), provider=self.name, model="stub")


def replicate(template: Path, dest: Path, session_id: str, day: datetime, contributor: int) -> None:
    """`template` as a new session: its own session id and record ids, dated `day`, in the contributor's home."""
    out = []
    for i, line in enumerate(template.read_text().splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if "sessionId" in record:
            record["sessionId"] = session_id
        for key in ("uuid", "parentUuid", "leafUuid"):
            if isinstance(record.get(key), str):
                record[key] = f"{record[key]}-{session_id}"
        if "timestamp" in record:
            record["timestamp"] = (day + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        if isinstance(record.get("cwd"), str):
            record["cwd"] = f"/home/dev{contributor}/src/app{contributor % 5}"
        out.append(json.dumps(record))
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("\n".join(out) + "\n")


def night(
    work: Path, url: str, team: Workspace, stub: Stub, n: int, contributors: int, per_day: int
) -> dict[str, float]:
    day = datetime(2026, 1, 1, 9, tzinfo=UTC) + timedelta(days=n)
    for c in range(contributors):
        home = work / f"dev{c}" / ".claude" / "projects" / f"-home-dev{c}-src-app{c % 5}"
        for s in range(per_day):
            replicate(TEMPLATES[(n + s) % len(TEMPLATES)], home / f"n{n}-c{c}-s{s}.jsonl", f"n{n}c{c}s{s}", day, c)
    marks = [(time.perf_counter(), cpu())]
    for c in range(contributors):
        dev = Workspace.of(Settings(db=work / f"dev{c}.duckdb", transcripts=[work / f"dev{c}"]))
        push_command(dev, url, [work / f"dev{c}" / ".claude" / "projects"], f"dev{c}")
    marks.append((time.perf_counter(), cpu()))
    ingest_with(team, [url], progress=lambda done, total: None)
    marks.append((time.perf_counter(), cpu()))
    spec = team.provider("heuristic")
    summary = run_curation(team, "default", spec, factory=lambda spec, settings, cap: stub)
    marks.append((time.perf_counter(), cpu()))
    assert summary.sessions_applied == contributors * per_day, summary.model_dump_json()
    with open_db(team.settings.db) as con:
        rows = con.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages), (SELECT count(*) FROM llm_calls)"
        ).fetchone()
    assert rows is not None
    phases = ("push", "ingest", "curate")
    return {
        **{phase: marks[i + 1][0] - marks[i][0] for i, phase in enumerate(phases)},
        **{f"{phase}_cpu": marks[i + 1][1] - marks[i][1] for i, phase in enumerate(phases)},
        "total": marks[-1][0] - marks[0][0],
        "total_cpu": marks[-1][1] - marks[0][1],
        "sessions": rows[0],
        "messages": rows[1],
        "calls": rows[2],
        "db_mb": team.settings.db.stat().st_size / 1e6,
    }


def team_settings(work: Path) -> tuple[str, Workspace]:
    """The bucket's URL and the team machine's settings for a team kept in `work`."""
    url = (work / "bucket").as_uri()
    team = Workspace.of(
        Settings(db=work / "team.duckdb", transcripts=[url], min_messages=1, idle_minutes=0, out_dir=work / "out")
    )
    return url, team


def probe(snapshot: Path, place: Path, stub: Stub, n: int, contributors: int, per_day: int) -> float:
    """CPU seconds of night `n` run on the team state in `snapshot`, restored to `place` first (not measured): the
    folder the history was built in, since the state records its paths (the bucket's URLs, the homes pushed)."""
    shutil.rmtree(place, ignore_errors=True)
    shutil.copytree(snapshot, place)
    url, team = team_settings(place)
    return night(place, url, team, stub, n, contributors, per_day)["total_cpu"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contributors", type=int, default=50)
    parser.add_argument("--per-day", type=int, default=20)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved probe nights on each history")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="playbook-bench-team-"))
    work = root / "team"
    url, team = team_settings(work)
    work.mkdir()
    with open_db(team.settings.db) as con:
        ensure_playbook(con, "default")
    stub = Stub()
    print(f"{args.contributors} contributors x {args.per_day} sessions a day x {args.days} days; work in {work}")
    print("CPU seconds per phase (wall seconds of the whole night beside it)")
    print(f"{'night':>5} {'push s':>7} {'ingest s':>8} {'curate s':>8} {'total s':>7} {'wall s':>7} {'sessions':>8} "
          f"{'messages':>9} {'calls':>7} {'db MB':>7}")  # fmt: skip
    results = []
    k = min(3, args.days)
    for n in range(args.days):
        r = night(work, url, team, stub, n, args.contributors, args.per_day)
        if n + 1 == k:
            shutil.copytree(work, root / "young")
        results.append(r)
        print(
            f"{n + 1:>5} {r['push_cpu']:>7.1f} {r['ingest_cpu']:>8.1f} {r['curate_cpu']:>8.1f} {r['total_cpu']:>7.1f}"
            f" {r['total']:>7.1f} {int(r['sessions']):>8} {int(r['messages']):>9} {int(r['calls']):>7}"
            f" {r['db_mb']:>7.1f}",
            flush=True,
        )
    shutil.copytree(work, root / "old")
    first = statistics.mean(r["total_cpu"] for r in results[:k])
    last = statistics.mean(r["total_cpu"] for r in results[-k:])
    ratio = last / first if first else float("nan")
    per_session = statistics.mean(r["total"] for r in results) / (args.contributors * args.per_day)
    cpu_per_session = statistics.mean(r["total_cpu"] for r in results) / (args.contributors * args.per_day)
    verdict = "met" if ratio <= 1.5 else "NOT met"
    print(f"\nCPU, mean of the last {k} nights / first {k} (one after another): {ratio:.2f}x ({verdict} at <= 1.5x)")
    for phase in ("push", "ingest", "curate"):
        a = statistics.mean(r[f"{phase}_cpu"] for r in results[:k])
        b = statistics.mean(r[f"{phase}_cpu"] for r in results[-k:])
        print(f"  {phase}: first {a:.2f} s, last {b:.2f} s ({b / a if a else float('nan'):.2f}x)")
    print(
        f"per session: {cpu_per_session * 1000:.0f} ms of CPU, {per_session * 1000:.0f} ms of wall -> a night of 1,000"
        f" sessions takes ~{per_session * 1000:.0f} s here"
    )
    sent = stub.input_tokens + stub.calls * ASSUMED_OUTPUT
    print(
        f"model tokens a real run would send (modelled): {stub.input_tokens:,} input + {stub.calls * ASSUMED_OUTPUT:,}"
        f" output (assumed {ASSUMED_OUTPUT}/call) over {stub.calls:,} calls = {sent:,};"
        f" {sent / max(1, args.contributors * args.per_day * args.days):,.0f} per session"
    )

    # The verdict: the same new night on both histories, in turn (copies made outside the timing).
    def on(history: str) -> Callable[[], float]:
        return lambda: probe(root / history, work, stub, args.days, args.contributors, args.per_day)

    sides = {f"after {args.days} nights": on("old"), f"after {k} nights": on("young")}
    got = interleaved(sides, max(3, args.rounds))
    old_side, young_side = sides
    nightly = Row(
        "team",
        f"a night on {args.days} nights of history ({args.contributors} x {args.per_day} sessions), CPU",
        "s",
        got[old_side],
        f"the same night on {k} nights, CPU",
        got[young_side],
    )
    nightly.goal, nightly.met = "<= 1.5x", (nightly.ratio or 0) <= 1.5
    emit([nightly])
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
