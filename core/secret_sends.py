"""A secret sent somewhere in words: named with where it goes ("include the token in the PR description"), written
anywhere but a place that keeps secrets, sent in the passive or by a pronoun whose antecedent is one, committed;
and a credential store named (`~/.ssh`, `.netrc`). Pure functions.
"""

from __future__ import annotations

import re2

from core.prohibitions import NEGATION, prohibited
from core.reading import ANTECEDENT_REACH

__all__ = [
    "COMMITS_SECRET",
    "CREDENTIAL",
    "DIRECT_SEND",
    "PASSIVE_COMMIT",
    "PASSIVE_SEND",
    "PRONOUN_SEND",
    "SECRET",
    "SEND",
    "SENDS",
    "SHOWN",
    "WHERE",
    "sent",
]

# A secret named with where it is sent: both must be there ("include the token in the PR description").
SECRET = (
    r"(?:token|secret|password|passwd|credential|api[ _-]?key|private[ _-]?key|\.env\b|ssh[ _-]?key|cookie|\.aws"
    r"|tfstate|master\.key|\.pem\b"
    r"|\.ssh|env(?:ironment)? var|\b(?:aws|ssh|api|private|access|secret|signing|deploy|gpg|pgp)\s+keys?\b"
    # what else opens an account: a passphrase, a connection string, recovery codes, a key named by its service or by
    # what it unlocks (`the Stripe live key`, `service account JSON keys`; never a primary, sort or cache key)
    r"|passphrase|connection\s+(?:strings?|urls?)|database[_ ]url|db[_ ]url|\bdsn\b"
    r"|recovery\s+codes?|backup\s+codes?|2fa\s+(?:codes?|seeds?)|otp\s+seeds?"
    r"|\b(?:live|prod|production|service[ -]account|json|master|root|admin|encryption|license|licence|stripe|openai"
    r"|anthropic|github|gitlab|npm|pypi|slack|twilio|sendgrid|mailgun|gcp|azure|firebase)\s+keys?\b)"
)
SEND = (
    r"\b(?:include|paste|post|send|upload|e-?mail|mail|share|attach|leak|copy|print|echo|add|put|dump|report"
    r"|forward|submit|append)\b"
)
# Each the start of a word: `log` is also `logger` and `logfile`, `ticket` `ticketing` (and `logic`, `format`: the
# rule asks a secret and a way to send it too).
WHERE = (
    r"\b(?:issue|pr\b|pull request|description|comment|ticket|bug report|report|chat|slack|summary|gist|paste"
    r"|e-?mail|url|commit message|log|backup|ops|support|channel|webhook|form"
    # a destination named by a link (masked to "(a link)" before the screen reads it) or pointed at ("there")
    r"|(?:link|there|site|server|bucket|endpoint)s?\b"
    # a page people read: a wiki, a shared document, the changelog, a chat message
    r"|(?:page|wiki|notion|confluence|doc|document|changelog|readme|release\s+note|message|thread|post)s?\b)"
)
# Words between: anything but the end of a sentence (`;` marks each end: a dot in `terraform.tfstate` is none).
_GAP = r"[^;]"
SENDS = re2.compile(
    rf"{SEND}{_GAP}{{0,80}}{SECRET}{_GAP}{{0,80}}{WHERE}|{SECRET}{_GAP}{{0,80}}{SEND}{_GAP}{{0,80}}{WHERE}"
)
_SEND_VERB = re2.compile(SEND)
CREDENTIAL = re2.compile(
    r"(?:^|[\s`'\"(/~])\.(?:ssh|aws|gnupg|kube|docker/config)\b|\b(?:remove|delete)\b[^;]{0,25}\.env\b[^;]{0,30}\.gitignore"
    r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|/etc/(?:shadow|sudoers|passwd)\b|\bauthorized_keys\b|\bcredentials\.json\b"
    r"|\bkubeconfig\b|\bgit-credentials\b|\.netrc\b|\.pgpass\b|\.pypirc\b|\.npmrc\b"
)


