"""A command whose program was missing, until an install ran (issue 41): the shell said a program it runs was not
found (read in the output, where a pipe into `tail` hid the exit status), the session tried a few things, and the
same command, run again just after an install, got past it. The lesson names that install and the project folder it
ran in, never the output's words; nothing is taught where the retry still missed the program or something other
than an install ran last."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.miner import History, mine, observe
from core.screen import text_holds
from tests.labelled import UNSAFE
from tests.sessions import Session, lessons

ROOT = "/work/app"
MISSING = "sh: tauri: command not found\n ELIFECYCLE  Command failed.\n[tauri:build] ERROR task failed"


def _failed_then(*between: tuple[str, str]) -> Session:
    """`mise run tauri:build` missing its program (piped, so it exited 0), then `between`, then the retry."""
    s = Session().run("mise run tauri:build 2>&1 | tail -50", MISSING)
    for command, output in between:
        s.run(command, output)
    return s.run(f"cd {ROOT} && mise run tauri:build 2>&1 | tail -50", "Built application")


def _held(session: Session) -> dict[str, str | None]:
    seen = observe(session.messages, ROOT)
    return {f.text: f.taint for f in mine(seen, History.of([("s", seen)]))}


def test_the_install_that_ran_last_before_the_retry_is_the_lesson_with_its_folder() -> None:
    session = _failed_then(
        ("pnpm install", "Already up to date"),  # at the root: the retry would still have failed
        ("ls crates/desktop", "package.json\nsrc-tauri"),
        (f"cd {ROOT}/crates/desktop && yes | pnpm install 2>&1 | tail -5", "+ @tauri-apps/cli 2.10.1"),
        ("pwd", ROOT),  # only looks: the install is still what ran last
    )
    text = (
        "`mise run tauri:build` failed here because a program it runs was not installed (command not found) until"
        " `pnpm install` had run in `crates/desktop/`; run that first."
    )
    assert _held(session) == {text: None}  # a bare install names no package: nothing a stranger's text chose
    assert text_holds(text, typed=True) == []


def test_an_install_at_the_projects_root_names_no_folder() -> None:
    assert lessons(_failed_then(("npm ci", "added 187 packages")), ROOT) == [
        "`mise run tauri:build` failed here because a program it runs was not installed (command not found) until"
        " `npm ci` had run; run that first."
    ]


def test_no_lesson_when_the_retry_still_misses_the_program_or_no_install_ran_last() -> None:
    still = Session().run("mise run tauri:build 2>&1 | tail -50", MISSING).run("pnpm install", "done")
    still.run("mise run tauri:build 2>&1 | tail -50", MISSING)
    assert lessons(still, ROOT) == []
    edited = _failed_then(("pnpm install", "done"), ("sed -i s/tauri/cargo-tauri/ package.json", ""))
    assert lessons(edited, ROOT) == []  # the last change was an edit: nothing says the install fixed it
    never = Session().run("mise run tauri:build 2>&1 | tail -50", MISSING).run("pnpm install", "done")
    assert lessons(never, ROOT) == []  # never run again: nothing says the install was enough
    no_program = Session().run("mise run tauri:build 2>&1 | tail -5", "error: 3 errors").run("pnpm install", "ok")
    no_program.run("mise run tauri:build 2>&1 | tail -5", "Built")
    assert not any("not installed" in t for t in lessons(no_program, ROOT))


def test_a_workaround_or_an_install_that_names_a_package_is_never_the_lesson() -> None:
    forced = _failed_then(("sudo npm install -g @tauri-apps/cli", "added 1 package"))
    assert lessons(forced, ROOT) == []  # as another user: never a lesson
    for named in ("npm install --save-dev tauri-cli", "npm install -g tauri-cli", "npm install -g"):
        # the project lacks a dependency, or it went to the machine: no routine of the project to repeat
        assert lessons(_failed_then(("mise run web:setup", "done"), (named, "added 1 package")), ROOT) == []
    frozen = _failed_then(("pnpm install --frozen-lockfile", "Lockfile is up to date"))
    assert lessons(frozen, ROOT) == [
        "`mise run tauri:build` failed here because a program it runs was not installed (command not found) until"
        " `pnpm install --frozen-lockfile` had run; run that first."
    ]


@given(
    program=st.from_regex(r"[a-z][a-z0-9-]{2,12}", fullmatch=True),
    folder=st.from_regex(r"[a-z]{3,8}(/[a-z]{3,8})?", fullmatch=True),
    looks=st.lists(st.sampled_from(["ls", "pwd", "git status", "cat package.json"]), max_size=3),
)
def test_the_outputs_words_never_reach_the_lesson_and_it_is_never_unsafe(
    program: str, folder: str, looks: list[str]
) -> None:
    said = f"sh: {program}-bin: command not found"
    s = Session().run("npm run build 2>&1 | tail -20", said)
    s.run(f"cd {ROOT}/{folder} && npm install", "added 12 packages")
    for command in looks:
        s.run(command, f"{program}-bin is listed")
    s.run("npm run build", "built")
    texts = lessons(s, ROOT)
    assert texts == [
        "`npm run build` failed here because a program it runs was not installed (command not found) until"
        f" `npm install` had run in `{folder}/`; run that first."
    ]
    assert not any(f"{program}-bin" in t or UNSAFE.search(t) for t in texts)
