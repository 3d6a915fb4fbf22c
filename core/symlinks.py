"""Files the project keeps as symbolic links to others of its files.

A session made the link (`ln -s ../AGENTS.md .claude/CLAUDE.md`) and then staged it with `git add`, so git records it
as a link (mode 120000). An agent
that edits the link's path writes the file it points to, or, rewriting it whole, replaces the link with a copy: the
lesson names both files. Read from the commands by the shell's grammar (`core.shell`); only paths inside the project
are ever named, and a link the session never staged (a scratch link, one git ignores) teaches nothing. The lesson
tells an agent which file to edit, so both paths must be written in words the reviewed lexicon admits
(`core.quote_words`: `AGENTS.md`, `docs/index.md`, not `.env`, `secrets/prod.key` or a name that is a sentence)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence

from pydantic import ValidationError

from core.candidates import Candidate
from core.corrections import PROJECT_PATH
from core.lessons import Symlink
from core.quote_words import unadmitted_words
from core.runs import Run
from core.shell import SimpleCommand, parse_command

__all__ = ["symlinks"]

# The whole project: `git add -A` and its kin stage every file, the link included.
_STAGES_ALL = frozenset({"-A", "--all"})


def _inside(path: str, cwd: str) -> str | None:
    """`path` (absolute, normalised) as a path inside the project rooted at `cwd`: "" for the root itself, None
    outside it."""
    root = cwd.rstrip("/")
    if path == root:
        return ""
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def _commands(run: Run, cwd: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """The simple commands of a run that worked, each with the absolute folder it ran in (`cd` followed as the shell
    does); a command whose words the shell expands at run time, or after a `cd` to a folder it expands, is left out."""
    folder: str | None = posixpath.normpath(posixpath.join(cwd, run.folder or "."))
    for simple in parse_command(run.command.strip()).commands:
        words = _literal(simple)
        if words is None:
            if simple.words[:1] == ("cd",):
                folder = None
            continue
        if words[0] == "cd":
            folder = posixpath.normpath(posixpath.join(folder, words[1])) if folder and len(words) == 2 else None
        elif folder is not None:
            yield folder, words


def _in_git(*paths: str) -> bool:
    """True when a path lies in `.git`, which git never stages (`git add -A` included): a link there, or to a file
    there (a hook, the config), is the machine's setup, never the project's."""
    return any(path.split("/", 1)[0] == ".git" for path in paths)


def _literal(simple: SimpleCommand) -> tuple[str, ...] | None:
    if not simple.words or any(w is None for w in simple.words):
        return None
    return tuple(w for w in simple.words if w is not None)


def _made(words: tuple[str, ...]) -> tuple[str, str] | None:
    """The target and the link path of `ln -s TARGET LINK` (`-s` alone or among other short options, `-sfn`, or
    `--symbolic`), as written; None for any other command, or a form whose link a rule cannot place (into a folder:
    `-t`, a trailing slash, more than one target)."""
    if words[0] != "ln":
        return None
    options = [w for w in words[1:] if w.startswith("-") and w != "--"]
    paths = [w for w in words[1:] if not w.startswith("-")]
    symbolic = any(o == "--symbolic" or (not o.startswith("--") and "s" in o[1:]) for o in options)
    into_folder = any(o in ("-t", "--target-directory") or o.startswith("--target-directory=") for o in options)
    if not symbolic or into_folder or len(paths) != 2 or paths[1].endswith("/") or paths[1] in (".", ".."):
        return None
    return paths[0], paths[1]


def _staged(words: tuple[str, ...], folder: str, cwd: str) -> set[str] | None:
    """What `git add` staged, as paths inside the project ("" for the root), or None for another command."""
    if words[:2] != ("git", "add"):
        return None
    if _STAGES_ALL & set(words[2:]):
        return {""}
    named = (posixpath.normpath(posixpath.join(folder, w)) for w in words[2:] if not w.startswith("-"))
    return {inside for path in named if (inside := _inside(path, cwd)) is not None}


def symlinks(runs: Sequence[Run], cwd: str | None) -> list[Candidate]:
    """The links the session made inside the project with `ln -s` and then staged with `git add` (the link itself
    or a folder that holds it), each pointing to a file inside the project: one candidate each."""
    if not cwd or not cwd.startswith("/"):
        return []  # no root to tell the project's paths from the machine's
    cwd = posixpath.normpath(cwd)
    made: dict[str, str] = {}  # link -> target, both inside the project
    kept: dict[str, Symlink] = {}
    for run in runs:
        if not run.ok or run.rejected:
            continue
        for folder, words in _commands(run, cwd):
            if (link_target := _made(words)) is not None:
                at = posixpath.normpath(posixpath.join(folder, link_target[1]))
                to = posixpath.normpath(posixpath.join(posixpath.dirname(at), link_target[0]))
                link, target = _inside(at, cwd), _inside(to, cwd)
                if (
                    link
                    and target
                    and PROJECT_PATH.match(link)
                    and PROJECT_PATH.match(target)
                    and not _in_git(link, target)
                    and not unadmitted_words(link)
                    and not unadmitted_words(target)
                ):
                    made[link] = target
            elif (staged := _staged(words, folder, cwd)) is not None:
                for link, target in made.items():
                    if any(s == "" or s == link or link.startswith(s + "/") for s in staged):
                        try:
                            kept.setdefault(link, Symlink(link=link, target=target))
                        except ValidationError:
                            continue
    return [
        Candidate(key=f"symlink|{link}", section="PROJECT CONTEXT", lesson=lesson, trigger=f"ln -s {lesson.target}")
        for link, lesson in kept.items()
    ]
