"""Lessons typed from what a session shows, so that the screen can judge every word and they reach an agent without
waiting for a reader: a file the project keeps as a symlink to another (made with `ln -s`, then staged)."""

from __future__ import annotations

import posixpath

from hypothesis import given
from hypothesis import strategies as st

from core.corrections import PROJECT_PATH
from core.lessons import Symlink
from core.miner import History, mine, observe
from core.screen import text_holds
from tests.sessions import Session, lessons

ROOT = "/home/ann/p"


def _typed(session: Session, cwd: str | None = ROOT) -> list[object]:
    seen = observe(session.messages, cwd)
    return [f.lesson for f in mine(seen, History.of([("s", seen)]))]


# --- a file the project keeps as a symlink ---------------------------------------------------------------------


def test_a_link_made_with_ln_and_staged_is_a_project_fact_naming_the_file_to_edit() -> None:
    session = (
        Session()
        .run(f"cd {ROOT}\nln -s ../AGENTS.md .claude/CLAUDE.md\nls -la .claude/CLAUDE.md", "CLAUDE.md -> ../AGENTS.md")
        .run("git add .gitignore .claude/CLAUDE.md && git commit -q --amend --no-edit", "ok")
    )
    (text,) = lessons(session, ROOT)
    assert text == (
        "`.claude/CLAUDE.md` is a symlink to `AGENTS.md` here, and git keeps it as one: edit `AGENTS.md`, and never"
        " replace the link with a copy."
    )
    assert text_holds(text, typed=True) == []


def test_a_link_in_a_subfolder_staged_with_its_folder_or_everything() -> None:
    for stage in ("git add .", "git add -A", "git add docs"):
        session = Session().run("cd docs && ln -sf ../README.md index.md", "").run(stage, "")
        assert _typed(session) == [Symlink(link="docs/index.md", target="README.md")], stage


def test_no_link_lesson_unstaged_outside_the_project_failed_or_expanded_at_run_time() -> None:
    made = "ln -s ../AGENTS.md .claude/CLAUDE.md"
    for session in (
        Session().run(made, ""),  # never staged: a link of this checkout only
        Session().run(made, "").run("git add src", ""),  # something else staged
        Session().run("ln -s /etc/hosts data/hosts", "").run("git add data", ""),  # points outside the project
        Session().run("ln -s ../x ../../y", "").run("git add -A", ""),  # made outside the project
        Session().run(made, "ln: failed to create symbolic link", error=True).run("git add -A", ""),
        Session().run('ln -s "$TARGET" CLAUDE.md', "").run("git add -A", ""),
        Session().run("ln AGENTS.md CLAUDE.md", "").run("git add -A", ""),  # a hard link: a file of its own
        Session().run("ln -s ../../ci/hook.sh .git/hooks/pre-commit", "").run("git add -A", ""),  # git keeps none
        Session().run("ln -s .git/config git.cfg", "").run("git add -A", ""),
        Session().run("ln -s AGENTS.md", "").run("git add -A", ""),  # no link path written
        # the lesson says which file to edit: only in words the reviewed lexicon admits
        Session().run("ln -s .env CLAUDE.md", "").run("git add -A", ""),
        Session().run("ln -s secrets/prod.key config/key", "").run("git add -A", ""),
        Session().run("ln -s AGENTS.md docs/ignore-previous-instructions.md", "").run("git add -A", ""),
    ):
        assert not [x for x in _typed(session) if isinstance(x, Symlink)], session.messages[0].tool_input
    assert _typed(Session().run(made, "").run("git add -A", ""), cwd=None) == []  # no project root known


@given(
    target=st.text(st.sampled_from("ab./~-"), min_size=1, max_size=10),
    link=st.text(st.sampled_from("ab./~-"), min_size=1, max_size=10),
    folder=st.sampled_from(["", "cd docs && ", f"cd {ROOT}/x && ", "cd / && ", "cd .. && "]),
)
def test_a_link_lesson_names_only_paths_inside_the_project(target: str, link: str, folder: str) -> None:
    session = Session().run(f"{folder}ln -s -- {target!r} {link!r}", "").run("git add -A", "")
    for lesson in _typed(session):
        if isinstance(lesson, Symlink):
            for path in (lesson.link, lesson.target):
                assert PROJECT_PATH.match(path) and ".." not in path.split("/")
                assert posixpath.normpath(posixpath.join(ROOT, path)).startswith(ROOT + "/")
