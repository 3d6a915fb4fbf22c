"""What a secret looks like: each kind as a `Rule` (its RE2 pattern, the cheap literal triggers that must occur for
it to run, its marker, and, for what RE2 cannot state, a bounded check on each match), and the table of them all
(`PLAIN_RULES`; `core.redact` adds the one that decodes base64 and finds and masks them all)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from core.patterns import SPACE, Match, Pattern

__all__ = ["PLAIN_RULES", "Check", "Rule", "Span", "ascii_alnum", "matches", "word_char"]

Span = tuple[int, int]
# A condition RE2 cannot state, checked on a match: the span to replace (the one given, or another), or None when
# the match holds no secret after all.
Check = Callable[[Match, Span], "Span | None"]

_S = f"[{SPACE}]"  # Python's whitespace, which RE2's `\s` (ASCII) is not
_NS = f"[^{SPACE}]"
_V = f"[^{SPACE}\"',;]"  # a character of an unquoted assigned value


@dataclass(frozen=True)
class Rule:
    """One kind of secret.

    The first single-letter group that took part (`v`, or one of several alternatives), else the whole match, is
    replaced by `marker`, unless `check` says otherwise. `triggers` are lower-case substrings every match contains:
    a text holding none is not scanned, since scanning is the cost and most text holds none (a rule without
    triggers always runs). An `ignore_case` rule is matched against the text with its ASCII letters lower-cased,
    so its pattern is lower case. `shape` is what DuckDB looks for where the pattern alone would be too wide (the
    pattern itself otherwise); either way, wherever the rule finds a secret, its shape matches.
    """

    name: str
    pattern: Pattern
    marker: str
    triggers: tuple[str, ...]
    ignore_case: bool = False
    check: Check | None = None
    shape: str | None = None
    letters: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "letters", tuple(g for g in self.pattern.groupindex if len(g) == 1))

    def spans(self, subject: str) -> list[tuple[int, int, str]]:
        """Where this rule finds secrets in `subject` (lower-cased already when `ignore_case`)."""
        found = []
        for m in matches(self.pattern, subject):
            group = next((g for g in self.letters if m.start(g) >= 0), None)
            chosen = m.span(group) if group else m.span()
            span = chosen if self.check is None else self.check(m, chosen)
            if span is not None and span[1] > span[0]:
                found.append((span[0], span[1], self.marker))
        return found


def matches(pattern: Pattern, text: str) -> Iterator[Match]:
    """`pattern.finditer(text)`, without the last search where a match ends the text (none of these patterns matches
    an empty string, so nothing can follow): a search costs a call into RE2, and a short text's secret often ends it."""
    at, end = 0, len(text)
    while (m := pattern.search(text, at)) is not None:
        yield m
        start, stop = m.spans[0]
        if stop >= end:
            return
        at = stop if stop > start else stop + 1  # after an empty match, from the next character (as `finditer`)


# Values that name a secret without being one are kept, so a lesson can still say where the key comes from:
# `$TOKEN`, `<key>`, `%s`, `{{ var }}`, `os.environ[...]`, `process.env.X`, None/null/true/..., a number, a call.
_PLACEHOLDERS = ("[redacted", "$", "<", "%", "{{", "os.", "process.env", "env.")
_NON_VALUES = ("none", "null", "nil", "true", "false", "undefined")
_NUMBER = Pattern(r"\p{Nd}+(?:[^\p{L}\p{N}_]|$)")  # Python's `\d+\b`
_CALL = Pattern(r"[\p{L}\p{N}_.]*\(")  # Python's `[\w.]*\(`


def word_char(ch: str) -> bool:  # Python's `\w`; an empty string (the end of the text) is none
    return ch.isalnum() or ch == "_"


def _placeholder(text: str, at: int) -> bool:
    """Whether the value starting at `at` only names a secret (see `_PLACEHOLDERS`); the look runs over the value's
    own characters (a number's digits, a name up to its `(`), so it is bounded by the match."""
    head = text[at : at + 12].lower()
    if head.startswith(_PLACEHOLDERS):
        return True
    if any(head.startswith(w) and not word_char(text[at + len(w) : at + len(w) + 1]) for w in _NON_VALUES):
        return True
    return _NUMBER.match(text, at) is not None or _CALL.match(text, at) is not None


