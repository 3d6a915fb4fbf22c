"""A process-wide progress listener, so the CLI can draw a bar for a flow it starts."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Listener", "emit", "listen"]

Listener = Callable[[str, int, int], None]
_listener: Listener | None = None


def listen(listener: Listener | None) -> None:
    """Receive (phase, done, total) updates; None stops."""
    global _listener
    _listener = listener


def emit(phase: str, done: int, total: int) -> None:
    """Report progress of a phase."""
    if _listener is not None:
        _listener(phase, done, total)
