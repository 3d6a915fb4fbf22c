"""Docs are tested: every command has help with an example and a README mention; README SQL runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from core.models import CuratorOutput, ReflectorOutput
from core.operations import apply_session
from core.store.db import connect
from core.store.registry import ensure_playbook
from core.store.versions import load_version, write_version
from flows.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]


def test_the_command_line_has_every_command() -> None:
    assert len(COMMANDS) == 33 and {"curate", "nightly", "review", "publish", "doctor", "sql"} <= set(COMMANDS)


def test_readme_opens_with_the_two_commands() -> None:
    head = README.split("\n## ")[0]
    assert "make demo" in head and "make test" in head


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_example_and_readme_entry(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout, f"`playbook {command} --help` has no example"
    assert f"playbook {command}" in README, f"README does not mention `playbook {command}`"


def test_readme_sql_runs(tmp_path: Path) -> None:
    con = connect(tmp_path / "docs.duckdb")
    ensure_playbook(con, "default")
    current = load_version(con, "default")
    for i in range(13):
        ops = [{"type": "ADD", "text": f"lesson {i}"}, {"type": "DELETE", "target_id": "ghost"}]
        current, report = apply_session(current, ReflectorOutput(), CuratorOutput(operations=ops))
        write_version(con, "default", current, source="session", session_id=f"s{i}", report=report)
    block = README.split("```sql", 1)[1].split("```", 1)[0]
    statements = [s.strip() for s in block.split(";") if re.sub(r"--.*", "", s).strip()]
    assert len(statements) >= 5
    for sql in statements:
        con.execute(sql).fetchall()
    rows = con.execute("SELECT count(*) FROM playbook_at('default', 12)").fetchone()
    assert rows == (12,)
    con.close()


def test_no_text_cites_what_a_reader_here_cannot_open() -> None:
    """Comments and docs state a rule in words: no requirement ids of the seeds, no seed numbers, no design
    document (none of them ships with the repository)."""
    cited = re.compile(r"\b(REQ|CON|SCN|INV|OBS)-[A-Z]+-\d{3}|\bseeds? \d{3}|\bseed \d{3}_|DESIGN\.md")
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "prompts").glob("*.txt")]
    for folder in ("core", "flows", "bench", "tests"):
        files += [p for p in (ROOT / folder).rglob("*.py")]
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if path.name != "test_docs.py" or "cited = " not in line:  # the pattern itself
                assert not cited.search(line), f"{path.relative_to(ROOT)}:{number} cites: {line.strip()}"


@pytest.mark.slow
def test_readme_layout_is_the_tree() -> None:
    """The README's Layout is what docs/layout.py generates from the modules now (run it with --write)."""
    import runpy

    layout = runpy.run_path(str(ROOT / "docs" / "layout.py"))
    assert layout["too_long"]() == [], "shorten the first sentence of these modules' docstrings"
    assert layout["readme_with"](layout["layout"](), README) == README, "run `python docs/layout.py --write`"
    for package in ("core", "flows"):
        for path in (ROOT / package).rglob("*.py"):
            if path.name != "__init__.py":
                assert f"  {path.name}" in README, f"the README's Layout misses {path.relative_to(ROOT)}"
