"""Marked blocks in CLAUDE.md / AGENTS.md: hand-written text is never lost, whatever the file holds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import PlaybookFileError
from core.markdown import BLOCK_BEGIN, BLOCK_END, replace_block
from tests.profiles import examples

BEGIN, END = BLOCK_BEGIN, BLOCK_END


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (f"# Notes\n{BEGIN}\nold lessons\n", "begin marker without an end marker"),
        (f"# Notes\n{END}\nhand\n{BEGIN}\nx\n{END}\n", "end marker without a begin marker before it (line 2)"),
        (f"{BEGIN}\na\n{END}\nhand\n{BEGIN}\nb\n{END}\n", "second playbook begin marker (line 5)"),
        (f"{BEGIN}\na\n{BEGIN}\nb\n{END}\n", "second playbook begin marker (line 3)"),
        (f"# Notes\n```md\n{BEGIN}\nexample\n{END}\n```\n", "inside a code fence (line 3)"),
        ("# Notes\n```\nunclosed example\n", "ends inside a code fence that is never closed"),
    ],
)
def test_unbalanced_markers_are_refused_with_one_line(document: str, message: str) -> None:
    with pytest.raises(PlaybookFileError) as refused:
        replace_block(document, "- new", source="CLAUDE.md")
    text = str(refused.value)
    assert "\n" not in text and text.startswith("`CLAUDE.md` ") and message in text
    assert text.endswith("Nothing was written.")


def test_crlf_files_keep_crlf() -> None:
    document = "# Notes\r\nkeep me\r\n"
    once = replace_block(document, "- a\n- b")
    assert once.startswith(document) and "\n" not in once.replace("\r\n", "")
    assert replace_block(once, "- a\n- b") == once  # a second export changes nothing


def test_markers_outside_a_fence_still_work_beside_a_fenced_example() -> None:
    document = f"# Notes\n```\nsome code\n```\n{BEGIN}\nold\n{END}\ntail\n"
    result = replace_block(document, "- new")
    assert result == f"# Notes\n```\nsome code\n```\n{BEGIN}\n- new\n{END}\ntail\n"


HAND = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30).filter(
    lambda s: "playbook:" not in s and not s.strip().startswith(("```", "~~~"))
)
LINE = st.one_of(HAND, HAND, HAND, st.just("```"), st.just(BEGIN), st.just(END))
BODY = st.lists(HAND, max_size=4).map(lambda lines: "\n".join(f"- {line}" for line in lines) or "- (empty)")


@settings(max_examples=examples(300))
@given(lines=st.lists(LINE, max_size=12), crlf=st.booleans(), bodies=st.lists(BODY, min_size=1, max_size=4))
def test_every_hand_written_line_survives_any_sequence_of_exports(
    lines: list[str], crlf: bool, bodies: list[str]
) -> None:
    newline = "\r\n" if crlf and lines else "\n"  # an empty file has no line ending to keep
    document = newline.join(lines) + (newline if lines else "")
    inside = False
    hand: list[str] = []  # the lines outside any block, in order
    for line in lines:
        if line == BEGIN:
            inside = True
        elif line == END:
            inside = False
        elif not inside:
            hand.append(line)
    current = document
    for body in bodies:
        try:
            updated = replace_block(current, body, source="AGENTS.md")
        except PlaybookFileError:
            continue  # refused: the file stays exactly as it was, so nothing hand-written is lost
        outside = updated.split(newline)
        start, end = outside.index(BEGIN), outside.index(END)
        kept = outside[:start] + outside[end + 1 :]
        assert [ln for ln in kept if ln] == [ln for ln in hand if ln]  # every hand-written line, in order
        assert updated.count(BEGIN) == 1 and updated.count(END) == 1
        assert replace_block(updated, body) == updated  # idempotent
        current = updated
