"""Issue 41, round 9's residual: a lesson that runs `pytest` (or `uv run pytest`, `python -m pytest`, ...) was
published while the project's pytest configuration made pytest load code from outside the project (`pythonpath =
../../elsewhere`) or a plugin the project does not declare (`addopts = -p someplugin`). Each attack holds, in every
place pytest reads its configuration and through every wrapper; the same command under an ordinary configuration
is published."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.allowlist import command_refusals
from core.io.declared import declared_programs, declared_tasks
from core.pytest_config import runs_pytest
from core.refusal import Refusal
from core.vouched import Vouched

_PYPROJECT = '[project]\nname = "app"\nversion = "1"\ndependencies = ["requests>=2"]\n'
_WRAPPED = [
    "pytest",
    "pytest -x -q",
    "py.test",
    "uv run pytest",
    "uv run --frozen pytest -x",
    "poetry run pytest",
    "pdm run pytest",
    "hatch run pytest",
    "python -m pytest",
    "python3 -m pytest -q",
]


def _ini(body: str) -> dict[str, str]:
    return {"pytest.ini": f"[pytest]\n{body}\n"}


def _pyproject(body: str, dependencies: str = "") -> dict[str, str]:
    groups = f"\n[dependency-groups]\ndev = [{dependencies}]\n" if dependencies else ""
    return {"pyproject.toml": f"{_PYPROJECT}{groups}\n[tool.pytest.ini_options]\n{body}\n"}


# (the files of the attack, the files of its ordinary control)
_CASES: list[tuple[dict[str, str], dict[str, str]]] = [
    # a path outside the project on sys.path, in each place pytest reads it
    (_ini("pythonpath = ../../elsewhere"), _ini("pythonpath = src")),
    (_ini("pythonpath = src /opt/elsewhere"), _ini("pythonpath = src tests/helpers")),
    ({".pytest.ini": "[pytest]\npythonpath = ~/elsewhere\n"}, {".pytest.ini": "[pytest]\npythonpath = .\n"}),
    (_pyproject('pythonpath = ["../elsewhere"]'), _pyproject('pythonpath = ["src"]')),
    (_pyproject('pythonpath = "lib/../../x"'), _pyproject('pythonpath = "lib/../src"')),
    ({"pyproject.toml": f'{_PYPROJECT}\n[tool.pytest]\npythonpath = ["/srv/x"]\n'},
     {"pyproject.toml": f'{_PYPROJECT}\n[tool.pytest]\npythonpath = ["src"]\n'}),
    ({"pyproject.toml": f'{_PYPROJECT}\n[tool.pytest]\npythonpath = ["../x"]\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'},
     {"pyproject.toml": f'{_PYPROJECT}\n[tool.pytest]\npythonpath = ["src"]\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'}),
    ({"pytest.toml": '[pytest]\npythonpath = ["../x"]\n'}, {"pytest.toml": '[pytest]\ntestpaths = ["tests"]\n'}),
    ({"tox.ini": "[pytest]\npythonpath = ../shared\n"}, {"tox.ini": "[pytest]\npythonpath = shared\n"}),
    ({"setup.cfg": "[tool:pytest]\npythonpath = $HOME/x\n"}, {"setup.cfg": "[tool:pytest]\npythonpath = src\n"}),
    # a plugin loaded by name the project does not declare; disabling one, or one it declares, is ordinary
    (_ini("addopts = -p someplugin"), _ini("addopts = -p no:cacheprovider -ra -q")),
    (_ini("addopts = -psomeplugin"), _ini("addopts = -pno:randomly")),
    (_ini("addopts = -vp someplugin"), _ini("addopts = -rp -v")),  # `-vp x` is `-v -p x`; `-rp` reports passes
    (_pyproject('addopts = "-p xdist -n auto"'), _pyproject('addopts = "-p xdist -n auto"', '"pytest-xdist>=3"')),
    (_pyproject('addopts = ["-p", "pytest_cov"]'), _pyproject('addopts = ["-p", "pytest_cov"]', '"pytest-cov"')),
    ({"pytest.toml": '[pytest]\naddopts = ["-p", "evil.plugin"]\n'}, {"pytest.toml": '[pytest]\naddopts = ["-p", "pytester"]\n'}),
    ({**_ini("addopts = -p tests.missing"), "tests/plugin.py": ""},
     {**_ini("addopts = -p tests.plugin"), "tests/plugin.py": ""}),  # a module of the project: its own code
    (_ini("addopts = -o pythonpath=../x"), _ini("addopts = -o console_output_style=classic")),
    (_ini("addopts = --override-ini=addopts=-pevil"), _ini("addopts = --override-ini=cache_dir=.cache")),
    (_ini("addopts = --pyargs somepackage"), _ini("addopts = --strict-markers --import-mode=importlib")),
    (_ini("addopts = -c ../other.ini"), _ini("addopts = --tb=short --maxfail=2")),
    # folders outside: rootdir, confcutdir, testpaths, basetemp (which pytest empties)
    (_ini("addopts = --rootdir=../.."), _ini("addopts = --rootdir=.")),
    (_ini("addopts = --confcutdir /"), _ini("addopts = --confcutdir tests")),
    (_ini("confcutdir = .."), _ini("confcutdir = tests")),
    (_ini("testpaths = tests ../../other/tests"), _ini("testpaths = tests integration")),
    (_ini("addopts = --basetemp=/home"), _ini("addopts = --basetemp=.tmp --junitxml=reports/junit.xml")),
    (_ini("addopts = --cov-report=html:/tmp/x"), _ini("addopts = --cov=app --cov-report=term-missing")),
    # a plugin required that the project does not declare
    (_ini("required_plugins = pytest-evil"), {**_ini("required_plugins = pytest-cov>=4"),
                                             "requirements-dev.txt": "pytest-cov==5.0.0\n"}),
    # a warning's class by dotted name imports its module
    (_ini("filterwarnings =\n    error::evilmod.EvilWarning"),
     _ini("filterwarnings =\n    error\n    ignore::DeprecationWarning\n    ignore::pytest.PytestUnraisableExceptionWarning")),
    (_ini("addopts = -W error::evilmod.W"), _ini("addopts = -W error::DeprecationWarning -W ignore::warnings.x.W")),
]  # fmt: skip


def _judged(folder: Path, files: dict[str, str], line: str) -> list[Refusal]:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    vouched = Vouched(programs=declared_programs([folder]), tasks=declared_tasks([folder]))
    return list(command_refusals(line, vouched))


@pytest.mark.parametrize(("attack", "control"), _CASES)
def test_a_pytest_config_that_loads_from_outside_holds_pytest(
    tmp_path: Path, attack: dict[str, str], control: dict[str, str]
) -> None:
    refused = _judged(tmp_path / "attack", attack, "pytest")
    assert refused and "pytest" in refused[0].detail, refused
    assert _judged(tmp_path / "control", control, "pytest") == []


@pytest.mark.parametrize("line", _WRAPPED)
def test_a_wrapped_pytest_is_judged_as_pytest(tmp_path: Path, line: str) -> None:
    """`uv run pytest` runs pytest with the same configuration: it holds where `pytest` does, and only there."""
    assert _judged(tmp_path / "attack", _ini("pythonpath = ../elsewhere\naddopts = -p evil"), line)
    assert _judged(tmp_path / "control", _ini("pythonpath = src\naddopts = -p no:cacheprovider"), line) == []


def test_a_task_that_runs_pytest_holds_with_its_config(tmp_path: Path) -> None:
    files = {
        **_ini("addopts = -p evil"),
        "Makefile": "test:\n\tpytest -q\n",
        "tox.ini": "[testenv]\ncommands = pytest\n",
    }
    for line in ("make test", "tox"):
        refused = _judged(tmp_path, files, line)
        assert refused and "`evil`" in refused[0].detail, (line, refused)


def test_a_config_above_the_project_is_read_as_pytest_reads_it(tmp_path: Path) -> None:
    """pytest looks for its configuration in the folders above the one it runs in."""
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = ../elsewhere\n", encoding="utf-8")
    assert _judged(tmp_path / "app", {"pyproject.toml": _PYPROJECT}, "pytest")


def test_a_path_inside_that_links_out_holds(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "lib").symlink_to(outside, target_is_directory=True)
    assert _judged(project, _ini("pythonpath = lib"), "pytest")
    (project / "tests").mkdir()
    (project / "tests" / "real").mkdir()
    (project / "tests" / "linked").symlink_to(outside, target_is_directory=True)
    assert _judged(project, _ini("testpaths = tests/*"), "pytest")  # a glob that matches the link


def test_a_config_that_does_not_parse_holds_pytest(tmp_path: Path) -> None:
    assert _judged(tmp_path / "a", {"pytest.ini": "[pytest]\npythonpath = src\npythonpath = ../x\n"}, "pytest")
    assert _judged(tmp_path / "b", _ini("addopts = -p 'unclosed"), "pytest")


def test_another_tools_command_is_not_held_by_pytests_config(tmp_path: Path) -> None:
    assert _judged(tmp_path, _ini("pythonpath = ../elsewhere"), "ruff check .") == []


_SEGMENT = st.sampled_from(["src", "lib", "a.b", "tests", "pkg-1", "."])


@settings(max_examples=60, deadline=None)
@given(down=st.lists(_SEGMENT, max_size=3), extra_ups=st.integers(min_value=1, max_value=3), tail=st.lists(_SEGMENT))
def test_any_pythonpath_that_climbs_out_of_the_folder_holds(down: list[str], extra_ups: int, tail: list[str]) -> None:
    """Going down `down` and up more folders than that leaves the configuration's folder, however it is spelled:
    it holds; the same walk without the extra climb stays inside and is published."""
    ups = [".."] * (len([d for d in down if d != "."]) + extra_ups)
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        out = "/".join([*down, *ups, *tail])
        assert _judged(root / "attack", _ini(f"pythonpath = {out}"), "uv run pytest")
        inside = "/".join([*down, *tail]) or "."
        assert _judged(root / "control", _ini(f"pythonpath = {inside}"), "uv run pytest") == []


@pytest.mark.parametrize(
    ("family", "args", "runs"),
    [
        ("pytest", (), True),
        ("py.test", ("-x",), True),
        ("python", ("-m", "pytest"), True),
        ("python", ("-mpytest", "-q"), True),
        ("python", ("-W", "ignore", "-m", "pytest"), True),  # `-W` takes a value: `ignore` is no script
        ("python", ("-Bm", "pytest"), True),  # short options join
        ("python", ("-X", "dev", "-m", "py.test"), True),
        ("hatch", ("test",), True),
        ("python", ("-m", "pip", "install", "pytest"), False),
        ("python", ("tests/run.py", "-m", "pytest"), False),  # the script's own arguments
        ("python", ("-c", "import pytest"), False),
        ("hatch", ("run", "pytest"), False),  # a wrapper: its inner `pytest` is judged as pytest
    ],
)
def test_what_runs_pytest(family: str, args: tuple[str, ...], runs: bool) -> None:
    assert runs_pytest(family, args) == runs
