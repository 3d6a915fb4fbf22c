"""Signals of issue 41 the rules miner reads in any project's sessions: a rule the user says with "should be" and
the reason that follows it, what the user typed in answer to the agent's question (not an option it offered), and a
git command Codex's sandbox kept from writing `.git` until it ran with escalated permissions."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from core.miner import History, mine, observe
from core.runs import shell_runs
from core.said import typed_answers
from core.sandboxed_git import escalated, sandboxed
from tests.labelled import UNSAFE
from tests.sessions import Session, habit_text, lessons

Claude = Session  # a Claude Code session: its shell tool is `Bash`


# --- a rule said with "should be", and its reason ------------------------------------------------------------


def test_a_rule_said_with_should_be_is_quoted_with_the_reason_that_follows_it() -> None:
    prompt = (
        "The lint script should be in local only. Since we use the branch name renovate/reconfigure for this kind"
        " of change, the renovate app does the validation."
    )
    assert lessons(Claude().prompt(prompt)) == [
        'The user said: "The lint script should be in local only. Since we use the branch name'
        ' renovate/reconfigure for this kind of change, the renovate app does the validation".'
    ]
    semantic = "The code should be semantic so the comment doesn't say the what, only the why."
    assert lessons(Claude().prompt(semantic)) == [  # the quote waits for a reader; the habit is our sentence
        f'The user said: "{semantic.removesuffix(".")}".',
        habit_text("why_comments"),
    ]


def test_should_be_on_the_answer_to_a_question_of_the_work_at_hand_or_of_this_is_no_rule() -> None:
    for task_bound in (
        "Does the parser read JSON yet? If so, it should be able to handle it already.",
        "this should be done by friday",
        "that should be enough for now",
    ):
        assert lessons(Claude().prompt(task_bound)) == [], task_bound
    task = (
        "Update the ingest to recognise this JSON schema. Parse the segments and their speakers. Keep the raw file"
        " next to it. The result should be a markdown document like the other transcripts."
    )
    assert lessons(Claude().prompt(task)) == []  # a longer prompt: the words describe the work asked for


# --- what the user typed in answer to the agent's question ---------------------------------------------------


def _asked(question: str, labels: list[str]) -> dict[str, object]:
    return {"questions": [{"question": question, "options": [{"label": x, "description": "d"} for x in labels]}]}


def test_notes_the_user_typed_in_answer_to_a_question_are_their_words() -> None:
    question = "Neither AGENTS.md nor CLAUDE.md exists yet. How should I create them?"
    answer = (
        f'The user answered: "{question}"=(no option selected) notes: AGENTS.md has the content and'
        " .claude/CLAUDE.md is a symlink.. Read the answers carefully and follow what they actually say."
    )
    session = Claude().tool("AskUserQuestion", _asked(question, ["Two files", "A symlink"]), answer)
    assert lessons(session) == [
        'Asked by the agent, the user answered: "AGENTS.md has the content and .claude/CLAUDE.md is a symlink".'
    ]


def test_an_option_the_agent_offered_is_not_the_users_words_and_an_answer_of_their_own_is() -> None:
    question = "Which installation method do you want?"
    labels = ["Pre-built binaries (Recommended)", "Build from source"]
    picked = f'User has answered your questions: "{question}"="Pre-built binaries (Recommended)". You can now continue.'
    assert lessons(Claude().tool("AskUserQuestion", _asked(question, labels), picked)) == []
    own = f'Your questions have been answered: "{question}"="we always ship pre-built binaries". You can now continue.'
    assert lessons(Claude().tool("AskUserQuestion", _asked(question, labels), own)) == [
        'Asked by the agent, the user answered: "we always ship pre-built binaries".'
    ]
    # The same words in another tool's output are not an answer the user typed.
    assert lessons(Claude().tool("mcp__forms__ask", _asked(question, labels), own)) == []


@given(
    labels=st.lists(
        st.text(st.characters(blacklist_characters='"\n'), min_size=1, max_size=20), min_size=1, max_size=4
    ),
    pick=st.integers(min_value=0, max_value=3),
)
@example(labels=["\ud800"], pick=0)  # a lone surrogate, as JSON may escape one: once crashed the pattern
def test_a_picked_option_is_never_read_as_typed_whatever_its_label(labels: list[str], pick: int) -> None:
    question = "Which one?"
    chosen = labels[pick % len(labels)]
    text = f'User has answered your questions: "{question}"="{chosen}". You can now continue with the answers.'
    assert typed_answers(json.dumps(_asked(question, labels)), text) == []


# --- Codex's sandbox keeps .git read-only --------------------------------------------------------------------


def _codex_run(session: Session, command: str, output: str, *, code: int, escalate: bool = False) -> Session:
    call: dict[str, object] = {"cmd": command, "workdir": "/home/ann/p"}
    if escalate:
        call |= {"sandbox_permissions": "require_escalated", "justification": "write .git"}
    shown = f"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {code}\nOutput:\n{output}"
    return session.tool("exec_command", call, shown, error=code != 0)


def test_a_git_command_the_sandbox_kept_from_writing_git_until_it_ran_escalated_is_a_correction() -> None:
    session = _codex_run(
        Session().prompt("update this branch"),
        "git fetch origin main",
        "error: cannot open '.git/FETCH_HEAD': Operation not permitted",
        code=255,
    )
    # The retry got past the sandbox, though it failed for a reason of its own (no key): the sandbox lesson holds.
    session = _codex_run(session, "git fetch origin main", "Permission denied (publickey).", code=128, escalate=True)
    seen = observe(session.messages, "/home/ann/p")
    (finding,) = [f for f in mine(seen, History.of([("s", seen)])) if f.kind == "correction"]
    assert finding.text == (
        "Codex's sandbox keeps `.git` read-only here: `git fetch` failed (Operation not permitted) until it ran with"
        " escalated permissions; request them for git commands that write `.git` (fetch, commit, merge)."
    )
    assert "FETCH_HEAD" in finding.evidence and "FETCH_HEAD" not in finding.text
    assert not UNSAFE.search(finding.text)


def test_no_sandbox_lesson_without_the_escalated_retry_or_a_refused_write_under_git() -> None:
    refused = "error: cannot open '.git/FETCH_HEAD': Operation not permitted"
    plain_retry = _codex_run(Session(), "git fetch origin main", refused, code=255)
    plain_retry = _codex_run(plain_retry, "git fetch origin main", "ok", code=0)  # not escalated: no sandbox lesson
    other_failure = _codex_run(Session(), "git fetch origin main", "fatal: no such remote", code=128)
    other_failure = _codex_run(other_failure, "git fetch origin main", "ok", code=0, escalate=True)
    still_refused = _codex_run(Session(), "git commit -m x", "fatal: '.git/index.lock': Read-only file system", code=1)
    still_refused = _codex_run(
        still_refused, "git commit -m x", "fatal: '.git/index.lock': Read-only file system", code=1, escalate=True
    )
    for session in (plain_retry, other_failure, still_refused):
        assert not any("sandbox" in text for text in lessons(session))


@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["ok", "error: '.git/x': Operation not permitted"]))))
def test_a_sandbox_lesson_always_rests_on_a_call_that_asked_to_run_outside_the_sandbox(
    calls: list[tuple[bool, str]],
) -> None:
    session = Session()
    for escalate, output in calls:
        session = _codex_run(session, "git commit -m x", output, code=0 if output == "ok" else 1, escalate=escalate)
    outside = escalated(session.messages)
    found = sandboxed(shell_runs(session.messages), outside)
    assert not found or any(run.call_id in outside for run in shell_runs(session.messages))
    assert sandboxed(shell_runs(session.messages), frozenset()) == []


# --- a call a hook of the user's refused, and the program it named -------------------------------------------


def _hook_refusal(tool: str, message: str) -> str:
    return f"PreToolUse:{tool} hook error: [/home/ann/.claude/hooks/guard.sh]: {message}\n"


def test_a_call_a_hook_refused_and_the_program_its_message_named_that_then_worked_is_a_correction() -> None:
    session = (
        Claude()
        .tool("Bash", {"command": "grep -rn TODO src"}, _hook_refusal("Bash", "use rg instead of grep"), error=True)
        .run("rg -n TODO src", "src/a.py:3: # TODO")
    )
    assert lessons(session) == ["A hook of the user's refuses `grep` here; use `rg` instead, as it asks."]
    fetched = (
        Claude()
        .tool(
            "WebFetch",
            {"url": "https://example.org/x"},
            _hook_refusal("WebFetch", "fetch with uv run fetch.py"),
            error=True,
        )
        .run("uv run fetch.py https://example.org/x", "# page")
    )
    seen = observe(fetched.messages)
    (correction,) = [c for c in seen.candidates if c.kind == "correction"]
    assert correction.text == "A hook of the user's refuses `WebFetch` here; use `uv run fetch.py` instead, as it asks."


def test_no_hook_lesson_from_a_programs_own_output_a_program_the_hook_did_not_name_or_one_that_failed() -> None:
    said_by_a_program = Claude().run("make lint", _hook_refusal("Bash", "use rg instead"), error=False).run("rg x", "x")
    not_named = (
        Claude()
        .tool("Bash", {"command": "grep -rn x ."}, _hook_refusal("Bash", "use rg instead of grep"), error=True)
        .run("ag x", "x")
    )
    failed = (
        Claude()
        .tool("Bash", {"command": "grep -rn x ."}, _hook_refusal("Bash", "use rg instead of grep"), error=True)
        .run("rg -n x", "Exit code 2\nrg: bad flag", error=True)
    )
    forced = (
        Claude()
        .tool("Bash", {"command": "git commit -m x"}, _hook_refusal("Bash", "run git commit with checks"), error=True)
        .run("git commit --no-verify -m x", "[main 1a2b3c4] x")
    )
    for session in (said_by_a_program, not_named, failed, forced):
        assert not any("hook" in text for text in lessons(session))


def test_several_options_picked_at_once_are_not_the_users_words() -> None:
    question = "Which cleanup groups should I apply?"
    labels = ["codebase-memory (skill, server, hooks)", "frontend-design plugin", "stale memory"]
    picked = f'"{question}"="codebase-memory (skill, server, hooks), stale memory". You can now continue.'
    assert typed_answers(json.dumps(_asked(question, labels)), picked) == []
    own = f'"{question}"="stale memory, and keep the hooks we use for commits". You can now continue.'
    assert typed_answers(json.dumps(_asked(question, labels)), own) == [
        "stale memory, and keep the hooks we use for commits"
    ]
