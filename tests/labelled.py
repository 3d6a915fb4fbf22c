"""The labelled sets and how a playbook scores against them (the miner's test and bench share this): recall of the
labelled lessons, the share of entries that state one, junk, and unsafe entries.

- `in sample`: data/lessons/mined.json, the bundled sessions of data/samples the miner was written on;
- `dev` and `test`: data/lessons/unseen, the sessions of data/unseen split by repository (halves.json). The miner is
  tuned on `dev` only; `test` is measured, never read while tuning.

The export's screen admits what the projects the sessions ran in declare, read from their folders; on a user's
machine those folders exist. Each set carries its projects' declaring files (data/unseen/projects, data/sample-projects,
with `roots.json`: the folders the sessions ran in that are each repository's root); `publication` copies them under
its tmp folder and, after mining, points each session's folder there, so the export reads them as a user's does.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.models import SessionMessage
from core.said import sentences

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "data" / "lessons" / "mined.json"
UNSEEN_LABELS = ROOT / "data" / "lessons" / "unseen"
SAMPLE_PROJECTS = ROOT / "data" / "sample-projects"  # beside, not inside: ingest reads every file of data/samples
UNSEEN_PROJECTS = ROOT / "data" / "unseen" / "projects"

Half = Literal["in sample", "dev", "test"]
HALVES: tuple[Half, ...] = ("in sample", "dev", "test")

# What the agent's own tools already enforce or report: a lesson that restates one is noise.
TOOL_RULES = re.compile(
    r"(?i)has not been read yet|read it first|string to replace not found|found \d+ matches of the string|"
    r"exceeds maximum allowed tokens|sibling tool call errored|is not running, so cannot be killed|"
    r"doesn't want to (?:proceed|take this action)"
)
PATH = re.compile(r"(?:/Users/|/home/|~/|[A-Za-z]:\\\\|[A-Za-z]:/)\S+")
BARE_EXIT = re.compile(r'(?i)fails with "?(?:exit code \d+|error)"?[,:.]')
# A measuring stick, not a screen: an entry that tells an agent to switch a safeguard off or act as another user.
# (What is published is decided by the allow-list of core.allowlist; this only counts what got through.)
UNSAFE = re.compile(
    r"(?i)(?:--force\b|--no-verify\b|\bsudo\b|--dangerously|bypasspermissions|--skip-hooks?\b|\bpush -f\b"
    r"|\brm -rf\b|--no-gpg-sign|\bchmod 777\b)"
)


@dataclass(frozen=True)
class LabelledSet:
    """One labelled set: its sessions (id -> labels, each with the `repo` it comes from), the transcript folders
    they come from, and the folder of its projects' declaring files (None: it has none)."""

    half: Half
    sessions: dict[str, dict[str, Any]]
    folders: tuple[Path, ...]
    projects: Path | None = None

    @property
    def lessons(self) -> list[dict[str, Any]]:
        """Every labelled lesson of the set, each with the `repo` of its session."""
        return [lesson | {"repo": s["repo"]} for s in self.sessions.values() for lesson in s["lessons"]]

    def repos_of(self, project: str) -> set[str]:
        """The repositories whose sessions ran in a folder named `project` (the name an entry is bound to)."""
        return {s["repo"] for s in self.sessions.values() if s.get("project") == project}


@dataclass
class Score:
    """How a set of entries does against the labelled lessons."""

    lessons: int
    entries: int
    found: list[str] = field(default_factory=list)  # ids of labelled lessons some entry matches
    matching: list[str] = field(default_factory=list)  # entries that match a labelled lesson
    junk: dict[str, list[str]] = field(default_factory=dict)  # kind -> entries
    unsafe: list[str] = field(default_factory=list)  # entries that tell an agent to switch a safeguard off

    @property
    def recall(self) -> float:
        """The share of labelled lessons some entry states."""
        return len(self.found) / self.lessons if self.lessons else 0.0

    @property
    def precision(self) -> float:
        """The share of entries that state a labelled lesson."""
        return len(self.matching) / self.entries if self.entries else 0.0

    @property
    def junk_count(self) -> int:
        """Entries of a junk kind."""
        return sum(len(v) for v in self.junk.values())


def labelled() -> dict[str, Any]:
    """The in-sample labelled set (data/lessons/mined.json)."""
    data: dict[str, Any] = json.loads(LABELLED.read_text(encoding="utf-8"))
    return data


def labelled_set(half: Half) -> LabelledSet:
    """The labelled set of one half: `in sample` (data/samples), or `dev` / `test` of data/unseen."""
    if half == "in sample":  # each bundled project is a repository of its own
        bundled = {sid: s | {"repo": s["project"]} for sid, s in labelled()["sessions"].items()}
        return LabelledSet(half, bundled, (ROOT / "data" / "samples",), SAMPLE_PROJECTS)
    repos: list[str] = json.loads((UNSEEN_LABELS / "halves.json").read_text(encoding="utf-8"))[half]
    sessions: dict[str, dict[str, Any]] = {}
    for repo in repos:
        found = json.loads((UNSEEN_LABELS / f"{repo}.json").read_text(encoding="utf-8"))["sessions"]
        sessions |= {sid: s | {"repo": repo} for sid, s in found.items()}
    return LabelledSet(half, sessions, tuple(ROOT / "data" / "unseen" / repo for repo in repos), UNSEEN_PROJECTS)


