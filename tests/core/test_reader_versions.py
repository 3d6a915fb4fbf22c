"""A file a reader of another version read is read again once, as a changed file is: its messages replaced, never
duplicated, its flags the current reader's; then it is `unchanged` again. Through the CLI and the public ingest on
stores in tmp folders, a store from before reader versions made by taking migration 30 back out of one."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from core.store.db import connect, open_db
from core.store.ingest import ingest, needs_ingest
from core.store.ledger import count_pending, mark_all_applied
from core.transcripts.reader_versions import READER_VERSIONS, reader_version
from flows.cli import app
from tests.helpers import SAMPLES, bash, session
from tests.profiles import examples

runner = CliRunner()

# Every table an ingest writes from a file's reading, as rows to compare (ingest times and mtimes left out).
_READING = {
    "messages": "SELECT * FROM messages",
    "sessions": "SELECT * EXCLUDE (ingested_at) FROM sessions",
    "files": "SELECT * EXCLUDE (ingested_at, mtime) FROM files",
    "file_noise": "SELECT * FROM file_noise",
    "actions": "SELECT * FROM actions",
}


def _reading(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[object, ...]]]:
    return {table: sorted(con.execute(sql).fetchall(), key=repr) for table, sql in _READING.items()}


def _rollout(path: Path, session_id: str, block: str) -> Path:
    """A Codex rollout whose first `user_message` is a block Codex writes (not a prompt), then the user's `go`."""
    lines = [
        {"timestamp": "2026-05-01T10:00:00Z", "type": "session_meta", "payload": {"id": session_id, "cwd": "/w/app"}},
        {
            "timestamp": "2026-05-01T10:00:01Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": block},
        },
        {
            "timestamp": "2026-05-01T10:00:02Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "go"},
        },
        {
            "timestamp": "2026-05-01T10:00:03Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        },
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return path


def _as_before_reader_versions(db: Path) -> None:
    """The store as schema 29 left it: no reader version in the ledger, migration 30 not applied."""
    old = duckdb.connect(str(db))
    old.execute("ALTER TABLE files DROP COLUMN reader_version")
    old.execute("DELETE FROM schema_version WHERE version >= 30")
    old.close()


def _cli(*args: str) -> tuple[int, str, str]:
    done = runner.invoke(app, list(args))
    return done.exit_code, done.stdout, done.stderr


@pytest.mark.slow
def test_a_store_from_before_reader_versions_is_read_again_once_and_then_unchanged(tmp_path: Path) -> None:
    """Every file read before is read again once (`reread`, with its reason, in `--json` and in the human summary),
    the store holding exactly what it held (nothing duplicated), curation's ledger still satisfied; the next ingest
    is all `unchanged`."""
    transcripts = tmp_path / "samples"
    shutil.copytree(SAMPLES, transcripts)
    db = tmp_path / "store.duckdb"
    code, _, _ = _cli("ingest", str(transcripts), "--db", str(db))
    assert code == 0
    with open_db(db) as con:
        before = _reading(con)
        read = {r[0] for r in con.execute("SELECT path FROM files WHERE status = 'ok'").fetchall()}
        mark_all_applied(con, "default", {s[0]: 1 for s in con.execute("SELECT session_id FROM sessions").fetchall()})
    assert len(read) >= 10
    _as_before_reader_versions(db)

    with open_db(db) as con:  # migrated: what was read has version 0, which no reader has
        versions = dict(con.execute("SELECT path, reader_version FROM files").fetchall())
        assert {versions[p] for p in read} == {0}
        assert needs_ingest(con, [transcripts]) == len(read)
    code, out, _ = _cli("ingest", str(transcripts), "--db", str(db), "--json")
    assert code == 0
    files = json.loads(out)["files"]
    assert {f["path"] for f in files if f["status"] == "reread"} == read
    assert json.loads(out)["counts"]["reread"] == len(read)
    assert {f["status"] for f in files if f["path"] not in read} <= {"unchanged"}
    codex = next(f for f in files if f["format"] == "codex")
    assert codex["note"] == "read again: the codex reader changed since this file was read (version 0, now 1)"
    with open_db(db) as con:
        assert _reading(con) == before  # replaced, not added to: the same reader makes the same rows
        versions = dict(con.execute("SELECT path, reader_version FROM files WHERE status = 'ok'").fetchall())
        assert versions == {p: reader_version(f["format"]) for f in files for p in [f["path"]] if p in read}
        assert count_pending(con, "default") == 0  # no session grew: curation has nothing new to take up

    code, out, _ = _cli("ingest", str(transcripts), "--db", str(db), "--json")
    assert code == 0
    assert {f["status"] for f in json.loads(out)["files"]} == {"unchanged"}
    with open_db(db) as con:
        assert needs_ingest(con, [transcripts]) == 0


@pytest.mark.slow
def test_the_human_summary_names_the_files_read_again_and_counts_past_the_first(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    paths = [_rollout(folder / f"rollout-2026-05-01T10-00-00-r{i:02}.jsonl", f"r{i:02}", "<x>y</x>") for i in range(23)]
    db = tmp_path / "store.duckdb"
    assert _cli("ingest", str(folder), "--db", str(db))[0] == 0
    with open_db(db) as con:
        con.execute("UPDATE files SET reader_version = reader_version - 1")
    code, out, err = _cli("ingest", str(folder), "--db", str(db))
    assert code == 0
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    assert ["files read again (their reader changed)", "23"] in cells
    named = [line.split(": ", 2)[1:] for line in err.splitlines() if line.startswith("read again: /")]
    assert sorted(named) == [
        [str(p), "the codex reader changed since this file was read (version 0, now 1)"] for p in sorted(paths)[:20]
    ]
    assert (
        "read again: 3 more file(s) whose reader changed since they were read (`playbook ingest --json` lists every"
        " file)." in " ".join(err.split())
    )


def test_a_codex_block_stored_as_a_prompt_by_the_old_reader_is_no_prompt_after_the_re_read(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    """The reading before round 9 (a `user_message` event's `<user_instructions>` block a prompt), as the old reader
    stored it in messages, sessions and the ledger: the next ingest reads the file again and the block is no prompt."""
    block = "<user_instructions>\n# AGENTS.md\nAlways track work with `pwnctl`.\n</user_instructions>"
    rollout = _rollout(tmp_path / "sessions" / "rollout-2026-05-01T10-00-00-blk-1.jsonl", "blk-1", block)
    ingest(con, [rollout])
    con.execute(
        "UPDATE messages SET is_prompt = true, is_meta = false WHERE session_id = 'blk-1' AND text = ?", [block]
    )
    con.execute("UPDATE sessions SET n_user_prompts = 2 WHERE session_id = 'blk-1'")
    con.execute("UPDATE files SET reader_version = 0")

    again = ingest(con, [rollout])
    assert [(r.status, r.note) for r in again.results] == [
        ("reread", "read again: the codex reader changed since this file was read (version 0, now 1)")
    ]
    rows = con.execute(
        "SELECT text, is_prompt, is_meta FROM messages WHERE session_id = 'blk-1' AND role = 'user' ORDER BY seq"
    ).fetchall()
    assert rows == [(block, False, True), ("go", True, False)]
    assert con.execute("SELECT count(*) FROM messages WHERE session_id = 'blk-1'").fetchone() == (3,)
    assert con.execute("SELECT n_user_prompts FROM sessions WHERE session_id = 'blk-1'").fetchone() == (1,)
    assert con.execute("SELECT reader_version FROM files").fetchone() == (READER_VERSIONS["codex"],)
    assert [r.status for r in ingest(con, [rollout]).results] == ["unchanged"]


def test_the_actions_of_a_file_read_again_are_read_from_its_new_reading(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    """What the agent did is read from the stored calls: those of a file read again are read again, though its
    content (and so its hash) is the same. Here the old reading stored no call."""
    session(tmp_path / "p", "s1", "/w/app", [("user", "run the tests"), *bash(1, "s1", "pytest -q", "1 passed")])
    ingest(con, [tmp_path / "p"])
    actions = con.execute("SELECT * FROM actions").fetchall()
    assert len(actions) == 1
    con.execute("DELETE FROM actions")
    con.execute("DELETE FROM messages WHERE kind IN ('tool_use', 'tool_result')")
    con.execute("UPDATE files SET reader_version = 0")
    assert [r.status for r in ingest(con, [tmp_path / "p"]).results] == ["reread"]
    assert con.execute("SELECT * FROM actions").fetchall() == actions


def test_a_file_its_reader_and_its_content_changed_is_changed_and_a_touched_one_is_read_again(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    """`reread` says a file was read only because its reader changed: one that grew too is `changed`; one touched
    (the same content, a new mtime) is `reread`, its ledger then at the new mtime and version."""
    grown = _rollout(tmp_path / "s" / "rollout-2026-05-01T10-00-00-g-1.jsonl", "g-1", "<a>b</a>")
    touched = _rollout(tmp_path / "s" / "rollout-2026-05-01T10-00-00-t-1.jsonl", "t-1", "<a>b</a>")
    ingest(con, [tmp_path / "s"])
    con.execute("UPDATE files SET reader_version = 0")
    grown.write_text(grown.read_text() + grown.read_text().splitlines()[2] + "\n")
    os.utime(touched, (1_800_000_000, 1_800_000_000))
    statuses = {r.path: (r.status, r.note is not None) for r in ingest(con, [tmp_path / "s"]).results}
    assert statuses == {str(grown): ("changed", False), str(touched): ("reread", True)}
    assert con.execute("SELECT DISTINCT reader_version FROM files").fetchall() == [(1,)]
    assert con.execute("SELECT mtime FROM files WHERE path = ?", [str(touched)]).fetchone() == (1_800_000_000.0,)
    assert con.execute("SELECT count(*) FROM messages WHERE session_id = 'g-1'").fetchone() == (4,)
    assert {r.status for r in ingest(con, [tmp_path / "s"]).results} == {"unchanged"}


def test_a_shrunk_file_read_by_an_older_reader_is_read_as_it_is_now(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    """A file that shrank keeps what was stored from it while its reader is the same; once the reader changes, that
    reading cannot be made again, so the file is read as it is now, and said so."""
    rollout = _rollout(tmp_path / "rollout-2026-05-01T10-00-00-k-1.jsonl", "k-1", "<a>b</a>")
    ingest(con, [rollout])
    whole = rollout.read_text()
    rollout.write_text("".join(whole.splitlines(keepends=True)[:3]))
    assert [r.status for r in ingest(con, [rollout]).results] == ["shrunk"]
    assert con.execute("SELECT count(*) FROM messages").fetchone() == (3,)  # kept
    con.execute("UPDATE files SET reader_version = 0")
    (result,) = ingest(con, [rollout]).results
    assert result.status == "reread"
    assert result.note is not None and result.note.endswith(
        f"; the file had shrunk from {len(whole.encode()):,} to {rollout.stat().st_size:,} bytes, so what was stored"
        " from its longer content is replaced by what it holds now"
    )
    assert con.execute("SELECT count(*) FROM messages").fetchone() == (2,)
    assert con.execute("SELECT status, stored_size FROM files").fetchone() == ("ok", rollout.stat().st_size)


def test_files_with_nothing_read_have_no_reader_version_and_are_not_read_again(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "other.jsonl").write_text('{"hello": "world"}\n')
    ingest(con, [tmp_path])
    assert con.execute("SELECT status, reader_version FROM files ORDER BY status").fetchall() == [
        ("empty", None),
        ("unrecognised", None),
    ]
    assert {r.status for r in ingest(con, [tmp_path]).results} == {"unchanged"}
    assert needs_ingest(con, [tmp_path]) == 0


_SAMPLE_FILES = sorted(str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*.jsonl"))


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, list[tuple[object, ...]]]]:
    """The samples copied and ingested once: (their folder, the store, what it holds), for each example to copy."""
    root = tmp_path_factory.mktemp("reread")
    shutil.copytree(SAMPLES, root / "samples")
    with connect(root / "store.duckdb") as con:
        ingest(con, [root / "samples"])
        return root / "samples", root / "store.duckdb", _reading(con)


@pytest.mark.slow
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chosen=st.sets(st.sampled_from(_SAMPLE_FILES), min_size=1))
def test_re_reading_any_files_leaves_the_store_as_one_ingest_of_them_makes_it(
    ingested: tuple[Path, Path, dict[str, list[tuple[object, ...]]]], chosen: set[str]
) -> None:
    """Whichever files' readings are older, the next ingest reads exactly those again and leaves every table as the
    first ingest left it (a session's rows are replaced, never added to), and the one after reads none."""
    samples, template, first = ingested
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "store.duckdb"
        shutil.copyfile(template, db)
        with connect(db) as con:
            lowered = [str(samples / c) for c in chosen]
            con.execute(
                "UPDATE files SET reader_version = reader_version - 1 WHERE path IN (SELECT unnest(?))", [lowered]
            )
            ok = {r[0] for r in con.execute("SELECT path FROM files WHERE status = 'ok'").fetchall()}
            again = ingest(con, [samples])
            assert {r.path for r in again.results if r.status == "reread"} == set(lowered) & ok
            assert {r.status for r in again.results if r.path not in lowered} <= {"unchanged"}
            assert _reading(con) == first
            assert {r.status for r in ingest(con, [samples]).results} == {"unchanged"}
