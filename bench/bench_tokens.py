"""Benchmark (a model, not a measurement): input tokens per session raw vs rendered, and cost per 1,000
sessions for three designs.

Modelled, not measured: tokens are estimated (`core.tokens.estimate_tokens`, calibrated against the usage
Claude Code transcripts record: bench/calibrate_tokens.py, held out within 5 %), output sizes are fixed
(REFLECTOR_OUT, CURATOR_OUT, NAIVE_OUT), prices are the pricing table's, and the cache is assumed to hit for
every session of an epoch after the first. Only the rendering (what is kept of each transcript) is real.

Over the real transcripts in data/samples (but claude-code-log), all in one run:
- naive: one call per session with the full transcript and the playbook, no prompt cache;
- ours, live: reflector (rendered, budgeted transcript) + curator (reflector output only), with the
  frozen playbook in a cached system prefix shared by an epoch of sessions;
- ours, batch: the same requests through the Message Batches API (half price; cache hits not assumed).
Also checks that rendering lost no user message and no tool error, and measures (process CPU, interleaved
rounds) what the estimate costs over every message text against characters / 4 and against rendering them.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from core.curator import describe_budget, describe_neighbours  # noqa: E402
from core.llm.base import Usage  # noqa: E402
from core.llm.pricing import cost_usd  # noqa: E402
from core.models import Entry, Playbook  # noqa: E402
from core.operations import empty_playbook  # noqa: E402
from core.prompts import load_template  # noqa: E402
from core.render import render_session  # noqa: E402
from core.request import describe_sections, playbook_text  # noqa: E402
from core.sections import DEFAULT_SECTIONS  # noqa: E402
from core.store.db import connect  # noqa: E402
from core.store.ingest import ingest  # noqa: E402
from core.store.sessions import load_messages  # noqa: E402
from core.tokens import estimate_tokens  # noqa: E402

MODEL = "claude-sonnet-4-5"
SAMPLES = ROOT / "data" / "samples"  # all but claude-code-log, a source this project no longer draws figures from
REFLECTOR_OUT, CURATOR_OUT, NAIVE_OUT = 700, 400, 900


def sample_playbook(entries: int = 50) -> Playbook:
    playbook = empty_playbook()
    for i in range(entries):
        name = DEFAULT_SECTIONS.names[i % 5]
        slug = DEFAULT_SECTIONS.slug_of(name)
        playbook.sections[name].append(
            Entry(
                name=f"{slug}-{i // 5 + 1:03d}",
                helpful=i % 4,
                harmful=i % 2,
                text=f"Lesson {i}: run the narrowest failing test first and read the first assertion before editing.",
            )
        )
    return playbook


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=24_000, help="rendered transcript budget (tokens)")
    parser.add_argument("--epoch", type=int, default=8, help="sessions sharing one cached playbook prefix")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the estimate's cost")
    args = parser.parse_args()
    con = connect(Path(tempfile.mkdtemp()) / "tokens.duckdb")
    ingest(
        con, [SAMPLES / "claude-code" / "spotter", SAMPLES / "claude-code" / "claude-code-viewer", SAMPLES / "codex"]
    )
    sessions = [r[0] for r in con.execute("SELECT session_id FROM sessions WHERE n_messages > 0").fetchall()]
    playbook = sample_playbook()
    reflector_t, curator_t = load_template("reflector"), load_template("curator")
    sections, pb_text = describe_sections(DEFAULT_SECTIONS), playbook_text(playbook)
    refl_system = estimate_tokens(
        reflector_t.render(sections=sections, playbook=pb_text, transcript="", session_meta="")[0]
    )
    cur_system = estimate_tokens(
        curator_t.render(
            sections=sections,
            playbook=pb_text,
            reflection="",
            neighbours=describe_neighbours([]),
            budget=describe_budget(None),
        )[0]
    )
    raw_tokens: list[float] = []
    rendered_tokens: list[float] = []
    lost_users = lost_errors = 0
    naive = live = batch = 0.0
    print(f"{'session':38} {'raw tok':>9} {'rendered':>9} {'ratio':>6} {'users':>6} {'errors':>6}")
    for index, session_id in enumerate(sessions):
        messages = load_messages(con, session_id)
        result = render_session(messages, args.budget)
        users = sum(
            1
            for m in messages
            if m.role == "user"
            and m.kind == "text"
            and not m.is_meta
            and not m.is_sidechain
            and (m.text or "").strip()
            and "<system-reminder>" not in (m.text or "")
        )
        errors = sum(1 for m in messages if m.kind == "tool_result" and m.is_error)
        lost_users += max(users - result.user_messages, 0)
        lost_errors += max(errors - result.tool_errors, 0)
        raw_tokens.append(result.raw_tokens_est)
        rendered_tokens.append(result.tokens_est)
        print(
            f"{session_id[:38]:38} {result.raw_tokens_est:>9} {result.tokens_est:>9}"
            f" {result.raw_tokens_est / max(result.tokens_est, 1):>6.1f}"
            f" {result.user_messages:>6} {result.tool_errors:>6}"
        )
        # naive: full transcript + playbook, no cache
        naive += cost_usd(MODEL, Usage(input_tokens=result.raw_tokens_est + refl_system, output_tokens=NAIVE_OUT))
        # ours: the first session of an epoch writes the cached prefix, the others read it
        first = index % args.epoch == 0
        for system, user, out in (
            (refl_system, result.tokens_est, REFLECTOR_OUT),
            (cur_system, REFLECTOR_OUT, CURATOR_OUT),
        ):
            live += cost_usd(
                MODEL,
                Usage(
                    input_tokens=user,
                    output_tokens=out,
                    cache_write_tokens=system if first else 0,
                    cache_read_tokens=0 if first else system,
                ),
            )
            batch += cost_usd(MODEL, Usage(input_tokens=user + system, output_tokens=out), batch=True)
    n = len(sessions)
    per_k = 1000 / n
    print()
    print(
        f"sessions: {n}; raw tokens/session median {statistics.median(raw_tokens):.0f}, mean"
        f" {statistics.mean(raw_tokens):.0f}; rendered median {statistics.median(rendered_tokens):.0f}, mean"
        f" {statistics.mean(rendered_tokens):.0f} (budget {args.budget})"
    )
    print(f"user messages lost: {lost_users}; tool errors lost: {lost_errors}")
    print(
        f"cost per 1,000 sessions ({MODEL}): naive ${naive * per_k:,.2f}; ours live ${live * per_k:,.2f}"
        f" ({live / naive:.0%} of naive); ours batch ${batch * per_k:,.2f} ({batch / naive:.0%} of naive;"
        " target <= 25%)"
    )
    texts = [m.text or "" for s in sessions for m in load_messages(con, s)]
    every = [load_messages(con, s) for s in sessions]

    def cpu(work: Callable[[], None]) -> float:
        start = time.process_time()
        work()
        return time.process_time() - start

    def quarter() -> None:
        for text in texts:
            math.ceil(len(text) / 4)

    def ours() -> None:
        for text in texts:
            estimate_tokens(text)

    def render() -> None:
        for messages in every:
            render_session(messages, args.budget)

    cost = interleaved(
        {"ours": lambda: cpu(ours), "quarter": lambda: cpu(quarter), "render": lambda: cpu(render)}, args.rounds
    )
    chars = sum(len(t) for t in texts)
    print(f"estimate over {len(texts):,} message texts, {chars:,} characters, {args.rounds} interleaved rounds")
    batch_share = Row("tokens", "cost of ours (batch), share of naive", "%", [100 * batch / naive], modelled=True)
    batch_share.goal, batch_share.met = "<= 25 %", batch <= 0.25 * naive
    emit(
        [
            Row("tokens", "rendered tokens per session", "tokens", rendered_tokens, "raw", raw_tokens, modelled=True),
            batch_share,
            Row(
                "tokens",
                "estimate_tokens over every message text",
                "ms",
                [1000 * x for x in cost["ours"]],
                "characters / 4",
                [1000 * x for x in cost["quarter"]],
            ),
            Row(
                "tokens",
                "estimate_tokens over every message text",
                "ms",
                [1000 * x for x in cost["ours"]],
                "rendering every session",
                [1000 * x for x in cost["render"]],
            ),
        ]
    )


if __name__ == "__main__":
    main()
