"""Python's package managers (pip, uv, uvx, poetry, pdm, hatch, pipenv, rye) and what of their calls lessons may run.

Their own commands only, and installs only of the packages the project declares (pip itself and its build tools
aside); a tool or a package fetched and run by name (`uvx`, `uv tool run`, `uv run --with`) only when the project
declares it.
"""

from __future__ import annotations

from core.program_calls import Call, Refused, clip, install_refusals

__all__ = ["pip", "python_pm", "uv", "uvx"]


_PIP_ALLOWED = frozenset("install uninstall list show freeze check help inspect hash".split())


def pip(call: Call) -> Refused:
    """pip: its own commands, installs only of declared packages (pip and its build tools aside), never from
    `--find-links`."""
    words = call.positionals()
    if not words:
        return []
    if words[0] not in _PIP_ALLOWED:
        return [("program", f"`pip {clip(words[0])}` is not a pip command lessons may run")]
    if words[0] == "install":
        refused = install_refusals(call, 1, "pip install")
        if any(a in ("-f", "--find-links") or a.startswith("--find-links") for a in call.args):
            refused.append(("bypass", "`pip install --find-links` takes packages from elsewhere"))
        return refused
    return []


_UV_ALLOWED = frozenset(
    "run sync lock add remove pip venv build tree export version init format python tool cache help".split()
)


def uv(call: Call) -> Refused:
    """uv: its own commands (`uv pip` as pip), never a package, a tool or an interpreter fetched by name."""
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub not in _UV_ALLOWED:
        return [("program", f"`uv {clip(sub)}` is not a uv command lessons may run")]
    if sub == "pip":
        return pip(Call("pip", tuple(call.args[call.args.index("pip") + 1 :]), call.vouched))
    if sub == "add":
        return install_refusals(call, 1, "uv add")
    if sub == "tool" and words[1:2] in (["run"], ["install"], ["upgrade"]):
        return [("install", f"`uv tool {words[1]}` fetches and runs a package by name")]
    if sub == "python" and words[1:2] == ["install"]:
        return [("install", "`uv python install` downloads an interpreter")]
    if sub == "run" and any(a.startswith("--with") for a in call.args):
        return [("install", "`uv run --with` installs a package by name for the run")]
    return []


def uvx(call: Call) -> Refused:
    """uvx: only a tool the project declares, never one fetched `--from` elsewhere."""
    words = call.positionals()
    if words and words[0] in call.packages and not any(a.startswith("--from") for a in call.args):
        return []
    return [("install", "`uvx` fetches and runs a package the project does not declare")]


_PY_PM_ALLOWED = frozenset(
    "run install sync add remove lock build show check env shell version init export update help".split()
)


def python_pm(call: Call) -> Refused:
    """poetry, pdm, hatch, pipenv, rye."""
    words = call.positionals()
    if not words:
        return []
    sub = words[0]
    if sub == "self":
        return [("install", f"`{call.family} self` installs plugins into the tool")]
    if sub not in _PY_PM_ALLOWED:
        return [("program", f"`{call.family} {clip(sub)}` is not a command lessons may run")]
    if sub in ("add", "install"):
        return install_refusals(call, 1, f"{call.family} {sub}")
    return []
