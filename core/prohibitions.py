"""Whether a phrase the second line finds is prohibited rather than asked: "never force-push", "do not paste the
token into the issue", "force-pushing to main is not allowed", and not a negated duty ("don't hesitate to
force-push") or a double negation ("it's never wrong to skip the hooks"), which permit. Pure functions.
"""

from __future__ import annotations

import re2

__all__ = ["NEGATION", "clause_prohibits", "prohibited"]

# "No" is a determiner: it prohibits within its own clause ("no force-pushing to main", "no commits that skip the
# hooks") or a list that ends in and/or ("no amending, rebasing, or force-pushing"), not past a comma or colon, where
# it is an answer ("No problem, just force-push").
_PROHIBITION = re2.compile(
    r"\b(?:never|do\s+not|don'?t|avoid|must\s+not|rather\s+than|instead\s+of)\b[^;]{0,40}$"
    r"|\bno\b(?:(?:\s+[\w-]+,)+\s+(?:or|and|nor)\b)?[^;,:]{0,40}$"
)
_TWIST = re2.compile(r"\b(?:unless|except|but|then|however|otherwise)\b")
# A prohibition covers its own sentence up to a line's end (a bullet, or a sentence mark `run_on` took out: "Don't
# wait. force-push" is two). Not at a comma: "Never, ever force-push" and "Never rebase, amend, or force-push"
# prohibit across theirs.
# A negated duty is no prohibition ("Don't hesitate to force-push", "Never forget to skip the hooks"), read at the
# negation nearest the phrase ("Don't forget the changelog and never force-push" prohibits; so does "Never forget:
# force-pushing rewrites history").
# So is a negation of a word against the act (a double negation, which permits): "it's never wrong to", "never be
# afraid to", "never think twice before", "no one will mind if", "you can never go wrong if", "no harm in", "never
# let a slow hook block you". Read from the negation, so only words between it and the phrase count ("Never make
# the mistake of skipping the hooks" prohibits: "a mistake" is what the negation says of the act, not "the mistake").
_NEGATED_DUTY = re2.compile(
    r"\b(?:never|not|no|don'?t|dont|nobody|no\s+one)\s+(?:ever\s+|even\s+|really\s+|once\s+)?(?:"
    r"(?:forget|hesitate|fail|neglect)\s+to\b|(?:hesitat|worr|doubt|fear|shy|balk|second-guess)\w*\b"
    r"|(?:feel\s+)?(?:bad|guilty|sorry)\s+(?:about|for)\b|think\s+twice\b|go(?:es)?\s+wrong\b|hurts?\b"
    r"|(?:be\s+|get\s+|feel\s+)?(?:afraid|scared|shy|reluctant|hesitant|worried|nervous|ashamed|squeamish)\b"
    r"|(?:be\s+|is\s+|was\s+)?(?:(?:a|an|any|such\s+a|so|too|that|very|really)\s+)?(?:big\s+|real\s+|serious\s+)?"
    r"(?:wrong|bad\s+(?:idea|thing|move|call|practice)|harm\w*|problem\w*|issue|mistake|risk\w*|danger\w*|deal|concern\w*"
    r"|sin|crime)\b"
    r"|(?:will\s+|would\s+|is\s+going\s+to\s+)?(?:mind|care|object|complain|notice)\w*\b"
    r"|(?:reason|need|call)\s+(?:not\s+to|to\s+not|to\s+(?:avoid|hesitate|wait|worry|be\s+afraid))\b"
    r"|let\s+[^;]{0,40}\b(?:block|stop|slow|hold|keep|prevent|get\s+in)\w*\b)"
)
# "No reason not to" is one negation (read as a whole, not at its "not"), "nobody" and "no one" are negations.
NEGATION = re2.compile(
    r"\b(?:no\s+(?:reason|need|call)\s+(?:not|to\s+not)|nobody|no\s+one|never|not|no|don'?t|dont|avoid)\b"
)
# A prohibition said of the act after it ("force-pushing to main is never a good idea", "... is not allowed").
_DISAPPROVED = re2.compile(
    r"^[^;]{0,40}\b(?:is|are)(?:\s+never|\s+not|n'?t)\s+(?:(?:a|an|ever|really|very)\s+)?"
    r"(?:ok|okay|acceptable|allowed|fine|safe|good|wise|permitted|an\s+option)\b"
    r"|^[^;]{0,40}\b(?:is|are)\s+(?:always\s+)?(?:forbidden|prohibited|banned|off-limits|wrong|dangerous|unsafe"
    r"|a\s+bad\s+idea)\b"
)
# An act named as a subject ("skipping the hooks hides lint failures") is warned of when its sentence says what harm
# it does: an imperative's own relative clause ("skip the hooks that break the build") is no such warning.
_GERUND = re2.compile(r"[\w-]*ing\b")
_HARMS = re2.compile(
    r"^[^;]{0,40}\b(?:hides?|hid|break(?:s|es)?|broke|caus(?:es|ed|e)|mask(?:s|ed)?|defeats?|risks?|leads?\s+to"
    r"|lets?\s+[^;]{0,20}\b(?:through|slip)|(?:is|was)\s+how|can\s+(?:hide|break|cause|mask))\b"
)
# A prohibition said before the act without a negation ("it's wrong to force-push", "nobody may skip the hooks").
_DISAPPROVING = re2.compile(
    r"\b(?:(?:it'?s|it\s+is)\s+(?:always\s+)?(?:wrong|forbidden|prohibited|dangerous|unsafe|a\s+bad\s+idea)\s+to"
    r"|(?:nobody|no\s+one)\s+(?:may|should|must|can|is\s+allowed\s+to))\s+$"
)
# After a comma the imperative a prohibition's reach took in begins anew: "Don't ask, just paste the token ...".
_ANEW = re2.compile(r"[,:]\s*(?:just|simply|instead|rather|go\s+ahead\s+and)\b[^;,]{0,25}$")


