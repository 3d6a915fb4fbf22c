"""Pydantic contracts for everything that crosses a boundary.

Playbooks, operations, the two LLM outputs and the apply report are serialised to files, to DuckDB JSON
columns and to prompts. Each top-level payload carries `contract_version`; a payload with another
version is refused rather than silently reinterpreted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

__all__ = [
    "CONTRACT_VERSION",
    "ENTRY_ID_PATTERN",
    "MAX_BULLET_TAGS",
    "MAX_COUNTER",
    "MAX_OPERATIONS",
    "OP_TYPES",
    "SLUG_PATTERN",
    "TRUNCATED_TYPE",
    "AddOp",
    "ApplyReport",
    "BulletTag",
    "CuratorOutput",
    "DeleteOp",
    "Entry",
    "EntryId",
    "EvaluationOutcome",
    "Guards",
    "MergeOp",
    "OpOutcome",
    "OpType",
    "Operation",
    "Playbook",
    "PruneRecord",
    "ReflectorOutput",
    "SessionMessage",
    "SkipCode",
    "UpdateOp",
    "skip_label",
]

CONTRACT_VERSION: Literal[1] = 1

NonEmptyStr = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
# A section's slug, as ids carry it: a lowercase identifier (`pat`, `mis`, a sections.yaml's own).
SLUG_PATTERN = r"[a-z][a-z0-9_]*"
# The ids the product makes, and only those: `{slug}-NNN` (`core.operations.next_entry_id`) and a legacy file's
# `kpt_NNN` (`core.playbook_json.migrate_legacy`). An id is printed bare in CLAUDE.md, hook output and MCP answers,
# so an entry from outside data (an imported file, a hook script's playbook.json) holding anything else, a line
# break, a marker or a heading, is refused where it is read rather than cleaned wherever it is printed.
ENTRY_ID_PATTERN = rf"^(?:{SLUG_PATTERN}-[0-9]+|kpt_[0-9]+)$"
EntryId = Annotated[str, StringConstraints(pattern=ENTRY_ID_PATTERN)]
# The largest helpful/harmful count: the store keeps counters as 32-bit integers, so a file's larger one is refused
# where it is read (naming the file) and the engine's sums and increments stop here.
MAX_COUNTER = 2**31 - 1
_Count = Annotated[int, Field(ge=0, le=MAX_COUNTER)]
OpType = Literal["ADD", "UPDATE", "MERGE", "DELETE"]
OP_TYPES: tuple[OpType, ...] = ("ADD", "UPDATE", "MERGE", "DELETE")
# At most the first 10 operations of one curator call are considered (a bound on what one answer can do); the
# rest are dropped where the answer is parsed and noted once, as one outcome of this type.
MAX_OPERATIONS = 10
TRUNCATED_TYPE = "*"
# A reflection gives each entry at most one verdict, and at most this many verdicts: an answer that tags one
# entry 10,000 times (a transcript can ask for that) must not make it unprunable or first in every export.
MAX_BULLET_TAGS = 100
# Why an operation was not applied, as a machine code: summaries, views and charts group by it; the
# human `reason` beside it names the ids and texts.
SkipCode = Literal[
    "not_object",
    "unknown_type",
    "empty_field",
    "too_few_sources",
    "not_found",
    "duplicate_text",
    "truncated",
    "too_long",
    "near_duplicate",
    "mixed_script",
]


def skip_label(op_type: str, code: str | None) -> str:
    """How a group of skipped operations is named in summaries and charts: `ADD: duplicate text`."""
    return f"{op_type}: {(code or 'other').replace('_', ' ')}"


class _Contract(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)


class Entry(BaseModel):
    """One lesson: a stable id, its text and its helpful/harmful counters."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: EntryId
    text: NonEmptyStr
    helpful: _Count = 0
    harmful: _Count = 0


class Playbook(_Contract):
    """A sectioned list of entries. Sections are kept in canonical order, empty ones included."""

    contract_version: Literal[1] = CONTRACT_VERSION
    version: str = "1.0"
    last_updated: str | None = None
    sections: dict[str, list[Entry]]

    def entries(self) -> list[tuple[str, Entry]]:
        """All (section, entry) pairs in canonical order."""
        return [(name, entry) for name, items in self.sections.items() for entry in items]

    def find(self, name: str) -> tuple[str, Entry] | None:
        """The (section, entry) with id `name`, or None."""
        for section, items in self.sections.items():
            for entry in items:
                if entry.name == name:
                    return section, entry
        return None

    def size(self) -> int:
        """Number of entries across all sections."""
        return sum(len(items) for items in self.sections.values())


class AddOp(_Contract):
    """ADD: a new entry in `section` (OTHERS when missing or unknown)."""

    type: Literal["ADD"] = "ADD"
    text: NonEmptyStr
    section: str | None = None
    # A short literal that marks, in a transcript, the situation the lesson is about (an error text):
    # counted before and after the entry was first exported, as an observation (`v_trigger_recurrence`).
    trigger: str | None = None


class UpdateOp(_Contract):
    """UPDATE: replace the text of `target_id`, keeping its id, counters and section."""

    type: Literal["UPDATE"] = "UPDATE"
    target_id: NonEmptyStr
    text: NonEmptyStr


class MergeOp(_Contract):
    """MERGE: replace two or more entries by one whose counters are their sums."""

    type: Literal["MERGE"] = "MERGE"
    source_ids: Annotated[list[str], Field(min_length=2)]
    merged_text: NonEmptyStr
    section: str | None = None


class DeleteOp(_Contract):
    """DELETE: remove `target_id`; `reason` is reported, never stored in the playbook."""

    type: Literal["DELETE"] = "DELETE"
    target_id: NonEmptyStr
    reason: str = ""


