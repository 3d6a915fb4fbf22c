"""Guards are compiled from the typed lesson an entry was written from, and only while its text is what that lesson
renders: a model's free text or a reworded entry makes none."""

from __future__ import annotations

from core.guards import bound_lesson, guards_of, lesson_json
from core.hooks import fires
from core.lessons import Command, CommandFact, Correction, NothingSelected, OwnTool, render

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
