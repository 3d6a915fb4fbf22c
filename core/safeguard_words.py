"""The words the safeguard gate reads by (`core.safeguard_talk`): what names a safeguard, a gate or a secret; the
acts that keep a safeguard, weaken it, are prohibited, or take a secret somewhere, and the places that keep one; what
a fact may say a safeguard is; what a pronoun may stand for; and the patterns that cut a sentence into clauses. Word
lists and patterns only (and how a word's inflections are matched), no reading: that is `core.safeguard_talk`'s.
"""

from __future__ import annotations

import re2

from core.secret_sends import SECRET

__all__ = [
    "ARTICLE_OK",
    "BE",
    "BULLET",
    "BY_MEANS",
    "CHECKED_IN",
    "CHECK_ACT",
    "CLAUSE_CUT",
    "CODE",
    "CONCESSION",
    "CONDITION",
    "CONTINUATIONS",
    "CONTRACTED_IS",
    "CREATES",
    "DEMONSTRATIVES",
    "DETERMINERS",
    "DISAPPROVED",
    "ENV_TEMPLATE",
    "EXPOSED",
    "FACT",
    "FAILING",
    "FILE_SPAN",
    "FILLER",
    "GATE_FOLDERS",
    "GITIGNORED",
    "GUARD",
    "HANDS_OVER",
    "HELD_BY",
    "IN_PASSING",
    "KEEP",
    "KEEPING",
    "KEEP_ONLY_WITH",
    "KEPT_AWAY",
    "KEPT_IN",
    "KEPT_STATES",
    "LEAD",
    "MAY",
    "MODALS",
    "MODAL_KEEPS",
    "NAMES_OPEN",
    "NAVIGATES",
    "NEED",
    "NEEDS_A_PLACE",
    "NEGATED_DUTY",
    "NEGATION",
    "NEVER_SHOWS",
    "NONE_LEFT",
    "NOT_AN_OBJECT",
    "NOT_NEEDED",
    "NOT_SAFEGUARD",
    "NOWHERE_KEPT",
    "NO_PLACE",
    "OF_A_SECRET",
    "ON_A_FAILURE",
    "OPENS_CONDITION",
    "PATH",
    "PEOPLE",
    "PIECE_CUT",
    "PLACE",
    "POSSESSIVE",
    "PREPOSITIONS",
    "PROHIBITED_OK",
    "PROHIBITION",
    "PRONOUN",
    "QUALIFIED",
    "READS",
    "REFERRER",
    "REFUSED",
    "REPORTS",
    "SAFEGUARD",
    "SECRET_CARE",
    "SECRET_KEEP",
    "SECRET_NAMED",
    "SECRET_ONLY_WITH",
    "SECRET_PLACING",
    "SECRET_STATES",
    "SET_ASIDE",
    "SPAN_ENDS",
    "STATE_OK",
    "SUBORDINATE",
    "TAKES_IN",
    "THINGS",
    "TOOLS",
    "URL",
    "USES",
    "VERBS",
    "WEAK",
    "WEAKENER_OFF",
    "WHERE",
    "WORD",
    "is_a",
    "lemmas",
    "words_in",
]

