"""The `replay` provider: recorded raw model texts from a JSONL file.

One object per line: `{"session_id": "...", "step": "reflector" | "curator" | "reflection", "text": "..."}`.
The text goes through exactly the same extraction and validation as a live response; a session/step
with no line behaves like a call that failed after retries.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.errors import ConfigError
from core.llm.base import LLMRequest, LLMResponse, Provider

__all__ = ["ReplayProvider"]


class ReplayProvider(Provider):
    """Answers from a recording. Never raises once constructed."""

    name = "replay"
    cacheable = False

    def __init__(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"Cannot read replay file `{path}`: {exc.strerror}; pass --llm replay:FILE.") from exc
        self.path = path
        self.texts: dict[tuple[str, str], str] = {}
        self.bad_lines = 0
        for line in lines:
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                key = (str(item["session_id"]), str(item["step"]))
                text = item["text"]
            except (ValueError, KeyError, TypeError):
                self.bad_lines += 1
                continue
            self.texts[key] = text if isinstance(text, str) else json.dumps(text)

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The recorded text for (session, step), or an error like a failed call."""
        text = self.texts.get((request.session_id or "", request.step))
        if text is None:
            return LLMResponse(
                provider=self.name,
                model=f"replay:{self.path.name}",
                error=f"no recorded {request.step} response for session {request.session_id}",
            )
        return LLMResponse(text=text, provider=self.name, model=f"replay:{self.path.name}")
