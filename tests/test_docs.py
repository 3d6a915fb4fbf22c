"""Docs are tested: the README is short and opens with the two commands; every command has help with an example
and a mention in the docs; the generated pages (CLI, settings, layout) are current; the analytics SQL runs; the
site builds with strict link checks."""

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
DOCS = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}
COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]


def test_the_command_line_has_every_command() -> None:
    assert len(COMMANDS) == 37
    assert {"curate", "nightly", "review", "publish", "doctor", "sql", "replay", "revalidate"} <= set(COMMANDS)


def test_readme_opens_with_the_two_commands() -> None:
    head = README.split("\n## ")[0]
    assert "make demo" in head and "make test" in head


def test_the_readme_fits_on_a_few_screens_and_points_to_the_docs() -> None:
    assert len(README.splitlines()) <= 120 and len(README.encode()) <= 8_000
    for page in re.findall(r"\]\(docs/([\w.-]+\.md)\)", README):
        assert page in DOCS, f"the README links to a page that does not exist: docs/{page}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_example_and_a_docs_entry(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout, f"`playbook {command} --help` has no example"
    written = README + "".join(text for name, text in DOCS.items() if name != "cli.md")
    assert f"playbook {command}" in written, f"no page but the generated reference mentions `playbook {command}`"
    assert f"## playbook {command}\n" in DOCS["cli.md"], "run `python docs/reference.py --write`"


def test_the_generated_reference_pages_are_current_and_every_setting_is_documented() -> None:
    import runpy

    reference = runpy.run_path(str(ROOT / "docs" / "reference.py"))
    assert reference["cli_page"]() == DOCS["cli.md"], "run `python docs/reference.py --write`"
    table = reference["settings_table"]()
    page = DOCS["configuration.md"]
    assert reference["page_with"](table, page) == page, "run `python docs/reference.py --write`"
    from flows.config import Settings

    rows = {line.split("|")[1].strip(" `"): line for line in table.splitlines()[2:]}
    assert set(rows) == set(Settings.model_fields)
    undocumented = [name for name, line in rows.items() if line.rstrip().endswith("|  |")]
    assert undocumented == [], f"settings with nothing said of them (comment them in flows/config.py): {undocumented}"


@pytest.mark.slow
def test_the_site_builds_with_strict_link_checks(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "cli" / "index.html").is_file()


def test_the_analytics_sql_runs(tmp_path: Path) -> None:
    con = connect(tmp_path / "docs.duckdb")
    ensure_playbook(con, "default")
    current = load_version(con, "default")
    for i in range(13):
        ops = [{"type": "ADD", "text": f"lesson {i}"}, {"type": "DELETE", "target_id": "ghost"}]
        current, report = apply_session(current, ReflectorOutput(), CuratorOutput(operations=ops))
        write_version(con, "default", current, source="session", session_id=f"s{i}", report=report)
    block = DOCS["analytics.md"].split("```sql", 1)[1].split("```", 1)[0]
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
def test_the_layout_page_is_the_tree() -> None:
    """docs/layout.md is what docs/layout.py generates from the modules now (run it with --write)."""
    import runpy

    layout = runpy.run_path(str(ROOT / "docs" / "layout.py"))
    page = DOCS["layout.md"]
    assert layout["too_long"]() == [], "shorten the first sentence of these modules' docstrings"
    assert layout["readme_with"](layout["layout"](), page) == page, "run `python docs/layout.py --write`"
    for package in ("core", "flows"):
        for path in (ROOT / package).rglob("*.py"):
            if path.name != "__init__.py":
                assert f"  {path.name}" in page, f"the Layout page misses {path.relative_to(ROOT)}"


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    """Every command of the CLI with the words that run it, subcommands of groups included."""
    found: list[tuple[tuple[str, ...], object]] = []
    for name, command in sorted(getattr(group, "commands", {}).items()):
        found += [((*path, name), command), *_commands(command, (*path, name))]
    return found


# A TOML table name (`[playbook_settings.NAME]`, `[mcp_servers.playbook]`), escaped or not in the source text.
_TABLE = re.compile(r"\\*\[([A-Za-z_][\w-]*(?:\.[\w.-]+)+)\]")


@pytest.mark.parametrize("path", [p for p, c in _commands(get_command(app)) if _TABLE.search(repr(vars(c)))])
def test_the_help_shows_every_toml_table_name_it_is_written_with(path: tuple[str, ...]) -> None:
    """atk10: rich markup read `[playbook_settings.default]` as a style: the help said "under `` in playbook.toml"."""
    command = dict(_commands(get_command(app)))[path]
    texts = [getattr(command, "help", None) or "", *(getattr(p, "help", None) or "" for p in command.params)]  # type: ignore[attr-defined]
    tables = {m.group(1) for text in texts for m in _TABLE.finditer(text)}
    assert tables, path
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300"})
    assert shown.exit_code == 0
    for table in tables:
        assert f"[{table}]" in shown.stdout, f"`playbook {' '.join(path)} --help` lost [{table}] to markup"