# A secret named that is sent nowhere, or no secret: the CSRF token a form carries, a password strength meter or a
# cookie consent banner (the word a modifier), leaked tokens reported to security, a destination said not to be one
# ("in the header, not in the URL"). Blanked before `SENDS` reads a sentence.
_NOT_SENT = re2.compile(
    rf"\b(?:csrf|xsrf|anti-?forgery|authenticity)[ _-]?{SECRET}"
    rf"|\b{SECRET}\s+(?:strength|reset|policy|policies|field|input|manager|hash\w*|rules?|requirements?|meter|length"
    r"|complexity|prompt|change|expiry|rotation|consent|banner|validation|label|placeholder|box|scanner|scanning)\b"
    rf"|\breport\w*\s+(?:any\s+|all\s+|the\s+)?(?:leaked|exposed|compromised|stolen)\s+(?:[\w-]+\s+)?{SECRET}\w*"
    r"\s+(?:right\s+away\s+|at\s+once\s+|immediately\s+)?to\s+(?:the\s+|your\s+)?(?:security|secops|infosec|incident)"
    rf"|\b(?:not|never|nor)\s+(?:in|into|to|on|via|through|over|as)\s+(?:the\s+|a\s+|an\s+|any\s+)?(?:[\w-]+\s+)?{WHERE}"
)


def sent(folded: str) -> re2._Match | None:
    """The first phrase of `folded` (cut into `sentences`) that sends a secret somewhere, unless it is prohibited
    ("Never include secrets in log messages") or no secret is sent (`_NOT_SENT`): to a place `WHERE` names, or
    put anywhere but a place that keeps secrets (`DIRECT_SEND`: "write the API key into the wiki page")."""
    said = folded  # as written: a place is read in it (`_NOT_SENT` blanks "secret manager" as no secret sent)
    if _NOT_SENT.search(folded):
        folded = _NOT_SENT.sub(lambda m: " " * len(m.group()), folded)
    for match in SENDS.finditer(folded):
        verb = _SEND_VERB.search(match.group())
        at = match.start() + (verb.start() if verb else 0)
        if prohibited(folded, at, match.end()):
            continue
        return match
    for match in DIRECT_SEND.finditer(folded):
        gap = match.group(1).split()
        if _NOT_AN_OBJECT.isdisjoint(gap) and not keeps_secrets(said[match.end(2) : match.end(2) + 60]):
            if not prohibited(folded, match.start(), match.end()):
                return match
    for match in PASSIVE_SEND.finditer(folded):
        if NEGATION.search(match.group(1)) or keeps_secrets(said[match.end(2) : match.end(2) + 60]):
            continue
        if not prohibited(folded, match.start(), match.end()):
            return match
    for match in PASSIVE_COMMIT.finditer(folded):
        if NEGATION.search(match.group(1)) or _A_CASE.search(folded[max(0, match.start() - 40) : match.start()]):
            continue
        if not _MISTAKE.match(folded, match.end()) and not prohibited(folded, match.start(), match.end()):
            return match
    for match in SHOWN.finditer(folded):
        if not prohibited(folded, match.start(), match.end()):
            return match
    for match in COMMITS_SECRET.finditer(folded):
        if not prohibited(folded, match.start(), match.end()):
            return match
    for match in PRONOUN_SEND.finditer(folded):
        named = folded[max(0, match.start() - ANTECEDENT_REACH) : match.start()]
        if not re2.search(SECRET, named) or keeps_secrets(said[match.end(1) : match.end(1) + 60]):
            continue
        if not prohibited(folded, match.start(), match.end()):
            return match
    return None


