"""Benchmark: does the playbook stay small when models write the same lesson in new words every night?

A stream of 2,000 simulated sessions; each session's curator proposes 1-3 ADDs drawn from the pool in
`data/lessons/paraphrases.json` (40 lessons x 4 hand-written wordings). The stream goes through the real
engine (`apply_session`) twice, in the same run: with exact-text de-duplication only (what playbook did
before issue 13) and with near-duplicate detection (all-MiniLM-L6-v2 when installed, else lexical).

Reported: live entries at the end (goal: within 1.5x the 40 distinct lessons), the duplicate rate (live
entries whose lesson already has another live entry, by the pool's ground truth; goal <= 2 %), and the
time of each stream (goal: near-duplicates under 2x exact). The near stream is timed twice: cold
(every wording embedded on first sight) and warm (vectors already stored, as in any later night). Every
`--night` sessions the stream does what `nightly` does: consolidate when the duplicate rate the product
can see (pairs above the threshold per live entry) is above 2 %. `--sweep` repeats the warm stream at
lower thresholds, with the precision each has on the labelled pairs, to show the trade-off.

Modelled, not measured: two more streams put the curator in the loop. The prompt shows, for each proposed
lesson, the two closest live entries from 0.8 x the threshold up (what `curate` shows); a modelled curator
that recognises a shown entry as the same lesson (always, or 80 % of the time) adds nothing. They bound
what a capable model can do with what the product shows it; the replayed stream cannot measure a model.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._table import Row, emit, interleaved  # noqa: E402
from core.consolidate import (  # noqa: E402
    candidate_groups,
    judged_merges,
    merge_operations,
    merged_wordings,
    near_pairs,
)
from core.llm.embed import Embedder, load_embedder, near_finder, neighbour_finder  # noqa: E402
from core.models import CuratorOutput, Playbook, ReflectorOutput  # noqa: E402
from core.operations import NearFinder, apply_operations, apply_session, empty_playbook  # noqa: E402
from flows.run.steps import NEIGHBOUR_SHARE  # noqa: E402


def stream(sessions: int, seed: int, pool: list[list[str]]) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(rng.choice(pool)) for _ in range(rng.randint(1, 3))] for _ in range(sessions)]


def run(
    proposals: list[list[str]],
    near: NearFinder | None,
    consolidate: Callable[[Playbook], Playbook] | None,
    night: int,
    aliases: dict[str, str] | None = None,
) -> tuple[Playbook, float]:
    """The stream through the engine; `aliases`: the wordings merged into entries, which a consolidation keeps
    up to date (as the product reads them from its MERGE history)."""
    playbook = empty_playbook()
    reflection = ReflectorOutput(analysis="a", bullet_tags=[])
    started = time.process_time()  # CPU: a ratio that load alone cannot pass or fail
    for i, texts in enumerate(proposals, 1):
        ops = [{"type": "ADD", "text": t, "section": "OTHERS"} for t in texts]
        playbook, _ = apply_session(
            playbook, reflection, CuratorOutput(reasoning="r", operations=ops), near=near, aliases=aliases
        )
        if consolidate is not None and i % night == 0:
            playbook = consolidate(playbook)
    return playbook, time.process_time() - started


def curated(
    proposals: list[list[str]],
    embedder: Embedder,
    known: dict,
    threshold: float,
    lesson_of: dict[str, int],
    judge: float,
    seed: int,
) -> Playbook:
    """The stream with the curator in the loop, modelled: for each proposed lesson the prompt shows the two
    closest live entries from `threshold * NEIGHBOUR_SHARE` up (as `curate` builds it), and the modelled
    curator, which sees a shown entry says the same lesson with probability `judge`, then adds nothing (it
    would UPDATE that entry); otherwise it ADDs. The engine's near-duplicate check stays on behind it."""
    rng = random.Random(seed)
    playbook = empty_playbook()
    reflection = ReflectorOutput(analysis="a", bullet_tags=[])
    near = near_finder(embedder, known, threshold)
    for texts in proposals:
        shown_for = neighbour_finder(known, [e for _, e in playbook.entries()], floor=threshold * NEIGHBOUR_SHARE)
        ops = []
        for text in texts:
            shown = shown_for([text])
            same = [e for _, found in shown for e, _ in found if lesson_of[e.text] == lesson_of[text]]
            if same and rng.random() < judge:
                continue
            ops.append({"type": "ADD", "text": text, "section": "OTHERS"})
        playbook, _ = apply_session(playbook, reflection, CuratorOutput(reasoning="r", operations=ops), near=near)
    return playbook


def embed_missing(embedder: Embedder, known: dict, texts: list[str]) -> None:
    """Add to `known` the vectors of the texts it lacks."""
    missing = [t for t in texts if t not in known]
    if missing:
        known.update(zip(missing, embedder.embed(missing), strict=True))


