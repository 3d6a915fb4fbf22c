"""Secrets assigned in configuration files and code.

`.netrc`, `.pgpass`, environment files and shell exports, a registry's auth (Docker's config.json, npm's `_auth`),
and a value assigned to a name that says it is secret (`password = ...`, `"api_key": "..."`).
"""

from __future__ import annotations

from core.patterns import SPACE, Match, Pattern
from core.secret_rule import Rule, Span, not_placeholder

__all__ = ["ASSIGNMENT_RULES"]

_S, _NS = f"[{SPACE}]", f"[^{SPACE}]"  # Python's whitespace as a class, and any other character (RE2's `\s` is ASCII)
_V = f"[^{SPACE}\"',;]"  # a character of an unquoted assigned value


def _value(excluded: str, least: int) -> str:
    """A value of `least` or more characters outside `excluded` (a class body), that RE2 itself tells from the commonest
    placeholders: not starting with `$`, `<`, `%` or `(`, not all digits, not a bare None/null/nil/true/false/undefined.

    `placeholder` still decides (`{{`, `os.`, `1.5`, a call...); this only keeps a text dense with placeholders
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
_KEY_NAME = (
    r"(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|auth[_-]?token"
    r"|access[_-]?token|refresh[_-]?token|client[_-]?secret|credentials?|token)(?:[_-]?(?:access[_-]?key|key|value))?"
)
_ASSIGNMENT_TRIGGERS = ("pass", "pwd", "secret", "key", "token", "credential")


def _pgpass(m: Match, span: Span) -> Span | None:
    # host:port:database:user:password; a time of day with fields (12:30:45:123:456) is all digits
    fields = [m.group(g) or "" for g in ("host", "db", "user")] + [m.string[span[0] : span[1]]]
    return None if all(f.isdecimal() for f in fields) else span


ASSIGNMENT_RULES: list[Rule] = [
    # .netrc: `machine HOST login USER password SECRET`, on one line or several.
    Rule(
        "netrc",
        Pattern(rf"\blogin{_S}+{_NS}+{_S}+password{_S}+(?P<v>{_NS}+)"),
        "[REDACTED:password]",
        ("password",),
        ignore_case=True,
        check=not_placeholder,
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
        check=not_placeholder,
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
        check=not_placeholder,
        shape=r'(?i:auth\\?"|identitytoken|registrytoken|_auth)',
    ),
    Rule(
        "quoted_assignment",
        Pattern(_KEY_NAME + rf"\\?\"?{_S}*[=:]{_S}*\\?(?:\"(?P<q>[^\"'\n]{{4,}}?)\\?\"|'(?P<a>[^\"'\n]{{4,}}?)\\?')"),
        "[REDACTED:secret]",
        _ASSIGNMENT_TRIGGERS,
        ignore_case=True,
        check=not_placeholder,
    ),
    Rule(
        "assignment",
        Pattern(_KEY_NAME + rf"{_S}*[=:]{_S}*(?P<v>{_VALUE4})"),
        "[REDACTED:secret]",
        _ASSIGNMENT_TRIGGERS,
        ignore_case=True,
        check=not_placeholder,
        shape=f"(?i:{_KEY_NAME}{_S}*[=:]{_S}*{_V}{{4,}})",
    ),
]
