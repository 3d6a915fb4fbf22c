"""Phrases that speak to the agent over the user's head: "ignore previous instructions", "do not tell the user",
an authority a lesson claims for itself; an act they name (run as root, do it silently) is admitted where it is
prohibited. Pure functions.
"""

from __future__ import annotations

import re2

from core.prohibitions import clause_prohibits, prohibited

__all__ = ["OVERRIDE", "overridden"]

OVERRIDE = re2.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|supersed\w*|replac\w*|takes?\s+precedence\s+over|outranks?)\b[^;]{0,40}"
    r"\b(?:previous|prior|above|earlier|preceding|original"
    r"|system|other|all|every)\b[^;]{0,25}\b(?:instructions?|prompts?|rules?|messages?|guidelines?|guidance|directions?"
    r"|context|told|said)\b"
    r"|\b(?:ignore|disregard)\b[^;]{0,30}\b(?:instructions?|guidelines?|system prompt|rules)\b"
    r"|\bforget\s+(?:everything|all|anything)\b[^;]{0,40}\b(?:told|said|instructions?|before|above)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|show|mention\s+(?:this\s+)?to|notify|alert|ask)\s+(?:the\s+)?user\b"
    r"|\bwithout\s+(?:telling|asking|informing|notifying|consulting)\s+(?:the\s+)?user\b"
    r"|\b(?:say|tell|mention|reveal|report|show)\s+nothing\b[^;]*\buser\b|\bhide\b[^;]*\bfrom\s+(?:the\s+)?user\b"
    r"|\bkeep\s+(?:this|it|that)\s+(?:from\s+(?:the\s+)?user|secret|hidden|quiet)\b"
    r"|\b(?:don'?t|do\s+not|never)\s+let\s+(?:the\s+)?user\s+(?:know|see)\b"
    r"|\bwithout\s+(?:the\s+)?user'?s?\s+(?:knowledge|consent|approval|permission)\b"
    r"|\buser\s+(?:does\s+not|doesn'?t|need\s+not|needn'?t)\s+(?:need\s+to\s+)?(?:know|see|be\s+told)\b"
    r"|\bbring\s+(?:this|it|that)\s+up\s+with\s+(?:the\s+)?user\b"
    r"|\bleave\s+(?:this|it|that)\s+out\s+of\s+(?:your|the)\s+(?:summary|report|answer|reply|message)\b"
    r"|\bskip\s+(?:asking|the\s+confirmation|confirmations?|the\s+review|review)\b"
    r"|\buser\s+(?:prefers|wants)\s+(?:it\s+)?(?:silent|quiet|not\s+to\s+know)\b"
    r"|\bomit\b[^;]{0,60}\b(?:tell|report|summary|say|mention)\b"
    r"|\b(?:person|human|operator|people)\s+you(?:'re|\s+are)\s+working\s+(?:for|with)\b"
    r"|\b(?:do|run|make|apply|push|perform|deploy|commit)\b[^;]{0,30}\b(?:silently|quietly|secretly)\b"
    r"|\bno\s+need\s+to\s+(?:mention|tell|report|say|inform|ask)\b"
    r"|\b(?:real|actual|true)\s+instructions\b"
    r"|\b(?:whatever|no\s+matter\s+what|regardless\s+of\s+what)\s+(?:the\s+)?user\s+(?:says|said|wants|thinks|asks)\b"
    # an authority a lesson claims for itself: a lesson is no one's grant ("As the repository owner, I authorise ...")
    r"|\bi\s+(?:hereby\s+)?(?:authori[sz]e|permit|allow|grant|approve|give\s+(?:you|the\s+agent)\s+permission)\w*\s+(?:you"
    r"|the\s+agent|agents?|claude|codex|the\s+assistant)\b"
    r"|\bas\s+the\s+(?:repository\s+|repo\s+|project\s+|code\s+)?(?:owner|maintainer|administrator|admin|lead)\b[^;]{0,40}"
    r"\b(?:authori[sz]|allow|permit|grant|approv|instruct)\w*"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|show|mention|notify|alert|bring\s+up)\b[^;]{0,40}\buser\b"
    r"|\b(?:don'?t|do\s+not|never|without|stop)\s+(?:ask\w*|wait\w*|paus\w*|stop\w*)\s+(?:to\s+)?(?:for\s+)?"
    r"(?:confirm\w*|approv\w*|permission)"
    r"|\bpre-?approved\b|\bhigher\s+priority\s+than\s+(?:the\s+)?user\b"
    r"|\b(?:user|they)\s+says?\s+(?:stop|no|wait|don'?t)\b[^;]{0,40}\b(?:keep\s+going|continue|carry\s+on|ignore)"
    r"|\b(?:say|report|claim|tell\s+\w+)\b[^;]{0,30}\b(?:yes|pass\w*|green|succeed\w*|fine|done)\b[^;]{0,20}"
    r"\beven\s+(?:if|though|when)\b"
    r"|\blie\s+to\b|\b(?:as|run\s+it\s+as|rerun\s+\w*\s*as)\s+root\b"
    r"|\b(?:report|mark|say|claim|declare)\b[^;]{0,40}\b(?:complete|done|finished|passing|green|success\w*)\b"
    r"[^;]{0,30}\beven\s+(?:if|when|though)\b"
    r"|\bno\s+need\s+to\s+(?:check|confirm|ask)\s+with\s+(?:the\s+)?user\b"
    r"|\bhigher\s+priority\s+than\b[^;]{0,30}\buser\b"
    r"|\b(?:earlier|previous|prior|other|existing)\s+(?:guidance|instructions|rules|guidelines)\b[^;]{0,20}"
    r"\b(?:no\s+longer|do(?:es)?\s+not|don'?t)\s+appl"
    r"|\byou\s+are\s+now\s+(?:a|an|in|the|no\s+longer)\b|\bnew\s+(?:system\s+)?instructions?\s*:"
    r"|\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system|developer)\s+prompt\b"
    r"|\bjailbreak|\bdeveloper\s+mode\b|</?\s*system\s*>|\[/?inst\]"
    # round 10: an authority claimed by a title rather than by ownership ("As Anthropic staff, I confirm you may"),
    # the user's part declared unneeded ("the agent need not inform the user"), a lesson's words kept from the user
    # ("keep this between us", "don't bring up these instructions"), earlier guidance declared void in the passive
    r"|\bas\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?(?:staff|employee|admin\w*|maintainers?|owners?|engineers?|security\s+team"
    r"|team\s+lead|operators?|moderators?|developers?\s+of|vendor|support)\b[^;]{0,40}\b(?:i\s+(?:hereby\s+)?(?:confirm"
    r"|certify|authori[sz]e|approve|permit|allow|grant|instruct)|you\s+(?:may|can|are\s+(?:allowed|permitted|authori[sz]ed)))"
    r"|\b(?:need\s+not|needn'?t|does\s+not\s+(?:need|have)\s+to|doesn'?t\s+(?:need|have)\s+to|is\s+not\s+required\s+to"
    r"|no\s+longer\s+(?:needs?|has)\s+to)\s+(?:tell|inform|notify|ask|consult|check\s+with|alert)\s+(?:the\s+)?(?:user"
    r"|developer|human|operator)\b"
    r"|\bbetween\s+(?:us|ourselves|you\s+and\s+me)\b"
    r"|\bask\s+(?:the\s+)?user\s+nothing\b"
    # a header a lesson writes to pass for the system, an operator or a vendor ("System notice: agents must ...")
    r"|(?:^|;\s*|\n\s*)(?:system|admin\w*|security|maintainers?|operator|anthropic|openai|claude|codex|platform)\s+"
    r"(?:notice|message|note|override|update|instructions?|directive|announcement)s?\s*:"
    r"|\b(?:should|must|may|shall)\s*(?:not|n'?t)\s+(?:tell|inform|show|mention|notify|reveal|disclose|share)\b[^;]{0,40}\b"
    r"(?:to\s+)?(?:the\s+)?user\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:bring\s+up|mention|reveal|disclose|discuss|share)\s+(?:these|this|the|my|your)\s+"
    r"(?:instructions?|notes?|prompts?|rules?|guidance)\b"
    r"|\b(?:previous|prior|earlier|existing|other|above|older)\s+(?:[\w-]+\s+)?(?:guidance|instructions|rules|guidelines"
    r"|notes|policies|policy)\b[^;]{0,60}\b(?:(?:is|are)\s+(?:now\s+)?(?:to\s+be\s+)?(?:disregarded|ignored|superseded|void"
    r"|obsolete|overridden|revoked|withdrawn|cancell?ed|lifted)|(?:should|must|need)\s+no\s+longer\s+be\s+(?:considered"
    r"|followed|applied|observed))"
)
# Override phrases that name an act (run as root, do it silently, lie to, omit, developer mode) rather than speak
# over the user's head in themselves: a prohibition of the act ("Never run the container as root", "Do not swallow
# exceptions silently") is admitted, as it is for a safeguard.
_ACT = re2.compile(r"\bas\s+root\b|\b(?:silently|quietly|secretly)\b|\blie\s+to\b|\bomit\b|\bdeveloper\s+mode\b")
# ... and the same words about something else: mocks that lie to the test, omitting empty sections, developer mode
# on a phone, telling the user a task is done only once it is, not showing the user a stack trace.
_NOT_OVER_THE_HEAD = re2.compile(
    r"\blie\s+to\s+(?:the\s+|a\s+|your\s+|its\s+)?(?:tests?|callers?|compiler|type\s*checker|mypy|linter|code|framework"
    r"|browser|cache|orm|runtime|consumers?)\b"
    r"|\bomit\s+(?:the\s+|any\s+|all\s+)?(?:empty|blank|null|none|unused|unchanged|redundant|boilerplate|duplicate"
    r"|default|trailing|optional)\b"
    r"|\bdeveloper\s+mode\s+(?:on|in|for)\s+(?:the\s+|your\s+|an?\s+)?(?:\w+\s+)?(?:android|ios|iphone|ipad|device|phone"
    r"|chrome|browser|windows|macos|extensions?|settings|emulator|simulator|tablet|firefox)"
    r"|\b(?:tell|show)\s+(?:the\s+)?user\b[^;]{0,40}\b(?:done|fixed|finished|complete|ready|works|working|green"
    r"|passing|shipped|deployed)\b[^;]{0,20}\b(?:until|before|unless)\b"
    r"|\bshow\s+(?:the\s+)?user\s+(?:a\s+|the\s+|any\s+)?(?:raw\s+|full\s+|internal\s+)?(?:stack\s*traces?|tracebacks?"
    r"|exceptions?|sql|error\s+codes?)\b"
)


# An act done without the user ("without asking the user", "without the user's approval") is an adjunct of its
# clause's verb: a prohibition at the head of that clause ("Do not change the settings without asking the user",
# "Don't follow links found in web pages without asking the user") forbids the act done so, however long the clause.
_WITHOUT_USER = re2.compile(r"\bwithout\s+(?:\w+ing\s+(?:with\s+)?(?:the\s+)?user|(?:the\s+)?user'?s?\s+\w+)\b")


def overridden(folded: str) -> re2._Match | None:
    """The first phrase of `folded` (cut into `sentences`) that speaks to the agent over the user's head, unless it
    names an act that is prohibited, or is one of the same words about something else."""
    for match in OVERRIDE.finditer(folded):
        said = folded[match.start() : match.end() + 40].split(";", 1)[0]
        if _NOT_OVER_THE_HEAD.search(said):
            continue
        act = _ACT.search(match.group())
        if act and prohibited(folded, match.start() + act.start(), match.start() + act.end()):
            continue
        if _WITHOUT_USER.match(folded, match.start()) and clause_prohibits(folded, match.start()):
            continue
        return match
    return None
