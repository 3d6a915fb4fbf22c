"""What a package manager's project settings change about every script it runs: `.npmrc`, `.yarnrc.yml`, `.yarnrc`,
`bunfig.toml`, `.pnpmfile.cjs`, `.env.yarn`.

`core.recipes` reads package.json's scripts as every package manager's (`npm:NAME`). A file beside it can change the
shell each script runs in (`script-shell`), load code into every node a script starts (`node-options`, bun's `preload`),
run a program for every yarn command (`yarnPath`, `plugins`), or change where an install fetches packages from and
what runs while it does (`registry`, a pnpmfile's hooks). Each key is admitted when its documentation says it changes
how the manager reports, locks or lays out packages; one that changes where an install fetches from holds installs
(`npm:preinstall`, which `npm install`, `npm ci`, `pnpm add` run); any other key holds every script
(`core.recipes.unread`).
"""

from __future__ import annotations

import tomllib

import re2
import yaml

from core.recipes import PROGRAM_SETTINGS, Recipe, physical_lines, unread

__all__ = [
    "bun_environment_recipes",
    "bunfig_recipes",
    "npmrc_recipes",
    "pnpm_workspace_recipes",
    "pnpmfile_recipes",
    "yarn_environment_recipes",
    "yarnrc_recipes",
    "yarnrc_yml_recipes",
]

# The task every install runs first: a line of its own holds `npm install`, `npm ci`, `pnpm add` and the rest.
_INSTALL = "npm:preinstall"

# npm's and pnpm's keys (npm's config reference, pnpm's .npmrc settings) that say how the manager saves, locks,
# hoists, reports or retries, never which program a script runs or what an install fetches.
_NPMRC_ADMITTED = frozenset(
    "save save-exact save-prefix save-dev save-optional save-peer engine-strict fund audit audit-level loglevel"
    " progress package-lock package-lock-only legacy-peer-deps strict-peer-deps strict-peer-dependencies"
    " auto-install-peers shamefully-hoist public-hoist-pattern hoist-pattern hoist node-linker lockfile prefer-offline"
    " prefer-online offline update-notifier color unicode message git-tag-version tag-version-prefix sign-git-tag"
    " sign-git-commit ignore-scripts foreground-scripts enable-pre-post-scripts link-workspace-packages"
    " prefer-workspace-packages shared-workspace-lockfile ignore-workspace-root-check save-workspace-protocol"
    " fetch-retries fetch-retry-mintimeout fetch-retry-maxtimeout fetch-retry-factor fetch-timeout network-concurrency"
    " maxsockets install-strategy omit include workspaces-update provenance access resolution-mode"
    " dedupe-peer-dependents prefer-frozen-lockfile frozen-lockfile prefer-dedupe package-manager-strict"
    " package-manager-strict-version recursive-install verify-store-integrity side-effects-cache"
    " resolve-peers-from-workspace-root always-auth install-links exclude-links-from-lockfile"
    " lockfile-include-tarball-url use-lockfile-v3 engine-strict ignore-workspace-cycles".split()
)
# npm's keys that change where an install fetches packages from, or how it trusts the server (`strict-ssl=false`).
_NPMRC_INSTALL = frozenset(
    "registry strict-ssl cafile ca cert key https-proxy proxy noproxy store-dir virtual-store-dir cache"
    " only-built-dependencies only-built-dependencies-file never-built-dependencies".split()
)
_INI_LINE = re2.compile(r"^\s*([^=\s]+?)\s*(?:\[\])?\s*=\s*(.*)$")

