"""The playbook commands that write a version: create, import, revert and retire. Each takes the run lock, opens
the database once and returns what it did."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from core.errors import ConfigError, PlaybookFileError, StoreError
from core.io.files import read_text
from core.json_documents import parse_document
from core.models import Playbook
from core.operations import apply_operations, normalize_playbook, without_unseen
from core.playbook_json import MAX_PLAYBOOK_BYTES, decode, playbook_from_dict
from core.sections import DEFAULT_SECTIONS, load_sections_yaml
from core.store.registry import ensure_playbook, playbook_names, require_playbook
from core.store.versions import load_version, revert, write_version
from flows.delivery.hook import refreshes_snapshot
from flows.workspace import Workspace

__all__ = ["Imported", "create_playbook", "import_playbook", "retire_entries", "revert_playbook"]

ImportMode = Literal["new", "replace", "merge"]


class Imported(BaseModel):
    """What `import_playbook` did: entries in the new version, the version, how, and the invisible characters it
    removed per entry (`core.invisible.removed`)."""

    entries: int
    version: int
    how: str
    stripped: dict[str, str]


@refreshes_snapshot
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
        PlaybookFileError: the file is missing, larger than `MAX_PLAYBOOK_BYTES`, or not a playbook.json this program
            reads (an entry whose id is not of the shape playbook makes included); nothing is imported then.
        ConfigError: both `replace` and `merge`, or the playbook has entries and neither was asked.
    """
    if replace and merge:
        raise ConfigError("Pass either `--replace` or `--merge`, not both.")
    mode: ImportMode = "replace" if replace else "merge" if merge else "new"
    if not file.exists():
        raise PlaybookFileError(f"File `{file}` does not exist; pass the path of a playbook.json.")
    text = read_text(file, max_bytes=MAX_PLAYBOOK_BYTES)  # read once: what is checked is what is imported
    checked = decode(text, str(file))  # a corrupt file stops here, with a message naming it
    section_set = load_sections_yaml(sections) if sections else DEFAULT_SECTIONS
    # With its own sections, the file's section names are kept (`decode` read them into the default set).
    raw = parse_document(text) if sections else checked
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
            _require_unique_ids(incoming, file)  # ids kept as the file gives them: each must name one entry
            model, note = incoming, f"import of {file}"
            how = f"replaced {current.size()} entries" if current.size() else "new"
        version = write_version(con, playbook, model, source="import", note=note)
    return Imported(entries=model.size(), version=version, how=how, stripped=stripped)


def _require_unique_ids(incoming: Playbook, file: Path) -> None:
    """Refuse a file that gives two entries one id (a retire, a feedback or a tag would reach both).

    Raises:
        PlaybookFileError: an id is given twice, naming it and the next step.
    """
    seen: set[str] = set()
    for section, entry in incoming.entries():
        if entry.name in seen:
            raise PlaybookFileError(
                f"Playbook `{file}` gives id `{entry.name}` to two entries (the second in section {section!r});"
                " give each its own id, or pass `--merge` to add them under new ids. Nothing was imported."
            )
        seen.add(entry.name)


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


@refreshes_snapshot
def revert_playbook(ws: Workspace, playbook: str, version: int) -> int:
    """A new version equal to `version` (history is never rewritten); its number."""
    with ws.database(playbook).write("playbook revert", create=False) as con:
        return revert(con, playbook, version)


@refreshes_snapshot
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
