"""Why a command, or a part of an entry, is not admitted: the rule that refused it, and what in it the rule refused.

The answer of every judge of a lesson's commands (`core.allowlist`, `core.task_judge`, the code readers).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Refusal"]


@dataclass(frozen=True)
class Refusal:
    """Why a command (or a part of an entry) is not admitted: the rule, and what in it the rule refused."""

    rule: str
    detail: str