# Yarn's (berry) settings that say how it lays out, caches, locks or reports, never what it runs or fetches.
_YARNRC_ADMITTED = frozenset(
    "nodeLinker enableGlobalCache enableTelemetry enableImmutableInstalls enableImmutableCache compressionLevel"
    " cacheFolder defaultSemverRangePrefix logFilters pnpMode enableColors enableProgressBars enableMessageNames"
    " enableInlineBuilds enableHyperlinks enableScripts initScope initFields nmMode nmHoistingLimits"
    " nmSelfReferences preferInteractive changesetBaseRefs changesetIgnorePatterns tsEnableAutoTypes"
    " npmPublishRegistry npmPublishAccess enableConstraintsChecks defaultProtocol pnpFallbackMode"
    " enableTransparentWorkspaces globalFolder installStatePath".split()
)
_YARNRC_INSTALL = frozenset(
    "npmRegistryServer npmScopes npmAuthToken npmAuthIdent npmAlwaysAuth packageExtensions unsafeHttpWhitelist"
    " httpProxy httpsProxy caFilePath enableStrictSsl networkConcurrency httpTimeout httpRetry checksumBehavior"
    " supportedArchitectures npmRegistries enableNetwork".split()
)
# Yarn 1's `.yarnrc` (`key value` lines).
_YARN1_ADMITTED = frozenset(
    "network-timeout disable-self-update-check lastUpdateCheck save-prefix ignore-scripts ignore-engines"
    " yarn-offline-mirror-pruning save-exact --ignore-engines --frozen-lockfile --prefer-offline".split()
)
_YARN1_INSTALL = frozenset("registry yarn-offline-mirror strict-ssl cafile proxy https-proxy".split())
_YARN1_LINE = re2.compile(r"""^\s*("[^"]*"|'[^']*'|\S+)""")

# bunfig.toml's keys that say how bun reports, sizes or compiles JSX, never what a script runs.
_BUNFIG_ADMITTED = frozenset("logLevel telemetry smol jsx jsxFactory jsxFragment jsxImportSource".split())
_BUN_RUN_ADMITTED = frozenset({"silent"})
_BUN_TEST_ADMITTED = frozenset("root timeout coverage coverageThreshold coverageSkipTestFiles smol".split())


def _held(key: str, file: str) -> Recipe:
    return unread("npm", f"{file} sets `{key[:40]}`, which changes what every script runs")


def _install_held(key: str, file: str) -> Recipe:
    return (_INSTALL, unread("", f"{file} sets `{key[:40]}`: where an install fetches packages from")[1])


def npmrc_recipes(text: str) -> list[Recipe]:
    """A project's `.npmrc` (npm, pnpm and yarn 1 read it): what its keys change about every script and install."""
    found: list[Recipe] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        match = _INI_LINE.match(stripped)
        if match is None:
            found.append(_held(stripped, ".npmrc"))
            continue
        key = match.group(1).lower()
        if key in _NPMRC_ADMITTED:
            continue
        # `//host/:_authToken`, `@scope:registry`: a registry's credentials or a scope's registry.
        if key in _NPMRC_INSTALL or key.startswith("//") or (key.startswith("@") and key.endswith(":registry")):
            found.append(_install_held(key, ".npmrc"))
        else:
            found.append(_held(key, ".npmrc"))
    return found


def yarnrc_yml_recipes(text: str) -> list[Recipe]:
    """A project's `.yarnrc.yml` (yarn 2 and later): `yarnPath` and `plugins` run code for every yarn command."""
    data = yaml.safe_load(text)
    if data is None:
        return []
    if not isinstance(data, dict):
        return [_held("(no mapping)", ".yarnrc.yml")]
    found: list[Recipe] = []
    for key in data:
        if key in _YARNRC_ADMITTED:
            continue
        found.append(
            _install_held(str(key), ".yarnrc.yml") if key in _YARNRC_INSTALL else _held(str(key), ".yarnrc.yml")
        )
    return found


def yarnrc_recipes(text: str) -> list[Recipe]:
    """A project's `.yarnrc` (yarn 1): `yarn-path` runs another yarn for every command."""
    found: list[Recipe] = []
    for line in text.splitlines():
        if not line.strip() or line.strip().startswith("#"):
            continue
        match = _YARN1_LINE.match(line)
        key = match.group(1).strip("\"'") if match else line.strip()
        if key in _YARN1_ADMITTED:
            continue
        if key in _YARN1_INSTALL or key.startswith(("--install.", "--add.")) or key.endswith(":registry"):
            found.append(_install_held(key, ".yarnrc"))
        else:
            found.append(_held(key, ".yarnrc"))
    return found


