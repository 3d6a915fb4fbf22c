"""Lessons typed from what a session shows, so that the screen can judge every word and they reach an agent without
waiting for a reader, where the user's quoted words would wait: a branch the user says the project uses (its name,
never their sentence), and a file the project keeps as a symlink to another (made with `ln -s`, then staged)."""

from __future__ import annotations

import posixpath

from hypothesis import given
from hypothesis import strategies as st

from core.corrections import PROJECT_PATH
from core.lessons import BranchName, Symlink
from core.miner import History, mine, observe
from core.screen import text_holds
from tests.sessions import Session, lessons

ROOT = "/home/ann/p"


def _typed(session: Session, cwd: str | None = ROOT) -> list[object]:
    seen = observe(session.messages, cwd)
    return [f.lesson for f in mine(seen, History.of([("s", seen)]))]


# --- a branch the user says the project uses ------------------------------------------------------------------


def test_a_branch_the_user_says_the_project_uses_is_typed_and_admitted_where_their_quote_waits() -> None:
    prompt = (
        'The lint script should stay local. Since we use the branch name "renovate/reconfigure" for this kind of'
        " change, the app validates it there."
    )
    found = lessons(Session().prompt(prompt))
    (typed,) = [text for text in found if "`renovate/reconfigure`" in text]
    assert typed == (
        "The user named `renovate/reconfigure` as the branch this project uses for one kind of change: put a change"
        " of that kind on it, not on another branch."
    )
    assert text_holds(typed, typed=True) == []
    (quote,) = [text for text in found if text.startswith("The user said")]
    assert text_holds(quote, typed=True)  # the sentence itself still waits for a reader


def test_a_branch_is_said_in_several_ways_and_in_backticks_or_bare_when_shaped_like_one() -> None:
    for prompt, branch in (
        (
            "In this repo we push release work to a branch of its own: the branch is called `release/next`.",
            "release/next",
        ),
        ("From now on changes to the docs go on the branch docs-only.", "docs-only"),
        ("As always, we use the branch `develop` for integration.", "develop"),
    ):
        names = [x.branch for x in _typed(Session().prompt(prompt)) if isinstance(x, BranchName)]
        assert names == [branch], prompt


def test_no_branch_from_a_branch_to_avoid_a_question_an_english_word_or_a_name_git_refuses() -> None:
    for prompt in (
        'We never use the branch "release/old" any more.',
        "As always, changes never go on the branch `main`.",
        "As always, fixes do not go on the branch release/old.",
        "We use the branch name for every release.",
        'We use the branch name "a..b" for releases.',
        'We use the branch name "x.lock" for releases.',
        "Should we use the branch `feat/x` for this?",
    ):
        assert not [x for x in _typed(Session().prompt(prompt)) if isinstance(x, BranchName)], prompt


_NAME_CHARS = st.text(st.sampled_from("ab1-_./"), min_size=1, max_size=12)


@given(name=_NAME_CHARS, quote=st.sampled_from(['"', "`", "'", ""]))
def test_a_typed_branch_is_always_a_name_the_user_wrote_and_one_git_accepts(name: str, quote: str) -> None:
    prompt = f"As always, we use the branch name {quote}{name}{quote} for releases."
    for lesson in _typed(Session().prompt(prompt)):
        if isinstance(lesson, BranchName):
            assert lesson.branch in prompt
            parts = lesson.branch.split("/")
            assert ".." not in lesson.branch and all(p and not p.endswith((".", ".lock")) for p in parts)
            assert not any(p.startswith(("-", ".")) for p in parts)


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
