"""Rules of the miner that hold on sessions it never saw (issue 41, the leave-one-repository-out round): a project's
tool is one used for several things, not one subcommand run again and again; a routine the user named in their
own words is theirs, not what the project's files say; a command the program does not have, followed by another
of its commands on the same things; a failure a pipe hid (an unknown option, a program not found) read from the
output, not from the exit status; and what the third round's sessions (dev, run once before any change) showed
wrong: a feeder of answers (`yes |`) read as the command, two bare programs read as one job, a usage error read as
a failing check, zsh taught from one slip."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.lessons import Command
from core.miner import History, mine, observe
from core.project_facts import DOCUMENTED
from core.runs import Parsed, parse
from core.shell import parse_command
from tests.labelled import UNSAFE
from tests.sessions import Session, lessons


def held(session: Session) -> dict[str, str | None]:
    """Each finding's text, with why it is held for review (None: exported as it is)."""
    seen = observe(session.messages)
    return {f.text: f.taint for f in mine(seen, History.of([("s", seen)]))}


# --- a tool the project works with ---------------------------------------------------------------------------


def test_a_tool_used_for_several_things_is_the_projects_and_one_subcommand_run_again_and_again_is_not() -> None:
    tracker = Session()
    for sub in ("create", "show", "update", "close"):
        tracker.run(f"tracker {sub} 12", "ok")
    assert lessons(tracker) == [
        "It has its own command-line tool `tracker`: `tracker close`, `tracker create`, `tracker show`,"
        " `tracker update`."
    ]
    deployer = Session()  # one task's command, retried: a deploy, a proxy every command went through
    for _ in range(6):
        deployer.run("deployer deploy --env staging", "ok")
    assert lessons(deployer) == []
    two = Session().run("deployer deploy", "ok").run("deployer logs", "ok").run("deployer deploy", "ok")
    assert lessons(two.run("deployer logs", "ok")) == []


@given(st.lists(st.sampled_from(["create", "show", "close", "list", "sync"]), min_size=4, max_size=12))
def test_a_tool_is_taught_only_once_three_of_its_subcommands_were_used(used: list[str]) -> None:
    session = Session()
    for sub in used:
        session.run(f"tracker {sub}", "ok")
    taught = [t for t in lessons(session) if "`tracker`" in t]
    assert bool(taught) == (len(set(used)) >= 3)


# --- a routine the user named ----------------------------------------------------------------------------------


def test_a_routine_the_user_named_is_not_held_as_what_the_projects_files_say() -> None:
    def session(prompt: str) -> Session:
        s = Session().prompt(prompt)
        s.run("cat README.md", "Check the format with `node --run format:check` before you commit.")
        return s.run("node --run format:check", "All matched files use the correct format")

    asked = session("Run the checks, at minimum node --run format:check and the targeted tests")
    assert held(asked) == {"Format with `node --run format:check`.": None}
    unasked = session("Fix the typo in the header")
    assert held(unasked) == {"Format with `node --run format:check`.": DOCUMENTED}


def test_a_build_the_user_asked_for_is_a_fact_on_one_run_and_a_lone_word_of_a_sentence_names_no_command() -> None:
    assert lessons(
        Session().prompt("build it with `bun run build` and fix what breaks").run("bun run build", "ok")
    ) == ["Build with `bun run build`."]
    assert lessons(Session().prompt("please fix the header").run("bun run build", "ok")) == []  # once: not enough
    assert lessons(Session().prompt("make sure it works").run("make", "ok")) == []  # "make" of "make sure"
    assert lessons(Session().prompt("run `make` when done").run("make", "ok")) == ["Build with `make`."]


def test_a_command_named_only_in_text_the_user_pasted_is_not_their_request() -> None:
    pasted = "$ bun run build\nerror: cannot find module\n    at build.ts:3\n    at run.ts:9"
    assert lessons(Session().prompt(pasted).run("bun run build", "ok")) == []


# --- a command the program does not have -------------------------------------------------------------------------


def test_an_unknown_subcommand_followed_by_another_of_the_programs_commands_on_the_same_things_is_a_correction() -> (
    None
):
    cargo = Session().run(
        "cargo nextest run -p core",
        "Exit code 101\nerror: no such command: `nextest`\n\n\tView all installed commands with `cargo --list`",
        error=True,
    )
    assert "`cargo nextest run` is refused here (no such option or command); `cargo test` works." in lessons(
        cargo.run("cargo test -p core", "test result: ok. 3 passed")
    )
    gh = Session().run("gh pr diffstat 12", 'Exit code 1\nunknown command "diffstat" for "gh pr"', error=True)
    assert lessons(gh.run("gh pr diff 12 --stat", "3 files")) == [
        "`gh pr diffstat` is refused here (no such option or command); `gh pr diff --stat` works."
    ]


