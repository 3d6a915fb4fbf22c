"""What each session of an epoch was shown, and which entry ids its answers may name: the entries its agent had
(the hooks' and exports' exposure records), within the epoch's frozen playbook."""

from __future__ import annotations

import duckdb

from core.models import Playbook
from core.scope import GLOBAL_PREFIX
from core.store.exposure import exposed_entries
from flows.run.run_state import RunContext

__all__ = ["KNOWN_IDS", "exposed_playbooks", "exposure_names", "known_ids"]

# The request context key of the ids an answer may name: a reflection or curation naming none of them is a
# failed call (`phantom_tags`, `phantom_targets`).
KNOWN_IDS = "known_ids"


def exposed_playbooks(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    frozen: Playbook,
    session_ids: list[str],
    names: dict[str, set[str]] | None = None,
) -> dict[str, Playbook]:
    """For each session: the entries of `frozen` its agent had (`exposure_names`, unless the caller has them)."""
    names = exposure_names(con, ctx, session_ids) if names is None else names
    found: dict[str, Playbook] = {}
    for sid in session_ids:
        kept = {s: [e for e in items if e.name in names[sid]] for s, items in frozen.sections.items()}
        found[sid] = frozen.model_copy(update={"sections": kept})
    return found


def exposure_names(con: duckdb.DuckDBPyConnection, ctx: RunContext, session_ids: list[str]) -> dict[str, set[str]]:
    """For each session: the ids of the entries its agent had (`v_exposure`), the global playbook's with their
    prefix when the run curates both."""
    own = exposed_entries(con, ctx.playbook, session_ids)
    other = exposed_entries(con, ctx.config.companion, session_ids) if ctx.config.companion else {}
    return {sid: own[sid] | {GLOBAL_PREFIX + n for n in other.get(sid, ())} for sid in session_ids}


def known_ids(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    frozen: Playbook,
    session_ids: list[str],
    names: dict[str, set[str]] | None = None,
) -> dict[str, set[str]]:
    """For each session: the ids its answers may name (`KNOWN_IDS`): the epoch's playbook's, and the entries its
    agent had (`exposure_names`, unless the caller has them), which an earlier session of the same epoch may have
    added."""
    ids = {entry.name for _, entry in frozen.entries()}
    had = exposure_names(con, ctx, session_ids) if names is None else names
    return {sid: ids | had[sid] for sid in session_ids}
