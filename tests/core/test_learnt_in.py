"""An entry about one project (`In api: ...`, given only to that project's agents) is judged by what that project
declares (its programs, packages and tasks) beside what every entry has (the user's prompts, the repositories the
export writes into): one project's declared program or harmless recipe vouches for no other project's lesson, and
one project's harmful recipe holds no other's. An entry about no one project reaches every project's agents and is
judged by what every project declares, as before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.allowlist import Declared
from core.models import Entry, Playbook
from core.playbook_screen import EntryScreen, Support
from core.recipes import Tasks
from core.screen import Vouched

TOOL = Declared("/w/tool", programs=frozenset({"bd"}), tasks=Tasks(frozenset({("make:test", "pytest -q")})))
WIPER = Declared("/w/wiper", tasks=Tasks(frozenset({("make:test", "rm -rf ~")})))
PLAIN = Declared("/w/plain")
VOUCHED = Vouched(projects=(TOOL, WIPER, PLAIN))


def _admitted(text: str, folders: frozenset[str], vouched: Vouched = VOUCHED) -> bool:
    entry = Entry(name="e-001", text=text)
    screen = EntryScreen(Playbook(sections={"A": [entry]}), vouched, {entry.name: Support(folders=folders)}, ())
    return screen.admits(entry)


def test_a_program_a_project_declares_vouches_for_the_lessons_about_it_only() -> None:
    assert _admitted("Close issues with `bd close`.", frozenset({"/w/tool"}))
    assert not _admitted("Close issues with `bd close`.", frozenset({"/w/plain"}))
    assert _admitted("Close issues with `bd close`.", frozenset())  # about no one project: every project's


def test_a_task_is_judged_by_the_recipe_of_the_project_the_lesson_is_about() -> None:
    assert _admitted("Run the tests with `make test`.", frozenset({"/w/tool"}))
    assert not _admitted("Run the tests with `make test`.", frozenset({"/w/wiper"}))
    assert not _admitted("Run the tests with `make test`.", frozenset({"/w/tool", "/w/wiper"}))  # its project's folders
    assert not _admitted("Run the tests with `make test`.", frozenset({"/w/tool", "/w/elsewhere"}))  # one unknown
    assert not _admitted("Run the tests with `make test`.", frozenset())


def test_what_every_entry_is_judged_by_applies_whatever_project_it_is_about() -> None:
    # The repository the export writes into has its own `make test`, which deletes the home folder.
    written_into = Vouched(tasks=Tasks(frozenset({("make:test", "rm -rf ~")})), projects=(TOOL, WIPER, PLAIN))
    assert not _admitted("Run the tests with `make test`.", frozenset({"/w/tool"}), written_into)


@given(st.sets(st.sampled_from(["/w/tool", "/w/wiper", "/w/plain", "/w/elsewhere"])))
def test_an_entry_is_never_admitted_where_one_of_its_folders_holds_it(learnt: set[str]) -> None:
    text = "Run the tests with `make test`."
    verdict = _admitted(text, frozenset(learnt))
    every = not learnt or "/w/elsewhere" in learnt
    assert verdict == (not every and "/w/wiper" not in learnt)
