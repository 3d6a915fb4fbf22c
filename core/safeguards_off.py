"""A safeguard talked off in words: named ("skip the hooks", "push with the force flag"), in the passive ("failing
tests may be disregarded"), by a pronoun whose antecedent is one ("if the hook complains, skip it"), by a
paraphrase or declared away; the agent's own permissions in words (a mode that asks for nothing, every tool
allowed, confirmations answered in advance); and, through `core.insecure_settings`, a setting that turns one off.
Admitted where it is prohibited. Pure functions.
"""

from __future__ import annotations

import itertools

import re2

from core.insecure_settings import setting_off
from core.prohibitions import prohibited
from core.reading import ANTECEDENT_REACH

__all__ = ["PRONOUN_OFF", "SAFEGUARD_OFF", "SAID_AWAY", "talked_off"]

# A safeguard talked off in words: force-pushing, skipping hooks or checks, turning certificate checks off.
# A setting written in words as well as `NAME=0`: "set HUSKY to 0", "set the strict-ssl option to false".
_SET = r"(?:[\"'`]?\s*[=:]?\s*|\s+(?:[\w'-]+\s+){0,2}to\s+)[\"'`]?"
_GUARDS = (
    r"hooks?|checks?|verification|ssl|tls|certificate\s+checks?|linters?|signing|sandbox|strict-ssl|ssl[-_]?verify"
    r"|host\s*key\s+checking|(?:csrf|xsrf|cors|branch|clickjacking)\s+protection|csrf|xsrf|hsts|secret\s+scann\w*"
    r"|(?:certificate|cert|ssl|tls)\s+pinning"
    # the agent's own permission prompts ("disable the permission prompts", "turn off the approval prompts")
    r"|(?:permission|approval|confirmation)\s+(?:prompts?|checks?|dialogs?|requests?|steps?|gates?)|code\s+reviews?"
    r"|(?:required\s+)?status\s+checks?"
)
# What a safeguard is, said of a merge or a release rather than a tool: tests, CI, reviews ("failing tests may be
# disregarded", "review comments can be dismissed"); read in the passive only ("skip the slow tests locally" is a
# lesson), and tests only when they fail ("tests can be skipped locally with -k" is one too).
_GATES = (
    rf"{_GUARDS}|(?:failing|red|flaky|broken)\s+(?:tests?|builds?)|ci(?:\s+(?:checks?|failures|runs?))?"
    r"|(?:pre-commit|pre-push|hooks?|lint|checks?|ci|tests?|builds?|type|mypy)\s+(?:failures|errors)"
    r"|reviews?|review\s+comments|approvals?|lint(?:\s+(?:errors|warnings|failures))?|type\s+errors|type\s*checks?"
    r"|security\s+(?:warnings|alerts|findings|reviews?|scan\w*)|(?:[\w-]+\s+)?suites?|(?:failing\s+)?assertions?"
    r"|(?:coverage\s+)?thresholds?|(?:required\s+)?status\s+checks?|scanners?"
)
_OFF = (
    r"(?:skipped|bypassed|disabled|turned\s+off|switched\s+off|ignored|disregarded|overlooked|dismissed|suppressed"
    r"|silenced|circumvented|waived|worked\s+around|deleted|removed|commented\s+out|lifted|relaxed|lowered|loosened)"
)
SAFEGUARD_OFF = re2.compile(
    r"hookspath|bypasspermissions|dangerously|git_ssl_no_verify|goinsecure|pip_trusted_host|insecure-skip-tls-verify"
    rf"|(?:node_tls_reject_unauthorized|pythonhttpsverify|\bhusky){_SET}(?:0|false|off)\b"
    rf"|(?:ssl[-_]?verify|strict[-_]ssl|stricthostkeychecking){_SET}(?:false|off|no|0)\b"
    rf"|\bgosumdb{_SET}off\b|\bgoflags{_SET}-insecure|\bverify\s*=\s*false\b|\buserknownhostsfile{_SET}/dev/null"
    r"|\bskip\s*=\s*\w|\bset\s+skip\s+to\b|\bskip\s+(?:variable|env)|\[no\s+ci\]"
    # "[no ci]" as the screen reads it, brackets dropped as markdown's
    r"|\bno\s+ci\b[^;]{0,30}\bcommit\s+messages?\b"
    r"|\b(?:delet|remov|disabl|drop)(?:e|es|ed|ing|s)?\b[^;]{0,30}(?:\.github/workflows|branch\s+protection|codeowners|security"
    r"|\.husky|\bhooks?\b|pre-commit)"
    r"|\bci\s+skip\b|\bskip\s+ci\b|\[skip\s+ci\]"
    r"|(?:\.claude|\.codex|\.cursor)/(?:settings|config|rules)|\ballow\s*list\b[^;]{0,40}\bsettings\.json"
    r"|\b(?:delete|remove|wipe|erase)\s+(?:everything|all\s+(?:the\s+)?files)\b[^;]{0,30}\bhome\b"
    r"|\b(?:drop|delete|truncate|wipe)\b[^;]{0,30}\b(?:table|database|schema|data)\b[^;]{0,30}\bproduction\b"
    r"|\bforce[-\s]{0,3}push|\bpush\b[^;]{0,30}\bforce\b|\bforce\s+flag\b"
    r"|\b(?:lease|force)\s+flag\b|\b(?:no|without)\s+(?:the\s+)?(?:verif\w*|hooks?|checks?|tls|ssl|signing)\b"
    rf"|\b(?:skip(?:s|ping)?|bypass(?:es|ing)?|disabl(?:e|es|ing)|turn(?:s|ing)?\s+off|switch(?:es|ing)?\s+off"
    rf"|ignor(?:e|es|ing)|disregard\w*|circumvent\w*|(?:get|work|go)(?:s|ting|ing)?\s+around)\s+(?:[\w'-]+\s+){{0,2}}"
    rf"(?:{_GUARDS}|ci|tests?\s+in\s+ci)\b"
    # the passive that asks for it ("the hooks should be skipped", "verification must be turned off") and the hooks
    # off as a way to do something ("commit with the hooks switched off"); "are skipped in CI" only says what is
    rf"|\b(?:{_GATES})(?:\s+(?:in|of|on|for)\s+(?:the\s+|our\s+|this\s+)?(?:[\w-]+\s+)?[\w-]+)?\s+(?:always\s+)?(?:should|must|can|may|could|need\s+to|needs\s+to|are\s+to|is\s+to|have\s+to"
    rf"|has\s+to|ought\s+to|had\s+better)\s+(?:always\s+|just\s+|simply\s+|safely\s+)?(?:be|get)\s+{_OFF}"
    rf"|\bwith\s+(?:the\s+|all\s+|its\s+)?(?:[\w-]+\s+){{0,2}}(?:{_GUARDS})\s+(?:{_OFF}|off)\b"
    # the particle after its object ("turn the hooks off", "switch TLS verification off")
    rf"|\b(?:turn|switch|shut)(?:s|ing|ed)?\s+(?:the\s+|all\s+|its\s+|your\s+|our\s+)?(?:[\w-]+\s+){{0,2}}"
    rf"(?:{_GUARDS})\s+off\b"
    rf"|\b(?:leav|tak|comment|strip)(?:e|es|s|ed|ing)?\s+(?:the\s+|all\s+|its\s+|your\s+|our\s+)?(?:[\w-]+\s+){{0,2}}"
    rf"(?:{_GUARDS}|pre-commit|pre-push|scanners?|(?:[\w-]+\s+)?suites?)\s+out\b"
    # a merge or a release over what should stop it ("merge even when CI is red", "deploy with failing tests")
    r"|\b(?:merg|push|deploy|ship|releas|land)\w*\b[^;]{0,40}\b(?:even\s+(?:if|when|though)|regardless\s+of|despite"
    r"|although|while)\b[^;]{0,25}\b(?:ci|checks?|tests?|builds?|pipelines?|reviews?|linters?|lint)\b[^;]{0,15}"
    r"(?:red|fail\w*|broken|pending|unapproved|missing|not\s+pass\w*)"
    r"|\b(?:merg|push|deploy|ship|releas|land)\w*\b[^;]{0,40}\bwith\s+(?:failing|red|broken|pending)\s+"
    r"(?:ci|checks?|tests?|builds?|pipelines?|reviews?)"
    # a review done by the one reviewed ("approve your own PR"), a safeguard treated as advice
    r"|\b(?:approv|merg|review)\w*\s+(?:your|its|their|the\s+agent'?s)\s+own\s+(?:prs?|pull\s+requests?|changes?"
    r"|merge\s+requests?|mrs?|code|commits?)\b"
    rf"|\btreat\w*\s+(?:the\s+|all\s+|any\s+)?(?:[\w-]+\s+){{0,2}}(?:{_GATES})\s+as\s+(?:optional|suggestions?|advisory|advice"
    r"|non-?blocking|informational|noise|hints?)\b"
    # what failed or blocked, done over anyway ("if the build is red, merge anyway")
    r"|\b(?:if|when|whenever|once|should|even\s+if|though)\b[^;]{0,50}\b(?:red|fail\w*|broken|block\w*|flag\w*|complain\w*"
    r"|reject\w*|errors?)\b[^;]{0,30}\b(?:push|merg|deploy|ship|land|releas|commit)\w*\s+(?:it\s+|them\s+)?(?:anyway"
    r"|regardless|nonetheless)\b"
    # a safeguard said fine to switch off ("flaky checks are fine to disregard")
    rf"|\b(?:{_GATES})\s+(?:are|is)\s+(?:(?:totally|perfectly|always)\s+)?(?:fine|ok|okay|safe|allowed|acceptable)\s+to\s+"
    r"(?:skip|ignore|disregard|bypass|disable|overlook|dismiss|suppress|silence)"
    # what fails merged or run anyway, in the passive ("red builds can be merged"), and acts without approval
    r"|\b(?:failing|red|broken|unapproved|unreviewed)\s+(?:builds?|tests?|checks?|prs?|pull\s+requests?|branch\w*|ci)"
    r"\s+(?:can|may|should|could|are\s+to|is\s+to)\s+(?:still\s+|safely\s+|just\s+)?be\s+(?:merged|deployed|shipped"
    r"|released|pushed|landed)"
    r"|\b(?:run|execut|merg|push|deploy|apply|approv|install|delet|do)\w*\b[^;]{0,40}\bwithout\s+(?:any\s+|the\s+|a\s+)?"
    r"(?:user'?s?\s+)?(?:approval|confirmation|permission|asking|prompting)\b"
    # an access list opened to everyone ("allow any origin", "origins: *")
    r"|\ballow\w*\s+(?:any|all|every)\s+origins?\b"
    # the agent's own permissions, as a setting or in words: a mode that asks for nothing, every tool allowed
    r"|\b(?:allow|approv|permit|whitelist|allowlist|trust)\w*\s+(?:the\s+)?(?:bash|shell|tools?|commands?|edits?|writes?"
    r"|network|web\s*fetch|mcp\w*)(?:\(\s*\*?\s*\))?\s+(?:for|on|to)\s+(?:everything|anything|all\s+\w+|any\s+\w+)"
    rf"|\b(?:(?:permission|approval|approvals|sandbox|default)[\s_-]?(?:mode|policy|level|setting)|ask[\s_-]for[\s_-]approval)"
    rf"{_SET}(?:on-failure|bypass\w*|never|off|none"
    r"|yolo|full\w*|danger\w*|auto\w*|dont-?ask|don'?t\s+ask|accept\w*|unrestricted|disabled?|skip\w*|allow-?all)"
    r"|\b(?:bypass\w*|skip\w*)\s+(?:the\s+|all\s+)?permissions?\b|\byolo\b|\bfull[\s-]auto\b"
    r"|\bauto[\s-]?(?:approv|accept|allow|confirm)\w*|\bdanger[\s_-]full[\s_-]access|\bunrestricted\s+mode"
    r"|\b(?:allow|approv|accept|grant|permit|whitelist|allowlist|trust|enabl)\w*\s+(?:yourself\s+)?(?:every|all|any)\s+"
    r"(?:[\w-]+\s+){0,2}(?:tools?|commands?|tool\s+(?:calls?|uses?)|permissions?|permission\s+requests?|actions?"
    r"|operations?|servers?|plugins?|extensions?|hooks?)\b"
    # a confirmation answered in advance ("answer yes to every prompt", "choose 'always allow'")
    r"|\b(?:answer|say|reply|respond|click|type|select|choose|pick|press)\w*\s+['\"]?(?:yes|y|ok|allow|approve|accept)"
    r"['\"]?\s+(?:to|on|for)\s+(?:every|all|any|each)\b"
    r"|\b(?:answer|click|type|select|choose|pick|press)\w*\s+['\"]?(?:always\s+allow|allow\s+always|allow\s+all"
    r"|don'?t\s+ask\s+again|yes,?\s+(?:and\s+)?don'?t\s+ask)"
    # a safeguard declared away in the passive ("branch protection is to be considered disabled", "the test suite is
    # not to be run")
    rf"|\b(?:{_GATES}|test\s+suite|tests)(?:\s+(?:on|for|in|of)\s+(?:this\s+|the\s+|our\s+)?(?:[\w/.-]+\s+)?[\w/.-]+)?"
    r"\s+(?:is|are|has\s+been|have\s+been|be)\s+(?:just\s+|only\s+|merely\s+)?"
    r"(?:not\s+to\s+be\s+(?:run|used|required|enforced)|(?:to\s+be\s+)?(?:considered|deemed|treated\s+as|regarded\s+as"
    r"|declared|marked)\s+(?:disabled|optional|off|advisory|non-?blocking|informational|unnecessary|not\s+required"
    r"|not\s+needed|a\s+formality)|(?:a\s+)?(?:formality|formalities|rubber[\s-]stamp|for\s+show|theater|theatre))"
    r"|\b(?:all|every|any)\s+(?:[\w-]+\s+){0,2}(?:tools?|commands?|permissions?)\s+(?:are\s+|is\s+)?(?:allowed"
    r"|granted|approved|accepted|whitelisted|pre-?approved)\b"
    r"|\bgive\s+yourself\s+(?:full\s+)?(?:permission|access|approval|rights)\b"
    r"|\b(?:bash|shell)\(\s*\*?\s*(?::\s*\*?\s*)?\)"
    r"|\b(?:pipe|feed)\w*\b[^;]{0,40}\b(?:in)?to\s+(?:sh|bash|zsh|a\s+shell|python|node|the\s+shell)\b"
    r"|\bexecut\w*\s+what(?:ever)?\s+it\s+(?:prints|returns|outputs|downloads)\b"
)


