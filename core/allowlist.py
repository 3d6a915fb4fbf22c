"""What a lesson may tell an agent to run: an allow-list decided on the shell's own parse (`core.shell`).

A command is admitted when every simple command in it is admitted and nothing joins them but `&&`, `||`, `;` and
pipes into filters. A simple command is admitted when:

- its program is written as a plain word (not `c\\url`, `'cu'rl`, `$CMD`), and is a known build, test, lint or
  package toolchain, a local file utility, a program the project declares or the user's own prompts run, or a
  script inside the project (`./gradlew`, `scripts/test.sh`); never `sudo` and its kind;
- a pipe feeds it only if it is a filter (`tail`, `grep`, `jq`, ...): output is never piped into a shell or an
  interpreter;
- its words are literal (no `$(...)`, backticks, `<(...)`, `$VAR`), with no `NAME=value` before it;
- every path it names, and every redirection, stays inside the project (relative, no `..`, no `~`, no absolute
  path but `/dev/null`), and names no secret-bearing dotfile;
- no flag weakens a safeguard (`--force`, `--no-verify`, `--break-system-packages`, a registry or index of someone
  else's, `git push +ref`, `git reset --hard`, `-rf` anywhere but a build folder such as `node_modules`);
- an interpreter runs a file or a module, never code given inline (`python -c`, `node -e`, `sh -c`, `eval`);
- it installs no package by name (a lockfile install is fine; `npm install left-pad` is not a lesson to obey blind);
- a link it names leads to a host the lesson may name (`core.links`): none in a keyless lesson, in a model's lesson
  only loopback or a host the user's own prompts named.

Anything else is refused with the rule that refused it, and the entry waits in `playbook review`. Pure functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

import re2

from core.links import Link, find_links, vouched_host
from core.shell import SimpleCommand, parse_command

__all__ = [
    "BUILD_FOLDERS",
    "PROJECT_DOTFILES",
    "CommandRule",
    "Refusal",
    "Vouched",
    "command_refusals",
    "is_program",
    "link_refusals",
    "path_refusal",
    "words_refusals",
]

CommandRule = Literal[
    "syntax", "program", "privilege", "pipe", "inline_code", "substitution", "environment", "path", "bypass",
    "install", "link",
]  # fmt: skip


@dataclass(frozen=True)
class Refusal:
    """Why a command (or a part of an entry) is not admitted: the rule, and what in it the rule refused."""

    rule: str
    detail: str


@dataclass(frozen=True)
class Vouched:
    """What the user and their projects vouch for: programs the projects declare or the user's prompts run, hosts,
    scripts (Unicode) and languages the user's prompts use, and whether links may appear at all (`links=False` for
    a keyless lesson)."""

    programs: frozenset[str] = field(default_factory=frozenset)
    hosts: frozenset[str] = field(default_factory=frozenset)
    scripts: frozenset[str] = field(default_factory=frozenset)
    languages: frozenset[str] = field(default_factory=frozenset)
    links: bool = True


# --- the vocabulary --------------------------------------------------------------------------------------------

_TOOLCHAIN = frozenset(
    # Python
    "python python3 pip pip3 uv uvx poetry pdm hatch pipenv rye pytest py.test tox nox ruff black isort flake8"
    " pylint mypy pyright basedpyright coverage pre-commit sphinx-build mkdocs alembic django-admin uvicorn"
    " gunicorn flask ipython jupyter pyinstaller maturin"
    # JavaScript / TypeScript
    " node npm npx pnpm pnpx yarn bun bunx deno tsc tsx ts-node vitest jest mocha ava eslint prettier biome vite"
    " next nuxt webpack webpack-cli esbuild rollup parcel turbo nx lerna playwright cypress storybook astro"
    " svelte-kit ng vue-cli-service expo react-native tailwindcss postcss stylelint changeset"
    # Rust, Go, Elixir, Erlang, Ruby, JVM, .NET, PHP, Swift, Dart, Zig
    " cargo rustc rustup rustfmt cargo-clippy wasm-pack trunk go gofmt goimports golangci-lint staticcheck gotestsum"
    " mix elixir iex erl rebar3 ruby bundle bundler rake rspec rails rubocop java javac mvn mvnw gradle gradlew"
    " kotlinc sbt dotnet php composer phpunit artisan swift swiftc xcodebuild flutter dart zig"
    # C and C++, build systems, linters of anything
    " make gmake cmake ctest ninja meson bazel bazelisk just task gcc g++ cc c++ clang clang++ clang-format"
    " clang-tidy shellcheck shfmt hadolint actionlint yamllint markdownlint vale git gh"
    .split()
)  # fmt: skip
# Local file utilities: they read and write what they are given, which the path rules keep inside the project.
_UTILITIES = frozenset(
    "ls cat head tail grep egrep fgrep rg ag find fd wc sort uniq diff cmp echo printf pwd which type tree stat file"
    " du df jq yq less more cut tr basename dirname realpath readlink date true false test sleep touch mkdir rmdir"
    " cp mv rm ln chmod cd time timeout column nl fold tee comm paste od hexdump xxd sha256sum shasum md5sum"
    " uname whoami hostname nproc lsof ps kill pgrep pkill curl".split()
)
# Programs a pipe may feed: they only transform the text they read.
_FILTERS = frozenset(
    "head tail grep egrep fgrep rg wc sort uniq cut tr jq yq less more column nl fold tee cat comm paste od"
    " hexdump xxd sha256sum shasum md5sum".split()
)
_PRIVILEGE = frozenset("sudo doas su pkexec runas gsudo sudo-rs".split())
_EVALUATORS = frozenset("eval exec source xargs env nohup command builtin trap".split())
# Interpreters, and the flags that hand them code inline.
_INLINE = {
    "python": {"-c"},
    "node": {"-e", "--eval", "-p", "--print"},
    "deno": {"eval"},
    "bun": {"-e", "--eval", "-p", "--print"},
    "ruby": {"-e"},
    "perl": {"-e", "-E"},
    "php": {"-r"},
    "bash": {"-c"},
    "sh": {"-c"},
    "zsh": {"-c"},
    "dash": {"-c"},
    "fish": {"-c"},
    "pwsh": {"-c", "-command", "-encodedcommand", "-e", "-ec"},
    "powershell": {"-c", "-command", "-encodedcommand", "-e", "-ec"},
    "elixir": {"-e", "--eval"},
    "iex": {"-e", "--eval"},
    "erl": {"-eval"},
}
# Standard-library modules `python -m` runs as tools.
_PY_MODULES = frozenset(
    "unittest venv http.server json.tool compileall doctest timeit cProfile pdb build pip ensurepip site pydoc"
    " py_compile tabnanny trace zipapp pstats tokenize ast".split()
)
_SHELLS = frozenset("bash sh zsh dash fish ksh csh tcsh pwsh powershell cmd".split())
_KNOWN = _TOOLCHAIN | _UTILITIES | _PRIVILEGE | _EVALUATORS | frozenset(_INLINE) | _SHELLS | _FILTERS
# Folders a build makes and a clean removes: `rm -rf` may name these and nothing else.
BUILD_FOLDERS = frozenset(
    "node_modules dist build target _build deps .venv venv __pycache__ .pytest_cache .mypy_cache .ruff_cache"
    " coverage htmlcov .coverage .next .nuxt .svelte-kit .turbo .parcel-cache .cache out tmp .tox .nox .gradle"
    " bin obj .eggs site public/build storybook-static".split()
)
# Dotfiles and dot-folders a project keeps and a lesson may name (the allow-list; `.netrc`, `.npmrc`, `.ssh` and
# every other dotfile are not on it, since what they hold is someone's credentials or the machine's own setup; nor
# are `.git`, `.claude`, `.vscode` and their kin, whose hooks, settings and tasks run commands).
PROJECT_DOTFILES = frozenset(
    (
        ".gitignore .gitattributes .gitmodules .gitkeep .github .gitlab-ci.yml .gitlab .mailmap .nvmrc"
        " .node-version .python-version .ruby-version .tool-versions .editorconfig .prettierrc"
        " .prettierrc.json .prettierrc.js .prettierignore .eslintrc .eslintrc.js .eslintrc.cjs .eslintrc.json"
        " .eslintignore .stylelintrc .babelrc .browserslistrc .dockerignore .pre-commit-config.yaml .flake8"
        " .pylintrc .coveragerc .ruff.toml .rustfmt.toml .formatter.exs .credo.exs .iex.exs .rspec"
        " .rubocop.yml .clang-format .clang-tidy .env.example .env.sample .env.template .husky .changeset"
        " .storybook .well-known .yarnrc.yml .yarn .swcrc .mocharc.json .nycrc .jshintrc .markdownlint.json"
        " .yamllint .hadolint.yaml .golangci.yml .goreleaser.yml .cargo .circleci .buildkite .vercelignore"
        " .terraform-version .sqlfluff .envrc.example .mise.toml .venv .tox .nox .pytest_cache .mypy_cache"
        " .ruff_cache .next .nuxt .svelte-kit .turbo .parcel-cache .cache .gradle .eggs .coverage .bin"
        " .DS_Store .env"
    ).split()
) | {".", ".."}
# Long options that switch a safeguard off, in any program's spelling. A prefix of one of them counts too (git and
# most option parsers accept `--forc` for `--force`).
_BYPASS_LONG = (
    "--force", "--force-with-lease", "--force-if-includes", "--no-verify", "--break-system-packages",
    "--no-preserve-root", "--insecure", "--no-check-certificate", "--allow-unauthenticated", "--unsafe-perm",
    "--dangerously-skip-permissions", "--dangerously-bypass-approvals-and-sandbox", "--trusted-host", "--registry",
    "--index-url", "--extra-index-url", "--allow-root", "--no-sandbox", "--yolo", "--skip-verify",
    "--disable-ssl-verification", "--ignore-certificate-errors", "--no-gpg-sign", "--admin", "--no-verify-ssl",
    "--allow-insecure", "--permission-mode", "--unsafe", "--disable-verification",
)  # fmt: skip
# Short options that mean the same, where they do: `git push -f`, not `git add -f`.
_BYPASS_SHORT: dict[tuple[str, str], set[str]] = {
    ("git", "push"): {"f", "d"},
    ("git", "commit"): {"n"},
    ("git", "branch"): {"D", "f"},
    ("git", "checkout"): {"f"},
    ("git", "switch"): {"f"},
    ("git", "tag"): {"f", "d"},
    ("git", "merge"): {"n"},
    ("npm", ""): {"f"},
    ("pnpm", ""): {"f"},
    ("yarn", ""): {"f"},
    ("pip", ""): {"i"},
}
_GIT_ALLOWED = frozenset(
    "status diff log show add commit checkout switch branch stash fetch pull push rebase merge tag blame grep reset"
    " ls-files ls-tree rev-parse rev-list remote worktree cherry-pick restore mv rm bisect describe shortlog"
    " submodule init clone reflog revert am apply format-patch range-diff whatchanged notes lfs sparse-checkout"
    " show-ref symbolic-ref cat-file count-objects fsck gc maintenance help version".split()
)
_GH_ALLOWED = {
    "pr": "view list create checkout diff status checks comment review edit ready close reopen merge".split(),
    "issue": "view list create comment edit close reopen status".split(),
    "run": "view list watch rerun download".split(),
    "workflow": "view list run".split(),
    "repo": "view clone".split(),
    "release": "view list download".split(),
    "auth": "status login".split(),
    "browse": [],
    "search": [],
    "label": ["list"],
    "status": [],
}
# Package managers: their own built-in commands that publish, log in or change where packages come from.
_PM_REFUSED = frozenset(
    "publish unpublish login logout adduser add-user token owner access deprecate dist-tag team star unstar org"
    " hook profile config set npm-config whoami yank".split()
)
_PM_INSTALL = frozenset("install i add isntall in ins inst insta instal update up upgrade dlx x".split())
_PACKAGE_MANAGERS = frozenset("npm pnpm yarn bun".split())
# Flags whose next word is their value (so the value is not read as a package, a URL or a path to check alone).
_VALUE_FLAGS = frozenset(
    "-r --requirement -c --constraint -e --editable -p --python --with --with-editable --with-requirements"
    " --env-file --directory --project --extra --group --package --filter -F -C --cwd --prefix -w --workspace"
    " -m -k -o --output -H --header -X --request -d --data --data-raw --data-binary -A --user-agent --reason"
    " --status -t --target --manifest-path --features -j --jobs -n --only -x --exec -T --upload-file -K"
    " --config -u --user -i --index-url --index --extra-index-url --registry -f --file -b --branch --count"
    " --timeout --maxfail --tb --lf -l --log-level --env --max-workers --grep --shard --project-name".split()
)
_HOME = re2.compile(r"^(?:~|\$HOME\b|\$\{HOME\}|%USERPROFILE%|%APPDATA%)")
_DRIVE = re2.compile(r"^[A-Za-z]:[\\/]")
_PROGRAM_SHAPE = re2.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]*$")
_VERSIONED = re2.compile(r"^(python|pip|ruby|node|perl|php)(\d+(?:\.\d+)*)?$")
_PACKAGE_AT_VERSION = re2.compile(r"^@?[A-Za-z0-9._/-]+@[A-Za-z0-9^~<>=.*+-]+$")
_NAMES_DEVICE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})


def _family(program: str) -> str:
    """`python3.12` -> `python`, `pip3` -> `pip`; other names unchanged."""
    match = _VERSIONED.match(program)
    return match.group(1) if match else program


def is_program(name: str, vouched: Vouched) -> bool:
    """True when `name` is a program the allow-list knows of (to run or to refuse), or one the user vouched for."""
    family = _family(PurePosixPath(name).name)
    return family in _KNOWN or family in vouched.programs


def path_refusal(word: str) -> Refusal | None:
    """The refusal for a path that leaves the project (absolute, home, `..`) or names a dotfile that is not a project
    file; None for anything else (a relative path inside the project, or a word that is no path)."""
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    value = value.removeprefix("@")  # curl's `-d @file`
    if not value or value in _NAMES_DEVICE or value in ("...", "…"):  # a device, or a placeholder
        return None
    if value.startswith("/") or _HOME.match(value) or _DRIVE.match(value) or value.startswith("\\\\"):
        return Refusal("path", f"`{_clip(value)}` is outside the project")
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if ".." in parts:
        return Refusal("path", f"`{_clip(value)}` climbs out of the folder with `..`")
    for part in parts:
        if part.startswith(".") and part not in PROJECT_DOTFILES and not part.startswith(".env."):
            return Refusal("path", f"`{_clip(value)}` names `{part}`, which is no project file lessons may name")
    return None


def _clip(text: str, most: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def _bypass_long(flag: str) -> str | None:
    name = flag.split("=", 1)[0].lower()
    if len(name) < 5:  # `--fo` could be anything
        return None
    for bypass in _BYPASS_LONG:
        if bypass == name or bypass.startswith(name):
            return bypass
    return None


def link_refusals(links: Iterable[Link], vouched: Vouched) -> list[Refusal]:
    """Why each of `links` may not reach an agent: no readable host, any link in a keyless lesson, or a host that is
    neither local nor named in the user's prompts."""
    found = []
    for link in links:
        if link.host is None:
            found.append(Refusal("link", link.problem or f"`{_clip(link.written)}` names no readable host"))
        elif not vouched.links:
            found.append(Refusal("link", f"a keyless lesson carries no link (`{_clip(link.written)}`)"))
        elif not vouched_host(link.host, vouched.hosts):
            found.append(Refusal("link", f"links to {link.host}, named in none of the user's prompts"))
    return found