def bunfig_recipes(text: str) -> list[Recipe]:
    """A project's `bunfig.toml`: `preload` runs code before every script, `[run] shell = "bun"` runs scripts in
    bun's own shell, `[install]` changes what an install fetches."""
    data = tomllib.loads(text)
    found: list[Recipe] = []
    for key, value in data.items():
        if key in _BUNFIG_ADMITTED:
            continue
        if key == "install":
            found.append(_install_held("[install]", "bunfig.toml"))
        elif key == "run" and isinstance(value, dict):
            found += [
                _held(f"[run] {k}", "bunfig.toml")
                for k, v in value.items()
                if k not in _BUN_RUN_ADMITTED and (k, v) != ("shell", "system")
            ]
        elif key == "test" and isinstance(value, dict):
            found += [_held(f"[test] {k}", "bunfig.toml") for k in value if k not in _BUN_TEST_ADMITTED]
        else:
            found.append(_held(key, "bunfig.toml"))
    return found


def pnpmfile_recipes(text: str) -> list[Recipe]:
    """A project's `.pnpmfile.cjs`: JavaScript hooks pnpm runs while it installs (`readPackage` rewrites what it
    fetches), and a module it may load for other commands too (pnpm 10's `updateConfig` hook changes its settings):
    every script of the project's package managers waits (round 8)."""
    why = "the project's .pnpmfile.cjs is JavaScript pnpm loads"
    return [
        (_INSTALL, unread("", f"{why} while it installs")[1]),
        unread("npm", f"{why}, its hooks known only as they run"),
    ]


# Settings a bun `.env` may give every script without changing what runs: a mode, a colour, a port.
_BUN_ENV_ADMITTED = frozenset(
    "NODE_ENV BUN_ENV NODE_NO_WARNINGS FORCE_COLOR NO_COLOR TZ LANG LC_ALL TERM CI DEBUG PORT HOST".split()
)
_DOTENV_LINE = re2.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]")


def bun_environment_recipes(text: str) -> list[Recipe]:
    """A project's `.env`, `.env.local`, `.env.<mode>`: bun loads them into every script and program it runs, so a
    variable that a program other than the project's own code reads (`core.recipes.PROGRAM_SETTINGS`:
    `NODE_OPTIONS`, `PATH`, `BUN_*`) holds every `bun` command; the project's own settings (`DATABASE_URL`) do not.
    Every line shaped as an assignment is read, one inside a quoted value too: nothing a line sets is missed. The
    value is never shown (a `.env` holds secrets)."""
    names = {m.group(1) for line in physical_lines(text) if (m := _DOTENV_LINE.match(line)) is not None}
    held = sorted(n for n in names if PROGRAM_SETTINGS.match(n) and n not in _BUN_ENV_ADMITTED)
    return [unread("bun", f"bun loads `{name[:40]}` from the project's .env files") for name in held[:8]]


def yarn_environment_recipes(text: str) -> list[Recipe]:
    """A project's `.env.yarn`: yarn 4 loads its variables into every script it runs."""
    return [unread("npm", "yarn loads the variables of the project's .env.yarn into every script")] if text else []


# pnpm-workspace.yaml's own keys: which folders are packages, and the catalogs of versions they share.
_WORKSPACE_KEYS = frozenset({"packages", "catalog", "catalogs"})
# Its settings (pnpm 10) that say what installs build or fetch: held for installs.
_WORKSPACE_INSTALL = frozenset(
    "onlyBuiltDependencies onlyBuiltDependenciesFile neverBuiltDependencies ignoredBuiltDependencies overrides"
    " patchedDependencies packageExtensions allowedDeprecatedVersions peerDependencyRules registry registries"
    " allowNonAppliedPatches".split()
)
_CAMEL = re2.compile(r"([a-z0-9])([A-Z])")


def pnpm_workspace_recipes(text: str) -> list[Recipe]:
    """pnpm-workspace.yaml: pnpm 10 reads its settings as .npmrc's (`scriptShell`, `nodeOptions` change every
    script); each is judged as .npmrc's key of the same name."""
    data = yaml.safe_load(text)
    if data is None:
        return []
    if not isinstance(data, dict):
        return [_held("(no mapping)", "pnpm-workspace.yaml")]
    found: list[Recipe] = []
    for key in data:
        if not isinstance(key, str):
            found.append(_held(str(key), "pnpm-workspace.yaml"))
        elif key in _WORKSPACE_KEYS:
            continue
        elif key in _WORKSPACE_INSTALL:
            found.append(_install_held(key, "pnpm-workspace.yaml"))
        elif _CAMEL.sub(r"\1-\2", key).lower() not in _NPMRC_ADMITTED:
            found.append(_held(key, "pnpm-workspace.yaml"))
    return found
