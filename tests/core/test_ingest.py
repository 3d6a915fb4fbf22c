"""Ingest: idempotency, growing files, bad inputs that never abort a run, and nothing lost."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.store.db import open_db
from core.store.ingest import ingest
from core.transcripts._batch import MAX_OBJECT_SIZE, MIN_OBJECT_SIZE, object_size_bound
from tests.profiles import examples

SHORT = "claude-code/spotter/short.jsonl"
SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca"  # the sessionId its records carry


def table_counts(con: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    row = con.execute(
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM sessions), (SELECT count(*) FROM files)"
    ).fetchone()
    assert row is not None
    return tuple(row)


def user_line(text: str, session: str = "s1", uuid: str = "u1") -> str:
    return json.dumps(
        {
            "type": "user",
            "sessionId": session,
            "uuid": uuid,
            "cwd": "/work/proj",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": text},
        }
    )


def test_second_run_is_idempotent(con: duckdb.DuckDBPyConnection, samples: Path, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    shutil.copytree(samples, archive)
    first = ingest(con, [archive])
    before = table_counts(con)
    second = ingest(con, [archive])
    # 12 transcripts, 1 empty file, 1 titles-only file (no conversation); all 14 unchanged the second time
    assert (first.count("new"), first.count("empty"), first.count("unrecognised"), second.count("unchanged")) == (
        12,
        1,
        1,
        14,
    )
    assert second.messages == 0 and table_counts(con) == before
    # Same bytes, new mtime: the content hash recognises the file.
    os.utime(archive / SHORT, (1, 1))
    third = ingest(con, [archive])
    assert third.count("unchanged") == 14 and table_counts(con) == before


def test_growing_file_replaces_its_session(con: duckdb.DuckDBPyConnection, samples: Path, tmp_path: Path) -> None:
    lines = (samples / SHORT).read_bytes().splitlines(keepends=True)
    path = tmp_path / "proj" / "short.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(lines[:8]))
    ingest(con, [path])
    partial = con.execute("SELECT n_messages, n_tool_calls FROM sessions WHERE session_id = ?", [SHORT_ID]).fetchone()
    with path.open("ab") as fh:
        fh.write(b"".join(lines[8:]))
    summary = ingest(con, [path])
    assert [r.status for r in summary.results] == ["changed"]
    full = con.execute("SELECT n_messages, n_tool_calls FROM sessions WHERE session_id = ?", [SHORT_ID]).fetchone()
    assert partial != full and full == (3, 2)
    with open_db(tmp_path / "fresh.duckdb") as fresh:  # the same file, into a second, from-scratch database
        ingest(fresh, [samples / SHORT])
        assert table_counts(con)[0] == table_counts(fresh)[0]  # no duplicated messages


@pytest.mark.parametrize(
    ("name", "payload", "bad"),
    [
        ("malformed.jsonl", lambda: (user_line("a") + "\n{not json\n" + user_line("b", uuid="u2") + "\n").encode(), 1),
        ("latin1.jsonl", lambda: (user_line("a") + "\n").encode() + b'{"type": "user", "x": "\xff\xfe"}\n', 1),
        ("huge.jsonl", lambda: (user_line("x" * 1_200_000) + "\n" + user_line("b", uuid="u2") + "\n").encode(), 0),
    ],
)
def test_bad_lines_are_counted_not_fatal(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, samples: Path, name: str, payload: Any, bad: int
) -> None:
    path = tmp_path / "proj" / name
    path.parent.mkdir()
    path.write_bytes(payload())
    summary = ingest(con, [path, samples / SHORT])
    result = next(r for r in summary.results if r.path.endswith(name))
    assert (result.status, result.bad_lines) == ("new", bad)
    row = con.execute("SELECT n_messages, n_bad_lines FROM sessions WHERE session_id = 's1'").fetchone()
    assert row is not None and row[1] == bad and row[0] >= 1
    if name == "huge.jsonl":
        text = con.execute("SELECT max(length(text)) FROM messages WHERE session_id = 's1'").fetchone()
        assert text == (1_200_000,)
    assert con.execute("SELECT count(*) FROM sessions WHERE session_id = ?", [SHORT_ID]).fetchone() == (1,)


def unreadable(monkeypatch: pytest.MonkeyPatch, name: str) -> Any:
    """Make every file called `name` refuse to open (permission denied); returns the real `Path.open`."""
    real_open = Path.open

    def guarded_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == name:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", guarded_open)
    return real_open


def test_empty_and_unreadable_files_are_reported(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    locked = tmp_path / "locked.jsonl"
    locked.write_text(user_line("secret") + "\n")
    real_open = unreadable(monkeypatch, "locked.jsonl")
    summary = ingest(con, [empty, locked, samples / SHORT, tmp_path / "missing.jsonl"])
    statuses = {Path(r.path).name: (r.status, r.error) for r in summary.results}
    assert statuses["empty.jsonl"] == ("empty", "empty file")  # named with its reason
    assert statuses["locked.jsonl"] == ("failed", "unreadable: Permission denied")
    assert statuses["missing.jsonl"] == ("failed", "no such file or folder")
    assert statuses["short.jsonl"][0] == "new"
    assert not summary.nothing_readable
    # The failed file is retried on the next run once it is readable again.
    monkeypatch.setattr(Path, "open", real_open)
    again = ingest(con, [locked])
    assert [r.status for r in again.results] == ["new"]


def test_nothing_readable(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    junk = tmp_path / "notes.json"
    junk.write_text('{"hello": "world"}')
    summary = ingest(con, [junk, tmp_path / "nope"])
    assert summary.nothing_readable
    assert [r.status for r in summary.results] == ["failed", "unrecognised"]


def test_failed_reparse_keeps_previous_messages(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "proj" / "short.jsonl"
    path.parent.mkdir()
    shutil.copy(samples / SHORT, path)
    ingest(con, [path])
    before = table_counts(con)
    with path.open("ab") as fh:
        fh.write((user_line("more", session="short", uuid="late") + "\n").encode())
    import core.store.ingest as ingest_module

    def broken(con: duckdb.DuckDBPyConnection, files: list[str], max_object_size: int) -> None:
        raise duckdb.IOException("IO Error: disk went away")

    monkeypatch.setattr(ingest_module, "load_claude_code", broken)
    summary = ingest(con, [path])
    assert [(r.status, r.error) for r in summary.results] == [("failed", "IO Error: disk went away")]
    assert table_counts(con)[:2] == before[:2]  # the old session is intact


def test_a_file_that_shrinks_keeps_what_was_stored_and_is_read_again_once_it_grows(tmp_path: Path) -> None:
    def line(i: int) -> str:
        role = "user" if i % 2 == 0 else "assistant"
        return json.dumps(
            {
                "type": role,
                "sessionId": "grow-1",
                "uuid": f"g{i}",
                "timestamp": f"2026-01-01T00:00:{i:02d}Z",
                "message": {"role": role, "content": f"message {i}"},
            }
        )

    path = tmp_path / "t" / "grow-1.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(line(i) for i in range(20)) + "\n")
    with open_db(tmp_path / "s.duckdb") as con:
        ingest(con, [tmp_path / "t"])
        assert con.execute("SELECT n_messages FROM sessions").fetchone() == (20,)
        path.write_text("\n".join(line(i) for i in range(3)) + "\n")  # replaced by a shorter file
        shrunk = ingest(con, [tmp_path / "t"])
        assert [r.status for r in shrunk.results] == ["shrunk"]
        assert "shrank from" in (shrunk.results[0].error or "")
        assert con.execute("SELECT n_messages FROM sessions").fetchone() == (20,)  # nothing lost
        assert [r.status for r in ingest(con, [tmp_path / "t"]).results] == ["unchanged"]  # said once
        path.write_text("\n".join(line(i) for i in range(30)) + "\n")  # grows past its old size
        grown = ingest(con, [tmp_path / "t"])
        assert [r.status for r in grown.results] == ["changed"]
        assert con.execute("SELECT n_messages FROM sessions").fetchone() == (30,)


def test_files_that_turn_unreadable_or_empty_keep_their_messages(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept, emptied = tmp_path / "kept.jsonl", tmp_path / "emptied.jsonl"
    kept.write_text(user_line("first", session="k", uuid="k1") + "\n")
    emptied.write_text(user_line("first", session="e", uuid="e1") + "\n")
    ingest(con, [kept, emptied])
    kept.write_text(kept.read_text() + user_line("second", session="k", uuid="k2") + "\n")  # grown: read again
    emptied.write_bytes(b"")
    unreadable(monkeypatch, "kept.jsonl")
    summary = ingest(con, [kept, emptied])
    assert sorted(r.status for r in summary.results) == ["failed", "shrunk"]
    stored = con.execute("SELECT session_id, text FROM messages ORDER BY ALL").fetchall()
    assert stored == [("e", "first"), ("k", "first")]  # nothing read before is lost


def test_a_batch_that_fails_in_the_background_is_retried_file_by_file(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many small batches, each normalised ahead on the other connection: the one whose normalisation fails
    is retried file by file, its bad file recorded as failed, and every other file stored."""
    import core.store.ingest as ingest_module

    real = ingest_module.load_claude_code

    def failing_on_one(connection: duckdb.DuckDBPyConnection, files: list[str], max_object_size: int) -> None:
        if any(Path(f).name == "poisoned.jsonl" for f in files):
            raise duckdb.InvalidInputException("Invalid Input Error: poisoned")
        real(connection, files, max_object_size)

    monkeypatch.setattr(ingest_module, "load_claude_code", failing_on_one)
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(6):
        (folder / f"s{i}.jsonl").write_text(user_line(f"prompt {i}", session=f"s{i}", uuid=f"u{i}") + "\n")
    (folder / "poisoned.jsonl").write_text(user_line("poison", session="p", uuid="p1") + "\n")
    summary = ingest(con, [folder], batch_bytes=300)  # two or three files a batch
    statuses = {Path(r.path).name: r.status for r in summary.results}
    assert statuses.pop("poisoned.jsonl") == "failed"
    assert set(statuses.values()) == {"new"} and len(statuses) == 6
    stored = con.execute("SELECT session_id FROM sessions ORDER BY 1").fetchall()
    assert stored == [(f"s{i}",) for i in range(6)]


