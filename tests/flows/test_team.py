"""Teams through a real S3 server (moto's server mode on loopback, the real s3fs/botocore clients): developers
push redacted transcripts, the nightly job ingests them incrementally with their contributor, consent keeps
excluded contributors out, and `forget` deletes a contributor everywhere while the history keeps its place."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import SAMPLES, trust_config, write_session
from tests.servers import s3_server

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
    for name, value in {
        "AWS_ENDPOINT_URL": s3,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    client = boto3.client("s3")
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
    from flows.context import Database

    cache = Database.of(Settings(db=team)).remote_cache(URL)
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


def test_a_shared_playbook_exports_only_what_two_contributors_support(
    tmp_path: Path, bucket: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's session adds a lesson, bob's adds another and alice's later session confirms bob's: in the team's
    playbook only the lesson both support is exported; `forget --contributor alice` names the one that rested on
    her alone and holds it."""
    start = datetime(2026, 5, 1, tzinfo=UTC)
    for who, sid, day in (("alice", "a1", 0), ("bob", "b1", 1), ("alice", "a2", 2)):
        folder = tmp_path / who / ".claude" / "projects" / "-work-app"
        write_session(folder / f"{sid}.jsonl", sid, start + __import__("datetime").timedelta(days=day), error=True)
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
