"""Hypothesis profiles: `ci` runs each property with the example count it asks for; `dev` (the default
for a local `make test`) runs a fifth of them, so the loop stays quick. `.ci/run` selects `ci`."""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """How many examples a property asking for `n` runs under the active profile."""
    return n if PROFILE == "ci" else max(10, n // 5)
