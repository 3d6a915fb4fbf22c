"""What the screen (`core.screen`) needs from the database: the hosts the user's own prompts name, what each
entry rests on (the contributors of the sessions behind it, a taint, a withdrawal), and the holds a person
released.

The contributors an entry rests on are counted by session, not by folder: two of its sessions are the same when
one's normalised parts are all in the other (a copy, re-encoded or not, or a copy of an earlier or later state of
a session that grew; `core.store.session_keys`), or when their records carry the same id. A session found under
one contributor's folder only counts for them; one found under several counts for none, since nothing tells whose
it is. So a copy of a session, under any number of folders, never adds a contributor; at worst it takes one away,
which holds the entry for `review`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import duckdb

from core.screen import Screened, Support, text_key
from core.store.session_keys import containing, session_parts, source_ids

__all__ = ["prompt_hosts", "release_holds", "released_holds", "shared_playbook", "support_of"]

# The host of a URL, in RE2 (DuckDB) syntax; the same hosts `core.screen.url_hosts` finds in an entry.
_HOST = r"(?i)\b(?:https?|ftp|wss?)://(?:[^\s/@]+@)?([A-Za-z0-9.\-]+)"


def prompt_hosts(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every host a URL in a user's own prompt names (not tool output, not the model's words), lower case."""
    rows = con.execute(
        "SELECT DISTINCT lower(h) FROM (SELECT unnest(regexp_extract_all(text, ?, 1)) AS h FROM messages"
        " WHERE is_prompt AND text LIKE '%://%')",
        [_HOST],
    ).fetchall()
    return {str(r[0]).rstrip(".") for r in rows if r[0]}


def shared_playbook(con: duckdb.DuckDBPyConnection, playbook: str) -> bool:
    """True when `playbook` learns from the sessions of two contributors or more (this machine's own sessions,
    which have none, count as one)."""
    row = con.execute(
        "SELECT count(DISTINCT coalesce(s.contributor, '')) FROM applied_sessions a JOIN sessions s USING (session_id)"
        " WHERE a.playbook = ? AND a.status = 'applied'",
        [playbook],
    ).fetchone()
    return bool(row and row[0] >= 2)


def support_of(con: duckdb.DuckDBPyConnection, playbook: str, texts: Mapping[str, str]) -> dict[str, Support]:
    """For each entry in `texts` (id -> its text now): the contributors of the sessions that wrote it, tagged it
    helpful or found it again (through merges), whether the text it has was written from what the agent read
    (a `tainted` ADD), and whether every session behind it was withdrawn (`playbook forget`)."""
    direct: dict[str, set[str]] = {}
    merged_from: dict[str, list[str]] = {}
    for entry_id, session_id, kind, targets in con.execute(
        """
        SELECT o.entry_id, o.session_id, o.type, o.target_ids FROM operations o
        WHERE o.playbook = $p AND o.status = 'applied' AND o.entry_id IS NOT NULL
          AND o.type IN ('ADD', 'UPDATE', 'MERGE')
        UNION ALL
        SELECT x.name, x.session_id, 'TAG', NULL FROM evaluations x
        WHERE x.playbook = $p AND x.status = 'applied' AND x.rating = 'helpful'
        UNION ALL
        SELECT r.entry_id, r.session_id, 'FOUND', NULL FROM rediscoveries r WHERE r.playbook = $p
        """,
        {"p": playbook},
    ).fetchall():
        if session_id:
            direct.setdefault(entry_id, set()).add(session_id)
        if kind == "MERGE" and targets:
            merged_from[entry_id] = json.loads(targets)

    def sessions(entry_id: str, seen: frozenset[str]) -> set[str]:
        found = set(direct.get(entry_id, ()))
        for source in merged_from.get(entry_id, []):
            if source not in seen:
                found |= sessions(source, seen | {source})
        return found

    behind = {e: sessions(e, frozenset({e})) for e in texts}
    every = sorted({s for ids in behind.values() for s in ids})
    contributor = dict(
        con.execute(
            "SELECT session_id, contributor FROM sessions WHERE session_id IN (SELECT unnest(?))", [every]
        ).fetchall()
    )
    withdrawn = {
        str(s): str(c)
        for s, c in con.execute(
            "SELECT s, contributor FROM (SELECT unnest(session_ids) AS s, contributor FROM forgotten)"
            " WHERE s IN (SELECT unnest(?))",
            [every],
        ).fetchall()
    }
    tainted: dict[str, tuple[str, str]] = {}
    for entry_id, text, why in con.execute(
        "SELECT entry_id, new_text, json_extract_string(raw, '$.tainted') FROM operations"
        " WHERE playbook = ? AND status = 'applied' AND type = 'ADD'"
        " AND json_extract_string(raw, '$.tainted') IS NOT NULL",
        [playbook],
    ).fetchall():
        tainted[str(entry_id)] = (str(text), str(why))
    parts, sources = session_parts(con, list(contributor)), source_ids(con, list(contributor))
    larger = containing(con, list(contributor))
    out: dict[str, Support] = {}
    for entry_id, text in texts.items():
        ids = behind[entry_id]
        live = {s for s in ids if s in contributor}
        taint = tainted.get(entry_id)
        gone = sorted({withdrawn[s] for s in ids if s in withdrawn})
        out[entry_id] = Support(
            contributors=_credited(live, contributor, parts, sources, larger),
            tainted=taint[1] if taint and taint[0] == text else None,
            withdrawn=(
                f"every session behind it was withdrawn by {', '.join(gone)} (playbook forget)"
                if ids and not live and gone
                else None
            ),
        )
    return out