def _value(excluded: str, least: int) -> str:
    """A value of `least` or more characters outside `excluded` (a class body), that RE2 itself tells from the commonest
    placeholders: not starting with `$`, `<`, `%` or `(`, not all digits, not a bare None/null/nil/true/false/undefined.

    `_placeholder` still decides (`{{`, `os.`, `1.5`, a call...); this only keeps a text dense with placeholders
    (`api_key: None` a thousand times) from costing a check in Python for each. A superset of what the check keeps.
    """

    def rest(n: int) -> str:
        return f"[^{excluded}]{{{max(n, 0)},}}"

    words = ("none", "null", "nil", "true", "false", "undefined")

    def trie(prefix: str) -> str:
        # strings starting with `prefix` (a prefix of a word) that are no word
        nexts = sorted({w[len(prefix)] for w in words if w.startswith(prefix) and len(w) > len(prefix)})
        options = [f"[{c}{c.upper()}]{trie(prefix + c)}" for c in nexts]
        if prefix:  # a first character that starts no word is `other`'s
            other = "".join(c + c.upper() for c in nexts)
            options.append(f"[^{excluded}{other}]{rest(least - len(prefix) - 1)}")
        if prefix not in words and len(prefix) >= least:
            options.append("")  # last: a longer value is preferred, as a greedy repeat would take it
        return "(?:" + "|".join(options) + ")"

    starts = "".join(sorted({w[0] + w[0].upper() for w in words}))
    digits = [f"[0-9]{{{a}}}[^{excluded}0-9]{rest(least - a - 1)}" for a in range(1, least - 1)]
    digits.append(f"[0-9]{{{max(least - 1, 1)},}}[^{excluded}0-9][^{excluded}]*")
    other = f"[^{excluded}0-9$<%({starts}]{rest(least - 1)}"
    return "(?:" + "|".join([other, *digits, trie("")]) + ")"


_VALUE3, _VALUE4 = _value(f"{SPACE}\"',;", 3), _value(f"{SPACE}\"',;", 4)  # an assigned value, unquoted


def _not_placeholder(m: Match, span: Span) -> Span | None:
    return None if _placeholder(m.string, span[0]) else span


def _not_a_marker(m: Match, span: Span) -> Span | None:
    return None if m.string.startswith(("[REDACTED", "[redacted"), span[0]) else span


def _a_value(m: Match, span: Span) -> Span | None:
    """Neither a placeholder nor what an earlier pass wrote (`[REDACTED:password]`, read again at ingest)."""
    return None if _not_a_marker(m, span) is None else _not_placeholder(m, span)


def _prefixed(prefixes: str, rest: str) -> Pattern:
    # `\b` before a prefix that starts with a word character: RE2's ASCII `\b` is Python's `(?<![A-Za-z0-9_])`.
    return Pattern(rf"\b(?:{prefixes}){rest}")


def _arg(bare: str) -> str:
    """A command-line argument: its inside when quoted (`q`, `a`), else a bare word of `bare` characters (`v`)."""
    # a quote escaped as JSON writes it (`\\"`) is a quote: a tool call's input is stored as JSON text
    return f"(?:\\\\?\"(?P<q>[^\"\\n]+?)\\\\?\"|'(?P<a>[^'\\n]+)'|(?P<v>{bare}))"


_BARE = f"[^{SPACE}\"'-][^{SPACE}\"']*"  # a bare argument: no quote, not a flag
# A bare argument that is no flag and none of the shell's operators (`&&`, `|`, `;`, `>`): a password given where an
# argument may end the command (`rabbitmqctl add_user bob && ...` takes no password on the line).
_CMD_BARE = r"[^\s\"'|;&<>-][^\s\"'|;&<>]*"
# A user name as commands and prose give it beside a password: `admin`, `ci-bot`, `me@acme.io`, `ACME\\deploy`.
_USER = r"[a-z0-9._@+\\-]+"
# A private key block of any kind (PEM, OpenSSH, PGP, SSH2, encrypted PEM), to its END line or, cut short, to the
# end of the text; and the tail of one whose BEGIN went in an earlier message (base64 lines, then the END line).
_KEY_BEGIN = "-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-{4,5}"
_KEY_END = "-{4,5} ?END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-{4,5}"
_NEWLINE = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or one escaped in JSON text

_KEY_NAME = (
    r"(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|auth[_-]?token"
    r"|access[_-]?token|refresh[_-]?token|client[_-]?secret|credentials?|token)(?:[_-]?(?:access[_-]?key|key|value))?"
)
_ASSIGNMENT_TRIGGERS = ("pass", "pwd", "secret", "key", "token", "credential")


# --- checks for the rules below (each a bounded look at the match and the characters beside it) ---------------


def _twilio_token(m: Match, span: Span) -> Span | None:
    # 32 hex digits standing alone, `twilio` at most 160 characters before them on the same line.
    if ascii_alnum(m.before()) or ascii_alnum(m.after()):
        return None
    window = m.string[max(0, span[0] - 166) : span[0]]
    at = window.rfind("twilio")
    return span if at >= 0 and "\n" not in window[at:] and at + 6 < len(window) else None


def ascii_alnum(ch: str) -> bool:  # `[0-9A-Za-z]`; an empty string (an end of the text) is none
    return ch.isascii() and ch.isalnum()


def _openssl_pass(m: Match, span: Span) -> Span | None:
    # `-passin env:VAR`, `file:path`, `fd:3`, `stdin` name where the password is, not the password
    if m.string.startswith(("env:", "file:", "fd:", "stdin"), span[0]):
        return None
    return _not_placeholder(m, span)


def _echoed(m: Match, span: Span) -> Span | None:
    # `echo -n 'pw' | sudo -S ...`, `printf '%s\n' pw | ...`: what is echoed, unless it only names the password
    words = m.string[span[0] : span[1]].split()
    while words and words[0].startswith("-"):
        words.pop(0)
    if words and m.string[m.start() : m.start() + 6] == "printf" and "%" in words[0]:
        words.pop(0)
    said = " ".join(words).strip("\"'")
    if not said or said == "-" or _placeholder(said, 0):
        return None
    return span


