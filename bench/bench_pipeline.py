"""Benchmark: sessions through the `curate` flow (real Prefect tasks) with an in-process model stub.

Run 1: the stub answers at once. Reports, per session, in CPU (every thread of the process, so machine load does
not count): the flow body, the core apply step (`apply_session`) and the store write (`write_version`) measured
in the same run, and the orchestration overhead (everything else: Prefect tasks, DuckDB opens, rendering,
exchange records). Target: overhead <= 20 ms of CPU per session. Wall time is printed beside it.

Run 2: the stub sleeps `--latency` seconds (2 s) per call and models prompt caching (a call reads the cache when an
earlier call with the same system prefix has finished, else writes it). For each `warm_cache` mode (always, auto,
never), at the bench's concurrency and at the product's defaults (4 calls, epochs of 8): the achieved concurrency
(model-call seconds / wall seconds of the model phases) and the modelled cost. Modelled, not measured: the cost
(token estimates of the requests at Sonnet prices, 600 output tokens per call).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flows.run.steps as steps  # noqa: E402
from bench._table import Row, emit  # noqa: E402
from core.llm.base import LLMRequest, LLMResponse, Provider  # noqa: E402
from core.selection import SessionFilter  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.tokens import estimate_tokens  # noqa: E402
from flows.config import Settings  # noqa: E402
from flows.models.providers import ProviderSpec  # noqa: E402
from flows.run._runtime import local_run  # noqa: E402
from flows.workspace import Workspace  # noqa: E402

SESSIONS_SQL = """
INSERT INTO sessions (session_id, format, source_path, project, started_at, ended_at, n_messages, n_user_prompts,
                      n_tool_calls, n_tool_errors)
SELECT 'bench-' || lpad(i::VARCHAR, 5, '0'), 'claude-code', '/bench/' || i || '.jsonl', 'bench',
       TIMESTAMPTZ '2026-01-01' + INTERVAL (i) MINUTE, TIMESTAMPTZ '2026-01-01' + INTERVAL (i) MINUTE, 6, 2, 2, 1
FROM range($n) t(i);
INSERT INTO messages (session_id, source_path, seq, part, ts, role, kind, text, tool_name, tool_input, tool_use_id,
                      is_error, message_key, is_sidechain, agent_id, is_meta, is_prompt)
SELECT 'bench-' || lpad(i::VARCHAR, 5, '0'), '/bench/' || i || '.jsonl', m, 0, NULL,
       CASE m WHEN 0 THEN 'user' WHEN 1 THEN 'assistant' WHEN 2 THEN 'tool' WHEN 3 THEN 'assistant' WHEN 4 THEN 'tool'
              ELSE 'user' END,
       CASE m WHEN 1 THEN 'tool_use' WHEN 2 THEN 'tool_result' WHEN 3 THEN 'tool_use' WHEN 4 THEN 'tool_result'
              ELSE 'text' END,
       CASE m WHEN 0 THEN 'Please fix the failing test in module ' || i WHEN 2 THEN 'Error: test_' || i || ' failed'
              WHEN 4 THEN '1 passed' WHEN 5 THEN 'No, use pytest -x next time.' END,
       CASE WHEN m IN (1, 3) THEN 'Bash' END, CASE WHEN m IN (1, 3) THEN '{"command": "pytest"}' END,
       CASE WHEN m IN (1, 2) THEN 't1-' || i WHEN m IN (3, 4) THEN 't2-' || i END, m = 2,
       'k' || i || '-' || m, false, NULL, false, m IN (0, 5)
