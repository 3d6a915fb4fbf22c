"""`playbook replay`: real transcripts replayed to the hooks in the order they happened, each session against the
playbook learned only from the sessions before it, to see what the hooks would have given and caught.

For each session, oldest first: the sessions before it are ingested into a scratch database and curated (the rules
by default: no key, nothing sent), the hooks' snapshot is written, then the session's start, prompts and shell calls
go to the hooks as Claude Code sends them (`flows.delivery.hookrun.answer`, the documented JSON). Per entry and in
total: guard fires, fires on a call that then failed (it would have caught it), fires on a call that then worked (a
false fire), and the tokens the hooks added against the whole playbook at the session's start. The user's database
is only read.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.hooks import start_context
from core.replay import EntryReplay, Event, SessionReplay, hook_input, session_events
from core.store.sessions import load_messages, sessions_in_order
from core.store.versions import load_version
from core.tokens import estimate_tokens
from flows.delivery.hook import write_snapshot
from flows.delivery.hookrun import answer, ledger_path, snapshot_path
from flows.run.curation import run_curation
from flows.run.ingest import ingest_with
from flows.workspace import Workspace

__all__ = ["Replay", "replay"]


class Replay(BaseModel):
    """The replay of every session, and each entry's guard over it."""

    provider: str
    sessions: list[SessionReplay]
    entries: list[EntryReplay]

    def totals(self) -> dict[str, int]:
        """The sums over the sessions."""
        keys = ("calls", "failed_calls", "fires", "caught", "false_fires", "start_tokens", "prompt_tokens")
        found = {k: sum(getattr(s, k) for s in self.sessions) for k in keys}
        found["guard_tokens"] = sum(s.guard_tokens for s in self.sessions)
        found["added_tokens"] = sum(s.added_tokens for s in self.sessions)
        found["whole_tokens"] = sum(s.whole_tokens for s in self.sessions)
        return found


def _context(printed: str) -> str:
    if not printed:
        return ""
    out = json.loads(printed)["hookSpecificOutput"]
    return str(out.get("additionalContext") or out.get("permissionDecisionReason") or "")


def _last_line(db: Path, seen: int) -> tuple[dict[str, Any] | None, int]:
    """The ledger line the hook just appended (None: it appended none), and the ledger's new size."""
    path = ledger_path(db)
    size = path.stat().st_size if path.exists() else 0
    if size == seen:
        return None, size
    with path.open("rb") as fh:
        fh.seek(seen)
        lines = fh.read().decode("utf-8").splitlines()
    return (json.loads(lines[-1]) if lines else None), size


def replay(
    ws: Workspace,
    sources: Sequence[Path | str],
    llm: str = "heuristic",
    progress: Callable[[int, int], None] | None = None,
) -> Replay:
    """Replay the sessions of `sources` (folders or files of transcripts) to the hooks, each against the playbook
    learned from the sessions before it with `llm` (default: the rules)."""
    scratch = Path(tempfile.mkdtemp(prefix="playbook-replay-"))
    try:
        changes = {"out_dir": scratch / "out", "holdout": 0.0, "shard": "one", "playbooks": [ws.playbook]}
        reader = Workspace.of(ws.settings.model_copy(update={**changes, "db": scratch / "all.duckdb"}))
        learner = Workspace.of(ws.settings.model_copy(update={**changes, "db": scratch / "learn.duckdb"}))
        provider = learner.provider(llm)
        ingest_with(reader, list(sources))
        with reader.store.read() as con:
            order = sessions_in_order(con)
        entries: dict[str, EntryReplay] = {}
        done: list[SessionReplay] = []
        for n, session in enumerate(order):
            if n:
                run_curation(learner, ws.playbook, provider)
                write_snapshot(learner)
            with reader.store.read() as con:
                events = session_events(load_messages(con, session.session_id))
            done.append(_one(learner, session.session_id, session.project, session.cwd or "", events, entries))
            ingest_with(learner, [Path(p) for p in session.paths])
            if progress:
                progress(n + 1, len(order))
        return Replay(provider=provider.label, sessions=done, entries=sorted(entries.values(), key=lambda e: -e.fires))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _one(
    ws: Workspace, sid: str, project: str | None, cwd: str, events: list[Event], entries: dict[str, EntryReplay]
) -> SessionReplay:
    """Replay one session's events to the hooks of `ws`'s snapshot (none yet for the first session)."""
    db = ws.store.path
    known, whole, texts = 0, 0, {}
    if snapshot_path(db).exists():
        with ws.database().read() as con:
            known = len(load_version(con, ws.playbook).entries())
        whole = estimate_tokens(start_context(json.loads(snapshot_path(db).read_bytes()), sid, cwd)[0])
        guards = json.loads(snapshot_path(db, "guards").read_bytes())
        texts = {g["entry"]: g["text"] for pb in guards["playbooks"] for g in pb["guards"]}
    seen = ledger_path(db).stat().st_size if ledger_path(db).exists() else 0
    start = _context(answer("session-start", db, json.dumps(hook_input(None, sid, cwd)), digest=True))
    _, seen = _last_line(db, seen)
    prompt_tokens = guard_tokens = fires = caught = false_fires = 0
    for event in events:
        event_name = "user-prompt-submit" if event.kind == "prompt" else "pre-tool-use"
        said = _context(answer(event_name, db, json.dumps(hook_input(event, sid, cwd))))
        line, seen = _last_line(db, seen)
        if event.kind == "prompt":
            prompt_tokens += estimate_tokens(said) if said else 0
            continue
        guard_tokens += estimate_tokens(said) if said else 0
        for given in line["playbooks"] if line is not None else []:
            for entry in given["shown"]:
                record = entries.setdefault(entry, EntryReplay(entry_id=entry, text=texts.get(entry, "")))
                record.fires += 1
                record.caught += event.failed
                record.false_fires += not event.failed
                fires += 1
                caught += event.failed
                false_fires += not event.failed
    calls = [e for e in events if e.kind == "bash"]
    return SessionReplay(
        session_id=sid,
        project=project,
        entries_known=known,
        prompts=len(events) - len(calls),
        calls=len(calls),
        failed_calls=sum(e.failed for e in calls),
        fires=fires,
        caught=caught,
        false_fires=false_fires,
        start_tokens=estimate_tokens(start) if start else 0,
        prompt_tokens=prompt_tokens,
        guard_tokens=guard_tokens,
        whole_tokens=whole,
    )
