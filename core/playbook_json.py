"""The `playbook.json` codec: the seeds' file format to and from the typed `Playbook`.

The format is `{"contract_version", "version", "last_updated", "sections": {name: [{"name", "text",
"helpful", "harmful"}]}}`. `contract_version` (1) is written into every file; the seeds' loaders ignore it.
A file without it is a legacy file (the seeds' own sections format, or the flat `{"key_points": [...]}`
of older hook scripts) and goes through an explicit migration, logged; a file with a version this program
does not know is refused, never reinterpreted. Pure: text and dicts in, values out; reading and
writing files is `core.io.files`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.errors import PlaybookFileError
from core.json_documents import parse_document
from core.models import MAX_COUNTER, Entry, EntryId, Playbook
from core.operations import empty_playbook
from core.sections import DEFAULT_SECTIONS, SectionSet

__all__ = [
    "MAX_PLAYBOOK_BYTES",
    "PLAYBOOK_CONTRACTS",
    "decode",
    "default_dict",
    "encode",
    "migrate_legacy",
    "playbook_from_dict",
    "playbook_to_dict",
    "repair_entries",
]

log = logging.getLogger("playbook")

# The playbook.json contract versions this program reads; it writes the last one.
PLAYBOOK_CONTRACTS: tuple[int, ...] = (1,)
# The largest playbook.json read: an entry is at most 500 characters (`Guards.max_entry_chars`), about 600 bytes with
# its id and counters, so 64 MB holds some 100,000 entries, ten times the largest playbook an agent could be given.
# A bigger file was given by mistake (a disk image, a log) and is refused having read 64 MB of it, not all of it.
MAX_PLAYBOOK_BYTES = 64 * 2**20
_ENTRY_ID: TypeAdapter[str] = TypeAdapter(EntryId)


def playbook_from_dict(data: dict[str, Any], *, sections: SectionSet = DEFAULT_SECTIONS) -> Playbook:
    """The typed playbook of a seeds-shaped dict; sections are normalised to the canonical set."""
    by_name: dict[str, list[Entry]] = {name: [] for name in sections.names}
    for raw_name, items in (data.get("sections") or {}).items():
        target = by_name[sections.resolve(raw_name)]
        for item in items or []:
            target.append(Entry.model_validate(item))
    return Playbook(
        version=str(data.get("version", "1.0")),
        last_updated=data.get("last_updated"),
        sections=by_name,
    )


def playbook_to_dict(playbook: Playbook, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The seeds-shaped dict of `playbook`; other top-level keys of `base` are carried over."""
    out: dict[str, Any] = {k: v for k, v in (base or {}).items() if k != "sections"}
    out.setdefault("version", playbook.version)
    out.setdefault("last_updated", playbook.last_updated)
    out["sections"] = {name: [e.model_dump() for e in items] for name, items in playbook.sections.items()}
    return out


def default_dict() -> dict[str, Any]:
    """The empty playbook, as the seeds' loader returns it for a missing file."""
    return playbook_to_dict(empty_playbook(), base={"version": "1.0", "last_updated": None})


def _is_entry_id(value: object) -> bool:
    """Whether `value` is an id of the shape the product makes (`core.models.ENTRY_ID_PATTERN`)."""
    try:
        _ENTRY_ID.validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


def _migrate_key_points(key_points: list[Any]) -> list[dict[str, Any]]:
    """Legacy flat `key_points` -> OTHERS entries (strings become `kpt_NNN`, `score` -> counters).

    Names stay unique: an entry without a name (or with one no id of ours looks like) gets `kpt_<position>` unless
    the list names another entry so, then the next free `kpt_NNN`; a name given twice keeps its first entry and
    gives the second a fresh one (else a DELETE could not reach the twin).
    """
    explicit = {str(i["name"]) for i in key_points if isinstance(i, dict) and _is_entry_id(i.get("name"))}
    taken: set[str] = set()
    counter = 0

    def fresh() -> str:
        nonlocal counter
        while True:
            counter += 1
            name = f"kpt_{counter:03d}"
            if name not in explicit and name not in taken:
                return name

    entries: list[dict[str, Any]] = []
    for position, item in enumerate(key_points, start=1):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            continue
        score = item.get("score")
        helpful = item.get("helpful", max(score, 0) if isinstance(score, int | float) else 0)
        harmful = item.get("harmful", max(-score, 0) if isinstance(score, int | float) else 0)
        own = item["name"] if _is_entry_id(item.get("name")) else None
        positional = f"kpt_{position:03d}"
        if own is not None and own not in taken:
            name = own
        elif own is None and positional not in explicit and positional not in taken:
            name = positional
        else:
            name = fresh()
        taken.add(name)
        entries.append({"name": name, "text": item.get("text", ""), "helpful": int(helpful), "harmful": int(harmful)})
    return entries


