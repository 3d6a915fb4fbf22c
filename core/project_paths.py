"""Which paths a lesson's command may name and write: inside the project, no dotfile but the project's own, and
text written only as plain data.

A path that leaves the project (absolute, home, `..`) or names someone's credentials or the machine's setup
(`.ssh`, `.npmrc`) is no lesson's business; a file a command writes is data, since the next command may run what
it wrote (a script, a configuration, a hook, an agent's instructions).
"""

from __future__ import annotations

from pathlib import PurePosixPath

import re2

from core.program_calls import clip

__all__ = ["BUILD_FOLDERS", "PROJECT_DOTFILES", "path_problem", "write_problem"]

# Folders a build makes and a clean removes: `rm -rf` may name these and nothing else.
BUILD_FOLDERS = frozenset(
    "node_modules dist build target _build deps .venv venv __pycache__ .pytest_cache .mypy_cache .ruff_cache"
    " coverage htmlcov .coverage .next .nuxt .svelte-kit .turbo .parcel-cache .cache out tmp .tox .nox .gradle"
    " bin obj .eggs site public/build storybook-static".split()
)
# Dotfiles and dot-folders a project keeps and a command may name (the allow-list; `.netrc`, `.npmrc`, `.ssh` and
# every other dotfile are not on it, since what they hold is someone's credentials or the machine's own setup; nor
# are `.git`, `.claude`, `.vscode` and their kin, whose hooks, settings and tasks run commands).
PROJECT_DOTFILES = frozenset(
    (
        ".gitignore .gitattributes .gitmodules .gitkeep .github .gitlab-ci.yml .gitlab .mailmap .nvmrc .node-version"
        " .python-version .ruby-version .tool-versions .editorconfig .prettierrc .prettierrc.json .prettierrc.js"
        " .prettierrc.yml .prettierrc.yaml .prettierignore .eslintrc .eslintrc.js .eslintrc.cjs .eslintrc.json"
        " .eslintrc.yml .eslintrc.yaml .eslintignore .stylelintrc .stylelintrc.json .babelrc .babelrc.json"
        " .browserslistrc .dockerignore .pre-commit-config.yaml .flake8 .pylintrc .coveragerc .ruff.toml"
        " .rustfmt.toml .formatter.exs .credo.exs .iex.exs .rspec .rubocop.yml .rubocop_todo.yml .clang-format"
        " .clang-tidy .env.example .env.sample .env.template .husky .changeset .storybook .well-known .yarnrc.yml"
        " .yarn .swcrc .mocharc.json .nycrc .jshintrc .markdownlint.json .yamllint .hadolint.yaml .golangci.yml"
        " .golangci.yaml .goreleaser.yml .cargo .circleci .buildkite .vercelignore .terraform-version .sqlfluff"
        " .envrc.example .mise.toml .sdkmanrc .mvn .swiftlint.yml .venv .tox .nox .pytest_cache .mypy_cache"
        " .ruff_cache .next .nuxt .svelte-kit .turbo .parcel-cache .cache .gradle .eggs .coverage .bin .DS_Store"
    ).split()
) | {".", ".."}
# Files a tool runs or reads as its configuration: a command that writes one changes what the next run does.
_CONFIG_FILES = frozenset(
    "makefile gnumakefile package.json pyproject.toml setup.py setup.cfg conftest.py tox.ini noxfile.py cargo.toml"
    " build.rs go.mod build.gradle build.gradle.kts settings.gradle pom.xml gemfile rakefile mix.exs justfile"
    " dockerfile docker-compose.yml docker-compose.yaml compose.yml compose.yaml taskfile.yml taskfile.yaml"
    " .envrc manage.py vite.config.ts vite.config.js webpack.config.js jest.config.js vitest.config.ts".split()
)
# Files every agent session loads as its instructions: a command that writes one speaks to every later session
# unscreened (their folders, `.claude/`, `.cursor/`, `.github/`, are dotfiles, refused already).
_INSTRUCTION_FILES = frozenset(
    "claude.md claude.local.md agents.md agents.override.md agent.md gemini.md copilot-instructions.md conventions.md"
    " .cursorrules .windsurfrules .clinerules .goosehints .rules".split()
)
# Folders of installed packages: what is written there is imported by the project's tools and tests.
_IMPORTED_FOLDERS = frozenset("node_modules venv .venv site-packages dist-packages vendor deps _build".split())
# Files ending like data that a tool reads as what to build, install or run.
_RUN_DATA_NAMES = frozenset(
    "cmakelists.txt composer.json deno.json deno.jsonc nx.json project.json turbo.json lerna.json angular.json"
    " jsconfig.json app.json biome.json firebase.json vercel.json renovate.json runtime.txt pubspec.yaml"
    " .pre-commit-config.yaml manifest.json".split()
)
# What a command may write text into: data, which nothing runs.
_DATA_SUFFIXES = frozenset(
    ".txt .log .md .csv .tsv .out .json .html .xml .svg .png .jpg .jpeg .gif .pdf .diff .patch .snap .bak .tmp".split()
)
# Names of dependency lists, lockfiles and configurations beside _CONFIG_FILES: writing one changes what runs next.
_CONFIG_NAME = re2.compile(
    r"^(?:[\w.-]*requirements[\w.-]*\.txt|[\w.-]*constraints[\w.-]*\.txt|[\w.-]*\.lock|[\w.-]*lock\.ya?ml|package-lock\.json"
    r"|go\.sum|pipfile|gemfile[\w.]*|(?:docker-)?compose[\w.-]*\.ya?ml|[\w.-]*config\.[a-z]+|[\w.-]*rc(?:\.\w+)?"
    r"|tsconfig[\w.-]*\.json|[\w.-]*\.toml|[\w.-]*\.cfg|[\w.-]*\.ini)$"
)
_HOME = re2.compile(r"^(?:~|\$HOME\b|\$\{HOME\}|%USERPROFILE%|%APPDATA%)")
_DRIVE = re2.compile(r"^[A-Za-z]:[\\/]")
_NAMES_DEVICE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_PLACEHOLDERS = ("...", "…")


