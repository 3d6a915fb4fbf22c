"""Secrets of the web, in headers and URLs.

An Authorization header, a bearer token, a URL's password, a webhook or a signed URL.

A webhook carries its secret in its path (Slack, Discord, Teams) or a signature (Azure Logic Apps), as a presigned
S3 or GCS URL does: whoever has the URL has the access.
"""

from __future__ import annotations

from core.patterns import SPACE, Match, Pattern
from core.secret_rule import Rule, Span, not_a_marker, not_placeholder

__all__ = ["WEB_RULES"]

_S, _NS = f"[{SPACE}]", f"[^{SPACE}]"  # Python's whitespace as a class, and any other character (RE2's `\s` is ASCII)


def _password_of_url(m: Match, span: Span) -> Span | None:
    """The password of a `scheme://user:password@h` match: after the first `:` past `://` (a user holds none) to
    the match's last `@` (the match ends with it and one character of the host)."""
    start = m.string.index(":", m.string.index("://", span[0]) + 3) + 1
    return not_a_marker(m, (start, span[1] - 2))


WEB_RULES: list[Rule] = [
    Rule(
        "authorization",
        Pattern(rf"authorization{_S}*[:=]{_S}*[\"']?(?:basic|bearer|token|digest){_S}+(?P<v>[^{SPACE}\"',;\\]+)"),
        "[REDACTED:token]",
        ("authorization",),
        ignore_case=True,
        check=not_placeholder,
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
    # (No group for the password: a capture makes RE2 walk the whole match again for it, 25 ns a byte of a long
    # word; `_password_of_url` finds it in the match instead.)
    Rule(
        "connection_string",
        Pattern(rf"\b[a-z][a-z0-9+.\-]*://[^{SPACE}:/@\[\]]+:{_NS}+@[^{SPACE}@]"),
        "[REDACTED:password]",
        ("://",),
        check=_password_of_url,
    ),
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
]