def repair_entries(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]], list[str]]:
    """Seed 000's leniency for the dict API: (a copy of `data` whose entries the contract can hold, the entries
    it cannot that were set aside by section, one reason per change).

    A negative or non-integer counter is repaired to 0, one above `MAX_COUNTER` to that; an entry without an id of
    the shape the product makes or without a text, or not an object, is set aside untouched (the caller puts it
    back), never dropped.
    """
    sections = data.get("sections")
    if not isinstance(sections, dict):
        return data, {}, []
    fixed: dict[str, Any] = {}
    aside: dict[str, list[Any]] = {}
    reasons: list[str] = []
    for section, items in sections.items():
        if not isinstance(items, list):
            fixed[section] = items
            continue
        kept = []
        for item in items:
            label = repr(item.get("name")) if isinstance(item, dict) else repr(item)[:40]
            if not (
                isinstance(item, dict)
                and _is_entry_id(item.get("name"))
                and isinstance(item.get("text"), str)
                and item["text"].strip()
            ):
                aside.setdefault(section, []).append(item)
                reasons.append(
                    f"entry {label[:60]} in {section} has no id or no text; left as it is, outside the update"
                )
                continue
            entry = dict(item)
            for counter in ("helpful", "harmful"):
                value = item.get(counter, 0)
                if type(value) is not int or value < 0:
                    entry[counter] = 0
                    reasons.append(f"entry {label}: {counter}={value!r} repaired to 0")
                elif value > MAX_COUNTER:
                    entry[counter] = MAX_COUNTER
                    reasons.append(f"entry {label}: {counter}={value!r} repaired to {MAX_COUNTER}")
            kept.append(entry)
        fixed[section] = kept
    return {**data, "sections": fixed}, aside, reasons


def migrate_legacy(data: dict[str, Any]) -> dict[str, Any]:
    """Contract 1 from a file without `contract_version`: the seeds' sections format gains the version; the
    flat `key_points` list becomes OTHERS entries (strings get the next free `kpt_NNN`, `score` counters)."""
    if "sections" not in data and isinstance(data.get("key_points"), list):
        data = {
            "version": data.get("version", "1.0"),
            "last_updated": data.get("last_updated"),
            "sections": {"OTHERS": _migrate_key_points(data["key_points"])},
        }
    return {"contract_version": PLAYBOOK_CONTRACTS[-1], **data}


def decode(text: str, source: str) -> dict[str, Any]:
    """The seeds-shaped dict of a playbook.json's text, legacy files migrated, sections filled in.

    Raises:
        PlaybookFileError: the text is not a valid playbook, or of a contract version not understood; the
            message names `source` and the versions understood.
    """
    try:
        data = parse_document(text)
    except ValueError as exc:
        raise PlaybookFileError(
            f"Playbook `{source}` is not valid JSON ({exc}); fix or move it, it was left untouched."
        ) from exc
    if not isinstance(data, dict):
        raise PlaybookFileError(f"Playbook `{source}` is not a JSON object; fix or move it, it was left untouched.")
    if "contract_version" not in data:
        data = migrate_legacy(data)
        log.info("Playbook `%s` has no contract_version: migrated from the legacy format to contract 1.", source)
    version = data["contract_version"]
    if type(version) is not int or version not in PLAYBOOK_CONTRACTS:
        raise PlaybookFileError(
            f"Playbook `{source}` has contract_version {version!r}; this playbook reads"
            f" {', '.join(map(str, PLAYBOOK_CONTRACTS))}: upgrade playbook, or export the file again from the"
            " program that wrote it. It was left untouched."
        )
    if not isinstance(data.get("sections", {}), dict):
        raise PlaybookFileError(f"Playbook `{source}` has a `sections` value that is not an object; fix it.")
    for section, items in (data.get("sections") or {}).items():
        if items is not None and not isinstance(items, list):
            raise PlaybookFileError(
                f"Playbook `{source}` has section {section[:40]!r} whose value is not a list of entries; fix it."
            )
    try:
        model = playbook_from_dict(data)
    except ValidationError as exc:
        raise PlaybookFileError(
            f"Playbook `{source}` {_first_invalid(data, exc)}; fix it, it was left untouched."
        ) from exc
    base = {k: v for k, v in data.items() if k != "key_points"}
    return playbook_to_dict(model, base=base)


def _first_invalid(data: dict[str, Any], exc: ValidationError) -> str:
    """What is wrong with the first entry of `data` the contract refuses, naming its section and position (never
    echoing more than a short, escaped piece of what the file holds: an id may be a paragraph of markup)."""
    for section, items in (data.get("sections") or {}).items():
        for position, item in enumerate(items or [], start=1):
            try:
                Entry.model_validate(item)
            except ValidationError as error:
                first = error.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "entry"
                where = f"entry {position} of section {str(section)[:40]!r}"
                shown = repr(first.get("input"))
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                if field == "name" and first["type"] == "string_pattern_mismatch":
                    return (
                        f"has {where} whose id {shown} is not one playbook makes (a section's slug, a dash and a"
                        " number: `pat-001`)"
                    )
                return f"has {where} with an invalid {field} ({first['msg']}: {shown})"
    first = exc.errors()[0]
    return f"has an invalid `{'.'.join(str(p) for p in first['loc'])}` ({first['msg']})"


def encode(data: dict[str, Any]) -> str:
    """The text of a playbook.json: `contract_version` first, indented, UTF-8 kept, one trailing newline."""
    body = {k: v for k, v in data.items() if k not in ("key_points", "contract_version")}
    return json.dumps({"contract_version": PLAYBOOK_CONTRACTS[-1], **body}, indent=2, ensure_ascii=False) + "\n"
