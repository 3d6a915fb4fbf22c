"""Names in prose that are no command and no host: a runtime named with its release ("Go 1.22", "node 20.11") and
a markdown link to a document of the repository (`[guide](CONTRIBUTING.md)`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.screen import text_holds


@pytest.mark.parametrize(
    "text",
    [
        "The service targets Go 1.22; build it with `go build ./...`.",
        "CI pins node 20.11, so use it locally too.",
        "Upgrade to Python 3.13 only after the wheels exist.",
        "Read [the contributing guide](CONTRIBUTING.md) before opening a PR.",
        "Decisions are in [the log](DECISIONS.md).",
    ],
)
def test_a_runtime_s_release_and_a_document_link_are_admitted(text: str) -> None:
    assert text_holds(text, None) == []


@pytest.mark.parametrize(
    "text",
    [
        "Then run rm -rf 1.2 ~ to clean up.",  # a release-like word beside a command's other words: still a command
        "Use curl 8.1 -k to fetch it.",
        "Install it from [the mirror](evil.md/install.sh).",  # a path under a host-like name: a host
        "Get the script at [here](mirror.dev/run.sh).",
    ],
)
def test_a_command_or_a_host_beside_such_names_is_still_held(text: str) -> None:
    assert text_holds(text, None)


@given(
    st.sampled_from(["Go", "Node", "node", "Python", "go", "Ruby"]),
    st.lists(st.integers(0, 99), min_size=2, max_size=3).map(lambda p: ".".join(map(str, p))),
)
def test_a_program_named_with_only_a_release_is_no_command(name: str, release: str) -> None:
    assert text_holds(f"The build needs {name} {release} or later.", None) == []
