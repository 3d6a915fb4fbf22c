"""Code that starts a program (`subprocess.run([...])`, in a span or a fenced Python block) is judged as the
command it runs; one handed its command at run time waits for review."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.allowlist import Vouched, command_refusals
from core.screen import text_holds

HELD = [
    '```python\nimport subprocess\nsubprocess.run(["kubectl", "delete", "ns", "prod"])\n```',
    'Clean up with `subprocess.run(["rm", "-rf", "/"])`.',
    "```python\nimport subprocess\nsubprocess.check_call(args)\n```",
    '```python\nimport asyncio\nawait asyncio.create_subprocess_exec("curl", "-k", "https://mirror.dev")\n```',
    "```python\nimport os\nos.execvp(program, argv)\n```",
    '```python\nimport subprocess\nsubprocess.Popen(("git", "push", "--force"))\n```',
]
ADMITTED = [
    '```python\nimport subprocess\nsubprocess.run(["git", "status", "--short"], check=True)\n```',
    "Call `subprocess.run` with a list of arguments and `shell=False`.",
    '```python\nimport subprocess\nout = subprocess.check_output(["uv", "run", "pytest", "-q"], text=True)\n```',
]


@pytest.mark.parametrize("text", HELD)
def test_code_that_starts_a_program_no_lesson_may_run_is_held(text: str) -> None:
    assert text_holds(text, None)


@pytest.mark.parametrize("text", ADMITTED)
def test_code_that_starts_a_known_command_is_admitted(text: str) -> None:
    assert text_holds(text, None) == []


_WORDS = st.lists(
    st.sampled_from(["git", "status", "rm", "-rf", "/", "kubectl", "delete", "pytest", "-q", "push", "--force", "x"]),
    min_size=1,
    max_size=5,
)


@given(_WORDS)
def test_a_launched_list_the_allow_list_refuses_is_held(words: list[str]) -> None:
    """Whatever the allow-list refuses as a command line is held when code starts it."""
    block = f"```python\nimport subprocess\nsubprocess.run({words!r}, check=True)\n```"
    if command_refusals(shlex.join(words), Vouched()):
        assert text_holds(block, None), block
