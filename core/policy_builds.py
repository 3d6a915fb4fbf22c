"""The build tools and task runners that run a project's own build files and tasks (make, maven, gradle, ...).

make, rake, just, task, nox, cmake, ctest, meson, tox, maven, gradle, sbt, the C compilers and pre-commit: a rule or
a command given inline, a build file that is no build file, and a task that publishes or deploys are refused.
"""

from __future__ import annotations

from collections.abc import Callable

import re2

from core.program_calls import Call, Refused, clip, long_option, short_option
from core.program_tasks import task_refusals

__all__ = [
    "compiler",
    "gradle",
    "just",
    "make",
    "mvn",
    "nox_cmake",
    "only_subcommands",
    "pre_commit",
    "rake",
    "runs_through",
    "sbt",
]


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
            return [("inline_code", f"`{call.family} {arg} {clip(value)}` runs a file that is no {call.family} file")]
    return []


# make's options a lesson may pass: where and how many jobs, which files, how much it prints, rebuild all. Not those
# that make a target count as done without running it (`-t`, `-q`, `-n`, `-o`, `-W`), carry on past errors (`-i`,
# `-k`) or let the environment override the Makefile (`-e`): `make -t test` leaves every later `make test` a no-op.
_MAKE_FLAGS = frozenset("s B w r R S d p v h".split())  # one letter each, which may be written together (`-sB`)
_MAKE_VALUE_FLAGS = frozenset("C f I O".split())  # a value on the flag or after it (`-Cdocs`, `-C docs`)
_MAKE_NUMBER_FLAGS = frozenset("j l".split())  # a number on the flag or after it (`-j4`, `-j 4`)
_MAKE_LONG = frozenset(
    "--jobs --load-average --max-load --directory --file --makefile --include-dir --output-sync --silent --quiet"
    " --always-make --print-directory --no-print-directory --no-builtin-rules --no-builtin-variables --trace --debug"
    " --no-keep-going --stop --print-data-base --warn-undefined-variables --version --help".split()
)
_NUMBER = re2.compile(r"^[0-9]+(?:\.[0-9]+)?$")


def _make_options(args: tuple[str, ...]) -> Refused:
    """The first option of `args` that is no option a lesson may pass to make."""
    for i, arg in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if not arg.startswith("-") or arg == "-":
            continue
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            numeric = name in ("--jobs", "--load-average", "--max-load")
            if name in _MAKE_LONG and (not numeric or _NUMBER.match(value if eq else nxt)):
                continue
        elif arg[1] in _MAKE_VALUE_FLAGS:
            continue
        elif arg[1] in _MAKE_NUMBER_FLAGS:
            if _NUMBER.match(arg[2:] or nxt):
                continue
        elif all(c in _MAKE_FLAGS for c in arg[1:]):
            continue
        return [("bypass", f"`make {clip(arg)}` is no option lessons may pass to make")]
    return []


def make(call: Call) -> Refused:
    """make: never a rule given inline (`--eval`) nor a variable its recipes run (`CC='sh -c ...'`), only make's own
    files and options that run what they name (not `-t`, `-i`, `-k`, `-e`), and a task named like a routine or
    declared by the project."""
    if any(long_option(a, "--eval", 4) or short_option(a, "E") for a in call.args):
        return [("inline_code", "`make --eval` runs a rule given inline")]
    if refused := _make_options(call.args):
        return refused
    for arg in call.args:  # `make CC='sh -c ...'`: a variable the recipes run
        name, eq, value = arg.partition("=")
        if eq and not arg.startswith("-") and (_SHELLISH.search(value) or name.upper() in _MAKE_PROGRAMS):
            return [("inline_code", f"`make {clip(arg)}` sets what the recipes run")]
    targets = [w for w in call.positionals() if "=" not in w and not _NUMBER.match(w)]  # `-j 4`: a number is no target
    return _build_file(call, ("-f", "--file", "--makefile")) + task_refusals(call, targets, "make")


def rake(call: Call) -> Refused:
    """rake: never code given inline (`-e`), only rake's own files, no release task the project does not declare."""
    inline = ("-e", "--execute", "-p", "--execute-print", "-E", "--execute-continue")
    if set(call.args) & set(inline):
        return [("inline_code", "`rake -e` runs code given inline")]
    found = _build_file(call, ("-f", "--rakefile", "-r", "--require", "-R", "--rakelibdir"))
    return found + task_refusals(call, [w.split("[", 1)[0] for w in call.positionals()], "rake")


def nox_cmake(call: Call) -> Refused:
    """nox and cmake: only their own files, and of `cmake -E` only the file commands, never a program."""
    args = list(call.args)
    if call.family == "cmake" and "-E" in args:
        tool = args[args.index("-E") + 1] if args.index("-E") + 1 < len(args) else ""
        if tool not in ("copy", "copy_directory", "copy_if_different", "make_directory", "remove", "rm",
                        "remove_directory", "echo", "touch", "capabilities", "compare_files", "sha256sum"):  # fmt: skip
            return [("inline_code", f"`cmake -E {clip(tool)}` runs a command")]
    return _build_file(call, ("-f", "--noxfile", "-P", "-C", "--file"))


