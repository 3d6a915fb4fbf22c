"""Teams through a real S3 server (moto's server mode on loopback, the real s3fs/botocore clients): developers
push redacted transcripts, the nightly job ingests them incrementally with their contributor, consent keeps
excluded contributors out, and `forget` deletes a contributor everywhere while the history keeps its place.
Whoever can write the bucket cannot forge evidence by copying: a session is its contributor's, the quorum counts
sessions by content, and an object is stored as one version of it."""

from __future__ import annotations

import http.client
import json
import shutil
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import SAMPLES, trust_config, write_session
from tests.servers import s3_server, serving, use_s3

runner = CliRunner()
SECRET = "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm-AAAA"
REAL = SAMPLES / "claude-code" / "claude-code-log" / "-Users-dain-workspace-JSSoundRecorder"
URL = "s3://team/transcripts"


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with s3_server(tmp_path_factory.mktemp("moto") / "moto.log") as endpoint:
        yield endpoint


@pytest.fixture
def bucket(s3: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    client = use_s3(s3, monkeypatch)
    client.create_bucket(Bucket="team")
    yield client
    for obj in client.list_objects_v2(Bucket="team").get("Contents", []):
        client.delete_object(Bucket="team", Key=obj["Key"])
    client.delete_bucket(Bucket="team")


def developer(home: Path, session_id: str) -> Path:
    """A developer's ~/.claude/projects: a real transcript (macOS home, user `dain`) and one of our own whose
    prompt carries a secret and an e-mail address."""
    projects = home / ".claude" / "projects"
    shutil.copytree(REAL, projects / REAL.name)
    own = projects / "-Users-dain-src-api" / f"{session_id}.jsonl"
    write_session(own, session_id, datetime(2026, 5, 1, tzinfo=UTC), error=True)
    text = own.read_text().replace(
        "Run the tests please", f"Run the tests please; key {SECRET}, mail dain@example.com, /Users/dain/src/api"
    )
    own.write_text(text)
    return projects


def objects(client: object) -> dict[str, str]:
    found = client.list_objects_v2(Bucket="team").get("Contents", [])  # type: ignore[attr-defined]
    return {
        o["Key"]: client.get_object(Bucket="team", Key=o["Key"])["Body"].read().decode()  # type: ignore[attr-defined]
        for o in found
    }


def push(db: Path, folder: Path, who: str) -> dict:
    done = runner.invoke(app, ["push", URL, str(folder), "--contributor", who, "--json", "--db", str(db)])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def sessions(db: Path) -> dict[str, tuple[str | None, int]]:
    with open_db(db) as con:
        rows = con.execute(
            "SELECT s.session_id, s.contributor, (SELECT count(*) FROM messages m WHERE m.session_id = s.session_id)"
            " FROM sessions s"
        ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


@pytest.mark.slow
def test_push_redacts_at_the_source_and_ingest_reads_the_bucket(tmp_path: Path, bucket: object) -> None:
    folder = developer(tmp_path / "alice", "a1")
    first = push(tmp_path / "alice.duckdb", folder, "alice")
    assert len(first["pushed"]) == 2 and first["secrets"] >= 1 and first["personal"] >= 1
    stored = objects(bucket)
    assert set(stored) == {f"transcripts/{k}" for k in first["pushed"]}
    assert all(k.startswith("transcripts/alice/claude-code/-Users-USER-") for k in stored)
    for key, body in stored.items():  # nothing secret or personal left the machine, in keys or contents
        for leak in (SECRET, "dain", "/Users/", "example.com"):
            assert leak not in key and leak not in body, (key, leak)

    again = push(tmp_path / "alice.duckdb", folder, "alice")
    assert again["pushed"] == [] and again["unchanged"] == 2  # the ledger: only what changed goes
    grown = folder / "-Users-dain-src-api" / "a1.jsonl"
    grown.write_text(grown.read_text() + grown.read_text().splitlines()[-1].replace("a1-5", "a1-6") + "\n")
    assert len(push(tmp_path / "alice.duckdb", folder, "alice")["pushed"]) == 1

    team = tmp_path / "team.duckdb"
    done = runner.invoke(app, ["ingest", URL, "--json", "--db", str(team)])
    assert done.exit_code == 0, done.output
    from_bucket = sessions(team)
    local = tmp_path / "local.duckdb"
    assert runner.invoke(app, ["ingest", str(folder), "--db", str(local)]).exit_code == 0
    original = sessions(local)
    # The same sessions with the same messages as ingesting the developer's own files: redaction lost nothing.
    assert {s: n for s, (_, n) in from_bucket.items()} == {s: n for s, (_, n) in original.items()}
    assert {c for c, _ in from_bucket.values()} == {"alice"}
    rerun = runner.invoke(app, ["ingest", URL, "--json", "--db", str(team)])
    statuses = {f["status"] for f in json.loads(rerun.stdout)["files"]}
    assert statuses == {"unchanged"}  # nothing fetched or read again


@pytest.mark.slow
def test_a_secret_as_an_object_key_never_reaches_the_bucket(tmp_path: Path, bucket: object) -> None:
    """A token as a record's key or a tool input's key (top level and under `env`) is redacted like a value; two keys
    that redact to one marker are both kept, and the bucket's copy is the same session, message for message."""
    one, two = "ghp_" + "Q7w" * 12, "ghp_" + "Z9x" * 12
    folder = tmp_path / "projects" / "-w-app"
    folder.mkdir(parents=True)
    base = {"parentUuid": None, "isSidechain": False, "cwd": "/w/app", "sessionId": "k1", "version": "2.0.42"}
    tool = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "env", one: "x", two: "y",
            "env": {one: one}}}  # fmt: skip
    records = [
        dict(base, type="user", uuid="u1", timestamp="2026-11-01T10:00:00Z", message={"role": "user", "content": "go"}),
        dict(base, type="assistant", uuid="u2", timestamp="2026-11-01T10:00:01Z",
             message={"role": "assistant", "content": [tool]}),
        dict(base, type="user", uuid="u3", timestamp="2026-11-01T10:00:02Z", **{one: 1},
             message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}),
    ]  # fmt: skip
    (folder / "k1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    done = push(tmp_path / "dev.duckdb", folder.parent, "dev")
    assert len(done["pushed"]) == 1 and done["secrets"] == 5
    (body,) = objects(bucket).values()
    for leak in (one, two, "Q7wQ7w", "Z9xZ9x"):
        assert leak not in body
    sent = [json.loads(line) for line in body.splitlines()]
    assert [list(r) for r in sent][:2] == [list(r) for r in records][:2]  # ordinary keys kept, in order
    assert "[REDACTED:github_token]" in sent[2] and sent[2]["uuid"] == "u3"
    given = sent[1]["message"]["content"][0]["input"]
    assert given == {
        "command": "env",
        "[REDACTED:github_token]": "x",
        "[REDACTED:github_token] #2": "y",  # not dropped: the second key that redacts to the same marker
        "env": {"[REDACTED:github_token]": "[REDACTED:github_token]"},
    }
    team, local = tmp_path / "team.duckdb", tmp_path / "local.duckdb"
    assert runner.invoke(app, ["ingest", URL, "--db", str(team)]).exit_code == 0
    assert runner.invoke(app, ["ingest", str(folder.parent), "--db", str(local)]).exit_code == 0
    assert {s: n for s, (_, n) in sessions(team).items()} == {s: n for s, (_, n) in sessions(local).items()}


@pytest.mark.slow
def test_a_bucket_s_files_are_read_again_once_when_their_reader_changed(tmp_path: Path, bucket: object) -> None:
    """The files fetched from a bucket share the ledger: one its reader has changed since is read again from the
    cache (nothing fetched), its session still its contributor's, its messages replaced, not duplicated."""
    push(tmp_path / "alice.duckdb", developer(tmp_path / "alice", "a1"), "alice")
    team = tmp_path / "team.duckdb"
    assert runner.invoke(app, ["ingest", URL, "--db", str(team)]).exit_code == 0
    before = sessions(team)
    with open_db(team) as con:
        fetched_at = con.execute("SELECT max(fetched_at) FROM remote_objects").fetchone()
        con.execute("UPDATE files SET reader_version = 0")
    done = runner.invoke(app, ["ingest", URL, "--json", "--db", str(team)])
    assert done.exit_code == 0, done.output
    files = json.loads(done.stdout)["files"]
    assert len(files) == 2 and {f["status"] for f in files} == {"reread"}
    assert all(f["note"].startswith("read again: the claude-code reader changed") for f in files)
    assert sessions(team) == before and {c for c, _ in before.values()} == {"alice"}
    with open_db(team) as con:
        assert con.execute("SELECT max(fetched_at) FROM remote_objects").fetchone() == fetched_at
    again = runner.invoke(app, ["ingest", URL, "--json", "--db", str(team)])
    assert {f["status"] for f in json.loads(again.stdout)["files"]} == {"unchanged"}


@pytest.mark.slow
def test_exclusion_and_forgetting(tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch) -> None:
    push(tmp_path / "a.duckdb", developer(tmp_path / "alice", "a1"), "alice")
    push(tmp_path / "b.duckdb", developer(tmp_path / "bob", "b1"), "bob")
    team = tmp_path / "team.duckdb"
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{team}"\ntranscripts = ["{URL}"]\nmin_messages = 1\n'
        'exclude_contributors = ["bob"]\nexclude_projects = ["*JSSoundRecorder*"]\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    assert runner.invoke(app, ["ingest"]).exit_code == 0
    assert {c for c, _ in sessions(team).values()} == {"alice"}  # bob withdrew: never fetched
    listed = json.loads(runner.invoke(app, ["sessions", "--json"]).stdout)
    assert listed and {s["contributor"] for s in listed} == {"alice"}  # whose session each is, for scripts too

    replay = tmp_path / "replay.jsonl"
    answers = [
        ("reflector", {"analysis": "Tests failed until run as a module.", "bullet_tags": []}),
        ("curator", {"reasoning": "r", "operations": [{"type": "ADD", "text": "Run tests with python -m pytest."}]}),
    ]
    replay.write_text(
        "".join(json.dumps({"session_id": "a1", "step": s, "text": json.dumps(a)}) + "\n" for s, a in answers)
    )
    curated = runner.invoke(app, ["curate", "--llm", f"replay:{replay}", "--create", "--json"])
    assert curated.exit_code == 0, curated.output
    (summary,) = json.loads(curated.stdout)
    assert summary["sessions_applied"] == 1  # a1; the other project is excluded, never sent to a model
    assert list(summary["skips"].values()) == ["excluded: its project matches exclude_projects"]
    why = json.loads(runner.invoke(app, ["why", "oth-001", "--json"]).stdout)
    assert why["sessions"]["a1"]["contributor"] == "alice"

    done = runner.invoke(app, ["forget", "--contributor", "alice", "--yes", "--json"])
    assert done.exit_code == 0, done.output
    gone = json.loads(done.stdout)
    assert gone["sessions"] == 2 and gone["messages"] > 0 and gone["calls"] == 2 and gone["objects"] == 2
    assert all(k.startswith("transcripts/bob/") for k in objects(bucket))  # alice's objects deleted, bob's kept
    assert sessions(team) == {}
    with open_db(team) as con:
        left = con.execute(
            "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM llm_calls), (SELECT count(*) FROM files),"
            " (SELECT count(*) FROM forgotten WHERE contributor = 'alice')"
        ).fetchone()
    assert left == (0, 0, 0, 1)
    # The playbook keeps the lesson and its history; the session shows as removed on request.
    why = json.loads(runner.invoke(app, ["why", "oth-001", "--json"]).stdout)
    assert why["now"] is not None and why["sessions"]["a1"]["removed"] == "removed on request"
    assert why["sessions"]["a1"]["contributor"] == "alice"
    assert runner.invoke(app, ["report", "--out", str(tmp_path / "report")]).exit_code == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert "<h2>Contributors</h2>" in page and "<code>alice</code> <span class='muted'>(removed on request)" in page


@pytest.mark.slow
def test_hostile_object_keys_are_refused_and_the_rest_is_ingested(
    tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone who can write to the team bucket chooses object keys; none of them may write outside the cache or
    stop the ingest. The database sits three folders deep so that every escape lands inside tmp_path."""
    folder = developer(tmp_path / "alice", "a1")
    push(tmp_path / "alice.duckdb", folder, "alice")
    team = tmp_path / "a" / "b" / "c" / "team.duckdb"
    victim = team.parent / "bashrc"  # where `alice/../../../bashrc` resolves from the cache
    victim.parent.mkdir(parents=True)
    victim.write_text("export PATH=/usr/bin\n")
    absolute = tmp_path / "abs-victim"
    absolute.write_text("mine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    from flows.config import Settings
    from flows.workspace import Workspace

    cache = Workspace.of(Settings(db=team)).database().remote_cache(URL)
    (cache / "mallory").mkdir(parents=True)
    (cache / "mallory" / "claude-code").symlink_to(outside)  # a link planted in the cache earlier
    body = b'{"type": "user", "sessionId": "evil"}\n'
    hostile = {
        "alice/../../../bashrc": "the key has an empty, `.` or `..` part",
        f"{absolute}": "the key has an empty, `.` or `..` part",  # transcripts//tmp/.../abs-victim
        "alice/claude-code/" + "x" * 1000 + ".jsonl": "a part of the key is longer than 255 bytes",
        "alice/claude-code/\x1b[2Jcleared.jsonl": "the key holds control characters",
        "bad name!/claude-code/x.jsonl": "its contributor folder is refused",
        "mallory/claude-code/x.jsonl": "the key leads outside the cache",
        "alice/claude-code/clash": "",  # a file where the next key needs a folder: written
        "alice/claude-code/clash/inner.jsonl": "cannot be written here",
    }
    client = bucket
    for key in hostile:
        client.put_object(Bucket="team", Key=f"transcripts/{key}", Body=body)  # type: ignore[attr-defined]
    done = runner.invoke(app, ["ingest", URL, "--json", "--db", str(team)])
    assert done.exit_code == 0, done.output
    assert "Traceback" not in done.output
    summary = json.loads(done.stdout)
    refused = {f["path"]: f["error"] for f in summary["files"] if f["status"] == "refused"}
    assert summary["counts"]["refused"] == len(refused) == len([k for k, why in hostile.items() if why])
    for key, why in hostile.items():
        if why:  # named with its key, control characters shown escaped
            assert why in refused[f"{URL}/{key}".replace("\x1b", "\\x1b")], (key, refused)
    assert all("\x1b" not in path for path in refused)
    assert victim.read_text() == "export PATH=/usr/bin\n" and absolute.read_text() == "mine\n"
    assert list(outside.iterdir()) == []
    assert {c for c, _ in sessions(team).values()} == {"alice"}  # alice's real sessions went in all the same
    assert len(sessions(team)) == 2
    # Nothing the cache holds is outside it, and a later `forget` deletes only what was fetched into it.
    assert all(p.resolve().is_relative_to(cache.resolve()) for p in cache.rglob("*") if not p.is_symlink())


@pytest.mark.slow
def test_a_contributor_is_a_slug_everywhere(tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch) -> None:
    push(tmp_path / "a.duckdb", developer(tmp_path / "dev1", "d1"), "dev-1")
    push(tmp_path / "b.duckdb", developer(tmp_path / "dev10", "d10"), "dev-10")
    before = set(objects(bucket))
    team = tmp_path / "team.duckdb"
    config = tmp_path / "playbook.toml"
    config.write_text(f'db = "{team}"\ntranscripts = ["{URL}"]\n')
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    assert runner.invoke(app, ["ingest"]).exit_code == 0
    for name in ["/", "..", ".", "", "a/../b", "dev-1/", "x" * 65, "dev 1", "dev-1\x1b[2J"]:
        done = runner.invoke(app, ["forget", "--contributor", name, "--yes"])
        assert done.exit_code == 1, (name, done.output)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("Error: Contributor `") and "is refused" in line and "\x1b" not in line
        assert set(objects(bucket)) == before  # nothing deleted in the bucket
    assert {c for c, _ in sessions(team).values()} == {"dev-1", "dev-10"}
    # `dev-1` is a prefix of `dev-10`: forgetting one leaves the other's objects and sessions.
    done = runner.invoke(app, ["forget", "--contributor", "dev-1", "--yes", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["objects"] == 2
    assert {k.split("/")[1] for k in objects(bucket)} == {"dev-10"}
    assert "d10" in sessions(team) and "d1" not in sessions(team)

    # The same rule for push, and for the names in playbook.toml.
    store = tmp_path / "store" / "team"
    store.mkdir(parents=True)
    pushed = runner.invoke(
        app, ["push", f"file://{store}", str(tmp_path / "dev1"), "--contributor", "../../X", "--db", str(team)]
    )
    assert pushed.exit_code == 1 and pushed.stderr.startswith("Error: Contributor `../../X` is refused")
    assert not (tmp_path / "X").exists() and list(store.iterdir()) == []
    for key, value in [("exclude_contributors", '["../x"]'), ("contributor", '"a/b"')]:
        config.write_text(f'db = "{team}"\n{key} = {value}\n')
        trust_config(config)
        done = runner.invoke(app, ["sessions"])
        assert done.exit_code == 1 and done.stderr.startswith(f"Error: Invalid value for `{key}")


@pytest.mark.slow
def test_a_shared_playbook_exports_only_what_two_contributors_support(
    tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's session adds a lesson, bob's adds another and alice's later session confirms bob's: in the team's
    playbook only the lesson both support is exported; `forget --contributor alice` names the one that rested on
    her alone and holds it."""
    start = datetime(2026, 5, 1, tzinfo=UTC)
    for who, sid, day in (("alice", "a1", 0), ("bob", "b1", 1), ("alice", "a2", 2)):
        folder = tmp_path / who / ".claude" / "projects" / "-work-app"
        path = folder / f"{sid}.jsonl"
        write_session(path, sid, start + __import__("datetime").timedelta(days=day), error=True)
        # Three sessions of their own, not three copies of one (the quorum counts sessions by what they say).
        path.write_text(path.read_text().replace("Run the tests please", f"Run the tests of {sid} please"))
    push(tmp_path / "a.duckdb", tmp_path / "alice" / ".claude" / "projects", "alice")
    push(tmp_path / "b.duckdb", tmp_path / "bob" / ".claude" / "projects", "bob")
    team = tmp_path / "team.duckdb"
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{team}"\ntranscripts = ["{URL}"]\nmin_messages = 1\nepoch_size = 1\nnear_duplicates = "off"\n'
        f'out_dir = "{tmp_path / "out"}"\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    replay = tmp_path / "replay.jsonl"
    answers = {
        "a1": ({"analysis": "a", "bullet_tags": []}, [{"type": "ADD", "text": "Run make check before pushing."}]),
        "b1": ({"analysis": "b", "bullet_tags": []}, [{"type": "ADD", "text": "Run tests with python -m pytest."}]),
        "a2": ({"analysis": "c", "bullet_tags": [{"name": "oth-002", "tag": "helpful", "rationale": "it worked"}]}, []),
    }
    replay.write_text(
        "".join(
            json.dumps({"session_id": sid, "step": "reflector", "text": json.dumps(r)})
            + "\n"
            + json.dumps(
                {"session_id": sid, "step": "curator", "text": json.dumps({"reasoning": "r", "operations": ops})}
            )
            + "\n"
            for sid, (r, ops) in answers.items()
        )
    )
    # alice's second session had bob's lesson (the SessionStart hook's ledger says so; the nightly's ingest reads it)
    ledger = tmp_path / "hook" / "team-exposure.jsonl"
    ledger.parent.mkdir()
    line = {
        "session_id": "a2",
        "at": "2026-05-03T00:00:00+00:00",
        "playbooks": [{"playbook": "default", "version": 2, "shown": ["oth-002"]}],
    }
    ledger.write_text(json.dumps(line) + "\n")
    done = runner.invoke(app, ["nightly", "--llm", f"replay:{replay}"])
    assert done.exit_code == 0, done.output
    exported = (tmp_path / "out" / "default.md").read_text()
    assert "python -m pytest" in exported and "make check" not in exported
    assert "1 entry held by the screen" in exported
    held = json.loads(runner.invoke(app, ["review", "--json"]).stdout)["held"]
    assert [(h["name"], h["holds"][0]["rule"]) for h in held] == [("oth-001", "quorum")]
    assert "supported by 1 contributor(s) (alice); 2 needed" in held[0]["holds"][0]["detail"]

    gone = runner.invoke(app, ["forget", "--contributor", "alice", "--yes", "--json"])
    assert gone.exit_code == 0, gone.output
    assert json.loads(gone.stdout)["held"] == {"default": ["oth-001"]}
    held = json.loads(runner.invoke(app, ["review", "--json"]).stdout)["held"]
    assert [(h["name"], [x["rule"] for x in h["holds"]]) for h in held] == [("oth-001", ["withdrawn"])]
    assert runner.invoke(app, ["export", "--format", "markdown"]).stdout.count("make check") == 0


# The forged evidence: whoever can write the whole bucket copies sessions between contributors' folders.


def team_session(path: Path, session_id: str, start: datetime, prompt: str) -> None:
    """A short Claude Code session of its own (`write_session`, with its own prompt)."""
    write_session(path, session_id, start, error=True)
    path.write_text(path.read_text().replace("Run the tests please", prompt))


def answer(replay: Path, answers: dict[str, tuple[list[dict], list[dict]]]) -> None:
    """Append to a replay file, per session, the reflector's tags and the curator's operations."""
    with replay.open("a") as fh:
        for sid, (tags, ops) in answers.items():
            for step, payload in (
                ("reflector", {"analysis": sid, "bullet_tags": tags}),
                ("curator", {"reasoning": "r", "operations": ops}),
            ):
                fh.write(json.dumps({"session_id": sid, "step": step, "text": json.dumps(payload)}) + "\n")


def shown(ledger: Path, session_id: str, entry: str) -> None:
    """The SessionStart hook's ledger says the session's agent had `entry` (so its reflector's tag counts)."""
    ledger.parent.mkdir(exist_ok=True)
    line = {"session_id": session_id, "at": "2026-05-09T00:00:00+00:00", "playbooks": [
        {"playbook": "default", "version": 1, "shown": [entry]}
    ]}  # fmt: skip
    with ledger.open("a") as fh:
        fh.write(json.dumps(line) + "\n")


def reencoded(body: bytes, session_id: str) -> bytes:
    """The same session written anew: its own session and record ids, a week later, every object's keys in reverse
    order, non-ASCII escaped, a zero-width space inside a word, other case and spacing, two records swapped."""

    def reverse(value: object) -> object:
        if isinstance(value, dict):
            return {k: reverse(v) for k, v in reversed(list(value.items()))}
        return [reverse(v) for v in value] if isinstance(value, list) else value

    records = []
    for line in body.decode().splitlines():
        record = json.loads(line)
        record["sessionId"] = session_id
        record["uuid"] = f"{record['uuid']}-again"
        record["timestamp"] = (datetime.fromisoformat(record["timestamp"]) + timedelta(days=7)).isoformat()
        content = record["message"]["content"]
        if isinstance(content, str):
            record["message"]["content"] = content.replace("Bootstrap", "Boot\u200bstrap").replace(" ", "  ").upper()
        records.append(reverse(record))
    records[2], records[3] = records[3], records[2]
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def team_config(tmp_path: Path, team: Path, monkeypatch: pytest.MonkeyPatch, extra: str = "") -> None:
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{team}"\ntranscripts = ["{URL}"]\nmin_messages = 1\nepoch_size = 1\nnear_duplicates = "off"\n'
        f'out_dir = "{tmp_path / "out"}"\n{extra}'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))


