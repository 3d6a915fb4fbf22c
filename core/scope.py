"""Project and global playbooks: which sessions a playbook learns from, and one model call per session
that serves both the project's playbook and the global one.

A bound playbook (`projects = [globs]`) learns from sessions whose project or working directory matches;
the global playbook (no globs) from every other session. For a bound playbook's session, the prompts show
the global playbook's entries too, with ids prefixed `GLOBAL_PREFIX`; each operation says where it belongs
(`"scope": "global"` on an ADD, or a prefixed id), and the output is split before it is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from core.models import CuratorOutput, Entry, Playbook, ReflectorOutput

__all__ = ["GLOBAL_PREFIX", "combine", "in_scope", "scope_note", "split_output"]

GLOBAL_PREFIX = "global/"
_PROJECT_ONLY = "PROJECT CONTEXT"  # facts about one repository never go to the global playbook


def in_scope(globs: Sequence[str], project: str | None, cwd: str | None) -> bool:
    """True when the session's project name or working directory matches one of `globs`."""
    return any(fnmatchcase(value, glob) for glob in globs for value in (project, cwd) if value)


def combine(project: Playbook, global_playbook: Playbook) -> Playbook:
    """The playbook a bound playbook's prompts show: its own entries, then the global ones with prefixed ids."""
    sections: dict[str, list[Entry]] = {name: list(items) for name, items in project.sections.items()}
    for name, items in global_playbook.sections.items():
        renamed = [e.model_copy(update={"name": GLOBAL_PREFIX + e.name}) for e in items]
        sections.setdefault(name, []).extend(renamed)
    return project.model_copy(update={"sections": sections})


def scope_note(global_name: str) -> str:
    """What the curator is told about the two playbooks it curates at once."""
    return (
        f"Scope: entries whose id starts with `{GLOBAL_PREFIX}` belong to the global playbook `{global_name}`"
        " (true in every project); the others to this project's playbook. UPDATE, MERGE and DELETE keep an"
        f' entry where it is (use its id as shown). An ADD goes to this project unless it has "scope": "global"'
        f" and is true in any repository; {_PROJECT_ONLY} lessons always stay with the project."
    )


def _is_global(value: object) -> bool:
    return isinstance(value, str) and value.startswith(GLOBAL_PREFIX)


def _strip(value: str) -> str:
    return value[len(GLOBAL_PREFIX) :]


def _route(raw: Any) -> tuple[str, Any]:
    """("global" | "project", the operation as the engine of that playbook should see it)."""
    if not isinstance(raw, dict):
        return "project", raw
    kind = raw.get("type")
    if kind == "ADD":
        section = str(raw.get("section") or "").strip().upper()
        wanted = raw.get("scope") == "global" and section != _PROJECT_ONLY
        return ("global" if wanted else "project"), {k: v for k, v in raw.items() if k != "scope"}
    if kind in ("UPDATE", "DELETE") and _is_global(raw.get("target_id")):
        return "global", raw | {"target_id": _strip(raw["target_id"])}
    sources = raw.get("source_ids")
    if kind == "MERGE" and isinstance(sources, list) and sources and all(_is_global(s) for s in sources):
        return "global", raw | {"source_ids": [_strip(s) for s in sources]}
    return "project", raw


def split_output(
    reflection: ReflectorOutput, curation: CuratorOutput
) -> tuple[tuple[ReflectorOutput, CuratorOutput], tuple[ReflectorOutput, CuratorOutput]]:
    """(the project playbook's part, the global playbook's part) of one session's outputs."""
    ops: dict[str, list[Any]] = {"project": [], "global": []}
    for raw in curation.operations:
        where, op = _route(raw)
        ops[where].append(op)
    tags = [t for t in reflection.bullet_tags if not _is_global(t.name)]
    global_tags = [t.model_copy(update={"name": _strip(t.name)}) for t in reflection.bullet_tags if _is_global(t.name)]
    return (
        (
            reflection.model_copy(update={"bullet_tags": tags}),
            curation.model_copy(update={"operations": ops["project"]}),
        ),
        (
            reflection.model_copy(update={"bullet_tags": global_tags}),
            curation.model_copy(update={"operations": ops["global"]}),
        ),
    )
