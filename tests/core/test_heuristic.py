"""The rules provider (`core.llm.heuristic`): a session's lessons are worked out and redacted once for its two steps,
and the curator step's answer is the one it would give on its own."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from core.llm import HeuristicProvider, LLMRequest
from core.miner import History, Observed, observe
from core.models import SessionMessage
from core.operations import empty_playbook
from core.redact import Redactor
from tests.profiles import examples


class Session:
    """A session built call by call: shell commands with their outcome, and the user's prompts."""

    def __init__(self) -> None:
        self.messages: list[SessionMessage] = []

    def prompt(self, text: str) -> Session:
        self.messages.append(
            SessionMessage(seq=len(self.messages), role="user", kind="text", is_prompt=True, text=text)
        )
        return self

    def run(self, command: str, output: str, *, error: bool = False) -> Session:
        call = f"c{len(self.messages)}"
        self.messages += [
            SessionMessage(
                seq=len(self.messages),
                role="assistant",
                kind="tool_use",
                tool_name="Bash",
                tool_use_id=call,
                tool_input=json.dumps({"command": command}),
            ),
            SessionMessage(
                seq=len(self.messages) + 1,
                role="tool",
                kind="tool_result",
                tool_use_id=call,
                is_error=error,
                text=output,
            ),
        ]
        return self


class CountingRedactor(Redactor):
    """The real redactor, counting the texts it is given (the rules redact each lesson's fields as they write them)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def text(self, text: str) -> str:
        self.calls += 1
        return super().text(text)


def ask(
    provider: HeuristicProvider,
    step: str,
    messages: list[SessionMessage],
    seen: Observed,
    history: History,
    project: str | None = "shop",
) -> dict[str, Any]:
    """`provider`'s answer (parsed) to the rules' request of `step` for one session."""
    context = {"messages": messages, "playbook": empty_playbook(), "observed": seen, "history": history}
    request = LLMRequest(
        step=step,  # type: ignore[arg-type]
        session_id="s1",
        model="heuristic",
        system="",
        user="",
        schema_name=step,
        context=context | {"project": project},
    )
    answer = provider.complete(request)
    assert answer.error is None and answer.text is not None
    parsed: dict[str, Any] = json.loads(answer.text)
    return parsed


def taught() -> list[SessionMessage]:
    """A session with a correction, a project fact and the user's words: three lessons."""
    session = Session().prompt("No, don't use print; use logging.")
    session.run("pytest", "ModuleNotFoundError: No module named 'app'", error=True).run("python -m pytest", "3 passed")
    return session.messages


_COMMANDS = st.sampled_from(["pytest", "python -m pytest", "npm test", "pnpm test", "make check", "uv run pytest -x"])


@hsettings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.tuples(_COMMANDS, st.booleans()), max_size=6),
    st.lists(st.sampled_from(["No, use pnpm here.", "Always run make check first.", "thanks", ""]), max_size=2),
    st.sampled_from(["shop", None]),
)
def test_the_curator_steps_answer_after_the_reflector_step_is_the_one_a_fresh_provider_gives(
    runs: list[tuple[str, bool]], prompts: list[str], project: str | None
) -> None:
    session = Session()
    for prompt in prompts:
        session.prompt(prompt)
    for command, failed in runs:
        session.run(command, "error: exit 1" if failed else "ok", error=failed)
    seen = observe(session.messages)
    history = History.of([("s1", seen)])
    both = HeuristicProvider()
    ask(both, "reflector", session.messages, seen, history, project)
    reused = ask(both, "curator", session.messages, seen, history, project)
    fresh = ask(HeuristicProvider(), "curator", session.messages, seen, history, project)
    again = observe(session.messages)  # the same session observed anew: other objects, the same lessons
    anew = ask(HeuristicProvider(), "curator", session.messages, again, History.of([("s1", again)]), project)
    assert reused == fresh == anew


def test_a_sessions_lessons_are_redacted_once_for_its_two_steps() -> None:
    messages = taught()
    seen = observe(messages)
    history = History.of([("s1", seen)])
    redactor = CountingRedactor()
    provider = HeuristicProvider(redactor)
    ask(provider, "reflector", messages, seen, history)
    reflected = redactor.calls
    operations = ask(provider, "curator", messages, seen, history)["operations"]
    assert reflected > 0 and len(operations) == 3
    assert redactor.calls == reflected  # the curator step wrote from the reflector step's lessons
    ask(provider, "curator", messages, seen, history)  # taken once: a second curator request mines again
    assert redactor.calls == 2 * reflected


def test_lessons_held_from_other_evidence_are_not_reused() -> None:
    messages = taught()
    seen = observe(messages)
    history = History.of([("s1", seen)])
    provider = HeuristicProvider()
    ask(provider, "reflector", messages, seen, history, "shop")
    other = ask(provider, "curator", messages, seen, history, "till")  # the same objects, another project
    assert all("till" in op["text"] for op in other["operations"]) and other["operations"]
    ask(provider, "reflector", messages, seen, history, "shop")
    wider = History.of([("s0", seen), ("s1", seen)])  # the project's evidence now has another session
    answered = ask(provider, "curator", messages, seen, wider, "shop")
    assert answered == ask(HeuristicProvider(), "curator", messages, seen, wider, "shop")
    assert all("2 sessions: s0, s1" in op["evidence"] for op in answered["operations"]) and answered["operations"]
