"""The tables of the read commands (`history`, `sessions`, `sql`, `why`) are drawn line by line when they fit, and the
marked lines of `diff` and styled lines of `why` written as they are into a pipe: character for character what Rich
prints there, whatever the cells and texts hold."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from flows.cli import _render
from flows.cli._render import escape, new_table, print_marked, print_rows, print_styled

CELLS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12) | st.text(
    "abc 123-:.", max_size=20
)


def _console() -> Console:
    # as `out` is when piped: 160 columns, no terminal
    return Console(file=io.StringIO(), soft_wrap=True, emoji=False, width=160, force_terminal=False)


@settings(max_examples=300, deadline=None)
@example((["\U0001f3fb"], []))  # a lone skin-tone modifier: Rich counts it no column wide and crops it away
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            st.lists(CELLS.filter(bool), min_size=n, max_size=n),
            st.lists(st.lists(CELLS, min_size=n, max_size=n), max_size=6),
        )
    )
)
def test_a_table_is_drawn_as_rich_draws_it(table: tuple[list[str], list[list[str]]]) -> None:
    columns, rows = table
    drawn, expected = _console(), _console()
    saved, _render.out = _render.out, drawn
    try:
        print_rows(columns, rows)
    finally:
        _render.out = saved
    grid = new_table(*(escape(c) for c in columns))
    for row in rows:
        grid.add_row(*(escape(c) for c in row))
    expected.print(grid)
    assert drawn.file.getvalue() == expected.file.getvalue()  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(
    table=st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.lists(CELLS, min_size=n, max_size=n),
            st.lists(st.lists(CELLS, min_size=n, max_size=n), max_size=5),
        )
    ),
    title=CELLS,
    header=st.booleans(),
)
@example(table=([""], [["\U0001f3fb"]]), title="", header=False)
def test_a_titled_or_headless_table_is_drawn_as_rich_draws_it(
    table: tuple[list[str], list[list[str]]], title: str, header: bool
) -> None:
    columns, rows = table
    drawn, expected = _console(), _console()
    saved, _render.out = _render.out, drawn
    try:
        print_rows(columns, rows, title=title, header=header)
    finally:
        _render.out = saved
    options = {"title": escape(title), "title_justify": "left"} if title else {}
    grid = new_table(*(escape(c) for c in columns), show_header=header, **options)
    for row in rows:
        grid.add_row(*(escape(c) for c in row))
    expected.print(grid)
    assert drawn.file.getvalue() == expected.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("rows", [10, 10_000])
def test_the_line_by_line_drawing_is_used_for_plain_rows_that_fit(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    console = _console()
    monkeypatch.setattr(_render, "out", console)
    monkeypatch.setattr(_render, "new_table", lambda *a, **k: pytest.fail("Rich drew the table"))
    print_rows(("version", "created"), [(str(i), "2026-01-01 00:00:00") for i in range(rows)])
    assert console.file.getvalue().count("\n") == rows + 4  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(style=st.sampled_from(["green", "red", "yellow"]), head=CELLS, text=CELLS)
def test_a_marked_line_in_a_pipe_is_what_rich_prints_there(style: str, head: str, text: str) -> None:
    expected = _console()
    expected.print(f"[{style}]{escape(head)}[/{style}] {escape(text)}", highlight=False)
    piped = io.StringIO()
    fresh = _render._Console(soft_wrap=True, emoji=False, width=160)  # as `out` is before anything printed
    with patch.object(_render, "out", fresh), redirect_stdout(piped):
        print_marked(style, head, text)
    assert piped.getvalue() == expected.file.getvalue()  # type: ignore[attr-defined]


STYLES = st.sampled_from(["", "bold", "dim", "green"])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.tuples(STYLES, CELLS), min_size=1, max_size=4), highlight=st.booleans())
def test_a_styled_line_in_a_pipe_is_what_rich_prints_there(parts: list[tuple[str, str]], highlight: bool) -> None:
    expected = _console()
    expected.print("".join(f"[{s}]{escape(t)}[/{s}]" if s else escape(t) for s, t in parts), highlight=highlight)
    piped = io.StringIO()
    fresh = _render._Console(soft_wrap=True, emoji=False, width=160)  # as `out` is before anything printed
    with patch.object(_render, "out", fresh), redirect_stdout(piped):
        print_styled(*parts, highlight=highlight)
    assert piped.getvalue() == expected.file.getvalue()  # type: ignore[attr-defined]
    assert not fresh.started or not all(t.isascii() and t.isprintable() and "\\" not in t for _, t in parts)