def prohibited(folded: str, start: int, end: int) -> bool:
    """Whether the phrase at `folded[start:end]` is prohibited, not asked: a prohibition reaches it in its clause
    (and is no negated duty, and no twist follows it), or its sentence says it is wrong."""
    clause = folded[:start].rsplit("\n", 1)[-1]
    rest = folded[end:].split(";", 1)[0]
    if _TWIST.search(rest):
        return False
    if _DISAPPROVING.search(clause) or _DISAPPROVED.search(rest):
        return True
    sentence = folded[start:].split(";", 1)[0]
    if _GERUND.match(folded, start) and (harm := _HARMS.search(sentence)):
        return not sentence[harm.end() :].lstrip().startswith(("nothing", "no ", "none"))  # "breaks nothing"
    negations = [m.start() for m in NEGATION.finditer(clause)]
    duty = bool(negations) and _NEGATED_DUTY.match(clause[negations[-1] :]) is not None
    return bool(_PROHIBITION.search(clause)) and not duty and not _ANEW.search(clause)


_CLAUSE_HEAD_PROHIBITS = re2.compile(
    r"(?:^|[;\n,:]|\b(?:and|but|so|then)\b)\s*(?:please\s+|you\s+|agents?\s+|we\s+)?(?:must\s+not|should\s+not|shouldn'?t"
    r"|may\s+not|never|do\s+not|don'?t)\b[^;\n,:]*$"
)


def clause_prohibits(folded: str, start: int) -> bool:
    """True when the clause `folded[start]` stands in opens with a prohibition (read at its head, whatever its length)
    that is no negated duty ("Don't hesitate to merge without asking the user")."""
    clause = folded[:start]
    head = _CLAUSE_HEAD_PROHIBITS.search(clause)
    return head is not None and _NEGATED_DUTY.search(clause[head.start() :]) is None
