"""Each package's `__all__` is sorted and complete (as httpx checks its own), and every module's names exist."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

PACKAGES = ["core", "core.compat", "core.llm", "core.store", "core.transcripts", "flows"]


def _modules() -> list[str]:
    names = []
    for package in ("core", "flows"):
        root = importlib.import_module(package)
        names += [m.name for m in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")]
    return sorted(names)


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


@pytest.mark.parametrize("package", PACKAGES)
def test_package_all_is_complete_and_sorted(package: str) -> None:
    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), f"{package}.__all__ is not sorted"
    lazy = set(getattr(module, "_LAZY", {}))  # names a package resolves on first use (PEP 562)
    public = sorted(
        {
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"
        }
        | lazy,
        key=_isort_key,
    )
    for name in lazy:
        assert getattr(module, name) is not None  # every lazy name resolves
    assert exported == public, f"{package}.__all__ does not list exactly its public names"


@pytest.mark.slow
@pytest.mark.parametrize("name", _modules())
def test_module_all_names_exist(name: str) -> None:
    if name.endswith(".pipeline") or name.endswith(".deployments") or name.endswith("._runtime"):
        pytest.importorskip("prefect")
    module = importlib.import_module(name)
    for exported in getattr(module, "__all__", []):
        assert hasattr(module, exported), f"{name}.__all__ names `{exported}`, which does not exist"
    assert list(getattr(module, "__all__", [])) == sorted(getattr(module, "__all__", []), key=_isort_key)
