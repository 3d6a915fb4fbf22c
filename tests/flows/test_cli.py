"""The `playbook` CLI through typer's CliRunner: exit codes, output, and the error contract."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SEED_PLAYBOOK, one_version, trust_config
from tests.servers import lock_holder

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.duckdb")


@pytest.fixture
def imported(db: str, tmp_path: Path) -> str:
    path = tmp_path / "playbook.json"
    path.write_text(json.dumps(SEED_PLAYBOOK))
    code, out, _ = run("import", str(path), "--db", db)
    assert code == 0 and "as version 1" in out
    return db


def test_ingest_summary_and_sessions_json(db: str, samples: Path) -> None:
    code, out, _ = run("ingest", str(samples), "--db", db)
    assert code == 0
    assert "files new" in out and "12" in out and "sessions written" in out and "MB/s" in out
    code, out, _ = run("sessions", "--db", db, "--json", "--project", "spotter")
    rows = json.loads(out)
    # short.jsonl holds session 55604662-...; 8463c716 ran in the spotter-fum worktree
    assert [r["session_id"] for r in rows] == ["55604662-cf2a-4331-851a-ec234028f8ca"]
    assert set(rows[0]) >= {
        "session_id",
        "project",
        "format",
        "source_path",
        "started_at",
        "ended_at",
        "n_messages",
        "n_user_prompts",
        "n_tool_calls",
        "n_tool_errors",
    }
    code, out, _ = run("sessions", "--db", db, "--json", "--since", "2026-02-11")
    assert {r["session_id"] for r in json.loads(out)} == {
        "8463c716-a2ea-4c14-9efa-87158ebd9f20",
        "019c8a4d-8f45-7010-8b5d-7fad920aa6f9",
        "019c8a59-e9dd-71f0-9ae3-4079fe9726a9",
        "019c8a70-dda7-7f33-98ea-f30553347322",
        "019e9625-802f-7e91-840a-cfe88d14117a",
    }


def test_ingest_exits_nonzero_only_when_nothing_readable(db: str, tmp_path: Path, samples: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    code, _, err = run("ingest", str(junk), str(tmp_path / "missing"), "--db", db)
    assert (
        code == 1
        and err.strip()
        == f"Error: Transcript path `{tmp_path / 'missing'}` does not exist; check the path or `transcripts`."
    )
    code, _, _ = run("ingest", str(junk), str(samples / "claude-code" / "spotter" / "short.jsonl"), "--db", db)
    assert code == 0


def test_ingest_without_paths_explains(db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PLAYBOOK_TRANSCRIPTS", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))  # a machine with no agent folders
    code, _, err = run("ingest", "--db", db)
    assert code == 1
    assert "Error: No transcript folders given, and none found in ~/.claude/projects" in err


def test_agent_folders_are_found_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layouts = Path(__file__).resolve().parents[1] / "data" / "layouts"
    home = tmp_path / "home"
    shutil.copytree(layouts / "claude" / "projects" / "sample-project", home / ".claude" / "projects" / "p1")
    other = tmp_path / "second-config"  # CLAUDE_CONFIG_DIR may name several folders
    shutil.copytree(layouts / "claude" / "projects" / "-home-marco-projects-spotter", other / "projects" / "p2")
    shutil.copytree(layouts / "codex" / "sessions", tmp_path / "codex-home" / "sessions")
    monkeypatch.delenv("PLAYBOOK_TRANSCRIPTS", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{home / '.claude'},{other}")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    db = str(tmp_path / "found.duckdb")
    code, out, _ = run("ingest", "--db", db, "--json")
    assert code == 0
    folders = {str(Path(f["path"]).parent).split("/")[len(str(tmp_path).split("/"))] for f in json.loads(out)["files"]}
    assert folders == {"home", "second-config", "codex-home"}
    code, out, _ = run("doctor", "--db", db, "--json")
    report = json.loads(out)
    assert code == 0 and report["problems"] == [] and report["transcripts"]["defaults"] is True
    assert [f["sessions"] for f in report["transcripts"]["folders"]] == [
        {"claude-code": 1},
        {"claude-code": 1},
        {"codex": 2},
    ]
    assert report["database"]["overview"]["sessions"] == 4 and report["provider"]["auto_picks"] in (
        "heuristic",
        "anthropic",
    )
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("playbook 0.")


def test_show_json_is_the_seeds_shape(imported: str) -> None:
    _, out, _ = run("show", "--db", imported, "--format", "json")
    data = json.loads(out)
    assert set(data) == {"contract_version", "version", "last_updated", "sections"}  # the seeds ignore the first
    assert data["sections"] == SEED_PLAYBOOK["sections"]
    _code, out, _ = run("show", "--db", imported)
    assert "[pat-001] helpful=2 harmful=0 :: Run the failing test first." in out


def test_history_json(imported: str) -> None:
    _code, out, _ = run("history", "--db", imported, "--json")
    rows = json.loads(out)
    assert [
        (r["version"], r["session_id"], r["ops_applied"], r["ops_skipped"], r["pruned"], r["n_entries"]) for r in rows
    ] == [(0, None, 0, 0, 0, 0), (1, None, 0, 0, 0, 2)]
    assert all("created_at" in r for r in rows)
    code, out, err = run("history", "--db", imported, "--limit", "1")
    assert code == 0 and "Showing 1 of 2 versions; --limit 0 shows all" in err
    assert [r["version"] for r in json.loads(run("history", "--db", imported, "--limit", "1", "--json")[1])] == [1]


def test_diff_and_revert(imported: str, tmp_path: Path) -> None:
    changed = json.loads(json.dumps(SEED_PLAYBOOK))
    changed["sections"]["OTHERS"] = []
    changed["sections"]["USER PREFERENCES"] = [{"name": "pref-001", "text": "Tabs.", "helpful": 0, "harmful": 0}]
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(changed))
    code, _, err = run("import", str(path), "--db", imported)  # the playbook has entries: replace or merge?
    assert code == 1 and "pass `--replace`" in err and "Nothing was imported" in err
    code, out, _ = run("import", str(path), "--replace", "--db", imported)
    assert code == 0 and "replaced 2 entries" in out
    code, out, _ = run("diff", "1", "2", "--db", imported)
    assert "+ [pref-001] Tabs." in out and "- [oth-001] Prefer pathlib." in out
    code, out, _ = run("revert", "1", "--db", imported)
    assert code == 0 and "Version 3 of playbook `default` restores version 1." in out
    code, out, _ = run("diff", "1", "3", "--db", imported)
    assert "No differences" in out


def test_export_claude_md_keeps_the_rest_byte_for_byte(imported: str, tmp_path: Path) -> None:
    target = tmp_path / "CLAUDE.md"
    before = "# My project\r\n\nSome notes — ünïcode.\n\n<!-- playbook:begin -->\nold\n<!-- playbook:end -->\n\ntail\n"
    target.write_bytes(before.encode())
    code, _, _ = run("export", "--format", "claude-md", "--out", str(target), "--db", imported)
    assert code == 0
    after = target.read_bytes().decode()
    head, tail = before.split("<!-- playbook:begin")[0], before.split("<!-- playbook:end -->")[1]
    assert after.startswith(head) and after.endswith(tail)
    assert "**[pat-001]** Run the failing test first." in after and "\nold\n" not in after
    # A second export changes nothing.
    run("export", "--format", "claude-md", "--out", str(target), "--db", imported)
    assert target.read_bytes().decode() == after


def test_export_json_markdown_parquet(imported: str, tmp_path: Path) -> None:
    code, out, _ = run("export", "--db", imported)
    assert json.loads(out)["sections"] == SEED_PLAYBOOK["sections"]
    code, out, _ = run("export", "--format", "markdown", "--db", imported)
    assert out.startswith("# Playbook") and "## PATTERNS & APPROACHES" in out
    code, out, _ = run("export", "--parquet", str(tmp_path / "pq"), "--db", imported)
    assert code == 0 and (tmp_path / "pq" / "entries.parquet").exists()


def test_errors_are_one_line_with_exit_1(db: str, imported: str, tmp_path: Path) -> None:
    code, _out, err = run("show", "--db", imported, "--playbook", "nope")
    assert code == 1 and err.strip() == (
        "Error: Playbook `nope` does not exist; create it with `playbook new nope` (or pass `--create`)."
    )
    code, _out, err = run("show", "--db", imported, "--playbook", "defualt")
    assert code == 1 and "did you mean `default`?" in err
    missing = tmp_path / "nope.duckdb"
    code, _out, err = run("history", "--db", str(missing))
    assert (
        code == 1 and err.strip() == f"Error: No database at `{missing}`; run `playbook ingest` first, or pass `--db`."
    )
    assert not missing.exists()  # a read command never creates a database
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    code, _, err = run("import", str(bad), "--db", db)
    assert code == 1 and err.startswith(f"Error: Playbook `{bad}` is not valid JSON") and "Traceback" not in err
    assert bad.read_text() == "{oops"
    code, _, _ = run("show", "--format", "yaml", "--db", db)
    assert code == 2


@pytest.mark.slow
def test_second_writer_cli_message(db: str) -> None:
    assert run("import", "--help")[0] == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({db!r}); print('held', flush=True); sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        code, _, err = run("history", "--db", db, "--wait", "1")
        assert code == 1 and time.monotonic() - started >= 1.0  # it waited, then said who holds the file
        assert (
            err.strip() == f"Error: Database `{db}` is in use by process {holder.pid}; wait for it to finish"
            " (`--wait SECONDS`) or pass another `--db`."
        )
    finally:
        holder.communicate("\n")


def test_db_from_environment(imported: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAYBOOK_DB", imported)
    code, out, _ = run("history", "--json")
    assert code == 0 and len(json.loads(out)) == 2


def test_config_file(imported: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "playbook.toml"
    config.write_text(f'db = "{imported}"\nplaybook = "default"\n')
    trust_config(config)
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(config))
    monkeypatch.delenv("PLAYBOOK_DB", raising=False)
    code, out, _ = run("history", "--json")
    assert code == 0 and len(json.loads(out)) == 2


def test_import_with_custom_sections(db: str, tmp_path: Path) -> None:
    sections = tmp_path / "sections.yaml"
    sections.write_text(
        "sections:\n  - {name: SQL, slug: sql, description: Query lessons}\n"
        "  - {name: MISC, slug: misc}\nfallback: MISC\n"
    )
    path = tmp_path / "pb.json"
    path.write_text(
        json.dumps(
            {
                "sections": {
                    "sql": [{"name": "sql-001", "text": "Use CTEs."}],
                    "OTHERS": [{"name": "oth-001", "text": "Misc."}],
                }
            }
        )
    )
    code, _out, err = run("import", str(path), "--sections", str(sections), "--db", db, "--playbook", "dw")
    assert code == 0, err
    data = json.loads(run("show", "--db", db, "--playbook", "dw", "--format", "json")[1])
    assert data["sections"] == {
        "SQL": [{"name": "sql-001", "text": "Use CTEs.", "helpful": 0, "harmful": 0}],
        "MISC": [{"name": "oth-001", "text": "Misc.", "helpful": 0, "harmful": 0}],
    }
    bad = tmp_path / "bad.yaml"
    bad.write_text("sections:\n  - {name: A, slug: a}\n")
    code, _, err = run("import", str(path), "--sections", str(bad), "--db", db, "--playbook", "other")
    assert code == 1 and "Fallback section `OTHERS` is not declared" in err


def test_cli_fails_fast_when_a_run_holds_the_database(tmp_path: Path) -> None:
    db = tmp_path / "busy.duckdb"
    with lock_holder(db) as holder:
        result = runner.invoke(app, ["curate", "--db", str(db), "--llm", "heuristic", "--wait", "0.5"])
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: Database `{db}` is in use by process {holder.pid} (playbook nightly")
        assert not db.exists()  # nothing was written


def test_cli_anthropic_without_key_fails_before_prefect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("PLAYBOOK_ANTHROPIC_API_KEY", raising=False)
    result = runner.invoke(app, ["nightly", str(tmp_path), "--db", str(tmp_path / "x.duckdb"), "--llm", "anthropic"])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: The `anthropic` provider needs an Anthropic API key; set ANTHROPIC_API_KEY"
        " (or PLAYBOOK_ANTHROPIC_API_KEY), or pass `--llm heuristic`."
    )


@pytest.mark.slow
def test_serve_without_server_explains(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 1 and "Schedules need a running Prefect server" in result.stderr


@pytest.mark.slow
def test_report_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    db = tmp_path / "c.duckdb"
    one_version(db)
    result = CliRunner().invoke(app, ["report", "--db", str(db), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0 and "8 PNG charts" in result.stdout
    assert (tmp_path / "rep" / "index.html").exists()
    missing = CliRunner().invoke(app, ["report", "--db", str(db), "--playbook", "nope"])
    assert missing.exit_code == 1 and missing.stderr.startswith("Error: Playbook `nope` does not exist")
    duckdb.connect(str(db)).close()


MISTAKES = [
    # (name, setup(tmp, db) -> args, expected start of the one error line)
    ("bad value in playbook.toml", "config:epoch_size = 'lots'", ["sessions"], "Error: Invalid value for `epoch_size`"),
    ("typo in a playbook.toml key", "config:dbb = 'x.duckdb'", ["sessions"], "Error: Unknown key `dbb`"),
    ("bad TOML", "config:epoch_size =", ["sessions"], "Error: `"),
    ("typo in a variable", "env:PLAYBOOK_DBB=x", ["sessions"], "Error: Unknown environment variable `PLAYBOOK_DBB`"),
    ("wrong transcript path", "", ["nightly", "/typo/path", "--llm", "heuristic"], "Error: Transcript path"),
    ("read command, no database", "", ["history", "--db", "{tmp}/nope.duckdb"], "Error: No database at"),
    ("misspelt playbook", "imported", ["curate", "-p", "defualt", "--llm", "heuristic"], "Error: Playbook `defualt`"),
    ("unknown playbook in stats", "imported", ["stats", "-p", "nosuch"], "Error: Playbook `nosuch` does not exist"),
    ("unknown provider", "env:PLAYBOOK_LLM=gpt", ["sessions"], "Error: Invalid value for `llm` in PLAYBOOK_LLM"),
    ("bad SQL", "imported", ["sql", "select nope from nowhere"], "Error: Database `"),
    ("unbalanced CLAUDE.md", "claude:<!-- playbook:begin -->\nmine\n", ["export", "--format", "claude-md"], "Error: `"),
    ("CLAUDE.md not UTF-8", "claude-bytes", ["export", "--format", "claude-md"], "Error: `"),
    ("CLAUDE.md read-only", "claude-readonly", ["export", "--format", "claude-md"], "Error: Cannot write `"),
    ("import into a playbook with entries", "imported", ["import", "{seed}"], "Error: Playbook `default` has 2"),
]


@pytest.mark.parametrize(("name", "setup", "args", "expected"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_every_mistake_is_one_line_and_loses_nothing(
    name: str, setup: str, args: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.duckdb"
    seed = tmp_path / "playbook.json"
    seed.write_text(json.dumps(SEED_PLAYBOOK))
    claude = tmp_path / "CLAUDE.md"
    monkeypatch.chdir(tmp_path)  # playbook.toml here is the settings file, when a case writes one
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    if setup.startswith("config:"):
        (tmp_path / "playbook.toml").write_text(setup.split(":", 1)[1] + "\n")
    elif setup.startswith("env:"):
        key, value = setup.split(":", 1)[1].split("=")
        monkeypatch.setenv(key, value)
    elif setup == "imported" or setup.startswith("claude"):
        assert run("import", str(seed), "--db", str(db))[0] == 0
        if setup.startswith("claude:"):
            claude.write_text(setup.split(":", 1)[1])
        elif setup == "claude-bytes":
            claude.write_bytes(b"# notes \xff\xfe\n")
        elif setup == "claude-readonly":  # round 9: rewritten as root, whatever its mode
            claude.write_text("# mine\n")
            claude.chmod(0o444)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.suffix != ".lock"}
    full = [a.format(tmp=tmp_path, seed=seed) for a in args]
    if (
        "--db" not in full
        and setup not in ("", "config:dbb = 'x.duckdb'")
        and not setup.startswith(("env:", "config:"))
    ):
        full += ["--db", str(db)]
    if full[0] == "export":
        full += ["--out", str(claude)]
    result = runner.invoke(app, full)
    assert result.exit_code == 1, (name, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), (name, result.stderr)
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(result.exception, SystemExit)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.suffix != ".lock"}
    assert {k: v for k, v in after.items() if k in before and k != "m.duckdb"} == {
        k: v for k, v in before.items() if k != "m.duckdb"
    }  # no file the user wrote was touched
    assert not (tmp_path / "nope.duckdb").exists()


def test_check_names_a_damaged_database_in_one_line(imported: str, tmp_path: Path) -> None:
    import os

    code, out, _ = run("check", "--db", imported)
    assert code == 0 and "every checksum verified" in out
    damaged = tmp_path / "damaged.duckdb"
    shutil.copy(imported, damaged)
    size = damaged.stat().st_size
    with damaged.open("r+b") as fh:  # every block after the file headers overwritten, as a bad disk would
        fh.seek(12 * 1024)
        fh.write(os.urandom(size - 12 * 1024))
    code, _, err = run("check", "--db", str(damaged))
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("Error: ") and str(damaged) in lines[0]


@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "SAMPLES"],
        ["show"],
        ["history"],
        ["sql", "select 1"],
        ["export", "--format", "markdown"],
        ["curate", "--llm", "heuristic"],
        ["revert", "0"],
        ["check"],
    ],
    ids=lambda c: c[0],
)
def test_a_half_truncated_database_is_refused_by_every_command(
    imported: str, tmp_path: Path, samples: Path, command: list[str]
) -> None:
    damaged = tmp_path / "half.duckdb"
    shutil.copy(imported, damaged)
    with damaged.open("r+b") as fh:
        fh.truncate(damaged.stat().st_size // 2)
    before = damaged.read_bytes()
    args = [str(samples) if a == "SAMPLES" else a for a in command]
    code, _, err = run(*args, "--db", str(damaged), "--wait", "0")
    lines = err.strip().splitlines()
    assert code == 1 and lines and lines[-1].startswith("Error: ") and str(damaged) in lines[-1], err
    assert "Traceback" not in err
    assert damaged.read_bytes() == before  # refused, not "repaired" by a write


@pytest.mark.slow
def test_a_full_disk_stops_ingest_with_one_line_instead_of_failing_every_file(tmp_path: Path, samples: Path) -> None:
    import subprocess
    import sys

    # The file-size limit makes every write past 1.2 MB fail as a full disk would (EFBIG instead of ENOSPC).
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1_200_000, 1_200_000))\n"
        "from flows.cli import app\n"
        f"sys.argv = ['playbook', 'ingest', {str(samples)!r}, '--db', 'full.duckdb']\n"
        "app()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAYBOOK_")}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert lines[-1].startswith("Error: The database could not be written (") and "File too large" in lines[-1]
    assert "failed:" not in done.stderr  # no file is blamed for the database's problem
