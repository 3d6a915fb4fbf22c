"""What a project's pytest configuration makes pytest load: the paths, plugins and modules its settings name.

`pytest` runs the project's tests, the project's own code; its configuration can make it load more. `pythonpath =
../../elsewhere` puts a folder outside the project on `sys.path`, `addopts = -p someplugin` loads a plugin by name,
`-o`/`--override-ini` in `addopts` sets any setting, a `filterwarnings` class by dotted name imports its module,
`--rootdir`, `--confcutdir`, `testpaths` and `--basetemp` reach folders. Read here from each place pytest reads its
configuration (pytest.toml, pytest.ini, pyproject.toml's `[tool.pytest]` and `[tool.pytest.ini_options]`, tox.ini's
`[pytest]`, setup.cfg's `[tool:pytest]`) with tomllib, configparser and shlex, as pytest splits each setting: what
is held on its words alone (`--pyargs`, a value that does not parse), the paths that must stay inside the
configuration's folder, the modules loaded by name and the plugins it requires, for `core.io.pytest_configs` to
judge where they lead. Pure functions.
"""

from __future__ import annotations

import configparser
import posixpath
import shlex
import tomllib
from dataclasses import dataclass, field

import re2

__all__ = ["PYTEST_FILES", "PytestLoads", "distribution_name", "leaves", "pytest_loads", "runs_pytest"]

# Where pytest reads its configuration, in the order it looks in a folder (pytest's docs, "Configuration file
# formats"); every one of them is read here, not only the first: a setting pytest would not read holds no less.
PYTEST_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# The settings whose values are paths, relative to the configuration's folder.
_PATH_SETTINGS = frozenset({"pythonpath", "testpaths", "confcutdir", "rootdir", "cache_dir", "log_file"})
_OVERRIDE = ("-o", "--override-ini")
_PLUGIN = "-p"
_WARNINGS = ("-W", "--pythonwarnings")
_CONFIG = ("-c", "--config-file", "--inifile")
# pytest's short options that take a value (`-k EXPR`, `-r chars`, xdist's `-n`); the others are switches.
_SHORT_VALUES = frozenset("kmpocWrn")
# Its long options whose value is read here and may be the next word (another's next word is read as a path).
_LONG_VALUES = frozenset({"--override-ini", "--pythonwarnings", "--config-file", "--inifile"})
_DISTRIBUTION = re2.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_MODULE = re2.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")
_DRIVE = re2.compile(r"^[A-Za-z]:")
_MOST_OVERRIDES = 8  # `-o addopts=-o ...`: read this deep, then held


@dataclass(frozen=True)
class PytestLoads:
    """What one configuration file makes pytest load or reach, each with the setting that names it."""

    held: tuple[str, ...] = ()  # held on its words alone
    paths: tuple[tuple[str, str], ...] = ()  # (setting, path): must stay inside the configuration's folder
    modules: tuple[tuple[str, str], ...] = ()  # (setting, dotted name): imported by name
    plugins: tuple[tuple[str, str], ...] = ()  # (setting, distribution): must be installed, so declared


def distribution_name(name: str) -> str:
    """A distribution's name as package indexes compare them (PEP 503): `Pytest_Cov` -> `pytest-cov`."""
    return re2.sub(r"[-_.]+", "-", name).lower()


def runs_pytest(family: str, args: tuple[str, ...]) -> bool:
    """Whether a call of `family` with `args` runs pytest: `pytest`, `py.test`, `python -m pytest` (`python -W
    ignore -Bm pytest` too: Python's short options join, `-W` and `-X` take a value), `hatch test`."""
    if family in ("pytest", "py.test"):
        return True
    if family == "hatch":
        return [a for a in args if not a.startswith("-")][:1] == ["test"]
    i = 0
    while family == "python" and i < len(args) and args[i].startswith("-") and args[i] != "-":
        word, following = args[i], args[i + 1] if i + 1 < len(args) else ""
        for j, letter in enumerate(word[1:] if not word.startswith("--") else "", 1):
            if letter in "mc":  # the module it runs, or code (no module)
                return letter == "m" and (word[j + 1 :] or following) in ("pytest", "py.test")
            if letter in "WX":
                i += not word[j + 1 :]  # its value, the next word where not joined
                break
        i += 1
    return False


def pytest_loads(name: str, text: str) -> PytestLoads | None:
    """What the configuration file `name` (one of `PYTEST_FILES`) with `text` makes pytest load, or None where it
    holds no pytest section; a file that does not parse raises (`ValueError`, `tomllib.TOMLDecodeError`,
    `configparser.Error`)."""
    settings = _settings(name, text)
    if settings is None:
        return None
    found = _Found()
    for key, value in settings:
        found.setting(str(key), value, 0)
    return PytestLoads(tuple(found.held), tuple(found.paths), tuple(found.modules), tuple(found.plugins))


def _settings(name: str, text: str) -> list[tuple[str, object]] | None:
    """The pytest settings of the file `name` (TOML values as they are, INI ones as strings), None where none; both
    of pyproject.toml's tables where it has both (a key in each is read twice, as either may be the one used)."""
    if name.endswith(".toml"):
        data = tomllib.loads(text)
        if name in ("pytest.toml", ".pytest.toml"):
            table = data.get("pytest")
            return list(table.items()) if isinstance(table, dict) else []  # taken even when empty, as pytest does
        tool = data.get("tool")
        pytest = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(pytest, dict):
            return None
        ini = pytest.get("ini_options", {})
        if not isinstance(ini, dict):
            raise ValueError("[tool.pytest.ini_options] is no table")
        return [(k, v) for k, v in pytest.items() if k != "ini_options"] + list(ini.items())
    parser = configparser.ConfigParser(interpolation=None)  # strict: a key set twice does not parse
    parser.read_string(text)
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return [] if name in ("pytest.ini", ".pytest.ini") else None
    return list(parser.items(section))


