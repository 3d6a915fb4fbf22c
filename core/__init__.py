"""playbook's functional core: values in, values out.

I/O lives only in `core.store` (DuckDB), `core.io` (files, locks, git, object storage), `core.llm` (model calls)
and `core.transcripts` (reading transcript files); nothing here imports prefect, flows, typer or rich.
"""

from __future__ import annotations

import importlib as _importlib
from typing import Any as _Any

__all__ = [
    "CONTRACT_VERSION",
    "DEFAULT_SECTIONS",
    "MAX_OPERATIONS",
    "ApplyReport",
    "CuratorOutput",
    "Entry",
    "Playbook",
    "PlaybookError",
    "ReflectorOutput",
    "Section",
    "SectionSet",
    "TerminalError",
    "TransientError",
    "apply_evaluations",
    "apply_operations",
    "apply_session",
    "empty_playbook",
    "extract_json",
    "load_sections_yaml",
    "prune",
]

# Names resolve on first use (PEP 562), so `import core.errors` or `core.store` does not build every model:
# the CLI's `--help` and read commands start in a fraction of the time.
_LAZY = {
    "CONTRACT_VERSION": "core.models",
    "DEFAULT_SECTIONS": "core.sections",
    "MAX_OPERATIONS": "core.models",
    "ApplyReport": "core.models",
    "CuratorOutput": "core.models",
    "Entry": "core.models",
    "Playbook": "core.models",
    "PlaybookError": "core.errors",
    "ReflectorOutput": "core.models",
    "Section": "core.sections",
    "SectionSet": "core.sections",
    "TerminalError": "core.errors",
    "TransientError": "core.errors",
    "apply_evaluations": "core.operations",
    "apply_operations": "core.operations",
    "apply_session": "core.operations",
    "empty_playbook": "core.operations",
    "extract_json": "core.jsonx",
    "load_sections_yaml": "core.sections",
    "prune": "core.operations",
}


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
