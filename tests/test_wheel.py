"""The package installs anywhere: a wheel built from the tree, installed into a fresh virtual environment
outside the repository, runs `playbook --help` and a heuristic `nightly` on a copy of the bundled samples
(prompts and prefect.yaml come from the package, not the checkout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _build_wheel(out: Path) -> Path:
    """Build from a copy of the tracked files (the build leaves nothing in the checkout)."""
    src = out / "src"
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in files:
        if name.startswith(("core/", "flows/", "prompts/")) or name in ("pyproject.toml", "README.md", "prefect.yaml"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    code = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    name = (
        subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    return out / name


def test_wheel_installs_and_runs_outside_the_repository(tmp_path: Path, prefect_api: str) -> None:
    wheel = _build_wheel(tmp_path)
    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    # Dependencies come from this test's environment (no network): its site-packages is appended to the
    # fresh environment's path. Its .pth files (the editable install of the checkout) are not processed.
    site = Path(
        subprocess.run(
            [str(target / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "uv",
            "pip",
            "install",
            "--no-deps",
            "--python",
            str(target / "bin" / "python"),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    (work / "samples").mkdir(parents=True)  # a small real session: the point is where the code comes from
    shutil.copy(ROOT / "data" / "samples" / "claude-code" / "spotter" / "short.jsonl", work / "samples")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "ANTHROPIC_", "PREFECT_API"))}
    where = subprocess.run(
        [str(target / "bin" / "python"), "-c", "import core, flows; print(core.__file__, flows.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(ROOT) not in where and str(site) in where  # the installed copy, not the checkout
    helped = subprocess.run(
        [str(target / "bin" / "playbook"), "--help"], cwd=work, env=env, capture_output=True, text=True
    )
    assert helped.returncode == 0 and "nightly" in helped.stdout
    night = subprocess.run(
        [str(target / "bin" / "playbook"), "nightly", "samples", "--llm", "heuristic", "--db", "pb.duckdb"],
        cwd=work,
        env={**env, "PLAYBOOK_OUT_DIR": "out", "PREFECT_API_URL": prefect_api},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert night.returncode == 0, night.stderr[-3000:]
    assert "Traceback" not in night.stderr
    assert (work / "out" / "default.md").read_text().startswith("# Playbook `default`")
    assert (work / "out" / "report" / "default" / "index.html").exists()
    served = subprocess.run(
        [
            str(target / "bin" / "python"),
            "-c",
            "from flows.run.deployments import deployments; print(len(deployments()))",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert served.stdout.strip() == "3", served.stderr[-2000:]  # prefect.yaml shipped as package data