def path_problem(word: str, *, mention: bool = False) -> str | None:
    """What is wrong with a path that leaves the project (absolute, home, `..`, a glob included) or names a dotfile
    that is not a project file (`mention`: named in prose or a span of its own, where `.env`, `.git/` or `.tsx`
    files may be named); None for anything else (a relative path inside the project, or a word that is no path)."""
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    value = value.removeprefix("@")  # curl's `-d @file`
    if not value or value in _NAMES_DEVICE or value in _PLACEHOLDERS:  # a device, or a placeholder
        return None
    if value.startswith("/") or _HOME.match(value) or _DRIVE.match(value) or value.startswith("\\\\"):
        return f"`{clip(value, 60)}` is outside the project"
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if ".." in parts:
        return f"`{clip(value, 60)}` climbs out of the folder with `..`"
    if mention:  # named, not opened: a dotfile may be named (`.env`, `.tsx` files); a credential store is the
        return None  # second line's (`core.phrases`)
    for part in parts:
        if part in _PLACEHOLDERS or not part.startswith("."):
            continue
        low = part.lower()  # macOS and Windows read `.GIT` as `.git`
        if low in PROJECT_DOTFILES:
            continue
        return f"`{clip(value, 60)}` names `{part}`, which is no project file lessons may name"
    return None


def write_problem(target: str, *, content: bool = True, artefact: bool = False) -> str | None:
    """What is wrong with a file a command writes (`content`: with text of its choosing; else it only creates, removes
    or changes the mode): outside the project, a dotfile or hook of any kind, a file a tool runs as its
    configuration, a program folder (`bin/`, `.venv/bin`), an agent's instructions (`CLAUDE.md`), or, for content,
    anything but plain data (a log, a text, a report), except a compiler's output (`artefact`) in a build folder: a
    source file, a script, a dependency list would run what was written."""
    refused = path_problem(target)
    if refused is not None:
        return refused
    parts = [p.lower() for p in PurePosixPath(target.replace("\\", "/")).parts]
    if any(p.startswith(".") and p not in (".", "..") for p in parts):
        return f"writes `{clip(target, 60)}`, a dotfile a tool reads as settings or hooks"
    name = parts[-1] if parts else ""
    if name in _CONFIG_FILES or name.endswith(".mk") or _CONFIG_NAME.search(name):
        return f"writes `{clip(target, 60)}`, a file a tool runs as its configuration"
    if "bin" in parts[:-1] or "hooks" in parts[:-1]:
        return f"writes `{clip(target, 60)}`, into a folder of programs or hooks"
    if name in _INSTRUCTION_FILES:
        return f"writes `{clip(target, 60)}`, which every agent session loads as its instructions"
    if content and (set(parts[:-1]) & _IMPORTED_FOLDERS or name.endswith(".pth")):
        return f"writes `{clip(target, 60)}`, code that installed packages import"
    if (content and parts[:1] == ["requirements"]) or name in _RUN_DATA_NAMES:
        return f"writes `{clip(target, 60)}`, a file a tool reads as what to build or install"
    # A compiler's or a download's output (`-o build/app`) may be anything in a build folder; text of the command's
    # choosing (a redirection, `tee`, `cp`) is data wherever it goes, since the next command may run what it wrote.
    anywhere = artefact and bool(set(parts[:-1]) & BUILD_FOLDERS)
    if content and not anywhere and PurePosixPath(name).suffix not in _DATA_SUFFIXES:
        return f"writes `{clip(target, 60)}`: a file lessons may write is plain data (a log, a report)"
    return None