def runs_through(*options: str, subcommands: tuple[str, ...] = (), letters: str = "") -> Callable[[Call], Refused]:
    """A tool that runs a command given in one of its options (`letters`: their short forms) or after one of its
    subcommands (`tox -x testenv.commands=...` sets the commands it runs)."""

    def policy(call: Call) -> Refused:
        words = call.positionals()
        given = any(long_option(a, o, len(o) - 2) for a in call.args for o in options)
        if (
            (words[:1] and words[0] in subcommands)
            or given
            or any(letters and short_option(a, letters) for a in call.args)
        ):
            return [("inline_code", f"`{call.family}` runs a command given to it")]
        return []

    return policy


def just(call: Call) -> Refused:
    """just and task: never a command given inline (`--command`, `--shell`), no release task the project does not
    declare."""
    if any(long_option(a, n, 5) for a in call.args for n in ("--command", "--shell", "--shell-arg", "--shell-command")):
        return [("inline_code", "`just --command` runs a command given inline")]
    return task_refusals(call, call.positionals(), call.family)


def compiler(call: Call) -> Refused:
    """The C and C++ compilers: never a wrapper or a plugin that runs a program of its choosing."""
    if any(a in ("-wrapper", "--wrapper") or a.startswith(("-fplugin", "-wrapper=")) for a in call.args):
        return [("inline_code", f"`{call.family} -wrapper` runs a program of its choosing")]
    return []


def mvn(call: Call) -> Refused:
    """maven and its wrapper: build phases and plugins that check or report, never `exec:` nor a `-D` that switches
    a check off."""
    found: Refused = _mvn_goals(call)
    for arg in call.args:
        low = arg.lower()
        if arg.startswith("exec:") or low.startswith("-dexec."):
            found.append(("inline_code", f"`{call.family} {clip(arg)}` runs a command"))
        elif arg.startswith("-D") and any(w in low for w in ("ssl", "insecure", "trust", "checksum", "verify")):
            found.append(("bypass", f"`{call.family} {clip(arg)}` switches a check off"))
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
        return [("program", f"`{call.family} {clip(word)}` is no build phase or plugin lessons may run")]
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


def gradle(call: Call) -> Refused:
    """gradle and gradlew: tasks that build, test, check or report locally; never one that publishes or deploys,
    nor an init script given on the line (`--init-script`, `-I`), which runs before any build."""
    args = list(call.args)
    if any(a in ("-I", "--init-script") or a.startswith(("--init-script=", "-I")) for a in args):
        return [("inline_code", f"`{call.family} --init-script` runs a script before the build")]
    if any(long_option(a, "--scan", 5) for a in args):
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
            return [("program", f"`{call.family} {clip(arg)}` is no build, test or check task lessons may run")]
    return []


# sbt's commands that build, test, check or run locally (`~test`, `testOnly`, `Test/compile`).
_SBT_TASK = re2.compile(
    r"^(?:\+\+[\w.]+|~?\+?(?:[A-Za-z]+/)?(?:compile|test|testOnly|testQuick|run|runMain|clean|package|assembly"
    r"|stage|doc|update|reload|scalafmt\w*|scalafix\w*|coverage\w*|dependencyTree|evicted|console|projects|project"
    r"|tasks|about|help|check|headerCheck|headerCreate|fmt|lint|bloopInstall))$"
)


def sbt(call: Call) -> Refused:
    """sbt: commands that build, test, check or run locally."""
    for word in call.positionals():
        first = word.split()[0] if word.split() else word
        if not _SBT_TASK.match(first):
            return [("program", f"`sbt {clip(word)}` is no build, test or check command lessons may run")]
    return []


def only_subcommands(*allowed: str) -> Callable[[Call], Refused]:
    """A tool whose first positional must be one of `allowed` (the rest publish, log in or fetch by name)."""
    known = frozenset(allowed)

    def policy(call: Call) -> Refused:
        words = call.positionals()
        if words and words[0] not in known:
            return [("program", f"`{call.family} {clip(words[0])}` is not a {call.family} command lessons may run")]
        return []

    return policy


def pre_commit(call: Call) -> Refused:
    """pre-commit: its own commands, which run the project's hooks."""
    words = call.positionals()
    allowed = {"run", "install", "install-hooks", "autoupdate", "validate-config", "validate-manifest", "clean", "gc"}
    if words and words[0] not in allowed:
        return [("bypass", f"`pre-commit {clip(words[0])}` is not a pre-commit command lessons may run")]
    return []
