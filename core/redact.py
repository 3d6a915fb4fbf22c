"""Redaction: nothing that looks like a credential, and no personal data, leaves the machine.

Secrets (`redact`) are replaced by a `[REDACTED:kind]` marker. Personal data (`Redactor`) is normalised:
a home directory becomes `~` (this machine's, and any `/Users/NAME`, `/home/NAME`, `C:\\Users\\NAME` in a
transcript written elsewhere), the user name inside Claude Code's encoded project folders
(`-Users-NAME-...`) becomes `USER`, e-mail addresses and the configured extra patterns (names, hosts) are
masked. Both apply before text reaches a model, a playbook entry, an export or a report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.models import Playbook

__all__ = ["PATTERNS", "PERSONAL_PATTERNS", "Redactor", "mask_playbook", "redact"]

# (name, pattern, replacement); a replacement may keep a group (the key name) for readability.
PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    (
        "private_key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.DOTALL),
        "[REDACTED:private_key]",
    ),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), "[REDACTED:api_key]"),
    ("openai_key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"), "[REDACTED:api_key]"),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[REDACTED:aws_key]"),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        "[REDACTED:github_token]",
    ),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "[REDACTED:slack_token]"),
    ("google_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), "[REDACTED:api_key]"),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "[REDACTED:jwt]"),
    ("bearer", re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/\-]{16,}=*"), r"\1 [REDACTED:token]"),
    ("connection_string", re.compile(r"\b([a-z][a-z0-9+.\-]*://[^\s:/@]+):[^\s@/]+@"), r"\1:[REDACTED:password]@"),
    (
        "assignment",
        re.compile(
            r"(?i)\b([A-Z0-9_]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token))"
            r"(\s*[=:]\s*|\"\s*:\s*\")(?!\[REDACTED)([^\s\"',;]{4,})"
        ),
        r"\1\2[REDACTED:secret]",
    ),
]


def redact(text: str) -> tuple[str, int]:
    """`text` with every secret-looking span replaced, and how many were replaced."""
    total = 0
    for _, pattern, replacement in PATTERNS:
        text, n = pattern.subn(replacement, text)
        total += n
    return text, total


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


def mask_playbook(playbook: Playbook, redactor: Redactor) -> Playbook:
    """`playbook` with every entry text cleaned; the very same object when nothing needed it."""
    changed = False
    sections = {}
    for name, items in playbook.sections.items():
        cleaned = []
        for entry in items:
            text = redactor.text(entry.text)
            changed = changed or text != entry.text
            cleaned.append(entry if text == entry.text else entry.model_copy(update={"text": text}))
        sections[name] = cleaned
    return playbook.model_copy(update={"sections": sections}) if changed else playbook