def judged(
    embedder: Embedder,
    known: dict,
    threshold: float,
    floor: float,
    lesson_of: dict[str, int],
    right: float,
    seed: int,
    asked: list[int],
    aliases: dict[str, str],
    rejudge_after: int,
) -> Callable[[Playbook], Playbook]:
    """A nightly consolidation a model judges, through the product's own planning (`candidate_groups`,
    `judged_merges`, pairs kept apart remembered and never shown again); only the model's answer is modelled:
    for each group it MERGEs the members that share a lesson, seeing each such set with probability `right`
    (a set it misses is kept apart for good, as the product would record it)."""
    rng = random.Random(seed)
    apart: dict[frozenset[str], int] = {}  # pair -> the night it was kept apart
    merges: list[tuple[str, list[str], str]] = []
    nights = [0]

    def consolidate(playbook: Playbook) -> Playbook:
        nights[0] += 1
        entries = playbook.entries()
        embed_missing(embedder, known, [e.text for _, e in entries])
        recent = {p for p, n in apart.items() if nights[0] - n < rejudge_after}
        groups = candidate_groups(entries, known, floor=floor, judged_different=recent)
        asked.append(sum(len(g) for g in groups))
        answer = []
        for members in groups:
            by_lesson: dict[int, list[int]] = {}
            for i in members:
                by_lesson.setdefault(lesson_of[entries[i][1].text], []).append(i)
            for same in by_lesson.values():
                if len(same) > 1 and rng.random() < right:
                    ids = [entries[i][1].name for i in same]
                    answer.append({"type": "MERGE", "source_ids": ids, "merged_text": entries[same[0]][1].text})
        similar = merge_operations(entries, known, threshold)
        ops, kept_apart, _ = judged_merges(
            entries, similar, groups, CuratorOutput(reasoning="r", operations=answer), 500
        )
        apart.update(dict.fromkeys(kept_apart, nights[0]))
        if not ops:
            return playbook
        merged, report = apply_operations(playbook, ops, limit=None)
        merges.extend((o.entry_id, o.target_ids, o.old_text or "") for o in report.outcomes if o.entry_id)
        aliases.clear()
        aliases.update(merged_wordings(merges))  # from the whole MERGE history, as the product reads it
        return merged

    return consolidate


def consolidator(
    embedder: Embedder, known: dict, threshold: float, merges: list[int]
) -> Callable[[Playbook], Playbook]:
    """What `nightly` does after curating: merge clusters when the visible duplicate rate is above 2 %."""

    def consolidate(playbook: Playbook) -> Playbook:
        entries = playbook.entries()
        embed_missing(embedder, known, [e.text for _, e in entries])
        if not entries or near_pairs([e for _, e in entries], known, threshold) / len(entries) <= 0.02:
            return playbook
        ops = merge_operations(entries, known, threshold)
        merges.append(len(ops))
        return apply_operations(playbook, ops, limit=None)[0]

    return consolidate


def visible_rate(playbook: Playbook, embedder: Embedder, known: dict, threshold: float) -> float:
    entries = [e for _, e in playbook.entries()]
    embed_missing(embedder, known, [e.text for e in entries])
    return near_pairs(entries, known, threshold) / len(entries) if entries else 0.0


def precision(embedder: Embedder, known: dict, pool: list[list[str]], threshold: float) -> float:
    texts = [t for group in pool for t in group]
    label = np.array([i for i, group in enumerate(pool) for _ in group])
    vectors = np.stack([known[t] for t in texts])
    upper = np.triu(vectors @ vectors.T >= threshold, k=1)
    same = label[:, None] == label[None, :]
    return float((upper & same).sum() / max(upper.sum(), 1))


