"""Transcript readers: one per format, each normalising files into the same message rows."""

from __future__ import annotations

from core.transcripts.claude_code import load_claude_code
from core.transcripts.codex import load_codex
from core.transcripts.detect import FORMATS, Format, detect_format, session_id_for
from core.transcripts.messages import load_messages, parse_messages

__all__ = [
    "FORMATS",
    "Format",
    "detect_format",
    "load_claude_code",
    "load_codex",
    "load_messages",
    "parse_messages",
    "session_id_for",
]
