"""tox's environments (tox.ini, setup.cfg's `[tox:tox]`, pyproject's `[tool.tox]`, tox.toml) as command lines.

`tox -e lint` runs its environment's `commands` (with `commands_pre` and `commands_post`), after installing its
`deps`; `[testenv]`'s, or `env_run_base`'s, run in every environment (`tox:*`), and `tox` alone runs every
environment (`tox:`). A substitution that is only known when it runs (`{env:X}`, `{[other]commands}`), a dependency
that is no package's name (`-r`, a URL, a path), an install command, a `changedir` out of the project, and any key this
reader does not know hold the environments they reach, with the reason.
"""

from __future__ import annotations

import configparser
import shlex
import tomllib

import re2

from core.recipes import EVERY, Recipe, environment_lines, unread

__all__ = ["tox_ini_recipes", "tox_pyproject_recipes", "tox_setup_cfg_recipes", "tox_toml_recipes"]

# An environment's keys that say what it installs from an index by name, what it passes on, or how it reports,
# never what it runs; the lines, `deps`, `set_env` and `changedir` are read on their own.
_ENV_KEYS = frozenset(
    "description skip_install skipsdist usedevelop use_develop extras package wheel_build_env allowlist_externals"
    " whitelist_externals passenv pass_env labels depends parallel_show_output ignore_errors ignore_outcome"
    " recreate platform basepython base_python envdir env_dir suicide_timeout interrupt_timeout terminate_timeout"
    " uv_seed constraints_file dependency_groups".split()
)
_CORE_KEYS = frozenset(
    "envlist env_list requires minversion min_version skip_missing_interpreters isolated_build skipsdist no_package"
    " labels toxworkdir work_dir temp_dir envlist_default ignore_basepython_conflict".split()
)
_LINE_KEYS = ("commands_pre", "commands", "commands_post")
# tox's substitutions whose value is the project's or the environment's own (`{posargs}`: the lesson's arguments).
_KNOWN = {"posargs": "", "toxinidir": ".", "tox_root": ".", "envname": "env", "env_name": "env", "/": "/", ":": ":"}
_BIN_FOLDER = re2.compile(r"\{(?:envbindir|env_bin_dir)\}/")
_PYTHON = re2.compile(r"\{(?:envpython|env_python)\}")
_SUBSTITUTION = re2.compile(r"\{([^{}]*)\}")
_FACTORS = re2.compile(r"^!?[A-Za-z0-9_.{},!-]+:\s+")
# A package by its name, with extras, versions and a marker (`pytest[cov]>=8,<9; python_version>"3.9"`).
_REQUIREMENT = re2.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.-]+\])?\s*(?:[<>=!~]=?\s*[A-Za-z0-9.*+!-]+\s*,?\s*)*(?:;.*)?$"
)
_PYTHON_NAME = re2.compile(r"^(?:python|py|pypy|cpython)[0-9.]*$")
_PROJECT_FOLDER = re2.compile(r"^(?:\{toxinidir\}/?|\{tox_root\}/?)?(?:[A-Za-z0-9_][A-Za-z0-9_.-]*/?)*$")
_MOST_LINES = 200


def tox_ini_recipes(text: str) -> list[Recipe]:
    """tox.ini's environments: `[tox]`, `[testenv]` and `[testenv:NAME]`; other tools' sections are not tox's."""
    return _ini(text, "tox")


def tox_setup_cfg_recipes(text: str) -> list[Recipe]:
    """setup.cfg's tox sections (`[tox:tox]`, `[testenv...]`); a setup.cfg without them declares no tox task."""
    return _ini(text, "tox:tox")


def _ini(text: str, core: str) -> list[Recipe]:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from exc
    if not parser.has_section(core) and not any(s.startswith("testenv") for s in parser.sections()):
        return []
    found: list[Recipe] = []
    if parser.has_section(core):
        found += _core(dict(parser.items(core)))
    for section in parser.sections():
        if section == "testenv" or section.startswith("testenv:"):
            name = section.partition(":")[2]
            values = {k: v.splitlines() for k, v in parser.items(section)}
            found += _environment(name or EVERY, values)
    return found


def tox_pyproject_recipes(text: str) -> list[Recipe]:
    """pyproject.toml's `[tool.tox]`: an ini file in `legacy_tox_ini`, or tox's own TOML tables."""
    tool = tomllib.loads(text).get("tool", {})
    tox = tool.get("tox") if isinstance(tool, dict) else None
    if tox is None:
        return []
    if isinstance(tox, dict) and isinstance(tox.get("legacy_tox_ini"), str):
        return _ini(tox["legacy_tox_ini"], "tox")
    return _toml(tox)


def tox_toml_recipes(text: str) -> list[Recipe]:
    """tox.toml: `[tool.tox]`'s tables at its top."""
    return _toml(tomllib.loads(text))


def _toml(tox: object) -> list[Recipe]:
    if not isinstance(tox, dict):
        return [unread("tox", "`[tool.tox]` is no table")]
    core = {k: v for k, v in tox.items() if k not in ("env_run_base", "env_pkg_base", "env")}
    found = _core(core)
    found += _environment(EVERY, _toml_values(tox.get("env_run_base", {})))
    if "env_pkg_base" in tox:
        found += _environment(EVERY, _toml_values(tox["env_pkg_base"]))
    envs = tox.get("env", {})
    if not isinstance(envs, dict):
        return [*found, unread("tox", "`[tool.tox.env]` is no table")]
    for name, values in envs.items():
        found += _environment(str(name), _toml_values(values))
    return found