def _credited(
    sessions: set[str],
    contributor: Mapping[str, str | None],
    parts: Mapping[str, frozenset[int]],
    sources: Mapping[str, str],
    larger: Mapping[frozenset[int], list[frozenset[int]]],
) -> set[str | None]:
    """The contributors `sessions` count for: sessions whose records carry the same id (this machine's session and
    the copy it pushed), or whose content one holds the other's, are one (transitively, among `sessions` only); one
    held under a single contributor counts for them, one under several for none. When none counts, one name saying
    so stands for them all, so the entry still rests on one contributor (and never on none, which the screen reads
    as "no session behind it")."""
    root = {s: s for s in sessions}

    def find(s: str) -> str:
        while root[s] != s:
            root[s] = root[root[s]]
            s = root[s]
        return s

    def join(a: str, b: str) -> None:
        root[find(a)] = find(b)

    by_source: dict[str, str] = {}
    by_content: dict[frozenset[int], str] = {}
    for s in sorted(sessions):
        join(s, by_source.setdefault(sources.get(s, s), s))
        if s in parts:
            join(s, by_content.setdefault(parts[s], s))
    for content, s in by_content.items():
        for other in larger.get(content, ()):
            if other in by_content:
                join(s, by_content[other])
    holders: dict[str, set[str | None]] = {}
    for s in sessions:
        holders.setdefault(find(s), set()).add(contributor[s])
    credited = {next(iter(h)) for h in holders.values() if len(h) == 1}
    if credited or not holders:
        return credited
    names = sorted({c or "this machine" for h in holders.values() for c in h})
    return {f"the same session(s) under {', '.join(names)}"}


def released_holds(con: duckdb.DuckDBPyConnection, playbook: str) -> set[tuple[str, str]]:
    """(entry id, text key) of every held text a person released for export."""
    rows = con.execute("SELECT entry_id, text_key FROM screen_releases WHERE playbook = ?", [playbook]).fetchall()
    return {(str(e), str(k)) for e, k in rows}


def release_holds(con: duckdb.DuckDBPyConnection, playbook: str, held: Iterable[Screened], by: str | None) -> None:
    """Record that `held` may be exported as they read now (an explicit approval, kept with who gave it)."""
    con.executemany(
        "INSERT OR REPLACE INTO screen_releases (playbook, entry_id, text_key, rules, released_by)"
        " VALUES (?, ?, ?, ?, ?)",
        [(playbook, h.name, text_key(h.text), [x.rule for x in h.holds], by) for h in held],
    )