def _parts(path: str) -> list[str]:
    """The folder names of a recorded path, either separator, a Windows drive as a folder (`D:\\app` -> D, app)."""
    return [p.rstrip(":") for p in re.split(r"[/\\]+", path) if p and p != "."]


def _at(cwd: str, roots: Sequence[tuple[str, str]], where: Path) -> Path | None:
    """Where a session recorded as run in `cwd` runs in the copy under `where`: the same folders, below `where`, when
    `cwd` is one of `roots` (longest first) or inside one; None for a folder of no known project."""
    for root, _ in roots:
        if cwd == root or cwd.startswith((root + "/", root + "\\")):
            return where.joinpath(*_parts(root), *_parts(cwd[len(root) :]))
    return None


def on_this_machine(labelled: LabelledSet, work: Path) -> Callable[[str], Path | None]:
    """Each project of `labelled` as it is on its user's machine, under `work`: its declaring files copied to each
    folder its sessions ran in that is its root (`projects/roots.json`, a worktree inside its checkout after the
    checkout). Returns where a session recorded as run in a folder runs here (sub-folders kept, the folder made), or
    None for a folder of no known project."""
    if labelled.projects is None or not (labelled.projects / "roots.json").is_file():
        return lambda cwd: None
    listed = json.loads((labelled.projects / "roots.json").read_text(encoding="utf-8"))["roots"]
    roots = sorted(((root, repo) for repo, found in listed.items() for root in found), key=lambda r: -len(r[0]))
    for root, repo in reversed(roots):
        copy = work.joinpath(*_parts(root))
        copy.mkdir(parents=True, exist_ok=True)
        if (labelled.projects / repo).is_dir():
            shutil.copytree(labelled.projects / repo, copy, dirs_exist_ok=True)

    def where(cwd: str) -> Path | None:
        moved = _at(cwd, roots, work)
        if moved is not None:
            moved.mkdir(parents=True, exist_ok=True)
        return moved

    return where


def _repoint(db: Path, where: Callable[[str], Path | None]) -> None:
    """Point each session's folder in `db` where `where` says its project is on this machine: what the export reads
    a project's declarations from (`core.store.screening.project_folders`). Only the folder column moves: the
    transcripts, and what the miner read from them against the folder they recorded, stay as they are."""
    from core.store.db import open_db

    with open_db(db) as con:
        for (cwd,) in con.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL").fetchall():
            if (moved := where(cwd)) is not None:
                con.execute("UPDATE sessions SET cwd = ? WHERE cwd = ?", [str(moved), cwd])


def _has(text: str, token: str | list[str]) -> bool:
    low = text.lower()
    return any(t.lower() in low for t in token) if isinstance(token, list) else token.lower() in low


def matches(text: str, lesson: dict[str, Any]) -> bool:
    """True when `text` holds every token of `lesson`."""
    return all(_has(text, t) for t in lesson["tokens"])


def _shape(text: str) -> str:
    """The text with paths and numbers set aside, for "the same lesson twice"."""
    return re.sub(r"\d+", "N", PATH.sub("PATH", re.sub(r"`[^`]*/[^`]*`", "`PATH`", text))).lower()


# How an entry names the project it is bound to (`core.lessons.render`): "In cli: ...".
_BOUND = re.compile(r"^In `?([^`:]+)`?: ")


def _states(entry: str, lesson: dict[str, Any], labelled: LabelledSet) -> bool:
    """True when `entry` states `lesson` for the lesson's own repository: a zsh pitfall learned in one repository
    does not state another repository's, however alike the words."""
    bound = _BOUND.match(entry)
    repos = labelled.repos_of(bound.group(1)) if bound else set()
    return matches(entry, lesson) and (not repos or lesson["repo"] in repos)


def score(entries: list[str], against: LabelledSet | None = None) -> Score:
    """Score entry texts against every labelled lesson of `against` (the in-sample set by default); an entry bound
    to a project only states the lessons of that project's repository."""
    labelled = against or labelled_set("in sample")
    lessons = labelled.lessons
    result = Score(lessons=len(lessons), entries=len(entries))
    result.found = [lesson["id"] for lesson in lessons if any(_states(e, lesson, labelled) for e in entries)]
    result.matching = [e for e in entries if any(_states(e, lesson, labelled) for lesson in lessons)]
    junk: dict[str, list[str]] = {"path_as_fix": [], "tool_rule": [], "bare_exit_code": [], "same_twice": []}
    seen: set[str] = set()
    for e in entries:
        if PATH.search(e):
            junk["path_as_fix"].append(e)
        if TOOL_RULES.search(e):
            junk["tool_rule"].append(e)
        if BARE_EXIT.search(e):
            junk["bare_exit_code"].append(e)
        if _shape(e) in seen:
            junk["same_twice"].append(e)
        seen.add(_shape(e))
    result.junk = {k: v for k, v in junk.items() if v}
    result.unsafe = [e for e in entries if UNSAFE.search(e)]
    return result