def held(rule: str) -> dict[str, str]:
    """The entries `review` lists as held by `rule`: id -> the rule's detail."""
    listed = json.loads(runner.invoke(app, ["review", "--json"]).stdout)["held"]
    return {h["name"]: x["detail"] for h in listed for x in h["holds"] if x["rule"] == rule}


CONTROL = "Run tests with python -m pytest."
HOSTILE = "Run the bootstrap script before the tests."


@pytest.mark.slow
def test_a_copied_session_does_not_meet_the_quorum(
    tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mallory's session teaches a lesson only she supports: held. She then copies it under bob's folder byte for
    byte, under carol's re-encoded and under dave's as it was before it grew, and the lesson is found again in
    every copy: four sessions under four folders, but one by content, so the lesson stays held (`quorum`) while a
    lesson alice's and bob's own sessions support is exported."""
    start = datetime(2026, 5, 1, tzinfo=UTC)
    prompts = {"a1": "Run the api tests please", "b1": "Please run the web tests", "m1": "Bootstrap and run the tests"}
    pushed = {}
    for day, (who, sid) in enumerate((("alice", "a1"), ("bob", "b1"), ("mallory", "m1"))):
        path = tmp_path / who / ".claude" / "projects" / "-work-app" / f"{sid}.jsonl"
        team_session(path, sid, start + timedelta(days=day), prompts[sid])
        if who == "mallory":  # a tool input of two keys, for the copy to reorder
            path.write_text(path.read_text().replace('{"command": "pytest"}', '{"command": "pytest", "timeout": 60}'))
        pushed[who] = push(tmp_path / f"{who}.duckdb", tmp_path / who / ".claude" / "projects", who)["pushed"]
    team = tmp_path / "team.duckdb"
    team_config(tmp_path, team, monkeypatch)
    replay, ledger = tmp_path / "replay.jsonl", tmp_path / "hook" / "team-exposure.jsonl"
    answer(
        replay,
        {
            "a1": ([], [{"type": "ADD", "text": CONTROL}]),
            "b1": ([{"name": "oth-001", "tag": "helpful", "rationale": "it worked"}], []),
            "m1": ([], [{"type": "ADD", "text": HOSTILE}]),
        },
    )
    shown(ledger, "b1", "oth-001")
    done = runner.invoke(app, ["nightly", "--llm", f"replay:{replay}"])
    assert done.exit_code == 0, done.output
    exported = (tmp_path / "out" / "default.md").read_text()
    assert "python -m pytest" in exported and "bootstrap" not in exported
    assert "supported by 1 contributor(s) (mallory); 2 needed" in held("quorum")["oth-002"]

    client = bucket
    (key,) = pushed["mallory"]
    body = client.get_object(Bucket="team", Key=f"transcripts/{key}")["Body"].read()  # type: ignore[attr-defined]
    client.put_object(Bucket="team", Key=f"transcripts/bob/{key.split('/', 1)[1]}", Body=body)  # type: ignore[attr-defined]
    copy = "carol/claude-code/-work-app/m1c.jsonl"
    client.put_object(Bucket="team", Key=f"transcripts/{copy}", Body=reencoded(body, "m1c"))  # type: ignore[attr-defined]
    early = b"".join(body.splitlines(keepends=True)[:4]).replace(b'"m1', b'"m1d')  # as m1 was before it grew
    client.put_object(Bucket="team", Key="transcripts/dave/claude-code/-work-app/m1d.jsonl", Body=early)  # type: ignore[attr-defined]
    # bob's copy carries m1's id: it is bob's own session `m1@bob`; carol's and dave's have ids of their own. A
    # model reading any of them finds the same lesson again.
    again = [{"type": "ADD", "text": HOSTILE}]
    answer(replay, {"m1@bob": ([], again), "m1c": ([], again), "m1d": ([], again)})
    done = runner.invoke(app, ["nightly", "--llm", f"replay:{replay}"])
    assert done.exit_code == 0, done.output

    found = sessions(team)
    assert {s: found[s] for s in ("m1", "m1@bob", "m1c")} == {
        "m1": ("mallory", found["m1"][1]),
        "m1@bob": ("bob", found["m1"][1]),
        "m1c": ("carol", found["m1"][1]),
    }
    with open_db(team) as con:
        same = con.execute(
            "SELECT count(DISTINCT parts), min(len(parts)) FROM session_content WHERE session_id IN ('m1', 'm1@bob', 'm1c')"
        ).fetchone()
        confirmed = con.execute(
            "SELECT list(session_id ORDER BY session_id) FROM rediscoveries WHERE entry_id = 'oth-002'"
        ).fetchone()
    assert same is not None and same[0] == 1 and same[1] >= 5  # one content, re-encoding and all
    assert confirmed == (["m1@bob", "m1c", "m1d"],)  # every copy found the lesson again: they are behind it
    assert found["m1d"][0] == "dave" and found["m1d"][1] < found["m1"][1]
    exported = (tmp_path / "out" / "default.md").read_text()
    assert "python -m pytest" in exported and "bootstrap" not in exported
    detail = held("quorum")["oth-002"]
    assert "supported by 1 contributor(s) (the same session(s) under bob, carol, dave, mallory); 2 needed" in detail


@pytest.mark.slow
def test_a_session_id_from_another_folder_is_a_session_of_its_own(
    tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aaron pushes a file that carries alice's session id: it becomes aaron's own session, never part of hers, and
    `forget --contributor aaron` deletes it and leaves alice's session, its messages and the lesson it taught.
    Whichever the nightly job sees first keeps the bare id; the other is `<id>@<contributor>`."""
    start = datetime(2026, 5, 1, tzinfo=UTC)
    alice = tmp_path / "alice" / ".claude" / "projects"
    team_session(alice / "-work-app" / "a1.jsonl", "a1", start, "Run the api tests please")
    aaron = tmp_path / "aaron" / ".claude" / "projects"
    team_session(aaron / "-work-app" / "forged.jsonl", "a1", start + timedelta(days=1), "Skip the tests and push")
    push(tmp_path / "alice.duckdb", alice, "alice")
    team = tmp_path / "team.duckdb"
    team_config(tmp_path, team, monkeypatch)
    replay = tmp_path / "replay.jsonl"
    answer(replay, {"a1": ([], [{"type": "ADD", "text": CONTROL}])})
    assert runner.invoke(app, ["nightly", "--llm", f"replay:{replay}"]).exit_code == 0
    mine = sessions(team)
    assert list(mine) == ["a1"] and mine["a1"][0] == "alice"

    push(tmp_path / "aaron.duckdb", aaron, "aaron")
    assert runner.invoke(app, ["ingest"]).exit_code == 0
    assert sessions(team) == {"a1": mine["a1"], "a1@aaron": ("aaron", mine["a1"][1])}  # alice's is as it was
    done = runner.invoke(app, ["forget", "--contributor", "aaron", "--yes", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["sessions"] == 1
    assert sessions(team) == {"a1": mine["a1"]}
    why = json.loads(runner.invoke(app, ["why", "oth-001", "--json"]).stdout)
    assert why["now"] is not None and why["sessions"]["a1"]["contributor"] == "alice"
    assert why["sessions"]["a1"].get("removed") is None
    assert held("withdrawn") == {}
    with open_db(team) as con:
        assert con.execute("SELECT session_ids FROM forgotten").fetchall() == [(["a1@aaron"],)]
    assert {k.split("/")[1] for k in objects(bucket)} == {"alice"}

    # Both in one night, aaron's folder listed first: his file keeps the bare id, alice's session is `a1@alice`,
    # and forgetting aaron still leaves hers.
    push(tmp_path / "aaron-again.duckdb", aaron, "aaron")
    other = tmp_path / "other.duckdb"
    assert runner.invoke(app, ["ingest", "--db", str(other)]).exit_code == 0
    assert sessions(other) == {"a1": ("aaron", mine["a1"][1]), "a1@alice": mine["a1"]}
    assert runner.invoke(app, ["forget", "--contributor", "aaron", "--yes", "--db", str(other)]).exit_code == 0
    assert sessions(other) == {"a1@alice": mine["a1"]}


@pytest.mark.slow
def test_a_store_from_before_keys_splits_what_it_had_merged(
    tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database written before sessions were keyed (schema 18) that had merged aaron's file into alice's session:
    its next ingest keys every session it holds and reads the merged file again into a session of its own, so
    `forget --contributor aaron` leaves alice's messages."""
    from core.store.schema import MIGRATIONS

    start = datetime(2026, 5, 1, tzinfo=UTC)
    alice = tmp_path / "alice" / ".claude" / "projects"
    team_session(alice / "-work-app" / "a1.jsonl", "a1", start, "Run the api tests please")
    aaron = tmp_path / "aaron" / ".claude" / "projects"
    team_session(aaron / "-work-app" / "forged.jsonl", "a1", start + timedelta(days=1), "Skip the tests and push")
    push(tmp_path / "alice.duckdb", alice, "alice")
    push(tmp_path / "aaron.duckdb", aaron, "aaron")
    team = tmp_path / "team.duckdb"
    team_config(tmp_path, team, monkeypatch)
    assert runner.invoke(app, ["ingest"]).exit_code == 0
    mine = sessions(team)
    assert mine == {"a1": ("aaron", mine["a1"][1]), "a1@alice": ("alice", mine["a1@alice"][1])}

    # The same rows in a schema-18 file, merged as ingest merged them then: one session `a1`, tagged aaron's.
    legacy = tmp_path / "legacy.duckdb"
    with duckdb.connect(str(legacy)) as old:
        old.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ)")
        for version, name, sql in [m for m in MIGRATIONS if m[0] <= 18]:
            old.execute(sql)
            old.execute("INSERT INTO schema_version VALUES (?, ?, now())", [version, name])
        old.execute(f"ATTACH '{team}' AS now (READ_ONLY)")
        for table in ("files", "sessions", "messages", "remote_objects", "file_noise"):
            columns = ", ".join(
                f'"{r[0]}"'
                for r in old.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_catalog = 'legacy'"
                    " AND table_name = ?",
                    [table],
                ).fetchall()
            )
            old.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM now.{table}")
        old.execute("UPDATE messages SET session_id = 'a1' WHERE session_id = 'a1@alice'")
        old.execute("UPDATE files SET session_id = 'a1' WHERE session_id = 'a1@alice'")
        old.execute("DELETE FROM sessions WHERE session_id = 'a1@alice'")
    done = runner.invoke(app, ["ingest", "--json", "--db", str(legacy)])
    assert done.exit_code == 0, done.output
    changed = [Path(f["path"]).name for f in json.loads(done.stdout)["files"] if f["status"] == "changed"]
    # alice's file, read again into a session of her own (and every Claude Code file once, for its parts' keys:
    # migration 23)
    assert sorted(changed) == ["a1.jsonl", "forged.jsonl"]
    assert sessions(legacy) == mine
    assert runner.invoke(app, ["forget", "--contributor", "aaron", "--yes", "--db", str(legacy)]).exit_code == 0
    assert sessions(legacy) == {"a1@alice": mine["a1@alice"]}


# An object that changes between the listing and the read: a proxy in front of the S3 server changes it there.


@contextmanager
def s3_proxy(endpoint: str, before_read: Callable[[str], None]) -> Iterator[str]:
    """A loopback HTTP proxy in front of the S3 server at `endpoint` that calls `before_read(key)` before it passes
    on each read of an object (a GET of `/team/<key>`; listings and HEADs pass untouched); yields its URL."""
    upstream = urllib.parse.urlsplit(endpoint)
    hop = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}

    class Handler(BaseHTTPRequestHandler):
        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else None
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            if self.command == "GET" and path.startswith("/team/"):
                before_read(path.removeprefix("/team/"))
            conn = http.client.HTTPConnection(upstream.hostname or "127.0.0.1", upstream.port, timeout=30)
            conn.request(self.command, self.path, body=data, headers=dict(self.headers.items()))
            answer = conn.getresponse()
            payload = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in hop:
                    self.send_header(name, value)
            size = answer.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(payload))
            self.send_header("Content-Length", size)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            conn.close()

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serving(Handler) as url:
        yield url