def _toml_values(table: object) -> dict[str, list[str]]:
    """An environment's TOML table as the ini reader's lines: a command (a list of words) one line, a dependency
    one line; a value of another shape (a `replace` other than `posargs`, a `ref`) a substitution that holds it."""
    if not isinstance(table, dict):
        return {"": ["{unread}"]}
    values: dict[str, list[str]] = {}
    for key, value in table.items():
        items = value if isinstance(value, list) else [value]
        lines: list[str] = ["{unread}"] if len(items) > _MOST_LINES else []  # past them: held
        for item in items[:_MOST_LINES]:
            if isinstance(item, list):
                lines.append(" ".join(_toml_word(w) for w in item))
            elif isinstance(item, str | bool | int | float):
                lines.append(str(item))
            elif isinstance(item, dict) and isinstance(value, dict) and key in ("set_env", "setenv"):
                lines = [f"{k}={v}" if isinstance(v, str) else "{unread}" for k, v in value.items()]
                break
            else:
                lines.append("{unread}")
        values[str(key)] = lines
    return values


def _toml_word(word: object) -> str:
    if isinstance(word, str):
        return shlex.quote(word) if not _SUBSTITUTION.search(word) else word
    if isinstance(word, dict) and word.get("replace") == "posargs":
        return ""
    return "{unread}"


def _core(values: dict[str, object]) -> list[Recipe]:
    """`[tox]`: plugins it installs (`requires`) must be packages by name, and any key it does not know holds tox."""
    found = [unread("tox", f"`[tox]` sets `{k}`, which changes what tox runs") for k in values if k not in _CORE_KEYS]
    requires = values.get("requires", [])
    requires = requires.splitlines() if isinstance(requires, str) else requires if isinstance(requires, list) else []
    found += [unread("tox", f"it installs `{str(r)[:40]}`, no package by its name") for r in requires
              if not (isinstance(r, str) and (not r.strip() or _REQUIREMENT.match(r.strip())))]  # fmt: skip
    return found


def _environment(name: str, values: dict[str, list[str]]) -> list[Recipe]:
    """One environment's lines (`tox:NAME`, `tox:*` for the base), each also the default's (`tox` runs them all)."""
    key = f"tox:{name}"
    shown, name = name, "testenv" if name == EVERY else name
    lines: list[str] = []
    for field in _LINE_KEYS:
        lines += [_line(line) for line in _joined(values.get(field, []))]
    for dep in _joined(values.get("deps", [])):
        dep = _FACTORS.sub("", dep)
        if not _REQUIREMENT.match(dep):
            lines.append(_held(f"`{name}` installs `{dep[:40]}`, no package by its name"))
    for field in ("set_env", "setenv"):
        pairs = dict(_pair(line) for line in _joined(values.get(field, [])))
        lines += environment_lines(pairs, f"`{name}`'s `{field}`")
    directory = " ".join(values.get("changedir", values.get("change_dir", []))).strip()
    if directory and not _PROJECT_FOLDER.match(directory):
        lines.append(_held(f"`{name}` runs in `{directory[:40]}`"))
    python = " ".join(values.get("basepython", values.get("base_python", []))).strip()
    if python and not all(_PYTHON_NAME.match(p.strip()) for p in python.split(",")):
        lines.append(_held(f"`{name}` runs with the Python `{python[:40]}`"))
    other = [k for k in values if k not in {*_LINE_KEYS, "deps", "set_env", "setenv", "changedir", "change_dir"}]
    if other := [k for k in other if k not in _ENV_KEYS]:
        lines.append(_held(f"`{name}` sets `{other[0]}`, which changes what it runs"))
    if len(lines) > _MOST_LINES:
        lines = [*lines[:_MOST_LINES], _held(f"`{name}` runs more than {_MOST_LINES} lines")]
    found = [(key, line) for line in lines]
    return found + ([("tox:", line) for _, line in found] if shown != EVERY else [])


def _joined(lines: list[str]) -> list[str]:
    """An ini value's lines, a line ending in a backslash joined with the next, blank ones and comments dropped."""
    found: list[str] = []
    pending = ""
    for line in lines[: _MOST_LINES * 4]:
        line = line.strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line and not line.startswith("#"):
            found.append(line)
    return found + ([pending] if pending.strip() else [])


def _pair(line: str) -> tuple[str, str]:
    line = _FACTORS.sub("", line)
    if line.startswith("file|") or "=" not in line:
        return (line[:40], "{unread}")  # a file to load, read by no one here
    name, _, value = line.partition("=")
    return (name.strip(), value.strip())


def _line(line: str) -> str:
    """A command's line as the shell would read it: its factors (`py312: `) and tox's `- ` (ignore its exit)
    dropped, the project's own substitutions read, any other one the shell's `$(...)`, which the judge holds."""
    line = _FACTORS.sub("", line)
    line = line[1:].lstrip() if line.startswith(("-", "!")) and line[1:2] in (" ", "") else line
    line = _PYTHON.sub("python", _BIN_FOLDER.sub("", line))

    def known(match: re2.Match[str]) -> str:
        inner = match.group(1)
        head = inner.split(":", 1)[0]
        if head == "posargs" and (":" not in inner or _PLAIN.match(inner.split(":", 1)[1])):
            return inner.split(":", 1)[1] if ":" in inner else ""
        return _KNOWN.get(inner, f"$(tox {inner})")

    return _SUBSTITUTION.sub(known, line)


_PLAIN = re2.compile(r"^[A-Za-z0-9_./ -]*$")


def _held(why: str) -> str:
    return unread("", why)[1]