def _htpasswd(m: Match, span: Span) -> Span | None:
    # `htpasswd -b FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`: only batch mode (`b`) takes it on the line.
    flags = (m.group("flags") or "").replace(" ", "").replace("\t", "")
    letters = "".join(c for c in flags if c.isalpha())
    if "b" not in letters:
        return None
    group = "second" if "n" in letters else "third"
    if m.start(group) < 0 or _placeholder(m.string, m.start(group)):
        return None
    start, end = m.span(group)
    return start, end - 2 if m.string.endswith("&&", start, end) else end  # `... PW&& next`: the `&&` is the shell's


def _pgpass(m: Match, span: Span) -> Span | None:
    # host:port:database:user:password; a time of day with fields (12:30:45:123:456) is all digits
    fields = [m.group(g) or "" for g in ("host", "db", "user")] + [m.string[span[0] : span[1]]]
    return None if all(f.isdecimal() for f in fields) else span


_TECH_WORDS = frozenset(
    "sha1 sha256 sha384 sha512 md5 base64 base32 utf8 utf-8 utf16 ed25519 x25519 rsa2048 rsa4096 aes128 aes256 hs256"
    " rs256 es256 v1 v2 v3 oauth2 http2 argon2 argon2id bcrypt pbkdf2 hmac-sha256".split()
)
# A bare value in prose holds a digit, or a sign before its last character: RE2 passes over "the token is expired."
_WORDY = f"[^{SPACE}\"'`]"
_SIGN = f"[^{SPACE}\"'`A-Za-z0-9]"
_FILE_NAME = Pattern(r"[A-Za-z0-9_\-]+\.[A-Za-z]{1,5}")
_HYPHENATED = Pattern(r"[a-z]+[0-9]{0,3}(?:[\-.][a-z]+[0-9]{0,3})+")


def _named_in_prose(m: Match, span: Span) -> Span | None:
    """A value named in prose ("the password is hunter2x!") that looks like a password: not a word, a path, a file
    or a name."""
    text = m.string
    value = text[span[0] : span[1]]
    core = value.rstrip(".,;:!?)]}>")
    quoted = m.start("q") >= 0
    if len(core) < (4 if quoted else 6) or _placeholder(text, span[0]):
        return None
    if "/" in core or "\\" in core or core.startswith("~") or "://" in core:
        return None  # a path or a URL
    if _FILE_NAME.fullmatch(core) or core.lower() in _TECH_WORDS or _HYPHENATED.fullmatch(core.lower()):
        return None
    if core.isupper() and core.replace("_", "").isalnum():
        return None  # an environment variable's name (GITHUB_TOKEN)
    letters_only = core.replace("-", "").replace("_", "").isalpha()
    if letters_only and not (quoted and text[m.start() : m.start() + 4].lower() == "pass"):
        return None  # a word ("the token is expired"); a quoted word only as a password ("the password is 'admin'")
    return span


# Codes that stay valid until used (a one-time or 2FA code expires in seconds: `gh auth login` prints one to copy).
_CODE_KIND_WORDS = ("recovery", "backup", "scratch", "emergency")
_CODE_KINDS = "|".join(_CODE_KIND_WORDS)


def _otp_seed(m: Match, span: Span) -> Span | None:
    # A seed is random: it holds one of base32's digits (2-7), or is long (160 bits, 32 characters); an upper-case
    # word of letters beside "MFA" (HTTPSCONNECTIONPOOL) is a name.
    seed = m.string[span[0] : span[1]].replace(" ", "")
    return span if len(seed) >= 32 or any(c in "234567" for c in seed) else None


def _recovery_codes(m: Match, span: Span) -> Span | None:
    """The codes of a list ("4821-9931 7712-0034, a1b2c-d3e4f"), up to the first that is no code: 4 or more
    characters with 2 or more digits ("v2-style", "10 per user" are words)."""
    text, end, at = m.string, span[0], span[0]
    while at < span[1]:
        stop = at
        while stop < span[1] and (ascii_alnum(text[stop]) or text[stop] == "-"):
            stop += 1
        code = text[at:stop]
        if code != "and":  # "4821-9931 and 7712-0034"
            if len(code.replace("-", "")) < 4 or sum(c.isdigit() for c in code) < 2:
                break
            end = stop
        at = stop
        while at < span[1] and not (ascii_alnum(text[at]) or text[at] == "-"):
            at += 1
    return (span[0], end) if end > span[0] else None


def _pin(m: Match, span: Span) -> Span | None:
    # "the PIN is 482193", not a version, a date or a figure ("pin: 1234.5", "the pin is 2024-11-28")
    after = m.after()
    if after and after in ".,:/-" and m.string[span[1] + 1 : span[1] + 2].isdigit():
        return None
    return span


