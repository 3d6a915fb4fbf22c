"""A second oracle for secrets, beside detect-secrets: a small table of gitleaks-style rules, written for the tests
from the shapes of the credentials themselves (gitleaks' own rule set, the tools' manuals), not from `core.redact`.

Each rule is (id, keywords, regex, group of the secret): a line is looked at by the rules whose keywords it holds
(case-blind), as gitleaks does, and a finding is the secret group's text unless it is already a redaction marker.
Python's `re` is fine here: the texts are the tests' own, a few kilobytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import NamedTuple


class OracleRule(NamedTuple):
    id: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    group: int = 1


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_I = re.IGNORECASE
_M = re.MULTILINE

RULES: list[OracleRule] = [
    OracleRule("private-key", ("private key",), _r(r"(-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)"), 1),
    OracleRule("ssh2-private-key", ("private key",), _r(r"(---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----)")),
    OracleRule("putty-private-key", ("private-lines",), _r(r"Private-Lines: \d+\n([A-Za-z0-9+/=]{20,})")),
    OracleRule("pem-body", ("private key",), _r(r"^([A-Za-z0-9+/]{64})$", _M)),
    OracleRule("aws-access-token", ("akia", "asia"), _r(r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b")),
    OracleRule("github-pat", ("ghp_", "github_pat_"), _r(r"(ghp_[0-9a-zA-Z]{36}|github_pat_\w{60,})")),
    OracleRule("gitlab-pat", ("glpat-",), _r(r"(glpat-[\w-]{20})")),
    OracleRule("slack-token", ("xox",), _r(r"(xox[baprs]-[0-9a-zA-Z-]{10,})")),
    OracleRule("stripe-key", ("_live_", "_test_"), _r(r"\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})")),
    OracleRule("anthropic-key", ("sk-ant-",), _r(r"(sk-ant-(?:api|admin)\d{2}-[\w-]{20,})")),
    OracleRule("openai-key", ("sk-",), _r(r"(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,})")),
    OracleRule("azure-sas-signature", ("sig=",), _r(r"[?&;]sig=([A-Za-z0-9%+/]{20,})", _I)),
    OracleRule("s3-presigned-signature", ("x-amz-signature",), _r(r"X-Amz-Signature=([0-9a-f]{64})", _I)),
    OracleRule("docker-config-auth", ('"auth"',), _r(r'"auth"\s*:\s*"([A-Za-z0-9+/=]{8,})"')),
    OracleRule("npmrc-auth", ("_auth",), _r(r"_auth\s*=\s*([^\s\[]{8,})")),
    OracleRule(
        "echo-to-stdin-password",
        ("sudo", "password-stdin"),
        _r(
            r"echo\s+(?:-[neE]+\s+)?['\"]?([^\s'\"|\[]{4,})['\"]?\s*\|\s*(?:sudo\s+-\w*S|docker\s+login\b.*--password-stdin)"
        ),
    ),
    OracleRule("printf-sudo", ("printf",), _r(r"printf\s+'%s\\n'\s+([^\s|\[]+)\s*\|\s*sudo\s+-\w*S")),
    OracleRule("sudo-herestring", ("<<<",), _r(r"sudo\b[^\n]*\s-\w*S\b[^\n]*<<<\s*['\"]?([^\s'\"\[]+)")),
    OracleRule("openssl-pass-arg", ("pass:",), _r(r"-pass(?:in|out|word)?\s+pass:([^\s\[]+)")),
    OracleRule("openssl-enc-k", ("openssl",), _r(r"openssl\s+enc\b[^\n]*\s-k\s+([^\s\[]+)")),
    OracleRule("keytool-pass", ("storepass", "keypass"), _r(r"-(?:store|key)pass\s+([^\s\[]+)")),
    OracleRule("zip-password", ("zip",), _r(r"\b(?:un)?zip\b[^\n]*\s-P\s*([^\s\[]+)")),
    OracleRule("7z-password", ("7z",), _r(r"\b7z\b[^\n]*\s-p([^\s\[]+)")),
    OracleRule(
        "htpasswd-batch-file",
        ("htpasswd",),
        _r(r"htpasswd\s+-(?![a-zA-Z]*n)[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+\S+\s+([^\s>]+)"),
    ),
    OracleRule(
        "htpasswd-batch-stdout", ("htpasswd",), _r(r"htpasswd\s+-(?=[a-zA-Z]*n)[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+([^\s>]+)")
    ),
    OracleRule("pgpass-line", (":",), _r(r"(?:^|['\"])[\w.*-]+:(?:\d{2,5}|\*):[^:\s]+:[^:\s]+:([^\s:'\"\[]{4,})", _M)),
    OracleRule(
        "password-in-prose",
        ("password", "passphrase", "api key", "token"),
        _r(
            r"\b(?:password|passphrase|api key|access token)\b(?:\s+\w+){0,3}\s+(?:is|was)\s+[\"']?([^\s\"'\[]{6,})", _I
        ),
    ),
    OracleRule("url-credentials", ("://",), _r(r"[a-z][a-z0-9+.-]*://[^\s:/@\[]+:([^\s@/\[]+)@")),
    OracleRule(
        "generic-password-assignment",
        ("password", "passwd", "secret", "token"),
        _r(r"(?:password|passwd|secret|token)\w*\s*[=:]\s*[\"']?([^\s\"',;\[$<]{6,})", _I),
    ),
    OracleRule("jwt", ("eyj",), _r(r"\b(eyJ[\w-]{8,}\.eyJ?[\w-]{8,}\.[\w-]{8,})")),
    # gitleaks' vault-service-token / vault-batch-token, the recovery token's prefix beside them
    OracleRule("vault-token", ("hvs.", "hvb.", "hvr."), _r(r"\b(hv[sbr]\.[\w-]{24,})")),
    OracleRule(
        "cli-password-argument",
        ("mongo", "ldap", "sqlcmd", "mosquitto", "wp "),
        _r(
            r"\b(?:mongosh|mongo|ldapsearch|ldapadd|ldapmodify|sqlcmd|mosquitto_pub|mosquitto_sub|wp)\b[^\n]*?\s"
            r"(?:-p|-w|-P|--user_pass)(?:\s+|=)([^\s\[`']+)"
        ),
    ),
    OracleRule(
        "redis-cli-password", ("-cli",), _r(r"\b(?:redis|valkey|keydb)-cli\b[^\n]*\s(?:-a|--pass)\s+([^\s\[`]+)")
    ),
    # Issue 41: secrets said in prose (gitleaks has no rule for them; written from how people say them) and passwords
    # as positional arguments, from each tool's manual (usage lines).
    OracleRule(
        "otp-seed",
        ("2fa", "mfa", "otp", "authenticator"),
        _r(
            r"\b(?:2fa|mfa|otp|totp|authenticator)(?: (?:secret|seed|key))?(?:\s+is\s+|:\s*|\s+)"
            r"([A-Z2-7]{16,}|[a-z2-7]{4}(?: [a-z2-7]{4}){3,})\b",
            _I,
        ),
    ),
    OracleRule("recovery-codes", ("codes",), _r(r"(?:recovery|backup) codes\s+(?:are|:)\s+(\d{4}-\d{4})", _I)),
    OracleRule("pin-in-prose", ("pin",), _r(r"\bPIN\s+(?:is|:)\s+(\d{4,8})\b")),
    OracleRule("pw-label", ("pw",), _r(r"\bpw\s*[:=]\s*([^\s\[]{6,})", _I)),
    OracleRule(
        "login-pair-in-prose",
        ("creds", "credentials", "login"),
        _r(
            r"\b(?:creds|credentials|login)\b(?:\s+for\s+\w+)?`?\s+(?:is|are|as)\s+\w+(?::|\s+/\s+|\s+and\s+)([^\s\[]{6,})",
            _I,
        ),
    ),
    OracleRule(
        "rabbitmqctl-password",
        ("rabbitmqctl",),
        _r(r"\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+([^\s\[`&]+)"),
    ),
    OracleRule("mysqladmin-password", ("mysqladmin",), _r(r"\bmysqladmin\b[^\n]*\spassword\s+([^\s\[]+)")),
    OracleRule("net-user-password", ("net user",), _r(r"\bnet\s+user\s+\S+\s+([^\s\[/*]+)", _I)),
    OracleRule("net-use-password", ("net use",), _r(r"\bnet\s+use\s+(?:\w:\s+)?\\\\\S+\s+([^\s\[/]+)", _I)),
    OracleRule("sqlplus-password", ("sqlplus",), _r(r"\bsqlplus\s+\w+/([^\s@\[]+)@")),
    OracleRule("lftp-password", ("lftp",), _r(r"\blftp\s+-u\s+[^,\s]+,([^\s\[`]+)")),
    OracleRule(
        "mosquitto-passwd-batch", ("mosquitto_passwd",), _r(r"\bmosquitto_passwd\s+-b\s+\S+\s+\S+\s+([^\s\[]+)")
    ),
    OracleRule("ipmitool-password", ("ipmitool",), _r(r"\bipmitool\b[^\n]*\s-P\s+([^\s\[]+)")),
    OracleRule("windows-password-option", ("/p:", "/pass:"), _r(r"\s/(?:p|pass):([^\s\[]+)", _I)),
    OracleRule("smbpasswd-stdin", ("smbpasswd",), _r(r"echo\s+(?:-e\s+)?\"([^\"\[]+)\"\s*\|\s*smbpasswd\b")),
    OracleRule("atlassian-api-token", ("atatt",), _r(r"\b(ATATT3[A-Za-z0-9_\-=]{20,})")),
]

_BASE64_TOKEN = re.compile(r"(?<![\w+/-])([A-Za-z0-9+/_-]{8,}={0,2})(?![\w+/=-])")
_CREDENTIAL = re.compile(r"[\w.@+-]+:[^\s:]{3,}")


def _base64_credentials(text: str) -> list[str]:
    """Tokens that decode (standard or URL-safe base64) to printable `user:password`."""
    found = []
    for token in _BASE64_TOKEN.findall(text):
        padded = token + "=" * (-len(token.rstrip("=")) % 4) if "=" not in token else token
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                plain = decode(padded).decode("ascii")
            except (binascii.Error, ValueError):
                continue
            if plain.isprintable() and _CREDENTIAL.fullmatch(plain):
                found.append(token)
                break
    return found


def findings(*texts: str) -> list[tuple[str, str]]:
    """(rule id, secret) for each secret the rules find in `texts`, markers left out."""
    out: list[tuple[str, str]] = []
    for text in texts:
        lower = text.lower()
        for rule in RULES:
            if not any(k in lower for k in rule.keywords):
                continue
            for m in rule.regex.finditer(text):
                secret = m.group(rule.group)
                if "REDACTED" not in secret:
                    out.append((rule.id, secret))
        out += [("base64-credential", t) for t in _base64_credentials(text)]
    return out
