"""Agents' own reports over MCP (`hurt`, `wrong`) as harmful tags: they weigh against an entry's helpful tags, but
never make the harmful tags pruning needs (`core.operations.should_prune`): an agent that read a hostile page can
report in session after session. Which of an entry's tags are theirs, followed through merges."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from core.models import ApplyReport

__all__ = ["applied_merges", "reports_carried"]


def reports_carried(reported: Mapping[str, int], merges: Iterable[tuple[str, Sequence[str]]]) -> dict[str, int]:
    """`reported` (agents' harmful reports by entry id) after `merges` (each: the id made, the ids merged into it),
    in order: a merged entry sums its sources' counters, so it carries their reports too (else a merge would turn
    agents' reports into tags that prune)."""
    carried = dict(reported)
    for made, sources in merges:
        total = sum(carried.get(name, 0) for name in dict.fromkeys([*sources, made]))
        if total:
            carried[made] = total
    return carried


def applied_merges(report: ApplyReport) -> list[tuple[str, list[str]]]:
    """The MERGEs `report` applied: (the id made, the ids merged into it), in order."""
    return [
        (o.entry_id, o.target_ids)
        for o in report.outcomes
        if o.type == "MERGE" and o.status == "applied" and o.entry_id and o.target_ids
    ]