# A secret sent in the passive ("the deploy token should be included in the Slack message", "the credentials will be
# written into the wiki"), and sent by a pronoun whose antecedent is one ("the SSH key is in the home folder; attach
# it to the ticket"): to a place that does not keep secrets.
_SENT_VERBS = (
    r"(?:includ|past|post|sent|send|upload|shar|attach|cop|print|echo|add|put|dump|written|writ|record|enter|insert"
    r"|publish|expos|log|commit|mention|list|submitt|forward|e-?mail|mail|quot|note|shown|show|leak|type)\w*"
)
# A secret committed (to the repository, where everyone who clones it reads it): "it's fine to commit the .env file".
# A template of one (`.env.example`) holds no secret.
COMMITS_SECRET = re2.compile(
    r"\bcommit\w*\s+(?:the\s+|your\s+|a\s+|our\s+|this\s+|any\s+)?(?:[\w-]+\s+)?(?:\.env(?:\.local|\.production)?|secrets?"
    r"|credentials?|private\s+keys?|api\s+keys?|tokens?|passwords?|\.pem|id_rsa)(?:\s+files?)?"
    # the secret itself, not a word it modifies ("the secrets baseline")
    r"(?:\s+(?:to|in|into|for|now|anyway|too|as|with|along|so|and|or|if|when|because)\b|\s*[;,:)'\"`]|\s*$)"
)
# A secret committed in the passive ("service account keys are committed alongside the module"), and its value
# shown ("reply with the value of the OpenAI key"): wherever it goes, it leaves the place that keeps it.
PASSIVE_COMMIT = re2.compile(
    rf"{SECRET}\w*([^;]{{0,40}}?\b(?:is|are|be|been|get|gets|got)\s+(?:\w+\s+)?)(?:committed|checked\s+in|pushed)\b"
)
# A passive that says what to do when it happens ("if a secret is committed by mistake, rotate it") asks nothing.
_A_CASE = re2.compile(r"\b(?:if|when|whenever|once|in\s+case|after)\s+(?:[\w'-]+\s+){0,3}$")
_MISTAKE = re2.compile(r"\s+(?:by\s+(?:mistake|accident)|accidentally|unintentionally)\b")
SHOWN = re2.compile(
    r"\b(?:reply|respond|answer|print|echo|output|show|reveal|display|tell|give|read\s+out|paste|share)\w*\s+"
    r"(?:[\w-]+\s+){0,2}?(?:with\s+)?(?:the\s+)?(?:value|contents?|text|plaintext)\s+of\s+(?:the\s+|their\s+|your\s+"
    rf"|its\s+|our\s+)?(?:[\w-]+\s+){{0,2}}?{SECRET}"
)
PASSIVE_SEND = re2.compile(
    rf"{SECRET}\w*([^;]{{0,60}}?\b(?:be|is|are|been|get|gets|got)\s+(?:\w+\s+)?){_SENT_VERBS}\s+"
    r"(in|into|to|on|onto|inside)\s+[`'\"]?[\w.'#-]"
)
PRONOUN_SEND = re2.compile(
    r"\b(?:include|paste|post|send|upload|e-?mail|mail|share|attach|leak|copy|print|echo|add|put|dump|forward|submit"
    r"|quote|write|record|type|mention|note|enter|insert|publish|commit)\s+(?:it|them)\s+(?:verbatim\s+|as\s+is\s+)?"
    r"(in|into|to|on|onto|inside)\s+[`'\"]?[\w.'#-]"
)