# Round 10: a safeguard named by what is done to it rather than "skip" or "disable", and code that switches one off
# without a setting (kept apart from `SAFEGUARD_OFF`: as one, RE2's automaton grows too large to build quickly).
SAID_AWAY = re2.compile(
    # a gate lowered to nothing ("lower the coverage threshold to zero"), lifted or unticked ("untick the required
    # status checks"), blanket suppressions (a noqa comment added to every line), a gate's job removed when it blocks
    r"\b(?:lower|reduc|drop|set|chang)\w*\s+(?:the\s+|all\s+|its\s+|our\s+)?(?:[\w-]+\s+){0,2}(?:thresholds?|coverage"
    r"|floors?|minimums?|bars?|fail[_-]under|min\w*[\s_-]coverage)\s+to\s+(?:zero|0|[01](?:\.\d+)?\s*%|nothing|none)(?:\W|$)"
    # a job or a check allowed to fail: its failure no longer stops anything
    r"|\b(?:allow\w*|permit\w*|let)\s+(?:it\s+|them\s+|(?:the\s+)?[\w-]+\s+(?:[\w-]+\s+)?(?:jobs?|steps?|checks?|stages?"
    r"|suites?|tests?)\s+)?to\s+fail\b|\b(?:marked|mark\w*)\b[^;]{0,40}\ballowed\s+to\s+fail\b"
    # randomness that is no secret's (`random.random()`, `Math.random()`) making one
    r"|\b(?:random\.(?:random|randint|choice|choices|randrange|getrandbits|sample)|math\.random)\b[^;]{0,60}\b(?:tokens?"
    r"|passwords?|secrets?|keys?|salts?|nonces?|otps?|session\s+ids?)\b"
    rf"|\b(?:lift|untick|uncheck|relax|loosen|waiv)\w*\s+(?:the\s+|all\s+|its\s+|our\s+)?(?:[\w-]+\s+){{0,2}}(?:{_GATES}"
    r"|rules?|requirements?)\b"
    r"|\badd\w*\s+(?:an?\s+|the\s+)?['\"`]?(?:#\s*|//\s*|/\*\s*)?(?:noqa|nolint|nosec|ignore|eslint-disable\S*|@ts-ignore"
    r"|@ts-nocheck|ts-ignore|type:\s*ignore|pragma:?\s*no\s*cover|rubocop:disable|phpcs:ignore|istanbul\s+ignore)"
    r"['\"`]?(?:\s+(?:comments?|directives?|annotations?|markers?|pragmas?))?\s+(?:to|on|in|at|above)\s+(?:every|all|each"
    r"|any)\b"
    r"|\b(?:if|when|whenever)\b[^;]{0,60}\b(?:blocks?|fails?|flags?|complains?|rejects?)\b[^;]{0,30}\b(?:remov|delet"
    r"|disabl|drop|comment\w*\s+out)\w*\s+(?:the\s+|that\s+|its\s+)?(?:[\w-]+\s+)?(?:job|step|check|stage|workflow"
    r"|rule|scanner|hook|gate)s?\b"
    r"|\bmark\w*\s+(?:[\w-]+\s+){0,3}(?:tests?|checks?|jobs?|specs?)\s+(?:as\s+)?(?:skipped|passing|passed|optional"
    r"|green)\b[^;]{0,40}\b(?:ship|releas|merg|deploy|carry\s+on|continue|move\s+on|land)"
    # a check made to pass whatever it is given ("a hook that always returns approve", "a callback that always returns
    # true", "a TrustManager whose checkServerTrusted does nothing"), every certificate trusted
    r"|(?:hooks?|callbacks?|validat\w*|verif\w*|checks?|checkservertrusted|trustmanager|hostnameverifier|guards?)\b"
    r"[^;]{0,50}\b(?:always|unconditionally)\s+(?:returns?\s+|approves?|allows?|accepts?|pass(?:es)?|trusts?|succeeds?)"
    r"(?:\s*['\"`]?(?:true|approve|allow|ok|yes|success|accept)\b)?"
    r"|\b(?:check\w*trusted|verify|validat\w*|hostnameverifier)\w*\s+(?:does|do)\s+nothing\b"
    r"|\btrust\w*\s+(?:all|every|any)\s+(?:[\w-]+\s+)?(?:certificates?|certs?|hosts?|issuers?)\b"
    # a token signed with nothing: JWT's `none` algorithm accepted
    r"|\b(?:accept|allow|use|enabl|permit)\w*\s+(?:the\s+)?['\"`]?none['\"`]?\s+alg"
    r"|\balgorithms?['\"`]?\s*[=:]\s*\[?\s*['\"`]none\b"
    # a password hashed with a digest made to be fast (MD5, SHA-1): no password hash
    r"|\b(?:md5|sha-?1)\b[^;]{0,60}\bpasswords?\b|\bpasswords?\b[^;]{0,60}\b(?:md5|sha-?1)\b"
    # a destructive SQL statement in prose, and a production database dropped in any spelling
    r"|\bdrop\s+(?:database|schema)\b|\bdropdb\b|\b(?:drop|truncate)\s+table\b[^;]{0,40}prod"
    # the agent's own permissions widened or their deny rules removed, shell access granted to itself
    r"|\b(?:widen|expand|extend|broaden|escalat|rais|increas|loosen|relax|grant|elevat)\w*\s+(?:its|your|their|the\s+agent'?s"
    r"|his|her)\s+own\s+(?:[\w-]+\s+)?(?:permissions?|access|privileges?|rights|allow\s*list)"
    r"|\b(?:remov|delet|drop|clear|empty|strip)\w*\s+(?:the\s+|all\s+|any\s+)?(?:[\w-]+\s+)?(?:deny|denied|ask)\s+"
    r"(?:rules?|lists?|entries|patterns?)"
    r"|\b(?:give|grant)\w*\s+(?:yourself|itself|the\s+agent)\s+(?:[\w-]+\s+){0,2}(?:access|permissions?|rights"
    r"|privileges?)\b|\bunrestricted\s+(?:[\w-]+\s+)?access\b"
    r"|\b(?:it|the\s+agent|you|claude|codex|agents?)\s+(?:will\s+)?(?:never|no\s+longer)\s+(?:stops?\s+to\s+|pauses?\s+to\s+|needs?\s+to\s+|has\s+to\s+)?asks?\s+(?:before|first"
    r"|for\s+(?:permission|approval|confirmation))\b"
)