def _positionals(args: Sequence[str]) -> list[str]:
    """The arguments that are not flags nor a flag's value."""
    out = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg.startswith("-") and len(arg) > 1:
            skip = arg in _VALUE_FLAGS
            continue
        out.append(arg)
    return out


def _is_package_name(arg: str) -> bool:
    return not (arg in (".", "..") or arg.startswith((".", "/", "~")) or ("/" in arg.rstrip("/") and "@" not in arg))


def _inner(program: str, args: list[str]) -> tuple[str, list[str]] | None:
    """The command a wrapper runs (`uv run pytest` -> `pytest`), or None when `program` wraps nothing."""
    wrapped_after = {
        ("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"), ("pipenv", "run"), ("rye", "run"),
        ("pnpm", "exec"), ("yarn", "exec"), ("bundle", "exec"), ("bundler", "exec"), ("npm", "exec"),
    }  # fmt: skip
    rest = list(args)
    if program in ("npx", "pnpx", "bunx", "time") or (args and (program, args[0]) in wrapped_after):
        if program not in ("npx", "pnpx", "bunx", "time"):
            rest = rest[1:]
        while rest and rest[0].startswith("-"):
            flag = rest.pop(0)
            if flag in _VALUE_FLAGS and rest and "=" not in flag:
                rest.pop(0)
        if rest and rest[0] == "--":
            rest.pop(0)
        return (rest[0], rest[1:]) if rest else None
    if program == "timeout":
        while rest and rest[0].startswith("-"):
            rest.pop(0)
        return (rest[1], rest[2:]) if len(rest) >= 2 else None
    return None


