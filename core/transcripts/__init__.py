"""Transcript readers: one per format, each normalising files into the same message rows."""

from __future__ import annotations

from core.transcripts.claude_code import load_claude_code
from core.transcripts.codex import load_codex
from core.transcripts.detect import FORMATS, Detected, Format, detect
from core.transcripts.memory import load_memory
from core.transcripts.messages import load_messages, parse_messages

__all__ = [
    "FORMATS",
    "Detected",
    "Format",
    "detect",
    "load_claude_code",
    "load_codex",
    "load_memory",
    "load_messages",
    "parse_messages",
]
