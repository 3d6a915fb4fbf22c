"""What the agent did (`actions`), read from the stored tool calls of each ingested file once per content."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import duckdb

from core.store.db import transaction

if TYPE_CHECKING:
    from core.actions import ActionRow

__all__ = ["StoredCommand", "old_words", "refresh_actions", "session_commands"]

# A stored command as adherence reads it: its words, the folder it ran in, the program a pipe hands its output to,
# and the text a here document feeds it.
StoredCommand = tuple[tuple[str, ...], str | None, str | None, str | None]

_PENDING = """
SELECT f.path, f.content_hash FROM files f
WHERE f.status IN ('ok', 'shrunk') AND f.session_id IS NOT NULL
  AND NOT EXISTS (
    SELECT 1 FROM action_files a WHERE a.path = f.path AND a.content_hash IS NOT DISTINCT FROM f.content_hash
  )
"""


# The calls of some files that `actions` reads, as it reads them (`core.actions.Call`), in order: what a shell tool's
# input names as its line (`command`, else `cmd`) and working folder (`workdir`), what an edit tool's names as its file
# (`file_path`, else `notebook_path`), taken out by DuckDB's JSON reader. Nothing but an object names them, so an
# input that does not start as one gives nothing (a Codex input stored redacted: half the calls of the samples). The
# input itself is handed over (`raw`) where DuckDB's reading might not be Python's (`core.actions.read_call`): text
# DuckDB does not read as JSON, or reads and Python would not (a trailing comma), an object naming a key twice
# (Python keeps the last), a line given as an argument list. Parsing each input in Python, a whole file's content for
# a `Write`, was half of reading the actions (0.4 s of 0.8 at 1 GB). One level a step: a value named twice in one
# level, or a filter over them, has DuckDB read the JSON again for each (0.15 s at 1 GB became 0.25-0.47).
_CALLS = """
SELECT source_path, session_id, seq, shell,
       CASE WHEN read AND json_type(named) = 'VARCHAR' THEN named ->> '$' END AS text,
       CASE WHEN read AND shell AND json_type(v[3]) = 'VARCHAR' THEN v[3] ->> '$' END AS folder,
       CASE WHEN NOT read THEN t END AS raw, tool_name