Operation = Annotated[AddOp | UpdateOp | MergeOp | DeleteOp, Field(discriminator="type")]


class BulletTag(_Contract):
    """The reflector's verdict on one entry it saw in the playbook."""

    name: str
    tag: str
    rationale: str = ""


class ReflectorOutput(_Contract):
    """Reflector step: a diagnosis of the session and tags on the playbook entries."""

    contract_version: Literal[1] = CONTRACT_VERSION
    analysis: str = ""
    bullet_tags: list[BulletTag] = Field(default_factory=list)


class CuratorOutput(_Contract):
    """Curator step: its reasoning and the operations it proposes.

    Operations stay raw dicts here: they are untrusted until the engine has validated each one, and an
    invalid one must be recorded as skipped with its reason rather than reject the whole output.
    """

    contract_version: Literal[1] = CONTRACT_VERSION
    reasoning: str = ""
    operations: list[Any] = Field(default_factory=list)
    # How many operations the model proposed, when that was more than MAX_OPERATIONS and the rest were dropped
    # where the answer was parsed.
    truncated_from: int | None = None


class OpOutcome(_Contract):
    """What happened to one proposed operation."""

    index: int
    type: str
    status: Literal["applied", "skipped", "truncated"]
    code: SkipCode | None = None
    reason: str = ""
    entry_id: str | None = None
    target_ids: list[str] = Field(default_factory=list)
    section: str | None = None
    old_text: str | None = None
    new_text: str | None = None
    raw: Any = None
    similarity: float | None = None  # for `near_duplicate`: how close `new_text` is to `entry_id`
    trigger: str | None = None  # for an applied ADD that carried one (cleaned by `clean_trigger`)


class EvaluationOutcome(_Contract):
    """What happened to one helpful/harmful/neutral verdict."""

    name: str
    rating: str
    # unexposed: a tag on an entry the session's agent never had (refused: it cannot have helped or hurt)
    status: Literal["applied", "ignored", "unknown_name", "invalid", "unexposed"]
    rationale: str = ""


class PruneRecord(_Contract):
    """An entry removed by pruning (harmful >= 3 and harmful > helpful)."""

    name: str
    section: str
    text: str
    helpful: int
    harmful: int


class Guards(_Contract):
    """What one session's model output may do to a playbook (the pipeline's limits; the seeds' API has none).

    A session is held (not applied, reason `mass_change`) when it would remove more than `max_removed`
    live entries AND more than `max_removed_share` of them: small playbooks can still lose a few
    entries, large ones a proportionate number, and no single answer can empty either.
    """

    max_entry_chars: int = Field(default=500, ge=20)
    max_removed: int = Field(default=3, ge=0)
    max_removed_share: float = Field(default=0.3, ge=0.0, le=1.0)


class ApplyReport(_Contract):
    """The structured form of the seeds' diagnostics (summary, skipped operations, evaluations, prune report)."""

    contract_version: Literal[1] = CONTRACT_VERSION
    proposed: int = 0
    truncated_from: int | None = None
    outcomes: list[OpOutcome] = Field(default_factory=list)
    evaluations: list[EvaluationOutcome] = Field(default_factory=list)
    pruned: list[PruneRecord] = Field(default_factory=list)
    rolled_back: str | None = None
    entries_before: int = 0
    entries_after: int = 0
    held: str | None = None  # why the session was not applied (`mass_change`): set by `apply_session` guards

    def empty(self) -> bool:
        """True when the session proposed, tagged and pruned nothing: there is nothing to record in a version."""
        return not (self.proposed or self.outcomes or self.evaluations or self.pruned or self.held)

    def applied(self, op_type: str | None = None) -> int:
        """Number of operations applied, optionally of one type."""
        return sum(1 for o in self.outcomes if o.status == "applied" and (op_type is None or o.type == op_type))

    def skipped(self, op_type: str | None = None) -> int:
        """Number of operations skipped (truncated ones excluded), optionally of one type."""
        return sum(1 for o in self.outcomes if o.status == "skipped" and (op_type is None or o.type == op_type))

    def counts(self) -> dict[str, dict[str, int]]:
        """Applied and skipped counts per operation type, unknown types under `unknown`."""
        table: dict[str, dict[str, int]] = {t: {"applied": 0, "skipped": 0} for t in (*OP_TYPES, "unknown")}
        for o in self.outcomes:
            if o.status == "truncated":
                continue
            key = o.type if o.type in table else "unknown"
            table[key][o.status] += 1
        return table

    def summary(self) -> str:
        """The seeds' one-line summary of an apply."""
        c = self.counts()
        lines = ["Curator operations summary:"]
        for t in OP_TYPES:
            lines.append(f"  {t}: {c[t]['applied']} applied, {c[t]['skipped']} skipped")
        lines.append(f"  Unknown type: {c['unknown']['skipped']} skipped")
        if self.truncated_from is not None:
            lines.append(f"  Operations list truncated from {self.truncated_from} to {MAX_OPERATIONS}")
        reasons = [o.reason for o in self.outcomes if o.status == "skipped"]
        if reasons:
            lines.append("  Skip reasons:")
            lines.extend(f"    - {r}" for r in reasons)
        if self.pruned:
            lines.append(f"  Pruned: {', '.join(p.name for p in self.pruned)}")
        if self.rolled_back:
            lines.append(f"  Rolled back: {self.rolled_back}")
        return "\n".join(lines)


class SessionMessage(_Contract):
    """One normalised content block of a transcript (a row of the `messages` table)."""

    seq: int
    part: int = 0
    role: str
    kind: str
    text: str | None = None
    tool_name: str | None = None
    tool_input: str | None = None
    tool_use_id: str | None = None
    is_error: bool = False
    is_meta: bool = False
    is_prompt: bool = False
    is_sidechain: bool = False
