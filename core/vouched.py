"""What the user and their projects vouch for: what a lesson's commands are judged by.

The user's prompts vouch for the programs they run, the hosts they name, the scripts and languages they write in
(`core.store.screening`); each project folder for what it declares (`core.io.declared`): its programs, its
packages and what its tasks run. `core.allowlist` and `core.task_judge` judge by it. Values only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.recipes import Tasks

__all__ = ["Declared", "Vouched"]


@dataclass(frozen=True)
class Declared:
    """What one project folder declares: its programs, its packages and what its tasks run (`core.io.declared`)."""

    folder: str
    programs: frozenset[str] = field(default_factory=frozenset)
    packages: frozenset[str] = field(default_factory=frozenset)
    tasks: Tasks = field(default_factory=Tasks)


@dataclass(frozen=True)
class Vouched:
    """What the user and their projects vouch for: programs the projects declare or the user's prompts run (which a
    lesson may run), packages the projects declare as dependencies (which a lesson may install or fetch), hosts,
    scripts (Unicode) and languages the user's prompts use, and whether links may appear at all (`links=False` for
    a keyless lesson)."""

    programs: frozenset[str] = field(default_factory=frozenset)
    packages: frozenset[str] = field(default_factory=frozenset)
    hosts: frozenset[str] = field(default_factory=frozenset)
    scripts: frozenset[str] = field(default_factory=frozenset)
    languages: frozenset[str] = field(default_factory=frozenset)
    links: bool = True
    # What the tasks the projects declare run (`core.recipes.Tasks`); with `projects`, those every lesson is judged
    # by wherever it was learnt (the repositories an export writes into).
    tasks: Tasks = field(default_factory=Tasks)
    # The folders below the project a lesson names (`run \`make test\` in \`sub/\``): its tasks are judged as run
    # in each of them too (`core.screen`).
    folders: frozenset[str] = field(default_factory=frozenset)
    # What each project folder declares: a lesson is judged by what the folders it was learnt in declare
    # (`core.playbook_screen`), so one project's task does not hold, or vouch for, the same name in another's,
    # nor its programs and packages vouch for another's lesson.
    projects: tuple[Declared, ...] = ()