def test_an_ingest_in_many_batches_leaves_duckdb_threads_as_it_found_them(tmp_path: Path) -> None:
    """An ingest of several batches runs with one DuckDB thread fewer (each statement also runs on its caller's
    thread); the connection's setting is restored after, for whatever it runs next."""
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(4):
        (folder / f"s{i}.jsonl").write_text(
            "\n".join(user_line(f"prompt {i} {j}", session=f"s{i}", uuid=f"u{i}-{j}") for j in range(40)) + "\n"
        )
    with open_db(tmp_path / "p.duckdb") as con:
        con.execute("SET threads = 3")
        summary = ingest(con, [folder], batch_bytes=1)  # a batch per file
        assert summary.sessions == 4
        assert con.execute("SELECT current_setting('threads')").fetchone() == (3,)


@pytest.mark.parametrize("limit", ["2GB", "200MB", "1.5GB"])
def test_an_ingest_caps_duckdb_memory_while_it_runs_and_restores_it(tmp_path: Path, limit: str) -> None:
    """DuckDB's buffer pool keeps what it wrote until its memory limit, so the ingest lowers the limit while it runs
    (never raises it) and sets it back after, as DuckDB shows it, for whatever the connection runs next."""
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(3):
        (folder / f"s{i}.jsonl").write_text(user_line(f"prompt {i}", session=f"s{i}", uuid=f"u{i}") + "\n")
    seen: list[str] = []
    with open_db(tmp_path / "p.duckdb") as con:
        con.execute(f"SET memory_limit = '{limit}'")
        before = con.execute("SELECT current_setting('memory_limit')").fetchone()

        def during(done: int, total: int) -> None:
            seen.append(str(con.execute("SELECT current_setting('memory_limit')").fetchone()[0]))  # type: ignore[index]

        summary = ingest(con, [folder], batch_bytes=1, progress=during)
        assert summary.sessions == 3
        assert con.execute("SELECT current_setting('memory_limit')").fetchone() == before
        cap = str(before[0]) if limit == "200MB" else "256.0 MiB"  # type: ignore[index]  # 16 buffers of 16 MiB
    assert seen == [cap] * 3


