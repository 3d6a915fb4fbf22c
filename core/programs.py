"""The programs a lesson may tell an agent to run, and how each may be run.

The vocabulary of the allow-list (`core.allowlist`): which programs are known toolchains, local utilities,
filters a pipe may feed, interpreters and wrappers, and for the programs that can install, publish, reach the
network or run code through their own options (git, package managers, interpreters, curl, make, ...), which of
their subcommands and options are admitted. Each policy is a pure function of the command's words that says what
it refuses; anything a policy does not know for a program that has one is refused, not guessed. Long options are
matched with the abbreviations their parsers accept (`git push --forc` is `--force`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

import re2

__all__ = [
    "FILTERS",
    "INTERPRETERS",
    "PRIVILEGE",
    "RUNS_ANYTHING",
    "SHELLS",
    "TASK_NAME",
    "Call",
    "known_program",
    "policy_refusals",
    "program_family",
    "wrapped_command",
]

JS_TOOLS = frozenset(
    "tsc tsx ts-node vitest jest mocha ava eslint prettier biome vite next nuxt webpack webpack-cli esbuild rollup"
    " parcel turbo nx lerna playwright cypress storybook astro svelte-kit ng vue-cli-service expo react-native"
    " tailwindcss postcss stylelint changeset".split()
)
TOOLCHAIN = JS_TOOLS | frozenset(
    # Python
    "python pip uv uvx poetry pdm hatch pipenv rye pytest py.test tox nox ruff black isort flake8 pylint mypy"
    " pyright basedpyright coverage pre-commit sphinx-build mkdocs alembic django-admin uvicorn gunicorn flask"
    " ipython jupyter maturin"
    # JavaScript runtimes and package managers
    " node npm npx pnpm pnpx yarn bun bunx deno"
    # Rust, Go, Elixir, Erlang, Ruby, JVM, .NET, PHP, Swift, Dart, Zig
    " cargo rustc rustup rustfmt cargo-clippy wasm-pack trunk go gofmt goimports golangci-lint staticcheck gotestsum"
    " mix elixir iex erl rebar3 ruby bundle bundler rake rspec rails rubocop java javac mvn mvnw gradle gradlew"
    " kotlinc sbt dotnet php composer phpunit artisan swift swiftc xcodebuild flutter dart zig"
    # C and C++, build systems, linters of anything, version managers, containers for a project's services
    " make gmake cmake ctest ninja meson bazel bazelisk just task gcc g++ cc c++ clang clang++ clang-format"
    " clang-tidy shellcheck shfmt hadolint actionlint yamllint markdownlint vale git gh nvm fnm volta asdf mise"
    " pyenv rbenv corepack docker docker-compose buf protoc".split()
)
# Local file utilities: they read and write what they are given, which the path rules keep inside the project.
UTILITIES = frozenset(
    "ls cat head tail grep egrep fgrep rg ag find fd wc sort uniq diff cmp echo printf pwd which type tree stat file"
    " du df jq yq less more cut tr basename dirname realpath readlink date true false sleep touch mkdir rmdir"
    " cp mv rm ln chmod cd time timeout column nl fold tee comm paste od hexdump xxd sha256sum shasum md5sum"
    " uname whoami hostname nproc lsof ps pgrep curl".split()
)
# Programs a pipe may feed: they only transform the text they read.
FILTERS = frozenset(
    "head tail grep egrep fgrep rg wc sort uniq cut tr jq yq less more column nl fold tee cat comm paste od"
    " hexdump xxd sha256sum shasum md5sum".split()
)
PRIVILEGE = frozenset("sudo doas su pkexec runas gsudo sudo-rs".split())
# Programs whose whole job is to run another command or code they are given.
RUNS_ANYTHING = frozenset("eval exec source xargs env nohup command builtin trap watch nice stdbuf setsid".split())
SHELLS = frozenset("bash sh zsh dash fish ksh csh tcsh pwsh powershell cmd".split())
INTERPRETERS = (
    frozenset("python node ruby perl php deno bun elixir iex erl lua ipython ts-node tsx kotlinc".split()) | SHELLS
)
KNOWN = TOOLCHAIN | UTILITIES | FILTERS | PRIVILEGE | RUNS_ANYTHING | INTERPRETERS
_VERSIONED = re2.compile(r"^(python|pip|ruby|node|perl|php|lua)(\d+(?:\.\d+)*)?$")
_PACKAGE_AT_VERSION = re2.compile(r"^@?[A-Za-z0-9._/-]+@[A-Za-z0-9^~<>=.*+-]+$")
_SCRIPT_FILE = re2.compile(r"^[^-].*\.(?:py|pyw|js|mjs|cjs|ts|mts|cts|jsx|tsx|rb|pl|php|sh|bash|zsh|exs|ex|lua)$")
_VERSION_WORD = re2.compile(r"^(?:v?\d+(?:\.\d+)*|lts(?:/\w+)?|latest|system|node|stable)$")


@lru_cache(maxsize=4096)  # every word of a sentence is asked whether it names a program
def program_family(program: str) -> str:
    """The name a program is judged by: its file name, versions folded (`python3.12` -> `python`)."""
    name = PurePosixPath(program).name if "/" in program else program
    match = _VERSIONED.match(name)
    return match.group(1) if match else {"pip3": "pip", "gmake": "make"}.get(name, name)


def known_program(name: str) -> bool:
    """True when `name` is a program the allow-list knows of, to run or to refuse."""
    return program_family(name) in KNOWN


@dataclass(frozen=True)
class Call:
    """One program's call, as a policy sees it: its family, its arguments, the programs the user and the projects
    vouch for (which it may run), and the packages the projects declare (which it may install or fetch)."""

    family: str
    args: tuple[str, ...]
    vouched: frozenset[str]
    packages: frozenset[str] = frozenset()

    def positionals(self) -> list[str]:
        """The arguments that are neither flags nor a value-taking flag's value."""
        return positionals(self.args, self.family)


# Flags whose next word is their value (so a value is not read as a subcommand, a package or a path on its own):
# those most programs share, and each family's own where it differs (`npm -d` takes none; `pip -r` takes a file).
_VALUE_FLAGS = frozenset(
    "-C --cwd --prefix --directory --project --manifest-path -o --output -k --env-file --filter --workspace"
    " --features -j --jobs --reason --status --title --body --body-file -R --repo --label --assignee --base --head"
    " -b --branch --maxfail --tb --count --timeout --log-level --grep --shard --project-name -I --init-script"
    " -m --config --target --python --with --with-editable --with-requirements --extra --group --package".split()
)
_FAMILY_VALUE_FLAGS: dict[str, frozenset[str]] = {
    "pip": frozenset(
        "-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url -f --find-links -t --target"
        " --prefix --root --src --python".split()
    ),
    "uv": frozenset(
        "-p --python --with --with-editable --with-requirements --env-file --directory --project --extra --group"
        " --package -r --requirement -c --constraint -e --editable -i --index-url --index --extra-index-url".split()
    ),
    "npm": frozenset("-w --workspace --prefix -C".split()),
    "pnpm": frozenset("-F --filter -C --dir --workspace".split()),
    "yarn": frozenset("--cwd --workspace".split()),
    "bun": frozenset("--cwd --filter".split()),
    "curl": frozenset(
        "-X --request -H --header -o --output -w --write-out -m --max-time --connect-timeout -d --data --data-raw"
        " --data-binary --json -A --user-agent -u --user -x --proxy -T --upload-file -F --form -K --config -b"
        " --cookie -c --cookie-jar -e --referer --resolve --connect-to".split()
    ),
    "gh": frozenset(
        "-R --repo --title -t --body -b --body-file -F --label -l --assignee -a --base -B --head -H".split()
    ),
    "mvn": frozenset(
        "-P --activate-profiles -pl --projects -f --file -s --settings -gs --global-settings -T --threads"
        " -rf --resume-from -l --log-file -t --toolchains -b --builder".split()
    ),
    "pytest": frozenset("-k -m -n -p --maxfail --tb -c --rootdir --durations --count --timeout".split()),
}


def value_flags(family: str) -> frozenset[str]:
    """The flags of `family` whose next word is their value."""
    return _FAMILY_VALUE_FLAGS.get("mvn" if family == "mvnw" else family, _VALUE_FLAGS)


def positionals(args: Sequence[str], family: str = "") -> list[str]:
    """The arguments that are not flags nor a flag's value."""
    takes = value_flags(family)
    out = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            continue
        if arg.startswith("-") and len(arg) > 1:
            skip = arg in takes
            continue
        out.append(arg)
    return out