def test_help_another_things_command_or_an_error_that_does_not_name_the_subcommand_is_no_correction() -> None:
    unknown = 'Exit code 1\nunknown command "diffstat" for "gh pr"'
    helped = Session().run("gh pr diffstat 12", unknown, error=True).run("gh pr --help", "usage")
    assert lessons(helped) == []
    other = Session().run("gh pr diffstat 12", unknown, error=True).run("gh pr view 13", "title")
    assert lessons(other) == []  # another pull request: another task, not the variant
    unnamed = Session().run("gh pr diffstat 12", "Exit code 1\nunknown flag: --x", error=True)
    assert lessons(unnamed.run("gh pr diff 12", "diff")) == []


# --- a failure a pipe hid ------------------------------------------------------------------------------------------


def test_a_failure_a_pipe_hid_is_read_from_the_output_and_paired_with_the_variant_that_worked() -> None:
    hidden = Session().run("gh pr list --jsonx 2>&1 | head", "unknown flag: --jsonx")
    assert lessons(hidden.run("gh pr list --json title | head", "x")) == [
        "`gh pr list --jsonx` is refused here (no such option or command); `gh pr list --json` works."
    ]
    missing = Session().run("biome check . 2>&1 | tail -3", "bash: biome: command not found")
    assert lessons(missing.run("npx biome check . 2>&1 | tail -3", "Checked 3 files")) == [
        "`biome check` fails here; `npx biome` works."
    ]


def test_output_that_only_mentions_an_unknown_option_without_a_pipe_or_a_later_variant_teaches_nothing() -> None:
    # ended well, not piped: the words are the program's report (a validator listing unknown options), not a failure
    report = Session().run("validator --strict config.json", "Found 1 unknown option: notARealOption")
    assert lessons(report.run("validator config.json", "ok")) == []
    # a pipe hid it, but what ran next is no variant of it
    alone = Session().run("gh pr list --jsonx 2>&1 | head", "unknown flag: --jsonx").run("ls", "a b")
    assert lessons(alone) == []


@given(
    st.sampled_from(["--force", "--no-verify", "-f", "--skip-checks", "--yes"]),
    st.sampled_from(["unknown flag: --bad", "error: no such command: `bad`"]),
)
def test_a_variant_that_switches_a_safeguard_off_is_never_taught_even_after_a_hidden_failure(
    weakening: str, said: str
) -> None:
    session = Session().run("tool bad --bad 2>&1 | tail", said).run(f"tool good {weakening}", "ok")
    session.run(f"tool --bad {weakening} | tail", said).run(f"tool {weakening}", "ok")
    assert not [t for t in lessons(session) if UNSAFE.search(t) or weakening in t]


def test_a_task_runner_with_no_such_task_and_a_parser_with_no_such_flag_are_read_as_unknown() -> None:
    for failed, said, worked, lesson in (
        ("make tests", "make: *** No rule to make target 'tests'.  Stop.", "make test", "`make tests`"),
        ("just tst", "error: Justfile does not contain recipe `tst`.", "just test", "`just tst`"),
        ("npm run lint:fix", 'npm error Missing script: "lint:fix"', "npm run lint -- --fix", "`npm run lint:fix`"),
        ("docker ps --formatt table", "unknown flag: --formatt", "docker ps --format table", "`docker ps --formatt`"),
    ):
        session = Session().run(failed, f"Exit code 2\n{said}", error=True).run(worked, "ok")
        refused = [t for t in lessons(session) if "is refused here" in t]
        assert len(refused) == 1 and refused[0].startswith(lesson), (failed, lessons(session))
        # the same failure without the program's words for "no such task": nothing says the second is the fix
        plain = Session().run(failed, "Exit code 2\nsomething went wrong: error", error=True).run(worked, "ok")
        assert not [t for t in lessons(plain) if "is refused here" in t], failed
    # Go's words for no such flag are read, but a check's option is never taught, misspelt first or not: `-short`
    # skips the long tests (as `--updateSnapshott` refused, then `--updateSnapshot`, would rewrite the snapshots).
    said = "Exit code 2\nflag provided but not defined: -short2"
    typo = Session().run("go test -short2 ./...", said, error=True).run("go test -short ./...", "ok")
    assert not [t for t in lessons(typo) if "works" in t]
    # nor an option spelt right on a program that runs scripts, which may be checks (`node --watchh`, then `--watch`)
    node = Session().run("node --watchh app.js", "Exit code 9\nnode: bad option: --watchh", error=True)
    assert not [t for t in lessons(node.run("node --watch app.js", "ok")) if "works" in t]


