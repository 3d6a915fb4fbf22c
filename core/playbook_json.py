"""The `playbook.json` codec: the seeds' file format to and from the typed `Playbook`.

The format is `{"version", "last_updated", "sections": {name: [{"name", "text", "helpful", "harmful"}]}}`;
the legacy flat `{"key_points": [...]}` form of older hook scripts is migrated on the way in. Pure: text
and dicts in, values out; reading and writing files is `core.store.files`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from core.errors import PlaybookFileError
from core.models import Entry, Playbook
from core.operations import empty_playbook
from core.sections import DEFAULT_SECTIONS, SectionSet

__all__ = ["decode", "default_dict", "encode", "playbook_from_dict", "playbook_to_dict"]


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


def _migrate_key_points(key_points: list[Any]) -> list[dict[str, Any]]:
    """Legacy flat `key_points` -> OTHERS entries (strings become `kpt_NNN`, `score` -> counters).

    Names stay unique: an entry without a name gets `kpt_<position>` unless the list names another entry so,
    then the next free `kpt_NNN`; a name given twice keeps its first entry and gives the second a fresh one
    (else a DELETE could not reach the twin).
    """
    explicit = {str(i["name"]) for i in key_points if isinstance(i, dict) and i.get("name")}
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
        own = str(item["name"]) if item.get("name") else None
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


def decode(text: str, source: str) -> dict[str, Any]:
    """The seeds-shaped dict of a playbook.json's text, legacy files migrated, sections filled in.

    Raises:
        PlaybookFileError: the text is not a valid playbook; the message names `source`.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PlaybookFileError(
            f"Playbook `{source}` is not valid JSON ({exc}); fix or move it, it was left untouched."
        ) from exc
    if not isinstance(data, dict):
        raise PlaybookFileError(f"Playbook `{source}` is not a JSON object; fix or move it, it was left untouched.")
    if "sections" not in data and isinstance(data.get("key_points"), list):
        data = {
            "version": data.get("version", "1.0"),
            "last_updated": data.get("last_updated"),
            "sections": {"OTHERS": _migrate_key_points(data["key_points"])},
        }
    if not isinstance(data.get("sections", {}), dict):
        raise PlaybookFileError(f"Playbook `{source}` has a `sections` value that is not an object; fix it.")
    try:
        model = playbook_from_dict(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PlaybookFileError(
            f"Playbook `{source}` has an invalid entry ({first['msg']}: {first.get('input')!r}); fix it."
        ) from exc
    base = {k: v for k, v in data.items() if k != "key_points"}
    return playbook_to_dict(model, base=base)


def encode(data: dict[str, Any]) -> str:
    """The text of a playbook.json: indented, UTF-8 kept, one trailing newline."""
    return json.dumps({k: v for k, v in data.items() if k != "key_points"}, indent=2, ensure_ascii=False) + "\n"
