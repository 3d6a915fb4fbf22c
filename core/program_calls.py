"""A program's call as its policy reads it: its arguments, its options, the packages it names.

What every policy shares: the call (`Call`) and what a policy refuses (`Refused`: rule, what), the positionals apart
from flags and their values, long options with the abbreviations their parsers accept (`git push --forc` is
`--force`), short options in a cluster (`-fsSL`), and the packages a call installs that the project does not
declare. It imports no policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import re2

__all__ = [
    "PACKAGE_AT_VERSION",
    "Call",
    "Refused",
    "clip",
    "install_refusals",
    "long_option",
    "option_values",
    "positionals",
    "short_option",
    "value_flags",
]


PACKAGE_AT_VERSION = re2.compile(r"^@?[A-Za-z0-9._/-]+@[A-Za-z0-9^~<>=.*+-]+$")


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
    # The task runners' own: a flag read as taking a value it does not take would hide the task after it
    # (`make -k TARGET`, `rake -m TASK`). make's `-j`/`-l` take a number only if one follows: a number is no target.
    "make": frozenset(
        "-C --directory -f --file --makefile -I --include-dir -o --old-file --assume-old -W --what-if --new-file"
        " --assume-new".split()
    ),
    "rake": frozenset("-f --rakefile -r --require -R --rakelibdir -I --libdir -e --execute -p --execute-print".split()),
    "just": frozenset(
        "-f --justfile -d --working-directory --dotenv-path --dotenv-filename --color --chooser --list-heading"
        " --list-prefix --dump-format --command-color".split()
    ),
    "task": frozenset("-d --dir -t --taskfile -o --output -C --concurrency -I --interval".split()),
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


def long_option(arg: str, name: str, shortest: int) -> bool:
    """True when `arg` is the long option `name`, written whole or abbreviated to at least `shortest` characters
    (as git's, GNU's and most option parsers accept), with or without `=value`."""
    written = arg.split("=", 1)[0]
    return len(written) >= shortest and name.startswith(written) and written.startswith("--")


def short_option(arg: str, letters: str) -> str | None:
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


def option_values(args: Sequence[str], *names: str) -> list[str]:
    """The values given to the long or short options `names` (`--host 0.0.0.0`, `--host=0.0.0.0`, `-h0.0.0.0`)."""
    found = []
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in names:
            found.append(value if eq else (args[i + 1] if i + 1 < len(args) else ""))
    return found


Refused = list[tuple[str, str]]


def clip(text: str, most: int = 50) -> str:
    """`text` on one line, cut to `most` characters (an ellipsis marks the cut)."""
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


# Options an install may be given: where it installs in the project (a folder, a workspace, a group), how it
# records what it installed (as a dev dependency, an exact version), and how much it prints or fetches. Any other
# (`--audit=false`, `--legacy-peer-deps`, `--update-checksums`, `--package-lock=false`, `--user`, `--pre`, `-i URL`,
# `--dry-run`, `--force`) changes what gets installed, from where, or what is checked: the user's call.
_INSTALL_OPTIONS = frozenset(
    "-D --save-dev -S --save -E --save-exact -O --save-optional -P --save-prod --save-peer --exact -T --tilde --dev"
    " --peer --optional -G --group --extra --extras --all-extras -F --features --no-default-features --all-features"
    " --frozen-lockfile --immutable --locked --frozen --lock --no-save --no-sync --prefer-offline --offline"
    " --ignore-scripts --require-hashes --no-cache-dir -q --quiet -s --silent --no-fund --no-progress"
    " --no-interaction -r --requirement -c --constraint -e --editable -U --upgrade -w --workspace --workspaces"
    " -W --ignore-workspace-root-check --filter --recursive --workspace-root -C --dir --cwd --prefix --directory"
    " --project --package -p --with --without --only --no-root --no-dev --omit --production".split()
)


def install_refusals(call: Call, start: int, what: str) -> Refused:
    """What `call` refuses for installing by name packages the project does not declare (its positionals from
    `start` on), and for an option no install is known to take safely (`_INSTALL_OPTIONS`); `what` is the command
    as the reason names it."""
    named = _named_packages(call, start)
    if named:
        return [("install", f"`{what} {clip(' '.join(named), 40)}` installs a package by name")]
    for arg in call.args:
        if arg.startswith("-") and arg != "--" and arg.split("=", 1)[0] not in _INSTALL_OPTIONS:
            return [("install", f"`{what} {clip(arg, 40)}` changes what it installs, from where, or what it checks")]
    return []