@dataclass
class _Judge:
    vouched: Vouched
    found: list[Refusal] = field(default_factory=list)

    def refuse(self, rule: str, detail: str) -> None:
        self.found.append(Refusal(rule, detail))

    def simple(self, command: SimpleCommand) -> None:
        if command.assignments:
            self.refuse("environment", f"`{_clip(command.assignments[0])}` is set before `{command.written}`")
        for sub in command.substitutions:
            if not _commit_message(sub.commands, sub.constructs):
                self.refuse("substitution", f"`{_clip(sub.text)}` runs a command inside another")
        for redirect in command.redirects:
            if redirect.heredoc or (redirect.operator.endswith("&") and (redirect.target or "").isdigit()):
                continue
            if redirect.target is None:
                self.refuse("substitution", f"a redirection to an expanded name (`{redirect.operator}`)")
            elif (refused := path_refusal(redirect.target)) is not None:
                self.refuse("path", f"redirects to {refused.detail.removeprefix('`')}".replace("` is", " which is"))
        words = command.words
        if any(w is None for w in words):
            shown = "the program" if words[0] is None else "an argument"
            if not command.substitutions or words[0] is None:
                self.refuse("substitution", f"{shown} of `{_clip(command.written)}` is expanded when it runs")
            if words[0] is None:
                return
        literal = [w for w in words if w is not None]
        self.program(command.written, literal[0], literal[1:], piped=command.piped)

    def program(self, written: str, program: str, args: list[str], *, piped: bool) -> None:
        if written != program or not program:
            self.refuse("syntax", f"the program `{_clip(written)}` is spelled with quotes or escapes")
            return
        name = PurePosixPath(program).name
        family = _family(name)
        self.found.extend(link_refusals((k for a in args for k in find_links(a)), self.vouched))
        if family in _PRIVILEGE:
            self.refuse("privilege", f"`{name}` runs a command as another user")
            return
        if family in _EVALUATORS:
            self.refuse("inline_code", f"`{name}` runs whatever it is given")
            return
        if piped and family not in _FILTERS:
            what = "an interpreter" if family in _INLINE or family in _SHELLS else "a program that is no filter"
            self.refuse("pipe", f"output is piped into `{name}`, {what}")
        if "/" in program:
            refused = path_refusal(program)
            if refused is not None:
                self.found.append(refused)
                return
        elif not _PROGRAM_SHAPE.match(program):
            self.refuse("syntax", f"`{_clip(program)}` is not a program name")
            return
        elif (
            family not in _TOOLCHAIN
            and family not in _UTILITIES
            and family not in _INLINE
            and family not in _SHELLS
            and name not in self.vouched.programs
        ):
            self.refuse("program", f"`{name}` is neither a known toolchain nor a program the project declares")
            return
        for arg in args:
            refused = path_refusal(arg)
            if refused is not None and not _is_url(arg):
                self.found.append(refused)
        self.flags(family, args)
        self.rules_of(family, args)

    def flags(self, family: str, args: list[str]) -> None:
        sub = next((a for a in args if not a.startswith("-")), "")
        short = _BYPASS_SHORT.get((family, sub), set()) | _BYPASS_SHORT.get((family, ""), set())
        for arg in args:
            if arg == "--":
                break
            if arg.startswith("--"):
                bypass = _bypass_long(arg)
                if bypass is not None:
                    self.refuse("bypass", f"`{_clip(arg)}` ({bypass}) switches a safeguard off")
            elif arg.startswith("-") and len(arg) > 1 and short and set(arg[1:]) & short and arg[1:].isalpha():
                self.refuse("bypass", f"`{family} {sub} {arg}` switches a safeguard off")

    def rules_of(self, family: str, args: list[str]) -> None:
        inline = _INLINE.get(family, set())
        if inline and any(a.lower() in inline for a in args[:-1]):  # a flag named alone (`python -c`) runs nothing
            self.refuse("inline_code", f"`{family}` is given code inline ({'/'.join(sorted(inline))})")
            return
        if family in _SHELLS and not _positionals(args):
            return
        if family == "rm":
            self.rm(args)
        elif family == "find" and (bad := {"-exec", "-execdir", "-ok", "-okdir", "-delete"} & set(args)):
            self.refuse("inline_code", f"`find {sorted(bad)[0]}` runs or deletes")
        elif family == "fd" and {"-x", "--exec", "-X", "--exec-batch"} & set(args):
            self.refuse("inline_code", "`fd --exec` runs a command")
        elif family == "git":
            self.git(args)
        elif family == "gh":
            self.gh(args)
        elif family == "curl":
            self.curl(args)
        elif family in _PACKAGE_MANAGERS or family in ("pip", "uv", "poetry", "pdm", "cargo", "go", "gem", "bundle",
                                                       "composer", "pipx", "uvx", "dotnet", "mix"):  # fmt: skip
            self.packages(family, args)
        elif family == "python" and len(args) >= 2 and args[0] == "-m":
            if args[1] == "pip":
                self.packages("pip", args[2:])
            elif args[1] not in _PY_MODULES:
                self.program(args[1], args[1], args[2:], piped=False)
        inner = _inner(family, args)
        if inner is not None:
            if family in ("npx", "pnpx", "bunx") and {"-y", "--yes"} & set(args):
                self.refuse("install", f"`{family} --yes` installs whatever it is asked to run")
            if family in ("npx", "pnpx", "bunx") and _PACKAGE_AT_VERSION.match(inner[0]):
                self.refuse("install", f"`{family} {_clip(inner[0])}` fetches and runs a package by version")
            else:
                self.program(inner[0], inner[0], inner[1], piped=False)

    def rm(self, args: list[str]) -> None:
        flags = [a for a in args if a.startswith("-")]
        strong = any(
            (f.startswith("--") and f in ("--recursive", "--force", "--dir"))
            or (not f.startswith("--") and set(f[1:]) & set("rRf"))
            for f in flags
        )
        targets = [a for a in args if not a.startswith("-")]
        if strong:
            for target in targets:
                if PurePosixPath(target.rstrip("/")).name not in BUILD_FOLDERS and not target.endswith(".egg-info"):
                    self.refuse("bypass", f"`rm {' '.join(flags)}` outside a build folder (`{_clip(target)}`)")
                    return

    def git(self, args: list[str]) -> None:
        rest = list(args)
        while rest and rest[0].startswith("-"):
            flag = rest.pop(0)
            if flag == "-c" or flag.startswith("--config-env") or flag.startswith("--exec-path"):
                self.refuse("environment", f"`git {flag}` changes git's configuration for the command")
                return
            if flag in ("-C", "--git-dir", "--work-tree", "--namespace") and rest:
                rest.pop(0)
        if not rest:
            return
        sub, more = rest[0], rest[1:]
        if sub not in _GIT_ALLOWED:
            self.refuse("program", f"`git {_clip(sub)}` is not a git command lessons may run")
            return
        if sub == "push" and any(a.startswith(("+", ":")) or a in ("--mirror", "--prune", "--delete") for a in more):
            self.refuse("bypass", "`git push` that overwrites or deletes a remote branch")
        elif sub == "reset" and {"--hard", "--merge", "--keep"} & set(more):
            self.refuse("bypass", "`git reset --hard` discards work")
        elif sub == "rebase" and ({"-x", "--exec"} & set(more) or any(a.startswith("--exec=") for a in more)):
            self.refuse("inline_code", "`git rebase --exec` runs a command")
        elif sub == "submodule" and "foreach" in more:
            self.refuse("inline_code", "`git submodule foreach` runs a command")
        elif sub == "stash" and more[:1] in (["drop"], ["clear"]):
            self.refuse("bypass", f"`git stash {more[0]}` discards work")
        elif sub == "restore" and not {"--staged", "-S"} & set(more):
            self.refuse("bypass", "`git restore` without `--staged` discards changes")
        elif sub == "checkout" and ("--" in more or "." in more):
            self.refuse("bypass", "`git checkout -- path` discards changes")
        elif sub == "branch" and {"--delete", "-d"} & set(more) and "-D" not in more:
            return

    def gh(self, args: list[str]) -> None:
        words = [a for a in args if not a.startswith("-")]
        if not words:
            return
        allowed = _GH_ALLOWED.get(words[0])
        if allowed is None or (allowed and len(words) > 1 and words[1] not in allowed):
            self.refuse("program", f"`gh {' '.join(words[:2])}` is not a gh command lessons may run")

    def curl(self, args: list[str]) -> None:
        for arg in _positionals(args):
            if not _is_url(arg):
                self.found.extend(link_refusals(find_links(f"http://{arg}"), self.vouched))

    def packages(self, family: str, args: list[str]) -> None:
        words = [a for a in args if not a.startswith("-")]
        if not words:
            return
        sub = words[0]
        if family in _PACKAGE_MANAGERS and sub in _PM_REFUSED:
            self.refuse("program", f"`{family} {sub}` publishes, logs in or changes where packages come from")
            return
        if family in ("cargo", "gem", "dotnet", "mix", "uv", "poetry", "pdm") and sub in (
            "publish", "login", "owner", "yank", "push", "nuget", "hex.publish", "hex.user", "config",
        ):  # fmt: skip
            self.refuse("program", f"`{family} {sub}` publishes or logs in")
            return
        installs = {
            "npm": _PM_INSTALL, "pnpm": _PM_INSTALL, "yarn": _PM_INSTALL, "bun": _PM_INSTALL,
            "pip": {"install", "download"}, "uv": {"add", "tool", "pip"}, "poetry": {"add"}, "pdm": {"add"},
            "cargo": {"install", "add"}, "go": {"install", "get"}, "gem": {"install"}, "bundle": {"add"},
            "composer": {"require"}, "pipx": {"install", "run", "inject"}, "dotnet": {"add"},
            "mix": {"archive.install", "escript.install"},
        }.get(family, set())  # fmt: skip
        if family == "uvx":
            self.refuse("install", "`uvx` fetches and runs a package")
            return
        if sub not in installs:
            return
        named = [w for w in _positionals(args)[1:] if _is_package_name(w)]
        if family == "uv" and sub == "pip":
            named = [w for w in _positionals(args)[2:] if _is_package_name(w)] if words[1:2] == ["install"] else []
        if family == "uv" and sub == "tool":
            named = words[2:] if words[1:2] in (["install"], ["run"]) else []
        if family == "go" and sub == "get":
            named = named or ["(modules)"]
        if family == "dotnet":
            named = words[2:] if words[1:2] == ["package"] else []
        if named:
            self.refuse("install", f"`{family} {sub} {_clip(' '.join(named), 40)}` installs a package by name")