def _words(value: object) -> list[str] | None:
    """A setting's value as pytest splits it (shlex for a string), None where it has another shape or does not split."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def leaves(path: str) -> bool:
    """Whether `path`, relative to a configuration's folder, leads outside it on its words alone: absolute, from
    the home folder or a variable (`~`, `$HOME`), or up past the folder (`../x`, `a/../../x`)."""
    path = path.strip().replace("\\", "/")
    if path.startswith(("/", "~")) or "$" in path or _DRIVE.match(path):
        return True
    normal = posixpath.normpath(path) if path else "."
    return normal == ".." or normal.startswith("../")


@dataclass
class _Found:
    """What the settings of one file name, as they are read."""

    held: list[str] = field(default_factory=list)
    paths: list[tuple[str, str]] = field(default_factory=list)
    modules: list[tuple[str, str]] = field(default_factory=list)
    plugins: list[tuple[str, str]] = field(default_factory=list)

    def path(self, setting: str, path: str) -> None:
        if leaves(path):
            self.held.append(f"sets `{setting}` to `{_clip(path)}`, outside the project")
        elif path.strip():
            self.paths.append((setting, path.strip()))

    def setting(self, key: str, value: object, depth: int) -> None:
        """Read the setting `key` at `value` (`depth`: how many `-o` deep it was set)."""
        if key in _PATH_SETTINGS or key == "addopts" or key == "required_plugins":
            words = _words(value)
            if words is None:
                self.held.append(f"sets `{key}` in a shape not read")
            elif key == "addopts":
                self.options(words, depth)
            elif key == "required_plugins":
                for word in words:
                    match = _DISTRIBUTION.match(word)
                    if match is None:
                        self.held.append(f"requires the plugin `{_clip(word)}`, a name not read")
                    else:
                        self.plugins.append((key, match.group(1)))
            else:
                for word in words + ([value] if isinstance(value, str) and len(words) > 1 else []):
                    self.path(key, word)  # (a path with a space, `cache_dir = my cache`, read both ways)
        elif key == "filterwarnings":
            filters = value.splitlines() if isinstance(value, str) else value
            if not isinstance(filters, list) or not all(isinstance(f, str) for f in filters):
                self.held.append(f"sets `{key}` in a shape not read")
                return
            for line in filters:
                self.warning(key, line.strip())

    def warning(self, setting: str, line: str) -> None:
        """A warnings filter (`action:message:category:module:lineno`): a category by dotted name imports its module."""
        parts = line.split(":")
        category = parts[2].strip() if len(parts) > 2 else ""
        if "." in category:
            self.module(setting, category.rsplit(".", 1)[0])

    def module(self, setting: str, name: str) -> None:
        if _MODULE.match(name):
            self.modules.append((setting, name))
        else:
            self.held.append(f"loads `{_clip(name)}` by `{setting}`, a name not read")

    def options(self, words: list[str], depth: int) -> None:
        """`addopts`: the options pytest is given before the command line's own."""
        i = 0
        while i < len(words):
            option, value, takes_next = _option(words[i], words[i + 1] if i + 1 < len(words) else "")
            i += 1 + takes_next
            if option == "--pyargs":
                self.held.append("passes `--pyargs`: tests of installed packages, by name")
            elif option in _CONFIG:
                self.held.append(f"passes `{option}`: another configuration file, not read here")
            elif option in _OVERRIDE:
                key, is_set, given = (value or "").partition("=")
                if not is_set or depth >= _MOST_OVERRIDES:
                    self.held.append(f"passes `-o {_clip(value or '')}`, a setting not read")
                else:
                    self.setting(key.strip(), given, depth + 1)
            elif option == _PLUGIN:
                if value and not value.startswith("no:"):  # `no:NAME` disables a plugin
                    self.module("addopts -p", value)
            elif option in _WARNINGS:
                self.warning("addopts -W", value or "")
            elif value:
                # Any other option's value, or a path to test: `--rootdir=..`, `--basetemp=/`, `--cov-report=html:/x`.
                for part in re2.split(r"[:,]", value):
                    self.path("addopts", part)


def _option(word: str, following: str) -> tuple[str, str | None, bool]:
    """One word of `addopts` as pytest's parser reads it: (the option, `""` for a path; its value, or None; whether
    the value is the next word). Short options join (`-vp x` is `-v -p x`): the first that takes a value takes the
    rest of the word, or the next."""
    if word.startswith("--"):
        flag, equals, given = word.partition("=")
        if equals:
            return flag, given, False
        return (flag, following, True) if flag in _LONG_VALUES else (flag, None, False)
    if word.startswith("-") and len(word) > 1:
        for j, letter in enumerate(word[1:], 1):
            if letter in _SHORT_VALUES:
                rest = word[j + 1 :]
                return f"-{letter}", rest or following, not rest
        return word, None, False
    return "", word, False


def _clip(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"
