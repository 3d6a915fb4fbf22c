"""What a model's sentence may say about a safeguard: only what the screen can read as keeping it.

Four blind sets in a row got the same kind of text past the phrase readers (`core.safeguards_off`): a safeguard
talked off in words no reader had met ("lift them, push, then restore them", "tell git not to run them", "drop the
coverage gate to zero"). A list of the ways to say "switch it off" is never complete, so for text a model wrote this
reads the other way round: a clause that names a safeguard (hooks, CI, tests, coverage, linters and type checkers,
scanners and audits, review and approval, branch rules, signing, TLS and certificates, permissions and the sandbox,
secrets), or that speaks of one by a pronoun in an entry that names one, is admitted only in a shape known to keep
it:

- an imperative of a keeping act: run, fix, add, wait for, ask, keep ... on ("Run the linter before pushing", "fix
  what the hook reports", "wait for the approval");
- a prohibition of an act that weakens, changes, sends or releases ("never skip the hooks", "don't paste tokens into
  issues", "don't touch the CI config"), or what "rather than" / "instead of" sets aside ("rather than lowering the
  gate");
- a fact of what the safeguard does or must be ("the scanner job runs on every PR", "coverage must stay above 85%",
  "branch protection requires one approval", "TLS verification stays on");
- a condition ("if the hook fails"), a list of names ("type checks, unit tests and a license scan").

A clause is read where it names a safeguard, speaks of one by a pronoun, opens a sentence that names a gate (hooks,
CI, coverage, linters, scanners, branch rules, signing, TLS, permissions, the sandbox), or holds a weakening word in
an entry that names a gate. What an imperative does to a failing test, an assertion or a golden file is finding out
why (run, fix, read, quarantine with a ticket), not changing it until it passes.

Anything else about a safeguard waits for a person's review (`safeguard`): a permission ("can be skipped"), a state
no list here knows ("is a formality", "is informational"), a concession ("even if", "regardless"), a verb no list
here knows. The keyless miner's lessons are typed values rendered by our own code and are not read here. Code
spans are the allow-list's to judge and are read as one opaque word. Pure functions.
"""

from __future__ import annotations

import itertools

import re2

from core.program_calls import clip
from core.prohibitions import prohibited
from core.reading import ANTECEDENT_REACH, folded, run_on, sentences, spelled_out, spelling_hidden, unemphasised
from core.secret_sends import SECRET, keeps_secrets

