"""Vendors' keys and tokens, known by their prefixes, and Twilio's auth token beside its name.

A prefix says whose a key is (`sk-ant-`, `ghp_`, `AKIA`, `hvs.`, a JWT's `eyJ`); a Twilio token is 32 hex digits,
a secret only where the word `twilio` comes before it on the line.
"""

from __future__ import annotations

from core.patterns import Match, Pattern
from core.secret_rule import Rule, Span, ascii_alnum

__all__ = ["TOKEN_RULES"]


def _prefixed(prefixes: str, rest: str) -> Pattern:
    # `\b` before a prefix that starts with a word character: RE2's ASCII `\b` is Python's `(?<![A-Za-z0-9_])`.
    return Pattern(rf"\b(?:{prefixes}){rest}")


def _twilio_token(m: Match, span: Span) -> Span | None:
    # 32 hex digits standing alone, `twilio` at most 160 characters before them on the same line.
    if ascii_alnum(m.before()) or ascii_alnum(m.after()):
        return None
    window = m.string[max(0, span[0] - 166) : span[0]]
    at = window.rfind("twilio")
    return span if at >= 0 and "\n" not in window[at:] and at + 6 < len(window) else None


TOKEN_RULES: list[Rule] = [
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
    # HashiCorp Vault's tokens since 1.10: a service, batch or recovery token's prefix, then its body.
    Rule("vault_token", _prefixed(r"hv[sbr]\.", r"[A-Za-z0-9_-]{24,}"), "[REDACTED:token]", ("hvs.", "hvb.", "hvr.")),
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
]
