"""The answers the model is asked for, and the structured-output schemas generated from them.

The JSON schemas go to servers that enforce structured output (Anthropic's `output_config`, a grammar on an
OpenAI-compatible server).

These are the wire shapes: strict (enums, no other keys). The contracts that parse an answer (`ReflectorOutput`,
`CuratorOutput` in `core.models`) are lenient on purpose about the items: a bad bullet tag or operation is recorded
as skipped, not a reason to refuse the answer. The answer as a whole is not: `answer_document` checks its shape
(`DOCUMENTS`: which keys, of which types), so that a cut-off answer, a bare list or the other step's answer is a
failed call with its reason, never "found nothing". A test checks that every field asked for here is one the
contracts read.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from core.errors import AnswerError
from core.jsonx import find_json

__all__ = [
    "ANSWERS",
    "DOCUMENTS",
    "OUTPUT_SCHEMAS",
    "CuratorAnswer",
    "CuratorDocument",
    "EvaluationAnswer",
    "OperationAnswer",
    "ReflectionAnswer",
    "ReflectionDocument",
    "ReflectorAnswer",
    "ReflectorDocument",
    "TagAnswer",
    "answer_document",
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
    citations: list[str] = []  # ADD: what the lesson rests on in the repository, as the session wrote it
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


class _Document(BaseModel):
    """An answer's shape as a whole: no keys but its own, each of its type, and at least one of them. The items
    (bullet tags, operations) are checked one by one afterwards, each skipped with its reason."""

    model_config = ConfigDict(extra="forbid", strict=True)

    contract_version: Literal[1] = 1

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.model_fields_set - {"contract_version"}:
            raise ValueError("it has none of its keys")
        return self


class ReflectorDocument(_Document):
    """The reflector's answer as a whole."""

    analysis: str = ""
    bullet_tags: list[Any] = []


class CuratorDocument(_Document):
    """The curator's answer as a whole."""

    reasoning: str = ""
    operations: list[Any] = []


class ReflectionDocument(_Document):
    """The combined reflection's answer as a whole (the seeds' one-call mode)."""

    new_key_points: list[Any] = []
    evaluations: list[Any] = []
    operations: Any = None  # the seeds read `operations` only when it is a list, and keep the rest of the answer


# The shape each output schema's answer must have as a whole, by the name a template gives it.
DOCUMENTS: dict[str, type[_Document]] = {
    "ReflectorOutput": ReflectorDocument,
    "CuratorOutput": CuratorDocument,
    "ReflectionOutput": ReflectionDocument,
}
_WHOSE = {"ReflectorOutput": "the reflector's", "CuratorOutput": "the curator's", "ReflectionOutput": "a reflection's"}


def answer_document(text: str | None, name: str) -> dict[str, Any]:
    """The JSON object of a model's answer to a request for `name` (`ReflectorOutput`, ...), found in its text
    (`core.jsonx.find_json`) and checked whole against `DOCUMENTS[name]`.

    Raises:
        AnswerError: the text holds no JSON object (`no_json`), JSON that never closes (`truncated`), or JSON of
            another shape (`wrong_shape`); the message says which, in one line.
    """
    found = find_json(text)
    if found.problem == "truncated":
        raise AnswerError(
            f"truncated: the answer's JSON never closes (it stops {len(text or '') - found.start:,} characters after"
            " it opens): the model was cut short",
            "truncated",
        )
    if found.problem == "not_object":
        raise AnswerError("wrong shape: the answer's JSON is a list, not an object", "wrong_shape")
    if found.value is None:
        raise AnswerError("unparseable model output (no JSON object)", "no_json")
    shape = DOCUMENTS[name]
    try:
        shape.model_validate(found.value)
    except ValidationError as exc:
        keys = ", ".join(f"`{k}`" for k in shape.model_fields if k != "contract_version")
        said = "; ".join(_problem(e) for e in exc.errors()[:3])
        raise AnswerError(
            f"wrong shape: not {_WHOSE[name]} answer (an object of {keys}): {said}", "wrong_shape"
        ) from None
    return found.value


def _problem(error: Any) -> str:
    """One of pydantic's errors about an answer's shape, in words."""
    key = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"`{key[:40]}` is not one of its keys"
    if kind in ("string_type", "list_type"):
        return f"`{key}` is not a {'string' if kind == 'string_type' else 'list'}"
    if not key:
        return str(error["msg"]).removeprefix("Value error, ")
    return f"`{key}`: {error['msg']}"


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
# Fields a small answer leaves out: each is one more string a small model fills to its bound, and an answer cut at
# the token limit is not JSON (a 135M model at 300 tokens).
_EXTRAS = frozenset({"citations"})
_ROOM_FOR_EXTRAS = 4000  # characters of answer below which the extras are left out of the grammar
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

    small = chars is not None and chars < _ROOM_FOR_EXTRAS

    def bound(node: Any, key: str | None = None) -> Any:
        if isinstance(node, dict):
            out = {
                k: bound(v, k)
                if k != "properties"
                else {p: bound(v2, p) for p, v2 in v.items() if not (small and p in _EXTRAS)}
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
