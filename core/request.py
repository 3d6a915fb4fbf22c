"""A model request from a prompt template: the placeholder values the steps share (sections, the playbook), the
whole request estimated against its token budget (refused before any call when over it), and a session's
transcript rendered into what the rest of the request leaves."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

from core.errors import BudgetError
from core.llm.base import LLMRequest, Payload
from core.markdown import format_bullets
from core.models import Entry, Playbook, SessionMessage
from core.patterns import Pattern
from core.prompts import PromptTemplate
from core.redact import Redactor
from core.render import RenderResult, render_session
from core.sections import SectionSet
from core.tokens import estimate_tokens

__all__ = ["Relevance", "build_request", "describe_sections", "playbook_text", "session_request"]


def describe_sections(sections: SectionSet) -> str:
    """One line per section, for prompts."""
    return "\n".join(f"- {s.name} ({s.slug}): {s.description}".rstrip(": ") for s in sections.sections)


def playbook_text(playbook: Playbook) -> str:
    """The playbook with ids, in the ACE bullet format agents can cite."""
    return format_bullets(playbook) or "(the playbook is empty)"


_WORD = Pattern(r"[a-z0-9][a-z0-9_.:/-]{3,}")
# Words of four letters or more that say nothing about what a lesson is about.
_COMMON = frozenset(
    "that this with from before after when then them they have were been into only also more most some such each"
    " every what which while where there their these those should would could about again first last once over"
    " under than very just like make made does done used uses using need needs lesson session agent user".split()
)


class Relevance:
    """A playbook too large for a prompt, cut to the entries a session's findings are about: each entry's words
    are read once (per epoch), then each session takes the entries that share the most of its words, within a
    token share, in playbook order; the rest are summarised by their count."""

    def __init__(self, playbook: Playbook) -> None:
        self.playbook = playbook
        self.entries = playbook.entries()
        self.words = [frozenset(_WORD.findall(e.text.lower())) - _COMMON for _, e in self.entries]
        self.cost = [
            estimate_tokens(f"[{e.name}] helpful={e.helpful} harmful={e.harmful} :: {e.text}") + 1
            for _, e in self.entries
        ]

    def text(self, query: str, most_tokens: int, keep: Collection[str] = ()) -> str:
        """The prompt's playbook for `query` (a session's findings): the entries named in `keep` (its near
        neighbours) first, then those sharing the most words with it, while they fit `most_tokens`."""
        wanted = set(_WORD.findall(query.lower())) - _COMMON
        scored = []
        for i, (_, entry) in enumerate(self.entries):
            if entry.name in keep:
                scored.append((math.inf, i))
            elif shared := len(wanted & self.words[i]):
                scored.append((shared / math.sqrt(len(self.words[i])), i))
        scored.sort(key=lambda x: (-x[0], x[1]))
        chosen: set[int] = set()
        used = 0
        for _, i in scored:
            if used + self.cost[i] <= most_tokens:
                chosen.add(i)
                used += self.cost[i]
        kept: dict[str, list[Entry]] = {name: [] for name in self.playbook.sections}
        for i in sorted(chosen):
            section, entry = self.entries[i]
            kept.setdefault(section, []).append(entry)
        shown = playbook_text(self.playbook.model_copy(update={"sections": kept}))
        left = len(self.entries) - len(chosen)
        return (
            f"{shown}\n\n({len(chosen)} of the playbook's {len(self.entries):,} entries are shown: the ones this"
            f" session's findings are about. The other {left:,} share no words with them; they are still checked"
            " for duplicates when your operations are applied.)"
        )


def build_request(
    template: PromptTemplate,
    values: dict[str, str],
    *,
    model: str,
    session_id: str | None,
    max_tokens: int = 4096,
    context: dict[str, Any] | None = None,
    budget_tokens: int | None = None,
    rendered: RenderResult | None = None,
) -> LLMRequest:
    """A request from a template and its placeholder values; the manifest names the output schema.

    The whole request (system, playbook, transcript) is estimated against `budget_tokens`; one over it is
    refused here, before any call (fail closed). `rendered`: the transcript it carries, whose
    compaction the request's `payload` accounting records.

    Raises:
        BudgetError: the request does not fit `budget_tokens`.
    """
    system, user = template.render(**values)
    tokens = estimate_tokens(system) + estimate_tokens(user)
    step = template.manifest.prompt_id
    if budget_tokens is not None and tokens > budget_tokens:
        raise BudgetError(
            f"The {step} request{f' for session `{session_id}`' if session_id else ''} needs about {tokens:,}"
            f" tokens, over its budget of {budget_tokens:,} (`max_input_tokens`); refused before any call:"
            " consolidate the playbook or raise the budget."
        )
    payload = Payload(tokens_est=tokens, budget_tokens=budget_tokens)
    if rendered is not None and rendered.compacted:
        payload = payload.model_copy(
            update={
                "compacted": True,
                "dropped_fields": sorted(rendered.dropped),
                "compaction_reason": f"transcript of about {rendered.raw_tokens_est:,} tokens over the"
                f" {rendered.budget_tokens:,} left for it; " + "; ".join(rendered.compaction_steps),
            }
        )
    return LLMRequest(
        step=step,  # type: ignore[arg-type]
        session_id=session_id,
        model=model,
        system=system,
        user=user,
        schema_name=template.manifest.output_schema,
        max_tokens=max_tokens,
        context=context or {},
        payload=payload,
    )


def session_request(
    template: PromptTemplate,
    values: dict[str, str],
    messages: Sequence[SessionMessage],
    *,
    budget_tokens: int,
    redactor: Redactor | None = None,
    model: str,
    session_id: str | None,
    max_tokens: int = 4096,
    context: dict[str, Any] | None = None,
) -> tuple[LLMRequest, RenderResult]:
    """A request that carries a session's transcript (`{transcript}`), rendered into what the rest of the
    request leaves of `budget_tokens`, and the rendering (for its redaction counts).

    Raises:
        BudgetError: even compacted, the transcript does not fit beside the instructions and the playbook.
    """
    overhead = sum(estimate_tokens(part) for part in template.render(**values, transcript="")) + 1
    rendered = render_session(messages, budget_tokens - overhead, redactor=redactor)
    if not rendered.fits:
        raise BudgetError(
            f"Session `{session_id}` does not fit the {template.manifest.prompt_id} budget of {budget_tokens:,}"
            f" tokens (`max_input_tokens`): instructions and playbook take {overhead:,}, the transcript even"
            f" compacted {rendered.tokens_est:,}; refused before any call."
        )
    request = build_request(
        template,
        {**values, "transcript": rendered.text},
        model=model,
        session_id=session_id,
        max_tokens=max_tokens,
        context=context,
        budget_tokens=budget_tokens,
        rendered=rendered,
    )
    return request, rendered
