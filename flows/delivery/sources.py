"""Entries bound to their sources: what each rests on in its project, re-checked against the project's folder on
this machine before anything is delivered (every export, publish and the hooks' snapshot), and on demand by
`playbook revalidate`.

An entry whose file, folder, declared script or own program is gone is *outdated*: it is not delivered, and
`review`, `why` and `revalidate` say why. It comes back by itself when what it rests on is back. A project whose
folder is not on this machine cannot be checked: its entries go out as they are (`unchecked`).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from pydantic import BaseModel

from core.citations import Citation
from core.io.repository import check_citations
from core.store.citations import entry_citations, record_checks
from core.store.registry import require_playbook
from core.store.versions import load_version
from flows.workspace import Workspace

__all__ = ["Source", "outdated", "revalidate", "sources_of"]


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


def revalidate(ws: Workspace, playbook: str) -> list[Source]:
    """`playbook revalidate`: check every entry's citations now, record each check (with the commit of a git
    repository), and return them, outdated first."""
    with ws.database(playbook).write("playbook revalidate", create=False) as con:
        require_playbook(con, playbook)
        texts = {e.name: e.text for _, e in load_version(con, playbook).entries()}
        found = [s.model_copy(update={"text": texts.get(s.entry_id, "")}) for s in sources_of(con, playbook).values()]
        record_checks(con, playbook, [(s.entry_id, s.root, s.commit, s.reason) for s in found])
    return sorted(found, key=lambda s: ({"held": 0, "ok": 1}.get(s.status, 2), s.entry_id))
