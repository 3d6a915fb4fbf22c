"""Shared fixtures: the bundled real transcripts, a fresh database per test, and one real Prefect server."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from core.store.db import connect
from tests import profiles  # noqa: F401  (loads the Hypothesis profile)
from tests.helpers import SAMPLES
from tests.servers import prefect_server, start_prefect_server, stop, wait_http

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def no_subscription_clis(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--llm auto` uses a logged-in `claude` or `codex`: the ones of the machine the tests run on must not answer
    (or be asked). A test that wants one puts a fake on PATH and names it (`PLAYBOOK_CLAUDE_CLI=claude`)."""
    monkeypatch.setenv("PLAYBOOK_CLAUDE_CLI", "playbook-test-no-claude")
    monkeypatch.setenv("PLAYBOOK_CODEX_CLI", "playbook-test-no-codex")


@pytest.fixture(autouse=True)
def own_config_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config folder (their own config.toml and the trust store of `playbook trust`) is a fresh temporary
    one per test, never the real `~/.config/playbook`; a test that writes a playbook.toml with keys that are not
    harmless trusts it (`tests.helpers.trust_config`)."""
    folder = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder / "playbook"


@pytest.fixture
def samples() -> Path:
    """The real transcripts shipped in data/samples (see its MANIFEST.md)."""
    return SAMPLES


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A database path that does not exist yet."""
    return tmp_path / "test.duckdb"


@pytest.fixture
def con(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A migrated read-write connection."""
    connection = connect(db_path)
    yield connection
    connection.close()


# One real `prefect server` for the whole run: the main pytest process starts it in the background when
# the run begins (it takes ~25 s to boot, while the fast tests run), every xdist worker finds it through
# this variable, and the main process stops it by its pid at the end.
_SHARED_API = "TEST_PREFECT_API_URL"


# Tests write only inside their temporary folders: what `git status` shows of the checkout (ignored files too, such
# as data/out/) is the same after the run as before it; caches of the tools are not the checkout's content.
_TOOL_CACHES = (
    ".venv/",
    ".tools/",
    ".hypothesis/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".pytest_cache/",
    "playbook.egg-info/",
)
_CHECKOUT = pytest.StashKey[set[str] | None]()


def _checkout_state() -> set[str] | None:
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # not a git checkout (an unpacked sdist): nothing to compare
    return {
        line
        for line in done.stdout.splitlines()
        if "__pycache__/" not in line and not line[3:].startswith(_TOOL_CACHES)
    }


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_CHECKOUT] = _checkout_state()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_CHECKOUT, None)
    if hasattr(session.config, "workerinput") or before is None:
        return
    after = _checkout_state() or set()
    if after != before:
        changed = sorted(after ^ before)
        session.config.get_terminal_writer().line(
            f"The tests changed the checkout (they must write only inside their temporary folders): {changed[:10]}",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or "not slow" in (config.getoption("markexpr") or ""):
        return
    home = Path(tempfile.mkdtemp(prefix="playbook-test-prefect-"))
    proc, url = start_prefect_server(home)
    os.environ[_SHARED_API] = url
    config.stash[_SERVER] = (proc, home)


def pytest_unconfigure(config: pytest.Config) -> None:
    started = config.stash.get(_SERVER, None)
    if started is not None:
        stop(started[0])
        shutil.rmtree(started[1], ignore_errors=True)


_SERVER = pytest.StashKey[tuple[subprocess.Popen[bytes], Path]]()


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of the run's real `prefect server` on loopback (its own one when the run has none)."""
    url = os.environ.get(_SHARED_API)
    if url is None:
        with prefect_server(tmp_path_factory.mktemp("prefect-home")) as own:
            yield own
        return
    wait_http(f"{url}/health", None, None, timeout=240)
    yield url