@given(
    st.sampled_from(["unknown command", "no such command:", "Missing script:", "No rule to make target"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=3, max_size=30),
    st.booleans(),
)
def test_the_failures_words_are_evidence_never_lesson_text(said: str, noise: str, piped: bool) -> None:
    marker = "zqxmarker"
    tail = " 2>&1 | tail -3" if piped else ""
    output = f"{said} 'tests' {noise} {marker}"
    session = Session().run(f"make tests{tail}", output if piped else f"Exit code 2\n{output}", error=not piped)
    found = lessons(session.run("make test", "ok"))
    assert any("`make tests` is refused here" in t for t in found)
    assert not [t for t in found if marker in t]


# --- what held on the third round's sessions, read once before any change (dev: orpheus, langlearn-tts) ------------


def test_a_feeder_of_answers_is_not_the_command_of_its_line() -> None:
    assert parse("yes | pnpm install 2>&1 | tail -30") == Parsed(None, ("pnpm", "install"))
    assert parse("cd web && echo y | npx create-thing") == Parsed("web", ("npx", "create-thing"))
    assert parse("echo hi | grep h") == Parsed(None, ("echo", "hi"))  # a reader of its output: the line is echo's
    assert parse("pnpm install | tail") == Parsed(None, ("pnpm", "install"))


def test_two_programs_run_bare_share_no_job_so_neither_corrects_the_other() -> None:
    cd = "Exit code 1\n(eval):cd:1: no such file or directory: apps/web"
    session = Session().run("cd apps/web && yes | pnpm install 2>&1 | tail", cd, error=True).run("pwd", "/repo/web")
    assert not [t for t in lessons(session) if "works" in t]
    same_job = Session().run("npm install", "Exit code 1\nnpm error ERESOLVE could not resolve", error=True)
    assert lessons(same_job.run("pnpm install", "done")) == ["`npm install` fails here; `pnpm install` works."]


def test_a_usage_error_a_pipe_hid_is_a_correction_not_a_check_that_failed() -> None:
    usage = "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --timeout=10"
    session = Session().run("uv run pytest tests/ --timeout=10 2>&1 | tail -20", usage)
    found = lessons(session.run("uv run pytest tests/ 2>&1 | tail -20", "12 passed"))
    assert "`uv run pytest --timeout` is refused here (no such option or command); `uv run pytest` works." in found
    assert not [t for t in found if "hides its failure" in t]
    failing = Session().run("uv run pytest tests/ 2>&1 | tail -20", "FAILED tests/test_a.py::test_x\n1 failed")
    committed = failing.run("git commit -am 'Add x'", "[main 1a2b] Add x")
    assert [t for t in lessons(committed) if "hides its failure" in t]  # the check ran and failed: a pipe hid it


# What a session runs between a check that failed behind a pipe and what it does next: reads, edits by command, other
# programs; none of them is the check, a commit, a push or a pull request.
_BETWEEN = st.lists(
    st.sampled_from(
        [
            "git status",
            "git diff --stat",
            "git stash push",
            "ls src",
            "rg parse src",
            "sed -i s/a/b/ src/a.py",
            "make fmt",
        ]
    ),
    max_size=6,
)


@given(
    _BETWEEN,
    st.sampled_from(
        ["git commit -am wip", "git push origin feature", "git -C . commit -m wip", "gh pr create --fill", "again"]
    ),
)
def test_a_hidden_failure_is_a_pitfall_only_where_work_was_handed_on_before_the_check_ran_again(
    between: list[str], then: str
) -> None:
    """The pitfall rests on what the session did next: a commit, a push or a pull request before the check ran again
    says the pipe hid its failure from that work; the check run again first says it was read."""
    session = Session().run("uv run pytest tests/ 2>&1 | tail -20", "FAILED tests/test_a.py::test_x\n1 failed")
    for command in between:
        session.run(command, "ok")
    session.run("uv run pytest tests/ 2>&1 | tail -20" if then == "again" else then, "ok")
    pitfall = [t for t in lessons(session) if "hides its failure" in t]
    assert bool(pitfall) == (then != "again")


def test_zsh_is_the_shell_once_its_errors_were_seen_twice_in_the_projects_sessions() -> None:
    nomatch = "Exit code 1\n(eval):1: no matches found: /tmp/x*.txt"
    one = observe(Session().run("ls /tmp/x*.txt", nomatch, error=True).messages)
    two = observe(Session().run("ls /tmp/y*.txt", nomatch, error=True).messages)
    assert not [f for f in mine(one, History.of([("a", one)])) if "zsh" in f.text]
    assert [f for f in mine(one, History.of([("a", one), ("b", two)])) if "zsh" in f.text]
    clobber = Session().run("echo x > /tmp/out", "Exit code 1\n(eval):1: file exists: /tmp/out", error=True)
    assert [t for t in lessons(clobber) if "noclobber" in t]  # zsh's own option, said once, is the machine's
    assert not [t for t in lessons(clobber) if "a glob that matches nothing" in t]  # nothing of globs shown
    both = lessons(clobber.run("ls /tmp/x*.txt", nomatch, error=True))  # two of zsh's own errors: the shell
    assert [t for t in both if "a glob that matches nothing" in t] and [t for t in both if "noclobber" in t]


def test_a_program_named_like_a_declaration_builtin_is_written_back_as_that_program() -> None:
    for name in ("export", "declare", "local", "readonly", "typeset", "unset", "unsetenv"):
        parsed = parse_command(Command(words=(name, "a=1")).shown())
        assert parsed.readable and [w for c in parsed.commands for w in c.words] == [name, "a=1"], name


# --- a hook that warns once --------------------------------------------------------------------------------------

_WARNING = (
    "PreToolUse:{tool} hook error: [python3 ${{CLAUDE_PLUGIN_ROOT}}/hooks/security_reminder_hook.py]: You are"
    " editing a GitHub Actions workflow file. Be aware of these security risks: command injection"
)


def _change(session: Session, tool: str, path: str, output: str, *, error: bool = False) -> Session:
    return session.tool(tool, {"file_path": path, "content": "on: push"}, output, error=error)


def test_a_change_a_hook_refused_once_and_let_through_again_is_a_warning_of_that_folder() -> None:
    path = "/repo/.github/workflows/ci.yml"
    session = _change(Session(), "Write", path, _WARNING.format(tool="Write"), error=True)
    found = lessons(_change(session, "Write", path, "File created successfully"), "/repo")
    assert found == [
        "A hook of the user's refuses the first `Write` of a file in `.github/workflows/` here, as a warning, and"
        " lets the same change through when it is made again: read its warning and act on it before making the"
        " change again."
    ]


def test_a_hook_that_refuses_every_time_or_another_file_changed_after_it_is_no_warning() -> None:
    path = "/repo/.github/workflows/ci.yml"
    refused = _WARNING.format(tool="Edit")
    always = _change(_change(Session(), "Edit", path, refused, error=True), "Edit", path, refused, error=True)
    assert lessons(always, "/repo") == []
    other = _change(_change(Session(), "Edit", path, refused, error=True), "Edit", "/repo/src/a.py", "ok")
    assert lessons(other, "/repo") == []
    outside = _change(Session(), "Edit", "/etc/ci.yml", refused, error=True)
    assert lessons(_change(outside, "Edit", "/etc/ci.yml", "ok"), "/repo") == []  # no folder of the project
    program = "Exit code 1\nPreToolUse:Edit hook error: [x]: careful"  # a program's output, not the harness's
    assert lessons(_change(_change(Session(), "Edit", path, program, error=True), "Edit", path, "ok"), "/repo") == []


@given(st.lists(st.sampled_from(["refused", "ok", "other"]), max_size=8))
def test_a_warning_is_taught_only_where_the_same_change_went_through_after_a_refusal(steps: list[str]) -> None:
    path = "/repo/.github/workflows/ci.yml"
    session = Session()
    for step in steps:
        if step == "other":
            _change(session, "Edit", "/repo/src/a.py", "ok")
        else:
            _change(
                session, "Edit", path, _WARNING.format(tool="Edit") if step == "refused" else "ok", error=step != "ok"
            )
    taught = bool([t for t in lessons(session, "/repo") if "as a warning" in t])
    assert taught == any(a == "refused" and "ok" in steps[i + 1 :] for i, a in enumerate(steps))


def test_a_routine_is_named_only_as_a_whole_command() -> None:
    def named(prompt: str, run: str) -> bool:
        return bool(lessons(Session().prompt(prompt).run(run, "built")))  # a build: once is enough only if named

    assert named("then run bun run build.", "bun run build")
    assert named("run `bun run build`", "bun run build")
    assert not named("see bun run build-docs for that", "bun run build")  # another script
    assert not named("the xbun run build flow", "bun run build")
    assert not named("make sure it builds", "make")
