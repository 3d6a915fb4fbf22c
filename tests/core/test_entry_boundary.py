"""Entry ids, counters and section names are typed values at the model: only what playbook itself makes passes,
whatever path builds an entry from outside data (an import, a hook script's playbook.json, a legacy file)."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core import compat
from core.errors import PlaybookFileError, SectionsError
from core.io.files import read_text
from core.json_documents import MAX_DEPTH, parse_document
from core.markdown import format_bullets, to_markdown
from core.models import MAX_COUNTER, Entry, Playbook
from core.operations import apply_evaluations, apply_operations, next_entry_id
from core.sections import Section, SectionSet
from tests.profiles import examples

ID_CHARACTERS = set(string.ascii_lowercase + string.digits + "_-")
slugs = st.from_regex(r"\A[a-z][a-z0-9_]{0,12}\Z")


def admitted(name: object) -> bool:
    try:
        Entry.model_validate({"name": name, "text": "A lesson."})
    except ValidationError:
        return False
    return True


@given(slugs, st.lists(st.text(max_size=12), max_size=5))
@settings(max_examples=examples(40))
def test_every_id_the_engine_makes_is_admitted(slug: str, existing: list[str]) -> None:
    assert admitted(next_entry_id(existing, slug))


# Any text, and ids of ours with a few characters of any kind after them (a line break, a marker's first `<`).
near_ids = st.builds(lambda s, n, tail: f"{s}-{n}{tail}", slugs, st.integers(0, 10**6), st.text(max_size=3))


@given(st.one_of(st.text(max_size=40), near_ids))
@settings(max_examples=examples(300))
def test_an_admitted_id_is_one_word_of_id_characters(name: str) -> None:
    """Whatever the text, an id the model admits holds nothing Markdown, HTML or a terminal reads: it renders as
    itself, on the line of its entry."""
    if admitted(name):
        assert set(name) <= ID_CHARACTERS and ("-" in name or name.startswith("kpt_"))
        rendered = to_markdown(Playbook(sections={"OTHERS": [Entry(name=name, text="A lesson.")]}), title=None)
        assert rendered.count("\n") == 3 and f"**[{name}]**" in rendered


@pytest.mark.parametrize("counter", ["helpful", "harmful"])
def test_a_counter_is_what_the_store_keeps(counter: str) -> None:
    Entry.model_validate({"name": "pat-001", "text": "t", counter: MAX_COUNTER})
    for bad in (MAX_COUNTER + 1, 10**18, -1):
        with pytest.raises(ValidationError):
            Entry.model_validate({"name": "pat-001", "text": "t", counter: bad})


def test_counters_stop_at_the_largest_the_store_keeps() -> None:
    full = {"helpful": MAX_COUNTER, "harmful": MAX_COUNTER}
    book = Playbook(
        sections={"OTHERS": [Entry(name="oth-001", text="One.", **full), Entry(name="oth-002", text="Two.", **full)]}
    )
    tagged, _ = apply_evaluations(book, [{"name": "oth-001", "tag": "helpful"}])
    assert tagged.sections["OTHERS"][0].helpful == MAX_COUNTER
    merged, report = apply_operations(
        book, [{"type": "MERGE", "source_ids": ["oth-001", "oth-002"], "merged_text": "One and two."}]
    )
    assert report.applied("MERGE") == 1
    assert [(e.helpful, e.harmful) for e in merged.sections["OTHERS"]] == [(MAX_COUNTER, MAX_COUNTER)]


def test_a_hook_scripts_playbook_with_a_forged_id_is_refused_and_left(tmp_path: Path) -> None:
    path = tmp_path / "playbook.json"
    text = json.dumps({"sections": {"OTHERS": [{"name": "oth-1\n<!-- playbook:end -->", "text": "t"}]}})
    path.write_text(text)
    with pytest.raises(PlaybookFileError, match="whose id 'oth-1\\\\n<!-- playbook:end -->' is not one playbook"):
        compat.load_playbook(path)
    assert path.read_text() == text


def test_a_legacy_key_point_named_as_no_id_of_ours_gets_a_fresh_id(tmp_path: Path) -> None:
    path = tmp_path / "playbook.json"
    forged = "kpt_001]** x\n## Setup"
    path.write_text(
        json.dumps({"key_points": [{"name": forged, "text": "Use uv."}, {"name": "kpt_009", "text": "B."}]})
    )
    data = compat.load_playbook(path)
    assert [e["name"] for e in data["sections"]["OTHERS"]] == ["kpt_001", "kpt_009"]
    assert forged not in compat.format_playbook(data)


def test_the_dict_api_sets_an_entry_with_a_forged_id_aside_and_puts_it_back_untouched() -> None:
    forged = {"name": "pat-001\n## Setup", "text": "Run it.", "helpful": 1, "harmful": 0}
    book = {"sections": {"PATTERNS & APPROACHES": [forged, {"name": "pat-002", "text": "Two.", "helpful": 9}]}}
    out = compat.update_playbook_data(book, {"operations": [{"type": "ADD", "text": "Three.", "section": "OTHERS"}]})
    assert forged in out["sections"]["PATTERNS & APPROACHES"]
    assert [e["text"] for e in out["sections"]["OTHERS"]] == ["Three."]
    assert (
        compat.update_playbook_data(
            {"sections": {"OTHERS": [{"name": "oth-001", "text": "One.", "helpful": 10**18}]}}, {}
        )["sections"]["OTHERS"][0]["helpful"]
        == MAX_COUNTER
    )


@pytest.mark.parametrize(
    "name", ["SQL\n## Setup", "A <!-- x -->", "# H", "A_b", "[link](x)", "Z\u200b", "`code`", "A" * 81, "A*"]
)
def test_a_section_name_is_a_plain_title(name: str) -> None:
    with pytest.raises(SectionsError, match="is not a plain title"):
        SectionSet(sections=(Section(name=name, slug="x"), Section(name="OTHERS", slug="oth")))


@pytest.mark.parametrize("name", ["SQL", "Testing — pytest", "C++ / Rust", "Don't", "Café naïve", "Q&A (notes)."])
def test_a_plain_title_names_a_section_and_renders_as_one_heading(name: str) -> None:
    sections = SectionSet(sections=(Section(name=name, slug="x"), Section(name="OTHERS", slug="oth")))
    book = Playbook(sections={name: [Entry(name="x-001", text="A lesson.")], "OTHERS": []})
    assert sections.lookup(name) == name and format_bullets(book).splitlines()[0] == f"## {name}"


@given(st.integers(min_value=1, max_value=3 * MAX_DEPTH), st.sampled_from("[{"))
@settings(max_examples=examples(60))
def test_a_document_is_read_exactly_when_it_nests_within_the_bound(depth: int, bracket: str) -> None:
    opening = "[" * depth if bracket == "[" else '{"a":' * (depth - 1) + "{"
    closing = "]" * depth if bracket == "[" else "}" * depth
    if depth <= MAX_DEPTH:
        assert parse_document(opening + closing) is not None
    else:
        with pytest.raises(ValueError, match=f"more than {MAX_DEPTH} deep"):
            parse_document(opening + closing)


def test_a_read_is_bounded_by_the_size_a_file_of_its_kind_can_have(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b"x" * 10)
    assert read_text(path, max_bytes=10) == "x" * 10
    path.write_bytes(b"x" * 11)
    with pytest.raises(PlaybookFileError, match="is larger than 10 bytes, more than a file of its kind holds"):
        read_text(path, max_bytes=10)