FROM range($n) t(i), range(6) s(m);
"""


class Stub(Provider):
    """Answers at once (or after `latency` seconds); keeps the playbook near 40 entries."""

    name = "benchstub"
    cacheable = False
    warm_cache_first = True  # as AnthropicProvider: the run may warm the prompt cache with one call

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.busy_seconds = 0.0
        self.busy_cpu = 0.0  # CPU seconds of the threads that answered
        self.calls = 0
        self.cost = 0.0  # modelled USD at Sonnet prices, prompt caching as the API bills it
        self.cached: set[str] = set()  # system prefixes with a cache entry (a call with it has finished)

    def complete(self, request: LLMRequest) -> LLMResponse:
        started, cpu = time.perf_counter(), time.thread_time()
        prefix = hashlib.sha256(request.system.encode()).hexdigest()
        with self.lock:
            reads = prefix in self.cached
        if self.latency:
            time.sleep(self.latency)
        playbook = request.context["playbook"]
        ids = [e.name for _, e in playbook.entries()]
        if request.step == "reflector":
            payload: dict[str, Any] = {
                "analysis": "bench",
                "bullet_tags": [{"name": i, "tag": "helpful", "rationale": "bench"} for i in ids[:2]],
            }
        else:
            ops: list[dict[str, Any]] = [
                {"type": "ADD", "text": f"lesson from {request.session_id}", "section": "MISTAKES TO AVOID"}
            ]
            if len(ids) > 40:
                ops.append({"type": "DELETE", "target_id": ids[0], "reason": "keep the playbook short"})
            payload = {"reasoning": "bench", "operations": ops}
        system, user = estimate_tokens(request.system), estimate_tokens(request.user)
        with self.lock:
            self.busy_seconds += time.perf_counter() - started
            self.busy_cpu += time.thread_time() - cpu
            self.calls += 1
            self.cached.add(prefix)
            self.cost += (system * (0.30 if reads else 3.75) + user * 3.0 + 600 * 15.0) / 1e6
        return LLMResponse(text=json.dumps(payload), provider=self.name, model="stub")


TOTALS: dict[str, float] = {}  # CPU seconds spent in each wrapped function (on its thread), for the current run


def timed_wrap(module: Any, name: str, totals: dict[str, float]) -> None:
    real = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.thread_time() - started

    setattr(module, name, wrapper)


def run(sessions: int, latency: float, concurrency: int, epoch_size: int, warm_cache: str = "auto") -> dict[str, float]:
    from flows.run.pipeline import curate_flow

    work = Path(tempfile.mkdtemp(prefix="playbook-bench-pipeline-"))
    db = work / "bench.duckdb"
    with open_db(db) as con:
        con.execute(SESSIONS_SQL.replace("$n", str(sessions)))
    stub = Stub(latency)
    settings = Workspace.of(Settings(db=db, concurrency=concurrency, out_dir=work / "out", warm_cache=warm_cache))
    started, cpu = time.perf_counter(), time.process_time()
    # A model's spec, so the stub is called as a model is (fanned out, `concurrency` at once); the rules' spec
    # (`heuristic`) would have it answer one call after the other, in the run's thread.
    spec = ProviderSpec(kind="anthropic", reflector_model="bench-stub", curator_model="bench-stub")
    chosen = SessionFilter(epoch_size=epoch_size)
    report = curate_flow(settings, spec, "default", chosen, factory=lambda spec, settings, cap: stub)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert report.sessions_applied == sessions, report
    model_phases = report.phase_seconds.get("reflect", 0) + report.phase_seconds.get("curate", 0)
    return {
        "wall": wall,
        "cpu": cpu,
        "model_cpu": stub.busy_cpu,
        "apply_session": TOTALS.get("apply_session", 0.0),
        "write_version": TOTALS.get("write_version", 0.0),
        "model": stub.busy_seconds,
        "calls": stub.calls,
        "model_phases": model_phases,
        "flow_body": report.duration_s,
        "cost": stub.cost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--latency-sessions", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--epoch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds the slow stub takes per call")
    args = parser.parse_args()
    rounds = max(3, args.rounds)
    timed_wrap(steps, "apply_session", TOTALS)
    timed_wrap(steps, "write_version", TOTALS)
    rows: list[Row] = []
    with local_run():
        n = args.sessions
        per_session: list[float] = []
        overhead: list[float] = []
        for _ in range(rounds):
            TOTALS.clear()
            fast = run(n, 0.0, args.concurrency, args.epoch_size)
            other = fast["cpu"] - fast["apply_session"] - fast["write_version"] - fast["model_cpu"]
            per_session.append(fast["cpu"] / n * 1e3)
            overhead.append(other / n * 1e3)
            print(
                f"instant stub: {n} sessions, {fast['calls']:.0f} calls, flow wall {fast['wall']:.1f} s,"
                f" CPU {fast['cpu']:.1f} s; CPU per session: total {fast['cpu'] / n * 1e3:.2f} ms; core apply step"
                f" (apply_session) {fast['apply_session'] / n * 1e3:.2f} ms; store write (write_version)"
                f" {fast['write_version'] / n * 1e3:.2f} ms; model stub {fast['model_cpu'] / n * 1e3:.2f} ms;"
                f" everything else {other / n * 1e3:.2f} ms"
            )
        rows.append(Row("pipeline", f"instant stub, flow CPU per session ({n} sessions)", "ms", per_session))
        rows.append(Row("pipeline", "  of which orchestration, DuckDB, rendering (CPU)", "ms", overhead))
        rows[-1].goal, rows[-1].met = "<= 20 ms", statistics.median(overhead) <= 20
        print(
            f"{args.latency:g} s stub, {args.latency_sessions} sessions: warm_cache modes, concurrency achieved during"
            " the model phases and modelled cost (Sonnet prices, cache write 1.25x, read 0.1x of input)"
        )
        configs = [(c, e, mode) for c, e in ((args.concurrency, args.epoch_size), (4, 8)) for mode in MODES]
        share: dict[tuple[int, int, str], list[float]] = {k: [] for k in configs}
        wall: dict[tuple[int, int, str], list[float]] = {k: [] for k in configs}
        cost: dict[tuple[int, int, str], list[float]] = {k: [] for k in configs}
        for _ in range(rounds):  # interleaved: every mode once per round
            for concurrency, epoch, mode in configs:
                TOTALS.clear()
                slow = run(args.latency_sessions, args.latency, concurrency, epoch, warm_cache=mode)
                achieved = slow["model"] / slow["model_phases"] if slow["model_phases"] else 0.0
                share[(concurrency, epoch, mode)].append(100 * achieved / concurrency)
                wall[(concurrency, epoch, mode)].append(slow["wall"])
                cost[(concurrency, epoch, mode)].append(slow["cost"] / args.latency_sessions * 1000)
                print(
                    f"  concurrency {concurrency:>2}, epoch {epoch:>2}, warm_cache={mode:<6}:"
                    f" wall {slow['wall']:6.1f} s,"
                    f" {achieved:5.1f} in flight ({achieved / concurrency:4.0%}), ${slow['cost']:.4f}"
                    f" (${slow['cost'] / args.latency_sessions * 1000:.2f} per 1,000 sessions)"
                )
        for key in configs:
            concurrency, epoch, mode = key
            label = f"{args.latency:g} s calls, {concurrency} at once, epochs of {epoch}, {mode}"
            rows.append(Row("pipeline", f"{label}: wall", "s", wall[key]))
            rows.append(Row("pipeline", f"{label}: calls in flight", "% of concurrency", share[key]))
            rows.append(Row("pipeline", f"{label}: cost per 1,000 sessions", "$", cost[key], modelled=True))
    emit(rows)


MODES = ("always", "auto", "never")


if __name__ == "__main__":
    main()
