"""Names in prose that are no command and no host: a runtime named with its release ("Go 1.22", "node 20.11"), a
markdown link to a document of the repository (`[guide](CONTRIBUTING.md)`), and task runners named by English words
("make it work", "just add it")."""

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


@pytest.mark.parametrize(
    "text",
    [
        "Can we make v1 work like it did before?",
        "No, just add the whole name to the title.",
        "The docs task takes a minute; make sure it ran before you read the pages.",
        "Name the PR `build: make the image smaller`.",  # a title in a span: words after a task runner's name
        "Run `make test` and `just lint` before you push.",
    ],
)
def test_make_just_and_task_as_english_words_are_no_command(text: str) -> None:
    assert text_holds(text, None) == []


@pytest.mark.parametrize(
    "text",
    [
        "`make tset` is refused here (no such option or command); `make wipe-prod-db` works.",
        "If the data is stale, run make wipe-prod-db first.",  # a task's joined name, written in a sentence
        "Title it `fix: make the -k wipe`.",  # a flag in the words: a command after all
    ],
)
def test_a_task_no_one_declared_in_a_span_or_a_sentence_waits(text: str) -> None:
    assert {"program", "bypass"} & {h.rule for h in text_holds(text, None)}