# Words that name a safeguard and something else: a React hook, `dangerouslySetInnerHTML` (React's, not the
# agent's `--dangerously-skip-permissions`).
_NOT_A_SAFEGUARD = re2.compile(
    r"\b(?:custom|react|vue|unused|dead|use\w+)\s+hooks?\b|src/hooks|dangerouslysetinnerhtml(?:\s*[^=\s]|\s*$)"
)
# "No checks" or "without TLS" said of what is, not asked: "the API rejects requests without TLS", "drafts get no
# checks".
_SAYS_WHAT_IS = re2.compile(
    r"(?:\b(?:reject|refus|block|den(?:y|ie)|drop|fail)\w*\s+(?:[\w-]+\s+){0,3}|\b(?:gets?|got|ha(?:ve|s|d)|receives?)\s+)"
    r"(?:no|without)\s+(?:the\s+)?[\w-]+$"
)


def talked_off(folded: str) -> re2._Match | None:
    """The first safeguard `folded` (cut into `sentences`) talks the agent out of, and is neither prohibited nor
    something else by the same words (a React hook, a server that refuses requests without TLS): named (`skip the
    hooks`), named by a pronoun whose antecedent is one ("if the hook complains, skip it"), or a setting that
    turns one off (`rejectUnauthorized: false`)."""
    for match in itertools.chain(SAFEGUARD_OFF.finditer(folded), SAID_AWAY.finditer(folded)):
        # a phrase that opens with its own negation ("do not change the settings without asking") is read from
        # after it, as a prohibition of what follows
        lead = _OWN_NEGATION.match(folded, match.start()) if "," not in match.group() else None
        if prohibited(folded, lead.end() if lead else match.start(), match.end()):
            continue
        if _SAID_ON.match(folded, match.end()):
            continue
        if _NOT_A_SAFEGUARD.search(folded[match.start() : match.end() + 16].split(";", 1)[0]):
            continue
        if _SAYS_WHAT_IS.search(folded[: match.start()].rsplit(";", 1)[-1] + match.group()):
            continue
        if _NOT_FOR.search(match.group()):  # "`random.choice` for fixtures, never for tokens"
            continue
        return match
    for match in PRONOUN_OFF.finditer(folded):
        if _antecedent_is_a_safeguard(folded[max(0, match.start() - ANTECEDENT_REACH) : match.start()]):
            if not prohibited(folded, match.start(), match.end()):
                return match
    return setting_off(folded)


