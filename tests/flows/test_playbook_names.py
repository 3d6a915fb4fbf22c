"""Playbook names from every source (`new NAME`, `-p`, `PLAYBOOK_PLAYBOOK`, the user's own config) are plain names,
as an untrusted playbook.toml's are: a name becomes `<out_dir>/<name>.md`, so a `/` or `..` would write outside
`out_dir` (an absolute name overwrote a hand-written CLAUDE.md whole). Each refusal is one line; nothing is written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from core.playbook_names import is_playbook_name
from flows.cli import app
from flows.context import ExportRules
from flows.delivery.exports import own_files
from flows.workspace import Workspace

runner = CliRunner()
BAD = ["../../../../esc", "a/b", "/abs/CLAUDE", "..", ".hidden", "~home", "a\\b", "a b", "x\ny", "", "é", "a" * 101]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder three deep in `tmp_path` with a playbook `default` of one entry, no settings file."""
    work = tmp_path / "deep" / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    monkeypatch.delenv("PLAYBOOK_PLAYBOOK", raising=False)
    monkeypatch.setenv("PLAYBOOK_DB", str(tmp_path / "p.duckdb"))
    book = tmp_path / "book.json"
    entries = [{"name": "pat-001", "text": "Run the tests with `make test`.", "helpful": 2}]
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    assert runner.invoke(app, ["import", str(book)]).exit_code == 0
    return tmp_path


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() and not p.name.startswith("p.duckdb")}


@pytest.mark.parametrize("name", BAD)
def test_a_name_that_is_no_plain_name_is_refused_by_every_way_in(
    here: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    victim = here / "victim"
    victim.mkdir()
    (victim / "CLAUDE.md").write_text("# Victim\nhand-written only copy\n")
    before = _files(here)
    book = str(here / "book.json")
    calls = [["new", name], ["import", book, "-p", name], ["publish", "-p", name], ["export", "-p", name]]
    for args in calls:
        done = runner.invoke(app, args)
        assert done.exit_code == 1, (args, done.output)
        (line,) = done.stderr.strip().splitlines()
        assert "not a playbook name" in line and "Traceback" not in done.output
    monkeypatch.setenv("PLAYBOOK_PLAYBOOK", name)
    for args in (["import", book], ["publish"]):
        done = runner.invoke(app, args)
        assert done.exit_code == 1 and "in PLAYBOOK_PLAYBOOK" in done.stderr, done.output
    assert _files(here) == before  # nothing written anywhere, the hand-written file untouched


def test_a_name_in_the_users_own_config_is_checked_too(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = here / "home" / "playbook"
    own.mkdir(parents=True)
    (own / "config.toml").write_text('playbooks = ["default", "../up"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(here / "home"))
    done = runner.invoke(app, ["publish"])
    assert done.exit_code == 1 and "playbooks" in done.stderr and "not a playbook name" in done.stderr


def test_a_plain_name_is_admitted(here: Path) -> None:
    assert runner.invoke(app, ["new", "team-2.x_1"]).exit_code == 0
    done = runner.invoke(app, ["publish", "-p", "default", "--json"])
    assert done.exit_code == 0, done.output
    assert (here / "deep" / "a" / "b" / "data" / "out" / "default.md").is_file()


def test_the_own_files_of_a_name_a_caller_did_not_check_are_refused(here: Path) -> None:
    """Defence in depth: `own_files` builds `<out_dir>/<name>.*` itself, whoever calls it."""
    from flows.config import load_settings

    ws = Workspace.of(load_settings())
    out = here / "x" / "y" / "out"
    results = own_files(ws.database(), ExportRules(playbook="../../escaped"), out)
    assert [r.status for r in results] == ["refused", "refused"]
    assert not (here / "x").exists()  # neither out_dir nor x/escaped.md


@given(st.text(max_size=40))
def test_an_admitted_name_is_always_one_file_name_in_its_folder(name: str) -> None:
    if is_playbook_name(name):
        folder = Path("/srv/out")
        assert (folder / f"{name}.md").parent == folder
        assert os.path.normpath(folder / f"{name}.md") == str(folder / f"{name}.md")
        assert not name.startswith(("-", ".")) and "/" not in name
