"""Which secret rules can find anything in a text: one RE2 set pass over it says.

A rule run costs a call into RE2 and back (~1 us) even where it finds nothing, and a common word triggers several
(`key`: four rules; `pass`: six), so a short text paid for rules that could not match (2.4x the redaction of 100
ordinary bytes for a PEM header cut short). Here one pass over the text names the rules whose patterns match
somewhere; the redactor (`core.redact`) runs those and no others. Where the pass cannot say (its DFA out of memory),
the rules' trigger words choose instead (`Rule.triggers`).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import re2

from core.pattern_alphabet import may_match_within
from core.patterns import Literals
from core.secret_rule import Rule

__all__ = ["RuleSet", "ascii_lowered"]

# What a run of token characters (a key, a random token) is made of: `core.random_token`'s runs.
_TOKEN_CHARS = string.ascii_letters + string.digits + "+/_-"


def ascii_lowered(text: str) -> str:
    """`text` with its ASCII letters lower-cased and nothing else changed, so every offset is still the original's:
    what an `ignore_case` rule reads."""
    # The UTF-8 bytes of other characters are all >= 0x80, which `bytes.lower` leaves alone (4x faster than
    # `str.translate`).
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


class RuleSet:
    """The rules that may match a text (`chosen`), and whether a random token may be there.

    The set's patterns are the rules' own: a rule whose pattern matches nowhere finds nothing, and every match holds
    one of the rule's triggers (tested), so the same rules find the same spans; Twilio's, whose check looks for its
    word before the match, asks for the word and the match together. `runs`: more patterns, each a necessary
    condition for a random token; all must match for the caller to look for one.

    Two sets: the case-blind rules read the text with its ASCII letters lower-cased (`bytes.lower` does just that),
    the others the text itself. Each set's first member matches every text, so a pass that failed (the set's DFA out
    of memory) says so by its absence, and the triggers choose. The second is not read where the first says the text
    is token characters alone (a pasted key, a blob, a block that is one run: a text no case-blind rule in it can
    match, `core.pattern_alphabet`): a short text that is one random token pays one pass, not two.
    """

    __slots__ = ("_cased", "_cased_rules", "_folded", "_folded_rules", "_other", "_rules", "_runs", "_triggers")

    def __init__(self, rules: Sequence[Rule], runs: Sequence[str]) -> None:
        self._rules = tuple(rules)
        # A case-blind rule that may match a text of token characters alone (Twilio's hex) is read case-blind in the
        # first set (RE2's `(?i)`: every text the lower-cased one matches, and the Kelvin sign's and long s's), so a
        # text of those characters alone is read by the first set only: the others need a space, `=`, `:` or `.`.
        alone = {
            i for i, rule in enumerate(rules) if rule.ignore_case and may_match_within(self._source(rule), _TOKEN_CHARS)
        }
        self._cased_rules = [i for i, rule in enumerate(rules) if not rule.ignore_case or i in alone]
        self._folded_rules = [i for i, rule in enumerate(rules) if rule.ignore_case and i not in alone]
        cased = [
            self._source(rules[i]) if i not in alone else f"(?i:{self._source(rules[i])})" for i in self._cased_rules
        ]
        # last, a character no run of token characters holds: where it is absent, the second set is not read
        self._cased = self._compiled([*cased, *runs, "[^A-Za-z0-9+/_\\-]"])
        self._folded = self._compiled([self._source(rules[i]) for i in self._folded_rules])
        # the members after the cased rules: each a necessary condition for a random token
        self._runs = frozenset(range(len(self._cased_rules) + 1, len(self._cased_rules) + 1 + len(runs)))
        self._other = len(self._cased_rules) + 1 + len(runs)
        # Which rules' triggers a text holds (one group of literals a rule), in one RE2 pass: a `str` search per
        # trigger (73 of them) and a set test per rule cost ~10 us a text however short, and `:` is a trigger, so
        # nearly every text paid it. Only where the set pass cannot say.
        self._triggers = Literals([rule.triggers for rule in rules])

    @staticmethod
    def _source(rule: Rule) -> str:
        # Twilio's pattern alone (32 hex digits) is in every commit id; its check wants the word before it on the line
        source = r"twilio[^\n]*[0-9a-f]{32}" if rule.name == "twilio_token" else rule.pattern.source
        return f"(?{rule.pattern.flags}){source}" if rule.pattern.flags else source

    @staticmethod
    def _compiled(sources: Sequence[str]) -> Any:
        options = re2.Options()
        options.max_mem = 64 << 20  # room for the DFA of ~30 patterns on a long text before it gives up
        found = re2.Set.SearchSet(options)
        found.Add("")  # matches every text: its absence says the pass failed
        for source in sources:
            found.Add(source)
        found.Compile()
        return found

    def matching(self, text: str) -> tuple[list[int], bool] | None:
        """The indexes of the rules whose patterns match somewhere in `text`, in order, and whether it may hold a
        random token (every condition in `runs` met); None where a pass could not say."""
        data = text.encode("ascii") if text.isascii() else text.encode("utf-8", "playbook.fffd")
        cased = self._cased.Match(data)
        if not cased:
            return None
        found = [self._cased_rules[k - 1] for k in cased if 0 < k <= len(self._cased_rules)]
        if self._folded_rules and self._other in cased:
            folded = self._folded.Match(data.lower())
            if not folded:
                return None
            found += [self._folded_rules[k - 1] for k in folded if k]
        found.sort()
        return found, self._runs.issubset(cased)

    def chosen(self, text: str, among: Sequence[Rule] | None = None) -> tuple[list[tuple[Rule, str]], bool]:
        """The rules to match `text` against, in order, each with the text it is matched against (`ascii_lowered`
        for an `ignore_case` rule), and whether a random token may be there: `among` when given (rules the caller
        knows may match), else those whose patterns match (`matching`), or where its pass could not say, those
        whose triggers `text` holds (and those without triggers)."""
        rules = self._rules
        if among is not None and not any(rule.ignore_case for rule in among):
            return [(rule, text) for rule in among], True
        if among is None:
            matching = self.matching(text)
            if matching is not None:
                indexes, tokens = matching
                if not any(rules[i].ignore_case for i in indexes):
                    return [(rules[i], text) for i in indexes], tokens
                lower = ascii_lowered(text)
                return [(rules[i], lower if rules[i].ignore_case else text) for i in indexes], tokens
        lower = ascii_lowered(text)
        if among is not None:
            return [(rule, lower if rule.ignore_case else text) for rule in among], True
        present = self._triggers.present(lower)
        picked = (rule for i, rule in enumerate(rules) if i in present or not rule.triggers)
        return [(rule, lower if rule.ignore_case else text) for rule in picked], True
