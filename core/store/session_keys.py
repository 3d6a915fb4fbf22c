"""Session keys: a session is its contributor's and its id's, so one contributor's file never joins another's session.

A session's records name its id (`sessionId`), and anyone who can write to a team's bucket chooses what the records
say. So the key is the pair (contributor, id): the contributor is the bucket folder the file was fetched from ('' for
this machine's own files), never what the file says. The first pair to claim an id stores it as it is (the ids of
this machine and of a team without collisions stay what they were); a later pair with the same id and another
contributor becomes `<id>@<contributor>` (`<id>@local` for this machine), a session of its own: nothing merges, and
`forget` of one contributor never reaches another's session.

For the screen's quorum, each team session's content is kept as the set of its normalised message parts
(`session_content`), hashed. A part is its text, its tool name and its tool input's tokens, sorted (so reordering a
JSON object's keys changes nothing), its first 1,000 characters, in NFC, lower case, without whitespace or
default-ignorable code points (zero-width characters, variation selectors, tags); ids, timestamps, paths and the
order of the records are left out. Re-encoding, re-serialising, renaming the ids or re-dating a session therefore
leaves its content as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb

from core.store.db import transaction

__all__ = ["LOCAL", "assign_keys", "backfill_keys", "containing", "refresh_content", "session_parts", "source_ids"]

LOCAL = ""  # the contributor of this machine's own files
_LOCAL_LABEL = "local"

# Whitespace, separators, format characters and the other default-ignorable code points, in RE2 (`\s` is RE2's
# ASCII whitespace, without the vertical tab).
_IGNORABLE = (
    r"[\s\x0B\p{Z}\p{Cf}\x{034F}\x{115F}\x{1160}\x{17B4}\x{17B5}\x{180B}-\x{180F}\x{2060}-\x{206F}\x{3164}"
    r"\x{FE00}-\x{FE0F}\x{FFA0}\x{FFF0}-\x{FFF8}\x{E0000}-\x{E0FFF}]+"
)
_TOKENS = r"""[\s{}\[\]",:]+"""  # what separates a JSON object's tokens
# A part's first 1,000 characters tell it from others as well as all of it (two parts that differ only after them
# are taken for one, which can only hold an entry, never publish one) at a third of the cost for real transcripts.
_RAW = f"""
left(coalesce(text, '') || ' ' || coalesce(tool_name, '') || ' '
     || coalesce(array_to_string(list_sort(string_split_regex(tool_input, '{_TOKENS}')), ' '), ''), 1000)
"""
# ASCII text (most of it) takes the fast way, which removes exactly the ASCII characters `_IGNORABLE` does, so a
# copy made non-ASCII by one invisible character still comes out the same (the regular expression is 3x as slow).
_ASCII_SPACE = "replace(" * 6 + "lower(x)" + "".join(f", chr({c}), '')" for c in (9, 10, 11, 12, 13, 32))
_PART = f"""
CASE WHEN strlen(x) = length(x) THEN {_ASCII_SPACE}
     ELSE regexp_replace(lower(nfc_normalize(x)), '{_IGNORABLE}', '', 'g') END
"""
_REFRESH = f"""
INSERT INTO session_content
SELECT k.session_id, coalesce(list_sort(list(DISTINCT md5_number_lower(p.n)) FILTER (WHERE p.n <> '')), [])
FROM session_keys k JOIN sessions s USING (session_id)
LEFT JOIN (
    SELECT session_id, {_PART} AS n
    FROM (SELECT session_id, {_RAW} AS x FROM messages WHERE session_id IN (SELECT unnest($ids)))
) p USING (session_id)
WHERE k.session_id IN (SELECT unnest($ids))
GROUP BY k.session_id
"""


def assign_keys(con: duckdb.DuckDBPyConnection, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The stored session id of each (contributor, id the records carry), recording the new ones.

    Args:
        con: a read-write connection to the store.
        wanted: (contributor, id) pairs; the contributor is `LOCAL` for this machine's files. Pairs new to the store
            are given ids in this order, so the first claims an id that is still free.

    Returns:
        (contributor, id) -> the session id stored for it.
    """
    pairs = list(dict.fromkeys(wanted))
    if not pairs:
        return {}
    rows = con.execute(
        "SELECT k.contributor, k.source_id, k.session_id FROM session_keys k"
        " JOIN (SELECT unnest($c) AS c, unnest($s) AS s) w ON k.contributor = w.c AND k.source_id = w.s",
        {"c": [c for c, _ in pairs], "s": [s for _, s in pairs]},
    ).fetchall()
    keys = {(str(c), str(s)): str(k) for c, s, k in rows}
    new = [p for p in pairs if p not in keys]
    if not new:
        return keys
    candidates = {s for _, s in new} | {_qualified(c, s) for c, s in new}
    taken = {
        str(r[0])
        for r in con.execute(
            "SELECT session_id FROM session_keys WHERE session_id IN (SELECT unnest(?))", [sorted(candidates)]
        ).fetchall()
    }
    added: list[tuple[str, str, str]] = []
    for contributor, source in new:
        key = source if source not in taken else _free(con, _qualified(contributor, source), taken)
        taken.add(key)
        keys[(contributor, source)] = key
        added.append((contributor, source, key))
    with transaction(con):
        con.execute(
            "INSERT INTO session_keys (contributor, source_id, session_id) SELECT unnest($c), unnest($s), unnest($k)",
            {"c": [a[0] for a in added], "s": [a[1] for a in added], "k": [a[2] for a in added]},
        )
    return keys


def _qualified(contributor: str, source: str) -> str:
    return f"{source}@{contributor or _LOCAL_LABEL}"


def _free(con: duckdb.DuckDBPyConnection, base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`, ... : the first id no session holds (an id chosen to collide again)."""
    if base not in taken:
        return base
    held = taken | {
        str(r[0])
        for r in con.execute(
            "SELECT session_id FROM session_keys WHERE starts_with(session_id, ?)", [base + "-"]
        ).fetchall()
    }
    n = 2
    while f"{base}-{n}" in held:
        n += 1
    return f"{base}-{n}"


def backfill_keys(con: duckdb.DuckDBPyConnection) -> int:
    """Keys for a store written before sessions were keyed (schema 19), once: each id stays with the session that
    holds it (this machine's files first, then the contributor the session was tagged with), ids of forgotten
    sessions stay theirs, and a file of another contributor that had been merged into that session is read again
    by the next ingest, into a session of its own. Team sessions' content is computed.

    Returns:
        How many files will be read again.
    """
    row = con.execute(
        "SELECT EXISTS (SELECT 1 FROM session_keys),"
        " EXISTS (SELECT 1 FROM files WHERE session_id IS NOT NULL) OR EXISTS (SELECT 1 FROM forgotten)"
    ).fetchone()
    if not row or row[0] or not row[1]:
        return 0
    with transaction(con):
        con.execute(
            """
            INSERT INTO session_keys (contributor, source_id, session_id)
            SELECT owner, sid, sid FROM (
                SELECT session_id AS sid, '' AS owner, 0 AS rank FROM files
                WHERE session_id IS NOT NULL AND contributor IS NULL
                UNION ALL
                SELECT session_id, contributor, 1 FROM sessions WHERE contributor IS NOT NULL
                UNION ALL
                SELECT session_id, contributor, 2 FROM files WHERE session_id IS NOT NULL AND contributor IS NOT NULL
                UNION ALL
                SELECT unnest(session_ids), contributor, 3 FROM forgotten
            ) WHERE sid IS NOT NULL
            QUALIFY row_number() OVER (PARTITION BY sid ORDER BY rank, owner) = 1
            """
        )
        merged = con.execute(
            "UPDATE files SET mtime = -1, content_hash = NULL FROM session_keys k"
            " WHERE files.session_id = k.session_id AND coalesce(files.contributor, '') <> k.contributor"
        ).fetchone()
        refresh_content(con, None)
    return int(merged[0]) if merged else 0


def refresh_content(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str] | None) -> None:
    """Recompute what the team sessions among `session_ids` say (None: every team session without it yet), in the
    caller's transaction (the one that changed their messages)."""
    # Only team sessions: this machine's own are never copied into a bucket folder, and their messages are most of a
    # local ingest's bytes.
    if session_ids is None:
        which = "session_id NOT IN (SELECT session_id FROM session_content)"
    elif session_ids:
        which = "session_id IN (SELECT unnest($ids))"
    else:
        return
    ids = [
        str(r[0])
        for r in con.execute(
            f"SELECT session_id FROM session_keys WHERE contributor <> '' AND {which}",
            {"ids": list(session_ids)} if session_ids else {},
        ).fetchall()
    ]
    if ids:
        con.execute("DELETE FROM session_content WHERE session_id IN (SELECT unnest(?))", [ids])
        con.execute(_REFRESH, {"ids": ids})


def session_parts(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str]) -> dict[str, frozenset[int]]:
    """The content of each team session among `session_ids` (hashes of its normalised parts); this machine's own
    sessions, and sessions ingested before schema 19 that no ingest has seen since, have none."""
    rows = con.execute(
        "SELECT session_id, parts FROM session_content WHERE session_id IN (SELECT unnest(?))", [list(session_ids)]
    ).fetchall()
    return {str(s): frozenset(int(h) for h in parts) for s, parts in rows}