def test_a_line_longer_than_the_smallest_read_buffer_is_parsed_whole(tmp_path: Path) -> None:
    """Lines are read with a buffer sized from the batch's largest file (at least 16 MiB): a 20 MB tool result
    in one line is a message, not a bad line, and the small file beside it in the same batch is read too."""
    (tmp_path / "big.jsonl").write_text(user_line("y" * 20_000_000, session="big") + "\n")
    (tmp_path / "small.jsonl").write_text(user_line("hello", session="small") + "\n")
    with open_db(tmp_path / "p.duckdb") as con:
        summary = ingest(con, [tmp_path])
        lengths = dict(con.execute("SELECT session_id, length(text) FROM messages").fetchall())
    assert summary.bad_lines == 0
    assert lengths == {"big": 20_000_000, "small": 5}


@given(st.lists(st.integers(min_value=0, max_value=1 << 40), max_size=5))
def test_the_read_buffer_holds_the_longest_possible_line(sizes: list[int]) -> None:
    bound = object_size_bound(sizes)
    assert MIN_OBJECT_SIZE <= bound <= MAX_OBJECT_SIZE and bound & (bound - 1) == 0
    assert bound >= min(max(sizes, default=0), MAX_OBJECT_SIZE)


def _stored(db: Path, folder: Path, batch_bytes: int | None) -> tuple[list[Any], list[Any]]:
    """Every message and action row after one ingest of `folder` into a fresh store at `db`."""
    with open_db(db) as con:
        ingest(con, [folder], **({"batch_bytes": batch_bytes} if batch_bytes else {}))
        messages = con.execute("SELECT * FROM messages ORDER BY ALL").fetchall()
        actions = con.execute("SELECT * FROM actions ORDER BY ALL").fetchall()
    return messages, actions


