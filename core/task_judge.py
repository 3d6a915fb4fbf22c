"""How a command that runs the project's tasks is judged: by what their recipes run.

A task's name is all a lesson shows (`make test`), and a cloned stranger's project names `clean` a recipe that
runs `rm -rf ~`: so a command that runs a task the project declares (`core.program_tasks.tasks_run`) is judged by
every line of its recipe (`core.recipes`, read by `core.io.declared`), and of the tasks that runs, as deep as
`_MOST_TASKS_DEEP`, each line as a command line of its own (`core.allowlist`, given as `LineJudge`: it judges the
tasks its lines run here in turn). A task sent to a folder below the project is judged by that folder's recipes,
held where playbook did not read them; an install from a requirements file by what the file names; a recipe that
publishes is held. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from core.program_calls import Call, clip
from core.program_tasks import reads_elsewhere, releases, run_elsewhere, runs_in_members, tasks_run
from core.pytest_config import runs_pytest
from core.recipes import EVERY, FALLBACK, SHELL, Tasks, scanned_folder, unread
from core.refusal import Refusal
from core.shell import parse_command
from core.vouched import Vouched

__all__ = ["LineJudge", "task_refusals"]

# Why a command line, run `depth` tasks deep, may not reach an agent (`core.allowlist`); passed in, as it judges
# the tasks its own lines run here.
LineJudge = Callable[[str, Vouched, int], list[Refusal]]

# Runners whose task named by no name is their default (`make` alone); another's is the command itself (`uv run`).
_TASK_RUNNERS = frozenset({"make", "just", "task", "rake", "mise"})
# How `core.recipes.unread` writes a line saying what cannot be read before the task runs.
_UNREAD = unread("", "")[1][:-1]
# A task's recipe may run another task, and that one another: past this depth the judge stops reading and holds.
_MOST_TASKS_DEEP = 4
_EVERY_CALL = {
    "bun": "bun",
    "bunx": "bun",
    "bundle": "bundle",
    "pipenv": "pipenv",
    "poetry": "poetry",
    # (round 9) what their manifests and settings fetch and trust (`core.module_sources`, `core.dotnet_config`,
    # Gradle's settings in `core.build_wrappers`)
    "dotnet": "dotnet",
    "gradle": "gradle",
    "gradlew": "gradle",
    "deno": "deno",
    "go": "go",
    "dart": "dart",
    "flutter": "dart",
    "swift": "swift",
    "sbt": "sbt",
}
_REQUIREMENT_OPTIONS = ("-r", "--requirement", "-c", "--constraint")


def task_refusals(
    call: Call,
    vouched: Vouched,
    line_refusals: LineJudge,
    *,
    depth: int = 0,
    places: frozenset[str] = frozenset({""}),
    as_folders: frozenset[str] = frozenset(),
) -> list[Refusal]:
    """Why `call`, a command of a line `depth` tasks deep, may not reach an agent for what the tasks it runs run
    (the first refusal of each place it runs in), or []. `places`: the folders below the project it runs in (`""`:
    the project's own), `as_folders` those of them written as folders; `line_refusals` judges a recipe's line."""
    judge = _TaskJudge(vouched, line_refusals, depth, places, as_folders)
    judge.recipes(call)
    return judge.found


def _clip(text: str) -> str:
    return clip(text, 60)


@dataclass
class _TaskJudge:
    vouched: Vouched
    line_refusals: LineJudge
    depth: int  # how many tasks' recipes deep the line is (`make test` runs `make build` runs ...)
    places: frozenset[str]
    as_folders: frozenset[str]
    found: list[Refusal] = field(default_factory=list)

    def refuse(self, rule: str, detail: str) -> None:
        self.found.append(Refusal(rule, detail))

    def elsewhere(self, tasks: Tasks) -> _TaskJudge:
        """A judge of the same line by another place's `tasks` alone."""
        there = replace(self.vouched, tasks=tasks, folders=frozenset())
        return _TaskJudge(there, self.line_refusals, self.depth, frozenset({""}), frozenset())

    def recipes(self, call: Call) -> None:
        """A task the project declares is judged by what its recipe runs (a cloned project names `clean` a recipe
        that runs `rm -rf ~`): every line of it, and of the tasks it runs, as deep as `_MOST_TASKS_DEEP`."""
        by_task = _recipes_by_task(self.vouched.tasks.recipes)
        # What holds every command, a task or not: what mise gives the agent's shell here (`core.recipes.SHELL`);
        # once, for the line a lesson shows (a recipe's lines run in the same shell).
        if self.depth == 0 and self.lines_refused("mise `[env]`", by_task.get(f"{SHELL}:{EVERY}", ())):
            return
        if call.family in ("pip", "uv") and self.requirements_refused(call):
            return
        if (several := runs_in_members(call)) is not None:
            # Every member's own scripts, as `pnpm -r` runs them: places whose recipes are not read one by one.
            self.refuse("program", f"`{_clip(several)}` runs tasks in several places, whose recipes were not read")
            return
        tasks = tasks_run(call)
        if tasks and (option := reads_elsewhere(call)) is not None:
            # A folder below the project or a workspace member, whose files were read: judged as the same call run
            # there, by that place's recipes alone.
            elsewhere = run_elsewhere(call)
            there = _tasks_at(self.vouched.tasks, elsewhere[0]) if elsewhere is not None else Tasks()
            if elsewhere is None or not there:
                where = f"`{call.family} {_clip(option)}`"
                self.refuse("program", f"{where} runs tasks of a file or folder whose recipes were not read")
                return
            judge = self.elsewhere(there)
            judge.recipes(elsewhere[1])
            self.found += [Refusal(r.rule, f"at `{_clip(elsewhere[0])}`, {r.detail}") for r in judge.found]
            return
        # Any command, a task or not, run in a folder the lesson names: a folder reached through a link, hidden, a
        # dependency's (`node_modules/x/`) or one playbook never saw holds it (round 9: `node build.js` from a
        # linked `assets/` ran code outside the project).
        # pytest however it is called (`python -m pytest`, `hatch test`): its configuration may load code from outside.
        every = "pytest" if runs_pytest(call.family, call.args) else _EVERY_CALL.get(call.family)
        runs_tasks = bool(tasks) or every is not None
        for place in sorted(self.places - {""}):
            # another command only where the place is written as a folder (`assets/`, or gone to by `cd`): "the style
            # is in `.clang-format`" names a file
            if not runs_tasks and place not in self.as_folders:
                continue
            if self.refused_at(place, call, runs_tasks=runs_tasks):
                return
        # What holds every command of a tool: bun loads the project's `.env` into whatever it runs; bundle, pipenv,
        # poetry, dotnet, gradle, deno, go, dart, swift and sbt fetch from the sources the project's files name;
        # pytest loads the paths and plugins its configuration names (`core.pytest_config`).
        if every is not None and self.lines_refused(f"`{every}` command", by_task.get(f"{every}:{EVERY}", ())):
            return
        for task in tasks:
            runner, _, named = task.partition(":")
            own = by_task.get(task, ())
            # What every task of the file runs, and, for a task with no recipe of its own, what its runner falls
            # back on (a Makefile's pattern rules).
            lines = (
                own + by_task.get(f"{runner}:{EVERY}", ()) + (() if own else by_task.get(f"{runner}:{FALLBACK}", ()))
            )
            if lines and self.depth >= _MOST_TASKS_DEEP:
                self.refuse("program", f"`{_clip(named)}` runs tasks more than {_MOST_TASKS_DEEP} deep")
                return
            what = f"`{named}`" if named else "default task" if runner in _TASK_RUNNERS else f"`{runner}` command"
            if self.lines_refused(what, lines):
                return

    def refused_at(self, place: str, call: Call, *, runs_tasks: bool = True) -> bool:
        """Whether `call`, run in the folder `place` below the project, is refused (and why, added): judged by that
        folder's recipes where playbook read it; where it has no runner's file its runner finds the project's own (or
        none), judged as run at the top; a folder not read holds it. `runs_tasks`: `call` runs the project's tasks
        (else it is another command, run there)."""
        tasks = self.vouched.tasks
        runs, read = ("runs tasks in", "recipes") if runs_tasks else ("runs in", "files")
        there = _tasks_at(tasks, f"./{place}")
        if there:
            judge = self.elsewhere(there)
            judge.recipes(call)
            self.found += [Refusal(r.rule, f"in `{_clip(place)}/`, {r.detail}") for r in judge.found]
            return bool(judge.found)
        through_link = any(place == link or place.startswith(f"{link}/") for link in tasks.places_linked)
        if tasks.places_cut or not scanned_folder(place) or through_link:
            self.refuse("program", f"`{call.family}` {runs} `{_clip(place)}/`, a folder whose {read} were not read")
            return True
        # A folder playbook never saw (or one a link leads to).
        if tasks and place in self.as_folders and place not in tasks.places_seen:
            self.refuse("program", f"`{call.family}` {runs} `{_clip(place)}/`, a folder playbook did not see")
            return True
        return False  # seen, and no runner's file in it; or a name no folder has (a file's): judged at the top

    def requirements_refused(self, call: Call) -> bool:
        """Whether an install from a requirements file (`pip install -r requirements.txt`) is refused: the file
        must have been read (`core.requirements_files`) and name only requirements, and what they are."""
        by_file = _requirements_by_file(self.vouched.tasks.requirements)
        for option, name in _requirements_given(call.args):
            file = name.removeprefix("./")
            lines = by_file.get(file)
            if lines is None:
                self.refuse("install", f"`{option} {_clip(name)}`: a requirements file playbook did not read")
                return True
            if self.lines_refused(f"`{_clip(file)}`", [line for line in lines if line]):
                return True
        return False

    def lines_refused(self, what: str, lines: Sequence[str]) -> bool:
        """Whether a line the project's `what` runs is refused (and the refusal, the first, added)."""
        for line in lines:
            if line.startswith(_UNREAD) and line.endswith(")"):
                why = _clip(line[len(_UNREAD) : -1])
                self.refuse("program", f"what the project's {what} runs is known only when it runs: {why}")
                return True
            refused = self.line_refusals(line, self.vouched, self.depth + 1) or _publishing(line)
            if refused:
                self.refuse(refused[0].rule, f"the project's {what} runs `{_clip(line)}`: {refused[0].detail}")
                return True
        return False


@lru_cache(maxsize=8)
def _recipes_by_task(recipes: frozenset[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """`recipes` by task, each task's lines in order: built once per vouched set (an export judges thousands of
    commands against the same one), where a scan of every recipe for each task a command runs would not be."""
    by_task: dict[str, list[str]] = {}
    for task, line in recipes:
        by_task.setdefault(task, []).append(line)
    return {task: tuple(sorted(lines)) for task, lines in by_task.items()}


def _requirements_given(args: Sequence[str]) -> list[tuple[str, str]]:
    """The requirements and constraints files an install is given (`-r x.txt`, `-rx.txt`, `--requirement=x.txt`)."""
    found = []
    for i, arg in enumerate(args):
        if arg in _REQUIREMENT_OPTIONS and i + 1 < len(args):
            found.append((arg, args[i + 1]))
        elif arg.startswith(("--requirement=", "--constraint=")):
            found.append((arg.partition("=")[0], arg.partition("=")[2]))
        elif arg[:2] in ("-r", "-c") and len(arg) > 2 and not arg.startswith("--"):
            found.append((arg[:2], arg[2:]))
    return found


@lru_cache(maxsize=8)
def _requirements_by_file(requirements: frozenset[tuple[str, str, str]]) -> dict[str, tuple[str, ...]]:
    """The lines an install from each requirements file of the folder's own (place `""`) is judged by, in order."""
    by_file: dict[str, list[str]] = {}
    for place, file, line in requirements:
        if not place:
            by_file.setdefault(file, []).append(line)
    return {file: tuple(sorted(lines)) for file, lines in by_file.items()}


@lru_cache(maxsize=64)
def _tasks_at(tasks: Tasks, place: str) -> Tasks:
    """`tasks.at(place)`, remembered: a line's tasks are judged at the same few places, against one vouched set."""
    return tasks.at(place)


def _publishing(line: str) -> list[Refusal]:
    """A recipe line whose command publishes, pushes or deploys (`git push origin HEAD:master`, `npm publish`): a
    routine's name on a recipe that releases says less than it does, and a release is the user's call."""
    for command in parse_command(line).commands:
        words = [w for w in command.words[1:] if w is not None and not w.startswith("-")]
        if words and releases(words[0]):
            what = _clip(f"{command.written} {words[0]}")
            return [Refusal("program", f"`{what}` publishes or deploys: a release is the user's call")]
    return []
