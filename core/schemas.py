"""The answers the model is asked for, and the structured-output schemas generated from them.

The JSON schemas go to servers that enforce structured output (Anthropic's `output_config`, a grammar on an
OpenAI-compatible server).

These are the wire shapes: strict (enums, no other keys). The contracts that parse an answer (`ReflectorOutput`,
`CuratorOutput` in `core.models`) are lenient on purpose: an answer that strays is parsed and its bad parts are
recorded as skipped, not refused whole. A test checks that every field asked for here is one the contracts read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ANSWERS",
    "OUTPUT_SCHEMAS",
    "CuratorAnswer",
    "EvaluationAnswer",
    "OperationAnswer",
    "ReflectionAnswer",
    "ReflectorAnswer",
    "TagAnswer",
    "bounded_schema",
    "output_schema",
]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TagAnswer(_Answer):
    """The reflector's verdict on one entry it saw."""

    name: str
    tag: Literal["helpful", "harmful", "neutral"]
    rationale: str


class OperationAnswer(_Answer):
    """One proposed change; which fields an operation needs depends on its type (the engine checks them)."""

    type: Literal["ADD", "UPDATE", "MERGE", "DELETE"]
    text: str = ""
    section: str = ""
    target_id: str = ""
    source_ids: list[str] = []
    merged_text: str = ""
    reason: str = ""
    trigger: str = ""
    scope: Literal["project", "global"] = "project"


class ReflectorAnswer(_Answer):
    """The reflector's answer: a diagnosis of the session and its verdicts."""

    analysis: str
    bullet_tags: list[TagAnswer]


class CuratorAnswer(_Answer):
    """The curator's answer: its reasoning and the operations it proposes."""

    reasoning: str
    operations: list[OperationAnswer]


class EvaluationAnswer(_Answer):
    """One verdict of the combined reflection."""

    name: str
    rating: str


class ReflectionAnswer(_Answer):
    """The combined reflection (one call that judges and proposes)."""

    evaluations: list[EvaluationAnswer]
    operations: list[OperationAnswer]


# A template names its answer by the contract it is parsed into (`output_schema` in its manifest).
ANSWERS: dict[str, type[_Answer]] = {
    "ReflectorOutput": ReflectorAnswer,
    "CuratorOutput": CuratorAnswer,
    "ReflectionOutput": ReflectionAnswer,
}


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON schema in the subset structured-output servers take: references inlined, no titles or
    defaults, no keys but the declared ones; the fields without a default are required."""
    generated = model.model_json_schema()
    defs = generated.pop("$defs", {})

    def plain(node: Any) -> Any:
        if isinstance(node, list):
            return [plain(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return plain(defs[node["$ref"].rsplit("/", 1)[1]])
        out = {k: plain(v) for k, v in node.items() if k not in ("title", "default", "description")}
        if out.get("type") == "object":
            out["additionalProperties"] = False
            out.setdefault("required", [])
        return out

    return dict(plain(generated))


OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {name: output_schema(model) for name, model in ANSWERS.items()}

# What a small model may write at most, so a grammar-constrained answer always ends (strings and lists).
_BOUNDS = {"analysis": 2000, "reasoning": 1000, "rationale": 300, "text": 500, "merged_text": 500, "reason": 300}
_MAX_ITEMS = {"bullet_tags": 10, "operations": 10, "evaluations": 10, "source_ids": 5}


def bounded_schema(name: str, max_tokens: int | None = None) -> dict[str, Any]:
    """`OUTPUT_SCHEMAS[name]` with string lengths and list sizes bounded (for grammar-enforcing servers).

    With `max_tokens`, the bounds shrink so that a typical answer fits in it: a small model fills every
    string to its bound, and an answer cut at the token limit is not JSON (seen with SmolLM2 at 300 tokens).
    """
    chars = max_tokens * 5 // 2 if max_tokens else None  # ~2.5 characters a token once JSON syntax is paid

    def length(bound: int) -> int:
        return max(40, min(bound, chars // 4)) if chars else bound

    def items(bound: int) -> int:
        return max(1, min(bound, chars // 400)) if chars else bound

    def bound(node: Any, key: str | None = None) -> Any:
        if isinstance(node, dict):
            out = {
                k: bound(v, k) if k != "properties" else {p: bound(v2, p) for p, v2 in v.items()}
                for k, v in node.items()
            }
            if out.get("type") == "string" and "enum" not in out:
                out["maxLength"] = length(_BOUNDS.get(key or "", 200))  # else ids, sections, names, triggers
            if out.get("type") == "array":
                out["maxItems"] = items(_MAX_ITEMS.get(key or "", 20))
            return out
        if isinstance(node, list):
            return [bound(v) for v in node]
        return node

    return bound(OUTPUT_SCHEMAS[name])
