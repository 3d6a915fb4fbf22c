"""Entries bound to their sources: what each rests on in its project, re-checked against the project's folder on
this machine before anything is delivered (every export, publish and the hooks' snapshot), and on demand by
`playbook revalidate`.

An entry whose file, folder, declared script or own program is gone is *outdated*: it is not delivered, and
`review`, `why` and `revalidate` (`flows.delivery.review`, which writes the hooks' snapshot again) say why. It comes
back by itself when what it rests on is back. A project whose folder is not on this machine cannot be checked: its
entries go out as they are (`unchecked`).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from pydantic import BaseModel

from core.citations import Citation
from core.io.repository import check_citations
from core.store.citations import entry_citations

__all__ = ["Source", "outdated", "sources_of"]


class Source(BaseModel):
    """One entry's citations and what the last check found: `held` (outdated: `reason`), `ok`, or `unchecked`
    (its project's folder is not on this machine, or it cites nothing)."""

    entry_id: str
    text: str = ""
    root: str | None
    citations: list[Citation]
    status: str
    reason: str | None = None
    commit: str | None = None


def _check(entry: str, root: str | None, cited: list[Citation]) -> Source:
    folder = Path(root) if root else None
    if not cited or folder is None or not folder.is_dir():
        return Source(entry_id=entry, root=root, citations=cited, status="unchecked")
    reason, commit = check_citations(cited, folder)
    return Source(
        entry_id=entry, root=root, citations=cited, status="held" if reason else "ok", reason=reason, commit=commit
    )


def sources_of(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, Source]:
    """Every live entry with citations, checked now against its project's folder."""
    return {entry: _check(entry, root, cited) for entry, (root, cited) in entry_citations(con, playbook).items()}


def outdated(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, str]:
    """The live entries whose citations no longer hold: entry id -> why."""
    return {e: s.reason for e, s in sources_of(con, playbook).items() if s.status == "held" and s.reason}
