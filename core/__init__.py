"""playbook's functional core: contracts, sections, the operation engine, JSON extraction.

I/O lives only in `core.store`, `core.llm` and `core.transcripts`; nothing here imports prefect.
"""

from __future__ import annotations

from core.errors import PlaybookError, TerminalError, TransientError
from core.jsonx import extract_json
from core.models import (
    CONTRACT_VERSION,
    MAX_OPERATIONS,
    ApplyReport,
    CuratorOutput,
    Entry,
    Playbook,
    ReflectorOutput,
)
from core.operations import (
    apply_evaluations,
    apply_operations,
    apply_session,
    empty_playbook,
    prune,
)
from core.sections import DEFAULT_SECTIONS, Section, SectionSet, load_sections_yaml

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
