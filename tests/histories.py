"""Synthetic histories with a known truth, for the impact estimator (tests/flows/test_impact.py and
bench/bench_impact.py): lessons whose exposure truly lowers, leaves alone or raises the rate of their trigger,
sessions that had them or not, and the same history written in real shapes (Claude Code session files whose
failing `Bash` call prints the trigger, and the SessionStart hook's exposure ledger) for the end-to-end test.

Two designs, as `core.impact` estimates them: a randomised holdout (the hook leaves each entry out of a share of
sessions, decided by the product's own `held_out`), and a staggered-free rollout (some projects get the entries
at one moment, the others never), where only a difference in differences can tell the effect."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.hooks import held_out
from core.impact import Arm

# The histories start the day after the tests run: the tests add the lessons when they run, and a hook can only have
# given a lesson to a session that started once it existed (`impact` counts no other record).
START = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
PLAYBOOK = "default"


@dataclass(frozen=True)
class Lesson:
    """An entry, its trigger, how often the trigger comes up without it (`base`), and its true effect on that."""

    entry_id: str
    trigger: str
    base: float
    effect: float

    def rate(self, exposed: bool, shift: float = 0.0) -> float:
        return min(1.0, max(0.0, self.base + shift + (self.effect if exposed else 0.0)))


@dataclass
class Session:
    """One simulated session: what it was given (`shown`, `held`) and which triggers came up."""

    session_id: str
    project: str
    started_at: datetime
    hooked: bool
    shown: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)
    triggered: set[str] = field(default_factory=set)
    tool_errors: int = 0


LESSONS = (
    Lesson("mis-001", "ModuleNotFoundError: No module named 'app'", 0.30, -0.20),  # helps
    Lesson("mis-002", "error: unknown option '--frozen-lockfile'", 0.25, 0.0),  # does nothing
    Lesson("mis-003", "EADDRINUSE: address already in use", 0.15, 0.15),  # hurts
)


def holdout_history(
    seed: int, sessions: int = 600, share: float = 0.2, lessons: tuple[Lesson, ...] = LESSONS
) -> list[Session]:
    """Every session gets the hook; each entry is held out of about `share` of them by `held_out`."""
    rng = random.Random(seed)
    out: list[Session] = []
    for i in range(sessions):
        sid = f"sim-{seed}-{i:05d}"
        s = Session(sid, f"proj-{i % 8}", START + timedelta(hours=i), hooked=True)
        for lesson in lessons:
            away = held_out(sid, PLAYBOOK, lesson.entry_id, share)
            (s.held if away else s.shown).add(lesson.entry_id)
            if rng.random() < lesson.rate(not away):
                s.triggered.add(lesson.entry_id)
        s.tool_errors = len(s.triggered) + rng.randint(0, 2)
        out.append(s)
    return out


def rollout_history(seed: int, per_period: int = 40, lessons: tuple[Lesson, ...] = LESSONS) -> list[Session]:
    """Eight projects, each with its own base shift; the first four get every entry at the rollout (no holdout),
    the others never; every rate drifts by the same amount after the rollout (parallel trends)."""
    rng = random.Random(seed)
    shifts = [rng.uniform(-0.08, 0.08) for _ in range(8)]
    drift = rng.uniform(-0.05, 0.05)
    out: list[Session] = []
    n = 0
    for period in (0, 1):
        for p in range(8):
            for _ in range(per_period):
                sid = f"sim-{seed}-{n:05d}"
                at = START + timedelta(days=30 * period, minutes=n)
                n += 1
                exposed = period == 1 and p < 4
                s = Session(sid, f"proj-{p}", at, hooked=exposed)  # the hook's ledger records who had them
                for lesson in lessons:
                    if exposed:
                        s.shown.add(lesson.entry_id)
                    if rng.random() < lesson.rate(exposed, shifts[p] + drift * period):
                        s.triggered.add(lesson.entry_id)
                s.tool_errors = len(s.triggered)
                out.append(s)
    return out


ROLLOUT_AT = START + timedelta(days=30) - timedelta(minutes=1)


def _arm(sessions: list[Session], entry: str) -> Arm:
    return Arm(
        sessions=len(sessions),
        triggered=sum(entry in s.triggered for s in sessions),
        tool_errors=sum(s.tool_errors for s in sessions),
    )


def holdout_arms(history: list[Session], entry: str) -> tuple[Arm, Arm]:
    """(exposed, held out) sessions of `entry`."""
    return _arm([s for s in history if entry in s.shown], entry), _arm([s for s in history if entry in s.held], entry)


def rollout_arms(history: list[Session], entry: str) -> tuple[Arm, Arm, Arm, Arm]:
    """(treated before, treated after, control before, control after) of `entry`."""
    treated = {s.project for s in history if entry in s.shown}
    first = min(s.started_at for s in history if entry in s.shown)

    def pick(inside: bool, after: bool) -> Arm:
        return _arm(
            [s for s in history if (s.project in treated) == inside and (s.started_at >= first) == after],
            entry,
        )

    return pick(True, False), pick(True, True), pick(False, False), pick(False, True)


def _record(s: Session, n: int, kind: str, content: object, at: datetime) -> dict[str, object]:
    return {
        "type": kind,
        "sessionId": s.session_id,
        "uuid": f"{s.session_id}-{n}",
        "timestamp": at.isoformat().replace("+00:00", "Z"),
        "cwd": f"/work/{s.project}",
        "message": {"role": kind, "content": content},
    }


def write_history(history: list[Session], folder: Path, ledger: Path, lessons: tuple[Lesson, ...] = LESSONS) -> None:
    """The history as Claude Code session files under `folder` (one project folder each) and, for hooked
    sessions, the hook's ledger lines: a prompt, a failing `Bash` call printing each trigger that came up, and
    one that works."""
    triggers = {lesson.entry_id: lesson.trigger for lesson in lessons}
    ledger.parent.mkdir(parents=True, exist_ok=True)
    with ledger.open("a", encoding="utf-8") as log:
        for s in history:
            t = s.started_at
            turns: list[tuple[str, object, datetime]] = [("user", "run the tests", t)]
            for k, entry in enumerate(sorted(s.triggered)):
                call = f"toolu_{k}"
                use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "make test"}}
                result = {"type": "tool_result", "tool_use_id": call, "is_error": True, "content": triggers[entry]}
                turns += [("assistant", [use], t), ("user", [result], t)]
            use = {"type": "tool_use", "id": "toolu_ok", "name": "Bash", "input": {"command": "make"}}
            turns += [
                ("assistant", [use], t),
                (
                    "user",
                    [{"type": "tool_result", "tool_use_id": "toolu_ok", "content": "ok"}],
                    t + timedelta(seconds=5),
                ),
                ("assistant", [{"type": "text", "text": "Done."}], t + timedelta(seconds=6)),
            ]
            path = folder / s.project / f"{s.session_id}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [json.dumps(_record(s, n, kind, content, at)) for n, (kind, content, at) in enumerate(turns)]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            if s.hooked:
                got = {"playbook": PLAYBOOK, "version": 3, "shown": sorted(s.shown), "held_out": sorted(s.held)}
                line = {
                    "session_id": s.session_id,
                    "at": t.isoformat(),
                    "cwd": f"/work/{s.project}",
                    "playbooks": [got],
                }
                log.write(json.dumps(line) + "\n")