def source_ids(con: duckdb.DuckDBPyConnection, session_ids: Sequence[str]) -> dict[str, str]:
    """The id the records of each of `session_ids` carry (a session stored before keys were: its own id)."""
    rows = con.execute(
        "SELECT session_id, source_id FROM session_keys WHERE session_id IN (SELECT unnest(?))", [list(session_ids)]
    ).fetchall()
    found = {str(s): str(k) for s, k in rows}
    return {s: found.get(s, s) for s in session_ids}


# Pairs of distinct contents where the second holds every part of the first. A content is looked for only among
# those that hold its rarest part, so the work grows with the parts, not with the pairs of sessions.
_CONTAINING = """
WITH c AS (
    SELECT DISTINCT parts FROM session_content WHERE session_id IN (SELECT unnest($ids)) AND len(parts) > 0
), n AS (SELECT parts, row_number() OVER () AS cid FROM c),
u AS (SELECT cid, unnest(parts) AS h FROM n),
seen AS (SELECT h, count(*) AS k FROM u GROUP BY h),
probe AS (SELECT u.cid, arg_min(u.h, seen.k) AS h FROM u JOIN seen USING (h) GROUP BY u.cid)
SELECT small.parts, large.parts
FROM probe JOIN u ON u.h = probe.h AND u.cid <> probe.cid
JOIN n small ON small.cid = probe.cid JOIN n large ON large.cid = u.cid
WHERE len(large.parts) >= len(small.parts) AND list_has_all(large.parts, small.parts)
"""


def containing(
    con: duckdb.DuckDBPyConnection, session_ids: Sequence[str]
) -> dict[frozenset[int], list[frozenset[int]]]:
    """For each distinct content of the team sessions among `session_ids`, the other contents that hold all of its
    parts (an empty content is in every other: it is the same as other empty ones only)."""
    out: dict[frozenset[int], list[frozenset[int]]] = {}
    for small, large in con.execute(_CONTAINING, {"ids": list(session_ids)}).fetchall():
        out.setdefault(frozenset(int(h) for h in small), []).append(frozenset(int(h) for h in large))
    return out
