"""Prompt templates: a machine-readable manifest line, then a SYSTEM part and a USER part.

The manifest names the template's placeholders and output schema; both are checked when the template
loads, so a template that lacks a placeholder or names an unknown schema fails before any model call
(seed 004_: fail closed). A playbook may override a template by putting a file of the same name in its
own prompt folder; otherwise the default in `core/templates/` is used (seed 003_).
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from core.errors import PromptError
from core.models import OP_TYPES

__all__ = [
    "DEFAULT_PROMPTS_DIR",
    "OUTPUT_SCHEMAS",
    "PromptManifest",
    "PromptTemplate",
    "bounded_schema",
    "load_template",
]

# Shipped inside the package (package data), so a wheel install finds them as an editable one does.
DEFAULT_PROMPTS_DIR = Path(__file__).resolve().parent / "templates"
_SYSTEM = "=== SYSTEM ==="
_USER = "=== USER ==="

_TAG = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tag": {"type": "string", "enum": ["helpful", "harmful", "neutral"]},
        "rationale": {"type": "string"},
    },
    "required": ["name", "tag", "rationale"],
    "additionalProperties": False,
}
_OPERATION = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": list(OP_TYPES)},
        "text": {"type": "string"},
        "section": {"type": "string"},
        "target_id": {"type": "string"},
        "source_ids": {"type": "array", "items": {"type": "string"}},
        "merged_text": {"type": "string"},
        "reason": {"type": "string"},
        "trigger": {"type": "string"},
        "scope": {"type": "string", "enum": ["project", "global"]},
    },
    "required": ["type"],
    "additionalProperties": False,
}
# JSON schemas for servers that support structured output; the text path validates the same shapes.
OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "ReflectorOutput": {
        "type": "object",
        "properties": {"analysis": {"type": "string"}, "bullet_tags": {"type": "array", "items": _TAG}},
        "required": ["analysis", "bullet_tags"],
        "additionalProperties": False,
    },
    "CuratorOutput": {
        "type": "object",
        "properties": {"reasoning": {"type": "string"}, "operations": {"type": "array", "items": _OPERATION}},
        "required": ["reasoning", "operations"],
        "additionalProperties": False,
    },
    "ReflectionOutput": {
        "type": "object",
        "properties": {
            "evaluations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "rating": {"type": "string"}},
                    "required": ["name", "rating"],
                    "additionalProperties": False,
                },
            },
            "operations": {"type": "array", "items": _OPERATION},
        },
        "required": ["evaluations", "operations"],
        "additionalProperties": False,
    },
}


class PromptManifest(BaseModel):
    """The first line of a template."""

    prompt_id: str
    version: int
    placeholders: list[str]
    output_schema: str
    output_restrictions: list[str] = Field(default_factory=list)


class PromptTemplate(BaseModel):
    """A validated template."""

    manifest: PromptManifest
    system: str
    user: str
    source: str

    @property
    def digest(self) -> str:
        """Short hash of the template text, recorded with every exchange."""
        return hashlib.sha256((self.system + _USER + self.user).encode()).hexdigest()[:12]

    def render(self, **values: str) -> tuple[str, str]:
        """(system text, user text) with every placeholder filled."""
        missing = set(self.manifest.placeholders) - set(values)
        if missing:
            raise PromptError(f"Prompt `{self.manifest.prompt_id}` needs values for {sorted(missing)}; pass them all.")
        return self.system.format(**values), self.user.format(**values)


def _fields(text: str, source: Path) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}
    except ValueError as exc:
        raise PromptError(
            f"Prompt `{source}` has an unbalanced brace ({exc}); write literal braces as {{{{ and }}}}."
        ) from exc


def parse_template(text: str, source: Path) -> PromptTemplate:
    """Validate a template's manifest against its body."""
    first, _, rest = text.partition("\n")
    try:
        manifest = PromptManifest.model_validate(json.loads(first))
    except (ValueError, ValidationError) as exc:
        raise PromptError(
            f"Prompt `{source}` must start with a one-line JSON manifest (prompt_id, version, placeholders,"
            " output_schema)."
        ) from exc
    if manifest.output_schema not in OUTPUT_SCHEMAS:
        raise PromptError(
            f"Prompt `{source}` names unknown output schema `{manifest.output_schema}`;"
            f" use one of {sorted(OUTPUT_SCHEMAS)}."
        )
    if _SYSTEM not in rest or _USER not in rest:
        raise PromptError(f"Prompt `{source}` needs a `{_SYSTEM}` part and a `{_USER}` part.")
    system = rest.split(_SYSTEM, 1)[1].split(_USER, 1)[0].strip("\n")
    user = rest.split(_USER, 1)[1].strip("\n")
    used = _fields(system, source) | _fields(user, source)
    declared = set(manifest.placeholders)
    if declared - used:
        raise PromptError(
            f"Prompt `{source}` lacks placeholder(s) {sorted(declared - used)} named in its manifest; add them."
        )
    if used - declared:
        raise PromptError(
            f"Prompt `{source}` uses placeholder(s) {sorted(used - declared)} its manifest does not declare."
        )
    return PromptTemplate(manifest=manifest, system=system, user=user, source=str(source))


def load_template(name: str, *, override_dirs: Sequence[Path] = ()) -> PromptTemplate:
    """Load `name` (e.g. `curator`) from the first override folder that has it, else the default."""
    for folder in [*override_dirs, DEFAULT_PROMPTS_DIR]:
        path = folder / f"{name}.txt"
        if path.is_file():
            return parse_template(path.read_text(encoding="utf-8"), path)
    raise PromptError(f"No prompt template `{name}.txt` in {[str(d) for d in override_dirs]} or the defaults.")


# What a small model may write at most, so a grammar-constrained answer always ends (strings and lists).
_BOUNDS = {"analysis": 2000, "reasoning": 1000, "rationale": 300, "text": 500, "merged_text": 500, "reason": 300}
_MAX_ITEMS = {"bullet_tags": 10, "operations": 10, "evaluations": 10, "source_ids": 5}


def bounded_schema(name: str) -> dict[str, Any]:
    """`OUTPUT_SCHEMAS[name]` with string lengths and list sizes bounded (for grammar-enforcing servers)."""

    def bound(node: Any, key: str | None = None) -> Any:
        if isinstance(node, dict):
            out = {
                k: bound(v, k) if k != "properties" else {p: bound(v2, p) for p, v2 in v.items()}
                for k, v in node.items()
            }
            if out.get("type") == "string" and key in _BOUNDS and "enum" not in out:
                out["maxLength"] = _BOUNDS[key]
            if out.get("type") == "string" and key not in _BOUNDS and "enum" not in out:
                out["maxLength"] = 200  # ids, sections, names, triggers
            if out.get("type") == "array":
                out["maxItems"] = _MAX_ITEMS.get(key or "", 20)
            return out
        if isinstance(node, list):
            return [bound(v) for v in node]
        return node

    return bound(OUTPUT_SCHEMAS[name])