# A secret by name: the words here and what `core.secret_sends` knows opens an account (a deploy key, a DSN, the
# `.env`), but not an environment variable, which is as often a setting as a secret.
_ENV_VAR = r"|env(?:ironment)? var"
assert _ENV_VAR in SECRET
_COOKIE = r"|cookie"
assert _COOKIE in SECRET
_SECRET_NAME = (
    r"\b(?:secrets?|tokens?|passwords?|passphrases?|credentials?|api\s+keys?"
    r"|(?:restricted|publishable|webhook|client|app|bot|signing)\s+(?:keys?|secrets?)|(?:admin|root|shared)\s+logins?"
    r"|(?:vault|keychain|password\s+manager)\s+(?:exports?|dumps?|contents|backups?)|jwts?|pats?|keystores?|\.jks"
    r"|service\s+account\s+json|seed\s+phrases?|mnemonics?|(?:bearer|authorization|auth)\s+(?:headers?|values?)"
    r"|hmac\s+keys?|dotenv\s+files?|identity\s+files?|id_rsa|id_ed25519|printenv|process\s+environment|creds?"
    r"|webhook\s+urls?|recovery\s+phrases?|(?:one-time|login|2fa|otp|verification|magic)\s+(?:codes?|links?)"
    r"|session\s+ids?)\b|"
) + SECRET.replace(_ENV_VAR, "").replace(_COOKIE, r"|\b(?:session|auth\w*|login|browser)\s+cookies?\b")
# What names a safeguard (folded text: lower case, accents off), a secret included.
SAFEGUARD = re2.compile(
    r"\b(?:hooks?|pre-commit|pre-push|commit-msg|husky|lefthook|ci|pipelines?|workflows?|checks?|gatekeep\w*"
    r"|(?:the|a|this|that|its|our|quality|coverage|merge|security|release|ci|review)\s+gates?"
    r"|coverage|lint|linters?|linting|type[- ]?check\w*|typecheck\w*|mypy|pyright|eslint|clippy|ruff|flake8|pylint"
    r"|tsc|rubocop|golangci-lint|bandit|gosec|pytest|jest|vitest|tests?|test\s+suites?"
    r"|suites?|e2e|scann\w*|scans?|audits?|reviews?|reviewers?|approv\w*|codeowners|branch\s+(?:protection|rules?)"
    r"|protect\w*|rulesets?|signing|signed|signatures?|sign-offs?|gpg|tls|ssl|certs?|certificat\w*|verif\w*"
    r"|permissions?|sandbox\w*|allow\s*lists?|allowlists?|deny\s*lists?|secrets?|tokens?|passwords?|passphrases?"
    r"|credentials?|api\s+keys?|safeguards?|guardrails?|guards?|csrf|xsrf|cors|2fa|mfa|sast|dast|dependabot|snyk"
    r"|semgrep|codeql|trivy|gitleaks|assertions?|thresholds?|status\s+checks?|pull\s+requests?|merge\s+requests?|prs?"
    r"|quality\s+bar|sanitiz\w*|escap(?:e|ing)|validation|firewall|rate\s+limit\w*|encryption|hash(?:es|ing)?"
    r"|confirmations?|always-allow\w*|attestations?|provenance|https|auth\w*\s+(?:middleware|checks?|guards?|layers?)"
    r"|merge\s+(?:bots?|queues?)|(?:straight|directly)\s+(?:to|into|on)\s+(?:main|master|prod\w*|production)"
    r"|ask(?:ing)?\s+(?:\w+\s+)?before)\b|" + _SECRET_NAME
)
PRONOUN = re2.compile(r"\b(?:it|them|they|this|that|these|those)\b")
# The safeguards whose sentence an imperative may not open with a verb no list here knows ("nudge the floor down
# until the PR clears" is held; "sync the branch before asking for review" is not: tests, reviews and secrets are
# named in too many everyday lessons).
GUARD = re2.compile(
    r"\b(?:hooks?|pre-commit|pre-push|husky|lefthook|ci|pipelines?|coverage|(?:the|a|quality|merge)\s+gates?|lint"
    r"|linters?|type[- ]?checks?"
    r"|mypy|scanners?|audits?|branch\s+(?:protection|rules?)|protected\s+branch\w*|codeowners|signing|signatures?|gpg"
    r"|tls|ssl|certificat\w*|sandbox\w*|permissions?|approvals?|required\s+(?:reviews?|checks?)|status\s+checks?"
    r"|safeguards?|guardrails?|sast|dast|codeql|semgrep|snyk|trivy|gitleaks|dependabot|gatekeeper|attestations?"
    r"|provenance)\b"
)
# Secrets are a safeguard's object, not a safeguard: removing or rotating one keeps it (sending one is
# `core.secret_sends`' to read).
SECRET_NAMED = re2.compile(_SECRET_NAME)
ENV_TEMPLATE = re2.compile(r"\.env\.(?:example|sample|template|dist|defaults?)\b")  # what a `.env` holds, without it
SECRET_CARE = frozenset("remove delete rotate revoke redact mask replace scrub strip purge".split())
# What an imperative may do to a secret: take care of it, read it, use it, or put it where secrets are kept. Sharing,
# printing, quoting, handing it over or any act no list here knows waits for review (`core.secret_sends` reads the
# spellings of a send it knows; this holds the ones it does not).
SECRET_KEEP = SECRET_CARE | frozenset(
    "refresh regenerate renew expire encrypt hash read load fetch get retrieve use verify check source generate create"
    " request ask compare validate match report flag reference refer authenticate authorize connect call sign look"
    " scope treat".split()
)
# Acts on a secret that keep it only with the right words after them: a leak reported, a secret referred to by name.
SECRET_ONLY_WITH = {
    "treat": re2.compile(r"\bas\s+(?:leaked|compromised|exposed|sensitive|secret)\b"),
    "report": re2.compile(r"\b(?:leak|expos|compromis)\w*"),
    "flag": re2.compile(r"\b(?:leak|expos|compromis)\w*"),
    "reference": re2.compile(r"\b(?:by\s+(?:its\s+|their\s+)?names?|variables?|env\w*)\b"),
    "refer": re2.compile(r"\b(?:by\s+(?:its\s+|their\s+)?names?|variables?|env\w*)\b"),
}
# What a secret's name may qualify rather than name the secret: "a password reset link", "the token's expiry".
QUALIFIED = re2.compile(
    r"^(?:'s\s+)?(?:resets?|polic(?:y|ies)|fields?|inputs?|hash\w*|length|strength|managers?|rotation|expiry|expiration"
    r"|prompts?|forms?|validation|requirements?|rules?|changes?|flows?|scopes?|refresh|formats?|names?|types?|prefix"
    r"|lifetime|ttl|age|audience|issuer|claims?|scan\w*|baseline|template)\b"
)
# Acts that put a secret somewhere: admitted only where each place named is one that keeps secrets ("store it in the
# vault", not "put it in the README").
SECRET_PLACING = frozenset(
    "store save set configure put inject pass provide export add keep copy move write send fill change update"
    " edit cache mount".split()
)
PLACE = re2.compile(
    r"\b(into|in|on|onto|inside|to|through|via|over|at|as|with|within|across)\s+"
    r"|\b(by)\s+(?:text|sms|e-?mail|phone|mail|message|post|dm|slack|chat|fax|letter)"
)
# Places a secret may be named with that keep it: a name, a time, the hand that types it ("reference it by name",
# "inject it at build time", "log in with it by hand").
NO_PLACE = re2.compile(
    r"^(?:(?:the|a|an)\s+)?(?:name|hand|runtime|startup|build|boot|deploy|request|code|constant\s+time|locally)\b"
)
# Acts that read a secret: only "into", "onto" and "to" name where it goes ("load it into the client bundle"); "in"
# names where the reading is ("read the password from the environment in settings.py").
READS = frozenset(
    "read load fetch get retrieve source look generate create sign authenticate connect call check verify"
    " inspect".split()
)
CHECKED_IN = re2.compile(r"\bcheck(?:s|ed|ing)?\s+in\b")  # "check in the .env file": commit it
# Acts that put a secret somewhere only where a place is named: with none ("add the .env file too") it goes where the
# change goes.
NEEDS_A_PLACE = frozenset("add include attach insert stage".split())
# Places a secret is taken to with no preposition, or said aloud: never one that keeps it.
NOWHERE_KEPT = re2.compile(r"\b(?:somewhere|anywhere|everywhere|aloud|out\s+loud)\b")
# Acts that hand a secret to someone, wherever they stand in the clause ("use the README to share the key").
HANDS_OVER = frozenset(
    "share send post paste publish upload email mail print echo leak forward submit give hand show tell dm text".split()
)
# What a subject may be said to include or get: the subject is then where the secret goes ("the README should
# include the staging password", "anyone who asks gets it").
TAKES_IN = frozenset(
    "include includes contain contains get gets receive receives hold holds have has list lists show shows mention"
    " mentions carry carries".split()
)
# What a secret may not be said to be: where it shows (tracked in git, documented in the wiki, served to the browser).
EXPOSED = frozenset(
    "tracked merged pinned documented served exposed hosted available committed published posted printed logged"
    " visible public readable included embedded baked bundled".split()
)
MODALS = frozenset("must should will shall can may".split())
WHERE = frozenset("go goes went sit sits live lives end ends land lands show shows appear appears".split())
# What may be taken of a secret without the secret ("a hash of it", "the length of the token").
OF_A_SECRET = frozenset("hash hashes digest fingerprint length checksum prefix name names expiry scopes".split())
CHECK_ACT = re2.compile(r"^check\b|\b(?:to|and|or|then|please|always)\s+check\b")
# What a pronoun may stand for that is no safeguard: what runs, holds or serves ("the dev container", "the cache").
THINGS = frozenset(
    "container containers server servers instance instances cache caches image images database databases db app apps"
    " service services cluster process processes daemon browser browsers emulator simulator vm vms volume volumes queue"
    " worker workers index migration migrations page site bundle notebook shell session terminal port proxy mock mocks"
    " stub stubs fixture fixtures postgres redis mysql mongo kafka elasticsearch localstack minio docker compose"
    " lockfile binary package".split()
)
# Who a pronoun may stand for: a person is no safeguard and no secret ("tell the user so they can revoke it").
PEOPLE = frozenset(
    "user users maintainer maintainers team teammate teammates reviewer reviewers owner owners person people human"
    " humans lead admin admins contractor contractors developer developers someone".split()
)
SPAN_ENDS = frozenset("so because which that where when and or but then before after until while if".split())
REPORTS = frozenset("report flag".split())  # a leak reported: where it is reported is no place the secret goes
# Steps that go somewhere rather than name what a pronoun stands for ("open the config file and delete it").
NAVIGATES = frozenset("open go navigate cd find locate visit ask look see switch head browse".split())
# What refers back to something said before: a pronoun, or a noun that stands for what a secret was ("that file",
# "its contents", "the value").
REFERRER = re2.compile(
    r"\b((?:the|its|their|that|this|those|these)\s+(?:whole\s+|full\s+|raw\s+|same\s+)?(?:values?|files?|contents?"
    r"|output|strings?|keys?|results?|folder"
    r"|directory|steps?|jobs?|checks?|gates?|rules?|stages?|things?|tools?|bots?|blobs?|text|plaintext)"
    r"|(?:a|the)\s+cop(?:y|ies)|it|them"
    r"|they)\b"
    r"|\b(this|that|these|those)(?:\s+(?:in|into|on|onto|to|inside|anywhere|somewhere|over|out|back|up|everywhere"
    r"|verbatim|as|with|from|here|there)\b|\s*(?:[,.!?)]|$))"
)
# Words that name no safeguard though they spell one: React's hooks.
NOT_SAFEGUARD = re2.compile(
    r"\b(?:react|custom|component|use(?:state|effect|memo|callback|context|reducer|ref|query|mutation)\w*|unused"
    r"|dead)\s+hooks?\b|\bhooks?\s+(?:rules?|api)\b|\bcomponents?\s+with\s+hooks\b"
)
# A path is one word (`tests/unit` is a folder, not tests), unless a folder of it names a gate (`.github/workflows`,
# `.husky/pre-commit`): then its folders are read as words.
PATH = re2.compile(r"[\w.-]*/[\w./-]*")
GATE_FOLDERS = re2.compile(
    r"(?:^|/)\.?(?:github|gitlab|husky|githooks|circleci|buildkite|pre-commit\S*|workflows)(?:/|$)|\.git/hooks"
)
# Code spans and fenced blocks: the allow-list judges them; here each is one word.
FILE_SPAN = re2.compile(r"`(\.?[\w-]+(?:\.[\w-]+)+|\.[\w-]+)`")  # a file's name in a span is read as that name
CODE = re2.compile(r"```[^`]*(?:`{1,2}[^`]+)*```|`[^`\n]*`")
# Where a sentence's clauses part: a comma, a colon, a parenthesis, a dash between words, the conjunctions that join
# two acts and those that open a condition. "rather than" / "instead of" open a clause whose act is set aside.
CLAUSE_CUT = re2.compile(
    r"\s*(?:[,:()|]|\s[-–—]\s|\s(?:and|or|nor|but|so|then|because|since|unless|except|though|although)\s"
    r"|\s(?:while|until|before|after|when|whenever|if|once|where|assuming)\s|\s(?:rather\s+than|instead\s+of)\s)\s*"
)
SET_ASIDE = re2.compile(r"(?:rather\s+than|instead\s+of)\s")
LEAD = re2.compile(r"^(?:rather\s+than|instead\s+of|and|or|nor|but|so|then)\s+")
OPENS_CONDITION = re2.compile(r"\b(?:while|until|before|after|when|whenever|if|once|where|assuming)\s*$")
CONTINUATIONS = frozenset({",", "or", "nor", "and"})
CONCESSION = re2.compile(
    r"\b(?:even\s+(?:if|when|though)|regardless|despite|anyway|anyhow|no\s+matter|whatever|either\s+way|at\s+will"
    r"|if\s+(?:needed|necessary|you\s+must|you\s+have\s+to|in\s+doubt)|when\s+(?:needed|necessary|in\s+a\s+hurry)"
    r"|temporar\w*|for\s+now|just\s+this\s+once|this\s+once|unless|except|but\s+if|only\s+if)\b"
)
# Words of a safeguard made weaker, off or beside the point, wherever they stand (a typed clause holds none of
# them outside a prohibition: "run the tests with the failures ignored" is no run).
WEAK = re2.compile(
    r"\b(?:skip\w*|bypass\w*|disabl\w*|remov\w*|delet\w*|drop(?:s|ped|ping)?|lower\w*|loosen\w*|relax\w*|weaken\w*"
    r"|silenc\w*|suppress\w*|ignor\w*|dismiss\w*|mut(?:e|ed|es|ing)|disregard\w*|circumvent\w*|overrid\w*|overrode"
    r"|waiv\w*|lift(?:s|ed|ing)?|evad\w*|sidestep\w*|neuter\w*|stub(?:s|bed|bing)?\s+out"
    r"|comment\w*\s+(?:\w+\s+){0,4}out|turn\w*\s+off|switch\w*\s+off|shut\w*\s+off|strip(?:s|ped|ping)?"
    r"|empt(?:y|ied|ies|ying)|kill(?:s|ed|ing)?|swallow\w*|plain\s+http"
    r"|(?:with|grant\w*|giv\w*)\s+full\s+(?:\w+\s+){0,3}access|(?:zero|no)\s+required"
    r"|mark\w*\s+(?:[\w']+\s+){0,4}as\s+(?:success\w*|pass\w*|green)"
    r"|(?:that|to|always|make\s+\w+)\s+exits?\s+(?:with\s+)?(?:0|zero)|(?:humans?|people)\s+only"
    r"|not\s+for\s+(?:agents?|ai|claude|you)|(?:approve|sign\s+off\s+on|review|merge)\s+your\s+own"
    r"|ts-nocheck|ts-ignore|ts-expect-error|eslint-disable\S*|nolint|no\s+cover"
    r"|paus(?:e|es|ed|ing)|deactivat\w*|uninstall\w*|unset\w*|(?:work|get|go|route|hack|steer)\w*"
    r"\s+around|(?:get|go|slip|sneak|push|move)\w*\s+past"
    r"|outside\s+(?:of\s+)?(?:it|them|(?:the\s+)?(?:sandbox|ci|pipeline|container)\w*)"
    r"|exclud\w*|omit\w*|exempt\w*|xfail\w*|optional|advisory"
    r"|informational|formality|non-?blocking|unnecessary|pointless|irrelevant|noise|noisy|cosmetic|(?:go|take|put"
    r"|make|wave|throw)\w*\s+(?:\w+\s+){0,3}away|(?:to|at)\s+(?:zero|0+)|nothing|without|no-op|noqa|nosec"
    r"|pretend\w*|always\s+(?:pass|succeed|return|exit)\w*|overlook\w*|allow\w*\s+to\s+fail|let\s+\w+\s+fail"
    r"|continue-on-error|allow_failure|auto-?approv\w*|self-?approv\w*|rubber"
    r"|un(?:checked|verified|signed|scanned|approved|reviewed)|opt(?:s|ed|ing)?\s+out)\b|(?:^|\s)off(?:\s|$)"
)
# Acts that keep a safeguard, as an imperative's verb (lemmas).
KEEP = frozenset(
    "run rerun re-run execute fix add write keep wait ask open follow respect read check review expect get request"
    " sign enable re-enable restore tell report mention explain investigate look note rotate store use verify"
    " reference replace upgrade update regenerate install document pass commit raise address resolve inspect"
    " confirm cover test validate sanitize escape hash encrypt load inject generate set configure pin declare prefix"
    " include name route lint format type-check typecheck stage start create clone"
    " compare redact mask make leave let profile split record track invoke prefer link give grant copy fill save"
    " quote print list show capture reproduce mock touch sync compile debug"
    " quarantine stop retry renew ensure rebuild restart flush reload refresh bump".split()
)
# A keeping verb that keeps only with the right words after it: "make the tests pass", "leave the rule on", "let
# the user decide", "tell the user".
_PERSON = r"(?:the\s+)?(?:users?|maintainers?|owners?|reviewers?|team|person|human|someone|lead|author|on-call|you)"
KEEP_ONLY_WITH = {
    "make": re2.compile(r"\b(?:pass|green|succeed|work|clean|faster|quicker|stricter|reliable|deterministic)\w*\b"),
    "leave": re2.compile(
        r"\b(?:on|enabled|in\s+place|as\s+(?:it\s+is|is)|alone|intact|untouched|comments?|notes?|running)\b"
    ),
    "let": re2.compile(
        rf"\b(?:{_PERSON}|them|ci)\s+(?:decide|choose|confirm|review|approve|know|merge)\b"
        r"|^\w+\s+(?:it|them|secret|the\s+\w+)\s+(?:finish|complete|run|expire)\w*"  # "let it finish", "let it expire"
    ),
    "tell": re2.compile(rf"^\w+\s+{_PERSON}\b"),
    "ask": re2.compile(rf"^\w+(?:\s+for\b|\s+(?:\w+\s+){{0,2}}{_PERSON}\b|\s*$)"),
    "stop": re2.compile(r"^\w+\s+(?:\w+\s+){0,2}with\s+code\b|^\w+\s*$"),  # "stop and ask the user"
    "quarantine": re2.compile(r"\b(?:ticket|issue|marker|label)\b"),
    "give": re2.compile(r"\b(?:read-only|least|minimal|only)\b"),
    "grant": re2.compile(r"\b(?:read-only|least|minimal|only)\b"),
    "set": re2.compile(r"\b(?:true|enabled|required|strict|code)\b"),
    "configure": re2.compile(r"\b(?:true|enabled|required|strict|code)\b"),
    "keep": re2.compile(
        r"\b(?:on|enabled|running|strict|green|passing|above|at\s+least|in\s+place|intact|required|blocking|out|small"
        r"|stable|fast|short|up\s+to\s+date|current|at|under|below|in|inside|within|executable|behind|clean)\b"
        r"|^\w+\s+(?:it|them|that|this|secret)\s*$"  # "keep it": as it is
    ),
}
# Acts a prohibition may set aside: whatever weakens, changes, sends, publishes or runs something else. A
# prohibition of a keeping act ("never wait for CI", "don't run the hooks") is no such thing.
PROHIBITED_OK = frozenset(
    "skip bypass disable remove delete drop lower loosen relax weaken silence suppress ignore dismiss mute disregard"
    " circumvent override waive lift evade sidestep stub comment turn switch shut strip empty kill pause deactivate"
    " uninstall unset reduce force exclude omit exempt xfail quarantine edit touch change modify alter rewrite"
    " refactor rename move replace downgrade mark tag add paste put share log print hardcode hard-code expose send"
    " post upload leak echo quote include embed copy write commit push merge deploy release ship publish approve"
    " self-approve close reopen land retag rebase amend squash reset rotate revoke regenerate store save cache"
    " mock patch monkeypatch catch swallow use pass call retry loop spam hit contact email mail message dm slack"
    " open click follow download fetch install trust accept whitelist allowlist widen grant give elevate chmod chown"
    " sudo build create generate overwrite truncate wipe clear reformat answer point raise enable work tell say claim"
    " force-push force-pushing export reveal disclose transmit hand display"
    " announce assume by"
    " a an the for as to in on at with from into".split()
)
KEEPING = frozenset(
    "run rerun re-run wait ask follow respect keep enable restore read check review request fix".split()
)
PROHIBITION = re2.compile(
    r"^(?:(?:please|you|we|agents?|the\s+agent|claude|nobody|no\s+one)\s+)?(?:never|do\s+not|don'?t|dont|must\s+not"
    r"|mustn'?t|should\s+not|shouldn'?t|may\s+not|cannot|can'?t|can\s+never|must\s+never|should\s+never|avoid"
    r"|no\s+more|may|must|should|can)\s+(?:ever\s+|just\s+|simply\s+|even\s+|try\s+to\s+|attempt\s+to\s+"
    r"|be\s+tempted\s+to\s+)*([\w-]+)"
    r"|^(?:none\s+of\s+(?:\w+\s+){1,3}|nothing\s+|no\s+\w+\s+)(?:may|can|should|must|is\s+to|are\s+to|gets?)\s+"
    r"(?:ever\s+|be\s+|get\s+)*([\w-]+)"
)
# "Never hesitate to run the tests": a negated duty to do a keeping act keeps.
NEGATED_DUTY = re2.compile(
    r"^(?:never|don'?t|do\s+not)\s+(?:forget|hesitate|fail|neglect)\s+to\s+([\w-]+)|^(?:there\s+is\s+)?no\s+reason"
    r"\s+not\s+to\s+([\w-]+)"
)
CONDITION = re2.compile(r"^(?:if|when|whenever|once|after|before|as\s+soon\s+as|in\s+case|where|wherever)\b")
FILLER = re2.compile(
    r"^(?:(?:also|always|please|just|first|then|next|finally|instead|only|now|still|again|locally|each\s+time"
    r"|every\s+time|note|tip|rule|important|so|even)\b[\s:]*)+"
)
# What a fact says a safeguard does (as its first verb).
FACT = frozenset(
    "run runs check checks enforce enforces require requires need needs block blocks fail fails cover covers include"
    " includes route routes use uses live lives report reports flag flags catch catches reject rejects take takes"
    " verify verifies protect protects guard guards scan scans lint lints format formats validate validates gate"
    " gates test tests expect expects want wants apply applies trigger triggers build builds start starts read reads"
    " compare compares hash hashes sign signs rotate rotates load loads inject injects wait waits ask asks cost costs"
    " call calls own owns mirror mirrors point points go goes sit sits stay stays remain remains keep keeps cache"
    " caches mean means refuse refuses list lists carry carries matter matters come comes exist exists happen"
    " happens refer refers get gets install installs work works appear appears contain contains end ends see sees"
    " show shows do does review reviews approve approves fix fixes break breaks treat treats return returns"
    " respond responds"
    " serve serves poll polls listen listens answer answers reset resets has have holds grants expire expires"
    " ran checked caught reported routed".split()
)
BE = frozenset("is are was were be been stays stay remains remain".split())
# What a safeguard may be said to be: on, required, where it lives, who owns it.
STATE_OK = frozenset(
    "required mandatory enabled on green blocking enforced expected strict configured defined set kept stored in at"
    " created provisioned renewed"
    " under managed handled run triggered owned protected reviewed pinned checked injected read loaded the a an part"
    " slow fast quick flaky red failing passing measured limited restricted locked encrypted hashed signed verified"
    " needed necessary important critical there here active live written generated rotated issued documented"
    " described listed declared installed separate per only always intentional deliberate deterministic marked"
    " tracked merged added passed provided mounted fetched pulled isolated hermetic idempotent by for of our your"
    " their its done code forbidden prohibited banned disallowed reserved read-only executable untracked"
    " covered resolved addressed fixed answered sorted formatted linted signal served exposed hosted located"
    " available reachable mounted fake dummy placeholder deployed built created httponly secure cached".split()
)
ARTICLE_OK = frozenset(
    "required blocking mandatory merge source only same gate check job step default first last part hard real"
    " separate dedicated pre-commit ci github right correct standard bug".split()
)
MAY = frozenset("can could may might".split())
VERBS = KEEP | PROHIBITED_OK - frozenset("a an the for as to in on at with from into by".split())
WEAKENER_OFF = re2.compile(
    r"^(?:the\s+)?(?:auto-?approv\w*|yolo(?:\s+mode)?|bypass\w*(?:\s+(?:mode|permissions))?)\s+(?:is|stays|remains"
    r"|must\s+stay|should\s+stay)\s+(?:off|disabled|forbidden|banned)\b"
)
DISAPPROVED = frozenset("wrong forbidden prohibited banned unsafe dangerous".split())
PREPOSITIONS = frozenset("in on at for with during across from after before as to of by into".split())
IN_PASSING = re2.compile(r"^(?:tests?|test\s+suites?|suites?|e2e|reviews?|prs?|pull\s+requests?|merge\s+requests?)$")
MODAL_KEEPS = frozenset(
    "pass succeed stay remain run block fail cover include require reject catch protect verify enforce hold keep"
    " match report reach list go".split()
) - {"list", "go"}
# Tools that run a safeguard: one chosen over another ("Bun's runner, not Jest") sets no safeguard aside.
TOOLS = re2.compile(
    r"^(?:ruff|flake8|pylint|tsc|rubocop|golangci-lint|bandit|gosec|pytest|jest|vitest|mypy|pyright|eslint)$"
)
URL = re2.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
# A safeguard that is failing, or what a test asserts: what may be done to it is finding out why, not changing it
# until it passes ("add an early return to each failing test", "update the expected values to match the output").
FAILING = re2.compile(
    r"\b(?:failing|failed|red|broken|flaky)\s+(?:\w+\s+)?(?:tests?|checks?|builds?|jobs?|suites?|specs?|cases?"
    r"|assertions?|pipelines?)\b|\bassertions?\b|\bexpected\s+(?:values?|outputs?|results?)\b|\bgolden\s+files?\b"
)
ON_A_FAILURE = frozenset(
    "run rerun re-run fix investigate read report debug reproduce quarantine check look inspect tell ask mention note"
    " track record document retry open write capture start quote name list print show save".split()
)
# What a safeguard's finding may be said to be open to: rotated, revoked, fixed (a secret, a failure).
KEPT_STATES = frozenset("rotated revoked reviewed fixed checked verified rerun re-run investigated reproduced".split())
USES = frozenset("install use include call trust accept follow open enable load require".split())
NEED = frozenset("has have needs need".split())
DETERMINERS = frozenset("a an the each every all one two three any our your its their".split())
NAMES_OPEN = DETERMINERS | PREPOSITIONS | {"code", "link"}  # what a name may open with
KEPT_IN = re2.compile(
    r"\b(?:belongs?|goes|go|lives?|stays?|comes?\s+from|kept|stored|loaded|read|set|injected|put|saved)\s+"
    r"(?:only\s+)?(?:in|into|from|to|inside)\s+"
)
# Words between a verb and a secret that make the secret no object of it ("write tests for the token refresh").
NOT_AN_OBJECT = frozenset("for about from by without after before when if whose than how why".split())
KEPT_AWAY = re2.compile(r"^keep\s+(?:\w+\s+){0,4}(?:off|out\s+of|away\s+from)\b")
REFUSED = re2.compile(r"\b(?:is|are|get|gets|will\s+be)\s+(?:always\s+)?(?:rejected|refused|blocked|denied)\s*$")
# "keep lint at zero warnings": no finding left is a safeguard kept, not set to zero
NONE_LEFT = re2.compile(
    r"\b(?:at|to)\s+(?:zero|0)\s+(?:new\s+)?(?:warnings|errors|failures|findings|issues|vulnerabilities|alerts)\b"
)
BY_MEANS = re2.compile(r"\s+by\s+(\w+ing)\b")  # "make CI green by marking the job as passed": the means is an act
CREATES = frozenset("write add create".split())
POSSESSIVE = re2.compile(r"\b(?:its|their)\b")
# What a secret may be said to be ("tokens in fixtures are fake", "it stays out of shell history").
SECRET_STATES = frozenset(
    "fake dummy placeholder short-lived scoped expired revoked per-user per-environment rate-limited read-only"
    " limited httponly secure out shared".split()
)
NEVER_SHOWS = re2.compile(
    r"\b(?:never|not|n't|no\s+longer)\s+(?:\w+\s+)?(?:appears?|ends?\s+up|lands?|shows?\s+up|leaks?|gets?\s+(?:into|in"
    r"|committed|logged|printed)|goes|reach(?:es)?|touch(?:es)?)\b"
)
NOT_NEEDED = re2.compile(r"^(?:you\s+|we\s+)?(?:do\s+not|don'?t|never)\s+need\b")
DEMONSTRATIVES = frozenset("this that these those".split())
# What a subject may be said never to have or hold ("the password must never have a default value").
HELD_BY = frozenset("have has contain hold appear show reach".split())
# A clause's pieces, for finding what a pronoun refers to: its marks and the conjunctions that join two of them (a
# subordinate piece keeps its opening word: "when the tests fail").
PIECE_CUT = re2.compile(r"[;,:()|\n]|\s[-–—]\s|\s(?:and|or|nor|but|so|then)\s")
SUBORDINATE = re2.compile(
    r"^\s*(?:when|whenever|if|once|while|before|after|until|unless|as|since|because|in|on|at|for|during|with|without"
    r"|from|by|through|across|except)\b"
)
CONTRACTED_IS = re2.compile(r"\b(it|that|this|there|what|who)'s\b")
GITIGNORED = re2.compile(r"\bgit-?ignored\b|\b(?:which|that)\s+git\s+ignores\b")
NEGATION = frozenset("not never no n't nobody none".split())
WORD = re2.compile(r"[a-z0-9][\w'%.-]*")
# `words_in` reads WORD by str methods: RE2's findall calls back into Python once a match, the gate's largest cost.
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'%.-")
_NOT_WORD = str.maketrans({chr(c): " " for c in range(128) if chr(c) not in _WORD_CHARS})
_NO_OPENING = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_'%.-"  # word characters WORD's first may not be
BULLET = re2.compile(r"^\s*(?:[-*+>|]+|\d+[.)])\s*")


def lemmas(word: str) -> tuple[str, ...]:
    """`word` and the stems an English inflection leaves ("skipping" -> skip, "disabled" -> disable)."""
    found = [word]
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) > len(end) + 2:
            stem = word[: -len(end)]
            found += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                found.append(stem[:-1])
    return tuple(found)


def words_in(text: str) -> list[str]:
    """`WORD.findall(text)`: each run of word characters (ASCII: RE2's `\\w` is), from its first that may open a
    word."""
    if not text.isascii():
        text = text.encode("ascii", "replace").decode("ascii")  # any other character parts words, as in WORD
    return [w for run in text.translate(_NOT_WORD).split() if (w := run.lstrip(_NO_OPENING))]


def is_a(word: str, words: frozenset[str]) -> bool:
    return any(w in words for w in lemmas(word))