def _is_url(word: str) -> bool:
    return "://" in word


def _commit_message(commands: Sequence[SimpleCommand], constructs: Sequence[str]) -> bool:
    """`$(cat <<'EOF' ... EOF)`: a commit message written as a heredoc, the one substitution lessons keep (it runs
    nothing but `cat` on the text that follows)."""
    return (
        len(commands) == 1
        and commands[0].words == ("cat",)
        and bool(commands[0].redirects)
        and all(r.heredoc for r in commands[0].redirects)
        and not constructs
    )


_INLINE_HEREDOC = re2.compile(r"<<-?\s*(['\"]?)(\w+)(['\"]?)\s+(.*?)\s+(\w+)\s*\)")


def _written_heredoc(line: str) -> str:
    """A heredoc written on one line, as prose writes it (`$(cat <<'EOF' ... EOF)`), in the lines a shell reads."""
    match = _INLINE_HEREDOC.search(line)
    if match is None or match.group(2) != match.group(5):
        return line
    start, end = match.span()
    tag = match.group(2)
    return f"{line[:start]}<<{match.group(1)}{tag}{match.group(3)}\n{match.group(4)}\n{tag}\n){line[end:]}"


def command_refusals(line: str, vouched: Vouched) -> list[Refusal]:
    """Why the command `line` may not reach an agent (every rule that refuses it), or [] when it is admitted."""
    parsed = parse_command(_written_heredoc(line) if "<<" in line else line)
    judge = _Judge(vouched)
    for construct in parsed.constructs:
        rule = "environment" if construct in ("variable assignment", "declaration command") else "syntax"
        judge.refuse(rule, f"a shell construct lessons do not run ({construct})")
    for command in parsed.commands:
        judge.simple(command)
    return _unique(judge.found)


def words_refusals(words: Sequence[str], vouched: Vouched, *, folder: str | None = None) -> list[Refusal]:
    """Why a command given as its words (a typed lesson's) may not reach an agent, or []."""
    judge = _Judge(vouched)
    if folder is not None and (refused := path_refusal(folder)) is not None:
        judge.found.append(refused)
    if words:
        judge.program(words[0], words[0], list(words[1:]), piped=False)
    return _unique(judge.found)


def _unique(found: list[Refusal]) -> list[Refusal]:
    return list(dict.fromkeys(found))