def test_what_is_stored_does_not_depend_on_the_batch_size(samples: Path, tmp_path: Path) -> None:
    """A record's `seq` is its line's number in its file: the same rows, `seq` and the keys built from it included,
    whether the files are read one a batch or all in one, and a file's numbers start at its first line whatever
    was read before it."""
    archive = tmp_path / "archive"
    shutil.copytree(samples, archive)
    prompts = archive / "claude-code" / "zz-prompts.jsonl"  # last in the walk: read after every other file
    prompts.write_text("\n".join(user_line(f"prompt {i}", session="zz", uuid=f"z{i}") for i in range(5)) + "\n")
    one_a_batch = _stored(tmp_path / "small.duckdb", archive, 1)
    all_in_one = _stored(tmp_path / "large.duckdb", archive, None)
    assert one_a_batch == all_in_one
    messages, actions = all_in_one
    assert len(messages) > 1000 and len(actions) > 0
    assert sorted(row[2] for row in messages if row[1] == str(prompts)) == [1, 2, 3, 4, 5]


def _each_file_once(folder: Path) -> tuple[dict[str, tuple[str, int]], dict[str, list[tuple[str, str]]]]:
    """Ingest `folder` in one batch: ((status, lines counted) by file name, [(session, text)] stored by file name)."""
    with open_db(folder / "p.duckdb") as con:
        summary = ingest(con, [folder])
        lines = dict(con.execute("SELECT path, n_lines FROM files").fetchall())
        rows = con.execute("SELECT source_path, session_id, text FROM messages ORDER BY ALL").fetchall()
    stored: dict[str, list[tuple[str, str]]] = {}
    for path, session, text in rows:
        stored.setdefault(Path(path).name, []).append((session, text))
    return {Path(r.path).name: (r.status, lines.get(r.path, 0)) for r in summary.results}, stored