# A secret as the object of a verb that writes or sends it, then where to ("quote the deploy token in the ticket",
# "type the admin password into the Notion page"): the place is allowed only when it keeps secrets (`_keeps_secrets`).
DIRECT_SEND = re2.compile(
    r"\b(?:quote|write|record|type|mention|note|enter|insert|publish|expose|log|hardcod|embed|inlin|includ|paste|dm|hand"
    r"|post|send|upload|e-?mail|mail|shar|attach|leak|cop(?:y|ie)|print|echo|add|put|dump|report|forward|submit|jot|append"
    r"|list|commit|drop|stick|plac|sav|stor|keep)\w*\s+((?:[\w'.-]+\s+){0,4}?)"
    rf"{SECRET}\w*(?:\s+(?:values?|itself|themselves|contents?|file|string|verbatim|in\s+full))?\s+"
    r"(in|into|to|on|onto|inside)\s+[`'\"]?[\w.'-]"
)
# Words between the verb and the secret that make the secret no object of it ("write tests for the token refresh").
_NOT_AN_OBJECT = frozenset("for about with from by without after before when if whose than how why".split())
# Places that keep secrets: a vault or a manager, the environment, a header or a prompt; and a place named by the
# kind of secret it keeps ("add the deploy key to the repository's deploy keys", "GitHub secrets").
_SAFE_PLACE = re2.compile(
    r"^(?:secrets?|vault\w*|keychain|keyring|keystore|[1i]password|bitwarden|kms|ssm|sealed|hsm|ssh-agent"
    # a file that is encrypted: `secrets.enc.yaml`, `prod.env.gpg`
    r"|[\w.-]+\.(?:enc|sops|gpg|age|asc|kdbx)(?:\.\w+)*"
    # an ignore file, which keeps what it names out of what is shared
    r"|\.?(?:git|docker|npm|helm|vscode|eslint|prettier)?ignore)$"
)
# Places that keep a secret only as the head of the place's name ("in memory", not "the memory file"; "the
# environment", not "the env.js file"); a header only as the request's ("the Authorization header", not "the
# response headers"); a manager only of secrets ("the password manager", not "the account managers").
_SAFE_HEAD = re2.compile(
    r"^(?:password|parameter|\.?env(?:\.(?:local|dev\w*|prod\w*|staging|test))?|environment|credential\w*|prompt"
    r"|terminal|shell|memory|cookies?|httponly|stdin|masked|agent|constructor|sdk|function|authorization)$"
)
_SAFE_PAIR = re2.compile(
    r"\b(?:(?:authorization|auth|request|bearer|x-api-key)\s+headers?|(?:secrets?|password|credentials?)\s+managers?"
    r"|(?:\.?env|environment)\s+(?:config\w*|variables?|vars?|settings|files?))$"
)


def keeps_secrets(after: str) -> bool:
    """True when the place named at the start of `after` (what follows "in", "into", "to") is one that keeps secrets:
    the head of its first words (up to a preposition) once its determiners are set aside, a safe place or the kind of
    secret it keeps ("the vault under ops/", "the repository's deploy keys"; not "passwords.txt at the root", "the
    shared tokens spreadsheet", "a public secrets repo", "the system prompt of the demo bot")."""
    raw = after.split(";", 1)[0].split()
    words = [w.strip("`'\".,;") or w for w in raw]
    while words and (words[0] in _DETERMINERS or words[0].endswith("'s")):  # "the team's shared ..."
        words.pop(0)
        raw.pop(0)
    phrase: list[str] = []
    for word, written in zip(words[:4], raw, strict=False):
        if word in _PLACE_ENDS or written[0] == "(":  # "in `.env` (git-ignored)": the aside is no part of the name
            break
        phrase.append(word)
        if written[-1] in ",;:)":
            break
    if not phrase or "public" in phrase or any(w.startswith("non-") for w in phrase) or "system" in phrase:
        return False
    if "masked" in words[:8] or re2.search(r"\benv(?:ironment)?\s+var", " ".join(phrase)):
        return True
    named = re2.match(rf"(?:{SECRET})s?$", phrase[-1]) is not None  # "the repository's deploy keys", "CI secrets"
    head = _SAFE_HEAD.match(phrase[-1]) is not None or _SAFE_PAIR.search(" ".join(phrase)) is not None
    return named or head or any(_SAFE_PLACE.match(w) for w in phrase)


_DETERMINERS = frozenset("the a an our your its their this that team shared project".split())
# Where a place's name ends: a preposition or a word that opens a clause.
_PLACE_ENDS = frozenset("at of for so because which that where when with by on in into to from under as and or".split())
