"""Plain message logs: a JSON array (or `{"messages": [...]}`) or JSONL of `{role, content}` objects.

`content` is a string or a list of blocks (`{type: "text", text}`, `tool_use`, `tool_result`); roles
other than user/assistant/tool (system, developer) are counted as noise. These logs are small and rare,
so they are parsed in Python.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from core.transcripts._batch import PART_COLUMNS

__all__ = ["READER_VERSION", "load_messages", "parse_messages"]

# What this reader extracts, as a number: bump it whenever a change here stores other rows from the same file, so the
# ingest reads every file it read before again (`core.transcripts.reader_versions`).
READER_VERSION = 1

Row = dict[str, Any]


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
    return []


def parse_messages(path: Path, session_id: str) -> tuple[list[Row], int, int, dict[str, int]]:
    """Rows for `_parts` plus (n_records, bad_lines, noise records by kind) of one message log."""
    raw = path.read_bytes()
    records: list[object] = []
    bad = 0
    text = raw.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    whole: object = None
    if stripped.startswith(("[", "{")):
        try:
            whole = json.loads(stripped)
        except ValueError:
            whole = None
    if isinstance(whole, list):
        records = whole
    elif isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        records = whole["messages"]
    else:
        for line in raw.splitlines():
            if not line.strip():
                continue
            try:
                records.append(json.loads(line.decode("utf-8")))
            except (UnicodeDecodeError, ValueError):
                bad += 1
    rows: list[Row] = []
    noise: dict[str, int] = {}
    for seq, record in enumerate(records, start=1):
        if not isinstance(record, dict) or record.get("role") not in ("user", "assistant", "tool"):
            kind = f"role:{record.get('role')}" if isinstance(record, dict) else "(not an object)"
            noise[kind] = noise.get(kind, 0) + 1
            continue
        role = record["role"]
        for part, block in enumerate(_blocks(record.get("content"))):
            kind = str(block.get("type", "text"))
            is_error = bool(block.get("is_error", False))
            body = block.get("text") if kind == "text" else block.get("content")
            if kind == "tool_result" and isinstance(body, list):
                body = "\n".join(str(b.get("text", "")) for b in body if isinstance(b, dict))
            rows.append(
                {
                    "session_id": session_id,
                    "source_path": str(path),
                    "seq": seq,
                    "part": part,
                    "ts": None,
                    "role": "tool" if kind == "tool_result" else role,
                    "kind": kind if kind in ("text", "tool_use", "tool_result", "thinking", "image") else "text",
                    "text": body if isinstance(body, str) else (json.dumps(body) if body is not None else None),
                    "tool_name": block.get("name"),
                    "tool_input": json.dumps(block["input"]) if "input" in block else None,
                    "tool_use_id": block.get("id") or block.get("tool_use_id"),
                    "is_error": is_error,
                    "message_key": f"{path}:{seq}",
                    "is_sidechain": False,
                    "agent_id": None,
                    "is_meta": False,
                    "is_prompt": role == "user" and kind == "text",
                    "record_id": None,
                    "part_key": None,
                }
            )
    return rows, len(records) + bad, bad, noise


def load_messages(con: duckdb.DuckDBPyConnection, files: list[tuple[str, str]]) -> None:
    """Parse `(path, session_id)` message logs into the batch temp tables."""
    for path, session_id in files:
        rows, n_lines, bad, noise = parse_messages(Path(path), session_id)
        if rows:
            con.executemany(
                f"INSERT INTO _parts ({', '.join(PART_COLUMNS)}) VALUES ({', '.join('?' * len(PART_COLUMNS))})",
                [[row[c] for c in PART_COLUMNS] for row in rows],
            )
        con.execute("INSERT INTO _file_stats VALUES (?, ?, ?, ?)", [path, n_lines, bad, sum(noise.values())])
        if noise:
            con.executemany("INSERT INTO _file_noise VALUES (?, ?, ?)", [[path, k, n] for k, n in noise.items()])
        con.execute("INSERT INTO _file_meta VALUES (?, ?, NULL, NULL, NULL, NULL)", [path, session_id])
