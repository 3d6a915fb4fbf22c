"""The playbook commands' library calls: create and import, show, history, diff, revert and retire, totals (an
entry's life, stale entries and triggers are `flows.insight.entries`). Each opens the database once and returns a
typed result; the read commands' (show, history, diff) load no more than they print."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from core.errors import ConfigError, PlaybookFileError, StoreError
from core.invisible import removed, visible
from core.io.files import read_text
from core.markdown import format_bullets, to_markdown
from core.models import Playbook
from core.operations import apply_operations, normalize_playbook, without_unseen
from core.playbook_json import encode, playbook_from_dict, playbook_to_dict
from core.redact import mask_playbook
from core.sections import DEFAULT_SECTIONS, load_sections_yaml
from core.store.provenance import entries_by_provider
from core.store.registry import PlaybookStats, ensure_playbook, playbook_names, playbook_stats, require_playbook
from core.store.versions import (
    Change,
    VersionRow,
    count_versions,
    diff_versions,
    history,
    load_version,
    revert,
    write_version,
)
from flows.workspace import Workspace

if TYPE_CHECKING:
    from flows.delivery.sources import Source

__all__ = [
    "History",
    "Imported",
    "Shown",
    "create_playbook",
    "diff_playbook",
    "import_playbook",
    "playbook_history",
    "playbook_totals",
    "retire_entries",
    "revert_playbook",
    "show_playbook",
]

ImportMode = Literal["new", "replace", "merge"]


class Imported(BaseModel):
    """What `import_playbook` did: entries in the new version, the version, how, and the invisible characters it
    removed per entry (`core.invisible.removed`)."""

    entries: int
    version: int
    how: str
    stripped: dict[str, str]


def import_playbook(
    ws: Workspace,
    playbook: str,
    file: Path,
    *,
    sections: Path | None = None,
    replace: bool = False,
    merge: bool = False,
) -> Imported:
    """Import a playbook.json as a new version of `playbook`: only into an empty playbook, unless `replace` (the
    file becomes the version) or `merge` (the file's entries whose text is not there yet are added).

    Raises:
        PlaybookFileError: the file is missing or not a playbook.json this program reads.
        ConfigError: both `replace` and `merge`, or the playbook has entries and neither was asked.
    """
    if replace and merge:
        raise ConfigError("Pass either `--replace` or `--merge`, not both.")
    mode: ImportMode = "replace" if replace else "merge" if merge else "new"
    if not file.exists():
        raise PlaybookFileError(f"File `{file}` does not exist; pass the path of a playbook.json.")
    from core.compat import load_playbook  # the older formats' readers: only an import needs them

    checked = load_playbook(file)  # a corrupt file stops here, with a message naming it
    section_set = load_sections_yaml(sections) if sections else DEFAULT_SECTIONS
    raw = json.loads(read_text(file)) if sections else checked
    with ws.database(playbook).write("playbook import") as con:
        section_set = ensure_playbook(con, playbook, section_set)
        incoming = normalize_playbook(playbook_from_dict(raw, sections=section_set), section_set)
        incoming, stripped = without_unseen(incoming)
        current = load_version(con, playbook)
        if current.size() and mode == "new":
            raise ConfigError(
                f"Playbook `{playbook}` has {current.size()} entries; pass `--replace` to make the file the new"
                " version, or `--merge` to add the entries that are not there yet. Nothing was imported."
            )
        if mode == "merge" and current.size():
            adds = [{"type": "ADD", "text": e.text, "section": s} for s, e in incoming.entries()]
            model, report = apply_operations(current, adds, sections=section_set, limit=None)
            note = f"merge of {file}"
            how = f"merged: added {report.applied('ADD')} of {len(adds)} entries, the rest were already there"
        else:
            model, note = incoming, f"import of {file}"
            how = f"replaced {current.size()} entries" if current.size() else "new"
        version = write_version(con, playbook, model, source="import", note=note)
    return Imported(entries=model.size(), version=version, how=how, stripped=stripped)


def create_playbook(ws: Workspace, name: str, sections: Path | None = None) -> None:
    """Create an empty playbook `name` (version 0).

    Raises:
        StoreError: a playbook of that name exists.
    """
    section_set = load_sections_yaml(sections) if sections else DEFAULT_SECTIONS
    with ws.database(name).write("playbook new") as con:
        if name in playbook_names(con):
            raise StoreError(f"Playbook `{name}` already exists; pick another name.")
        ensure_playbook(con, name, section_set)


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
            return encode(playbook_to_dict(self.playbook))
        if fmt == "markdown":
            return visible(to_markdown(self.playbook))
        return visible(format_bullets(self.playbook) or "(empty playbook)") + "\n"


def show_playbook(ws: Workspace, playbook: str, version: int | None = None, *, sources: bool = False) -> Shown:
    """Playbook `playbook` at `version` (default: the newest); `sources`: with what each entry rests on, checked
    now (each cited file is looked at, so only when asked)."""
    with ws.database(playbook).read() as con:
        model = mask_playbook(load_version(con, playbook, version), ws.redactor)
        ruled = sorted(entries_by_provider(con, playbook, "heuristic") & {e.name for _, e in model.entries()})
        rests_on: dict[str, Source] = {}
        if sources:
            from flows.delivery.sources import sources_of  # checks cited files: its modules only when asked

            rests_on = sources_of(con, playbook)
    invisible = {e.name: found for _, e in model.entries() if (found := removed(e.text))}
    return Shown(playbook=model, ruled=ruled, invisible=invisible, sources=rests_on)


class History(BaseModel):
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


def revert_playbook(ws: Workspace, playbook: str, version: int) -> int:
    """A new version equal to `version` (history is never rewritten); its number."""
    with ws.database(playbook).write("playbook revert", create=False) as con:
        return revert(con, playbook, version)


def retire_entries(ws: Workspace, playbook: str, names: list[str]) -> int:
    """A new version of `playbook` without the entries `names` (proposed by `playbook stale`, or any other): a
    version like every other, so `playbook revert` brings them back; its number.

    Raises:
        StoreError: a name is not a live entry (nothing is retired then).
    """
    with ws.database(playbook).write("playbook retire", create=False) as con:
        require_playbook(con, playbook)
        current = load_version(con, playbook)
        live = {e.name for _, e in current.entries()}
        unknown = [n for n in names if n not in live]
        if unknown or not names:
            raise StoreError(
                f"`{(unknown or ['(none)'])[0]}` is not a live entry of playbook `{playbook}`; `playbook show` lists"
                " them. Nothing was retired."
            )
        kept = {s: [e for e in items if e.name not in names] for s, items in current.sections.items()}
        return write_version(
            con,
            playbook,
            current.model_copy(update={"sections": kept}),
            source="retire",
            note=f"retired by hand: {', '.join(names)}",
        )


def playbook_totals(ws: Workspace, playbook: str) -> PlaybookStats:
    """Sessions, versions, operations by type and status, prunes and cost of `playbook`."""
    with ws.database(playbook).read() as con:
        return playbook_stats(con, playbook)
