"""`core.patterns`: RE2 with `re`'s calling conventions and `str` offsets, and the rule that core/ runs no pattern on
Python's backtracking `re` (outside the files listed here, which their owners are converting)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.patterns import SPACE, Literals, Pattern, escape

ROOT = Path(__file__).resolve().parents[2]

# Files of core/ that still compile patterns with `re`, each with why: their owners convert them (issue 40, item 5)
# and take them off this list; a file that no longer imports `re` fails the test below until it is taken off. (The
# screen, the miner, the rules provider, the Unicode cleaner, the answer parser and the operations were converted by
# their owners in the same round.)
STILL_ON_RE: dict[str, str] = {}


def _uses_re(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in ("re", "regex") for a in node.names):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] in ("re", "regex")
        ):
            return True
    return False


def test_no_module_of_core_runs_a_pattern_on_pythons_re() -> None:
    """`re` (and `regex`) backtrack: one crafted line can take minutes. Every pattern of core/ runs on RE2
    (`core.patterns`, or DuckDB's RE2 in SQL), except in the files listed, each with the reason it is not yet."""
    users = {str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py") if _uses_re(p)}
    assert users - set(STILL_ON_RE) == set(), "use core.patterns.Pattern (RE2), not re"
    listed = {name for name in STILL_ON_RE if (ROOT / name).exists()}
    assert listed - users == set(), "converted: take it off STILL_ON_RE"


def test_the_ban_sees_each_way_of_importing_re(tmp_path: Path) -> None:
    for source in ("import re\n", "import regex as r\n", "from re import compile\n", "def f():\n    import re\n"):
        path = tmp_path / "m.py"
        path.write_text(source)
        assert _uses_re(path), source
    (tmp_path / "m.py").write_text("from core.patterns import Pattern\nimport re2\n")
    assert not _uses_re(tmp_path / "m.py")


# Patterns both engines read alike (no lookaround, no back-reference, ASCII classes), on texts with non-ASCII
# characters before, inside and after the matches: the offsets must be `str` offsets, as `re` gives them.
_COMMON = [r"[a-z]+", r"(?P<v>[0-9]+)(x)?", r"é+|ü", r"a*", r"\b[A-Za-z_]+\b", r"[^ ]+@[^ ]+", r"(?:ab|a)c?"]
_TEXTS = st.text(alphabet=st.sampled_from(list("abcxyz019 @_.éü€\U0001f600\n")), max_size=40)


@pytest.mark.parametrize("source", _COMMON)
@given(text=_TEXTS)
@settings(max_examples=60, deadline=None)
def test_offsets_groups_and_iteration_are_res(source: str, text: str) -> None:
    ours, theirs = Pattern(source), re.compile(source, re.ASCII)
    assert [tuple(m.spans) for m in ours.finditer(text)] == [m.regs for m in theirs.finditer(text)]
    found, expected = ours.search(text), theirs.search(text)
    assert (found and found.span()) == (expected and expected.span())
    assert ours.sub("<>", text) == theirs.sub("<>", text)
    assert ours.subn(lambda m: (m.group() or "").upper(), text) == theirs.subn(lambda m: m.group().upper(), text)
    assert ours.findall(text) == [m.group(1 if theirs.groups else 0) or "" for m in theirs.finditer(text)]
    assert bool(ours.fullmatch(text)) == bool(theirs.fullmatch(text))
    assert bool(ours.match(text)) == bool(theirs.match(text))


def test_a_lone_surrogate_keeps_every_offset() -> None:
    """JSON may carry `\\ud800`, which is no UTF-8: it is matched as U+FFFD, one character for one."""
    text = "a\ud800b key"
    assert [m.span() for m in Pattern("[a-z]+").finditer(text)] == [(0, 1), (2, 3), (4, 7)]
    assert Pattern(".").findall("x\ud800y") == ["x", "\ud800", "y"]  # the text's own characters come back


def test_the_characters_around_a_match_are_seen_and_flags_apply() -> None:
    m = Pattern(r"key").search("monkey!")
    assert m is not None and m.before(3) == "mon" and m.after() == "!" and m.after(9) == "!"
    assert Pattern("KEY", ignore_case=True).search("a key") is not None
    assert Pattern("a.b", dotall=True).search("a\nb") is not None and Pattern("a.b").search("a\nb") is None
    assert [m.span() for m in Pattern("^x", multiline=True).finditer("x\nx")] == [(0, 1), (2, 3)]
    assert Pattern(f"a[{SPACE}]b").search("a\u2003b") is not None  # Python's whitespace, listed
    assert Pattern(escape("a.b*(c)")).fullmatch("a.b*(c)") is not None
    assert Pattern("a$").search("a\n") is None  # `$` is the end of the text (Python's `\Z`), not before a last newline


@pytest.mark.parametrize("source", [r"(?<=a)b", r"(?<!a)b", r"a(?=b)", r"(a)\1", r"a{1001}", r"(", r"\Z"])
def test_what_re2_cannot_run_is_a_value_error(source: str) -> None:
    with pytest.raises(ValueError):
        Pattern(source)


def test_nested_quantifiers_answer_on_a_million_characters() -> None:
    """`(a+)+$` against a run of `a` ending in `b`: Python's `re` takes seconds at 30 characters (doubling with each
    one) and would not return here; RE2 answers. (How long it takes: bench/bench_regex.py, `personal`.)"""
    assert Pattern(r"(a+)+$").search("a" * 1_000_000 + "b") is None
    assert Pattern(r"(a+)+$").search("a" * 1_000_000) is not None


LITERAL = st.text(alphabet=st.sampled_from(list("ab-/@:\\é\u2003\x00")), min_size=0, max_size=4)


@given(
    st.lists(st.lists(LITERAL, max_size=3), max_size=5), st.text(alphabet=st.sampled_from(list("ab-/@:\\é\u2003\x00x")))
)
def test_literals_present_names_exactly_the_groups_whose_literal_occurs(groups: list[list[str]], text: str) -> None:
    expected = {i for i, group in enumerate(groups) if any(lit and lit in text for lit in group)}
    assert Literals(groups).present(text) == expected


def test_literals_read_a_lone_surrogate_as_the_text_patterns_do() -> None:
    # JSON's `\ud800` reaches texts as a lone surrogate: it is read as U+FFFD, never an encoding error
    assert Literals([["/home/"], ["@"]]).present("\ud800/home/x") == {0}