@pytest.mark.slow
def test_an_object_changed_while_it_is_fetched_is_read_again_or_left(
    tmp_path: Path, bucket: object, s3: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A teammate overwrites objects after the nightly job listed them. One changes once (to a body of the same
    size, so only its ETag tells): it is read again and stored as its new version, whole. One changes on every
    read: it is left out with one line and fetched by the next ingest. One changed after it was fetched: the next
    ingest fetches it and reads it as a change. Never half of one version and half of another."""
    client = bucket
    start = datetime(2026, 5, 1, tzinfo=UTC)
    folder = tmp_path / "alice"
    bodies = {}
    for day, sid in enumerate(("once", "always")):
        team_session(folder / f"{sid}.jsonl", sid, start + timedelta(days=day), f"Run the {sid} tests please")
        bodies[sid] = (folder / f"{sid}.jsonl").read_bytes()
        client.put_object(Bucket="team", Key=f"transcripts/alice/claude-code/-work-app/{sid}.jsonl", Body=bodies[sid])  # type: ignore[attr-defined]
    reads: dict[str, int] = {}
    changing = {"always"}

    def before_read(key: str) -> None:
        sid = Path(key).stem
        reads[sid] = reads.get(sid, 0) + 1
        if sid == "once" and reads[sid] == 1:
            body = bodies[sid].replace(b"Run the once tests", b"RUN THE ONCE TESTS")  # the same size
        elif sid in changing:  # one more message (a record of its own: another uuid, another text)
            last = bodies[sid].splitlines(keepends=True)[-1].replace(b"-5", f"-{5 + reads[sid]}".encode())
            body = bodies[sid] + last.replace(b"pass now.", f"pass now ({reads[sid]}).".encode())
        else:
            return
        client.put_object(Bucket="team", Key=key, Body=body)  # type: ignore[attr-defined]

    team = tmp_path / "team.duckdb"
    with s3_proxy(s3, before_read) as proxy:
        team_config(tmp_path, team, monkeypatch, f'storage_options = {{ endpoint_url = "{proxy}" }}\n')
        done = runner.invoke(app, ["ingest", "--json"])
        assert done.exit_code == 0, done.output
        summary = json.loads(done.stdout)
        failed = {f["path"]: f["error"] for f in summary["files"] if f["status"] == "failed"}
        (why,) = failed.values()
        assert list(failed) == [f"{URL}/alice/claude-code/-work-app/always.jsonl"]
        assert why.startswith("Object `alice/claude-code/-work-app/always.jsonl` changed on each of 3 reads")
        assert "\n" not in why and reads == {"once": 2, "always": 3}
        with open_db(team) as con:
            prompt = con.execute("SELECT text FROM messages WHERE session_id = 'once' AND is_prompt").fetchall()
            tags = dict(con.execute("SELECT key, tag FROM remote_objects").fetchall())
        assert prompt == [("RUN THE ONCE TESTS please",)]  # the version it became, whole
        now = client.head_object(Bucket="team", Key="transcripts/alice/claude-code/-work-app/once.jsonl")  # type: ignore[attr-defined]
        assert tags == {"alice/claude-code/-work-app/once.jsonl": now["ETag"].strip('"')}  # what was read, recorded
        assert set(sessions(team)) == {"once"}

        changing.clear()  # it settles: the next ingest fetches it, and only it
        done = runner.invoke(app, ["ingest", "--json"])
        statuses = {Path(f["path"]).name: f["status"] for f in json.loads(done.stdout)["files"]}
        assert statuses == {"once.jsonl": "unchanged", "always.jsonl": "new"}
        assert sessions(team)["always"][1] == sessions(team)["once"][1] + 1  # its last version: one message more

        last = bodies["once"].splitlines(keepends=True)[-1].replace(b"once-5", b"once-6")
        grown = bodies["once"] + last.replace(b"pass now.", b"pass now, again.")
        client.put_object(Bucket="team", Key="transcripts/alice/claude-code/-work-app/once.jsonl", Body=grown)  # type: ignore[attr-defined]
        done = runner.invoke(app, ["ingest", "--json"])
        statuses = {Path(f["path"]).name: f["status"] for f in json.loads(done.stdout)["files"]}
        assert statuses == {"once.jsonl": "changed", "always.jsonl": "unchanged"}


def test_a_record_nested_beyond_reason_is_left_out_of_the_push_in_one_line(tmp_path: Path) -> None:
    """One record of 100,000 nested lists used to end every later `push` in a RecursionError traceback; it is left
    out, said in one line, and the file's other records go."""
    folder = tmp_path / "dev" / "proj"
    folder.mkdir(parents=True)
    ok = {"type": "user", "sessionId": "n1", "uuid": "u0", "message": {"role": "user", "content": "hello"}}
    nested = '{"type":"user","sessionId":"n1","uuid":"u1","message":{"role":"user","content":' + "[" * 100_000
    nested += "]" * 100_000 + "}}"
    (folder / "n1.jsonl").write_text(json.dumps(ok) + "\n" + nested + "\n")
    store = tmp_path / "bucket"
    store.mkdir()
    db = tmp_path / "p.duckdb"
    done = runner.invoke(
        app, ["push", f"file://{store}", str(tmp_path / "dev"), "--contributor", "dev-1", "--db", str(db)]
    )
    assert done.exit_code == 0, done.output
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Left out 1 record(s) of ") and "nested deeper" in line
    (sent,) = [p for p in store.rglob("*.jsonl")]
    assert [json.loads(x)["uuid"] for x in sent.read_text().splitlines()] == ["u0"]
    again = runner.invoke(
        app, ["push", f"file://{store}", str(tmp_path / "dev"), "--contributor", "dev-1", "--db", str(db)]
    )
    assert again.exit_code == 0 and "1 unchanged" in again.stdout
