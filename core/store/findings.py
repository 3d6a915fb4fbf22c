"""What the rules (the `heuristic` provider: the miner, no model) found in each session a playbook's run curated: the
reflection and the operations, stored as what they are, one row per session and run, beside the miner's version.

A model's answers are exchanges (`core.store.exchanges`: a prompt, tokens, a cost, reused when the prompt is asked
again); the rules read no prompt, cost nothing and are never reused, so none of that is stored for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import duckdb

from core.miner import MINER_VERSION
from core.models import CuratorOutput, ReflectorOutput
from core.store.db import columnar_insert

__all__ = ["RulesFinding", "record_findings"]


class RulesFinding(NamedTuple):
    """One session's result of the rules: its reflection and operations, or why there are none."""

    session_id: str
    reflection: ReflectorOutput | None
    curation: CuratorOutput | None
    error: str | None = None


# Each column a finding fills, with its type (the rows go in as one list per column, in one statement).
_COLUMNS = (
    ("playbook", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("playbook_version", "INTEGER"),
    ("miner_version", "INTEGER"),
    ("reflection", "JSON"),
    ("curation", "JSON"),
    ("error", "VARCHAR"),
)
_INSERT = columnar_insert("rules_findings", _COLUMNS)


def record_findings(
    con: duckdb.DuckDBPyConnection,
    playbook: str,
    findings: Sequence[RulesFinding],
    *,
    playbook_version: int | None,
    run_id: str | None,
) -> None:
    """Store an epoch's findings in one statement (an INSERT costs ~2 ms of CPU however few rows it carries).

    Args:
        playbook: the playbook whose run found them.
        findings: one per session.
        playbook_version: the version the epoch's sessions were judged against.
        run_id: the run that found them.
    """
    rows = [
        (
            playbook,
            f.session_id,
            run_id,
            playbook_version,
            MINER_VERSION,
            f.reflection.model_dump_json() if f.reflection is not None else None,
            f.curation.model_dump_json() if f.curation is not None else None,
            f.error,
        )
        for f in findings
    ]
    if rows:
        con.execute(_INSERT, [list(column) for column in zip(*rows, strict=True)])