FROM (
    SELECT *, ok AND json_type(named) IS DISTINCT FROM 'ARRAY' AS read
    FROM (
        SELECT *, CASE WHEN shell THEN coalesce(v[1], v[2]) ELSE coalesce(v[4], v[5]) END AS named,
                  v IS NOT NULL AND NOT trailing_comma AND len(k) = len(list_distinct(k)) AS ok
        FROM (
            SELECT source_path, session_id, seq, part, shell, tool_name, t,
                   try(json_extract(t, ['$.command', '$.cmd', '$.workdir', '$.file_path', '$.notebook_path'])) AS v,
                   try(json_keys(t)) AS k, regexp_matches(t, ',[ \\t\\n\\r]*[]}]') AS trailing_comma
            FROM (
                SELECT source_path, session_id, seq, part, tool_name, tool_input AS t,
                       tool_name IN (SELECT unnest($shell)) AS shell
                FROM messages
                WHERE kind = 'tool_use' AND tool_name IN (SELECT unnest($tools))
                  AND source_path IN (SELECT unnest($paths)) AND regexp_matches(tool_input, '^[ \\t\\n\\r]*[{]')
            )
        )
    )
)
ORDER BY source_path, seq, part
"""


def refresh_actions(con: duckdb.DuckDBPyConnection, batch: int = 1000) -> int:
    """Read the actions of every file ingested (or changed) since the last refresh, `batch` files a statement, and
    forget those of files that are gone. Returns how many files were read. (What a statement fetches is a few short
    values a call, so a batch is large: each scans `messages` once.)"""
    pending = con.execute(_PENDING).fetchall()
    if pending:  # the shell grammar is imported only when there is something to read (a re-ingest has not)
        from core.actions import EDIT_TOOLS, Call, action_rows, read_call
        from core.runs import SHELL_TOOLS

        # Only the calls `actions` reads: the others (reads, searches, to-do lists: a third of the calls) give no
        # action and change no folder; fetching and reading them was a fifth of this step (1.38 -> 1.13 s at 1 GB).
        tools = sorted(SHELL_TOOLS | EDIT_TOOLS)
    for start in range(0, len(pending), batch):
        chunk = pending[start : start + batch]
        paths = [str(p) for p, _ in chunk]
        rows = con.execute(_CALLS, {"shell": sorted(SHELL_TOOLS), "tools": tools, "paths": paths}).fetchall()
        by_file: dict[str, tuple[str, list[Call]]] = {}
        for path, session, seq, shell, text, folder, raw, tool in rows:
            if raw is not None:
                call = read_call(seq, tool, raw)
            elif text is not None:
                call = Call(seq, "command" if shell else "edit", text, folder)
            else:
                continue  # its input names no line or file (filtered here: a filter in the query computes it twice)
            if call is not None:
                by_file.setdefault(path, (session, []))[1].append(call)
        found = _Found()
        for path, (session, calls) in by_file.items():
            found.add(path, session, action_rows(calls))
        with transaction(con):
            con.execute("DELETE FROM actions WHERE source_path IN (SELECT unnest(?))", [paths])
            if found.seqs:
                found.insert(con)
            con.execute("DELETE FROM action_files WHERE path IN (SELECT unnest(?))", [paths])
            con.execute("INSERT INTO action_files SELECT unnest(?), unnest(?)", [paths, [h for _, h in chunk]])
    con.execute(
        "DELETE FROM actions WHERE source_path NOT IN (SELECT path FROM files WHERE status IN ('ok', 'shrunk'))"
    )
    con.execute("DELETE FROM action_files WHERE path NOT IN (SELECT path FROM files WHERE status IN ('ok', 'shrunk'))")
    return len(pending)


def old_words(text: str) -> tuple[str, ...]:
    """The words of a command's stored `text` (one space between its words), read by the lexer the hooks read a
    command line with (`shlex`, POSIX, quotes and escapes read, split at blanks only: the text is one command, so a
    `|` or `;` in it was an argument); split at spaces when it cannot read it (a quote the joining left open)."""
    import shlex

    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        found = tuple(lexer)
    except ValueError:
        found = ()
    return found or tuple(text.split(" "))


class _Found:
    """The actions of some files, to append to `actions` in one statement: each distinct action (all but its seq)
    once, and for each row its file, seq and action, as columns. A session runs the same commands again and again,
    so a row costs three integers here; handed over a value at a time (each converted on its own), the 47,000 rows of
    1 GB took 0.16 s, and as numpy arrays 0.10 s plus numpy's import."""

    def __init__(self) -> None:
        self.files: list[tuple[str, str]] = []
        self.distinct: dict[tuple[object, ...], int] = {}
        self.file_of: list[int] = []
        self.seqs: list[int] = []
        self.action_of: list[int] = []

    def add(self, path: str, session: str, rows: Iterable[ActionRow]) -> None:
        """Append `rows`, the actions of the file at `path` (of `session`), in order."""
        file = len(self.files)
        self.files.append((path, session))
        distinct = self.distinct
        for seq, *action in rows:
            self.file_of.append(file)
            self.seqs.append(seq)
            self.action_of.append(distinct.setdefault(tuple(action), len(distinct)))

    def insert(self, con: duckdb.DuckDBPyConnection) -> None:
        """Append the rows to `actions`, in the order they were added."""
        kinds, texts, folders, piped, words, stdins = zip(*self.distinct, strict=True)
        con.execute(
            """
            INSERT INTO actions (session_id, source_path, seq, kind, text, folder, piped_into, words, stdin)
            SELECT f.session_id, f.path, r.seq, a.kind, a.text, a.folder, a.piped_into, a.words, a.stdin
            FROM (SELECT unnest($file_of) AS file, unnest($seqs) AS seq, unnest($action_of) AS action,
                         generate_subscripts($seqs, 1) AS n) r
            JOIN (SELECT unnest($paths) AS path, unnest($sessions) AS session_id,
                         generate_subscripts($paths, 1) - 1 AS file) f USING (file)
            JOIN (SELECT unnest($kinds) AS kind, unnest($texts) AS text, unnest($folders) AS folder,
                         unnest($piped) AS piped_into, unnest($words) AS words, unnest($stdins) AS stdin,
                         generate_subscripts($kinds, 1) - 1 AS action) a USING (action)
            ORDER BY r.n
            """,
            {
                "file_of": self.file_of,
                "seqs": self.seqs,
                "action_of": self.action_of,
                "paths": [p for p, _ in self.files],
                "sessions": [s for _, s in self.files],
                "kinds": list(kinds),
                "texts": list(texts),
                "folders": list(folders),
                "piped": list(piped),
                "words": [list(w) or None for w in words],
                "stdins": list(stdins),
            },
        )


def session_commands(
    con: duckdb.DuckDBPyConnection, session_ids: Sequence[str]
) -> dict[str, tuple[str, list[StoredCommand]]]:
    """For each of `session_ids`: the folder it started in, and its commands in order (words, folder, piped into,
    here document). A command stored before words were kept, in a store no ingest has refreshed since (one open to
    read), has the words of its text (`old_words`)."""
    found: dict[str, tuple[str, list[StoredCommand]]] = {}
    if not session_ids:
        return found
    for sid, cwd in con.execute(
        "SELECT session_id, coalesce(cwd, '') FROM sessions WHERE session_id IN (SELECT unnest(?))", [list(session_ids)]
    ).fetchall():
        found[str(sid)] = (str(cwd), [])
    rows = con.execute(
        "SELECT session_id, words, text, folder, piped_into, stdin FROM actions WHERE kind = 'command'"
        " AND session_id IN (SELECT unnest(?)) ORDER BY session_id, source_path, seq",
        [list(session_ids)],
    ).fetchall()
    for sid, words, text, folder, piped, stdin in rows:
        if str(sid) in found:
            said = tuple(words) if words is not None else old_words(str(text))
            found[str(sid)][1].append((said, folder, piped, stdin))
    return found
