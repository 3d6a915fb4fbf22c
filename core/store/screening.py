"""What the screen (`core.screen`) needs from the database: what the user's own prompts vouch for, what each
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
from collections import Counter
from collections.abc import Iterable, Mapping

import duckdb

from core.allowlist import Vouched
from core.language import is_function_word, language_of, scripts_of
from core.links import find_links, vouch_key
from core.playbook_screen import Screened, Support, text_key
from core.store.session_keys import containing, session_parts, source_ids

__all__ = [
    "project_folders",
    "release_holds",
    "released_holds",
    "shared_playbook",
    "support_of",
    "vouched_by_prompts",
]

# Candidates in the user's own prompts, in RE2 (DuckDB) syntax: URLs (their hosts are read by `core.links`, as a
# browser reads them), programs a prompt runs or names ("run bd ready", "use `gh`"), decided in Python.
_PROMPT_URL = r"(?i)(?:[a-z][a-z0-9+.\-]*://|www\.)[^\s<>\"'`(){}|]+"
_PROMPT_PROGRAM = r"(?i)(?:\b(?:run|use|try|execute|call|with)\s+`?|`)([A-Za-z0-9_][A-Za-z0-9._+-]{0,40})[\s`]"
# How many recent prompts tell the user's languages (a sample: the function words of a few thousand prompts).
_LANGUAGE_SAMPLE = 2000


def vouched_by_prompts(con: duckdb.DuckDBPyConnection) -> Vouched:
    """What the user's own prompts vouch for (never tool output, injected files or the model's words): the hosts
    their links lead to, the programs they run or name, the scripts their letters use, and the languages they are
    written in (a language counts once two prompts use it)."""
    prompts = "SELECT text FROM messages WHERE is_prompt AND text IS NOT NULL"
    urls = con.execute(
        f"SELECT DISTINCT u FROM (SELECT unnest(regexp_extract_all(text, ?)) AS u FROM ({prompts}) WHERE text LIKE"
        " '%://%' OR text ILIKE '%www.%')",
        [_PROMPT_URL],
    ).fetchall()
    hosts = {key for (url,) in urls for link in find_links(str(url)) if (key := vouch_key(link))}
    programs = con.execute(
        f"SELECT DISTINCT p FROM (SELECT unnest(regexp_extract_all(text || ' ', ?, 1)) AS p FROM ({prompts}))",
        [_PROMPT_PROGRAM],
    ).fetchall()
    # Prompts with a letter of another script than Latin (a few, for most users), their scripts told in Python.
    others = con.execute(
        f"SELECT left(text, 2000) FROM ({prompts}) WHERE regexp_matches(text, '[^\\p{{Latin}}\\P{{L}}]') LIMIT 5000"
    ).fetchall()
    scripts = scripts_of(str(t) for (t,) in others)
    sample = con.execute(
        f"SELECT left(text, 1000) FROM messages WHERE is_prompt AND text IS NOT NULL ORDER BY ts DESC NULLS LAST"
        f" LIMIT {_LANGUAGE_SAMPLE}"
    ).fetchall()
    said = Counter(language_of(str(t)) for (t,) in sample)
    return Vouched(
        programs=frozenset(str(p).lower() for (p,) in programs if p and not is_function_word(str(p))),
        hosts=frozenset(hosts),
        scripts=frozenset(scripts | {"Latin"}),
        languages=frozenset(lang for lang, n in said.items() if lang and n >= 2),
    )


def project_folders(con: duckdb.DuckDBPyConnection, most: int = 200) -> list[str]:
    """The working folders of the most recent sessions' projects (where their declarations may be read)."""
    rows = con.execute(
        "SELECT cwd FROM sessions WHERE cwd IS NOT NULL GROUP BY cwd ORDER BY max(started_at) DESC NULLS LAST LIMIT ?",
        [most],
    ).fetchall()
    return [str(r[0]) for r in rows]


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
