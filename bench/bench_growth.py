"""Benchmark: does the playbook stay small when models write the same lesson in new words every night?

A stream of 2,000 simulated sessions; each session's curator proposes 1-3 ADDs drawn from the pool in
`data/lessons/paraphrases.json` (40 lessons x 4 hand-written wordings). The stream goes through the real
engine (`apply_session`) twice, in the same run: with exact-text de-duplication only (what playbook did
before issue 13) and with near-duplicate detection (all-MiniLM-L6-v2 when installed, else lexical).

Reported: live entries at the end (goal: within 1.5x the 40 distinct lessons), the duplicate rate (live
entries whose lesson already has another live entry, by the pool's ground truth; goal <= 2 %), and the
time of each stream (goal: near-duplicates under 2x exact). The near stream is timed twice: cold
(every wording embedded on first sight) and warm (vectors already stored, as in any later night).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.llm.embed import load_embedder, near_finder  # noqa: E402
from core.models import CuratorOutput, Playbook, ReflectorOutput  # noqa: E402
from core.operations import NearFinder, apply_session, empty_playbook  # noqa: E402


def stream(sessions: int, seed: int, pool: list[list[str]]) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(rng.choice(pool)) for _ in range(rng.randint(1, 3))] for _ in range(sessions)]


def run(proposals: list[list[str]], near: NearFinder | None) -> tuple[Playbook, float]:
    playbook = empty_playbook()
    reflection = ReflectorOutput(analysis="a", bullet_tags=[])
    started = time.perf_counter()
    for texts in proposals:
        ops = [{"type": "ADD", "text": t, "section": "OTHERS"} for t in texts]
        playbook, _ = apply_session(playbook, reflection, CuratorOutput(reasoning="r", operations=ops), near=near)
    return playbook, time.perf_counter() - started


def duplicate_rate(playbook: Playbook, lesson_of: dict[str, int]) -> tuple[int, float]:
    lessons = [lesson_of[e.text] for _, e in playbook.entries()]
    extra = len(lessons) - len(set(lessons))
    return len(lessons), extra / len(lessons) if lessons else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedder", default="auto", choices=["auto", "minilm", "lexical"])
    parser.add_argument("--threshold", type=float, default=None, help="default: the model's own")
    args = parser.parse_args()
    pool = json.loads((ROOT / "data" / "lessons" / "paraphrases.json").read_text())["lessons"]
    lesson_of = {text: i for i, group in enumerate(pool) for text in group}
    proposals = stream(args.sessions, args.seed, pool)
    embedder = load_embedder(args.embedder)
    threshold = args.threshold or embedder.threshold
    exact, exact_s = run(proposals, None)
    known: dict = {}
    near, cold_s = run(proposals, near_finder(embedder, known, threshold))
    _, warm_s = run(proposals, near_finder(embedder, dict(known), threshold))
    print(
        f"{args.sessions} sessions, {sum(map(len, proposals))} proposed ADDs, {len(pool)} distinct lessons,"
        f" threshold {threshold}"
    )
    for label, playbook, seconds in (
        ("exact text (before)", exact, exact_s),
        (f"near-duplicates, {embedder.name}, cold", near, cold_s),
        (f"near-duplicates, {embedder.name}, warm", near, warm_s),
    ):
        live, rate = duplicate_rate(playbook, lesson_of)
        covered = len({lesson_of[e.text] for _, e in playbook.entries()})
        print(
            f"  {label:42s} live {live:4d} ({live / len(pool):.2f}x lessons)  duplicate rate {rate:6.1%}"
            f"  lessons kept {covered}/{len(pool)}  {seconds:6.2f} s ({seconds / exact_s:.2f}x exact)"
        )


if __name__ == "__main__":
    main()