def goal_rows(who: str, playbook: Playbook, lesson_of: dict[str, int], lessons: int, *, modelled: bool) -> list[Row]:
    """The two growth goals for one stream: live entries per distinct lesson, and the duplicate rate."""
    live, rate = duplicate_rate(playbook, lesson_of)
    return [
        Row(
            "growth",
            f"live per lesson, {who}",
            "x",
            [live / lessons],
            goal="<= 1.5x",
            met=live / lessons <= 1.5,
            modelled=modelled,
        ),
        Row("growth", f"duplicate rate, {who}", "%", [100 * rate], goal="<= 2 %", met=rate <= 0.02, modelled=modelled),
    ]


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
    parser.add_argument("--night", type=int, default=50, help="sessions per night (a consolidation check after each)")
    parser.add_argument("--floor", type=float, default=None, help="judged consolidation's floor (default: the model's)")
    parser.add_argument("--rejudge", type=int, default=7, help="nights after which a pair kept apart is shown again")
    parser.add_argument("--sweep", action="store_true", help="also run the warm stream at lower thresholds")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of the exact and warm streams")
    args = parser.parse_args()
    pool = json.loads((ROOT / "data" / "lessons" / "paraphrases.json").read_text())["lessons"]
    lesson_of = {text: i for i, group in enumerate(pool) for text in group}
    proposals = stream(args.sessions, args.seed, pool)
    embedder = load_embedder(args.embedder)
    threshold = args.threshold or embedder.threshold
    exact, exact_s = run(proposals, None, None, args.night)
    known: dict = {}
    merges: list[int] = []
    near, cold_s = run(proposals, near_finder(embedder, known, threshold), None, args.night)
    warm = dict(known)
    _, warm_s = run(proposals, near_finder(embedder, warm, threshold), None, args.night)
    nightly, nightly_s = run(
        proposals, near_finder(embedder, warm, threshold), consolidator(embedder, warm, threshold, merges), args.night
    )
    print(
        f"{args.sessions} sessions, {sum(map(len, proposals))} proposed ADDs, {len(pool)} distinct lessons,"
        f" threshold {threshold}, a night every {args.night} sessions"
    )
    rows = [
        ("exact text (before)", exact, exact_s),
        (f"near-duplicates, {embedder.name}, cold", near, cold_s),
        (f"near-duplicates, {embedder.name}, warm", near, warm_s),
        (f"  + nightly consolidation ({sum(merges)} merges)", nightly, nightly_s),
    ]
    if args.sweep:
        for lower in (0.5, 0.45, 0.4):
            swept, swept_s = run(proposals, near_finder(embedder, warm, lower), None, args.night)
            p = precision(embedder, warm | {t: v for t, v in known.items()}, pool, lower)
            rows.append((f"near-duplicates, warm, threshold {lower} (P {p:.2f})", swept, swept_s))
    timing = interleaved(
        {
            "exact": lambda: run(proposals, None, None, args.night)[1],
            "near": lambda: run(proposals, near_finder(embedder, dict(warm), threshold), None, args.night)[1],
            # every wording embedded on first sight, as on the first night a lesson is proposed
            "cold": lambda: run(proposals, near_finder(embedder, {}, threshold), None, args.night)[1],
        },
        max(3, args.rounds),
    )
    floor = args.floor or embedder.floor
    # Modelled streams, by what they stand for: the curator judging the neighbours its prompt shows, and a
    # nightly consolidation a model judges (the product's candidate groups and merge rules; the answer modelled).
    modelled = {
        f"curator modelled (sees 2 neighbours, judges {judge:.0%} right)": curated(
            proposals, embedder, dict(warm), threshold, lesson_of, judge, args.seed
        )
        for judge in (1.0, 0.8)
    }
    shown: dict[str, list[int]] = {}
    for right in (1.0, 0.8):
        who = f"nightly consolidation judged by a model {right:.0%} right (groups from {floor:.2f})"
        shown[who], aliases = [], {}
        modelled[who] = run(
            proposals,
            near_finder(embedder, dict(warm), threshold),
            judged(
                embedder, dict(warm), threshold, floor, lesson_of, right, args.seed, shown[who], aliases, args.rejudge
            ),
            args.night,
            aliases,
        )[0]
    for who, asked in shown.items():
        print(f"  {who}: {sum(asked):,} entries shown in groups over {len(asked)} nights (max {max(asked)} a night)")
    rows.extend((f"  + {who}", playbook, float("nan")) for who, playbook in modelled.items())
    table = [
        Row(
            "growth",
            f"{args.sessions:,} sessions through near-duplicates (warm)",
            "s",
            timing["near"],
            "exact text",
            timing["exact"],
            goal="< 2x",
        ),
        Row(
            "growth",
            f"{args.sessions:,} sessions through near-duplicates (cold: every wording embedded)",
            "s",
            timing["cold"],
            "exact text",
            timing["exact"],
        ),
    ]
    table += goal_rows(f"engine alone ({len(pool)} lessons)", near, lesson_of, len(pool), modelled=False)
    for who, playbook in modelled.items():
        table += goal_rows(who, playbook, lesson_of, len(pool), modelled=True)
    table[0].met = (table[0].ratio or 0) < 2
    for label, playbook, seconds in rows:
        live, rate = duplicate_rate(playbook, lesson_of)
        covered = len({lesson_of[e.text] for _, e in playbook.entries()})
        seen = visible_rate(playbook, embedder, warm, threshold)
        print(
            f"  {label:48s} live {live:4d} ({live / len(pool):.2f}x lessons)  duplicate rate {rate:6.1%}"
            f" (visible {seen:5.1%})  lessons kept {covered}/{len(pool)}  {seconds:6.2f} s"
            f" ({seconds / exact_s:.2f}x exact)"
        )
    emit(table)


if __name__ == "__main__":
    main()
