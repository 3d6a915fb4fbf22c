"""Guards: command lessons compiled for Claude Code's `PreToolUse` hook, checked before each shell call.

A guard is made from the typed lesson an entry was written from (`core.lessons`), never from its text: the rules
miner's ADD carries the lesson, and it is kept only when the entry's text is exactly what that lesson renders
(`bound_lesson`), so what a guard matches and what it says are the same lesson. A model's free text makes no guard.
Which calls set one off: the command that failed (`npm install` where `pnpm install` works), another package
manager's form of the project's command (`npm install` where it installs with `pnpm install`), the tool run bare
where the project runs it through its wrapper (`pytest` where it is `uv run pytest`), a test selector that selects
nothing (`pytest -m unit`), a check piped into `tail` (its failure hidden), a command run outside the folder it
needs, and a program that lacks the project's packages only where the call can need one (its code imports a module
outside the standard library, or it runs one of the project's files: `python3 -c "import json"` cannot). A guard
adds the lesson to the agent's context; it refuses the call only for an entry the user made a hard rule in
`playbook review --hard`, and only where refusing is what the lesson says (the failing form of a command).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from core.lessons import AnyLesson, CommandFact, Correction, HiddenFailure, Lesson, NothingSelected, render
from core.runs import command_key, key_words

__all__ = ["Guard", "bound_lesson", "guards_of", "lesson_json"]

_LESSON: TypeAdapter[AnyLesson] = TypeAdapter(Lesson)  # type: ignore[arg-type]
# Wrappers a project runs its tools through: the tool run bare misses the project's environment.
_WRAPPERS: tuple[tuple[str, ...], ...] = (
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("bundle", "exec"),
    ("pnpm", "exec"),
    ("npx",),
    ("pnpx",),
    ("bunx",),
)
_PYTHONS = ("python", "python3")
# Package managers of one ecosystem: a project that runs one (its lockfile) breaks under another.
_SIBLINGS: tuple[frozenset[str], ...] = (frozenset({"npm", "pnpm", "yarn", "bun"}),)


class Guard(BaseModel):
    """One guard, as the hook's snapshot holds it (`core.hooks.fires` reads these fields)."""

    model_config = ConfigDict(frozen=True)

    playbook: str
    entry: str
    text: str  # the entry as exported: what the agent is told
    words: tuple[str, ...]  # a simple command starting with these sets it off
    contains: tuple[str, ...] = ()  # ... holding these words in order after them
    unless: tuple[str, ...] | None = None  # ... unless it starts with these (the form the lesson asks for)
    folder: str | None = None  # ... when it runs outside this folder
    piped_into: str | None = None  # ... when piped into this program
    # ... only where the call can need a module the program lacks (these, or any outside the standard library, or
    # a project file it runs): a module fact (None: any call)
    imports: tuple[str, ...] | None = None
    refusable: bool = False  # a refusal is what the lesson says (the failing form of a command)
    hard: bool = False  # refuse the call (a rule the user made hard, and refusable), else add the lesson as context
    # The commands the lesson is about (its failing and its working form): where one runs, its situation came up,
    # and it was followed unless the guard fires on it (`core.adherence`).
    about: tuple[tuple[str, ...], ...] = ()


def lesson_json(lesson: AnyLesson) -> str:
    """The typed lesson as it is stored."""
    return _LESSON.dump_json(lesson).decode()


def _project_of(text: str) -> str | None:
    if text.startswith("In ") and ": " in text:
        return text[3 : text.index(": ")]
    return None


def bound_lesson(value: object, text: str) -> AnyLesson | None:
    """The typed lesson `value` holds (an operation's `lesson`, or a stored one as JSON), when `text` is exactly
    what it renders; else None (a model's operation, a lesson whose entry was reworded)."""
    try:
        if isinstance(value, str):
            lesson = _LESSON.validate_json(value)
        elif isinstance(value, dict):
            lesson = _LESSON.validate_python(value)
        else:
            return None
    except (ValidationError, ValueError):
        return None
    return lesson if render(lesson, _project_of(text)) == text else None


def _wrapped(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The bare forms of a command run through a wrapper: `uv run pytest -q` -> `pytest`, `python -m pytest`."""
    for wrapper in _WRAPPERS:
        if words[: len(wrapper)] == wrapper and len(words) > len(wrapper):
            tool = words[len(wrapper)]
            if tool.startswith("-") or "/" in tool:
                return []
            return [(tool,), *((p, "-m", tool) for p in _PYTHONS)] if wrapper[0] in ("uv", "poetry") else [(tool,)]
    return []


def guards_of(lesson: AnyLesson, *, playbook: str, entry: str, text: str, hard: bool = False) -> list[Guard]:
    """The guards of one entry's typed lesson (none for a lesson about no command). `hard` is kept only where a
    refusal is what the lesson says: the command that fails here, or a selector that selects nothing."""

    def guard(
        words: tuple[str, ...], about: tuple[tuple[str, ...], ...], *, refuse: bool = False, **rest: object
    ) -> Guard:
        return Guard(
            playbook=playbook,
            entry=entry,
            text=text,
            words=words,
            refusable=refuse,
            hard=hard and refuse,
            about=about,
            **rest,  # type: ignore[arg-type]
        )

    if isinstance(lesson, Correction) and lesson.worked is not None:
        failed, worked = lesson.failed.words, lesson.worked.words
        if lesson.how == "program":
            before, after = key_words(command_key(failed)), key_words(command_key(worked))
            return [guard(before, (before, after), refuse=True)]
        if lesson.how == "module":  # advice only: which call needs the packages, the hook can only tell in part
            program = key_words(command_key(failed))[:1]
            return [guard(program, (program, worked), imports=lesson.modules)]
        if lesson.how in ("option", "flag"):
            return [
                guard(failed, (failed, worked), refuse=True, unless=worked if worked[: len(failed)] == failed else None)
            ]
        if lesson.how == "folder" and lesson.worked.folder:
            return [guard(worked, (worked,), folder=lesson.worked.folder)]
        return []
    if isinstance(lesson, NothingSelected) and lesson.selector:
        key = key_words(command_key(lesson.command.words))
        return [guard(key, (key,), refuse=True, contains=tuple(lesson.selector.split()))]
    if isinstance(lesson, HiddenFailure):
        key = key_words(command_key(lesson.command.words))
        return [guard(key, (key,), piped_into=lesson.filter)]
    if isinstance(lesson, CommandFact):
        words = lesson.command.words
        found = [guard(bare, (bare, words), unless=words) for bare in _wrapped(words)]
        family = next((f for f in _SIBLINGS if words[0] in f), None)
        if family is not None and len(words) > 1:  # `pnpm install` here: `npm install` is the wrong manager
            found += [guard((other, words[1]), ((other, words[1]), words[:2])) for other in sorted(family - {words[0]})]
        return found
    return []
