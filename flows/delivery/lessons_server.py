"""`playbook mcp`: an MCP server where an agent asks for lessons and says how one turned out.

It runs over stdio on the official `mcp` SDK.
Tools: `search_lessons` (the same BM25 ranking over entry text and triggers as the prompt hook), `get_lesson` (its
text, the sessions it rests on, its impact verdict, what it cites), `report_outcome` (helped, hurt or wrong, with a
note). Read-only on the store: it answers from the hooks' snapshot (written by every nightly, `publish` and `hook
install`), never opens the database and never takes the writer's lock; with no snapshot every search is empty. What
it gives is recorded in the hooks' exposure ledger (source `MCP`), with the holdout applied; outcomes go to an
append-only feedback file beside it, the note redacted before it is written, that the next `ingest` merges,
validated. An outcome is evidence about an entry: it never changes an entry's text.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.hooks import SESSION_ID, applies, for_project, held_out, prompt_entries
from core.io.files import append_line
from core.patterns import Pattern
from flows.delivery.hookrun import ledger_path, read_snapshot

if TYPE_CHECKING:  # the redactor's rules load only in the server that redacts a note, not in every hook
    from core.redact import Redactor

__all__ = ["Outcome", "feedback_path", "lessons_server", "serve"]

Outcome = Literal["helped", "hurt", "wrong"]
_ID = Pattern(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,119}")
_SESSION = Pattern(SESSION_ID)
NOTE_CHARS = 2000  # of an outcome's note, what is kept
_QUERY_CHARS = 2000


def _default_redactor() -> Redactor:
    """Secrets, and this machine's home directory: what a note is cleaned of when no settings were read."""
    from core.redact import Redactor

    return Redactor(home=str(Path.home()))


def feedback_path(db: Path) -> Path:
    """The append-only file outcomes go to (beside the database, with the hooks' ledger)."""
    return db.parent / "hook" / f"{db.stem}-feedback.jsonl"


def _snapshot(db: Path) -> dict[str, Any]:
    return read_snapshot(db, "prompt")


# How far past `NOTE_CHARS` the redactor reads: a secret that begins inside the kept part is seen whole, so no
# prefix of it is left where the note is cut.
_SECRET_REACH = 1000


def _plain(note: str, redactor: Redactor) -> str:
    """A note as it is kept: at most `NOTE_CHARS`, without control characters (line breaks and tabs aside), its
    secrets and personal data out (`redactor`, as the store redacts it at the next merge: the file beside the store
    must not keep what the store does not)."""
    printable = "".join(c for c in note[: NOTE_CHARS + _SECRET_REACH] if c.isprintable() or c in "\n\t")
    return redactor.text(printable)[:NOTE_CHARS]


def _record(
    db: Path, session: str, shown: dict[tuple[str, int], list[str]], held: dict[tuple[str, int], list[str]]
) -> None:
    keys = sorted(set(shown) | set(held))
    if not keys:
        return
    line = {
        "session_id": session,
        "at": datetime.now(UTC).isoformat(),
        "cwd": "",
        "source": "MCP",
        "playbooks": [
            {"playbook": p, "version": v, "shown": shown.get((p, v), []), "held_out": held.get((p, v), [])}
            for p, v in keys
        ],
    }
    try:
        append_line(ledger_path(db), json.dumps(line, ensure_ascii=False) + "\n")
    except Exception:  # the agent still gets its answer; only the record is missing
        pass


def search(db: Path, session: str, query: str, project: str | None = None, k: int = 5) -> list[dict[str, Any]]:
    """The entries `query` calls up (BM25 over text and triggers), best first, at most `k` (1-20), without those
    about another project or held out of this session; recorded as given."""
    snapshot = _snapshot(db)
    share = float(snapshot.get("holdout") or 0.0)
    most = max(1, min(int(k), 20))
    found: list[dict[str, Any]] = []
    shown: dict[tuple[str, int], list[str]] = {}
    held: dict[tuple[str, int], list[str]] = {}
    for pb in snapshot.get("playbooks") or []:
        if project and not applies(pb, project):
            continue
        entries = pb.get("entries") or []
        key = (str(pb["name"]), int(pb["version"]))
        for position, score in prompt_entries(pb.get("index") or {}, query[:_QUERY_CHARS], most=most, least_score=0.5):
            section, entry = entries[position]
            name = entry["name"]
            if project and not for_project(pb.get("projects") or {}, name, project):
                continue
            if held_out(session, key[0], name, share):
                held.setdefault(key, []).append(name)
                continue
            shown.setdefault(key, []).append(name)
            found.append(
                {"id": name, "playbook": key[0], "section": section, "text": entry["text"], "score": round(score, 3)}
            )
    _record(db, session, shown, held)
    return sorted(found, key=lambda f: -f["score"])[:most]


