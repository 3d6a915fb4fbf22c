"""A web route in a span is a route, a system path a file; a markdown link to a section of one of the repository's
documents is a file, the same name with a port or a scheme a host."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.code_spans import SYSTEM_ROOTS
from core.screen import text_holds

ADMITTED = [
    "The public API is versioned under `/v2`; `/v1` is frozen, do not change it.",
    "The frontend proxies `/api` to the backend in `vite.config.ts`.",
    "The API schema is served at `/openapi.json`.",
    "Next steps are in [the plan](plan.md#next).",
    "Setup is in [the guide](CONTRIBUTING.md#setup).",
]
HELD = [
    ("Read `/etc/passwd` to find the service user.", "path"),
    ("Copy the key from `/.ssh/id_rsa`.", "path"),
    ("Logs are in `/var/log/app`.", "path"),
    ("See [the notes](evil.md:8080#next).", "link"),
    ("See [the notes](https://evil.md#next).", "link"),
    ("See evil.md#next for the fix.", "link"),
]


@pytest.mark.parametrize("text", ADMITTED)
def test_a_route_or_a_documents_section_is_admitted(text: str) -> None:
    assert text_holds(text) == []


@pytest.mark.parametrize(("text", "rule"), HELD)
def test_a_system_path_or_a_host_is_held(text: str, rule: str) -> None:
    assert rule in [h.rule for h in text_holds(text)]


@given(st.sampled_from(sorted(SYSTEM_ROOTS)), st.from_regex(r"[a-z0-9_.-]{0,12}", fullmatch=True))
def test_a_path_under_a_system_root_is_never_a_route(root: str, rest: str) -> None:
    assert "path" in [h.rule for h in text_holds(f"Look in `/{root}/{rest}`.")]
