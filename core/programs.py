"""The programs a lesson may tell an agent to run, and how each may be run.

The vocabulary of the allow-list (`core.allowlist`): which programs are known toolchains, local utilities,
filters a pipe may feed, interpreters and wrappers, and for the programs that can install, publish, reach the
network or run code through their own options (git, package managers, interpreters, curl, make, ...), the policy
that judges each. Each policy is a pure function of the command's words that says what it refuses; anything a policy
does not know for a program that has one is refused, not guessed. The policies live one module an ecosystem
(`core.policy_git`, `core.policy_javascript`, ...); they share `core.program_calls` (the call as a policy reads it)
and `core.program_tasks` (tasks and scripts by name) and import no other policy. The interpreters' policy lives
here, beside the table: the file an interpreter runs is judged by its own program's policy.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import PurePosixPath

import re2

from core import (
    policy_builds,
    policy_git,
    policy_javascript,
    policy_python,
    policy_services,
    policy_toolchains,
    policy_utilities,
)
from core.policy_javascript import JS_TOOLS
from core.program_calls import PACKAGE_AT_VERSION, Call, Refused, clip, positionals, value_flags
from core.program_tasks import destroys_data, script_name, unvetted_refusals

__all__ = [
    "FILTERS",
    "INTERPRETERS",
    "PRIVILEGE",
    "RUNS_ANYTHING",
    "SHELLS",
    "known_program",
    "policy_refusals",
    "program_family",
    "wrapped_command",
]


TOOLCHAIN = JS_TOOLS | frozenset(
    # Python
    "python pip uv uvx poetry pdm hatch pipenv rye pytest py.test tox nox ruff black isort flake8 pylint mypy"
    " pyright basedpyright ty coverage pre-commit sphinx-build mkdocs alembic django-admin uvicorn gunicorn flask"
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
_SCRIPT_FILE = re2.compile(r"^[^-].*\.(?:py|pyw|js|mjs|cjs|ts|mts|cts|jsx|tsx|rb|pl|php|sh|bash|zsh|exs|ex|lua)$")


@lru_cache(maxsize=4096)  # every word of a sentence is asked whether it names a program
def program_family(program: str) -> str:
    """The name a program is judged by: its file name, versions folded (`python3.12` -> `python`)."""
    name = PurePosixPath(program).name if "/" in program else program
    match = _VERSIONED.match(name)
    return match.group(1) if match else {"pip3": "pip", "gmake": "make"}.get(name, name)


def known_program(name: str) -> bool:
    """True when `name` is a program the allow-list knows of, to run or to refuse."""
    return program_family(name) in KNOWN


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
        return policy_javascript.deno_bun(call)
    if family in ("elixir", "iex", "erl"):
        inline = {"-e", "--eval", "-eval", "-r", "--require"}
        return [("inline_code", f"`{family}` is given code inline")] if set(args) & inline else []
    if family == "node" and args[:1] == ["--run"]:
        # Node's own script runner runs a script the project's package.json names, as `npm run` does.
        if len(args) > 1 and script_name(args[1], call):
            return []
        return [("program", f"`node --run {clip(args[1]) if len(args) > 1 else ''}` is not a script lessons may run")]
    safe = _SHELL_SAFE_FLAGS if family in SHELLS else _SAFE_INTERPRETER_FLAGS.get(family, set())
    i = 0
    while i < len(args):
        arg = args[i]
        if family == "python" and arg == "-m":
            module = args[i + 1] if i + 1 < len(args) else ""
            if module == "pip":
                return policy_python.pip(Call("pip", tuple(args[i + 2 :]), call.vouched))
            if module in ("cProfile", "profile"):  # runs a file or module of its own options, as python would
                return _profiled(call, args[i + 2 :])
            if module in _POLICIES and module in TOOLCHAIN:  # `python -m flask run`: as the tool itself
                return _POLICIES[module](Call(module, tuple(args[i + 2 :]), call.vouched, call.packages))
            if module in _PY_MODULES or program_family(module) in TOOLCHAIN or module in call.vouched:
                return []
            return [("program", f"`python -m {clip(module)}` is not a module lessons may run")]
        if i == len(args) - 1 and arg in ("-c", "-e", "-E", "-r", "--eval", "-p"):
            return []  # the option named alone (`python -c`): it runs nothing
        if family == "node" and arg.split("=", 1)[0] in ("--inspect", "--inspect-brk", "--inspect-wait"):
            # The inspector runs code for whoever connects: on this machine (its default) only.
            if "=" in arg and policy_services.listens_on(arg.split("=", 1)[1]):
                return [("bypass", f"`node {clip(arg)}` serves a debugger that runs code to the network")]
            i += 1
            continue
        if arg == "-" or (arg.startswith("-") and arg.split("=", 1)[0] not in safe):
            return [("inline_code", f"`{family} {clip(arg)}` hands it code, or an option lessons do not pass")]
        if not arg.startswith("-"):
            if _SCRIPT_FILE.match(arg) or "/" in arg or family in ("python", "ruby", "perl", "php"):
                # The file it runs (the path rules keep it inside the project), judged as that program when it
                # has a policy of its own (`python manage.py shell -c`, `ruby bin/rails runner`).
                script = program_family(arg)
                as_script = Call(script, tuple(args[i + 1 :]), call.vouched, call.packages)
                own = _POLICIES.get(script)
                return (own(as_script) if own is not None else []) + destroys_data(as_script)
            return [("inline_code", f"`{family} {clip(arg)}` is not a file of the project")]
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


def _refuse_words(rule: str, detail: str, *names: str) -> Callable[[Call], Refused]:
    def policy(call: Call) -> Refused:
        words = call.positionals()
        return [(rule, f"`{call.family} {words[0]}` {detail}")] if words and words[0] in names else []

    return policy


_POLICIES: dict[str, Callable[[Call], Refused]] = {
    "git": policy_git.git,
    "gh": policy_git.gh,
    "npm": policy_javascript.npm,
    "pnpm": policy_javascript.js_pm,
    "yarn": policy_javascript.js_pm,
    "bun": _interpreter,
    "pip": policy_python.pip,
    "uv": policy_python.uv,
    "uvx": policy_python.uvx,
    "poetry": policy_python.python_pm,
    "pdm": policy_python.python_pm,
    "hatch": policy_python.python_pm,
    "pipenv": policy_python.python_pm,
    "rye": policy_python.python_pm,
    "cargo": policy_toolchains.cargo,
    "go": policy_toolchains.go,
    "mix": policy_toolchains.mix,
    "bundle": policy_toolchains.bundle,
    "bundler": policy_toolchains.bundle,
    "gem": policy_toolchains.gem,
    "composer": policy_toolchains.composer,
    "dotnet": policy_toolchains.dotnet,
    "dart": policy_toolchains.dart,
    "flutter": policy_toolchains.dart,
    "make": policy_builds.make,
    "rake": policy_builds.rake,
    "rails": policy_services.rails,
    "mvn": policy_builds.mvn,
    "mvnw": policy_builds.mvn,
    "docker": policy_services.docker,
    "docker-compose": policy_services.docker,
    "just": policy_builds.just,
    "gradle": policy_builds.gradle,
    "jupyter": policy_services.jupyter,
    "flask": policy_services.flask,
    "gradlew": policy_builds.gradle,
    "sbt": policy_builds.sbt,
    "maturin": policy_builds.only_subcommands(
        "build", "develop", "dev", "sdist", "new", "init", "list-python", "generate-ci", "help"
    ),
    "wasm-pack": policy_builds.only_subcommands("build", "test", "new", "pack", "help"),
    "rebar3": policy_toolchains.rebar3,
    "lerna": policy_javascript.js_tool,
    "nx": policy_javascript.js_tool,
    "turbo": policy_javascript.js_tool,
    "changeset": policy_javascript.js_tool,
    "expo": policy_javascript.js_tool,
    "task": policy_builds.just,
    "ctest": policy_builds.runs_through("--test-command", "--build-and-test"),
    "meson": policy_builds.runs_through(subcommands=("devenv",)),
    "tox": policy_builds.runs_through("--exec", "--override", subcommands=("exec",), letters="x"),
    "nox": policy_builds.nox_cmake,
    "cmake": policy_builds.nox_cmake,
    "gcc": policy_builds.compiler,
    "g++": policy_builds.compiler,
    "cc": policy_builds.compiler,
    "c++": policy_builds.compiler,
    "clang": policy_builds.compiler,
    "clang++": policy_builds.compiler,
    "manage.py": policy_services.django,
    "django-admin": policy_services.django,
    "artisan": policy_services.artisan,
    "pre-commit": policy_builds.pre_commit,
    "nvm": policy_toolchains.version_manager,
    "fnm": policy_toolchains.version_manager,
    "volta": policy_toolchains.version_manager,
    "asdf": policy_toolchains.version_manager,
    "mise": policy_toolchains.version_manager,
    "pyenv": policy_toolchains.version_manager,
    "rbenv": policy_toolchains.version_manager,
    "find": policy_utilities.find,
    "fd": policy_utilities.fd,
    "sort": policy_utilities.sort,
    "rg": policy_utilities.rg,
    "printf": policy_utilities.printf,
    "cd": policy_utilities.cd,
    "curl": policy_utilities.curl,
    "publish": _refuse_words("program", "publishes", "publish"),
}


def policy_refusals(call: Call, build_folders: frozenset[str]) -> Refused:
    """What the policy of `call`'s program refuses (rule, what), or [] when it has none or admits it."""
    if call.family == "rm":
        return policy_utilities.rm(call, build_folders)
    destroys = destroys_data(call)
    if call.family in INTERPRETERS and call.family not in _POLICIES:
        return _interpreter(call) + destroys
    policy = _POLICIES.get(call.family)
    if policy is None and not known_program(call.family):
        return unvetted_refusals(call) + destroys  # vouched for running, not for all it can do
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
    if family == "bun" and words[:1] == ["run"] and len(words) > 1 and script_name(words[1], call):
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
        if PACKAGE_AT_VERSION.match(inner):
            return [("install", f"`{family} {clip(inner)}` fetches and runs a package by version")]
        if program_family(inner) not in JS_TOOLS and inner not in call.packages:
            return [("install", f"`{family} {clip(inner)}` fetches a package the project does not declare")]
    return (inner, rest[1:])
