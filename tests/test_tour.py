"""The tours are run as written: every command line of the README's tour and of docs/tour.md, in a shell, after
`make demo`'s own command on a fresh copy of the bundled samples, with a home folder that has Claude Code
sessions and no key, no logged-in `claude` or `codex`, no model server. A line whose comment says `needs: X`
gets X first (a file, a terminal's answers), or, for a key, must fail in one line that names it."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, SAMPLES

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent


def _blocks(text: str) -> list[str]:
    """The command lines of the fenced blocks that hold `playbook` commands, comments and all."""
    lines = []
    for block in re.findall(r"^```\n(.*?)^```", text, flags=re.S | re.M):
        lines += [line for line in block.splitlines() if line.startswith("playbook ")]
    return lines


def _tour_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = (ROOT / "docs" / "tour.md").read_text(encoding="utf-8")
    return list(dict.fromkeys(_blocks(readme.split("## A ten-line tour")[1].split("\n## ")[0]) + _blocks(tour)))


def _demo_command() -> list[str]:
    """`make demo`'s run, as the Makefile gives it."""
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8").split("\ndemo:")[1]
    line = next(row for row in recipe.splitlines() if "bin/playbook nightly" in row)
    words = shlex.split(line.replace("$(VENV)/bin/", "").replace("$(DEMO_DB)", "data/playbook.duckdb"))
    return [str(BIN / words[0]), *words[1:]]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A folder after `make demo` (its database, exports and report), and the environment of a new user."""
    where = tmp_path_factory.mktemp("tour")
    shutil.copytree(SAMPLES, where / "data" / "samples")
    home = where / "home"
    own = home / ".claude" / "projects" / "-home-me-src-app"
    own.mkdir(parents=True)
    first = sorted((SAMPLES / "claude-code").rglob("*.jsonl"))[0]
    shutil.copy(first, own / first.name)
    keep = {"LANG", "LC_ALL", "TZ", "TMPDIR", "UV_CACHE_DIR"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env |= {"HOME": str(home), "PATH": f"{BIN}:/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run(_demo_command(), cwd=where, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return where, env


def _needs(line: str) -> str | None:
    found = re.search(r"#.*\bneeds: ([^;()]+)", line)
    return found.group(1).strip() if found else None


LINES = _tour_lines()


def test_the_tours_have_the_lines_they_promise() -> None:
    assert len(LINES) >= 40 and all(line.startswith("playbook ") for line in LINES)


@pytest.mark.parametrize("line", LINES, ids=[line.split("#")[0].strip()[:60] for line in LINES])
def test_every_tour_line_works_as_written(line: str, demo: tuple[Path, dict[str, str]]) -> None:
    where, env = demo
    command, needs, stdin = line.split("  #")[0].strip(), _needs(line), ""
    if needs == "the local-llm extra":
        pytest.skip("a server that runs until Ctrl-C; the slow lane starts it in tests/flows/test_real_llm.py")
    if needs == "ANTHROPIC_API_KEY":
        done = subprocess.run(["bash", "-c", command], cwd=where, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and "ANTHROPIC_API_KEY" in done.stderr, done.stderr
        return
    if needs is not None and needs.startswith("a playbook.toml"):
        (where / "playbook.toml").write_text('llm = "heuristic"\nmax_entries = 60\n', encoding="utf-8")
    elif needs is not None and needs.startswith("a hook-script playbook"):
        entry = {"name": "pat-900", "text": "Run the tests with `make test`.", "helpful": 1}
        book = {"version": "1.0", "sections": {"PATTERNS & APPROACHES": [entry]}}
        (Path(env["HOME"]) / ".claude" / "playbook.json").write_text(json.dumps(book), encoding="utf-8")
    elif needs == "a terminal":  # a reviewer approving each pending change, then confirming
        listed = subprocess.run(
            ["playbook", "review", "--json"], cwd=where, env=env, capture_output=True, text=True, timeout=120
        )
        stdin = "a\n" * len(json.loads(listed.stdout)["pending"]) + "y\n"
    else:
        assert needs is None, f"the test does not know how to give `{needs}`"
    done = subprocess.run(
        ["bash", "-c", command], cwd=where, env=env, input=stdin, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
