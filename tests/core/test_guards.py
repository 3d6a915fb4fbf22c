"""Guards are compiled from the typed lesson an entry was written from, and only while its text is what that lesson
renders: a model's free text or a reworded entry makes none."""

from __future__ import annotations

import json
from pathlib import Path

from core.guards import bound_lesson, guards_of, lesson_json
from core.hooks import fires
from core.lessons import Command, CommandFact, Correction, NothingSelected, OwnTool, render
from core.replay import Event, hook_input
from flows.delivery.hookrun import answer, snapshot_path

NPM = Correction(how="program", failed=Command(words=("npm", "install")), worked=Command(words=("pnpm", "install")))


def test_a_lesson_is_bound_only_to_the_text_it_renders() -> None:
    text = render(NPM, "api")
    assert bound_lesson(NPM.model_dump(), text) == NPM
    assert bound_lesson(lesson_json(NPM), text) == NPM
    assert bound_lesson(NPM.model_dump(), text.replace("works", "is better")) is None  # reworded by an UPDATE
    assert bound_lesson(None, text) is None and bound_lesson({"kind": "correction"}, text) is None
    assert bound_lesson("not json", text) is None


def test_each_command_lesson_compiles_to_guards_that_fire_on_its_command() -> None:
    (npm,) = guards_of(NPM, playbook="default", entry="mis-001", text=render(NPM, None), hard=True)
    assert (
        npm.hard
        and fires(npm.model_dump(), "npm install lodash", "/src")
        and not fires(npm.model_dump(), "pnpm i", "/")
    )
    fact = CommandFact(category="test", command=Command(words=("uv", "run", "pytest")))
    bare = guards_of(fact, playbook="default", entry="ctx-001", text=render(fact, None), hard=True)
    assert [g.words for g in bare] == [("pytest",), ("python", "-m", "pytest"), ("python3", "-m", "pytest")]
    assert not any(g.hard for g in bare)  # advice, never a refusal
    assert fires(bare[0].model_dump(), "pytest -q", "/") and not fires(bare[0].model_dump(), "uv run pytest", "/")
    unit = NothingSelected(command=Command(words=("uv", "run", "pytest", "-m", "unit")), selector="-m unit")
    (g,) = guards_of(unit, playbook="default", entry="mis-002", text=render(unit, None))
    assert fires(g.model_dump(), "uv run pytest tests -m unit", "/") and not fires(g.model_dump(), "uv run pytest", "/")
    folder = Correction(
        how="folder",
        failed=Command(words=("node", "build.js")),
        worked=Command(words=("node", "build.js"), folder="assets"),
    )
    (g,) = guards_of(folder, playbook="default", entry="mis-003", text=render(folder, None))
    assert fires(g.model_dump(), "node build.js", "/src/app") and not fires(
        g.model_dump(), "node build.js", "/src/app/assets"
    )
    assert guards_of(OwnTool(program="bd"), playbook="default", entry="ctx-005", text="x") == []
    plain = CommandFact(category="test", command=Command(words=("mix", "test")))
    assert guards_of(plain, playbook="default", entry="ctx-006", text="x") == []  # nothing to run instead


def test_another_package_manager_s_form_of_the_project_s_command_sets_off_its_guard() -> None:
    fact = CommandFact(category="install", command=Command(words=("pnpm", "install")))
    guards = guards_of(fact, playbook="default", entry="ctx-001", text=render(fact, "web"))
    assert sorted(g.words for g in guards) == [("bun", "install"), ("npm", "install"), ("yarn", "install")]
    assert any(fires(g.model_dump(), "npm install --save x", "/") for g in guards)
    assert not any(fires(g.model_dump(), "pnpm install", "/") for g in guards)
    assert not any(g.refusable for g in guards)  # the project's fact, not a command seen failing: advice only


YAML = Correction(
    how="module", failed=Command(words=("python3",)), worked=Command(words=("uv", "run", "python3")), modules=("yaml",)
)


def test_a_module_fact_guards_only_the_calls_that_can_need_the_module(tmp_path: Path) -> None:
    """`python3` lacked `yaml` here: the PreToolUse hook, given Claude Code's documented input, adds the lesson to a
    call whose code imports it (or any package outside the standard library) or that runs one of the project's
    files; a call of the standard library alone, a scratch script, the form the lesson asks for, or code that cannot
    run gets nothing."""
    text = render(YAML, "wakil")
    assert text == (
        "In wakil: `python3` lacks the project's packages (`yaml`); run code that imports them with `uv run python3`."
    )
    assert bound_lesson(lesson_json(YAML), text) == YAML
    (guard,) = guards_of(YAML, playbook="default", entry="mis-001", text=text, hard=True)
    assert not guard.hard  # which calls need the packages the hook can tell only in part: advice, never a refusal
    db = tmp_path / "playbook.duckdb"
    path = snapshot_path(db, "guards")
    path.parent.mkdir(parents=True)
    playbook = {"name": "default", "version": 1, "projects": {}, "guards": [guard.model_dump(mode="json")]}
    path.write_text(json.dumps({"holdout": 0.0, "playbooks": [playbook]}))

    def told(command: str) -> str:
        printed = answer("pre-tool-use", db, json.dumps(hook_input(Event("bash", command), "s-1", "/src/wakil")))
        return str(json.loads(printed)["hookSpecificOutput"]["additionalContext"]) if printed else ""

    for command in [
        "python3 -c \"import yaml; print(yaml.safe_load('a: 1'))\"",
        "python3 -c 'from yaml import safe_load'",
        "python3 - <<'EOF'\nimport re, yaml.parser\nEOF",
        "cd src && python3 -c 'import wakil.cli'",  # the project's own package may import it
        "python3 -m pytest -q",
        "python3 scripts/gen.py",  # a file of the project's
        "cat notes.py | python3",  # what it runs cannot be seen
    ]:
        assert "[mis-001]" in told(command) and "`uv run python3`" in told(command), command
    for command in [
        "python3 -c \"import json; json.load(open('x.json'))\" && echo valid",
        "python3 - <<'EOF'\nimport pathlib\nprint(pathlib.Path('a').exists())\nEOF\nnpx markdownlint-cli2 x.md",
        "python3 -m json.tool data.json",
        "cd /tmp/scratch && python3 scan.py",  # the agent's scratch script, outside the project
        "python3 /tmp/scratch/scan.py",
        "python3 --version",
        "uv run python3 -c 'import yaml'",  # the form the lesson asks for
        "python3 -c 'import yaml as'",  # it cannot run: nothing to need
        "echo import yaml",
    ]:
        assert told(command) == "", command
