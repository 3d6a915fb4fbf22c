"""JavaScript's package managers, runtimes and tools: npm, pnpm, yarn, bun, deno, and the tools npx runs.

They run the project's scripts by a routine's name or one it declares, and install only the packages it declares;
fetching and running a package by name (`dlx`, `create`), a global install, code given inline and a publish are
refused.
"""

from __future__ import annotations

from core.program_calls import Call, Refused, clip, install_refusals, long_option
from core.program_tasks import script_name, task_refusals

__all__ = ["JS_TOOLS", "deno_bun", "js_pm", "js_tool", "npm"]


# JavaScript's tools, a project's dev dependencies: npx and the package managers run them by name.
JS_TOOLS = frozenset(
    "tsc tsx ts-node vitest jest mocha ava eslint prettier biome vite next nuxt webpack webpack-cli esbuild rollup"
    " parcel turbo nx lerna playwright cypress storybook astro svelte-kit ng vue-cli-service expo react-native"
    " tailwindcss postcss stylelint changeset".split()
)


_NPM_ALLOWED = frozenset(
    "run run-script rum urn test t tst start stop restart ci install i in ins inst insta instal isnt isnta isntal"
    " isntall add ls list ll la outdated audit why explain view info show v pack prune dedupe ddp rebuild rb doctor"
    " help uninstall remove rm r un unlink update up upgrade it install-test cit install-ci-test clean-install ic"
    " fund root bin prefix query exec x init innit create".split()
)
_NPM_INSTALLS = frozenset(
    "install i in ins inst insta instal isnt isnta isntal isntall add update up upgrade it install-test cit"
    " install-ci-test clean-install ic ci".split()
)
_PM_ALLOWED = frozenset(
    "run test start build install i add remove rm why list ls outdated audit exec dlx x create init node up upgrade"
    " update dedupe prune rebuild".split()
)


def _run_script(call: Call, word: str | None) -> Refused:
    """`npm run NAME` and kin: a script named like a routine (`test`, `lint:ci`) or one the project declares; an
    unseen name (`release`, `deploy`, `ship-it`) is no routine lessons may run."""
    return [] if word is None else task_refusals(call, [word], f"{call.family} run")


def _registry(call: Call) -> Refused:
    """An option that points the package manager at another registry, abbreviated as npm's parser lets it be
    (`--reg=host`: npm reads any unambiguous start of an option's name): a stranger's packages for the project's."""
    for arg in call.args:
        if long_option(arg, "--registry", 5):
            return [("bypass", f"`{call.family} {clip(arg)}` installs from another registry than the project's")]
    return []


def npm(call: Call) -> Refused:
    """npm: its own commands, scripts by a routine's name or the project's, installs only of declared packages and
    only into the project, and only from the project's registry."""
    if refused := _registry(call):
        return refused
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub not in _NPM_ALLOWED:
        return [("program", f"`npm {clip(sub)}` is not an npm command lessons may run")]
    if sub in ("init", "innit", "create") and len(words) > 1:
        return [("install", f"`npm {sub} {clip(words[1])}` scaffolds from a package by name")]
    if sub in _NPM_INSTALLS and any(a in ("-g", "--global") or a.startswith("--location=global") for a in call.args):
        return [("install", f"`npm {sub} --global` installs on the machine, not in the project")]
    if sub in _NPM_INSTALLS:
        return install_refusals(call, 1, f"npm {sub}")
    if sub == "audit" and "fix" in words and any(long_option(a, "--force", 4) for a in call.args):
        return [("bypass", "`npm audit fix --force`")]
    if sub in ("run", "run-script", "rum", "urn"):
        return _run_script(call, words[1] if len(words) > 1 else None)
    return []


def js_pm(call: Call) -> Refused:
    """pnpm, yarn and bun: their commands, a project's scripts by name, and installs only of what it declares, from
    the project's registry."""
    if refused := _registry(call):
        return refused
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub in ("dlx", "x", "create") or (sub == "global" and words[1:2] == ["add"]):
        return [("install", f"`{call.family} {sub}` fetches and runs a package by name")]
    if sub in ("add", "install", "i", "update", "up", "upgrade") and any(a in ("-g", "--global") for a in call.args):
        return [("install", f"`{call.family} {sub} --global` installs on the machine, not the project")]
    if sub in ("add", "install", "i", "update", "up", "upgrade"):
        return install_refusals(call, 1, f"{call.family} {sub}")
    if sub == "run":
        return _run_script(call, words[1] if len(words) > 1 else None)
    if sub in ("publish", "npm"):  # the package manager's own publish (`yarn npm publish`), whatever scripts say
        return [("program", f"`{call.family} {sub}` publishes a package: the user's call")]
    if sub in _PM_ALLOWED or sub in JS_TOOLS or script_name(sub, call):
        return []
    return [("program", f"`{call.family} {clip(sub)}` is neither a command lessons may run nor a script declared")]


def deno_bun(call: Call) -> Refused:
    """deno and bun as runtimes: never code given inline, a publish, a package fetched by name, nor leave to run
    anything."""
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
        return install_refusals(call, 1, "bun install")
    if any(w.startswith(("npm:", "jsr:", "http:", "https:")) for w in words):
        return [("install", f"`{call.family}` runs a package or a module fetched from elsewhere")]
    if any(
        a in ("-A", "--allow-all") or long_option(a, "--allow-run", 9) or long_option(a, "--allow-ffi", 9) for a in args
    ):
        return [("bypass", f"`{call.family} --allow-all` lets it run anything")]
    return []


def js_tool(call: Call) -> Refused:
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
    return task_refusals(call, [t.rsplit(":", 1)[-1] for t in targets], f"{call.family} {sub}")