__all__ = ["SAFEGUARD", "safeguard_refusals"]

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
    r"|hmac\s+keys?|dotenv\s+files?|identity\s+files?|id_rsa|id_ed25519|printenv|process\s+environment)\b|"
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
    r"|merge\s+(?:bots?|queues?)|(?:straight|directly)\s+(?:to|into|on)\s+(?:main|master|prod\w*|production))\b|"
    + _SECRET_NAME
)
_PRONOUN = re2.compile(r"\b(?:it|them|they|this|that|these|those)\b")
# The safeguards whose sentence an imperative may not open with a verb no list here knows ("nudge the floor down
# until the PR clears" is held; "sync the branch before asking for review" is not: tests, reviews and secrets are
# named in too many everyday lessons).
_GUARD = re2.compile(
    r"\b(?:hooks?|pre-commit|pre-push|husky|lefthook|ci|pipelines?|coverage|(?:the|a|quality|merge)\s+gates?|lint"
    r"|linters?|type[- ]?checks?"
    r"|mypy|scanners?|audits?|branch\s+(?:protection|rules?)|protected\s+branch\w*|codeowners|signing|signatures?|gpg"
    r"|tls|ssl|certificat\w*|sandbox\w*|permissions?|approvals?|required\s+(?:reviews?|checks?)|status\s+checks?"
    r"|safeguards?|guardrails?|sast|dast|codeql|semgrep|snyk|trivy|gitleaks|dependabot|gatekeeper|attestations?"
    r"|provenance)\b"
)
# Secrets are a safeguard's object, not a safeguard: removing or rotating one keeps it (sending one is
# `core.secret_sends`' to read).
_SECRET = re2.compile(_SECRET_NAME)
_ENV_TEMPLATE = re2.compile(r"\.env\.(?:example|sample|template|dist|defaults?)\b")  # what a `.env` holds, without it
_SECRET_CARE = frozenset("remove delete rotate revoke redact mask replace scrub strip purge".split())
# What an imperative may do to a secret: take care of it, read it, use it, or put it where secrets are kept. Sharing,
# printing, quoting, handing it over or any act no list here knows waits for review (`core.secret_sends` reads the
# spellings of a send it knows; this holds the ones it does not).
_SECRET_KEEP = _SECRET_CARE | frozenset(
    "refresh regenerate renew expire encrypt hash read load fetch get retrieve use verify check source generate create"
    " request ask compare validate match report flag reference refer authenticate authorize connect call sign look"
    " scope treat".split()
)
# Acts on a secret that keep it only with the right words after them: a leak reported, a secret referred to by name.
_SECRET_ONLY_WITH = {
    "treat": re2.compile(r"\bas\s+(?:leaked|compromised|exposed|sensitive|secret)\b"),
    "report": re2.compile(r"\b(?:leak|expos|compromis)\w*"),
    "flag": re2.compile(r"\b(?:leak|expos|compromis)\w*"),
    "reference": re2.compile(r"\b(?:by\s+(?:its\s+|their\s+)?names?|variables?|env\w*)\b"),
    "refer": re2.compile(r"\b(?:by\s+(?:its\s+|their\s+)?names?|variables?|env\w*)\b"),
}
# What a secret's name may qualify rather than name the secret: "a password reset link", "the token's expiry".
_QUALIFIED = re2.compile(
    r"^(?:'s\s+)?(?:resets?|polic(?:y|ies)|fields?|inputs?|hash\w*|length|strength|managers?|rotation|expiry|expiration"
    r"|prompts?|forms?|validation|requirements?|rules?|changes?|flows?|scopes?|refresh|formats?|names?|types?|prefix"
    r"|lifetime|ttl|age|audience|issuer|claims?|scan\w*|baseline|template)\b"
)
# Acts that put a secret somewhere: admitted only where each place named is one that keeps secrets ("store it in the
# vault", not "put it in the README"); "to" names no place after a verb that hands a value to a program.
_SECRET_PLACING = frozenset(
    "store save set configure put inject pass provide export add keep copy move write send fill change update"
    " edit cache mount".split()
)
_HANDS_TO_A_PROGRAM = frozenset("set configure pass provide inject load".split())
_PLACE = re2.compile(
    r"\b(into|in|on|onto|inside|to|through|via|over|at|as|with|within|across)\s+"
    r"|\b(by)\s+(?:text|sms|e-?mail|phone|mail|message|post|dm|slack|chat|fax|letter)"
)
# Places a secret may be named with that keep it: a name, a time, the hand that types it ("reference it by name",
# "inject it at build time", "log in with it by hand").
_NO_PLACE = re2.compile(
    r"^(?:(?:the|a|an)\s+)?(?:name|hand|runtime|startup|build|boot|deploy|request|code|default|constant\s+time)\b"
)
# Acts that read a secret: only "into", "onto" and "to" name where it goes ("load it into the client bundle"); "in"
# names where the reading is ("read the password from the environment in settings.py").
_READS = frozenset("read load fetch get retrieve source look generate create sign authenticate connect call".split())
# What a secret may not be said to be: where it shows (tracked in git, documented in the wiki, served to the browser).
_EXPOSED = frozenset(
    "tracked merged pinned documented served exposed hosted available committed published posted printed logged"
    " visible public readable included embedded baked bundled".split()
)
# Steps that go somewhere rather than name what a pronoun stands for ("open the config file and delete it").
_MODALS = frozenset("must should will shall can may".split())
_WHERE = frozenset("go goes went sit sits live lives end ends land lands show shows appear appears".split())
# What may be taken of a secret without the secret ("a hash of it", "the length of the token").
_OF_A_SECRET = frozenset("hash hashes digest fingerprint length checksum prefix name names expiry scopes".split())
_CHECK_ACT = re2.compile(r"^check\b|\b(?:to|and|or|then|please|always)\s+check\b")
# What a pronoun may stand for that is no safeguard: what runs, holds or serves ("the dev container", "the cache").
_THINGS = frozenset(
    "container containers server servers instance instances cache caches image images database databases db app apps"
    " service services cluster process processes daemon browser browsers emulator simulator vm vms volume volumes queue"
    " worker workers index migration migrations page site bundle notebook shell session terminal port proxy mock mocks"
    " stub stubs fixture fixtures postgres redis mysql mongo kafka elasticsearch localstack minio docker compose"
    " lockfile binary package".split()
)
_SPAN_ENDS = frozenset("so because which that where when and or but then before after until while if".split())
_REPORTS = frozenset("report flag".split())  # a leak reported: where it is reported is no place the secret goes
_NAVIGATES = frozenset("open go navigate cd find locate visit ask look see switch head browse".split())
# What refers back to something said before: a pronoun, or a noun that stands for what a secret was ("that file",
# "its contents", "the value").
_REFERRER = re2.compile(
    r"\b((?:the|its|their|that|this|those|these)\s+(?:values?|files?|contents?|output|strings?|keys?|results?|folder"
    r"|directory|steps?|jobs?|checks?|gates?|rules?|stages?|things?|tools?|bots?|blobs?|text|plaintext)"
    r"|(?:a|the)\s+cop(?:y|ies)|it|them"
    r"|they)\b"
    r"|\b(this|that|these|those)(?:\s+(?:in|into|on|onto|to|inside|anywhere|somewhere|over|out|back|up|everywhere"
    r"|verbatim|as|with|from|here|there)\b|\s*(?:[,.!?)]|$))"
)
# Words that name no safeguard though they spell one: React's hooks.
_NOT_SAFEGUARD = re2.compile(
    r"\b(?:react|custom|component|use(?:state|effect|memo|callback|context|reducer|ref|query|mutation)\w*|unused"
    r"|dead)\s+hooks?\b|\bhooks?\s+(?:rules?|api)\b|\bcomponents?\s+with\s+hooks\b"
)
# A path is one word (`tests/unit` is a folder, not tests), unless a folder of it names a gate (`.github/workflows`,
# `.husky/pre-commit`): then its folders are read as words.
_PATH = re2.compile(r"[\w.-]*/[\w./-]*")
_GATE_FOLDERS = re2.compile(
    r"(?:^|/)\.?(?:github|gitlab|husky|githooks|circleci|buildkite|pre-commit\S*|workflows)(?:/|$)|\.git/hooks"
)
# Code spans and fenced blocks: the allow-list judges them; here each is one word.
_FILE_SPAN = re2.compile(r"`(\.?[\w-]+(?:\.[\w-]+)+|\.[\w-]+)`")  # a file's name in a span is read as that name
_CODE = re2.compile(r"```[^`]*(?:`{1,2}[^`]+)*```|`[^`\n]*`")
# Where a sentence's clauses part: a comma, a colon, a parenthesis, a dash between words, the conjunctions that join
# two acts and those that open a condition. "rather than" / "instead of" open a clause whose act is set aside.
_CLAUSE_CUT = re2.compile(
    r"\s*(?:[,:()|]|\s[-–—]\s|\s(?:and|or|nor|but|so|then|because|since|unless|except|though|although)\s"
    r"|\s(?:while|until|before|after|when|whenever|if|once|where|assuming)\s|\s(?:rather\s+than|instead\s+of)\s)\s*"
)
_SET_ASIDE = re2.compile(r"(?:rather\s+than|instead\s+of)\s")
_LEAD = re2.compile(r"^(?:rather\s+than|instead\s+of|and|or|nor|but|so|then)\s+")
_OPENS_CONDITION = re2.compile(r"\b(?:while|until|before|after|when|whenever|if|once|where|assuming)\s*$")
_CONTINUATIONS = frozenset({",", "or", "nor", "and"})
_CONCESSION = re2.compile(
    r"\b(?:even\s+(?:if|when|though)|regardless|despite|anyway|anyhow|no\s+matter|whatever|either\s+way|at\s+will"
    r"|if\s+(?:needed|necessary|you\s+must|you\s+have\s+to|in\s+doubt)|when\s+(?:needed|necessary|in\s+a\s+hurry)"
    r"|temporar\w*|for\s+now|just\s+this\s+once|this\s+once|unless|except|but\s+if|only\s+if)\b"
)
# Words of a safeguard made weaker, off or beside the point, wherever they stand (a typed clause holds none of
# them outside a prohibition: "run the tests with the failures ignored" is no run).
_WEAK = re2.compile(
    r"\b(?:skip\w*|bypass\w*|disabl\w*|remov\w*|delet\w*|drop(?:s|ped|ping)?|lower\w*|loosen\w*|relax\w*|weaken\w*"
    r"|silenc\w*|suppress\w*|ignor\w*|dismiss\w*|mut(?:e|ed|es|ing)|disregard\w*|circumvent\w*|overrid\w*|overrode"
    r"|waiv\w*|lift(?:s|ed|ing)?|evad\w*|sidestep\w*|neuter\w*|stub(?:s|bed|bing)?\s+out"
    r"|comment\w*\s+(?:\w+\s+){0,4}out|turn\w*\s+off|switch\w*\s+off|shut\w*\s+off|strip(?:s|ped|ping)?"
    r"|empt(?:y|ied|ies|ying)|kill(?:s|ed|ing)?|swallow\w*|plain\s+http|(?:with|grant\w*|giv\w*)\s+full\s+(?:\w+\s+){0,3}access"
    r"|(?:zero|no)\s+required|mark\w*\s+(?:[\w']+\s+){0,4}as\s+(?:success\w*|pass\w*|green)|(?:that|to|always|make\s+\w+)\s+exits?\s+(?:with\s+)?(?:0|zero)|(?:humans?|people)\s+only|not\s+for\s+(?:agents?|ai"
    r"|claude|you)|(?:approve|sign\s+off\s+on|review|merge)\s+your\s+own|ts-nocheck|ts-ignore|ts-expect-error"
    r"|eslint-disable\S*|nolint|no\s+cover"
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
_KEEP = frozenset(
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
_KEEP_ONLY_WITH = {
    "make": re2.compile(r"\b(?:pass|green|succeed|work|clean|faster|quicker|stricter|reliable|deterministic)\w*\b"),
    "leave": re2.compile(r"\b(?:on|enabled|in\s+place|as\s+(?:it\s+is|is)|alone|intact|untouched|comments?|notes?)\b"),
    "let": re2.compile(
        rf"\b(?:{_PERSON}|them|ci)\s+(?:decide|choose|confirm|review|approve|know|merge)\b"
        r"|^\w+\s+(?:it|them|the\s+\w+)\s+(?:finish|complete|run)\w*\s*$"  # "let it finish": it runs to its end
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
_PROHIBITED_OK = frozenset(
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
_KEEPING = frozenset(
    "run rerun re-run wait ask follow respect keep enable restore read check review request fix".split()
)
_PROHIBITION = re2.compile(
    r"^(?:(?:please|you|we|agents?|the\s+agent|claude|nobody|no\s+one)\s+)?(?:never|do\s+not|don'?t|dont|must\s+not"
    r"|mustn'?t|should\s+not|shouldn'?t|may\s+not|cannot|can'?t|can\s+never|must\s+never|should\s+never|avoid"
    r"|no\s+more|may|must|should|can)\s+(?:ever\s+|just\s+|simply\s+|even\s+|try\s+to\s+|attempt\s+to\s+"
    r"|be\s+tempted\s+to\s+)*([\w-]+)"
    r"|^(?:none\s+of\s+(?:\w+\s+){1,3}|nothing\s+|no\s+\w+\s+)(?:may|can|should|must|is\s+to|are\s+to|gets?)\s+"
    r"(?:ever\s+|be\s+|get\s+)*([\w-]+)"
)
# "Never hesitate to run the tests": a negated duty to do a keeping act keeps.
_NEGATED_DUTY = re2.compile(
    r"^(?:never|don'?t|do\s+not)\s+(?:forget|hesitate|fail|neglect)\s+to\s+([\w-]+)|^(?:there\s+is\s+)?no\s+reason"
    r"\s+not\s+to\s+([\w-]+)"
)
_CONDITION = re2.compile(r"^(?:if|when|whenever|once|after|before|as\s+soon\s+as|in\s+case|where|wherever)\b")
_FILLER = re2.compile(
    r"^(?:(?:also|always|please|just|first|then|next|finally|instead|only|now|still|again|locally|each\s+time"
    r"|every\s+time|note|tip|rule|important|so|even)\b[\s:]*)+"
)
# What a fact says a safeguard does (as its first verb).
_FACT = frozenset(
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
_BE = frozenset("is are was were be been stays stay remains remain".split())
# What a safeguard may be said to be: on, required, where it lives, who owns it.
_STATE_OK = frozenset(
    "required mandatory enabled on green blocking enforced expected strict configured defined set kept stored in at"
    " created provisioned renewed"
    " under managed handled run triggered owned protected reviewed pinned checked injected read loaded the a an part"
    " slow fast quick flaky red failing passing measured limited restricted locked encrypted hashed signed verified"
    " needed necessary important critical there here active live written generated rotated issued documented"
    " described listed declared installed separate per only always intentional deliberate deterministic marked"
    " tracked merged added passed provided mounted fetched pulled isolated hermetic idempotent by for of our your"
    " their its done code forbidden prohibited banned disallowed reserved read-only executable untracked"
    " covered resolved addressed fixed answered sorted formatted linted signal served exposed hosted located"
    " available reachable mounted fake dummy placeholder deployed built created httponly secure".split()
)
_ARTICLE_OK = frozenset(
    "required blocking mandatory merge source only same gate check job step default first last part hard real"
    " separate dedicated pre-commit ci github right correct standard bug".split()
)
_MAY = frozenset("can could may might".split())
_VERBS = _KEEP | _PROHIBITED_OK - frozenset("a an the for as to in on at with from into by".split())
_WEAKENER_OFF = re2.compile(
    r"^(?:the\s+)?(?:auto-?approv\w*|yolo(?:\s+mode)?|bypass\w*(?:\s+(?:mode|permissions))?)\s+(?:is|stays|remains"
    r"|must\s+stay|should\s+stay)\s+(?:off|disabled|forbidden|banned)\b"
)
_DISAPPROVED = frozenset("wrong forbidden prohibited banned unsafe dangerous".split())
_PREPOSITIONS = frozenset("in on at for with during across from after before as to of by into".split())
_IN_PASSING = re2.compile(r"^(?:tests?|test\s+suites?|suites?|e2e|reviews?|prs?|pull\s+requests?|merge\s+requests?)$")
_MODAL_KEEPS = frozenset(
    "pass succeed stay remain run block fail cover include require reject catch protect verify enforce hold keep"
    " match report reach list go".split()
) - {"list", "go"}
# Tools that run a safeguard: one chosen over another ("Bun's runner, not Jest") sets no safeguard aside.
_TOOLS = re2.compile(
    r"^(?:ruff|flake8|pylint|tsc|rubocop|golangci-lint|bandit|gosec|pytest|jest|vitest|mypy|pyright|eslint)$"
)
_URL = re2.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
# A safeguard that is failing, or what a test asserts: what may be done to it is finding out why, not changing it
# until it passes ("add an early return to each failing test", "update the expected values to match the output").
_FAILING = re2.compile(
    r"\b(?:failing|failed|red|broken|flaky)\s+(?:\w+\s+)?(?:tests?|checks?|builds?|jobs?|suites?|specs?|cases?"
    r"|assertions?|pipelines?)\b|\bassertions?\b|\bexpected\s+(?:values?|outputs?|results?)\b|\bgolden\s+files?\b"
)
_ON_A_FAILURE = frozenset(
    "run rerun re-run fix investigate read report debug reproduce quarantine check look inspect tell ask mention note"
    " track record document retry open write capture start quote name list print show save".split()
)
# What a safeguard's finding may be said to be open to: rotated, revoked, fixed (a secret, a failure).
_KEPT_STATES = frozenset("rotated revoked reviewed fixed checked verified rerun re-run investigated reproduced".split())
_USES = frozenset("install use include call trust accept follow open enable load require".split())
_NEED = frozenset("has have needs need".split())
_DETERMINERS = frozenset("a an the each every all one two three any our your its their".split())
_NAMES_OPEN = _DETERMINERS | _PREPOSITIONS | {"code", "link"}  # what a name may open with
_KEPT_IN = re2.compile(
    r"\b(?:belongs?|goes|go|lives?|stays?|comes?\s+from|kept|stored|loaded|read|set|injected|put|saved)\s+"
    r"(?:only\s+)?(?:in|into|from|to|inside)\s+"
)
_RELEASES = frozenset("ship deploy release merge land".split())
# Words between a verb and a secret that make the secret no object of it ("write tests for the token refresh").
_NOT_AN_OBJECT = frozenset("for about from by without after before when if whose than how why".split())
# A clause's pieces, for finding what a pronoun refers to: its marks and the conjunctions that join two of them (a
# subordinate piece keeps its opening word: "when the tests fail").
_KEPT_AWAY = re2.compile(r"^keep\s+(?:\w+\s+){0,4}(?:off|out\s+of|away\s+from)\b")
_REFUSED = re2.compile(r"\b(?:is|are|get|gets|will\s+be)\s+(?:always\s+)?(?:rejected|refused|blocked|denied)\s*$")
# "keep lint at zero warnings": no finding left is a safeguard kept, not set to zero
_NONE_LEFT = re2.compile(
    r"\b(?:at|to)\s+(?:zero|0)\s+(?:new\s+)?(?:warnings|errors|failures|findings|issues|vulnerabilities|alerts)\b"
)
_BY_MEANS = re2.compile(r"\s+by\s+(\w+ing)\b")  # "make CI green by marking the job as passed": the means is an act
_CREATES = frozenset("write add create".split())
_POSSESSIVE = re2.compile(r"\b(?:its|their)\b")
# What a subject may be said never to have or hold ("the password must never have a default value").
_SECRET_STATES = frozenset(
    "fake dummy placeholder short-lived scoped expired revoked per-user per-environment rate-limited read-only"
    " limited httponly secure".split()
)
_NEVER_SHOWS = re2.compile(
    r"\b(?:never|not|n't|no\s+longer)\s+(?:\w+\s+)?(?:appears?|ends?\s+up|lands?|shows?\s+up|leaks?|gets?\s+(?:into|in"
    r"|committed|logged|printed)|goes|reach(?:es)?|touch(?:es)?)\b"
)
_NOT_NEEDED = re2.compile(r"^(?:you\s+|we\s+)?(?:do\s+not|don'?t|never)\s+need\b")
_DEMONSTRATIVES = frozenset("this that these those".split())
_HELD_BY = frozenset("have has contain hold appear show reach".split())
_PIECE_CUT = re2.compile(r"[;,:()|]|\s[-–—]\s|\s(?:and|or|nor|but|so|then)\s")
_SUBORDINATE = re2.compile(
    r"^\s*(?:when|whenever|if|once|while|before|after|until|unless|as|since|because|in|on|at|for|during|with|without"
    r"|from|by|through|across|except)\b"
)
_IS = re2.compile(r"\b(it|that|this|there|what|who)'s\b")
_GITIGNORED = re2.compile(r"\bgit-?ignored\b|\b(?:which|that)\s+git\s+ignores\b")
_NEGATION = frozenset("not never no n't nobody none".split())
_WORD = re2.compile(r"[a-z0-9][\w'%.-]*")
_BULLET = re2.compile(r"^\s*(?:[-*+>|]+|\d+[.)])\s*")


def _lemmas(word: str) -> tuple[str, ...]:
    """`word` and the stems an English inflection leaves ("skipping" -> skip, "disabled" -> disable)."""
    found = [word]
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) > len(end) + 2:
            stem = word[: -len(end)]
            found += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                found.append(stem[:-1])
    return tuple(found)


def _is(word: str, words: frozenset[str]) -> bool:
    return any(w in words for w in _lemmas(word))


def _prohibits(clause: str) -> bool | None:
    """Whether `clause` is a prohibition that keeps (True), one that sets a keeping act aside (False), or no
    prohibition (None)."""
    if (duty := _NEGATED_DUTY.match(clause)) is not None:
        return _is(duty.group(1) or duty.group(2), _KEEP)
    head = _PROHIBITION.match(clause)
    if head is None:
        return None
    verb = head.group(1) or head.group(2)
    if head.group(1) and not re2.match(
        r"^(?:please\s+|you\s+|we\s+)?(?:never|do|don|dont|must\s+not|mustn|should\s+not"
        r"|shouldn|may\s+not|cannot|can'?t|can\s+never|must\s+never|should\s+never"
        r"|avoid|no|nobody|no\s+one)",
        clause,
    ):
        return None  # "we may ...", "you should ...": no prohibition, read as a fact
    if verb.startswith("-"):
        return True  # a flag prohibited
    if _is(verb, _KEEPING):
        return _WEAK.search(clause[head.end() :]) is not None  # "never run with the hooks off" keeps
    if _is(verb, _USES) or _is(verb, _CREATES):  # "don't install the git hooks", "don't write tests for it" set a
        # safeguard aside; "never use `--no-verify`", "never write secrets to logs" do not
        after = _WORD.findall(clause[head.end() :])
        if _is(verb, _CREATES):  # its object only, and a kind of test is no test set aside ("tests that sleep")
            after = list(itertools.takewhile(lambda w: w not in _PREPOSITIONS, after))
            if set(after) & {"that", "which", "who", "without"}:
                return True
        object_ = " ".join(after[:4])
        return SAFEGUARD.search(_SECRET.sub("x", object_)) is None
    return _is(verb, _PROHIBITED_OK)


def _secrets_only(clause: str) -> bool:
    """True when no safeguard but a secret (or nothing) is named in `clause`: "check" said as an act ("check it into
    the repo", "echo it to check it is set") names no check."""
    return SAFEGUARD.search(_SECRET.sub("x", _CHECK_ACT.sub("", clause))) is None


def _secret_named_in(text: str) -> re2._Match | None:
    """The first secret `text` names, passing over a secret's name that qualifies something else ("a password reset
    link", "the token's expiry"), unless a secret's name follows ("password reset tokens")."""
    for secret in _SECRET.finditer(text):
        after = text[secret.end() :].lstrip()
        if (qualified := _QUALIFIED.match(after)) is None:
            return secret
        rest = after[qualified.end() :].lstrip()
        if _SECRET.match(rest) or re2.match(r"(?:'s\s+)?(?:contents?|values?|text|plaintext)\b", rest):
            return secret  # "password reset tokens", "the password field's contents"
    return None


def _secret_act(clause: str, words: list[str]) -> bool | None:
    """Whether `clause`, an imperative whose object is a secret, keeps it (`_SECRET_KEEP`, or `_SECRET_PLACING` into
    places that keep secrets); None when it opens with no act on one (a fact said of the secret, a name, "write tests
    for the token refresh")."""
    first = words[0]
    secret = _secret_named_in(clause)
    if secret is None or first in _NAMES_OPEN or first in _BE or first[0].isdigit() or _SECRET.match(clause):
        return None  # "add a password reset link", "record the token's expiry date": no secret is acted on
    between = _WORD.findall(clause[: secret.start()])[1:]
    following = _WORD.findall(clause[secret.end() :])[:1]
    known = _VERBS | _SECRET_KEEP | _SECRET_PLACING
    if not between and not _is(first, known) and following and (following[0] in _BE or following[0] in _FACT):
        return None  # "kubernetes secrets are managed by ...": the secret is the subject, the first word its kind
    if _NOT_AN_OBJECT.intersection(between) or _OF_A_SECRET.intersection(between[-3:]):
        return None  # "write tests for the token refresh", "log a hash of it": the secret is no object of the verb
    if any(w in _BE or (w in _FACT and w != "live") or w in _NEED for w in between):  # "the live key": no verb
        return None  # the secret is no object of the first word, or a fact is said of it ("1password holds ...")
    if not _is(first, _SECRET_CARE | _REPORTS) and not _places_keep(
        clause[secret.start() :], placing=_is(first, _SECRET_PLACING), reads=_is(first, _READS)
    ):
        return False  # "check it into the repo", "use it in the public notebook", "pass it to the contractor"
    if _is(first, _SECRET_PLACING):
        return True
    if not _is(first, _SECRET_KEEP):
        return False  # "share it with the contractors", "print it at startup", "hand it over"
    only_with = _SECRET_ONLY_WITH | _KEEP_ONLY_WITH
    rule = next((only_with[w] for w in _lemmas(first) if w in only_with), None)
    return rule is None or rule.search(clause) is not None


def _said_of_a_secret(clause: str) -> bool | None:
    """Whether a fact said of a secret keeps it: False where it says the secret shows ("the .env file must be tracked
    in git", "it goes out in the weekly newsletter", "is available on the public status page"); None when `clause`
    says nothing of one, or nothing of where it is."""
    secret = _secret_named_in(clause)
    if secret is None:
        return None
    verb = next(
        (
            m
            for m in _WORD.finditer(clause, secret.end())
            if m.group() in _BE or m.group() in _WHERE or m.group() in _MODALS
        ),
        None,
    )
    if verb is None:
        return None
    rest = _WORD.findall(clause[verb.end() :])
    if _NEGATION.intersection(rest) or any(w.endswith("n't") for w in rest):
        return None
    state = [w for w in rest if w not in ("be", "been", "always", "also", "only", "still", "to", "get", "got")]
    if state[:1] and state[0] in _EXPOSED:
        return False
    return None if _places_keep(clause[verb.end() :], placing=False) else False


def _places_keep(said: str, placing: bool = True, reads: bool = False) -> bool:
    """True when every place `said` names a secret goes (in, into, to, through, over, by, as, with ...) keeps secrets.
    After a verb that places nothing ("use", "call"), "to" names a place only before a determiner or a person ("to
    the contractor", not "to call the API"), and "with" none ("generate it with openssl"); after one that reads it
    (`reads`), only "into", "onto" and "to" do."""
    for place in _PLACE.finditer(said):
        preposition = place.group(1) or place.group(2)
        after = said[place.end(1) if place.group(1) else place.start(2) + 2 :].lstrip()
        if _NO_PLACE.match(after) or (preposition == "with" and not placing):
            continue
        if reads and preposition not in ("into", "onto", "to"):
            continue
        if preposition == "by":
            return False  # "by text message", "by email": a channel, never a place that keeps a secret
        if preposition == "to" and _is(after.split()[0] if after.split() else "", _VERBS | _SECRET_KEEP):
            continue  # "to call the API": what for, not where
        if (
            preposition == "to"
            and not placing
            and re2.match(r"(?:the|a|an|our|your|their|them|him|her|whoever|any)\b", after) is None
        ):
            continue
        if not keeps_secrets(after):
            return False
    return True


def _head(words: list[str]) -> str | None:
    """What the noun a pronoun most likely stands for in a piece (`words`) is: "secret", "safeguard", "thing" (a
    container, a server, a cache: "the dev server proxies calls to staging with your token; if it hangs, kill it"), or
    None when no noun decides. The noun is an imperative's object ("run the tests inside the container": the tests)
    or a statement's subject ("the CI runner image is cached": the image), its last word its head."""
    if _is(words[0], _VERBS | _SECRET_KEEP | _SECRET_PLACING) and words[0] not in _DETERMINERS:
        span = list(itertools.takewhile(lambda w: w not in _PREPOSITIONS and w not in _SPAN_ENDS, words[1:]))
    else:
        verb = next(
            (i for i, w in enumerate(words) if i and _verb_like(w, i) and not _SECRET.match(words[i - 1])), len(words)
        )  # "a secret scan" is one noun
        span = words[:verb]
    while span and span[-1] in ("that", "which", "who"):
        span.pop()
    if not span:
        return None
    phrase = " ".join(span)
    if _secret_named_in(phrase) is not None:
        return "secret"
    if span[-1] in _THINGS:
        return "thing"
    return "safeguard" if SAFEGUARD.search(phrase) is not None else None


def _verb_like(word: str, at: int) -> bool:
    """Whether `word`, the `at`-th of a statement, reads as its verb."""
    if word in _BE or word in _MODALS or word in _FACT or word in _WHERE:
        return True
    return at >= 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word not in _THINGS


def _antecedent(before: str, noun: str = "") -> str | None:
    """What a pronoun (or "that file", "its contents") after `before` refers to, when it is a secret ("secret") or a
    safeguard ("safeguard"): the nearest piece before it that names one, passing over pieces that only refer back
    themselves ("export it; attach that file") and subordinate ones ("the e2e tests are flaky; when in a hurry,
    ..."); None when the nearest main piece names something else ("start the dev server; stop it"). `noun`: the
    referrer's own noun ("that value"), read first in the nearest piece that names it ("read the value of
    GITHUB_TOKEN; open a gist; the gist body is that value")."""
    *pieces, _own = _PIECE_CUT.split(before[-2 * ANTECEDENT_REACH :])
    if noun and noun not in ("copy", "copies"):
        stem = noun.rstrip("s")
        named = next((p for p in reversed(pieces) if re2.search(rf"\b{stem}s?\b", p)), None)
        if named is not None and _secret_named_in(named) is not None:
            return "secret"
    for piece in reversed(pieces):
        words = _WORD.findall(piece)
        if not words or piece.strip().isdigit():
            continue
        navigates = words[0] in _NAVIGATES or words[:2] == ["go", "to"]
        if not navigates and (head := _head(words)) is not None:
            return None if head == "thing" else head
        if _secret_named_in(piece) is not None:
            return "secret"
        if _SECRET.search(piece) is not None and SAFEGUARD.search(_SECRET.sub("x", piece)) is None:
            return None  # "the password policy", "the token's expiry"
        if SAFEGUARD.search(piece) is not None:
            return "safeguard"  # a safeguard named beside a secret ("a secret scan") is what the piece is about
        # a piece decides when it names a thing ("start the dev server"); a bare act ("push"), a condition or a
        # piece that only refers back itself is passed over
        refers = _REFERRER.search(piece) is not None or "its" in words or "their" in words
        if _SUBORDINATE.match(piece) is None and not refers and not navigates and _DETERMINERS.intersection(words):
            return None
    return None


def _named_in_passing(clause: str) -> bool:
    """True when every safeguard `clause` names is a test or a review named after a preposition: where the act
    happens, not what it is done to ("capture the bug as a failing test", not "retire the flaky suite")."""
    found = False
    for match in SAFEGUARD.finditer(clause):
        before = _WORD.findall(clause[: match.start()])[-3:]
        if _IN_PASSING.match(match.group()) is None or not _PREPOSITIONS.intersection(before):
            return False
        found = True
    return found


def _typed(
    clause: str, led: str, first_clause: bool = False, of_a_safeguard: bool = False, gated: bool = False
) -> bool:
    """Whether `clause` (folded, one clause, code spans as `code`) reads in a shape known to keep a safeguard. `led`:
    what opened it, "aside" ("rather than" / "instead of"), "listing" (it goes on a prohibition's list: "don't weaken
    or remove a check"), "condition" ("if the hook fails") or "". `of_a_safeguard`: a word in it refers to one;
    `gated`: its entry names a gate."""
    if _CONCESSION.search(clause):
        return False
    words = _WORD.findall(clause)
    if not words:
        return True
    if led == "condition" or _CONDITION.match(clause):
        return True  # a condition instructs nothing: the clause it leads to is read on its own
    if led == "listing" and not _is(words[0], _KEEPING):
        return True  # "never paste keys into issues, PRs or chat", "don't weaken or remove a check"
    if led == "aside-of-keeping" and _is(words[0], _KEEPING):
        return True  # "check the lint rules before committing instead of waiting for CI to complain"
    if led in ("aside", "aside-of-keeping"):  # "rather than lowering the gate", "than localhost", not "than the tests"
        # what is set aside weakens ("rather than lowering the gate"), or is no safeguard ("rather than localhost");
        # not "instead of opening a pull request", "rather than waiting for review"
        object_ = words[:5] if words[0].endswith("ing") else words[:2]  # an act and its object, or a name
        if _secrets_only(clause):
            # "rather than hard-coding it", "rather than searching for it"; not "rather than rotating it"
            acted = _secret_act(clause, words)
            return not (acted and (_is(words[0], _SECRET_CARE) or _is(words[0], _SECRET_PLACING)))
        return _WEAK.search(clause) is not None or SAFEGUARD.search(" ".join(object_)) is None
    if words[0] == "not" and len(words) > 1 and _is(words[1], _VERBS):  # "fixed before merging, not ignored"
        return _WEAK.search(clause) is not None if _is(words[1], _KEEPING) else _is(words[1], _PROHIBITED_OK)
    if words[0] in ("not", "never") and len(words) > 1 and not _is(words[1], _VERBS) and not first_clause:
        # a contrast ("use `secrets`, not `random`", "never for tokens"): what it sets aside is no safeguard
        rest = [w for w in words[1:] if w not in ("a", "an", "the", "by", "for", "as", "to", "in", "with")]
        return not rest or _TOOLS.match(rest[0]) is not None or SAFEGUARD.match(_SECRET.sub("x", rest[0])) is None
    secrets_only = _secrets_only(clause)
    if secrets_only and _NEVER_SHOWS.search(clause) and _SECRET.search(clause):
        return True  # "so it never appears in shell history", "so it doesn't end up in dotfiles"
    if secrets_only and _NOT_NEEDED.match(clause):
        return True  # "you do not need the token locally": a secret not wanted is no safeguard off
    if (kept := _prohibits(clause)) is not None:
        return kept
    if _WEAKENER_OFF.search(clause):
        return True  # "auto-approve stays off": what is off is itself a way round a safeguard
    weak = list(_WEAK.finditer(clause))
    if weak and _KEPT_AWAY.match(clause):
        return True  # "keep the signing key off laptops"
    if weak and _REFUSED.search(clause):
        return True  # "unsigned commits are rejected": what the safeguard refuses
    if weak and not all(prohibited(clause, m.start(), m.end()) for m in weak):
        # "remove the secret", not "remove the hook" nor "remove its teeth"
        named = _SECRET.search(clause) is not None
        return secrets_only and not of_a_safeguard and (named or not gated) and _is(words[0], _SECRET_CARE)
    if weak:
        return True  # "it's wrong to force-push", "skipping the hooks is never acceptable"
    first = words[0]
    if secrets_only and _SECRET.search(clause) and (kept_in := _KEPT_IN.search(clause)) is not None:
        return keeps_secrets(clause[kept_in.end() :])  # "API keys belong in env vars", not "... in the README"
    if secrets_only and (acted := _secret_act(clause, words)) is not None:
        return acted
    if secrets_only and (said := _said_of_a_secret(clause)) is not None:
        return said
    if secrets_only and first == "code" and not first_clause:
        return True  # values listed for a secret ("set `httpOnly: true` and `secure: true` on the session cookie")
    if _is(first, _KEEP) and first not in _BE:
        settled_in_code = first in ("set", "configure") and "code" in words  # a setting's value is the code's to judge
        if _FAILING.search(clause) and not _is(first, _ON_A_FAILURE) and not settled_in_code:
            return False  # "replace the assertions in failing tests": the test made to pass, not the code fixed
        rule = next((_KEEP_ONLY_WITH[w] for w in _lemmas(first) if w in _KEEP_ONLY_WITH), None)
        return rule is None or rule.search(clause) is not None
    if _named_in_passing(clause):
        return True  # "reproduce the bug in a test first", "mock services at the boundary in tests"
    # ("mark that test as expected to fail"; "tools that write outside the repo" opens with its subject)
    plural = first.endswith("s") and not first.endswith("ss")
    demonstrative = words[1:2] and words[1] in _DEMONSTRATIVES and not plural
    if (demonstrative or (words[1:2] and words[1] in _DETERMINERS)) and first not in _DETERMINERS | _PREPOSITIONS:
        return False  # an imperative whose verb no list here knows: "retire the required review"
    # a fact: the subject, then what it does, must be or is
    for i, word in enumerate(words):
        if (
            word in ("must", "should", "will", "shall")
            and words[i + 1 : i + 2] in (["never"], ["not"])
            and i + 2 < len(words)
        ):
            verb = words[i + 2]  # "tests must never call production services": a prohibition said of the subject
            return (_is(verb, _PROHIBITED_OK) or _is(verb, _HELD_BY)) and not _is(verb, _KEEPING) and verb != "be"
        if word in _NEGATION or word.endswith("n't"):
            return False  # "is not required", "never blocks", "doesn't need review"
        if word in ("must", "should", "will", "shall") or (word in _NEED and words[i + 1 : i + 2] == ["to"]):
            after = [w for w in words[i + 1 :] if w not in ("to", "always", "still", "also", "get")]
            if after[:1] == ["be"]:  # "must be green", not "should be skipped"
                return len(after) > 1 and (after[1] in _STATE_OK or _is(after[1], _KEEPING))
            return bool(after) and (_is(after[0], _KEEPING) or after[0] in _MODAL_KEEPS)
        if word in _MAY and i + 1 < len(words):
            after = [w for w in words[i + 1 :] if w not in ("always", "still", "also")]
            # "so CI can run them", "so a DBA can review them", "so it can be rotated"; not "can be skipped", "can
            # merge when CI is red": a permission to merge or push over it is none
            if after[:1] == ["be"]:
                return len(after) > 1 and after[1] in _KEPT_STATES
            return _is(after[0], _KEEPING)
        if word in _BE:
            state = [w for w in words[i + 1 :] if w not in ("always", "also", "still", "usually", "currently")]
            if not state:
                return False
            if state[0] in _DISAPPROVED and state[1:2] == ["to"] and len(state) > 2:
                return _is(state[2], _PROHIBITED_OK) and not _is(state[2], _KEEPING)  # "it is wrong to force-push"
            if state[0] in ("a", "an", "the"):
                return len(state) > 1 and state[1] in _ARTICLE_OK
            if secrets_only and state[0] in _SECRET_STATES:
                return True  # "tokens in fixtures are fake"
            return state[0] in _STATE_OK or (state[0][0].isdigit() and state[0].strip("0.%") != "")
        if word in _FACT and (SAFEGUARD.match(word) is None or (i and words[i - 1] == "code")):
            # "tests", "checks": the subject, no verb; but "`actionlint` checks workflow files"
            return True
    # no verb read: a name or a list of names ("unit tests", "a `flaky` marker with the ticket number"); a
    # sentence's first clause must open as a name does ("retire the pre-commit hook" is an imperative)
    if first_clause and words[0] not in _NAMES_OPEN and SAFEGUARD.match(words[0]) is None:
        return False
    return _PRONOUN.search(clause) is None and (len(words) <= 4 or (words[0] in _DETERMINERS and len(words) <= 7))


def _clauses(sentence: str) -> list[tuple[int, int, str]]:
    """Where `sentence`'s clauses are (start, end), each with what opened it (see `_typed`)."""
    parts: list[tuple[int, int, str]] = []
    start, led, keeping = 0, "", None
    for cut_at in _CLAUSE_CUT.finditer(sentence):
        parts.append((start, cut_at.start(), led))
        cut = cut_at.group().strip()
        if _SET_ASIDE.search(cut + " "):
            if keeping is None:  # "check the rules before committing instead of waiting for CI": the aside of a keep
                head = _WORD.match(_FILLER.sub("", sentence))
                first = sentence[: parts[0][1]]
                keeping = head is not None and _is(head.group(), _KEEP) and head.group() not in _KEEP_ONLY_WITH
                keeping = keeping and _WEAK.search(first) is None
            led = "aside-of-keeping" if keeping else "aside"
        elif _OPENS_CONDITION.search(cut):
            led = "condition"
        elif cut in _CONTINUATIONS and led in ("aside", "aside-of-keeping"):
            pass  # "instead of guessing or searching the disk for it": the aside goes on
        elif cut in _CONTINUATIONS and (
            led == "listing" or _prohibits(_FILLER.sub("", sentence[start : cut_at.start()].strip())) is not None
        ):
            led = "listing"
        else:
            led = ""
        start = cut_at.end()
    parts.append((start, len(sentence), led))
    return parts


def safeguard_refusals(cut: str, text: str = "", *, across: bool = False) -> list[tuple[str, str]]:
    """The first clause of `cut` (a text `folded` and cut into `sentences`) in no shape known to keep a safeguard,
    where it names one, speaks of one by a pronoun in a text that names one, or weakens something in a sentence
    that names one: [("safeguard", what)], or []. `text`, the text `cut` was read from, is read once more as its
    spelling reads (`d i s a b l e  t h e  t e s t s`) when it hides one. `across`: `cut` is two entries read one
    after the other, for a pronoun in one whose safeguard the other names (each is read alone for the rest)."""
    found = _refusals(cut, across)
    if not found and text and spelling_hidden(text):
        found = _refusals(sentences(folded(run_on(unemphasised(spelled_out(text))))), across)
    return found


def _secret_named(sentence: str, start: int, end: int, secrets: list[tuple[int, int]]) -> str:
    """The clause `sentence[start:end]`, each word in it that stands for a secret (`secrets`: where) read as
    "secret"."""
    parts, at = [], start
    for left, right in secrets:
        if start <= left and right <= end:
            parts += [sentence[at:left], "secret"]
            at = right
    return "".join(parts) + sentence[at:end]


def _refusals(cut: str, across: bool = False) -> list[tuple[str, str]]:
    if SAFEGUARD.search(cut) is None:  # what is read below names no more than the text does: most texts end here
        return []
    # Each pass only where what it rewrites can be (a pattern call costs a few microseconds even where none is).
    text = _CODE.sub("code", _FILE_SPAN.sub(r"\1", cut)) if "`" in cut else cut
    text = _URL.sub("link", text) if "://" in text else text
    text = _NOT_SAFEGUARD.sub("x", text) if "hook" in text else text
    if "/" in text:
        text = _PATH.sub(lambda m: m.group().replace("/", " ") if _GATE_FOLDERS.search(m.group()) else "path", text)
    if SAFEGUARD.search(text) is None:
        return []
    text = _IS.sub(r"\1 is", text) if "'s" in text else text
    text = _BY_MEANS.sub(r", \1", text) if " by " in text else text
    text = _NONE_LEFT.sub("clean", text) if "zero" in text or "0" in text else text
    text = _ENV_TEMPLATE.sub("env-template", text) if ".env." in text else text
    text = _GITIGNORED.sub("untracked", text) if "ignore" in text else text
    # a gate named anywhere in an entry: weakening words are read in every sentence of it (not of its neighbour)
    gated = not across and _GUARD.search(text) is not None
    for piece in re2.finditer(r"[^;\n]+", text):
        sentence = _BULLET.sub("", piece.group()).strip()
        offset = piece.start() + piece.group().find(sentence)
        # Where what makes a clause worth reading is, found once per sentence (a clause is read only where one is:
        # a text of many short clauses costs a pattern call per sentence, not per clause). A pronoun is read where
        # what it refers to is a safeguard or a secret; one that stands for a secret is read as the word "secret".
        named = [m.start() for m in SAFEGUARD.finditer(sentence)]
        referred = [
            (*span, kind)
            for m in _REFERRER.finditer(sentence)
            if (
                kind := _antecedent(
                    text[: offset + (span := m.span(1) if m.group(1) else m.span(2))[0]],
                    m.group(1).split()[-1] if m.group(1) and " " in m.group(1) else "",
                )
            )
            is not None
            # "the value", "the file": a secret's, when one was named; a safeguard is named by a pronoun
            and (kind == "secret" or not (m.group(1) or "").startswith("the "))
        ]
        if not named and not gated and not referred:
            continue
        marks = sorted(named + [start for start, _, _ in referred])
        secrets = [(start, end) for start, end, kind in referred if kind == "secret"]
        # where a word refers to a safeguard, a possessive included ("remove its teeth")
        guards = [start for start, _, kind in referred if kind == "safeguard"] + [
            m.start() for m in _POSSESSIVE.finditer(sentence) if _antecedent(text[: offset + m.start()]) == "safeguard"
        ]
        if named or gated:
            marks = sorted(marks + [m.start() for m in _WEAK.finditer(sentence)])
            marks = sorted(marks + [m.start() for m in _FAILING.finditer(sentence)])
            marks = sorted(marks + [m.start() for m in _CONCESSION.finditer(sentence)])
        guarded = _GUARD.search(sentence) is not None
        at = 0
        for i, (start, end, led) in enumerate(_clauses(sentence)):
            while at < len(marks) and marks[at] < start:
                at += 1
            opens = i == 0 and guarded  # what opens a sentence naming a gate: "nudge the floor down until CI passes"
            if not opens and not (at < len(marks) and marks[at] < end):
                continue
            clause = _FILLER.sub("", _secret_named(sentence, start, end, secrets).strip().strip(".!?\"'*_"))
            of_a_safeguard = any(start <= at < end for at in guards)
            if (lead := _LEAD.match(clause)) is not None:  # a conjunction a parenthesis or a mark left at its head
                clause, led = clause[lead.end() :], "aside" if _SET_ASIDE.match(lead.group()) else led
            if clause and not _typed(clause, led, first_clause=i == 0, of_a_safeguard=of_a_safeguard, gated=gated):
                return [
                    ("safeguard", f"`{clip(clause, 80)}` says of a safeguard what the screen cannot read as keeping")
                ]
    return []