@dataclass(frozen=True)
class Ceiling:
    """How many labelled lessons a miner that only quotes the user could state at best: those whose tokens all lie
    in one sentence the user typed, in one prompt, or in one message of any kind (the agent's and tools' included,
    which a keyless run may not quote)."""

    lessons: int
    in_a_sentence: int
    in_a_prompt: int
    in_a_message: int


def ceiling(labelled: LabelledSet, sessions: Iterable[tuple[str, Sequence[SessionMessage]]]) -> Ceiling:
    """The `Ceiling` of `labelled` over its sessions' messages (session id, messages); aggregate counts only, so it
    can be read for the test half without reading its lessons."""
    n = sentence = prompt = message = 0
    for sid, messages in sessions:
        prompts = [m.text for m in messages if m.is_prompt and m.text]
        typed = [s for p in prompts for s in sentences(p)]
        texts = [m.text for m in messages if m.text]
        for lesson in labelled.sessions.get(sid, {"lessons": []})["lessons"]:
            n += 1
            sentence += any(matches(s, lesson) for s in typed)
            prompt += any(matches(p, lesson) for p in prompts)
            message += any(matches(t, lesson) for t in texts)
    return Ceiling(n, sentence, prompt, message)


@dataclass(frozen=True)
class Publication:
    """What a keyless user gets through the CLI: the entry texts the export writes (`texts`), every entry the screen
    admits with the budget ignored (`admitted`, `export --all`), and each entry the screen holds with the rules that
    hold it (`held`, as `playbook review` lists them)."""

    texts: list[str]
    admitted: list[str]
    held: dict[str, tuple[str, ...]]


def _exported(path: Path) -> list[str]:
    exported = json.loads(path.read_text(encoding="utf-8"))
    return [e["text"] for section in exported["sections"].values() for e in section]


def publication(labelled: LabelledSet, work: Path, *, traced: bool = False) -> Publication:
    """What a keyless user gets from the set's transcripts, through the CLI as they run it (`ingest`, `curate --llm
    heuristic`, `export --format json`), with everything written under `work`, their projects' folders there too
    (`on_this_machine`, read by the export); `traced`: also what the screen admits past the budget and what it holds (`export --all`,
    `review --json`), else those are empty."""
    from typer.testing import CliRunner

    from flows.cli import app

    runner = CliRunner()
    db = str(work / "m.duckdb")
    env = {"PLAYBOOK_OUT_DIR": str(work / "out"), "ANTHROPIC_API_KEY": ""}

    def run(*args: str) -> str:
        done = runner.invoke(app, [*args, "--db", db], env=env)
        assert done.exit_code == 0, done.output
        return done.output

    run("ingest", *map(str, labelled.folders))
    run("curate", "--llm", "heuristic")
    # Mined as recorded; exported where the user's project folders are (they exist on the user's machine).
    _repoint(work / "m.duckdb", on_this_machine(labelled, work / "projects"))
    run("export", "--format", "json", "--out", str(work / "pb.json"))
    if not traced:
        return Publication(_exported(work / "pb.json"), [], {})
    run("export", "--all", "--format", "json", "--out", str(work / "all.json"))
    held = json.loads(run("review", "--json"))["held"]
    return Publication(
        _exported(work / "pb.json"),
        _exported(work / "all.json"),
        {h["text"]: tuple(sorted({x["rule"] for x in h["holds"]})) for h in held},
    )


def mined_entries(labelled: LabelledSet, work: Path) -> list[str]:
    """The entry texts a keyless user gets from the set's transcripts, through the CLI as they run it (`ingest`,
    `curate --llm heuristic`, `export --format json`), with everything written under `work`."""
    return publication(labelled, work).texts


def lost(own: Sequence[str], got: Publication, labelled: LabelledSet) -> dict[str, tuple[str, str]]:
    """Where each labelled lesson went that one of the miner's own entries (`own`) states and no published entry
    does (`got`, traced): lesson id -> (cause, the entry). Cause: `held: rule+rule` (the screen holds every entry
    stating it; the one with the fewest rules is named), `cut by the budget` (the screen admits one, the export's
    budget left it out), or `not in the playbook` (the curator merged, cut, dropped or deduplicated it)."""
    found: dict[str, tuple[str, str]] = {}
    for lesson in labelled.lessons:
        stating = [e for e in own if _states(e, lesson, labelled)]
        if not stating or any(_states(e, lesson, labelled) for e in got.texts):
            continue
        if cut := [e for e in stating if e in got.admitted]:
            found[lesson["id"]] = ("cut by the budget", cut[0])
        elif held := sorted((got.held[e], e) for e in stating if e in got.held):
            rules, entry = min(held, key=lambda h: len(h[0]))
            found[lesson["id"]] = ("held: " + "+".join(rules), entry)
        else:
            found[lesson["id"]] = ("not in the playbook", stating[0])
    return found