# Names DuckDB's readers would take as patterns (`*`, `?`, `[`), beside names they would then match.
_NAME = st.text(alphabet="ab*?[]", min_size=1, max_size=4).map(lambda stem: f"{stem}.jsonl")


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=6, unique=True))
def test_a_file_named_like_a_pattern_is_read_as_itself(names: list[str]) -> None:
    """Files read in one batch are each read once, under their own path and session, whatever their names hold:
    `x*.jsonl` beside `xy.jsonl` reads neither file twice nor one file's lines as the other's."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, name in enumerate(names):
            (folder / name).write_text(user_line(f"prompt of {name}", session=f"s{i}") + "\n")
        files, stored = _each_file_once(folder)
    assert files == {name: ("new", 1) for name in names}
    assert stored == {name: [(f"s{i}", f"prompt of {name}")] for i, name in enumerate(names)}


def test_a_file_name_is_read_as_it_is_when_duckdb_reads_it_so(tmp_path: Path) -> None:
    """A backslash before a pattern character: bracketed, DuckDB's glob finds nothing; as it is, the file alone."""
    (tmp_path / "a\\*.jsonl").write_text(user_line("odd", session="odd") + "\n")
    (tmp_path / "a\\b.jsonl").write_text(user_line("plain", session="plain") + "\n")
    files, stored = _each_file_once(tmp_path)
    assert files == {"a\\*.jsonl": ("new", 1), "a\\b.jsonl": ("new", 1)}
    assert stored == {"a\\*.jsonl": [("odd", "odd")], "a\\b.jsonl": [("plain", "plain")]}


def test_a_file_name_no_reader_can_name_fails_alone(tmp_path: Path) -> None:
    """A name DuckDB reads only as a pattern, and a failing one (its glob fails on `\\*`), is recorded as failed,
    with why, and the files read with it are stored as they would be alone."""
    (tmp_path / "\\*.jsonl").write_text(user_line("odd", session="odd") + "\n")
    (tmp_path / "ab.jsonl").write_text(user_line("plain", session="plain") + "\n")
    with open_db(tmp_path / "p.duckdb") as con:
        summary = ingest(con, [tmp_path])
        stored = con.execute("SELECT source_path, text FROM messages").fetchall()
    failed = [r for r in summary.results if r.status == "failed"]
    assert [Path(r.path).name for r in failed] == ["\\*.jsonl"] and "pattern" in (failed[0].error or "")
    assert stored == [(str(tmp_path / "ab.jsonl"), "plain")]


def _every_row(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of `db`, sorted: what an ingest must not lose."""
    with open_db(db, read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()]
        return {t: sorted(con.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


# A child process that may write no file past its first 256 KB (the database is larger, its log starts empty): the
# next commit's writes fail as on a full disk (EFBIG rather than ENOSPC), inside DuckDB, through the public `ingest`.
_NO_ROOM_CHILD = """
import os, resource, signal, sys
from pathlib import Path
from core.errors import StoreError
from core.store.db import connect
from core.store.ingest import ingest
db = Path(sys.argv[1])
con = connect(db)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
room = 256_000
resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))
try:
    ingest(con, [Path(sys.argv[2])])
except StoreError as exc:
    print(exc)
    os._exit(3)
os._exit(0)
"""


@pytest.mark.slow
def test_a_database_that_cannot_be_written_stops_the_ingest_in_one_line_and_loses_nothing(
    samples: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    db = tmp_path / "p.duckdb"
    with open_db(db) as con:
        ingest(con, [samples / "claude-code" / "spotter"])
    before = _every_row(db)
    assert before["messages"]
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _NO_ROOM_CHILD, str(db), str(samples)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    said = done.stdout.strip()
    assert said.startswith("The database could not be written (") and "File too large" in said, said
    assert "out of space" in said and "Free disk space" in said and "Traceback" not in done.stderr
    after = _every_row(db)
    for table, rows in before.items():  # what was stored before is all there, row for row
        assert {repr(r) for r in rows} <= {repr(r) for r in after[table]}, table
    # and nothing of the batch that failed (the run's bookkeeping before its batches, the new sessions' keys and
    # the files it could not recognise, is committed on its own first)
    assert after["messages"] == before["messages"] and after["sessions"] == before["sessions"]