def _long(arg: str, name: str, shortest: int) -> bool:
    """True when `arg` is the long option `name`, written whole or abbreviated to at least `shortest` characters
    (as git's, GNU's and most option parsers accept), with or without `=value`."""
    written = arg.split("=", 1)[0]
    return len(written) >= shortest and name.startswith(written) and written.startswith("--")


def _short(arg: str, letters: str) -> str | None:
    """The letter of `letters` in a cluster of short options (`-xc`, `-fsSL`), or in a short option with its value
    stuck to it (`-x'cmd'`); None when there is none."""
    if not arg.startswith("-") or arg.startswith("--") or len(arg) < 2:
        return None
    cluster = arg[1:]
    for i, char in enumerate(cluster):
        if char in letters:
            return char
        if not char.isalpha():
            return None
        if i == 0 and len(cluster) > 1 and not cluster.isalpha():
            return None
    return None


Refused = list[tuple[str, str]]


def _clip(text: str, most: int = 50) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


# The installer and its build tools: `pip install --upgrade pip setuptools wheel` installs no stranger's code.
_PIP_ITSELF = frozenset({"pip", "setuptools", "wheel"})
_LOCAL_ARCHIVE = re2.compile(r"\.(?:whl|tar\.gz|tgz|zip|gem)$")


def _named_packages(call: Call, start: int) -> list[str]:
    """The packages named among the positionals from `start` on that the project does not declare. A local path
    (`.`, `./pkg`, `dist/x.whl`) names none; `owner/repo`, `github:x`, a URL or `git+...` is a package from
    elsewhere like any name."""
    names = []
    for word in call.positionals()[start:]:
        if word in (".", "..") or word.startswith(("./", "../", "/", "~")) or _LOCAL_ARCHIVE.search(word):
            continue
        base = word.split("[", 1)[0]
        if base.lstrip("@").split("@", 1)[0] in call.packages or base in call.packages:
            continue
        if call.family == "pip" and base.lower() in _PIP_ITSELF:
            continue
        names.append(word)
    return names


def _install(call: Call, start: int, what: str) -> Refused:
    named = _named_packages(call, start)
    if named:
        return [("install", f"`{what} {_clip(' '.join(named), 40)}` installs a package by name")]
    return []


# --- git and gh ----------------------------------------------------------------------------------------------

_GIT_SUBCOMMANDS = frozenset(
    "status diff log show add commit checkout switch branch stash fetch pull push rebase merge tag blame grep reset"
    " ls-files ls-tree rev-parse rev-list remote worktree cherry-pick restore mv rm bisect describe shortlog"
    " submodule init clone reflog revert format-patch range-diff whatchanged notes lfs sparse-checkout"
    " show-ref symbolic-ref cat-file count-objects fsck gc maintenance help version".split()
)
# Options that run a command, read another configuration, or switch a safeguard off, by subcommand ("" for all):
# (long name, the shortest abbreviation git accepts for it, the short letters, the rule).
_GIT_OPTIONS: dict[str, list[tuple[str, int, str, str]]] = {
    "": [
        ("--exec", 5, "", "inline_code"),
        ("--upload-pack", 5, "", "inline_code"),
        ("--receive-pack", 5, "", "inline_code"),
        ("--config", 6, "", "environment"),  # `-c` is git's own option (before the subcommand), not a subcommand's
        ("--template", 6, "", "inline_code"),
        ("--ext-diff", 6, "", "inline_code"),
        ("--no-verify", 6, "", "bypass"),
        ("--force", 5, "", "bypass"),
        ("--force-with-lease", 8, "", "bypass"),
        ("--force-if-includes", 8, "", "bypass"),
        ("--output", 5, "", "path"),
    ],
    "push": [
        ("--delete", 4, "d", "bypass"),
        ("--mirror", 4, "", "bypass"),
        ("--prune", 5, "", "bypass"),
        ("--force", 4, "f", "bypass"),
    ],
    "commit": [("--no-verify", 5, "n", "bypass"), ("--no-gpg-sign", 6, "", "bypass")],
    "merge": [("--no-verify", 5, "n", "bypass")],
    "rebase": [("--exec", 4, "x", "inline_code"), ("--no-verify", 5, "", "bypass")],
    "branch": [("--force", 4, "Df", "bypass")],
    "checkout": [("--force", 4, "f", "bypass"), ("--discard-changes", 4, "", "bypass")],
    "switch": [("--force", 4, "f", "bypass"), ("--discard-changes", 4, "", "bypass")],
    "tag": [("--force", 4, "f", "bypass")],
    "reset": [("--hard", 4, "", "bypass"), ("--merge", 4, "", "bypass"), ("--keep", 4, "", "bypass")],
    "clone": [("--config", 4, "c", "environment"), ("--upload-pack", 4, "u", "inline_code")],
    "fetch": [("--upload-pack", 4, "", "inline_code")],
    "pull": [("--upload-pack", 4, "", "inline_code"), ("--force", 4, "f", "bypass")],
    "grep": [("--open-files-in-pager", 4, "O", "inline_code")],
    "restore": [("--source", 4, "s", "bypass"), ("--worktree", 4, "W", "bypass")],
    "clean": [],
}
# Subcommands that reach a remote: a word there with `host:path` or `user@host:` (scp-like) names a host.
_GIT_REMOTE = frozenset("clone fetch pull push remote submodule ls-remote archive".split())
# Where the words after the repository are refspecs, and the options of git (and those subcommands) that take a value.
_GIT_REFSPECS = frozenset("fetch pull push".split())
_GIT_REMOTE_VALUE_FLAGS = frozenset(
    "-C --git-dir --work-tree --namespace --depth --shallow-since --shallow-exclude --deepen --repo -o --push-option"
    " --upload-pack --receive-pack -j --jobs --server-option --negotiation-tip --origin -b --branch".split()
)


def _git(call: Call) -> Refused:
    args = list(call.args)
    found: Refused = []
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-c",) or flag.startswith(("-c", "--config-env", "--exec-path", "--conf")):
            return [("environment", f"`git {_clip(flag)}` changes git's configuration for the command")]
        if flag in ("-C", "--git-dir", "--work-tree", "--namespace") and args:
            args.pop(0)
    if not args:
        return found
    sub, rest = args[0], args[1:]
    if sub not in _GIT_SUBCOMMANDS:
        return [("program", f"`git {_clip(sub)}` is not a git command lessons may run")]
    for arg in rest:
        if arg == "--":
            break
        for name, shortest, letters, rule in _GIT_OPTIONS.get("", []) + _GIT_OPTIONS.get(sub, []):
            if (arg.startswith("--") and _long(arg, name, shortest)) or (letters and _short(arg, letters)):
                found.append((rule, f"`git {sub} {_clip(arg)}` ({name})"))
    words = [a for a in rest if not a.startswith("-")]
    if sub == "push" and any(w.startswith(("+", ":")) or ":+" in w for w in words):
        found.append(("bypass", "`git push +ref` overwrites a remote branch"))
    if sub == "push" and any(o in ("-o", "--push-option") or o.startswith("--push-option=") for o in rest):
        found.append(("bypass", "`git push -o` passes options to the server (`ci.skip`, ...)"))
    paths = words if sub in ("restore", "checkout", "rm") else []
    if sub == "rm" and not any(_long(a, "--cached", 4) for a in rest):  # `--cached` only untracks: the files stay
        if any(_short(a, "f") or _long(a, "--force", 4) for a in rest):
            found.append(("bypass", "`git rm -f` deletes files with their uncommitted changes"))
        elif any(_short(a, "r") for a in rest) and any(_whole_tree(w) for w in paths):
            found.append(("bypass", "`git rm -r .` deletes every tracked file"))
    if (sub == "reflog" and words[:1] in (["expire"], ["delete"])) or (sub == "gc" and any("prune" in a for a in rest)):
        found.append(("bypass", f"`git {sub}` throws away what could recover lost work"))
    if sub == "branch" and any(_short(a, "MCD") for a in rest):
        found.append(("bypass", "`git branch -M` overwrites a branch"))
    if sub == "bisect" and words[:1] == ["run"]:
        found.append(("inline_code", "`git bisect run` runs a command"))
    if sub == "submodule" and "foreach" in words:
        found.append(("inline_code", "`git submodule foreach` runs a command"))
    if sub == "stash" and words[:1] in (["drop"], ["clear"]):
        found.append(("bypass", f"`git stash {words[0]}` discards work"))
    forced = any(_short(a, "f") or _long(a, "--force", 4) for a in rest)
    everything = any(_short(a, "Au") or _long(a, "--all", 4) or _long(a, "--update", 4) for a in rest)
    if sub == "add" and forced and (everything or any(_whole_tree(w) or _folder_like(w) for w in words)):
        # A file named one by one is the user's to add (secret names are refused as paths); a folder or the whole
        # tree takes in what .gitignore keeps out (`.env`, keys).
        found.append(("bypass", "`git add -f` over a folder adds what .gitignore keeps out (`.env`, keys)"))
    staged_only = any(_long(a, "--staged", 5) for a in rest) or any(_short(a, "S") for a in rest)
    if sub == "restore" and not staged_only and any(_whole_tree(w) or _folder_like(w) for w in paths):
        found.append(("bypass", "`git restore` over a folder or the whole tree discards every change in it"))
    branches = 1 + any(a in ("-b", "-t", "--track", "--orphan") for a in rest)  # a new branch and where it starts
    if sub == "checkout" and (
        len(words) > branches or "--" in rest or any(_whole_tree(w) or _path_only(w) for w in paths)
    ):
        found.append(("bypass", "`git checkout` over files discards their changes"))
    if sub == "remote" and words[:1] not in ([], ["-v"], ["show"], ["add"], ["set-url"], ["get-url"], ["prune"]):
        found.append(("program", f"`git remote {_clip(words[0])}` is not a remote command lessons may run"))
    return found


