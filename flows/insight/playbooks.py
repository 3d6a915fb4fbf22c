"""The playbook read commands' library calls: show, history, diff and totals (the commands that write a version are
`flows.insight.authoring`; an entry's life, stale entries and triggers `flows.insight.entries`). Each opens the
database read-only once and returns a typed result, loading no more than it prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from core.invisible import removed, visible
from core.markdown import format_bullets, to_markdown
from core.models import Playbook
from core.store.history import Change, VersionRow, count_versions, diff_versions, history
from core.store.provenance import entries_by_provider
from core.store.registry import PlaybookStats, playbook_stats
from core.store.versions import load_version
from flows.workspace import Workspace

if TYPE_CHECKING:
    from flows.delivery.sources import Source

__all__ = ["History", "Shown", "diff_playbook", "playbook_history", "playbook_totals", "show_playbook"]


@dataclass(frozen=True)
class Shown:
    """A version as `playbook show` prints it (redacted), the entries written by rules rather than a model, and
    the invisible characters older entries still hold (shown escaped; exports remove them). A plain dataclass: the
    sources' types (citations, lessons) load only for `show --sources`."""

    playbook: Playbook
    ruled: list[str]
    invisible: dict[str, str]
    sources: dict[str, Source] = field(default_factory=dict)  # entry id -> what it rests on (`show --sources`)

    def text(self, fmt: Literal["text", "json", "markdown"]) -> str:
        """The version as `show` prints it: the seeds' playbook.json (the file contract, versioned), Markdown, or
        the bullets the prompts show; invisible characters as escapes except in JSON, which escapes its own."""
        if fmt == "json":
            from core.playbook_json import encode, playbook_to_dict  # the file contract: only `--format json`

            return encode(playbook_to_dict(self.playbook))
        if fmt == "markdown":
            return visible(to_markdown(self.playbook))
        return visible(format_bullets(self.playbook) or "(empty playbook)") + "\n"


def show_playbook(ws: Workspace, playbook: str, version: int | None = None, *, sources: bool = False) -> Shown:
    """Playbook `playbook` at `version` (default: the newest); `sources`: with what each entry rests on, checked
    now (each cited file is looked at, so only when asked)."""
    from core.redact import mask_playbook  # the redactor's rules: only the commands that show entry texts

    with ws.database(playbook).read() as con:
        model = mask_playbook(load_version(con, playbook, version), ws.redactor)
        ruled = sorted(entries_by_provider(con, playbook, "heuristic") & {e.name for _, e in model.entries()})
        rests_on: dict[str, Source] = {}
        if sources:
            from flows.delivery.sources import sources_of  # checks cited files: its modules only when asked

            rests_on = sources_of(con, playbook)
    invisible = {e.name: found for _, e in model.entries() if (found := removed(e.text))}
    return Shown(playbook=model, ruled=ruled, invisible=invisible, sources=rests_on)


@dataclass(frozen=True)
class History:
    """The newest versions (oldest first) and how many there are in all."""

    rows: list[VersionRow]
    total: int


def playbook_history(
    ws: Workspace, playbook: str, *, limit: int | None = None, since: datetime | None = None
) -> History:
    """One row per version, the newest `limit` (None: all) created at or after `since`."""
    with ws.database(playbook).read() as con:
        rows = history(con, playbook, limit=limit, since=since)
        total = count_versions(con, playbook)
    return History(rows=rows, total=total)


def diff_playbook(ws: Workspace, playbook: str, v1: int, v2: int) -> list[Change]:
    """Entries added, removed or changed between two versions."""
    with ws.database(playbook).read() as con:
        return diff_versions(con, playbook, v1, v2)


def playbook_totals(ws: Workspace, playbook: str) -> PlaybookStats:
    """Sessions, versions, operations by type and status, prunes and cost of `playbook`."""
    with ws.database(playbook).read() as con:
        return playbook_stats(con, playbook)
