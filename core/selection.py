"""Which sessions are worth a model call: the rule that skips sessions too short to hold a lesson."""

from __future__ import annotations

__all__ = ["too_short"]


def too_short(n_messages: int, n_user_prompts: int, min_messages: int) -> str | None:
    """The skip reason when a session has fewer than `min_messages` messages or no user prompt, else None."""
    if n_messages < min_messages or n_user_prompts == 0:
        return (
            f"too short: {n_messages} messages, {n_user_prompts} user prompts"
            f" (minimum {min_messages} messages and 1 prompt)"
        )
    return None