# A pathspec's magic prefix (`:/`, `:(top,glob)`, `:!`): what follows is still a path from the top of the tree.
_PATHSPEC_MAGIC = re2.compile(r"^:(?:\([^)]*\)|[/!^]+)?")
# Names of files that have no suffix: `git restore Makefile` is one file, `git restore src` a folder.
_PLAIN_FILES = frozenset(
    "makefile gnumakefile dockerfile containerfile gemfile rakefile procfile justfile jenkinsfile vagrantfile brewfile"
    " podfile fastfile license licence readme changelog authors codeowners version notice copying".split()
)


def _pathspec(word: str) -> str:
    """A pathspec as git reads it, magic dropped and `./` collapsed: `:/`, `./`, `:(top).` are all ``."""
    rest = _PATHSPEC_MAGIC.sub("", word, count=1) if word.startswith(":") else word
    parts = [p for p in rest.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


def _whole_tree(word: str) -> bool:
    """True for a pathspec that names the whole tree (`.`, `./`, `:/`, `:/.`, `*`, `:(top)`, `**/*`)."""
    return not _pathspec(word).replace("*", "").replace("/", "")


def _folder_like(word: str) -> bool:
    """True for a pathspec that names more than one file: a glob, a folder (`src/`, `src`: no suffix)."""
    spec = _pathspec(word)
    name = spec.rsplit("/", 1)[-1].lower()
    return word.endswith("/") or any(c in spec for c in "*?[") or ("." not in name and name not in _PLAIN_FILES)


def _path_only(word: str) -> bool:
    """True for a word `git checkout` can only read as a path, never a branch (`./src`, `:/x`, `src/`, `*.py`)."""
    return word.startswith(("./", ":")) or word.endswith("/") or any(c in word for c in "*?[")


def remote_hosts(call: Call) -> list[str]:
    """The hosts git's scp-like remote words name (`git@evil.sh:x.git`, `evil.sh:tools.git`)."""
    if call.family != "git":
        return []
    words = []
    skip = False
    for arg in call.args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in _GIT_REMOTE_VALUE_FLAGS
        else:
            words.append(arg)
    if not words or words[0] not in _GIT_REMOTE:
        return []
    hosts = []
    for i, word in enumerate(words[1:], 1):
        if "://" in word:
            continue
        head, sep, _ = word.partition(":")
        # The repository comes first (`git push evil.sh:x.git`); the words after it are refspecs (`HEAD:feat/x`,
        # `main:main`), read as a host only when spelled as one (`git@evil.sh:x`, `evil.sh:x`).
        spelled = "." in head or "@" in head
        if sep and head and "/" not in head and (i == 1 or words[0] not in _GIT_REFSPECS or spelled):
            hosts.append(head.rsplit("@", 1)[-1])
    return hosts


_GH_ALLOWED = {
    "pr": "view list create checkout diff status checks comment review edit ready close reopen merge".split(),
    "issue": "view list create comment edit close reopen status".split(),
    "run": "view list watch rerun download".split(),
    "workflow": "view list".split(),
    "repo": ["view"],
    "release": "view list download".split(),
    "auth": "status login".split(),
    "browse": [],
    "search": [],
    "label": ["list"],
    "status": [],
}


def _gh(call: Call) -> Refused:
    words = call.positionals()
    if not words:
        return []
    allowed = _GH_ALLOWED.get(words[0])
    if allowed is None or (allowed and (len(words) < 2 or words[1] not in allowed)):
        return [("program", f"`gh {' '.join(words[:2])}` is not a gh command lessons may run")]
    reads = len(words) > 1 and words[1] in ("view", "list", "status", "checks", "diff")
    if not reads and any(a in ("-R", "--repo") or a.startswith("--repo=") for a in call.args):
        return [("link", f"`gh {' '.join(words[:2])} --repo` works on a repository other than this one")]
    if words[:2] == ["pr", "merge"] or (words[:2] == ["pr", "review"] and any(
        _long(a, "--approve", 4) or _short(a, "a") for a in call.args
    )):  # fmt: skip
        return [("bypass", f"`gh pr {words[1]}` approves or merges with the user's authority: a review is theirs")]
    if words[0] == "auth" and any(a in ("-t", "--show-token") for a in call.args):
        return [("path", "`gh auth status --show-token` prints a credential")]
    return []


# --- package managers ------------------------------------------------------------------------------------------

_NPM_ALLOWED = frozenset(
    "run run-script rum urn test t tst start stop restart ci install i in ins inst insta instal isnt isnta isntal"
    " isntall add ls list ll la outdated audit why explain view info show v pack prune dedupe ddp rebuild rb doctor"
    " help uninstall remove rm r un unlink update up upgrade it install-test cit install-ci-test clean-install ic"
    " fund root bin prefix query exec x init innit create".split()
)
_NPM_INSTALLS = frozenset(
    "install i in ins inst insta instal isnt isnta isntal isntall add update up upgrade it install-test cit"
    " install-ci-test clean-install ic".split()
)
_JS_SCRIPTS = frozenset(
    "dev start build test lint format typecheck check preview serve watch e2e clean generate prepare storybook"
    " coverage".split()
)
_PM_ALLOWED = frozenset(
    "run test start build install i add remove rm why list ls outdated audit exec dlx x create init node up upgrade"
    " update dedupe prune rebuild".split()
)


def _script_name(word: str, call: Call) -> bool:
    """True for a project script or task named like a routine (`test`, `lint`, `test:ci`, `build:web`), or one the
    project declares: a name, not a path or a command line."""
    base = word.split(":", 1)[0]
    if word in call.vouched:
        return bool(TASK_NAME.match(word))
    return bool(TASK_NAME.match(word)) and (base in _JS_SCRIPTS or base in _TASKS) and not releases(word)


# Words of a task's name that publish, deploy or release what the project built: irreversible, and the user's call
# (`make deploy-prod`, `just release`, `rake release`, `turbo run publish`), unless the project declares the task.
_RELEASE_WORDS = frozenset("publish release deploy upload ship submit promote rollout push".split())
_NAME_PARTS = re2.compile(r"[^a-z0-9]+")


def releases(name: str) -> bool:
    """True when the task or script `name` is named for publishing, deploying or releasing (`deploy-prod`)."""
    return any(part in _RELEASE_WORDS for part in _NAME_PARTS.split(name.lower()))


def _task_refusals(call: Call, names: Sequence[str], what: str) -> Refused:
    """Tasks a runner is told to run by name (`make deploy-prod`): one named for a release is held, unless the
    project declares it (the user vouched for it)."""
    for name in names:
        if releases(name) and name not in call.vouched:
            return [("program", f"`{what} {_clip(name)}` publishes or deploys: a release is the user's call")]
    return []


def _run_script(call: Call, word: str | None) -> Refused:
    """`npm run NAME` and kin: a script named like a routine (`test`, `lint:ci`) or one the project declares; an
    unseen name (`release`, `deploy`, `ship-it`) is no routine lessons may run."""
    if word is None or _script_name(word, call):
        return []
    if releases(word):
        return [("program", f"`{call.family} run {_clip(word)}` publishes or deploys: a release is the user's call")]
    return [("program", f"`{call.family} run {_clip(word)}` is no routine script and no script the project declares")]


# A task's or a script's name (`test:ci`), not a path or a command line.
TASK_NAME = re2.compile(r"^[a-z][a-z0-9_-]*(?::[a-z0-9_-]+)*$")
_TASKS = frozenset("fmt ci verify all setup bootstrap".split())  # names task runners use beside the scripts' ones


def _npm(call: Call) -> Refused:
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub not in _NPM_ALLOWED:
        return [("program", f"`npm {_clip(sub)}` is not an npm command lessons may run")]
    if sub in ("init", "innit", "create") and len(words) > 1:
        return [("install", f"`npm {sub} {_clip(words[1])}` scaffolds from a package by name")]
    if sub in _NPM_INSTALLS and any(a in ("-g", "--global") or a.startswith("--location=global") for a in call.args):
        return [("install", f"`npm {sub} --global` installs on the machine, not in the project")]
    if sub in _NPM_INSTALLS:
        return _install(call, 1, f"npm {sub}")
    if sub == "audit" and "fix" in words and any(_long(a, "--force", 4) for a in call.args):
        return [("bypass", "`npm audit fix --force`")]
    if sub in ("run", "run-script", "rum", "urn"):
        return _run_script(call, words[1] if len(words) > 1 else None)
    return []


def _js_pm(call: Call) -> Refused:
    """pnpm, yarn and bun: their commands, a project's scripts by name, and installs only of what it declares."""
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub in ("dlx", "x", "create") or (sub == "global" and words[1:2] == ["add"]):
        return [("install", f"`{call.family} {sub}` fetches and runs a package by name")]
    if sub in ("add", "install", "i", "update", "up", "upgrade") and any(a in ("-g", "--global") for a in call.args):
        return [("install", f"`{call.family} {sub} --global` installs on the machine, not the project")]
    if sub in ("add", "install", "i", "update", "up", "upgrade"):
        return _install(call, 1, f"{call.family} {sub}")
    if sub == "run":
        return _run_script(call, words[1] if len(words) > 1 else None)
    if sub in ("publish", "npm"):  # the package manager's own publish (`yarn npm publish`), whatever scripts say
        return [("program", f"`{call.family} {sub}` publishes a package: the user's call")]
    if sub in _PM_ALLOWED or sub in _JS_SCRIPTS or sub in call.vouched or sub in JS_TOOLS:
        return []
    return [("program", f"`{call.family} {_clip(sub)}` is neither a command lessons may run nor a script declared")]


_PIP_ALLOWED = frozenset("install uninstall list show freeze check help inspect hash".split())


def _pip(call: Call) -> Refused:
    words = call.positionals()
    if not words:
        return []
    if words[0] not in _PIP_ALLOWED:
        return [("program", f"`pip {_clip(words[0])}` is not a pip command lessons may run")]
    if words[0] == "install":
        refused = _install(call, 1, "pip install")
        if any(a in ("-f", "--find-links") or a.startswith("--find-links") for a in call.args):
            refused.append(("bypass", "`pip install --find-links` takes packages from elsewhere"))
        return refused
    return []


_UV_ALLOWED = frozenset(
    "run sync lock add remove pip venv build tree export version init format python tool cache help".split()
)


def _uv(call: Call) -> Refused:
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub not in _UV_ALLOWED:
        return [("program", f"`uv {_clip(sub)}` is not a uv command lessons may run")]
    if sub == "pip":
        return _pip(Call("pip", tuple(call.args[call.args.index("pip") + 1 :]), call.vouched))
    if sub == "add":
        return _install(call, 1, "uv add")
    if sub == "tool" and words[1:2] in (["run"], ["install"], ["upgrade"]):
        return [("install", f"`uv tool {words[1]}` fetches and runs a package by name")]
    if sub == "python" and words[1:2] == ["install"]:
        return [("install", "`uv python install` downloads an interpreter")]
    if sub == "run" and any(a.startswith("--with") for a in call.args):
        return [("install", "`uv run --with` installs a package by name for the run")]
    return []


def _uvx(call: Call) -> Refused:
    words = call.positionals()
    if words and words[0] in call.packages and not any(a.startswith("--from") for a in call.args):
        return []
    return [("install", "`uvx` fetches and runs a package the project does not declare")]


_PY_PM_ALLOWED = frozenset(
    "run install sync add remove lock build show check env shell version init export update help".split()
)


def _python_pm(call: Call) -> Refused:
    """poetry, pdm, hatch, pipenv, rye."""
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub == "self":
        return [("install", f"`{call.family} self` installs plugins into the tool")]
    if sub not in _PY_PM_ALLOWED:
        return [("program", f"`{call.family} {_clip(sub)}` is not a command lessons may run")]
    if sub in ("add", "install"):
        return _install(call, 1, f"{call.family} {sub}")
    return []


_CARGO_ALLOWED = frozenset(
    "build b check c test t run r fmt clippy doc d bench clean update tree metadata new init vendor fix add remove"
    " generate-lockfile pkgid locate-project version help xtask"
    # cargo's best-known plugins, each `cargo-<name>` installed on purpose
    " nextest insta llvm-cov watch deny audit outdated udeps expand tarpaulin machete hack sort make".split()
)


def _cargo(call: Call) -> Refused:
    if any(_long(a, "--config", 5) or a == "-Z" for a in call.args):
        return [("inline_code", "`cargo --config` can set the command cargo runs")]
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub in ("install", "binstall"):
        return [("install", f"`cargo {sub}` installs a binary by name")]
    if sub not in _CARGO_ALLOWED:
        return [("program", f"`cargo {_clip(sub)}` is not a cargo command lessons may run")]
    if sub == "add":
        return _install(call, 1, "cargo add")
    if sub == "watch":
        return _cargo_watch(call)
    return []


def _cargo_watch(call: Call) -> Refused:
    """`cargo watch -x test`: each `-x` is a cargo command, judged as one; `-s`/`--shell` and what follows `--`
    are shell command lines."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg == "--" or _long(arg, "--shell", 4) or _short(arg, "s"):
            return [("inline_code", "`cargo watch -s` runs a shell command given to it")]
        value = None
        if arg in ("-x", "--exec") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--exec="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-x") and len(arg) > 2:
            value = arg[2:]
        if value is not None:
            inner = value.split()
            if not inner or inner[0] == "watch" or _cargo(Call("cargo", tuple(inner), call.vouched, call.packages)):
                return [("inline_code", f"`cargo watch -x {_clip(value)}` runs a cargo command lessons do not run")]
    return []


_GO_ALLOWED = frozenset("build test run vet fmt mod generate list version doc clean work env help".split())


def _go(call: Call) -> Refused:
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub in ("install", "get"):
        return [("install", f"`go {sub}` installs a module by name")]
    if sub not in _GO_ALLOWED:
        return [("program", f"`go {_clip(sub)}` is not a go command lessons may run")]
    if any(a.split("=", 1)[0] in ("-exec", "-toolexec", "-vettool", "--exec", "--toolexec") for a in call.args):
        return [("inline_code", f"`go {sub} -exec` runs a program of its choosing")]
    if sub == "env" and any(a in ("-w", "-u") for a in call.args):
        return [("bypass", "`go env -w` changes go's settings (proxies, checksums) for every project")]
    if sub == "run" and any(_PACKAGE_AT_VERSION.match(w) for w in words[1:]):
        return [("install", "`go run pkg@version` fetches and runs a module")]
    return []


def _mix(call: Call) -> Refused:
    words = call.positionals()
    if any(a in ("-e", "--eval", "-r", "--require") for a in call.args):
        return [("inline_code", "`mix run -e` runs code given inline")]
    if "cmd" in words or any(w.startswith("cmd") and w.endswith(",") for w in words):
        return [("inline_code", "`mix cmd` runs a shell command")]
    if (words and words[0].endswith((".install", ".publish"))) or words[:1] in (
        ["hex.user"],
        ["hex.organization"],
        ["hex.config"],
    ):
        return [("install", f"`mix {words[0]}` installs or publishes by name")]
    return []


_BUNDLE_ALLOWED = frozenset(
    "install exec update check list outdated show info lock init binstubs clean add remove doctor version help".split()
)


def _bundle(call: Call) -> Refused:
    words = call.positionals()
    if not words:
        return []
    if words[0] not in _BUNDLE_ALLOWED:
        return [("program", f"`bundle {_clip(words[0])}` is not a bundler command lessons may run")]
    if words[0] == "add":
        return _install(call, 1, "bundle add")
    return []


def _refuse_words(rule: str, detail: str, *names: str) -> Callable[[Call], Refused]:
    def policy(call: Call) -> Refused:
        words = call.positionals()
        return [(rule, f"`{call.family} {words[0]}` {detail}")] if words and words[0] in names else []

    return policy


def _gem(call: Call) -> Refused:
    words = call.positionals()
    if words and words[0] in ("list", "env", "which", "contents", "info", "help"):
        return []
    return [("install", f"`gem {_clip(' '.join(words[:2]))}` installs or publishes gems")]


_COMPOSER_ALLOWED = frozenset(
    "install update dump-autoload dumpautoload validate run-script run test show outdated audit check-platform-reqs"
    " diagnose licenses depends why why-not status help list".split()
)


def _composer(call: Call) -> Refused:
    words = call.positionals()
    if words and words[0] in ("require", "create-project", "global"):
        return [("install", f"`composer {words[0]}` installs a package by name")]
    if words and words[0] not in _COMPOSER_ALLOWED:
        return [("program", f"`composer {_clip(words[0])}` is not a composer command lessons may run")]
    if words[:1] == ["update"]:
        return _install(call, 1, "composer update")
    return []


def _dotnet(call: Call) -> Refused:
    words = call.positionals()
    if words[:2] in (["add", "package"], ["new", "install"]) or words[:1] == ["tool"]:
        return [("install", f"`dotnet {' '.join(words[:2])}` installs a package by name")]
    if words[:1] == ["nuget"]:
        return [("program", "`dotnet nuget` publishes or changes package sources")]
    return []


def _dart(call: Call) -> Refused:
    words = call.positionals()
    if words[:1] == ["pub"] and len(words) > 1 and words[1] in ("add", "global"):
        return [("install", f"`{call.family} pub {words[1]}` installs a package by name")]
    if words[:1] == ["pub"] and len(words) > 1 and words[1] in ("publish", "lish", "token", "uploader"):
        return [("program", f"`{call.family} pub {words[1]}` publishes or changes the package's credentials")]
    return []


# --- interpreters and runners ----------------------------------------------------------------------------------

# The options an interpreter may be given before the file it runs: none of them hands it code.
_SAFE_INTERPRETER_FLAGS = {
    "python": {"-u", "-B", "-O", "-OO", "-q", "-s", "-S", "-E", "-I", "-V", "--version", "-h", "--help", "-W"},
    "node": {"-v", "--version", "--test", "--watch", "--enable-source-maps", "--no-warnings", "--trace-warnings"},
    "ruby": {"-v", "--version", "-w", "-W"},
    "perl": {"-v", "--version", "-w"},
    "php": {"-v", "--version"},
    "lua": {"-v"},
    "ipython": {"--version", "-V"},
    "ts-node": {"-v", "--version", "-P", "--project", "-T", "--transpile-only"},
    "tsx": {"-v", "--version", "--watch", "--tsconfig"},
    "kotlinc": {"-version", "-d", "-include-runtime"},
}
_SHELL_SAFE_FLAGS = {"-e", "-x", "-u", "-n", "-v", "-ex", "-eu", "-eux", "-xe", "--norc", "--noprofile"}
# Modules `python -m` may run: test runners and tools that run the project's own files, not code given inline.
_PY_MODULES = frozenset("unittest venv build compileall json.tool py_compile ensurepip".split())


def _interpreter(call: Call) -> Refused:
    """An interpreter runs a file of the project or a known module, never code given inline or on stdin."""
    family, args = call.family, list(call.args)
    if family in ("deno", "bun"):
        return _deno_bun(call)
    if family in ("elixir", "iex", "erl"):
        inline = {"-e", "--eval", "-eval", "-r", "--require"}
        return [("inline_code", f"`{family}` is given code inline")] if set(args) & inline else []
    if family == "node" and args[:1] == ["--run"]:
        # Node's own script runner runs a script the project's package.json names, as `npm run` does.
        if len(args) > 1 and _script_name(args[1], call):
            return []
        return [("program", f"`node --run {_clip(args[1]) if len(args) > 1 else ''}` is not a script lessons may run")]
    safe = _SHELL_SAFE_FLAGS if family in SHELLS else _SAFE_INTERPRETER_FLAGS.get(family, set())
    i = 0
    while i < len(args):
        arg = args[i]
        if family == "python" and arg == "-m":
            module = args[i + 1] if i + 1 < len(args) else ""
            if module == "pip":
                return _pip(Call("pip", tuple(args[i + 2 :]), call.vouched))
            if module in ("cProfile", "profile"):  # runs a file or module of its own options, as python would
                return _profiled(call, args[i + 2 :])
            if module in _POLICIES and module in TOOLCHAIN:  # `python -m flask run`: as the tool itself
                return _POLICIES[module](Call(module, tuple(args[i + 2 :]), call.vouched, call.packages))
            if module in _PY_MODULES or program_family(module) in TOOLCHAIN or module in call.vouched:
                return []
            return [("program", f"`python -m {_clip(module)}` is not a module lessons may run")]
        if i == len(args) - 1 and arg in ("-c", "-e", "-E", "-r", "--eval", "-p"):
            return []  # the option named alone (`python -c`): it runs nothing
        if family == "node" and arg.split("=", 1)[0] in ("--inspect", "--inspect-brk", "--inspect-wait"):
            # The inspector runs code for whoever connects: on this machine (its default) only.
            if "=" in arg and _listens_on(arg.split("=", 1)[1]):
                return [("bypass", f"`node {_clip(arg)}` serves a debugger that runs code to the network")]
            i += 1
            continue
        if arg == "-" or (arg.startswith("-") and arg.split("=", 1)[0] not in safe):
            return [("inline_code", f"`{family} {_clip(arg)}` hands it code, or an option lessons do not pass")]
        if not arg.startswith("-"):
            if _SCRIPT_FILE.match(arg) or "/" in arg or family in ("python", "ruby", "perl", "php"):
                # The file it runs (the path rules keep it inside the project), judged as that program when it
                # has a policy of its own (`python manage.py shell -c`, `ruby bin/rails runner`).
                script = program_family(arg)
                as_script = Call(script, tuple(args[i + 1 :]), call.vouched, call.packages)
                own = _POLICIES.get(script)
                return (own(as_script) if own is not None else []) + destroys_data(as_script)
            return [("inline_code", f"`{family} {_clip(arg)}` is not a file of the project")]
        i += 1 + (arg == "-W")
    return []


def _profiled(call: Call, args: list[str]) -> Refused:
    """`python -m cProfile -o out -s time app.py`: the profiler's options, then what python runs."""
    rest = list(args)
    while rest[:1] and rest[0] in ("-o", "-s") and len(rest) > 1:
        rest = rest[2:]
    if not rest:
        return []
    return _interpreter(Call("python", tuple(rest), call.vouched, call.packages))


def _deno_bun(call: Call) -> Refused:
    words = call.positionals()
    args = call.args
    if any(a in ("-e", "--eval", "-p", "--print") or a.startswith(("--eval=", "--print=")) for a in args):
        return [("inline_code", f"`{call.family} --eval` runs code given inline")]
    sub = words[0] if words else ""
    if sub in ("eval", "repl"):
        return [("inline_code", f"`{call.family} {sub}` runs code given inline")]
    if sub in ("publish", "deploy"):
        return [("program", f"`{call.family} {sub}` publishes or deploys: the user's call")]
    if sub in ("install", "add", "x", "create", "upgrade", "i") and (call.family == "deno" or sub != "install"):
        return [("install", f"`{call.family} {sub}` fetches a package by name")]
    if sub == "install":
        return _install(call, 1, "bun install")
    if any(w.startswith(("npm:", "jsr:", "http:", "https:")) for w in words):
        return [("install", f"`{call.family}` runs a package or a module fetched from elsewhere")]
    if any(a in ("-A", "--allow-all") or _long(a, "--allow-run", 9) or _long(a, "--allow-ffi", 9) for a in args):
        return [("bypass", f"`{call.family} --allow-all` lets it run anything")]
    return []


_SHELLISH = re2.compile(r"[\s;|&$`<>()'\"\\]")
# Variables whose value make runs as a program in its recipes.
_MAKE_PROGRAMS = frozenset("CC CXX LD AR AS SHELL MAKE MAKESHELL CPP FC RM INSTALL PYTHON NODE".split())
_BUILD_FILE = re2.compile(
    r"(?i)(?:^|/)(?:[\w.-]*makefile|[\w.-]+\.mk|rakefile(?:\.rb)?|[\w.-]+\.rake|noxfile\.py"
    r"|[\w.-]+\.cmake|cmakelists\.txt|justfile|taskfile\.ya?ml)$"
)


def _build_file(call: Call, flags: tuple[str, ...]) -> Refused:
    """A build tool told to read another file than its own (`make -f rules.txt`): only a file named as that
    tool's files are (a Makefile, `*.mk`, a Rakefile, ...), never one a command could have just written."""
    args = list(call.args)
    for i, arg in enumerate(args):
        value = (
            args[i + 1]
            if arg in flags and i + 1 < len(args)
            else arg.split("=", 1)[1]
            if "=" in arg and arg.split("=", 1)[0] in flags
            else None
        )
        if value is not None and not _BUILD_FILE.search(value):
            return [("inline_code", f"`{call.family} {arg} {_clip(value)}` runs a file that is no {call.family} file")]
    return []


def _make(call: Call) -> Refused:
    if any(_long(a, "--eval", 4) or _short(a, "E") for a in call.args):
        return [("inline_code", "`make --eval` runs a rule given inline")]
    for arg in call.args:  # `make CC='sh -c ...'`: a variable the recipes run
        name, eq, value = arg.partition("=")
        if eq and not arg.startswith("-") and (_SHELLISH.search(value) or name.upper() in _MAKE_PROGRAMS):
            return [("inline_code", f"`make {_clip(arg)}` sets what the recipes run")]
    targets = [w for w in call.positionals() if "=" not in w]
    return _build_file(call, ("-f", "--file", "--makefile")) + _task_refusals(call, targets, "make")


def _rake(call: Call) -> Refused:
    inline = ("-e", "--execute", "-p", "--execute-print", "-E", "--execute-continue")
    if set(call.args) & set(inline):
        return [("inline_code", "`rake -e` runs code given inline")]
    found = _build_file(call, ("-f", "--rakefile", "-r", "--require", "-R", "--rakelibdir"))
    return found + _task_refusals(call, [w.split("[", 1)[0] for w in call.positionals()], "rake")


def _nox_cmake(call: Call) -> Refused:
    args = list(call.args)
    if call.family == "cmake" and "-E" in args:
        tool = args[args.index("-E") + 1] if args.index("-E") + 1 < len(args) else ""
        if tool not in ("copy", "copy_directory", "copy_if_different", "make_directory", "remove", "rm",
                        "remove_directory", "echo", "touch", "capabilities", "compare_files", "sha256sum"):  # fmt: skip
            return [("inline_code", f"`cmake -E {_clip(tool)}` runs a command")]
    return _build_file(call, ("-f", "--noxfile", "-P", "-C", "--file"))


def _runs_through(*options: str, subcommands: tuple[str, ...] = (), letters: str = "") -> Callable[[Call], Refused]:
    """A tool that runs a command given in one of its options (`letters`: their short forms) or after one of its
    subcommands (`tox -x testenv.commands=...` sets the commands it runs)."""

    def policy(call: Call) -> Refused:
        words = call.positionals()
        given = any(_long(a, o, len(o) - 2) for a in call.args for o in options)
        if (words[:1] and words[0] in subcommands) or given or any(letters and _short(a, letters) for a in call.args):
            return [("inline_code", f"`{call.family}` runs a command given to it")]
        return []

    return policy


def _rails(call: Call) -> Refused:
    words = call.positionals()
    return [("inline_code", "`rails runner` runs code given inline")] if words[:1] in (["runner"], ["r"]) else []


# Tasks that destroy a database or its history, in the frameworks' own words.
_DESTROYS = frozenset(
    "db:drop db:reset db:purge db:schema:load db:wipe db:rollback ecto.drop ecto.reset ecto.rollback flush sqlflush"
    " reset_db migrate:fresh migrate:reset migrate:rollback migrate:refresh downgrade".split()
)
# The same, in two words: `dotnet ef database drop`, `prisma migrate reset`, `prisma db push --force-reset`.
_DESTROYS_PAIRS = {("database", "drop"), ("migrate", "reset"), ("db", "drop")}
_VARIABLE_SET = re2.compile(r"^[A-Z][A-Z0-9_]*=")


def destroys_data(call: Call) -> Refused:
    """A framework task that drops, resets or rolls back a database (`rails db:drop`, `mix ecto.reset`, `manage.py
    flush`, `alembic downgrade base`, `dotnet ef database drop`, `prisma migrate reset`), or a variable that lets one
    run where it must not (`DISABLE_DATABASE_ENVIRONMENT_CHECK=1`)."""
    words = call.positionals()
    pairs = set(itertools.pairwise(words))
    if _DESTROYS.intersection(words) or pairs & _DESTROYS_PAIRS or "--force-reset" in call.args:
        return [("bypass", f"`{call.family} {_clip(' '.join(words[:3]))}` destroys a database")]
    if call.family in ("rails", "rake", "make", "mix") and any(_VARIABLE_SET.match(w) for w in words):
        return [("environment", f"`{call.family}` is given a variable as an argument")]
    return []


def _mvn(call: Call) -> Refused:
    found: Refused = _mvn_goals(call)
    for arg in call.args:
        low = arg.lower()
        if arg.startswith("exec:") or low.startswith("-dexec."):
            found.append(("inline_code", f"`{call.family} {_clip(arg)}` runs a command"))
        elif arg.startswith("-D") and any(w in low for w in ("ssl", "insecure", "trust", "checksum", "verify")):
            found.append(("bypass", f"`{call.family} {_clip(arg)}` switches a check off"))
    return found


# Maven's lifecycle phases up to `install` (the local repository), and plugins that check, format or report;
# `deploy`, `release:*`, `jib:build`, `site-deploy` and any other plugin are the user's call.
_MVN_PHASES = frozenset(
    "validate initialize generate-sources process-sources generate-resources process-resources compile process-classes"
    " generate-test-sources process-test-sources generate-test-resources process-test-resources test-compile"
    " process-test-classes test prepare-package package pre-integration-test integration-test post-integration-test"
    " verify install clean pre-clean post-clean site".split()
)
_MVN_PLUGINS = frozenset(
    "dependency help versions spotless checkstyle pmd spotbugs surefire failsafe jacoco compiler javadoc spring-boot"
    " quarkus enforcer license sortpom fmt formatter rewrite clean resources jar war source wrapper ktlint detekt"
    " archetype tidy liquibase-status".split()
)
_RELEASE_GOALS = frozenset("deploy release publish push build-image build upload sign-and-deploy-file".split())


def _mvn_goals(call: Call) -> Refused:
    for word in call.positionals():
        if word.startswith("-") or "=" in word:
            continue
        plugin, _, goal = word.rpartition(":")
        plugin = plugin.rsplit(":", 1)[-1].removeprefix("maven-").removesuffix("-maven-plugin").removesuffix("-plugin")
        if (not plugin and goal in _MVN_PHASES) or (plugin in _MVN_PLUGINS and goal not in _RELEASE_GOALS):
            continue
        return [("program", f"`{call.family} {_clip(word)}` is no build phase or plugin lessons may run")]
    return []


# Gradle's tasks that build, check, test, run or report locally, by the start of their name (`assembleRelease`,
# `testDebugUnitTest`, `:app:lintDebug`); `publish*`, `jib`, `deploy*`, `upload*` and the rest are held.
_GRADLE_TASK = re2.compile(
    r"^(?:assemble|bundle|build|check|clean|compile|test|connected|lint|jar|javadoc|dokka|spotless|ktlint|detekt"
    r"|jacoco|kover|boot(?:Run|Jar|War|TestRun)$|run$|installDist$|installDebug$|dist|shadowJar|dependencies$"
    r"|dependencyInsight$|dependencyUpdates$|tasks$|help$|projects$|properties$|wrapper$|integrationTest|generate"
    r"|process|publishToMavenLocal$|koverHtml|apiCheck$|apiDump$|format|verify|coverage|fmt|sync|prepare|kapt|ksp)"
)


_GRADLE_VALUE_FLAGS = frozenset(
    "-x --exclude-task -p --project-dir -c --settings-file -b --build-file --tests --console --warning-mode"
    " --max-workers --priority --include-build -g --gradle-user-home --project-cache-dir -M".split()
)


def _gradle(call: Call) -> Refused:
    """gradle and gradlew: tasks that build, test, check or report locally; never one that publishes or deploys,
    nor an init script given on the line (`--init-script`, `-I`), which runs before any build."""
    args = list(call.args)
    if any(a in ("-I", "--init-script") or a.startswith(("--init-script=", "-I")) for a in args):
        return [("inline_code", f"`{call.family} --init-script` runs a script before the build")]
    if any(_long(a, "--scan", 5) for a in args):
        return [("link", f"`{call.family} --scan` publishes the build's details to a server")]
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            skip = arg in _GRADLE_VALUE_FLAGS
            continue
        task = arg.rsplit(":", 1)[-1]
        if not _GRADLE_TASK.match(task):
            return [("program", f"`{call.family} {_clip(arg)}` is no build, test or check task lessons may run")]
    return []


# sbt's commands that build, test, check or run locally (`~test`, `testOnly`, `Test/compile`).
_SBT_TASK = re2.compile(
    r"^(?:\+\+[\w.]+|~?\+?(?:[A-Za-z]+/)?(?:compile|test|testOnly|testQuick|run|runMain|clean|package|assembly"
    r"|stage|doc|update|reload|scalafmt\w*|scalafix\w*|coverage\w*|dependencyTree|evicted|console|projects|project"
    r"|tasks|about|help|check|headerCheck|headerCreate|fmt|lint|bloopInstall))$"
)


def _sbt(call: Call) -> Refused:
    for word in call.positionals():
        first = word.split()[0] if word.split() else word
        if not _SBT_TASK.match(first):
            return [("program", f"`sbt {_clip(word)}` is no build, test or check command lessons may run")]
    return []


def _subcommands(*allowed: str) -> Callable[[Call], Refused]:
    """A tool whose first positional must be one of `allowed` (the rest publish, log in or fetch by name)."""
    known = frozenset(allowed)

    def policy(call: Call) -> Refused:
        words = call.positionals()
        if words and words[0] not in known:
            return [("program", f"`{call.family} {_clip(words[0])}` is not a {call.family} command lessons may run")]
        return []

    return policy


def _rebar3(call: Call) -> Refused:
    words = call.positionals()
    if words[:1] == ["hex"] and words[1:2] != ["build"]:
        return [("program", f"`rebar3 hex {_clip(' '.join(words[1:2]))}` publishes or changes the package on Hex")]
    if words[:1] in (["shell"], ["eval"]) and any(a in ("--eval", "--script") for a in call.args):
        return [("inline_code", "`rebar3 shell --eval` runs code given inline")]
    return []


def _js_tool(call: Call) -> Refused:
    """lerna, nx, turbo, changeset, expo and kin run through npx: tasks by name, never a command line (`exec`) nor
    a publish or a release of the packages."""
    words = call.positionals()
    sub = words[0] if words else ""
    if sub in ("exec", "run-commands", "x"):
        return [("inline_code", f"`{call.family} {sub}` runs a command given to it")]
    if (
        sub in ("publish", "release", "deploy", "upload", "submit")
        or (call.family == "lerna" and sub == "version")
        or (call.family in ("expo", "eas") and sub in ("build", "update"))
    ):
        return [("program", f"`{call.family} {sub}` publishes or releases packages: the user's call")]
    targets = [t for w in words[1:] for t in w.split(",")]
    for i, arg in enumerate(call.args):
        if arg in ("-t", "--target", "--targets") and i + 1 < len(call.args):
            targets += call.args[i + 1].split(",")
        elif arg.startswith(("--target=", "--targets=")):
            targets += arg.split("=", 1)[1].split(",")
    return _task_refusals(call, [t.rsplit(":", 1)[-1] for t in targets], f"{call.family} {sub}")


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"})


def _listens_on(value: str) -> bool:
    """True when a host (or `host:port`) to serve on is more than this machine (`0.0.0.0`, `*`, `::`, an address)."""
    host = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return host.lower() not in _LOOPBACK and not host.isdigit()


def _option_values(args: Sequence[str], *names: str) -> list[str]:
    """The values given to the long or short options `names` (`--host 0.0.0.0`, `--host=0.0.0.0`, `-h0.0.0.0`)."""
    found = []
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in names:
            found.append(value if eq else (args[i + 1] if i + 1 < len(args) else ""))
    return found


_NOTEBOOK_OFF = re2.compile(
    r"(?i)^--(?:\w+\.)?(?:token|password|password_required|disable_check_xsrf|allow_origin|allow_remote_access"
    r"|allow_unauthenticated_access)$"
)


def _jupyter(call: Call) -> Refused:
    """Jupyter serves a shell to whoever reaches it: never with its token or password off, and never an extension
    installed by name."""
    args = list(call.args)
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not eq and _NOTEBOOK_OFF.match(name) and i + 1 < len(args):
            value = args[i + 1]
        if (
            _NOTEBOOK_OFF.match(name)
            and (
                value in ("", "''", '""', "*") or (value.lower() in ("false", "true") and not name.endswith("required"))
            )
        ) or (name.endswith("password_required") and value.lower() == "false"):
            return [("bypass", f"`jupyter {_clip(arg)}` lets anyone who reaches it run code")]
    words = call.positionals()
    if words[:1] in (["labextension"], ["nbextension"], ["serverextension"], ["kernelspec"]) and words[1:2] in (
        ["install"], ["enable"],
    ):  # fmt: skip
        return [("install", f"`jupyter {words[0]} install` installs an extension by name")]
    return []


def _flask(call: Call) -> Refused:
    """`flask run --debug` serves Werkzeug's debugger, a Python console: only on this machine."""
    debug = any(_long(a, "--debug", 5) or a == "--debugger" for a in call.args)
    hosts = _option_values(call.args, "--host", "-h")
    if debug and any(_listens_on(h) for h in hosts):
        return [("bypass", "`flask run --debug` on every interface serves a Python console to the network")]
    return []


def _just(call: Call) -> Refused:
    if any(_long(a, n, 5) for a in call.args for n in ("--command", "--shell", "--shell-arg", "--shell-command")):
        return [("inline_code", "`just --command` runs a command given inline")]
    return _task_refusals(call, call.positionals(), call.family)


def _compiler(call: Call) -> Refused:
    if any(a in ("-wrapper", "--wrapper") or a.startswith(("-fplugin", "-wrapper=")) for a in call.args):
        return [("inline_code", f"`{call.family} -wrapper` runs a program of its choosing")]
    return []


def _django(call: Call) -> Refused:
    """`manage.py` and `django-admin`: `shell -c` and `dbshell` run what they are given."""
    words = call.positionals()
    if words[:1] in (["shell"], ["dbshell"]) and (words[0] == "dbshell" or {"-c", "--command"} & set(call.args)):
        return [("inline_code", f"`{call.family} {words[0]}` runs code given inline")]
    return []


def _artisan(call: Call) -> Refused:
    words = call.positionals()
    if words[:1] == ["tinker"]:
        return [("inline_code", "`artisan tinker` runs code given inline")]
    return []


_COMPOSE_ALLOWED = frozenset("up down ps logs build restart stop start config pull images top version ls".split())
_DOCKER_ALLOWED = frozenset("build ps logs images version info".split())


def _docker(call: Call) -> Refused:
    """docker and docker compose: build, start and stop the project's own services, read their logs; never run a
    command in a container (`exec`, `run`), which holds the project's secrets and can be given the host."""
    words = call.positionals()
    compose = call.family == "docker-compose" or words[:1] == ["compose"]
    if compose:
        words = words[1:] if words[:1] == ["compose"] else words
        allowed = _COMPOSE_ALLOWED
    else:
        allowed = _DOCKER_ALLOWED | {"compose"}
    if any(_long(a, "--push", 4) or ("push=true" in a or "type=registry" in a) for a in call.args):
        return [("program", "`docker build --push` publishes the image: the user's call")]
    if not words or words[0] in allowed:
        if any(_long(a, "--privileged", 6) or a.startswith(("--pid=host", "--network=host")) for a in call.args):
            return [("bypass", "`docker --privileged` gives a container the host")]
        return []
    return [("inline_code", f"`docker {_clip(words[0])}` runs a command in a container")]


def _pre_commit(call: Call) -> Refused:
    words = call.positionals()
    allowed = {"run", "install", "install-hooks", "autoupdate", "validate-config", "validate-manifest", "clean", "gc"}
    if words and words[0] not in allowed:
        return [("bypass", f"`pre-commit {_clip(words[0])}` is not a pre-commit command lessons may run")]
    return []


_RUNTIMES = frozenset(
    "node nodejs npm pnpm yarn python ruby go golang java deno bun rust erlang elixir php dotnet zig lua".split()
)


def _version_manager(call: Call) -> Refused:
    """nvm, mise, asdf and kin: a runtime's version to install or use (`node@20`, `3.12`), nothing else."""
    words = call.positionals()
    if call.family == "mise" and words[:1] in (["run"], ["r"]) and len(words) > 1 and _script_name(words[1], call):
        return []  # a task of the project's mise.toml by a routine's name (`mise run lint`, `mise run test:ci`)
    if words[:1] in (["exec"], ["x"], ["run"], ["plugin"], ["plugins"]):
        return [("inline_code", f"`{call.family} {words[0]}` runs or installs what it is given")]
    if len(words) > 1 and words[0] in ("install", "use", "local", "global", "shell", "i", "pin"):
        for word in words[1:]:
            name, _, version = word.partition("@")
            if _VERSION_WORD.match(word) or (name in _RUNTIMES and (not version or _VERSION_WORD.match(version))):
                continue
            if name in _RUNTIMES and not version:
                continue
            return [("install", f"`{call.family} {words[0]} {_clip(word)}` installs something other than a runtime")]
    return []


# --- local utilities with options that run programs or reach elsewhere ------------------------------------------


def _find(call: Call) -> Refused:
    bad = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fprint0", "-fls"} & set(call.args)
    return [("inline_code", f"`find {sorted(bad)[0]}` runs, deletes or writes")] if bad else []


def _fd(call: Call) -> Refused:
    if any(
        a in ("-x", "--exec", "-X", "--exec-batch") or a.startswith(("--exec=", "--exec-batch=")) for a in call.args
    ):
        return [("inline_code", "`fd --exec` runs a command")]
    return []


def _sort(call: Call) -> Refused:
    return (
        [("inline_code", "`sort --compress-program` runs a program")]
        if any(_long(a, "--compress-program", 4) for a in call.args)
        else []
    )


def _rg(call: Call) -> Refused:
    if any((_long(a, "--pre", 5) and not _long(a, "--pre-glob", 6)) or a == "--pre" for a in call.args):
        return [("inline_code", "`rg --pre` runs a program on every file")]
    return []


def _printf(call: Call) -> Refused:
    return [("inline_code", "`printf -v` assigns through the shell's arithmetic")] if "-v" in call.args else []


def _cd(call: Call) -> Refused:
    words = call.positionals()
    if not words or words[0] in ("-", "~") or words[0].startswith("~"):
        return [("path", "`cd` with no folder (or `-`, `~`) leaves the project")]
    return []


_CURL_SAFE = frozenset(
    "-s -S -f -L -i -I -v -G --silent --show-error --fail --fail-with-body --location --include --head --verbose"
    " --get --compressed -X --request -H --header -o --output -w --write-out -m --max-time --connect-timeout"
    " -d --data --data-raw --json".split()
)


def _curl(call: Call) -> Refused:
    found: Refused = []
    args = list(call.args)
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        name = arg.split("=", 1)[0]
        if name in _CURL_SAFE or (not arg.startswith("--") and set(arg[1:]) <= set("sSfLiIvG")):
            value = args[i + 1] if i + 1 < len(args) and name in value_flags("curl") else ""
            if value.startswith("@"):
                found.append(("path", f"`curl {name} @{_clip(value[1:])}` sends a file"))
            continue
        if _long(arg, "--insecure", 5) or (not arg.startswith("--") and "k" in arg):
            found.append(("bypass", f"`curl {_clip(arg)}` does not check the server's certificate"))
        else:
            found.append(
                ("link", f"`curl {_clip(arg)}` is not an option lessons may pass (it can send data elsewhere)")
            )
    return found


def _rm(call: Call, build_folders: frozenset[str]) -> Refused:
    flags = [a for a in call.args if a.startswith("-")]
    strong = any(
        (f.startswith("--") and any(_long(f, n, 4) for n in ("--recursive", "--force", "--dir")))
        or (not f.startswith("--") and set(f[1:]) & set("rRfd"))
        for f in flags
    )
    if not strong:
        return []
    for target in (a for a in call.args if not a.startswith("-")):
        name = PurePosixPath(target.rstrip("/")).name
        if name not in build_folders and not target.endswith(".egg-info"):
            return [("bypass", f"`rm {' '.join(flags)}` outside a build folder (`{_clip(target)}`)")]
    return []


_POLICIES: dict[str, Callable[[Call], Refused]] = {
    "git": _git,
    "gh": _gh,
    "npm": _npm,
    "pnpm": _js_pm,
    "yarn": _js_pm,
    "bun": _interpreter,
    "pip": _pip,
    "uv": _uv,
    "uvx": _uvx,
    "poetry": _python_pm,
    "pdm": _python_pm,
    "hatch": _python_pm,
    "pipenv": _python_pm,
    "rye": _python_pm,
    "cargo": _cargo,
    "go": _go,
    "mix": _mix,
    "bundle": _bundle,
    "bundler": _bundle,
    "gem": _gem,
    "composer": _composer,
    "dotnet": _dotnet,
    "dart": _dart,
    "flutter": _dart,
    "make": _make,
    "rake": _rake,
    "rails": _rails,
    "mvn": _mvn,
    "mvnw": _mvn,
    "docker": _docker,
    "docker-compose": _docker,
    "just": _just,
    "gradle": _gradle,
    "jupyter": _jupyter,
    "flask": _flask,
    "gradlew": _gradle,
    "sbt": _sbt,
    "maturin": _subcommands("build", "develop", "dev", "sdist", "new", "init", "list-python", "generate-ci", "help"),
    "wasm-pack": _subcommands("build", "test", "new", "pack", "help"),
    "rebar3": _rebar3,
    "lerna": _js_tool,
    "nx": _js_tool,
    "turbo": _js_tool,
    "changeset": _js_tool,
    "expo": _js_tool,
    "task": _just,
    "ctest": _runs_through("--test-command", "--build-and-test"),
    "meson": _runs_through(subcommands=("devenv",)),
    "tox": _runs_through("--exec", "--override", subcommands=("exec",), letters="x"),
    "nox": _nox_cmake,
    "cmake": _nox_cmake,
    "gcc": _compiler,
    "g++": _compiler,
    "cc": _compiler,
    "c++": _compiler,
    "clang": _compiler,
    "clang++": _compiler,
    "manage.py": _django,
    "django-admin": _django,
    "artisan": _artisan,
    "pre-commit": _pre_commit,
    "nvm": _version_manager,
    "fnm": _version_manager,
    "volta": _version_manager,
    "asdf": _version_manager,
    "mise": _version_manager,
    "pyenv": _version_manager,
    "rbenv": _version_manager,
    "find": _find,
    "fd": _fd,
    "sort": _sort,
    "rg": _rg,
    "printf": _printf,
    "cd": _cd,
    "curl": _curl,
    "publish": _refuse_words("program", "publishes", "publish"),
}


def policy_refusals(call: Call, build_folders: frozenset[str]) -> Refused:
    """What the policy of `call`'s program refuses (rule, what), or [] when it has none or admits it."""
    if call.family == "rm":
        return _rm(call, build_folders)
    destroys = destroys_data(call)
    if call.family in INTERPRETERS and call.family not in _POLICIES:
        return _interpreter(call) + destroys
    policy = _POLICIES.get(call.family)
    return (policy(call) if policy is not None else []) + destroys


# Wrappers: the command they run after their own options (`uv run pytest` runs `pytest`).
_WRAPS_AFTER = {
    ("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("pipenv", "run"), ("rye", "run"),
    ("pnpm", "exec"), ("yarn", "exec"), ("bundle", "exec"), ("bundler", "exec"), ("npm", "exec"), ("npm", "x"),
    ("yarn", "node"), ("bun", "run"),
}  # fmt: skip


def wrapped_command(call: Call) -> tuple[str, list[str]] | Refused | None:
    """The command a wrapper runs (`uv run pytest` -> (`pytest`, [])), None when `call` wraps nothing, or what it
    refuses when the wrapper itself fetches what it runs (`npx pkg@1.0`, `npx --yes`, `npm exec --package`)."""
    args = list(call.args)
    family = call.family
    words = positionals(args, family)
    fetchers = ("npx", "pnpx", "bunx")
    if family in fetchers or (family, words[0] if words else "") in {("npm", "exec"), ("npm", "x")}:
        own = args[: args.index(words[1 if family == "npm" else 0])] if len(words) > (family == "npm") else args
        if any(a in ("-y", "--yes", "-p", "-c") or a.startswith(("--package", "--call")) for a in own):
            return [("install", f"`{family} --yes`/`--package`/`--call` fetches or runs what it is given")]
    if family == "yarn" and words[:1] == ["node"]:
        return ("node", args[args.index("node") + 1 :])
    if family == "bun" and words[:1] == ["run"] and len(words) > 1 and _script_name(words[1], call):
        return None  # a script of package.json by name (`bun run test`), not a program
    if family not in ("npx", "pnpx", "bunx", "time", "timeout") and not (words and (family, words[0]) in _WRAPS_AFTER):
        return None
    rest = args[args.index(words[0]) + 1 :] if family not in ("npx", "pnpx", "bunx", "time", "timeout") else args
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag in value_flags(family) and rest and "=" not in flag:
            rest.pop(0)
    if family == "timeout" and rest:
        rest.pop(0)  # the duration
    if rest and rest[0] == "--":
        rest.pop(0)
    if not rest:
        return None
    inner = rest[0]
    if family in fetchers:
        if _PACKAGE_AT_VERSION.match(inner):
            return [("install", f"`{family} {_clip(inner)}` fetches and runs a package by version")]
        if program_family(inner) not in JS_TOOLS and inner not in call.packages:
            return [("install", f"`{family} {_clip(inner)}` fetches a package the project does not declare")]
    return (inner, rest[1:])
