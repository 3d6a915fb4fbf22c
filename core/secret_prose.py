"""Secrets said in prose, as a person types them in a prompt.

A password or key named ("the password is hunter2x!", "API key: ..."), a PIN, a one-time-password seed, backup
and recovery codes, a login and its password; each only where the value looks like one (a word, a path or a file
name is passed over).
"""

from __future__ import annotations

from core.patterns import SPACE, Match, Pattern
from core.secret_rule import Rule, Span, ascii_alnum, placeholder

__all__ = ["PROSE_RULES"]

_S, _NS = f"[{SPACE}]", f"[^{SPACE}]"  # Python's whitespace as a class, and any other character (RE2's `\s` is ASCII)
# A user name as commands and prose give it beside a password: `admin`, `ci-bot`, `me@acme.io`, `ACME\\deploy`.
_USER = r"[a-z0-9._@+\\-]+"
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
    if len(core) < (4 if quoted else 6) or placeholder(text, span[0]):
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


PROSE_RULES: list[Rule] = [
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
