"""A setting in code or configuration that switches a safeguard off.

Judged by the words of its key and its value (`rejectUnauthorized: false`, `verify=False`, `InsecureSkipVerify:
true`, `allow_origins = ["*"]`, "set rejectUnauthorized to false"), and an identifier that says one off. Pure
functions.
"""

from __future__ import annotations

import re2

from core.prohibitions import prohibited

__all__ = ["IDENTIFIER", "SETTING", "setting_off"]

# A setting in code or configuration, in any language's spelling (`rejectUnauthorized: false`, `verify=False`,
# `"InsecureSkipVerify": true`, "set rejectUnauthorized to false", `ssl_verify_mode: none`), and an identifier a
# setting is made with (`ssl._create_unverified_context`). What it turns on or off is read from the words of its key.
# Parts of a key that name a safeguard, and parts that say it is off when the key is set true.
_SAFEGUARD_PARTS = (
    "verif", "ssl", "tls", "cert", "csrf", "xsrf", "secur", "https", "httponly", "escap", "sanitiz", "hostkey",
    "host_key", "unauthorized", "signature", "integrity", "sandbox", "protect", "hsts", "cors", "origin",
    "fail_under", "fail-under",
)  # fmt: skip
_NEGATING_PARTS = (
    "insecure", "skip", "disabl", "unverified", "unsafe", "ignor", "bypass", "trustall", "trust_all", "allowall",
    "allow_all", "dangerous", "exempt", "permissive", "invalid", "noverify", "no_verify", "unchecked",
)  # fmt: skip
_SAFEGUARD_KEY = "|".join(
    [
        *_SAFEGUARD_PARTS,
        "origin",
        "allowed_?hosts",
        "cors",
        "shell",
        "privileged",
        "host_?network",
        "host_?pid",
        "host_?ipc",
        "privilege_?escalation",
        "principal",
        "allow",
        "continue-on-error",
        "continue_on_error",
    ]
)
# Keys that switch argument quoting off when set true: a command line handed to a shell (`shell=True`), where a
# filename is read as shell syntax.
# So do a container's keys that hand it the host (`privileged: true`, `hostNetwork: true`).
_SHELL_KEYS = frozenset(
    {
        "shell",
        "privileged",
        "hostnetwork",
        "host_network",
        "hostpid",
        "host_pid",
        "hostipc",
        "host_ipc",
        "allowprivilegeescalation",
        "allow_privilege_escalation",
        # and a CI job's keys that let it fail without failing the build
        "continue-on-error",
        "continue_on_error",
        "allow_failure",
        "allow-failure",
    }
)
_NEGATING_KEY = "|".join(_NEGATING_PARTS)
# Only a key that names a safeguard is read (the pattern says so, so most texts are passed over in one pass).
SETTING = re2.compile(
    rf"\b([\w.-]*(?:{_SAFEGUARD_KEY})[\w.-]*)[\"'`\]]?(?:\s*(?:=>|:=|==|=|:)\s*"
    r"|\s+(?:(?:is|are|be)\s+)?(?:set\s+)?(?:(?:option|setting|flag|value|field|key|variable|parameter|property)\s+)?"
    r"to\s+)[\[(]?\s*[\"'`]?"
    r"(false|0|off|no|none|null|nil|disabled?|never|true|1|on|yes|enabled?|always|\*)(?:[^\w*]|$)"
)
# An identifier (dotted or snake_case, never a word of prose: "unverified e-mails") that says a safeguard off.
IDENTIFIER = re2.compile(
    rf"\b((?:[a-z0-9]+[._])+[a-z0-9_.]*(?:{_NEGATING_KEY})[a-z0-9_.]*"
    rf"|[a-z0-9_.]*(?:{_NEGATING_KEY})[a-z0-9]*(?:[._][a-z0-9]+)+)"
)
_ON = frozenset("true 1 on yes enabled enable always".split())
# Keys of an access list: set to `*`, open to everyone (an S3 policy's `Principal`, the agent's own `allow` list).
_OPEN_ACCESS = ("origin", "allowed_hosts", "allowedhosts", "cors", "principal", "allow")


def _key_words(key: str) -> tuple[bool, bool]:
    """(whether `key` names a safeguard, whether it says it off when set true): `verify_ssl` (a safeguard),
    `insecure_skip_verify` (one, said off)."""
    negated = any(part in key for part in _NEGATING_PARTS)
    negated = negated or "no" in key.replace("-", "_").replace(".", "_").split("_")  # `git_ssl_no_verify`
    names = any(part in key for part in _SAFEGUARD_PARTS)
    return names, negated


def _turns_off(words: tuple[bool, bool]) -> bool:
    """True for an identifier that names a safeguard and says it off (`ssl._create_unverified_context`)."""
    return words[0] and words[1]


def _setting_off(key: str, value: str) -> bool:
    """True when setting `key` to `value` switches a safeguard off: a key naming one set to an off value, or one
    saying it off set true; an access list (`allow_origins`) opened to everyone (`*`)."""
    if value == "*":
        return any(part in key for part in _OPEN_ACCESS)
    if key.rsplit(".", 1)[-1] in _SHELL_KEYS:
        return value in _ON
    names, negated = _key_words(key)
    return names and (value in _ON) == negated


def setting_off(folded: str) -> re2._Match | None:
    """The first setting in code or configuration of `folded` (cut into `sentences`) that switches a safeguard off
    and is not prohibited, or an identifier that says one off (`ssl._create_unverified_context`) and is set to no
    value of its own."""
    keys = set()  # where a key set to a value ends: that identifier is judged with its value, not alone
    for match in SETTING.finditer(folded):
        if _setting_off(match.group(1), match.group(2)) and not prohibited(folded, match.start(), match.end()):
            return match
        keys.add(match.end(1))
    for match in IDENTIFIER.finditer(folded):
        if match.end(1) in keys:
            continue
        if _turns_off(_key_words(match.group(1))) and not prohibited(folded, match.start(), match.end()):
            return match
    return None
