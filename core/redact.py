"""Redaction: nothing that looks like a credential, and no personal data, leaves the machine.

Secrets (`redact`) are replaced by a `[REDACTED:kind]` marker. Personal data (`Redactor`) is normalised:
a home directory becomes `~` (this machine's, and any `/Users/NAME`, `/home/NAME`, `C:\\Users\\NAME` in a
transcript written elsewhere), the user name inside Claude Code's encoded project folders
(`-Users-NAME-...`) becomes `USER`, e-mail addresses and the configured extra patterns (names, hosts) are
masked. Both apply before text reaches a model, a playbook entry, an export or a report.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, NamedTuple

from core.jsonx import locate_json
from core.models import Playbook
from core.operations import live_texts
from core.re2_superset import superset

__all__ = [
    "MIXED_PAIR",
    "MIXED_RUN",
    "PERSONAL_PATTERNS",
    "RULES",
    "Redactor",
    "Rule",
    "mask_playbook",
    "redact",
    "redact_answer",
    "redact_parts",
    "redact_transcript",
    "rule_shapes",
    "secret_shapes",
    "secret_spans",
]

# Values that name a secret without being one are kept, so a lesson can still say where the key comes from.
# (Case-insensitive rules are matched against the lower-cased text, so their patterns are lower case.)
_NOT_A_VALUE = (
    r"(?!\[redacted|\$|<|%|\{\{|os\.|process\.env|env\.|none\b|null\b|nil\b|true\b|false\b|undefined\b|\d+\b"
    r"|[\w.]*\()"
)
_KEY_NAME = (
    r"(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|auth[_-]?token"
    r"|access[_-]?token|refresh[_-]?token|client[_-]?secret|credentials?|token)(?:[_-]?(?:access[_-]?key|key|value))?"
)
_ASSIGNMENT_TRIGGERS = ("pass", "pwd", "secret", "key", "token", "credential")


class Rule(NamedTuple):
    """One kind of secret.

    The group `v` (or the whole match) is replaced by `marker`. `triggers` are lower-case substrings every
    match contains: a text holding none is not scanned, since scanning is the cost and most text holds
    none. An `ignore_case` rule is matched against the lower-cased text (ten times faster than `(?i)`).
    """

    name: str
    pattern: re.Pattern[str]
    marker: str
    triggers: tuple[str, ...]
    ignore_case: bool = False


def _prefixed(prefixes: str, rest: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{prefixes}){rest}")


RULES: list[Rule] = [
    Rule(
        "private_key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL),
        "[REDACTED:private_key]",
        ("private key",),
    ),
    Rule("anthropic_key", _prefixed("sk-ant-", r"[A-Za-z0-9_\-]{16,}"), "[REDACTED:api_key]", ("sk-ant-",)),
    Rule(
        "openai_key",
        _prefixed("sk-", r"(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        "[REDACTED:api_key]",
        ("sk-",),
    ),
    Rule(
        "stripe_key",
        _prefixed("sk_live_|sk_test_|rk_live_|rk_test_", r"[A-Za-z0-9]{16,}"),
        "[REDACTED:api_key]",
        ("k_live_", "k_test_"),
    ),
    Rule(
        "aws_key",
        _prefixed("AKIA|ASIA|AGPA|AIDA|AROA", r"[A-Z0-9]{16}\b"),
        "[REDACTED:aws_key]",
        ("akia", "asia", "agpa", "aida", "aroa"),
    ),
    Rule(
        "github_token",
        _prefixed("ghp_|gho_|ghu_|ghs_|ghr_|github_pat_", r"[A-Za-z0-9_]{20,}"),
        "[REDACTED:github_token]",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(
        "gitlab_token",
        _prefixed("glpat-|gldt-|glrt-|glcbt-|glptt-", r"[A-Za-z0-9_\-]{20,}"),
        "[REDACTED:token]",
        ("glpat-", "gldt-", "glrt-", "glcbt-", "glptt-"),
    ),
    Rule("slack_token", _prefixed("xox[abposre]-", r"[A-Za-z0-9-]{10,}"), "[REDACTED:slack_token]", ("xox",)),
    Rule("google_key", _prefixed("AIza", r"[0-9A-Za-z_\-]{35}"), "[REDACTED:api_key]", ("aiza",)),
    Rule("npm_token", _prefixed("npm_", r"[A-Za-z0-9]{36}\b"), "[REDACTED:token]", ("npm_",)),
    Rule("huggingface_token", _prefixed("hf_", r"[A-Za-z0-9]{30,}"), "[REDACTED:token]", ("hf_",)),
    Rule(
        "sendgrid_key",
        _prefixed(r"SG\.", r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
        "[REDACTED:api_key]",
        ("sg.",),
    ),
    Rule(
        "jwt",
        _prefixed("eyJ", r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        "[REDACTED:jwt]",
        ("eyj",),
    ),
    Rule(
        "authorization",
        re.compile(
            r"authorization\s*[:=]\s*[\"']?(?:basic|bearer|token|digest)\s+(?P<v>" + _NOT_A_VALUE + r"[^\s\"',;\\]+)"
        ),
        "[REDACTED:token]",
        ("authorization",),
        ignore_case=True,
    ),
    Rule(
        "bearer",
        re.compile(r"\b(?:bearer|token)\s+(?P<v>(?!\[redacted)[a-z0-9._~+/\-]{16,}=*)"),
        "[REDACTED:token]",
        ("bearer", "token"),
        ignore_case=True,
    ),
    # `scheme://user:password@host`: the password runs to the LAST `@` of the word, so one holding `@` or
    # `/` is covered whole.
    Rule(
        "connection_string",
        re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@\[\]]+:(?P<v>(?!\[REDACTED)\S+)@(?=[^\s@]+)"),
        "[REDACTED:password]",
        ("://",),
    ),
    Rule(
        "password_flag",
        re.compile(
            r"--(?:password|passwd|pass|token|api-key|secret|auth-token)(?:=|\s+)(?P<v>" + _NOT_A_VALUE + r"(?!-)\S+)"
        ),
        "[REDACTED:password]",
        ("--pass", "--token", "--api-key", "--secret", "--auth-token"),
        ignore_case=True,
    ),
    # mysql / mariadb take the password glued to `-p`; elsewhere `-pthread` or `-pedantic` are flags.
    Rule(
        "short_password_flag",
        re.compile(r"\b(?:mysql\w*|mariadb\w*)\b[^\n]*?\s-p(?P<v>(?!\[redacted)\S+)"),
        "[REDACTED:password]",
        ("mysql", "mariadb"),
        ignore_case=True,
    ),
    # Webhook URLs carry their secret in the path (Slack, Discord, Teams) or a signature (Azure Logic Apps).
    Rule(
        "webhook",
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9/_\-]{8,})"
            r"|discord(?:app)?\.com/api/webhooks/(?P<d>\d+/[A-Za-z0-9_\-]{20,})"
            r"|webhook\.office\.com/webhookb2/(?P<t>[^\s\"'<>]{20,})|outlook\.office\.com/webhook/(?P<o>[^\s\"'<>]{20,})"
            r"|logic\.azure\.com[^\s\"'<>]*?[?&]sig=(?P<s>[A-Za-z0-9%_\-]{10,})"
        ),
        "[REDACTED:webhook]",
        ("hooks.slack.com", "discord", "webhook", "sig="),
    ),
    # Twilio: a 32-hex auth token after the word (beside an account SID, see `_twilio_spans`); hex alone is too
    # common to be a secret.
    Rule(
        "twilio_token",
        re.compile(r"twilio[^\n]{0,160}?(?<![0-9a-z])(?P<v>[0-9a-f]{32})(?![0-9a-z])"),
        "[REDACTED:token]",
        ("twilio",),
        ignore_case=True,
    ),
    Rule(
        "sshpass",
        re.compile(r"\bsshpass\s+(?:-[a-oq-z]\S*\s+(?:\S+\s+)?)*-p\s*(?P<v>" + _NOT_A_VALUE + r"[^\s\"']+)"),
        "[REDACTED:password]",
        ("sshpass",),
        ignore_case=True,
    ),
    Rule(
        "docker_login",
        re.compile(r"\b(?:docker|podman|registry)\s+login\b[^\n]*?\s-p\s*(?P<v>" + _NOT_A_VALUE + r"[^\s\"']+)"),
        "[REDACTED:password]",
        ("docker", "podman", "registry"),  # not `docker login`: any whitespace may come between
        ignore_case=True,
    ),
    # `curl -u user:password`, httpie's `-a user:password`.
    Rule(
        "user_password_flag",
        re.compile(
            r"(?:^|\s)(?:-u|--user|-a|--auth)(?:\s+|=)[\"']?[^\s:\"'@/]+:(?P<v>" + _NOT_A_VALUE + r"[^\s\"'@]+)"
        ),
        "[REDACTED:password]",
        ("-u", "-a"),  # in `--user` and `--auth` too; not `-u `: a tab or a newline may follow
        ignore_case=True,
    ),
    # .netrc: `machine HOST login USER password SECRET`, on one line or several.
    Rule(
        "netrc",
        re.compile(r"\blogin\s+\S+\s+password\s+(?P<v>" + _NOT_A_VALUE + r"\S+)"),
        "[REDACTED:password]",
        ("password",),
        ignore_case=True,
    ),
    # Environment files and shell exports: an upper-case name that says what it holds (DB_PASS, MAILGUN_KEY,
    # PGPASS, SESSION_SECRET, GITHUB_TOKEN, BASIC_AUTH, AWS_CREDENTIALS), `=` with no space around it as those
    # files write it (`const STORAGE_KEY = 'todos'` in code is a name, not a secret).
    Rule(
        "env_assignment",
        re.compile(
            r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]*(?:PASS|PWD|SECRET|TOKEN|KEY|AUTH|CREDENTIAL)[A-Z0-9_]*="
            r"([\"']?)(?P<v>(?i:" + _NOT_A_VALUE + r")[^\s\"',;]{3,})\1"
        ),
        "[REDACTED:secret]",
        ("pass", "pwd", "secret", "token", "key", "auth", "credential"),
    ),
    Rule(
        "quoted_assignment",
        re.compile(_KEY_NAME + r"\"?\s*[=:]\s*([\"'])(?P<v>" + _NOT_A_VALUE + r"[^\"'\n]{4,}?)\1"),
        "[REDACTED:secret]",
        _ASSIGNMENT_TRIGGERS,
        ignore_case=True,
    ),
    Rule(
        "assignment",
        re.compile(_KEY_NAME + r"\s*[=:]\s*(?P<v>" + _NOT_A_VALUE + r"[^\s\"',;]{4,})"),
        "[REDACTED:secret]",
        _ASSIGNMENT_TRIGGERS,
        ignore_case=True,
    ),
]

# A long run of token characters, random enough to be a key (a bare AWS secret, a pasted token). Hex
# (commit ids, checksums) stays below the entropy bar; words, paths and identifiers lack the mix.
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_\-.])[A-Za-z0-9+/_\-]{32,}={0,2}(?![A-Za-z0-9+/=_\-])")
ENTROPY_BITS = 4.2
# Ids the agents' own formats are full of: random, but not secrets.
_ID_PREFIXES = ("toolu_", "srvtoolu_", "msg_", "req_", "call_", "chatcmpl-", "resp_")


def _ascii_lower(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


# The triggers of the rules, for `secret_spans` to skip the rules whose triggers a text lacks.
_TRIGGERS = sorted({t for rule in RULES for t in rule.triggers})


@cache
def rule_shapes() -> tuple[str, ...]:
    """Each rule's pattern widened to RE2, in `RULES` order: where a rule's shape is not, the rule finds nothing.

    Built on first use: only ingest needs them, and every process that redacts imports this module.
    """
    return tuple(superset(rule.pattern, ignore_case=rule.ignore_case) for rule in RULES)


@cache
def secret_shapes() -> str:
    """The first half of a necessary condition for `secret_spans` to find anything, for SQL (ingest asks DuckDB
    which records meet it and hands only those to the redactor): any rule's shape (`rule_shapes`).

    Each rule's trigger alone is far wider: `key`, `pass` and `://` are in 6 of 10 characters of a coding
    transcript, a rule's whole shape in under 1 in 20.
    """
    return "|".join(rule_shapes())


# The second half, for SQL: a run of token characters holding an upper-case letter and a digit, in either order (as the
# regular expression finds it, the whole run), which the SQL keeps when it is 32 characters or more and holds a
# lower-case letter too: what `_random_token` and a Twilio SID need. Ids, hashes, UUIDs and paths in one case
# never do, and they are most of a transcript's long runs.
_TOKEN = r"[A-Za-z0-9+/_\-]"
MIXED_RUN = f"{_TOKEN}*[A-Z]{_TOKEN}*[0-9]{_TOKEN}*|{_TOKEN}*[0-9]{_TOKEN}*[A-Z]{_TOKEN}*"
# Where `MIXED_RUN` finds a run, this finds part of it: a cheaper test of whether there is one.
MIXED_PAIR = f"[A-Z]{_TOKEN}*[0-9]|[0-9]{_TOKEN}*[A-Z]"


def _entropy(text: str) -> float:
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in Counter(text).values())


# A Twilio account or API key SID (`AC`/`SK` + 32 lower-case hex), and the auth token that follows it in code
# (`Client("AC...", "<token>")`); found among the 32-character runs `_CANDIDATE` scans anyway.
_TWILIO_SID = re.compile(r"(?:AC|SK)[0-9a-f]{32}")
_HEX32 = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")


def _twilio_spans(text: str, sid: re.Match[str]) -> list[tuple[int, int, str]]:
    spans = [(sid.start(), sid.end(), "[REDACTED:token]")]
    token = _HEX32.search(text, sid.end(), sid.end() + 160)
    if token:
        spans.append((token.start(), token.end(), "[REDACTED:token]"))
    return spans


def _rules_present(text: str, among: Sequence[Rule] | None = None) -> list[tuple[Rule, str]]:
    """The rules to match `text` against, each with the text it is matched against: `among` when given (rules
    the caller knows may match), else those whose triggers `text` holds."""
    # ASCII-only lower-casing keeps every offset valid for the original text. The UTF-8 bytes of other
    # characters are all >= 0x80, which `bytes.lower` leaves alone (4x faster than `str.translate`).
    if among is not None and not any(rule.ignore_case for rule in among):
        return [(rule, text) for rule in among]
    lower = text.lower() if text.isascii() else _ascii_lower(text)
    if among is not None:
        return [(rule, lower if rule.ignore_case else text) for rule in among]
    present = {t for t in _TRIGGERS if t in lower}
    return [(rule, lower if rule.ignore_case else text) for rule in RULES if not present.isdisjoint(rule.triggers)]


_MIXED = (re.compile("[0-9]"), re.compile("[A-Z]"), re.compile("[a-z]"))  # a candidate is ASCII


def _random_token(token: str) -> bool:
    core = token.rstrip("=")
    if not all(kind.search(core) for kind in _MIXED):
        return False
    if core.startswith(("/", "~")) or core.startswith(_ID_PREFIXES):
        return False  # a path or an id
    if "/" in core and core.count("/") > 3 and all(len(seg) < 24 for seg in core.split("/")):
        return False  # a relative path, however odd its names
    return _entropy(core) >= ENTROPY_BITS


# Which rules `secret_spans` runs: True, every rule whose triggers the text holds; False, none (the caller knows no
# rule can match: `secret_shapes()` does not); or the rules that may match, in `RULES` order (the caller knows the
# text holds their shapes, `rule_shapes()`, and no other rule's).
RuleChoice = bool | Sequence[Rule]


def secret_spans(text: str, *, rules: RuleChoice = True) -> list[tuple[int, int, str]]:
    """Where `text` holds secrets: sorted, non-overlapping (start, end, marker). `rules`: see `RuleChoice`; random
    tokens are always looked for."""
    found: list[tuple[int, int, str]] = []
    chosen = () if rules is False else _rules_present(text, None if rules is True else rules)
    for rule, subject in chosen:
        groups = [g for g in rule.pattern.groupindex if len(g) == 1]  # `v`, or one of several alternatives
        for m in rule.pattern.finditer(subject):
            group = next((g for g in groups if m.group(g) is not None), None)
            start, end = m.span(group) if group else m.span()
            found.append((start, end, rule.marker))
    for m in _CANDIDATE.finditer(text):
        if _random_token(m.group(0)):
            found.append((m.start(), m.end(), "[REDACTED:secret]"))
        elif _TWILIO_SID.fullmatch(m.group(0)):
            found += _twilio_spans(text, m)
    # Rules listed first win where spans overlap (a vendor's key inside a URL is that vendor's key).
    found.sort(key=lambda s: s[0])
    merged: list[tuple[int, int, str]] = []
    for start, end, marker in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, marker))
    return merged


def redact(text: str, *, rules: RuleChoice = True) -> tuple[str, int]:
    """`text` with every secret-looking span replaced, and how many were replaced (`rules`: see `secret_spans`)."""
    spans = secret_spans(text, rules=rules)
    if not spans:
        return text, 0
    out: list[str] = []
    at = 0
    for start, end, marker in spans:
        out.append(text[at:start])
        out.append(marker)
        at = end
    out.append(text[at:])
    return "".join(out), len(spans)


def redact_parts(parts: Sequence[str], *, rules: RuleChoice = True) -> tuple[list[str], int]:
    """`redact` over the blocks of one message, catching a secret cut across two blocks (`rules`: see
    `secret_spans`, for every block and join).

    Each block is redacted alone; then, at each boundary, the word the first block ends with and the word
    the next begins with are joined, and if the join is a secret that neither half was, both halves go.
    """
    out: list[str] = []
    total = 0
    for part in parts:
        text, n = redact(part, rules=rules)
        out.append(text)
        total += n
    for i in range(len(out) - 1):
        tail = _TAIL.search(out[i])
        head = _HEAD.match(out[i + 1])
        if not tail or not head or not tail.group(0) or not head.group(0):
            continue
        joined = tail.group(0) + head.group(0)
        if "[REDACTED" not in joined and secret_spans(joined, rules=rules):
            out[i] = out[i][: tail.start()] + "[REDACTED:secret]"
            out[i + 1] = out[i + 1][head.end() :]
            total += 1
    return out, total


_TAIL = re.compile(r"\S*\Z")
_HEAD = re.compile(r"\S*")


_PATH_END = r"""[^/\\\s"'`:;,()\[\]{}<>]+"""
# (name, pattern, replacement) for personal data in text written on any machine.
PERSONAL_PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    ("home_path", re.compile(r"(?<![\w.~-])/(?:Users|home)/" + _PATH_END), "~"),
    ("root_home", re.compile(r"(?<![\w.~-])/root(?=/)"), "~"),
    ("windows_home", re.compile(r"\b[A-Za-z]:\\\\?(?:Users|Documents and Settings)\\\\?" + _PATH_END), "~"),
    ("encoded_home", re.compile(r"(?<=-)(Users|home)-[A-Za-z0-9_.]+(?=-)"), r"\1-USER"),
    (
        "email",
        re.compile(r"\b(?!git@)[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
        "[REDACTED:email]",
    ),
]


@dataclass(frozen=True)
class Redactor:
    """Secrets and personal data out of text; built once per run from the settings."""

    home: str | None = None  # this machine's home directory, masked as `~` wherever it appears
    extra: Sequence[str] = ()  # configured patterns (regular expressions): names, hosts, addresses
    _extra: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_extra", tuple(re.compile(p, re.IGNORECASE) for p in self.extra))

    def personal(self, text: str) -> tuple[str, int]:
        """`text` with personal data normalised, and how many spans were."""
        total = 0
        if self.home and len(self.home) > 1:
            total += text.count(self.home)
            text = text.replace(self.home, "~")
        for _, pattern, replacement in PERSONAL_PATTERNS:
            text, n = pattern.subn(replacement, text)
            total += n
        for pattern in self._extra:
            text, n = pattern.subn("[REDACTED:personal]", text)
            total += n
        return text, total

    def clean(self, text: str) -> tuple[str, int, int]:
        """`text` without secrets and personal data: (text, secrets replaced, personal spans masked)."""
        text, secrets = redact(text)
        text, personal = self.personal(text)
        return text, secrets, personal

    def text(self, text: str) -> str:
        """`clean` for callers that need only the text."""
        return self.clean(text)[0]


def redact_answer(text: str, redactor: Redactor) -> str:
    """A model's answer without secrets or personal data, its JSON still JSON: the object the parser would take
    (`core.jsonx.locate_json`) is cleaned value by value and written again, the prose around it as text.

    A marker put straight into the raw text could swallow an escaped quote (`Bearer $TOKEN\\"` in a JSON
    string) and leave an answer that no longer parses, for this run and every rerun that reuses it.
    """
    found = locate_json(text)
    if found is None:
        return redactor.text(text)
    value, start, end = found

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return redactor.text(node)
        if isinstance(node, dict):
            return {redactor.text(k): walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    cleaned = walk(value)
    middle = text[start:end] if cleaned == value else json.dumps(cleaned, ensure_ascii=False)
    return redactor.text(text[:start]) + middle + redactor.text(text[end:])


def mask_playbook(playbook: Playbook, redactor: Redactor, clean: set[str] | None = None) -> Playbook:
    """`playbook` with every entry text cleaned; the very same object when nothing needed it.

    `clean`: texts this redactor already passed unchanged, which the caller keeps between calls (a run's
    sessions) so that only new texts are scanned; the texts found clean here are added to it.
    """
    if clean is not None:  # a session changes a few texts: only those are scanned, the rest passed before
        new = live_texts(playbook).keys() - clean
        clean.update(t for t in new if redactor.text(t) == t)
        if new <= clean:
            return playbook
    changed = False
    sections = {}
    for name, items in playbook.sections.items():
        cleaned = []
        for entry in items:
            if clean is not None and entry.text in clean:
                cleaned.append(entry)
                continue
            text = redactor.text(entry.text)
            if clean is not None and text == entry.text:
                clean.add(text)
            changed = changed or text != entry.text
            cleaned.append(entry if text == entry.text else entry.model_copy(update={"text": text}))
        sections[name] = cleaned
    return playbook.model_copy(update={"sections": sections}) if changed else playbook


# A user name as home paths show it; "USER" (already masked) and shared homes are not names.
_HOME_NAMES = re.compile(r"(?:/(?:Users|home)/|(?<=-)(?:Users|home)-)([A-Za-z0-9_.]+)")
_NOT_NAMES = {"user", "shared", "guest", "public"}

# Keys whose values identify records (ids, timestamps, types): never rewritten, so a redacted transcript is
# the same sessions and messages as the original.
_IDENTITY_KEYS = frozenset(
    {
        "uuid", "parentUuid", "leafUuid", "sessionId", "session_id", "id", "tool_use_id", "call_id", "requestId",
        "timestamp", "type", "role", "model", "agentId", "version", "signature",
    }
)  # fmt: skip


def redact_transcript(text: str, redactor: Redactor) -> tuple[str, int, int]:
    """A JSONL transcript with secrets and personal data removed from every string value of every record
    (ids, timestamps and types kept), one line per line; a line that is not JSON is cleaned as text.

    User names are personal data even where no path shows them (`ls -l` output, prompts): the names seen in
    the file's home paths (`/Users/NAME`, `/home/NAME`, Claude Code's `-Users-NAME-` folders) and this
    machine's own are masked as words everywhere in it.

    Returns:
        (text, secrets replaced, personal spans masked).
    """
    names = {m for m in _HOME_NAMES.findall(text) if len(m) >= 3 and m.lower() not in _NOT_NAMES}
    if redactor.home:
        names.add(redactor.home.rstrip("/").rsplit("/", 1)[-1])
    names -= {"", "~", "root"}
    if names:
        words = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        redactor = replace(redactor, extra=(*redactor.extra, rf"(?<![\w.-])(?:{words})(?![\w-])"))
    secrets = personal = 0

    def walk(value: Any, key: str | None = None) -> Any:
        nonlocal secrets, personal
        if isinstance(value, str):
            if key in _IDENTITY_KEYS:
                return value
            cleaned, n, k = redactor.clean(value)
            secrets, personal = secrets + n, personal + k
            return cleaned
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key) for v in value]
        return value

    out = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            cleaned, n, k = redactor.clean(line)
            secrets, personal = secrets + n, personal + k
            out.append(cleaned)
            continue
        out.append(json.dumps(walk(record), ensure_ascii=False, separators=(",", ":")))
    return "\n".join(out) + ("\n" if text.endswith("\n") else ""), secrets, personal
