"""Nothing escapes its folder, through the CLI against real files: `playbook sql` cannot change the database or
any other file; exports keep the mode, owner and link of what they replace; a full disk is one line and leaves
no half-written file; settings have bounds and a named settings file must exist; untrusted text is printed
escaped; a 10,000-operation answer costs what a 10-operation one does."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import SAMPLES, SEED_PLAYBOOK, trust_config, write_session

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A database with one imported version, in a working directory of its own (no playbook.toml)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    db = tmp_path / "p.duckdb"
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED_PLAYBOOK))
    assert runner.invoke(app, ["import", str(seed), "--db", str(db)]).exit_code == 0
    return db


REFUSED_SQL = [
    ("copy over the database", "copy (select 'x') to '{db}'"),
    ("copy over another file", "copy (select 'x') to '{other}'"),
    ("copy as parquet", "copy sessions to '{tmp}/out.parquet' (format parquet)"),
    ("attach a backup writable and delete", "attach '{backup}' as b (read_only false)"),
    ("read a system file", "select * from read_text('/etc/passwd')"),
    ("read another database as a table", "select * from '{backup}'"),
    ("install an extension", "install httpfs"),
    ("load an extension", "load httpfs"),
    ("turn the guard off", "set enable_external_access = true"),
    ("two statements", "select 1; copy (select 1) to '{other}'"),
    ("explain analyze runs its statement", "explain analyze copy (select 1) to '{other}'"),
    ("a pragma that writes a file", "pragma profiling_output = '{other}'"),
    ("a write", "delete from versions"),
    ("create", "create table t as select 1"),
    ("export the database", "export database '{tmp}/dump'"),
    ("checkpoint", "checkpoint"),
]


@pytest.mark.parametrize(("name", "sql"), REFUSED_SQL, ids=[c[0] for c in REFUSED_SQL])
def test_sql_refuses_what_could_change_a_file(name: str, sql: str, imported: Path, tmp_path: Path) -> None:
    backup = tmp_path / "backup.duckdb"
    shutil.copy(imported, backup)
    other = tmp_path / "notes.txt"
    other.write_text("mine\n")
    before = {p: digest(p) for p in (imported, backup, other)}
    query = sql.format(db=imported, other=other, backup=backup, tmp=tmp_path)
    done = runner.invoke(app, ["sql", query, "--db", str(imported)])
    assert done.exit_code == 1, (name, done.output)
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "Traceback" not in done.output
    assert {p: digest(p) for p in before} == before  # byte for byte, every file
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [
        "backup.duckdb",
        "notes.txt",
        "p.duckdb",
        "seed.json",
    ]


def test_sql_reads_what_it_should(imported: Path) -> None:
    before = digest(imported)
    for query, column in [
        ("select name, text from playbook_at('default', 1) order by name", "name"),
        ("with v as (select * from versions) select count(*) as n from v", "n"),
        ("describe sessions", "column_name"),
        ("show tables", "name"),
        ("summarize versions", "column_name"),
        ("pragma table_info('entries')", "name"),
        ("explain select * from versions", "explain_key"),
        ("/* the views */\nfrom v_operations_daily", "day"),
    ]:
        done = runner.invoke(app, ["sql", query, "--json", "--db", str(imported)])
        assert done.exit_code == 0, (query, done.output)
        rows = json.loads(done.stdout)
        assert isinstance(rows, list) and (not rows or column in rows[0]), (query, rows[:1])
    assert digest(imported) == before


def test_exports_keep_the_mode_owner_and_link_of_what_they_replace(imported: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "CLAUDE.md"
    real.write_text("# Mine\n\nHand-written.\n")
    real.chmod(0o664)
    repo = tmp_path / "repo"
    repo.mkdir()
    link = repo / "CLAUDE.md"
    link.symlink_to(real)
    done = runner.invoke(app, ["export", "--format", "claude-md", "--out", str(link), "--db", str(imported)])
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and link.resolve() == real  # the link stays; its target is the file written
    assert "Hand-written." in real.read_text() and "Run the failing test first." in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o664
    assert sorted(p.name for p in dotfiles.iterdir()) == ["CLAUDE.md"] and sorted(os.listdir(repo)) == ["CLAUDE.md"]

    plain = tmp_path / "AGENTS.md"
    plain.write_text("# Agents\n")
    plain.chmod(0o640)
    if os.geteuid() == 0:  # only root can give a file to someone else; the export must give it back
        os.chown(plain, 1234, 4321)
    assert (
        runner.invoke(app, ["export", "--format", "claude-md", "--out", str(plain), "--db", str(imported)]).exit_code
        == 0
    )
    assert stat.S_IMODE(plain.stat().st_mode) == 0o640
    if os.geteuid() == 0:
        assert (plain.stat().st_uid, plain.stat().st_gid) == (1234, 4321)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o644), (0o077, 0o600)])
def test_a_new_export_is_0644_less_the_umask(imported: Path, tmp_path: Path, umask: int, mode: int) -> None:
    out = tmp_path / "new" / "CLAUDE.md"
    old = os.umask(umask)
    try:
        done = runner.invoke(app, ["export", "--format", "claude-md", "--out", str(out), "--db", str(imported)])
    finally:
        os.umask(old)
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(out.stat().st_mode) == mode


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt 2>/dev/null || mount -t tmpfs tmpfs /tmp"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unshare and a tmpfs mount in a user namespace")
def test_a_full_disk_is_one_line_and_leaves_no_half_file(tmp_path: Path) -> None:
    """`nightly` on a disk with room for the database but not its backup: one line naming the path and the space,
    no truncated backup, the database as it was. Then an export over a file on a full disk: the old file stays.

    The disk is a tmpfs 2 MB larger than the database, mounted in a private mount namespace (`unshare`), which vanishes with the process:
    nothing outside tmp_path is touched, and nothing is left mounted if the test dies."""
    db = tmp_path / "seed.duckdb"
    assert runner.invoke(app, ["ingest", str(SAMPLES), "--db", str(db)]).exit_code == 0
    assert runner.invoke(app, ["new", "default", "--db", str(db)]).exit_code == 0
    size = db.stat().st_size
    disk = tmp_path / "disk"
    disk.mkdir()
    playbook = Path(sys.executable).parent / "playbook"
    script = f"""