# Every kind but base64 of a credential, which decodes a match and asks these (`core.redact` adds it, last).
PLAIN_RULES: list[Rule] = [
    Rule(
        "private_key",
        Pattern(rf"{_KEY_BEGIN}.*?(?:{_KEY_END}|$)|(?:[A-Za-z0-9+/=]+[ \t]*{_NEWLINE})+{_KEY_END}", dotall=True),
        "[REDACTED:private_key]",
        ("private key",),
        shape="-{4,5} ?(?:BEGIN|END) [A-Z0-9 ]*PRIVATE KEY",  # its BEGIN or END line: a literal RE2 skips to
    ),
    Rule(
        "putty_key",
        Pattern(r"PuTTY-User-Key-File-[0-9]+:.*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|$)", dotall=True),
        "[REDACTED:private_key]",
        ("putty-user-key-file",),
        shape="PuTTY-User-Key-File-[0-9]+:",
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
    # Atlassian API tokens: `ATATT3`, a base64 body, `=`, a checksum (the run after the `=` is the token's too).
    Rule("atlassian_token", _prefixed("ATATT3", r"[A-Za-z0-9_\-=]{20,}"), "[REDACTED:token]", ("atatt3",)),
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
        Pattern(rf"authorization{_S}*[:=]{_S}*[\"']?(?:basic|bearer|token|digest){_S}+(?P<v>[^{SPACE}\"',;\\]+)"),
        "[REDACTED:token]",
        ("authorization",),
        ignore_case=True,
        check=_not_placeholder,
    ),
    Rule(
        "bearer",
        Pattern(rf"\b(?:bearer|token){_S}+(?P<v>[a-z0-9._~+/\-]{{16,}}=*)"),
        "[REDACTED:token]",
        ("bearer", "token"),
        ignore_case=True,
    ),
    # `scheme://user:password@host`: the password runs to the LAST `@` of the word (that a host follows), so one
    # holding `@` or `/` is covered whole.
    Rule(
        "connection_string",
        Pattern(rf"\b[a-z][a-z0-9+.\-]*://[^{SPACE}:/@\[\]]+:(?P<v>{_NS}+)@[^{SPACE}@]"),
        "[REDACTED:password]",
        ("://",),
        check=_not_a_marker,
    ),
    Rule(
        "password_flag",
        Pattern(
            rf"--(?:password|passwd|passphrase|pass|token|api-key|secret|auth-token)(?:=|{_S}+)"
            + _arg(f"[^{SPACE}\"'-]{_NS}*")
        ),
        "[REDACTED:password]",
        ("--pass", "--token", "--api-key", "--secret", "--auth-token"),
        ignore_case=True,
        check=_not_placeholder,
    ),
    # `-passin pass:PW` (openssl), `-storepass PW` (keytool), `-password PW`: single-dash password options.
    Rule(
        "pass_option",
        Pattern(
            rf"(?:^|[{SPACE}\"'])-(?:pass|passin|passout|password|passwd|passphrase|(?:src|dest)?(?:store|key)pass)"
            rf"(?:={_S}*|{_S}+)(?:pass:)?" + _arg(_BARE)
        ),
        "[REDACTED:password]",
        ("pass",),
        ignore_case=True,
        check=_openssl_pass,
    ),
    # `openssl enc -k PW` / `-K HEXKEY`
    Rule(
        "openssl_key",
        Pattern(r"\bopenssl\b[^\n|;&]*?[ \t]-k[ \t]+" + _arg(_BARE)),
        "[REDACTED:password]",
        ("openssl",),
        ignore_case=True,
        check=_not_placeholder,
    ),
    # mysql / mariadb take the password glued to `-p`, as 7-Zip and RAR do; elsewhere `-pthread` or `-pedantic` are
    # flags.
    Rule(
        "short_password_flag",
        Pattern(rf"\b(?:mysql|mariadb|7z|7za|7zr|rar|unrar)[^\n]*?{_S}-p" + _arg(f"{_NS}+")),
        "[REDACTED:password]",
        ("mysql", "mariadb", "7z", "rar"),
        ignore_case=True,
        check=_not_a_marker,
    ),
    # `zip -P PW`, `unzip -P PW` (upper case: `unzip -p` writes to stdout).
    Rule(
        "zip_password",
        Pattern(r"\b(?:zip|unzip|zipcloak)\b[^\n|;&]*?[ \t]-P[ \t]*" + _arg(_BARE)),
        "[REDACTED:password]",
        ("zip",),
        check=_not_placeholder,
    ),
    # `redis-cli -a PW`, `--pass PW` (Redis's and its forks' clients take the password on the command line).
    Rule(
        "redis_password",
        Pattern(r"\b(?:redis|valkey|keydb)-cli\b[^\n|;&]*?[ \t](?:-a|--pass)[ \t]+" + _arg(_BARE)),
        "[REDACTED:password]",
        ("redis-cli", "valkey-cli", "keydb-cli"),
        check=_a_value,
    ),
    # Database, directory and broker clients given the password on the command line: `mongosh -p PW`, `ldapsearch
    # -w PW`, `sqlcmd -P PW`, `mosquitto_pub -P PW`, WP-CLI's `--user_pass=PW`, `ipmitool -P PW`, `cqlsh -p PW`,
    # `cypher-shell -p PW`, `rabbitmqadmin -p PW`, `psexec -p PW`.
    Rule(
        "client_password",
        Pattern(
            r"\b(?:mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport|ldapsearch|ldapadd|ldapmodify"
            r"|ldapdelete|ldapwhoami|ldapcompare|sqlcmd|bcp|mosquitto_pub|mosquitto_sub|wp|ipmitool|cqlsh|cypher-shell"
            r"|rabbitmqadmin|psexec)\b[^\n|;&]*?[ \t]"
            r"(?:-p|-w|-P|--password|--pass|--user_pass|--admin_password|--dbpass)(?:[ \t]+|=)" + _arg(_BARE)
        ),
        "[REDACTED:password]",
        (
            "mongo",
            "ldap",
            "sqlcmd",
            "bcp",
            "mosquitto",
            "wp",
            "ipmitool",
            "cqlsh",
            "cypher-shell",
            "rabbitmqadmin",
            "psexec",
        ),
        check=_a_value,
    ),
    # Commands whose documented usage takes the password as a positional argument: `rabbitmqctl add_user USER PW`
    # (`change_password`, `authenticate_user`), `mysqladmin password NEW`, Windows' `net user NAME PW` and
    # `net use \\\\srv\\share PW`, Oracle's `sqlplus USER/PW@DB`, `lftp -u USER,PW`. (`smbpasswd` reads it on stdin:
    # `piped_password`.)
    Rule(
        "rabbitmq_password",
        Pattern(
            r"\brabbitmqctl\b[^\n|;&]*?[ \t](?:add_user|change_password|authenticate_user)(?:[ \t]+--?[a-z-]+)*"
            r"[ \t]+(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>-][^\s\"'|;&<>]*)[ \t]+" + _arg(_CMD_BARE)
        ),
        "[REDACTED:password]",
        ("rabbitmqctl",),
        check=_a_value,
    ),
    Rule(
        "mysqladmin_password",
        Pattern(r"\b(?:mysqladmin|mariadb-admin)\b[^\n|;&]*?[ \t](?:old-)?password[ \t]+" + _arg(_CMD_BARE)),
        "[REDACTED:password]",
        ("mysqladmin", "mariadb-admin"),
        check=_a_value,
    ),
    # `net user NAME PW [/add]`: the password ends the command or an option follows (`net user growth is 5% ...` is
    # prose); `*` asks for it.
    Rule(
        "net_user_password",
        Pattern(
            r"\bnet[ \t]+(?:user[ \t]+(?:\"[^\"\n]+\"|[^\s\"/*][^\s\"]*)|use[ \t]+(?:[a-z]:[ \t]+)?\\{2,4}[^\s\"]+)"
            r"[ \t]+(?:\"(?P<q>[^\"\n]+)\"|(?P<v>[^\s\"'/*|;&<>][^\s\"'|;&<>]*))"
            r"(?:[ \t]+/|[ \t]*(?:\r|\n|\\n|[&|;`\"')]|$))"
        ),
        "[REDACTED:password]",
        ("net ", "net\t"),
        ignore_case=True,
        check=_a_value,
    ),
    Rule(
        "sqlplus_password",
        Pattern(
            r"\b(?:sqlplus|sqlldr|expdp|impdp)\b(?:[ \t]+-[a-z]+)*[ \t]+(?:userid=)?[\"']?[a-z0-9_$#.]+/"
            # the password runs to the word's last `@` before the database (a password may hold `@` itself)
            r"(?:(?P<v>[^\s\"'/]+)@[^\s@\"']+|(?P<w>[^\s@\"'/]+))"
        ),
        "[REDACTED:password]",
        ("sqlplus", "sqlldr", "expdp", "impdp"),
        ignore_case=True,
        check=_a_value,
    ),
    Rule(
        "lftp_password",
        Pattern(r"\blftp\b[^\n|;&]*?[ \t]-u[ \t]+[\"']?[^\s,\"']+,(?P<v>[^\s\"']+)"),
        "[REDACTED:password]",
        ("lftp",),
        check=_a_value,
    ),
    # `nmcli ... password PW` (or `wifi-sec.psk PW`), `wpa_passphrase SSID PW`, `neo4j-admin set-initial-password PW`.
    Rule(
        "positional_passphrase",
        Pattern(
            r"\b(?:nmcli\b[^\n|;&]*?[ \t](?:password|wifi-sec\.psk|802-1x\.password)"
            r"|wpa_passphrase[ \t]+(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>-][^\s\"'|;&<>]*)"
            r"|neo4j-admin\b[^\n|;&]*?[ \t]set-initial-password)[ \t]+" + _arg(_CMD_BARE)
        ),
        "[REDACTED:password]",
        ("nmcli", "wpa_passphrase", "neo4j-admin"),
        check=_a_value,
    ),
    # FreeRDP's `/p:PW`, `cmdkey /pass:PW`, `schtasks /rp PW` (Windows' slash options, in any case).
    Rule(
        "windows_password_option",
        Pattern(
            r"\b(?:(?:xfreerdp|wlfreerdp|sdl-freerdp)3?\b[^\n|;&]*?[ \t][/-]p:|cmdkey\b[^\n|;&]*?[ \t]/pass:"
            r"|schtasks\b[^\n|;&]*?[ \t]/rp[ \t]+)" + _arg(_CMD_BARE)
        ),
        "[REDACTED:password]",
        ("freerdp", "cmdkey", "schtasks"),
        ignore_case=True,
        check=_a_value,
    ),
    # HashiCorp Vault's tokens since 1.10: a service, batch or recovery token's prefix, then its body.
    Rule("vault_token", _prefixed(r"hv[sbr]\.", r"[A-Za-z0-9_-]{24,}"), "[REDACTED:token]", ("hvs.", "hvb.", "hvr.")),
    # Webhook URLs carry their secret in the path (Slack, Discord, Teams) or a signature (Azure Logic Apps).
    Rule(
        "webhook",
        Pattern(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9/_\-]{8,})"
            r"|discord(?:app)?\.com/api/webhooks/(?P<d>[0-9]+/[A-Za-z0-9_\-]{20,})"
            rf"|webhook\.office\.com/webhookb2/(?P<t>[^{SPACE}\"'<>]{{20,}})"
            rf"|outlook\.office\.com/webhook/(?P<o>[^{SPACE}\"'<>]{{20,}})"
            rf"|logic\.azure\.com[^{SPACE}\"'<>]*?[?&]sig=(?P<s>[A-Za-z0-9%_\-]{{10,}})"
        ),
        "[REDACTED:webhook]",
        ("hooks.slack.com", "discord", "webhook", "sig="),
        shape=r"hooks\.slack\.com/|discord(?:app)?\.com/api/webhooks/|webhook\.office\.com/webhookb2/"
        r"|outlook\.office\.com/webhook/|logic\.azure\.com",  # the hosts: literals RE2 skips to
    ),
    # A signed URL's signature (Azure SAS `sig=`, S3 and GCS presigned URLs): whoever has the URL has the access.
    Rule(
        "url_signature",
        Pattern(r"[?&](?:sig|signature|x-amz-signature|x-goog-signature)=(?P<v>[a-z0-9%+/_\-]{16,}=*)"),
        "[REDACTED:token]",
        ("sig=", "signature="),
        ignore_case=True,
    ),
    # Twilio: a 32-hex auth token after the word (beside an account SID, see `_twilio_spans`); hex alone is too
    # common to be a secret.
    Rule(
        "twilio_token",
        Pattern(r"[0-9a-f]{32}"),
        "[REDACTED:token]",
        ("twilio",),
        ignore_case=True,
        check=_twilio_token,
        shape=r"(?i:twilio[^\n]*[0-9a-f]{32})",
    ),
    Rule(
        "sshpass",
        Pattern(rf"\bsshpass{_S}+(?:-[a-oq-z]{_NS}*{_S}+(?:{_NS}+{_S}+)?)*-p{_S}*" + _arg(f"[^{SPACE}\"']+")),
        "[REDACTED:password]",
        ("sshpass",),
        ignore_case=True,
        check=_not_placeholder,
    ),
    Rule(
        "docker_login",
        Pattern(rf"\b(?:docker|podman|registry){_S}+login\b[^\n]*?{_S}-p{_S}*" + _arg(f"[^{SPACE}\"']+")),
        "[REDACTED:password]",
        ("docker", "podman", "registry"),  # not `docker login`: any whitespace may come between
        ignore_case=True,
        check=_not_placeholder,
    ),
    # A password fed on standard input by echo: `echo PW | sudo -S`, `| docker login --password-stdin`, `| chpasswd`,
    # `| smbpasswd -s`.
    Rule(
        "piped_password",
        Pattern(
            r"\b(?:echo|printf)[ \t]+(?P<v>[^|\n]*?)[ \t]*\|[ \t]*(?:sudo\b[^|\n]*?[ \t](?:-[A-Za-z]*S|--stdin)"
            r"|[^|\n]*?(?:--password-stdin|--with-token|passwd[ \t]+--stdin)|chpasswd\b"
            r"|smbpasswd\b[^|\n]*?[ \t]-[a-z]*s\b)"
        ),
        "[REDACTED:password]",
        ("echo", "printf"),
        check=_echoed,
    ),
    # `sudo -S ... <<< PW`
    Rule(
        "sudo_herestring",
        Pattern(r"\bsudo\b[^|\n]*?[ \t](?:-[A-Za-z]*S[A-Za-z]*|--stdin)\b[^|\n]*?<<<[ \t]*" + _arg(_BARE)),
        "[REDACTED:password]",
        ("sudo",),
        check=_not_placeholder,
    ),
    Rule(
        "htpasswd",
        Pattern(
            r"\b(?:htpasswd|mosquitto_passwd)(?P<flags>(?:[ \t]+-[A-Za-z]+(?:[ \t]+[0-9]+)?)+)"
            r"[ \t]+(?P<first>[^\s|;<>-][^\s|;<>]*)"
            r"[ \t]+(?P<second>[^\s|;<>-][^\s|;<>]*)(?:[ \t]+(?P<third>[^\s|;<>-][^\s|;<>]*))?"
        ),
        "[REDACTED:password]",
        ("htpasswd", "mosquitto_passwd"),
        check=_htpasswd,
    ),
    # `curl -u user:password`, httpie's `-a user:password`, smbclient's `-U user%password`.
    Rule(
        "user_password_flag",
        # (no `[` in the user: `-a [REDACTED:password]` is a value redacted already, not `user:password`)
        Pattern(rf"(?:^|{_S})(?:-u|--user|-a|--auth)(?:{_S}+|=)[\"']?[^{SPACE}:\"'@/\[]+[:%](?P<v>[^{SPACE}\"'@]+)"),
        "[REDACTED:password]",
        ("-u", "-a"),  # in `--user` and `--auth` too; not `-u `: a tab or a newline may follow
        ignore_case=True,
        check=_not_placeholder,
    ),
    # .netrc: `machine HOST login USER password SECRET`, on one line or several.
    Rule(
        "netrc",
        Pattern(rf"\blogin{_S}+{_NS}+{_S}+password{_S}+(?P<v>{_NS}+)"),
        "[REDACTED:password]",
        ("password",),
        ignore_case=True,
        check=_not_placeholder,
    ),
    # .pgpass: `host:port:database:user:password`, a line of its own (or quoted, or escaped in JSON).
    Rule(
        "pgpass",
        Pattern(
            rf"(?:^|[{SPACE}\"'=])(?P<host>[A-Za-z0-9._\-]+|\*):(?:[0-9]{{1,5}}|\*):(?P<db>[^{SPACE}:\"'\\]+)"
            rf":(?P<user>[^{SPACE}:\"'\\]+):(?P<v>[^{SPACE}:\"'\\]{{3,}})(?:$|[{SPACE}\"'\\])",
            multiline=True,
        ),
        "[REDACTED:password]",
        (":",),
        check=_pgpass,
        # From the port on: with the host, the shape would be live at every word of a text, and in one pattern with
        # every other shape RE2's DFA runs out of states (ingest's screen ran 10x slower).
        shape=rf":(?:[0-9]{{1,5}}|\*):[^{SPACE}:\"'\\]+:[^{SPACE}:\"'\\]+:[^{SPACE}:\"'\\]{{3,}}",
    ),
    # Environment files and shell exports: an upper-case name that says what it holds (DB_PASS, MAILGUN_KEY,
    # PGPASS, SESSION_SECRET, GITHUB_TOKEN, BASIC_AUTH, AWS_CREDENTIALS), `=` with no space around it as those
    # files write it (`const STORAGE_KEY = 'todos'` in code is a name, not a secret).
    Rule(
        "env_assignment",
        Pattern(
            r"\b[A-Z][A-Z0-9_]*(?:PASS|PWD|SECRET|TOKEN|KEY|AUTH|CREDENTIAL)[A-Z0-9_]*="
            rf"(?:\"(?P<q>{_VALUE3})\"|'(?P<a>{_VALUE3})'|(?P<v>{_VALUE3}))"
        ),
        "[REDACTED:secret]",
        ("pass", "pwd", "secret", "token", "key", "auth", "credential"),
        check=_not_placeholder,
        shape=r"\b[A-Z][A-Z0-9_]*(?:PASS|PWD|SECRET|TOKEN|KEY|AUTH|CREDENTIAL)[A-Z0-9_]*=[\"']?" + f"{_V}{{3,}}",
    ),
    # Docker's config.json (`"auth": "<base64 of user:password>"`, identity tokens) and npm's `_auth=`.
    Rule(
        "registry_auth",
        Pattern(
            rf"\\?\"(?:auth|identitytoken|registrytoken)\\?\"{_S}*:{_S}*\\?\"(?P<v>[^\"\\\n]{{8,}})\\?\""
            rf"|(?:^|[^a-z0-9])_auth{_S}*[=:]{_S}*(?P<w>[^{SPACE}\"']{{8,}})"
        ),
        "[REDACTED:secret]",
        ('auth"', 'auth\\"', "identitytoken", "registrytoken", "_auth"),
        ignore_case=True,
        check=_not_placeholder,
        shape=r'(?i:auth\\?"|identitytoken|registrytoken|_auth)',
    ),
    Rule(
        "quoted_assignment",
        Pattern(_KEY_NAME + rf"\\?\"?{_S}*[=:]{_S}*\\?(?:\"(?P<q>[^\"'\n]{{4,}}?)\\?\"|'(?P<a>[^\"'\n]{{4,}}?)\\?')"),
        "[REDACTED:secret]",
        _ASSIGNMENT_TRIGGERS,
        ignore_case=True,
        check=_not_placeholder,
    ),
    Rule(
        "assignment",
        Pattern(_KEY_NAME + rf"{_S}*[=:]{_S}*(?P<v>{_VALUE4})"),
        "[REDACTED:secret]",
        _ASSIGNMENT_TRIGGERS,
        ignore_case=True,
        check=_not_placeholder,
        shape=f"(?i:{_KEY_NAME}{_S}*[=:]{_S}*{_V}{{4,}})",
    ),
    # A password or key named in prose: "the password is hunter2x!", "my API key for staging is ...", "pw: ...".
    Rule(
        "named_in_prose",
        Pattern(
            r"(?:(?i:\b(?:password|passphrase|passwd|passcode|pass code|pin code|pw|api[ _-]?key|secret[ _-]?key"
            r"|access[ _-]?key|private[ _-]?key|auth[ _-]?token|access[ _-]?token|token|secret))"
            rf"(?:{_S}+(?i:for|of|on|to)(?:{_S}+{_NS}+){{1,3}}?)?"
            rf"{_S}+(?i:is|was|=|:|will be|would be|should be|becomes|is now|now is|reads)"
            # or a colon right after a name `assignment` (a name without a space) does not know: "pw: ...",
            # "API key: ..."
            r"|(?i:\b(?:pw|passphrase|passcode|pass code|pin code|(?:api|secret|access|private) key"
            r"|(?:auth|access) token))"
            rf"(?:[ \t]+(?i:for|of|on|to)(?:[ \t]+[^{SPACE}:]+){{1,3}}?)?[ \t]*[=:]){_S}+"
            rf"(?:[\"'`](?P<q>[^\"'`\n]{{4,}})[\"'`]|(?P<v>{_WORDY}*[0-9]{_WORDY}*|{_WORDY}*{_SIGN}{_WORDY}+))"
        ),
        "[REDACTED:password]",
        ("pass", "pin code", "pw", "key", "token", "secret"),
        check=_named_in_prose,
    ),
    # A PIN in prose: "the PIN is 482193", "PIN for the card: 4821" (digits alone, which `named_in_prose` takes for a
    # figure).
    Rule(
        "pin",
        Pattern(
            r"\b(?:pin|pin code|pin number|passcode|pass code)(?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s:]+){1,3}?)?"
            r"(?:[ \t]+(?:is|was)|[ \t]*[=:])(?:[ \t]*:)?[ \t]*[\"'`]?(?P<v>[0-9]{4,12})\b"
        ),
        "[REDACTED:password]",
        ("pin ", "pin\t", "pin:", "pin=", "passcode", "pass code"),  # "pin" alone is in "mapping", "typing"
        ignore_case=True,
        check=_pin,
    ),
    # A one-time-password seed (base32) named in prose: "the 2FA secret is JBSWY3DP...", "authenticator key: ...",
    # "MFA seed ...", as authenticator apps show it (`jbsw y3dp ehpk 3pxp`) too.
    Rule(
        "otp_seed",
        Pattern(
            r"\b(?:2fa|mfa|otp|totp|hotp|two[ -]factor|authenticator)"
            r"(?:[ _-](?:app|auth|authentication|secret|seed|key|setup|code|shared))*"
            r"(?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s:]+){1,3}?)?"
            r"(?:[ \t]+(?:is|was)[ \t]+|[ \t]*[=:][ \t]*|[ \t]+)[\"'`]?"
            r"(?P<v>[a-z2-7]{16,}|[a-z2-7]{4}(?: [a-z2-7]{4}){3,})\b"
        ),
        "[REDACTED:secret]",
        ("2fa", "mfa", "otp", "two factor", "two-factor", "authenticator"),  # not "factor": "refactor"
        ignore_case=True,
        check=_otp_seed,
    ),
    # Backup and recovery codes: "recovery codes are 4821-9931 7712-0034", each code of the list.
    Rule(
        "recovery_codes",
        Pattern(
            rf"\b(?:{_CODE_KINDS})[ _-]codes?(?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s:]+){{1,3}}?)?"
            rf"(?:{_S}+(?:are|is|were|was)(?:{_S}*:)?{_S}+|{_S}*[=:]{_S}*|{_S}+)"
            r"(?P<v>[a-z0-9-]*[0-9][a-z0-9-]*(?:(?:[ \t]*[,;][ \t]*|[ \t]+|[ \t]*\r?\n[ \t]*(?:[-*][ \t]+)?)"
            r"(?:and[ \t]+)?[a-z0-9-]*[0-9][a-z0-9-]*)*)"
        ),
        "[REDACTED:secret]",
        tuple(f"{kind}{sep}code" for kind in _CODE_KIND_WORDS for sep in " _-"),
        ignore_case=True,
        check=_recovery_codes,
    ),
    # A login and its password in prose: "creds are admin:Falc0n!", "the login for staging is admin and ...",
    # "log in as admin / ...", "username and password: admin, ...", on one line; `admin/...` unspaced is a path.
    # The password must look like one (`named_in_prose`).
    Rule(
        "login_pair",
        Pattern(
            r"\b(?:creds|credentials|login|log[ -]?in|sign[ -]?in|user(?:name)?(?:/| and | & )pass(?:word)?)"
            r"(?:[ \t]+(?:for|of|on|to)(?:[ \t]+[^\s:]+){1,3}?)?"
            r"(?:[ \t]+(?:is|are|was|were)|[ \t]*[=:]|[`'\"]?[ \t]+(?:as|with))(?:[ \t]*:)?[ \t]+"
            rf"[\"'`]?{_USER}[\"'`]?(?:[ \t]+/[ \t]+|:|[ \t]+(?:and|&)[ \t]+|,[ \t]*)"
            rf"(?:[\"'`](?P<q>[^\"'`\n]{{4,}})[\"'`]|(?P<v>{_WORDY}*[0-9]{_WORDY}*|{_WORDY}*{_SIGN}{_WORDY}+))"
        ),
        "[REDACTED:password]",
        # ("log", "sign" and "user" alone are in most texts)
        (
            "creds",
            "credentials",
            "login",
            "log in",
            "log-in",
            "signin",
            "sign in",
            "sign-in",
            "/pass",
            "and pass",
            "& pass",
        ),
        ignore_case=True,
        check=_named_in_prose,
    ),
]
