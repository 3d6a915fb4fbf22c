"""Provenance: the whole life of one entry (`playbook why`) and the sessions behind each entry (exports)."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from core.store.published import trigger_recurrence
from core.store.registry import require_playbook

__all__ = [
    "entries_by_provider",
    "entry_life",
    "entry_providers",
    "entry_sources",
]

EXCERPT = 300  # characters of a reflector analysis or curator reasoning shown per event


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _excerpt(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def _session(con: duckdb.DuckDBPyConnection, playbook: str, session_id: str) -> dict[str, Any]:
    """A session as `why` names it: id, project, date, the first line of its first prompt, and what the
    reflector and the curator said about it for this playbook."""
    found = _rows(
        con,
        "SELECT s.session_id, s.project, s.started_at, s.contributor, NULL AS removed,"
        " (SELECT m.text FROM messages m WHERE m.session_id = s.session_id AND m.is_prompt AND m.text IS NOT NULL"
        # `seq` is a record's place in its own file: a session of several files is ordered by time first.
        "  ORDER BY m.ts NULLS LAST, m.source_path, m.seq, m.part LIMIT 1) AS first_prompt"
        " FROM sessions s WHERE s.session_id = ?",
        [session_id],
    )
    if not found:  # a session deleted on request (`playbook forget`) keeps its place in the history
        gone = con.execute(
            "SELECT contributor FROM forgotten WHERE list_contains(session_ids, ?) LIMIT 1", [session_id]
        ).fetchone()
        found = [
            {
                "session_id": session_id,
                "project": None,
                "started_at": None,
                "contributor": gone[0] if gone else None,
                "removed": "removed on request" if gone else None,
                "first_prompt": None,
            }
        ]
    row = found[0]
    prompt = row.pop("first_prompt")
    row["first_prompt"] = next((line.strip() for line in (prompt or "").splitlines() if line.strip()), None)
    # A model's answers are its exchanges; the rules' are their findings (`core.store.findings`): the newest of either.
    said = {
        step: text
        for step, text in con.execute(
            "SELECT step, arg_max(said, created_at) FROM ("
            " SELECT step, CASE step WHEN 'reflector' THEN json_extract_string(parsed, '$.analysis')"
            "  ELSE json_extract_string(parsed, '$.reasoning') END AS said, created_at"
            " FROM llm_calls WHERE playbook = $p AND session_id = $s AND parsed IS NOT NULL"
            " UNION ALL SELECT 'reflector', json_extract_string(reflection, '$.analysis'), created_at"
            " FROM rules_findings WHERE playbook = $p AND session_id = $s AND reflection IS NOT NULL"
            " UNION ALL SELECT 'curator', json_extract_string(curation, '$.reasoning'), created_at"
            " FROM rules_findings WHERE playbook = $p AND session_id = $s AND curation IS NOT NULL"
            ") GROUP BY step",
            {"p": playbook, "s": session_id},
        ).fetchall()
    }
    row["analysis"] = _excerpt(said.get("reflector") or said.get("reflection"))
    row["reasoning"] = _excerpt(said.get("curator"))
    if row["started_at"] is not None:
        row["started_at"] = str(row["started_at"])
    return row


def entry_life(con: duckdb.DuckDBPyConnection, playbook: str, entry_id: str, *, depth: int = 4) -> dict[str, Any]:
    """Every operation that created, changed, merged, removed or tagged `entry_id`, oldest first, with the
    sessions behind them; rediscoveries, prunes and trigger figures; for a MERGE result, its sources' lives
    (`depth` levels down).

    Returns:
        {"entry_id", "playbook", "now": live entry or None, "events": [...], "sessions": {id: session},
         "rediscoveries": [...], "triggers": [...], "sources": [lives of merged entries]}
    """
    require_playbook(con, playbook)
    live = _rows(
        con,
        "SELECT section, text, helpful, harmful, valid_from FROM entries"
        " WHERE playbook = ? AND name = ? AND valid_to IS NULL",
        [playbook, entry_id],
    )
    quoted = json.dumps(entry_id)
    events = _rows(
        con,
        """
        SELECT o.version, CAST(v.created_at AS VARCHAR) AS at, v.source, o.session_id, o.type AS event, o.reason,
               o.section, o.old_text, o.new_text, o.target_ids, o.entry_id, o.trigger, NULL AS rating,
               NULL AS rationale, json_extract_string(o.raw, '$.evidence') AS evidence, o.idx AS sort
        FROM operations o JOIN versions v USING (playbook, version)
        WHERE o.playbook = $p AND o.status = 'applied' AND (o.entry_id = $id OR contains(o.target_ids, $q))
        UNION ALL
        SELECT x.version, CAST(v.created_at AS VARCHAR), v.source, x.session_id, 'TAG', NULL, NULL, NULL, NULL,
               NULL, x.name, NULL, x.rating, x.rationale, NULL, -1  -- a session's tags apply before its operations
        FROM evaluations x JOIN versions v USING (playbook, version)
        WHERE x.playbook = $p AND x.name = $id AND x.status = 'applied'
        UNION ALL
        SELECT p.version, CAST(v.created_at AS VARCHAR), v.source, p.session_id, 'PRUNE',
               format('pruned: helpful {}, harmful {}', p.helpful, p.harmful), p.section, p.text, NULL, NULL,
               p.name, NULL, NULL, NULL, NULL, 2000
        FROM prunes p JOIN versions v USING (playbook, version)
        WHERE p.playbook = $p AND p.name = $id
        ORDER BY version, sort
        """,
        {"p": playbook, "id": entry_id, "q": quoted},
    )
    for event in events:
        event.pop("sort")
        event["target_ids"] = json.loads(event["target_ids"]) if event["target_ids"] else []
        if event["event"] == "MERGE" and event["entry_id"] != entry_id:
            event["event"] = "MERGED INTO"  # this entry was a source of a merge
    found_again = _rows(
        con,
        "SELECT r.version, CAST(v.created_at AS VARCHAR) AS at, r.session_id, r.similarity, r.text"
        " FROM rediscoveries r JOIN versions v USING (playbook, version)"
        " WHERE r.playbook = ? AND r.entry_id = ? ORDER BY r.version",
        [playbook, entry_id],
    )
    ids = [e["session_id"] for e in events + found_again if e["session_id"]]
    sources = []
    if depth > 0:
        for event in events:
            if event["event"] == "MERGE" and event["entry_id"] == entry_id:
                sources += [entry_life(con, playbook, s, depth=depth - 1) for s in event["target_ids"]]
    recurrence = [
        r.model_dump() | {"first_exported_at": str(r.first_exported_at) if r.first_exported_at else None}
        for r in trigger_recurrence(con, playbook, entry_id)
    ]
    return {
        "playbook": playbook,
        "entry_id": entry_id,
        "now": live[0] if live else None,
        "events": events,
        "sessions": {sid: _session(con, playbook, sid) for sid in dict.fromkeys(ids)},
        "rediscoveries": found_again,
        "triggers": recurrence,
        "sources": sources,
    }


def entry_sources(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, list[str]]:
    """For each entry ever written, the sessions whose operations or tags shaped it, through merges, in order."""
    direct: dict[str, list[str]] = {}
    merged_from: dict[str, list[str]] = {}
    for entry_id, session_id, kind, targets in con.execute(
        """
        SELECT entry_id, session_id, type, target_ids FROM (
            SELECT o.entry_id, o.session_id, o.type, o.target_ids, o.version, o.idx
            FROM operations o WHERE o.playbook = $p AND o.status = 'applied' AND o.entry_id IS NOT NULL
            UNION ALL
            SELECT x.name, x.session_id, 'TAG', NULL, x.version, -1
            FROM evaluations x WHERE x.playbook = $p AND x.status = 'applied'
        ) ORDER BY version, idx
        """,
        {"p": playbook},
    ).fetchall():
        if session_id:
            direct.setdefault(entry_id, []).append(session_id)
        if kind == "MERGE" and targets:
            merged_from[entry_id] = json.loads(targets)

    def walk(entry_id: str, seen: frozenset[str]) -> list[str]:
        found = list(direct.get(entry_id, []))
        for source in merged_from.get(entry_id, []):
            if source not in seen:
                found += walk(source, seen | {source})
        return found

    return {e: list(dict.fromkeys(walk(e, frozenset({e})))) for e in set(direct) | set(merged_from)}


def entry_providers(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, str]:
    """The provider whose run last wrote (ADD, UPDATE or MERGE) each live entry's text; entries written outside
    a run (an import, a revert) are not listed."""
    rows = con.execute(
        """
        SELECT o.entry_id, r.provider FROM operations o
        JOIN versions v USING (playbook, version)
        LEFT JOIN runs r ON r.run_id = v.run_id
        JOIN entries e ON e.playbook = o.playbook AND e.name = o.entry_id AND e.valid_to IS NULL
        WHERE o.playbook = ? AND o.status = 'applied' AND o.type IN ('ADD', 'UPDATE', 'MERGE')
        QUALIFY row_number() OVER (PARTITION BY o.entry_id ORDER BY o.version DESC, o.idx DESC) = 1
        """,
        [playbook],
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows if r[1] is not None}


def entries_by_provider(con: duckdb.DuckDBPyConnection, playbook: str, provider: str) -> set[str]:
    """Live entries whose text was last written (ADD, UPDATE or MERGE) in a run of `provider`."""
    return {name for name, by in entry_providers(con, playbook).items() if by == provider}
