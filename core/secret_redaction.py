"""Secrets replaced by markers: in one text (`redact`), and over the blocks of messages, where a secret cut across two
shows only at their join (`redact_parts`, `redact_conversation`).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.random_token import Verdicts, judge_join, reads_past
from core.secret_finder import ChosenRules, Marked, RuleChoice, chosen_rules, chosen_spans, secret_spans

__all__ = [
    "BOUNDARY_CHARS",
    "boundary_spans",
    "redact",
    "redact_boundary",
    "redact_conversation",
    "redact_parts",
]

BOUNDARY_CHARS = 96  # how much of each side of a boundary `boundary_spans` reads (ingest's SQL reads the same)


def redact(text: str, *, rules: RuleChoice = True) -> tuple[str, int]:
    """`text` with every secret-looking span replaced, and how many were replaced (`rules`: see `secret_spans`)."""
    return _replaced(text, secret_spans(text, rules=rules))  # sorted and apart already: `_applied`'s merge is done


def _applied(text: str, spans: Sequence[Marked]) -> tuple[str, int]:
    """`text` with `spans` replaced (overlapping ones as one, the first one's marker, a removal first), and how many
    markers went in."""
    if len(spans) < 2:
        return _replaced(text, spans)
    merged: list[Marked] = []
    for start, end, marker in sorted(spans, key=lambda s: (s[0], s[2] != "")):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, marker))
    return _replaced(text, merged)


def _replaced(text: str, spans: Sequence[Marked]) -> tuple[str, int]:
    """`text` with `spans` (sorted, none overlapping) replaced, and how many markers went in."""
    if not spans:
        return text, 0
    if len(spans) == 1:  # the commonest case, without the lists
        start, end, marker = spans[0]
        return text[:start] + marker + text[end:], 1 if marker else 0
    out: list[str] = []
    at = 0
    for start, end, marker in spans:
        out.append(text[at:start])
        out.append(marker)
        at = end
    out.append(text[at:])
    return "".join(out), sum(1 for _, _, marker in spans if marker)


def boundary_spans(
    left: str,
    right: str,
    rules: RuleChoice = True,
    known: tuple[Sequence[Marked], Sequence[Marked]] | None = None,
    verdicts: Verdicts | None = None,
    ruled: tuple[bool, bool] | None = None,
) -> tuple[list[Marked], list[Marked]]:
    """The secrets that only show where `left` ends and `right` begins: a token cut in two (two content blocks, a
    paste split over two messages), or a line continued in the next ("the password is" / "hunter2x!").

    The last line of `left` and the first line of `right` (at most `BOUNDARY_CHARS` of each, beside the boundary) are
    joined as they are and with a space between; a secret found in a join that neither side holds alone is returned
    for both sides: its part in `left` with its marker, its part in `right` with the marker too, or with nothing ("")
    when the secret began in `left`. A longer secret cut in two is found in each half alone (a key's prefix, a random
    run), so the window costs a few hundred characters a boundary, however long the lines. `known`: what
    `secret_spans(left)` and `secret_spans(right)` found (with the same `rules`), when the caller has them: a side
    that is its line whole is not scanned again. `verdicts`: see `secret_spans`. `ruled`: whether any rule was run
    on each side of `known` (a side without one found random tokens alone).

    The spaced join is not scanned where it can find only what each side finds alone: where no rule's pattern
    matches it, its runs of token characters are each side's (the space ends a run), so its spans are each side's
    random tokens, which are each side's spans too where no rule ran on that side either.
    """
    cut = max(left.rfind("\n") + 1, len(left) - BOUNDARY_CHARS)
    stop = right.find("\n")
    tail, head = left[cut:], right[: min(len(right) if stop < 0 else stop, BOUNDARY_CHARS)]
    if not tail.strip() or not head.strip():
        return [], []
    n = len(tail)
    # Each side's own rules, chosen once: a side that is its block whole has them from the caller (`ruled`).
    sides: list[ChosenRules | None] = [None, None]
    whole = (known is not None and cut == 0, known is not None and len(head) == len(right))

    def side_rules(i: int) -> ChosenRules:
        choice = sides[i]
        if choice is None:
            choice = sides[i] = chosen_rules((tail, head)[i], rules)
        return choice

    def side_ruled(i: int) -> bool:
        return ruled[i] if whole[i] and ruled is not None else bool(side_rules(i)[0])

    if verdicts:  # a run cut in two, each half judged a random token on its side: the join is judged from them
        judge_join(tail, head, verdicts)
    found: list[Marked] = []
    for gap in (0, 1):  # tail + head, tail + " " + head; offsets back in tail + head
        window = tail + " " * gap + head
        choice = chosen_rules(window, rules)
        if gap and not choice[0] and (not choice[1] or not (reads_past(tail) or side_ruled(0) or side_ruled(1))):
            break  # the spaced join finds only what each side finds alone (see above)
        for start, end, marker in chosen_spans(window, choice, True, verdicts):
            a = start if start < n else max(start - gap, n)
            b = end if end <= n else max(end - gap, n)
            if b > a and "[REDACTED" not in window[start:end]:  # never a marker's parts
                found.append((a, b, marker))
    if not found:
        return [], []
    # A span across the boundary is in neither side alone: a side is scanned alone only when a span lies within it
    # (a secret found in a join mostly crosses it, and each scan is a pass of every rule the side triggers).
    alone: set[tuple[int, int]] = set()
    if any(b <= n for _, b, _ in found):
        own = known[0] if known is not None and whole[0] else chosen_spans(tail, side_rules(0), True, verdicts)
        alone |= {(a, b) for a, b, _ in own}
    if any(a >= n for a, _, _ in found):
        own = known[1] if known is not None and whole[1] else chosen_spans(head, side_rules(1), True, verdicts)
        alone |= {(a + n, b + n) for a, b, _ in own}
    in_left: list[Marked] = []
    in_right: list[Marked] = []
    for a, b, marker in found:
        if (a, b) in alone:
            continue
        if a < n:
            in_left.append((cut + a, cut + min(b, n), marker))
        if b > n:
            in_right.append((max(a, n) - n, b - n, "" if a < n else marker))
    return in_left, in_right


def redact_boundary(left: str, right: str, *, rules: RuleChoice = True) -> tuple[str, str, int]:
    """`left` and `right` without the secrets that only show where one ends and the next begins (see
    `boundary_spans`): (left, right, secrets replaced)."""
    in_left, in_right = boundary_spans(left, right, rules)
    new_left, n = _applied(left, in_left)
    new_right, k = _applied(right, in_right)
    return new_left, new_right, n + k


def redact_parts(
    parts: Sequence[str],
    *,
    rules: RuleChoice = True,
    extra: dict[int, list[Marked]] | None = None,
    verdicts: Verdicts | None = None,
) -> tuple[list[str], int]:
    """`redact` over the blocks of one message, catching a secret cut across two blocks (`rules`: see
    `secret_spans`, for every block and join).

    Every span is found in the texts as they are: each block's own, and each boundary's (`boundary_spans`); then
    each block is redacted once. `extra`: more spans, by block (those of message boundaries, `redact_conversation`).
    A run of token characters is judged once however many of the texts hold it (`verdicts`: see `secret_spans`; one
    for this call when not given).
    """
    verdicts = {} if verdicts is None else verdicts
    choices = [chosen_rules(part, rules) for part in parts]
    own = [chosen_spans(part, choice, True, verdicts) for part, choice in zip(parts, choices, strict=True)]
    ruled = [bool(chosen) for chosen, _ in choices]
    spans = [list(found) for found in own]
    for i in range(len(parts) - 1):
        in_left, in_right = boundary_spans(
            parts[i], parts[i + 1], rules, (own[i], own[i + 1]), verdicts, (ruled[i], ruled[i + 1])
        )
        spans[i] += in_left
        spans[i + 1] += in_right
    for i, more in (extra or {}).items():
        spans[i] += more
    out: list[str] = []
    total = 0
    for part, found in zip(parts, spans, strict=True):
        text, n = _applied(part, found)
        out.append(text)
        total += n
    return out, total


def redact_conversation(messages: Sequence[Sequence[str]]) -> tuple[list[list[str]], int]:
    """`redact_parts` over each message's text blocks, with the secrets that show only where one message's last block
    ends and the next message's first begins (`boundary_spans`): what ingest stores of a file's prompts (the user's
    text messages, in order, whatever came between them; a message without a text block is passed over)."""
    extra: list[dict[int, list[Marked]]] = [{} for _ in messages]
    verdicts: Verdicts = {}
    previous: int | None = None
    for i, blocks in enumerate(messages):
        if not blocks:
            continue
        if previous is not None:
            last = len(messages[previous]) - 1
            in_left, in_right = boundary_spans(messages[previous][last], blocks[0], verdicts=verdicts)
            extra[previous].setdefault(last, []).extend(in_left)
            extra[i].setdefault(0, []).extend(in_right)
        previous = i
    out: list[list[str]] = []
    total = 0
    for blocks, more in zip(messages, extra, strict=True):
        texts, n = redact_parts(blocks, extra=more, verdicts=verdicts)
        out.append(texts)
        total += n
    return out, total
