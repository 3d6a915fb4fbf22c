"""Other languages' toolchains and the managers of runtimes' versions: cargo, go, mix, bundler, gem, composer, ...

Rust, Go, Elixir and Erlang, Ruby, PHP, .NET and Dart build, test and run the project; installing a package or a
binary by name and publishing are refused. nvm, mise, asdf and kin install or use a runtime's version, nothing else.
"""

from __future__ import annotations

import re2

from core.program_calls import PACKAGE_AT_VERSION, Call, Refused, clip, install_refusals, long_option, short_option
from core.program_tasks import script_name

__all__ = [
    "bundle",
    "cargo",
    "composer",
    "dart",
    "dotnet",
    "gem",
    "go",
    "mix",
    "rebar3",
    "version_manager",
]


_CARGO_ALLOWED = frozenset(
    "build b check c test t run r fmt clippy doc d bench clean update tree metadata new init vendor fix add remove"
    " generate-lockfile pkgid locate-project version help xtask"
    # cargo's best-known plugins, each `cargo-<name>` installed on purpose
    " nextest insta llvm-cov watch deny audit outdated udeps expand tarpaulin machete hack sort make".split()
)


def cargo(call: Call) -> Refused:
    """cargo: its own commands and best-known plugins, `cargo add` only of declared crates, never a `--config` that
    sets what it runs."""
    if any(long_option(a, "--config", 5) or a == "-Z" for a in call.args):
        return [("inline_code", "`cargo --config` can set the command cargo runs")]
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub in ("install", "binstall"):
        return [("install", f"`cargo {sub}` installs a binary by name")]
    if sub not in _CARGO_ALLOWED:
        return [("program", f"`cargo {clip(sub)}` is not a cargo command lessons may run")]
    if sub == "add":
        return install_refusals(call, 1, "cargo add")
    if sub == "watch":
        return _cargo_watch(call)
    return []


def _cargo_watch(call: Call) -> Refused:
    """`cargo watch -x test`: each `-x` is a cargo command, judged as one; `-s`/`--shell` and what follows `--`
    are shell command lines."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg == "--" or long_option(arg, "--shell", 4) or short_option(arg, "s"):
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
            if not inner or inner[0] == "watch" or cargo(Call("cargo", tuple(inner), call.vouched, call.packages)):
                return [("inline_code", f"`cargo watch -x {clip(value)}` runs a cargo command lessons do not run")]
    return []


_GO_ALLOWED = frozenset("build test run vet fmt mod generate list version doc clean work env help".split())


def go(call: Call) -> Refused:
    """go: its own commands; never an install by name, an `-exec` program, a change to go's settings, nor `go run
    pkg@version`."""
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub in ("install", "get"):
        return [("install", f"`go {sub}` installs a module by name")]
    if sub not in _GO_ALLOWED:
        return [("program", f"`go {clip(sub)}` is not a go command lessons may run")]
    if any(a.split("=", 1)[0] in ("-exec", "-toolexec", "-vettool", "--exec", "--toolexec") for a in call.args):
        return [("inline_code", f"`go {sub} -exec` runs a program of its choosing")]
    if sub == "env" and any(a in ("-w", "-u") for a in call.args):
        return [("bypass", "`go env -w` changes go's settings (proxies, checksums) for every project")]
    if sub == "run" and any(PACKAGE_AT_VERSION.match(w) for w in words[1:]):
        return [("install", "`go run pkg@version` fetches and runs a module")]
    return []


def mix(call: Call) -> Refused:
    """mix: never code given inline (`-e`), a shell command (`cmd`), nor an install or a publish by name."""
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


def bundle(call: Call) -> Refused:
    """bundler: its own commands, `bundle add` only of declared gems."""
    words = call.positionals()
    if not words:
        return []
    if words[0] not in _BUNDLE_ALLOWED:
        return [("program", f"`bundle {clip(words[0])}` is not a bundler command lessons may run")]
    if words[0] == "add":
        return install_refusals(call, 1, "bundle add")
    return []


def gem(call: Call) -> Refused:
    """gem: reading what is installed; installs and publishes are refused."""
    words = call.positionals()
    if words and words[0] in ("list", "env", "which", "contents", "info", "help"):
        return []
    return [("install", f"`gem {clip(' '.join(words[:2]))}` installs or publishes gems")]


_COMPOSER_ALLOWED = frozenset(
    "install update dump-autoload dumpautoload validate run-script run test show outdated audit check-platform-reqs"
    " diagnose licenses depends why why-not status help list".split()
)


def composer(call: Call) -> Refused:
    """composer: its own commands, never a package required or a project created by name."""
    words = call.positionals()
    if words and words[0] in ("require", "create-project", "global"):
        return [("install", f"`composer {words[0]}` installs a package by name")]
    if words and words[0] not in _COMPOSER_ALLOWED:
        return [("program", f"`composer {clip(words[0])}` is not a composer command lessons may run")]
    if words[:1] == ["update"]:
        return install_refusals(call, 1, "composer update")
    return []


def dotnet(call: Call) -> Refused:
    """dotnet: never a package or a tool installed by name, nor a change to the package sources."""
    words = call.positionals()
    if words[:2] in (["add", "package"], ["new", "install"]) or words[:1] == ["tool"]:
        return [("install", f"`dotnet {' '.join(words[:2])}` installs a package by name")]
    if words[:1] == ["nuget"]:
        return [("program", "`dotnet nuget` publishes or changes package sources")]
    return []


def dart(call: Call) -> Refused:
    """dart and flutter: never a package added by name, a publish, nor a change to the package's credentials."""
    words = call.positionals()
    if words[:1] == ["pub"] and len(words) > 1 and words[1] in ("add", "global"):
        return [("install", f"`{call.family} pub {words[1]}` installs a package by name")]
    if words[:1] == ["pub"] and len(words) > 1 and words[1] in ("publish", "lish", "token", "uploader"):
        return [("program", f"`{call.family} pub {words[1]}` publishes or changes the package's credentials")]
    return []


def rebar3(call: Call) -> Refused:
    """rebar3: never a publish on Hex, nor code given inline to its shell."""
    words = call.positionals()
    if words[:1] == ["hex"] and words[1:2] != ["build"]:
        return [("program", f"`rebar3 hex {clip(' '.join(words[1:2]))}` publishes or changes the package on Hex")]
    if words[:1] in (["shell"], ["eval"]) and any(a in ("--eval", "--script") for a in call.args):
        return [("inline_code", "`rebar3 shell --eval` runs code given inline")]
    return []


_RUNTIMES = frozenset(
    "node nodejs npm pnpm yarn python ruby go golang java deno bun rust erlang elixir php dotnet zig lua".split()
)


_VERSION_WORD = re2.compile(r"^(?:v?\d+(?:\.\d+)*|lts(?:/\w+)?|latest|system|node|stable)$")


def version_manager(call: Call) -> Refused:
    """nvm, mise, asdf and kin: a runtime's version to install or use (`node@20`, `3.12`), nothing else."""
    words = call.positionals()
    if call.family == "mise" and words[:1] in (["run"], ["r"]) and len(words) > 1 and script_name(words[1], call):
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
            return [("install", f"`{call.family} {words[0]} {clip(word)}` installs something other than a runtime")]
    return []
