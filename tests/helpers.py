"""What several test modules share: the bundled transcripts, a seeds-shaped playbook, transcript files written
for a test, an Anthropic Messages API answer, counts derived straight from raw transcript lines, and the process's
peak memory."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.allowlist import Vouched
from core.exposure import LedgerLine, Shown
from core.models import CuratorOutput, Entry, Playbook, ReflectorOutput
from core.operations import apply_session, empty_playbook
from core.screen import text_holds
from core.store.db import connect, open_db
from core.store.exposure import store_ledger_lines
from core.store.registry import ensure_playbook
from core.store.versions import load_version, write_version
from flows.trust import trust

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"


def peak_mib() -> float:
    """This process's peak resident memory so far, in MiB (`ru_maxrss` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def git(cwd: Path, *args: str) -> str:
    """Run real `git` in `cwd` as a test author and return what it printed; a failure raises."""
    done = subprocess.run(
        ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def trust_config(path: Path) -> Path:
    """Trust the settings file a test just wrote (`playbook trust` in the test's own config folder), so every key of
    it applies, as it does once its user has trusted it."""
    trust(path)
    return path


def expose(db: Path, had: dict[str, list[str]], playbook: str = "default") -> None:
    """Record, as the SessionStart hook's ledger would, that each session's agent had these entries (so the
    reflector's tags on them count)."""
    lines = [
        LedgerLine(
            session_id=sid,
            at=datetime(2026, 1, 1).astimezone(),
            playbooks=[Shown(playbook=playbook, version=0, shown=ids)],
        )
        for sid, ids in had.items()
    ]
    with open_db(db) as con:
        store_ledger_lines(con, f"test:{len(lines)}", lines, 0, 0)


def one_version(db: Path) -> None:
    """A database at `db` whose playbook `default` has one session version (one ADD applied, one DELETE skipped)."""
    con = connect(db)
    ensure_playbook(con, "default")
    new, report = apply_session(
        load_version(con, "default"),
        ReflectorOutput(),
        CuratorOutput(operations=[{"type": "ADD", "text": "only lesson"}, {"type": "DELETE", "target_id": "ghost"}]),
    )
    write_version(con, "default", new, source="session", session_id="s1", report=report)
    con.close()


def message(
    text: str, *, input_tokens: int = 1000, output_tokens: int = 200, cache_write: int = 0, cache_read: int = 0
) -> dict[str, Any]:
    """An Anthropic Messages API response body whose one text block is `text`, with its usage."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }


ERROR = "ModuleNotFoundError: No module named 'app'"


def write_session(path: Path, session_id: str, start: datetime, *, error: bool) -> None:
    """A Claude Code session: a prompt, a Bash call that fails (with ERROR when `error`) and one that works."""

    def line(i: int, role: str, content: object) -> str:
        ts = (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
        record = {"type": role, "sessionId": session_id, "uuid": f"{session_id}-{i}", "timestamp": ts}
        return json.dumps(record | {"message": {"role": role, "content": content}})

    failure = ERROR if error else "exit code 2: lint failed"
    lines = [
        line(0, "user", "Run the tests please"),
        line(
            1,
            "assistant",
            [{"type": "tool_use", "id": f"{session_id}-t1", "name": "Bash", "input": {"command": "pytest"}}],
        ),
        line(
            2,
            "user",
            [{"type": "tool_result", "tool_use_id": f"{session_id}-t1", "content": failure, "is_error": True}],
        ),
        line(
            3,
            "assistant",
            [{"type": "tool_use", "id": f"{session_id}-t2", "name": "Bash", "input": {"command": "python -m pytest"}}],
        ),
        line(4, "user", [{"type": "tool_result", "tool_use_id": f"{session_id}-t2", "content": "3 passed"}]),
        line(5, "assistant", "All tests pass now."),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def claude_session(
    path: Path, session_id: str, start: datetime, turns: list[tuple[str, object]], cwd: str = "/w/app"
) -> None:
    """A Claude Code session file: one record per (role, content), a minute apart, started in `cwd`."""
    lines = []
    for i, (role, content) in enumerate(turns):
        ts = (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
        record = {"type": role, "sessionId": session_id, "uuid": f"{session_id}-{i}", "timestamp": ts, "cwd": cwd}
        lines.append(json.dumps(record | {"message": {"role": role, "content": content}}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


SEED_PLAYBOOK = {
    "version": "1.0",
    "last_updated": None,
    "sections": {
        "PATTERNS & APPROACHES": [
            {"name": "pat-001", "text": "Run the failing test first.", "helpful": 2, "harmful": 0}
        ],
        "MISTAKES TO AVOID": [],
        "USER PREFERENCES": [],
        "PROJECT CONTEXT": [],
        "OTHERS": [{"name": "oth-001", "text": "Prefer pathlib.", "helpful": 0, "harmful": 0}],
    },
}


def records(path: Path) -> list[dict[str, Any]]:
    """The JSON records of a JSONL transcript file."""
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def replayed(lines: list[bytes], upto: int, resume: int = 1) -> list[bytes]:
    """The records of `lines[:upto]` as Claude Code writes them again into a session's file after a resume: each
    record of the conversation (user and assistant) under a new uuid, its `parentUuid` pointing at the new uuid of its
    parent, everything else as it was (session id, timestamps, message ids, tool-use ids). `resume` numbers the
    resumes, so a second replay has uuids of its own."""
    new_ids: dict[str, str] = {}
    out = []
    for line in lines[:upto]:
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record, dict) or record.get("type") not in ("user", "assistant") or not record.get("uuid"):
            continue  # not conversation (progress, snapshots, queue operations): a resume does not send it again
        new_ids[record["uuid"]] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"resume-{resume}/{record['uuid']}"))
        record["uuid"] = new_ids[record["uuid"]]
        if record.get("parentUuid") in new_ids:
            record["parentUuid"] = new_ids[record["parentUuid"]]
        out.append(json.dumps(record).encode() + b"\n")
    return out


def _reminder(text: object) -> bool:
    """True for text Claude Code injects as a system reminder."""
    return isinstance(text, str) and text.lstrip().startswith("<system-reminder>")


_NOTES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat: The messages below were generated by the user while running local commands",
    "<ide_opened_file>",
    "<ide_selection>",
    "<ide_diagnostics>",
    "<task-notification>",
    "<user-prompt-submit-hook>",
)


def _note(text: object) -> bool:
    """True for text a user record carries that nobody typed as a prompt."""
    return isinstance(text, str) and text.lstrip().startswith(_NOTES)


def claude_expected(files: list[Path]) -> dict[str, int]:
    """Counts for one Claude Code session (main file plus subagents), straight from the JSON."""
    messages: set[str] = set()
    seen: set[str] = set()
    prompts = tool_calls = tool_errors = side_calls = side_errors = noise = 0
    queued: list[str] = []
    typed: set[str] = set()
    for path in files:
        for i, rec in enumerate(records(path)):
            if rec.get("uuid") in seen:
                continue  # the same record in a second file (a copy, a resumed session) counts once
            seen.add(rec.get("uuid") or f"{path}:{i}")
            kind = rec.get("type")
            attached = rec.get("attachment") or {}
            if (
                kind == "attachment"
                and attached.get("type") == "queued_command"
                and attached.get("origin") == {"kind": "human"}
            ):
                if attached.get("commandMode") == "prompt":
                    queued.append(str(attached.get("prompt")))  # typed while the agent worked
                continue
            if kind not in ("user", "assistant"):
                noise += 1  # every record that holds no conversation, whatever its type
                continue
            content = rec.get("message", {}).get("content")
            meta = bool(rec.get("isMeta"))
            key = rec["message"].get("id") or f"{path}:{i}"
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            notes = [b for b in blocks if kind == "user" and b.get("type") == "text" and _note(b.get("text"))]
            noise += len(notes)  # a slash command, its output, an IDE or task note: typed by no one
            visible = [
                b
                for b in blocks
                if b.get("type") != "tool_result" and not meta and not _reminder(b.get("text")) and b not in notes
            ]
            if visible:
                messages.add(key)
            calls = sum(1 for b in blocks if b.get("type") == "tool_use")
            errors = sum(1 for b in blocks if b.get("type") == "tool_result" and b.get("is_error") is True)
            if rec.get("isSidechain"):
                side_calls, side_errors = side_calls + calls, side_errors + errors
            else:
                tool_calls, tool_errors = tool_calls + calls, tool_errors + errors
            if kind == "user" and not meta and not rec.get("isCompactSummary") and not rec.get("isSidechain"):
                texts = [b.get("text", "") for b in blocks if b.get("type") == "text" and b not in notes]
                if any(not _reminder(t) and not t.startswith("[Request interrupted") for t in texts):
                    prompts += 1
                    typed.update(texts)
    prompts += len([text for text in queued if text not in typed])  # words handed over twice are one prompt
    return {
        "n_messages": len(messages),
        "n_user_prompts": prompts,
        "n_tool_calls": tool_calls,
        "n_tool_errors": tool_errors,
        "n_subagent_tool_calls": side_calls,
        "n_subagent_tool_errors": side_errors,
        "n_noise_records": noise,
    }


def codex_expected(path: Path) -> dict[str, int]:
    """Counts for one Codex rollout, straight from the JSON: tool calls, failed ones, user prompts."""
    calls = errors = prompts = 0
    for rec in records(path):
        payload = rec.get("payload", {})
        if rec.get("type") == "event_msg" and payload.get("type") == "user_message":
            prompts += 1
        if rec.get("type") != "response_item":
            continue
        if payload.get("type") in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            calls += 1
        if payload.get("type") in ("function_call_output", "custom_tool_call_output"):
            out = payload.get("output")
            match = re.search(r"(?i)exit(?:ed with)? code:? (-?\d+)", out if isinstance(out, str) else "")
            errors += bool(match and int(match.group(1)) != 0)
    return {"n_tool_calls": calls, "n_tool_errors": errors, "n_user_prompts": prompts}


def pb(**sections: list[tuple[str, str, int, int]]) -> Playbook:
    """A playbook from (name, text, helpful, harmful) per section slug: pat, mis or oth."""
    model = empty_playbook()
    names = {"pat": "PATTERNS & APPROACHES", "mis": "MISTAKES TO AVOID", "oth": "OTHERS"}
    for slug, items in sections.items():
        model.sections[names[slug]] = [Entry(name=n, text=t, helpful=h, harmful=x) for n, t, h, x in items]
    return model


LONG_HISTORY = """
INSERT INTO versions (playbook, version, created_at, source, session_id, n_entries)
    SELECT 'default', v, TIMESTAMPTZ '2026-01-01' + INTERVAL (v) HOUR, 'session', 's' || v, 60
    FROM range(1, $n + 1) t(v);
CREATE TEMP TABLE changes AS
    SELECT 'mis-' || lpad(((v * 37 + k * 11) % 60 + 1)::VARCHAR, 3, '0') AS name, v
    FROM range(2, $n + 1) a(v), range(3) b(k)
    UNION SELECT 'mis-' || lpad((i + 1)::VARCHAR, 3, '0'), 1 FROM range(60) c(i);
INSERT INTO entries
    SELECT 'default', name, CASE WHEN name < 'mis-030' THEN 'MISTAKES TO AVOID' ELSE 'OTHERS' END, v,
           'lesson ' || name || ' @' || v, v % 9, v % 4, v, lead(v) OVER (PARTITION BY name ORDER BY v)
    FROM changes;
INSERT INTO operations (playbook, version, session_id, idx, type, status, code, reason)
    SELECT 'default', v, 's' || v, 0, CASE v % 4 WHEN 0 THEN 'ADD' WHEN 1 THEN 'UPDATE' WHEN 2 THEN 'MERGE'
           ELSE 'DELETE' END, CASE WHEN v % 5 = 0 THEN 'skipped' ELSE 'applied' END,
           CASE WHEN v % 5 = 0 THEN 'not_found' END, CASE WHEN v % 5 = 0 THEN 'DELETE: target_id ''x' || v || ''' not found' END
    FROM range(1, $n + 1) t(v);
INSERT INTO prunes SELECT 'default', v, 's' || v, 'mis-001', 'MISTAKES TO AVOID', 'x', 0, 3
    FROM range(1, $n + 1, 50) t(v);
INSERT INTO runs (run_id, kind, playbook, provider, started_at, status, input_tokens, output_tokens, cost_usd)
    SELECT 'run-' || d, 'nightly', 'default', 'anthropic', TIMESTAMPTZ '2026-01-01' + INTERVAL (d) DAY, 'ok',
           1000 * d, 100 * d, 0.01 * d FROM range(30) t(d);
"""


def long_history(db: Path, versions: int) -> None:
    """A playbook `default` with `versions` versions written in SQL (for the report's scale)."""
    with open_db(db) as con:
        ensure_playbook(con, "default")
        con.execute(LONG_HISTORY.replace("$n", str(versions)))


def held_by(text: str, vouched: Vouched | None = None) -> set[str]:
    """The rules that hold `text` on its way to an agent (empty: admitted)."""
    return {hold.rule for hold in text_holds(text, vouched)}


def store_at(path: Path, version: int) -> Any:
    """A database file as playbook left it at schema `version` (its first migrations applied and recorded), open
    for a test to add rows before a newer playbook opens it."""
    import duckdb

    from core.store.schema import MIGRATIONS

    old = duckdb.connect(str(path))
    old.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ)")
    for number, name, sql in MIGRATIONS[:version]:
        old.execute(sql)
        old.execute("INSERT INTO schema_version VALUES (?, ?, now())", [number, name])
    return old


SESSION_START = datetime(2026, 5, 1, tzinfo=UTC)


def session(folder: Path, sid: str, cwd: str, turns: list[tuple[str, object]], day: int = 0) -> None:
    """A Claude Code session file in `folder`, whose records name `cwd` as their working folder."""
    lines = []
    for i, (role, content) in enumerate(turns):
        ts = (SESSION_START + timedelta(days=day, minutes=i)).isoformat().replace("+00:00", "Z")
        record = {"type": role, "sessionId": sid, "uuid": f"{sid}-{i}", "timestamp": ts, "cwd": cwd}
        lines.append(json.dumps(record | {"message": {"role": role, "content": content}}))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")


def bash(n: int, sid: str, command: str, output: str, *, error: bool = False) -> list[tuple[str, object]]:
    """A Bash call and its result."""
    call = {"type": "tool_use", "id": f"{sid}-t{n}", "name": "Bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": f"{sid}-t{n}", "content": output, "is_error": error}
    return [("assistant", [call]), ("user", [result])]