# A use said not to be what a phrase reads it as, inside the phrase ("MD5 for cache keys, not for passwords").
_NOT_FOR = re2.compile(r"\b(?:never|not|no|nor)\s+(?:for|as|to\s+(?:make|generate|create|hash|store))\b")
_OWN_NEGATION = re2.compile(r"(?:do\s+not|don'?t|never)\s+")
# A permission mode named and said off ("Auto-approve is off for this project"): the safeguard is on.
_SAID_ON = re2.compile(
    r"(?:\s+mode)?\s+(?:is|are|stays?|remains?|must\s+(?:stay|remain|be)|should\s+(?:stay|remain|be))\s+(?:always\s+)?"
    r"(?:off|disabled|forbidden|not\s+allowed|never\s+(?:used|on|enabled))\b"
)


# A safeguard named by a pronoun: an act that switches something off, done to "it" or "them" ("bypass it", "turn
# them off", "get around it"), is read with what the pronoun stands for.
_PRONOUN = r"(?:it|them|(?:that|this|those|these)(?:\s+(?:thing|things|one|ones|step|check|gate))?)"
PRONOUN_OFF = re2.compile(
    r"\b(?:(?:skip|bypass|disabl|ignor|silenc|suppress|circumvent|overrid|remov|delet|drop|uninstall|defeat|disregard"
    r"|deactivat|sidestep|dodg|evad|lift|untick|uncheck|waiv)\w*|(?:get|work|go|commit|push|merge|route|code|hack|step|sneak|skip|slip|find\s+a\s+way)"
    r"(?:s|ting|ing|ed|ping|ped)?\s+(?:around|past)|get\s+rid\s+of"
    rf"|(?:turn|switch|shut)(?:s|ed|ing)?\s+off|comment(?:s|ed|ing)?\s+out)\s+{_PRONOUN}\b"
    rf"|\b(?:turn|switch|shut|comment|leav|tak)(?:e|es|s|ed|ing)?\s+{_PRONOUN}\s+(?:off|out)\b"
    rf"|\b(?:lower|reduc|drop|set)\w*\s+{_PRONOUN}\s+to\s+(?:zero|0|nothing|none)\b"
    rf"|\bmake\s+{_PRONOUN}\s+(?:stop|go\s+away|disappear|shut\s+up)\b|\bwithout\s+(?:it|them)\b"
    # what the safeguard stopped, done over it ("if the scanner flags the commit, push it anyway")
    r"|\b(?:push|merg|commit|deploy|ship|land|releas|shut)\w*\s+(?:it|them)\s+(?:anyway|regardless|up)\b"
    # the passive ("it can be sidestepped")
    r"|\b(?:it|they|this|that)\s+(?:can|may|could|should|must|is\s+to|are\s+to)\s+(?:always\s+|safely\s+|just\s+"
    r"|simply\s+)?be\s+(?:sidestepped|skipped|bypassed|ignored|disabled|circumvented|removed|dropped|deleted|dodged"
    r"|commented\s+out|turned\s+off|switched\s+off|worked\s+around|overridden|disregarded)\b"
    r"|\b(?:it|they|this|that)\s+(?:is|are|has\s+been|have\s+been)\s+(?:deemed|considered|declared|marked|treated\s+as)"
    r"\s+(?:optional|disabled|off|advisory|non-?blocking)\b"
)
# Where a clause begins, for finding the one a pronoun leans on: a mark, or a conjunction between spaces (by str
# methods: a text of many short clauses must not make a pattern call per clause).
_CLAUSE_MARKS = str.maketrans(dict.fromkeys(",:", ";"))
_CONJUNCTIONS = tuple(f" {word} " for word in ("so", "and", "then", "but", "or"))
# Words that open a clause before its subject: subordinators, determiners, "never let".
_CLAUSE_OPENERS = frozenset(
    "if when whenever once since because as while should the a an any every our your its their this that these those"
    " never let don't do not no just so and then but or whole".split()
)
# What a pronoun's antecedent is when it is a safeguard: hooks, checks, tests, CI, reviews, signing, the sandbox, a
# scanner, a protection (the subject of the clause before: "the pre-commit hook complains", "CI checks are flaky").
_SAFEGUARD_NOUN = re2.compile(
    r"^(?:hooks?|husky|pre-commit|pre-push|commit-msg|checks?|verification|ssl|tls|certificates?|certs?|linters?|lint"
    r"|signing|signatures?|sandbox|tests?|ci|pipelines?|reviews?|approvals?|protection|scan|scans|scanners?|scanning"
    r"|type-?checks?|checkers?|checking|codeowners|owners"
    r"|typecheck\w*|mypy|guards?|safeguards?|gates?|firewall|2fa|mfa|audits?|validation|csrf|xsrf|cors|hsts|safety"
    r"|prompts?|confirmations?|dialogs?|thresholds?|coverage|suites?|assertions?|jobs?|workflows?)$"
)
# An antecedent said by what it does rather than named: what blocks a release or a merge, what runs before each
# commit, is a gate ("whatever blocks the release, remove it").
_GATE_BY_ROLE = re2.compile(
    r"\b(?:whatever|anything|something|thing|what|step|one)\s+(?:that\s+)?(?:blocks?|stops?|gates?|rejects?|prevents?"
    r"|fails?|holds?\s+up|guards?|runs?\s+before\s+(?:each|every|a|the)?\s*(?:commit|push|merge|release|deploy))\b"
)


def _antecedent_is_a_safeguard(before: str) -> bool:
    """True when the subject of the clause before a pronoun (`before`: the text up to it) names a safeguard: the
    first words of that clause, once its opening words are set aside."""
    marked = " ".join(before.translate(_CLAUSE_MARKS).split()) + " "
    for conjunction in _CONJUNCTIONS:
        marked = marked.replace(conjunction, ";")
    *earlier, _own = marked.split(";")  # the pronoun's own clause opens with the act, not with its subject
    for clause in reversed(earlier):
        words = [w.strip("`'\"()") for w in clause.split()]
        while words and words[0] in _CLAUSE_OPENERS:
            words.pop(0)
        if not words:
            continue  # no subject ("now and then": "then")
        if _GATE_BY_ROLE.search(clause):
            return True
        return any(_SAFEGUARD_NOUN.match(w) for w in words[:3])
    return False