def get(db: Path, session: str, entry_id: str) -> dict[str, Any] | None:
    """One entry: its text and section, how many sessions it rests on, its impact verdict and its citations; None
    for an entry the snapshot does not hold, or one held out of this session."""
    snapshot = _snapshot(db)
    share = float(snapshot.get("holdout") or 0.0)
    for pb in snapshot.get("playbooks") or []:
        for section, entry in pb.get("entries") or []:
            if entry["name"] != entry_id:
                continue
            key = (str(pb["name"]), int(pb["version"]))
            if held_out(session, key[0], entry_id, share):
                _record(db, session, {}, {key: [entry_id]})
                return None
            _record(db, session, {key: [entry_id]}, {})
            details = (pb.get("details") or {}).get(entry_id) or {}
            return {"id": entry_id, "playbook": key[0], "section": section, "text": entry["text"], **details}
    return None


def report(
    db: Path,
    session: str,
    entry_id: str,
    outcome: str,
    note: str = "",
    given: set[str] | None = None,
    redactor: Redactor | None = None,
) -> str:
    """Append an outcome to the feedback file (merged by the next `ingest`), its note redacted (`redactor`; default:
    secrets and this machine's home); what the agent is told. `given`: the lessons this session was given; an
    outcome on any other is refused (an agent speaks only of what it had)."""
    if not _ID.fullmatch(entry_id) or outcome not in ("helped", "hurt", "wrong"):
        return "Not recorded: give an entry id from search_lessons and an outcome of helped, hurt or wrong."
    if given is not None and entry_id not in given:
        return f"Not recorded: {entry_id} was not given to this session (search_lessons or get_lesson first)."
    line = {
        "session_id": session,
        "at": datetime.now(UTC).isoformat(),
        "entry_id": entry_id,
        "outcome": outcome,
        "note": _plain(note, redactor or _default_redactor()),
    }
    try:
        append_line(feedback_path(db), json.dumps(line, ensure_ascii=False) + "\n")
    except Exception as exc:
        return f"Not recorded: {str(exc)[:200]}"
    return f"Recorded: {entry_id} {outcome}. It counts as evidence at the next run; it never changes the lesson's text."


def lessons_server(db: Path, session: str | None = None, redactor: Redactor | None = None) -> Any:
    """The MCP server for the database `db` (its hooks' snapshot), serving one agent session (`session`: the
    exposure ledger's session id; default `PLAYBOOK_MCP_SESSION`, else one made for this process). `redactor`:
    what takes secrets and personal data out of a reported note (default: secrets and this machine's home)."""
    clean = redactor or _default_redactor()
    from mcp.server.mcpserver import MCPServer  # the SDK only for the server's own process

    given = session or os.environ.get("PLAYBOOK_MCP_SESSION") or ""
    sid = given if _SESSION.fullmatch(given) else f"mcp-{uuid.uuid4().hex[:16]}"
    server = MCPServer(
        "playbook",
        instructions="Lessons learned from this team's past coding-agent sessions. Search them before a task"
        " (search_lessons), read one whole (get_lesson), and say how one turned out (report_outcome).",
    )

    shown: set[str] = set()  # what this session was given: the only lessons it may report on

    @server.tool()
    def search_lessons(query: str, project: str | None = None, k: int = 5) -> list[dict[str, Any]]:
        """Lessons from past sessions that match `query` (words of the task, a command, an error), best first.
        `project`: the repository folder's name, to leave out other projects' lessons. `k`: at most this many."""
        found = search(db, sid, query, project, k)
        shown.update(f["id"] for f in found)
        return found

    @server.tool()
    def get_lesson(id: str) -> dict[str, Any]:
        """One lesson by id: its text, how many sessions it rests on, whether it helps (impact), what it cites."""
        found = get(db, sid, id)
        if found is None:
            return {"id": id, "error": "no such lesson here"}
        shown.add(id)
        return found

    @server.tool()
    def report_outcome(id: str, outcome: Outcome, note: str = "") -> str:
        """Say how a lesson you were given turned out in this task: helped, hurt or wrong, with a short note. It
        counts as evidence once per session; it never changes the lesson's text."""
        return report(db, sid, id, outcome, note, shown, clean)

    return server


def serve(db: Path, redactor: Redactor | None = None) -> None:
    """Serve `db`'s lessons over stdio until the client goes away; `redactor`: see `lessons_server`."""
    lessons_server(db, redactor=redactor).run("stdio")