set -u
mount -t tmpfs -o size={size + 2 * 1024 * 1024} tmpfs {disk}
cp {db} {disk}/p.duckdb
sha256sum {disk}/p.duckdb > {tmp_path}/before.txt
{playbook} nightly {SAMPLES} --llm heuristic --db {disk}/p.duckdb > {tmp_path}/nightly.out 2> {tmp_path}/nightly.err
echo $? > {tmp_path}/nightly.code
sha256sum {disk}/p.duckdb > {tmp_path}/after.txt
ls -a {disk}/p.duckdb.backups > {tmp_path}/backups.txt 2>&1
printf 'keep me\\n' > {disk}/playbook.json
head -c 1000000000 /dev/zero > {disk}/filler 2>/dev/null
{playbook} export --format json --out {disk}/playbook.json --db {db} > /dev/null 2> {tmp_path}/export.err
echo $? > {tmp_path}/export.code
cat {disk}/playbook.json > {tmp_path}/claude.txt
ls -a {disk} > {tmp_path}/disk.txt
"""
    env = {k: v for k, v in os.environ.items() if k != "PLAYBOOK_CONFIG"}
    subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=tmp_path, env=env, check=True, timeout=600)
    code = int((tmp_path / "nightly.code").read_text())
    lines = (tmp_path / "nightly.err").read_text().strip().splitlines()
    assert code == 1, lines
    assert len(lines) == 1 and lines[0].startswith("Error: Disk full: cannot write `"), lines
    assert "p.duckdb.backups/" in lines[0] and f"{size:,} bytes needed" in lines[0]
    before = (tmp_path / "before.txt").read_text().split()[0]
    assert (tmp_path / "after.txt").read_text().split()[0] == before  # the database is as it was
    assert (tmp_path / "backups.txt").read_text().split() == [".", ".."]  # no truncated copy, no temporary file
    export = (tmp_path / "export.err").read_text().strip().splitlines()
    assert int((tmp_path / "export.code").read_text()) == 1
    assert len(export) == 1 and export[0].startswith("Error: Disk full: cannot write `"), export
    assert (tmp_path / "claude.txt").read_text() == "keep me\n"
    assert not [n for n in (tmp_path / "disk.txt").read_text().split() if n.endswith(".tmp")]


BOUNDS = [
    ("max_entries", "-1"),
    ("max_entries", "0"),
    ("concurrency", "0"),
    ("concurrency", "65"),
    ("epoch_size", "0"),
    ("max_attempts", "0"),
    ("backups", "-1"),
    ("max_removed_share", "1.5"),
    ("breaker_failures", "0"),
    ("max_retries", "-1"),
    ("near_duplicate_threshold", "0"),
    ("cost_cap_usd", "-5"),
    ("request_timeout_s", "0"),
    ("max_entry_chars", "3"),
    ("wait_s", "-1"),
]


@pytest.mark.parametrize(("key", "value"), BOUNDS, ids=[f"{k}={v}" for k, v in BOUNDS])
def test_every_bound_is_one_line_from_file_and_environment(
    key: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    config = tmp_path / "playbook.toml"
    config.write_text(f"{key} = {value}\n")
    trust_config(config)
    done = runner.invoke(app, ["sessions"])
    assert done.exit_code == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"Error: Invalid value for `{key}` in `playbook.toml`: Input should be"), line
    config.unlink()
    monkeypatch.setenv(f"PLAYBOOK_{key.upper()}", value)
    done = runner.invoke(app, ["sessions"])
    assert done.exit_code == 1 and done.stderr.startswith(f"Error: Invalid value for `{key}` in PLAYBOOK_{key.upper()}")
    assert not (tmp_path / "data").exists()  # nothing was created


def test_a_playbook_budget_of_zero_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    (tmp_path / "playbook.toml").write_text("[playbook_settings.default]\nmax_entries = -1\n")
    done = runner.invoke(app, ["sessions"])
    assert done.exit_code == 1 and "`playbook_settings.default.max_entries`" in done.stderr


@pytest.mark.parametrize("kind", ["folder", "missing"])
def test_a_named_settings_file_must_exist(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = tmp_path / "conf"
    if kind == "folder":
        named.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(named))
    for args in (["sessions"], ["nightly", str(SAMPLES), "--llm", "heuristic"]):
        done = runner.invoke(app, args)
        assert done.exit_code == 1
        (line,) = done.stderr.strip().splitlines()
        what = "a folder" if kind == "folder" else "no file"
        assert (
            line == f"Error: PLAYBOOK_CONFIG names `{named}`, which is {what}; point it at a playbook.toml or unset it."
        )
    assert sorted(os.listdir(tmp_path)) == ["conf"] if kind == "folder" else os.listdir(tmp_path) == []


ANSI = "\x1b[2J\x1b[31mLooks harmless.\x1b]0;owned\x07"


def test_untrusted_text_is_printed_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session id with terminal escapes, and entry texts with escapes, a bidi override and tag characters:
    `sessions`, `show`, `why` and `review` print each one as its escape, never raw."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    db = tmp_path / "p.duckdb"
    write_session(tmp_path / "t" / "s.jsonl", f"evil{ANSI}", datetime(2026, 5, 1, tzinfo=UTC), error=True)
    assert runner.invoke(app, ["ingest", str(tmp_path / "t"), "--db", str(db)]).exit_code == 0
    listed = runner.invoke(app, ["sessions", "--db", str(db)])
    assert listed.exit_code == 0 and "\x1b" not in listed.output and "\x07" not in listed.output
    assert "evil\\x1b[2J" in listed.stdout.replace("\n", "").replace("│", "").replace(" ", "")

    hidden = "Looks harmless.\u202e\U000e0049\U000e0067\x1b[8m"
    config = tmp_path / "playbook.toml"
    config.write_text(f'db = "{db}"\n[playbook_settings.default]\nreview = "required"\n')
    trust_config(config)
    # An entry stored before texts were cleaned of invisible characters (or by an older version).
    from core.models import Entry, Playbook
    from core.sections import DEFAULT_SECTIONS
    from core.store.registry import ensure_playbook
    from core.store.versions import write_version

    with open_db(db) as con:
        ensure_playbook(con, "default", DEFAULT_SECTIONS)
        old = Playbook(sections={"OTHERS": [Entry(name="oth-001", text=hidden)]})
        write_version(con, "default", old, source="import")
    for args in (["show"], ["show", "--format", "markdown"], ["why", "oth-001"], ["review"]):
        done = runner.invoke(app, args)
        assert done.exit_code == 0, (args, done.output)
        for raw in ("\x1b", "\u202e", "\U000e0049"):
            assert raw not in done.output, (args, raw)
        assert "\\u202e\\U000e0049" in done.stdout, (args, done.stdout)
    shown = runner.invoke(app, ["show"])
    assert "Note: oth-001 holds invisible characters (U+001B ×1, U+202E ×1, U+E0049 ×1, U+E0067 ×1)" in shown.stderr
    exported = runner.invoke(app, ["export", "--format", "markdown", "--version", "1"])
    assert exported.exit_code == 0 and "Looks harmless.[8m" in exported.stdout
    assert not any(c in exported.stdout for c in ("\x1b", "\u202e", "\U000e0049"))

    book = {
        "version": "1.0",
        "sections": {"OTHERS": [{"name": "oth-009", "text": hidden, "helpful": 0, "harmful": 0}]},
    }
    (tmp_path / "b.json").write_text(json.dumps(book))
    imported = runner.invoke(app, ["import", str(tmp_path / "b.json"), "--merge"])
    assert imported.exit_code == 0, imported.output
    assert "Note: removed invisible characters from oth-009: U+001B ×1, U+202E ×1" in imported.stderr
    with open_db(db) as con:
        texts = [r[0] for r in con.execute("SELECT text FROM entries WHERE valid_to IS NULL").fetchall()]
    assert "Looks harmless.[8m" in texts  # the merged copy, clean


@pytest.mark.slow
def test_an_answer_of_ten_thousand_operations_is_cut_where_it_is_parsed(tmp_path: Path) -> None:
    """Only the first 10 operations of a call are considered; the rest are dropped where the answer is parsed
    and noted in one row (the answer of 10,000 took 217 s and 3.3 GB for 2 sessions when each was recorded)."""
    db = tmp_path / "p.duckdb"
    write_session(tmp_path / "t" / "s.jsonl", "s1", datetime(2026, 5, 1, tzinfo=UTC), error=True)
    assert runner.invoke(app, ["ingest", str(tmp_path / "t"), "--db", str(db)]).exit_code == 0
    ops = [
        {"type": "ADD", "section": "OTHERS", "text": f"Lesson {i}: check the exit code of step {i}."}
        for i in range(10_000)
    ]
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        json.dumps({"session_id": "s1", "step": "reflector", "text": json.dumps({"analysis": "a", "bullet_tags": []})})
        + "\n"
        + json.dumps({"session_id": "s1", "step": "curator", "text": json.dumps({"reasoning": "r", "operations": ops})})
        + "\n"
    )
    done = runner.invoke(
        app,
        ["curate", "--llm", f"replay:{replay}", "--db", str(db), "--create"],
        env={"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_NEAR_DUPLICATES": "off"},
    )
    assert done.exit_code == 0, done.output
    assert "9,990 past the limit of 10 a call dropped" in done.stdout
    with open_db(db) as con:
        rows = con.execute("SELECT status, count(*) FROM operations GROUP BY ALL ORDER BY 1").fetchall()
        proposed = con.execute("SELECT ops_proposed FROM versions WHERE version = 1").fetchone()
        reason = con.execute("SELECT reason FROM operations WHERE status = 'truncated'").fetchone()
    assert rows == [("applied", 10), ("truncated", 1)] and proposed == (10_000,)
    assert reason == ("Operations list truncated from 10000 to 10",)
