"""Cargo's project configuration (`.cargo/config.toml`, `.cargo/config`) as what every `cargo` command runs.

A project's cargo configuration can make any cargo command run a program of its own: a target's `runner` (what
`cargo test` and `cargo run` start), a `linker`, `[build] rustc-wrapper` or `rustc`, `rustflags` (`-C linker=`),
`[env]` for everything cargo starts, another registry or source for what it fetches. Only keys known to change no
program cargo runs are admitted; `[alias]` entries are read as the cargo command they stand for (`cargo t` runs
`cargo test`); `[env]` is read as variables set before every command; anything else holds every `cargo` command.
rustup's rust-toolchain.toml picks the cargo that runs: a toolchain by its release name runs, one from a path holds.
"""

from __future__ import annotations

import shlex
import tomllib

import re2

from core.recipes import EVERY, Recipe, environment_lines, unread

__all__ = ["cargo_config_recipes", "rust_toolchain_recipes"]

# Tables that say how cargo reports or where it writes what it builds, never what it runs.
_TABLES = frozenset("term cargo-new future-incompat-report cache profile".split())
# Keys of `[build]`, `[net]`, `[http]` that do the same: how many jobs, which folder, whether offline, how long to wait.
_KEYS = {
    "build": frozenset("jobs target-dir build-dir incremental pipelining dep-info-basedir".split()),
    "net": frozenset("retry offline git-fetch-with-cli".split()),
    "http": frozenset("timeout low-speed-limit multiplexing debug check-revoke ssl-version".split()),
    "doc": frozenset(),
}
_MOST_ALIASES = 200


def cargo_config_recipes(text: str) -> list[Recipe]:
    """`.cargo/config.toml`: each `[alias]` as `cargo:NAME` running its expansion, `[env]` as lines of `cargo:*`, and
    a line of `cargo:*` that holds every cargo command for each key that may change what cargo runs."""
    data = tomllib.loads(text)
    found: list[Recipe] = []
    for table, value in data.items():
        if table in _TABLES:
            continue
        if table == "alias":
            found += _aliases(value)
        elif table == "env":
            found += [(f"cargo:{EVERY}", line) for line in environment_lines(_plain_env(value), "its `[env]`")]
        elif table in _KEYS and isinstance(value, dict):
            found += [_held(f"{table}.{k}") for k in value if k not in _KEYS[table]]
        else:
            inner = value if isinstance(value, dict) else {}
            first = next(iter(inner), "")
            key = f"{first}.{next(iter(inner[first]), '')}" if isinstance(inner.get(first), dict) else first
            found.append(_held(f"{table}.{key}".rstrip(".")))
    return found


def _held(what: str) -> Recipe:
    return unread("cargo", f"cargo's config sets `{what}`, which may change what cargo runs")


def _aliases(table: object) -> list[Recipe]:
    """`[alias]`: `t = "test --lib"` or `t = ["test", "--lib"]`, each the cargo command it stands for."""
    if not isinstance(table, dict):
        return [_held("alias")]
    found: list[Recipe] = [_held(f"more than {_MOST_ALIASES} aliases")] if len(table) > _MOST_ALIASES else []
    for name, value in list(table.items())[:_MOST_ALIASES]:
        words = value.split() if isinstance(value, str) else value
        if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
            found.append((f"cargo:{name}", unread("", f"`{name}` is an alias of no command")[1]))
            continue
        found.append((f"cargo:{name}", "cargo " + " ".join(shlex.quote(w) for w in words)))
    return found


def _plain_env(table: object) -> object:
    """`[env]`'s values as plain strings: `{ value = "x" }` is `x`; `relative = true` (a path made absolute) and
    any other key stay a table, which holds it."""
    if not isinstance(table, dict):
        return table
    return {
        name: value["value"]
        if isinstance(value, dict) and set(value) <= {"value", "force"} and isinstance(value.get("value"), str)
        else value
        for name, value in table.items()
    }


# A toolchain by its release (`stable`, `1.79`, `nightly-2024-05-01`, with a host triple), never a folder's.
_CHANNEL = re2.compile(
    r"^(?:stable|beta|nightly|[0-9]+\.[0-9]+(?:\.[0-9]+)?)(?:-[0-9]{4}-[0-9]{2}-[0-9]{2})?(?:-[a-z0-9_]+)*$"
)
_TOOLCHAIN_KEYS = frozenset("channel components targets profile".split())


def rust_toolchain_recipes(text: str) -> list[Recipe]:
    """rust-toolchain.toml (or the one-line `rust-toolchain`): rustup runs the cargo of the toolchain it names, so a
    `path`, a channel that is no release, or a key not known holds every `cargo` command."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        lines = text.split()
        data = {"toolchain": {"channel": lines[0]}} if len(lines) == 1 else {"": None}
    toolchain = data.get("toolchain")
    if set(data) != {"toolchain"} or not isinstance(toolchain, dict):
        return [unread("cargo", "rust-toolchain names no toolchain by its release")]
    found = [unread("cargo", f"rust-toolchain sets `{k}`, which picks what cargo runs") for k in toolchain
             if k not in _TOOLCHAIN_KEYS]  # fmt: skip
    channel = toolchain.get("channel", "stable")
    if not (isinstance(channel, str) and _CHANNEL.match(channel)):
        found.append(unread("cargo", f"rust-toolchain's channel `{str(channel)[:40]}` is no release"))
    return found
