"""The layer rules, checked: core/ imports no shell, the run loop needs no Prefect, no SQL in flows/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BANNED = {"prefect", "flows", "typer", "rich"}


@pytest.mark.parametrize("path", sorted((ROOT / "core").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_imports_no_shell(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            assert name.split(".")[0] not in BANNED, f"{path.relative_to(ROOT)} imports {name}"


def test_run_loop_and_cli_import_no_prefect() -> None:
    """The run loop, its steps and the CLI's start-up are read and run without Prefect (fast `--help`)."""
    import subprocess
    import sys

    code = "import sys, flows.runs, flows.steps, flows.cli; print(sorted(m for m in sys.modules if m.startswith('prefect')))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_no_sql_in_the_shell() -> None:
    """Queries live in core/store; flows/ only sequences them."""
    import re

    for path in sorted((ROOT / "flows").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            assert not re.search(r"\b(SELECT|INSERT INTO|DELETE FROM|UPDATE [a-z_]+ SET)\b", line), (
                f"{path.relative_to(ROOT)}:{number} has SQL: {line.strip()}"
            )
