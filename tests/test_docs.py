"""Docs are tested: every command has help with an example and a README mention; README SQL runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.models import CuratorOutput, ReflectorOutput
from core.operations import apply_session
from core.store.db import connect
from core.store.playbooks import ensure_playbook, load_version, write_version
from flows.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(c.name or "" for c in app.registered_commands)


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
