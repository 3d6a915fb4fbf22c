"""Exports: what a playbook gives the agents (redacted, screened, within its budget), and the one writer every
export goes through: `playbook export --out`, the nightly's `<out_dir>/<playbook>.md` and `.json`, and each export
target of `publish` and `publish --git`. Every file written is recorded (which entries it carried, from which
version), so the trigger recurrence knows what agents had."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from core.budget import BudgetUse, budget_use, fit_budget
from core.errors import PlaybookFileError
from core.exposure import about_projects
from core.hooks import for_project
from core.invisible import normalise
from core.io.declared import Declarations
from core.io.files import read_text, target_of, write_atomic
from core.markdown import remove_block, replace_block, to_markdown
from core.models import Playbook
from core.playbook_json import encode, playbook_to_dict
from core.playbook_names import is_playbook_name
from core.playbook_screen import EntryScreen, Screened, Support, screen_keys
from core.projects import project_of
from core.redact import mask_playbook
from core.screen import Vouched
from core.store.held_ids import held_ids
from core.store.provenance import entry_providers, entry_sources
from core.store.published import approved_version, record_export, stale_entries
from core.store.registry import require_playbook
from core.store.screen_verdicts import keep_verdicts, kept_verdicts, rules_fingerprint
from core.store.screening import project_folders, released_holds, shared_playbook, support_of, vouched_by_prompts
from core.store.sessions import project_names
from core.store.versions import entry_since, load_version, rediscovery_counts
from core.targets import ExportTarget, render_target
from flows.context import Database, ExportRules
from flows.delivery.sources import sources_of
from flows.workspace import Workspace

__all__ = [
    "DEFAULT_GIT_KINDS",
    "Export",
    "ExportFormat",
    "Exported",
    "Published",
    "export_files",
    "export_playbook",
    "export_to",
    "exported_version",
    "how_to_add_targets",
    "own_files",
    "prepare_export",
    "publish_targets",
    "publishable",
    "render_export",
    "screened",
    "vouched",
    "without_held_ids",
    "write_export",
]

ExportFormat = Literal["json", "markdown", "claude-md"]
DEFAULT_GIT_KINDS = ("claude-md", "agents-md")  # what a playbook without targets publishes into a repository


class Export(BaseModel):
    """One playbook as an export gives it: the entries, what the budget and the screen left out, the note every
    written file ends with, and the version it comes from (None: the newest)."""

    model_config = ConfigDict(frozen=True)

    playbook: str
    model: Playbook
    use: BudgetUse
    note: str | None
    version: int | None
    citations: dict[str, list[str]] = {}  # entry id -> what it rests on in its project (`core.citations`)
    outdated: dict[str, str] = {}  # entry id -> why what it rests on no longer holds (not delivered)

    @property
    def entry_ids(self) -> list[str]:
        """The ids of the entries it carries."""
        return [e.name for _, e in self.model.entries()]


class Published(BaseModel):
    """What the writer did with one file."""

    playbook: str
    kind: str
    path: str
    # empty: the playbook has no entry to give agents, and there was no file to take its block out of
    status: Literal["written", "unchanged", "refused", "empty"]
    message: str = ""
    file: Path | None = Field(default=None, exclude=True)  # where it was written (a worktree for --git)


def vouched(con: duckdb.DuckDBPyConnection, rules: ExportRules) -> Vouched:
    """What the user and their projects vouch for: what the user's own prompts name (hosts, programs, scripts,
    languages), and the programs and packages the projects declare, read from the sessions' working folders and the
    export targets' repositories that exist on this machine."""
    said = vouched_by_prompts(con)
    sessions = sorted({Path(f) for f in project_folders(con)})
    targets = sorted({t.repo.expanduser() for t in rules.targets if t.repo})
    # A lesson is judged by what the project it was learnt in declares and every repository it is written into;
    # read in one pass, as the sessions' folders share their parents' files and their workspaces.
    read = Declarations()
    return replace(
        said,
        programs=said.programs | read.programs(targets),
        packages=read.packages(targets),
        tasks=read.tasks(targets),
        projects=tuple(read.project(f) for f in sessions),
    )


def screened(con: duckdb.DuckDBPyConnection, rules: ExportRules, model: Playbook) -> tuple[Playbook, list[Screened]]:
    """`model` as it may reach an agent: normalised (NFKC, no invisible characters), without the entries held by
    their id (`core.store.held_ids`), and without the entries the screen holds (`core.screen`) unless a person
    released their text; the held entries, with the rules that hold them. Every entry is screened (`playbook
    review`, an export of the whole playbook)."""
    model, screen = _screen_of(con, rules, without_held_ids(con, rules.playbook, model)[0])
    whole = screen.whole()
    keep_verdicts(con, screen.read_now, rules_fingerprint())
    return whole


def without_held_ids(con: duckdb.DuckDBPyConnection, playbook: str, model: Playbook) -> tuple[Playbook, int]:
    """`model` without the entries held by their id (an older version stored an id playbook never makes), and how
    many there were: nothing renders such an id, not even `playbook review`."""
    held = held_ids(con, playbook)
    if not held:
        return model, 0
    kept = {s: [e for e in items if e.name not in held] for s, items in model.sections.items()}
    gone = sum(len(items) for items in model.sections.values()) - sum(len(items) for items in kept.values())
    return model.model_copy(update={"sections": kept}), gone


def _screen_of(con: duckdb.DuckDBPyConnection, rules: ExportRules, model: Playbook) -> tuple[Playbook, EntryScreen]:
    """`model` normalised (NFKC, no invisible characters), and its screen, read entry by entry as it is asked
    (`core.playbook_screen.EntryScreen`). An entry the rules wrote without a model is keyless: it may carry no link
    at all. The verdicts it reads are kept by the caller (`keep_verdicts` of its `read_now`)."""
    texts = {e.name: e.text for _, e in model.entries()}
    plain = {
        s: [e if normalise(e.text) == e.text else e.model_copy(update={"text": normalise(e.text)}) for e in items]
        for s, items in model.sections.items()
    }
    model = model.model_copy(update={"sections": plain})
    support = support_of(con, rules.playbook, texts)
    keyless = {name for name, by in entry_providers(con, rules.playbook).items() if by == "heuristic"}
    support = {
        name: found.model_copy(update={"keyless": True}) if name in keyless else found
        for name, found in support.items()
    }
    support = _bound_to_projects(con, model, support)
    said = vouched(con, rules)
    # Each text's verdict as the last run kept it when nothing it depends on changed (`core.store.screen_verdicts`):
    # only what this run changed is read again.
    code = rules_fingerprint()
    known = kept_verdicts(con, screen_keys(model, said, support, rules=code))
    return model, EntryScreen(
        model,
        said,
        support,
        released_holds(con, rules.playbook),
        shared=shared_playbook(con, rules.playbook),
        min_contributors=rules.min_contributors,
        known=known,
        rules=code,
    )


def _bound_to_projects(
    con: duckdb.DuckDBPyConnection, model: Playbook, support: dict[str, Support]
) -> dict[str, Support]:
    """`support` with each entry about one project (`In api: ...`, which only that project's agents are given, by
    the hooks and by a repository's export) carrying that project's folders, whose declarations it is judged by;
    any other entry reaches every project's agents and is judged by what every project declares."""
    bound = about_projects(model.entries(), project_names(con))
    # Folders whose project names read alike are one project's (round 8b: `a/api` and `b/API`, `ａｐｉ`, `api.`
    # taught one lesson, "In api: ...", judged by the harmless one alone).
    folders: dict[str, set[str]] = {}
    for folder in project_folders(con):
        folders.setdefault(_folded(project_of(folder)), set()).add(str(Path(folder)))  # as `vouched` names them
    out = dict(support)
    for name, project in bound.items():
        if folders.get(_folded(project)):
            mine = frozenset(folders[_folded(project)])
            out[name] = (support.get(name) or Support()).model_copy(update={"folders": mine})
    return out


def _folded(project: str) -> str:
    """A project's name as names that read alike share it: NFKC, case folded, no trailing dots or blanks."""
    return unicodedata.normalize("NFKC", project).casefold().rstrip(". \t")


def exported_version(con: duckdb.DuckDBPyConnection, rules: ExportRules) -> int | None:
    """The version exports carry: the newest approved one when the playbook requires review (curated versions
    wait for `playbook review`), else None (the newest)."""
    return approved_version(con, rules.playbook) if rules.review_required else None


def prepare_export(
    con: duckdb.DuckDBPyConnection,
    rules: ExportRules,
    version: int | None = None,
    *,
    whole: bool = False,
    project: str | None = None,
) -> Export:
    """What an export writes: redacted, screened (held entries never go out), without stale entries and entries
    whose citations no longer hold in their project (`flows.delivery.sources`), and cut to the budget; all of it
    (redacted and screened) when `whole`. With review required, the newest approved version unless `version`
    names one. `project`: for a file of that project's repository, without the entries about another project
    (`core.hooks.for_project`), before the budget is spent."""
    latest = version is None
    version = exported_version(con, rules) if latest else version
    model, by_id = without_held_ids(con, rules.playbook, load_version(con, rules.playbook, version))
    model = mask_playbook(model, rules.redactor)
    sources = sources_of(con, rules.playbook)
    outdated = {e: s.reason for e, s in sources.items() if s.status == "held" and s.reason}
    if whole:
        model, held = screened(con, rules, model)
        use = budget_use(model, rules.budget).model_copy(update={"held": len(held)})
    else:
        # Only the entries the budget would take are screened, in its rank order until it is full (a held entry
        # makes room for the next): what an export screens is bounded by the budget, not the playbook. Each is
        # read with its neighbours in the whole playbook, before anything below takes entries out.
        model, screen = _screen_of(con, rules, model)
        if latest:  # staleness and what entries rest on are about now, so only for what is exported now
            days = rules.stale_after_days
            gone = {r.name for r in stale_entries(con, rules.playbook, days)} if days else set()
            gone |= set(outdated)
            if gone:
                kept = {s: [e for e in items if e.name not in gone] for s, items in model.sections.items()}
                model = model.model_copy(update={"sections": kept})
        if project is not None:
            bound = about_projects(model.entries(), project_names(con))
            kept = {s: [e for e in items if for_project(bound, e.name, project)] for s, items in model.sections.items()}
            model = model.model_copy(update={"sections": kept})
        model, use = fit_budget(
            model,
            rules.budget,
            rediscoveries=rediscovery_counts(con, rules.playbook),
            since=entry_since(con, rules.playbook),
            admits=screen.admits,
        )
        keep_verdicts(con, screen.read_now, rules_fingerprint())
    return Export(
        playbook=rules.playbook,
        model=model,
        use=use,
        note=_note(con, rules.playbook, model, use, whole=whole, by_id=by_id),
        version=version,
        citations={e: [c.shown() for c in src.citations] for e, src in sources.items()},
        outdated=outdated if latest and not whole else {},
    )


def _note(
    con: duckdb.DuckDBPyConnection, playbook: str, model: Playbook, use: BudgetUse, *, whole: bool, by_id: int = 0
) -> str | None:
    """The lines an export ends with: which providers wrote the entries, those written by rules rather than a
    model, entries the screen held (`whole`: of the whole playbook, else of those the budget would take: only those
    are screened), entries held by their id (`by_id`), and entries left out to fit the budget."""
    lines = []
    names = {e.name for _, e in model.entries()}
    writers = Counter(by for name, by in entry_providers(con, playbook).items() if name in names)
    if writers:
        lines.append("Written by " + ", ".join(f"{by} ({n})" for by, n in writers.most_common()) + ".")
    ruled = {name for name, by in entry_providers(con, playbook).items() if by == "heuristic"} & names
    if ruled:
        lines.append(
            f"{len(ruled)} of these entries were written by rules, without a model (the heuristic provider);"
            " `playbook recurate` has a model look at their sessions again."
        )
    if use.held:
        among = "" if whole else " among those the budget would take, each replaced by the next in rank"
        lines.append(
            f"{use.held} entr{'y' if use.held == 1 else 'ies'} held by the screen{among} (not known to be safe: a"
            " command outside the allow-list, a link to a host the user never named, an instruction to the agent,"
            " too little support); `playbook review` lists every held entry with the rule that held it."
        )
    if by_id:
        lines.append(
            f"Warning: {by_id} entr{'y' if by_id == 1 else 'ies'} held, never delivered: an older version stored"
            " an id playbook never makes (it may carry markup or commands); `playbook review --json` lists them"
            " (`held_ids`)."
        )
    if use.left_out:
        lines.append(
            f"{use.left_out} more entr{'y' if use.left_out == 1 else 'ies'} left out to fit the budget"
            f" ({use.max_entries} entries, {use.max_tokens:,} tokens); `playbook show` lists them all."
        )
    return " ".join(lines) or None


def render_export(
    export: Export,
    kind: ExportFormat | ExportTarget,
    existing: str | None = None,
    *,
    source: str = "the file",
    sources: dict[str, list[str]] | None = None,
) -> str | None:
    """The text of one export: the seeds' playbook.json (with each entry's `sources` when given), a Markdown
    document, the marked block of a CLAUDE.md-like file (`existing`: its current text), or an export target.
    None: a file agents read, for an empty playbook, where there is none (none is created: see `render_target`)."""
    if isinstance(kind, ExportTarget):
        return render_target(kind, export.playbook, export.model, existing, note=export.note)
    if kind == "json":
        data = playbook_to_dict(export.model)
        for items in data["sections"].values():
            for item in items:
                if sources is not None:
                    item["sources"] = sources.get(item["name"], [])
                if export.citations.get(item["name"]):
                    item["citations"] = export.citations[item["name"]]
        return encode(data)
    if kind == "markdown":
        return to_markdown(export.model, title=f"Playbook `{export.playbook}`", note=export.note)
    if not any(export.model.sections.values()):
        return None if existing is None else remove_block(existing, source=source)
    block = to_markdown(export.model, title=None, counters=False, note=export.note)
    return replace_block(existing or "", block, source=source)


def write_export(
    con: duckdb.DuckDBPyConnection,
    export: Export,
    kind: ExportFormat | ExportTarget,
    path: Path,
    *,
    recorded_as: str | None = None,
    sources: dict[str, list[str]] | None = None,
) -> Published:
    """Write one export file atomically (keeping what the file it replaces had, see `core.io.files`) and record
    it; a file that cannot be written safely (broken markers, not UTF-8, not ours to overwrite, a link out of its
    repository) is refused with its reason and left as it was."""
    label = kind.kind if isinstance(kind, ExportTarget) else kind
    try:
        target_of(path)  # a link out of its repository is refused before the file it leads to is even read
        existing = read_text(path) if path.exists() else None
        text = render_export(export, kind, existing, source=str(path), sources=sources)
        status: Literal["written", "unchanged", "refused", "empty"]
        status = "empty" if text is None else "unchanged" if text == existing else "written"
        if text is not None and status == "written":
            write_atomic(path, text)
    except PlaybookFileError as exc:
        return Published(playbook=export.playbook, kind=label, path=str(path), status="refused", message=str(exc))
    # A file agents may load: from now on its entries' triggers count as "after" (v_trigger_recurrence).
    record_export(con, export.playbook, export.version, recorded_as or str(path), export.entry_ids)
    return Published(playbook=export.playbook, kind=label, path=recorded_as or str(path), status=status, file=path)


def own_files(db: Database, rules: ExportRules, out_dir: Path) -> list[Published]:
    """Write the playbook's own files, `<out_dir>/<playbook>.md` and `.json` (the seeds' playbook.json), within
    budget; what happened to each (a file that cannot be written safely is refused, not raised)."""
    if _outside(out_dir, rules.playbook):
        why = f"{rules.playbook!r} is not a playbook name: its files would not stay in `{out_dir}`; nothing written."
        name, where = rules.playbook, str(out_dir)
        return [Published(playbook=name, kind=k, path=where, status="refused", message=why) for k, _ in _FILES]
    with db.open() as con:
        export = prepare_export(con, rules)
        return [write_export(con, export, kind, out_dir / f"{rules.playbook}{suffix}") for kind, suffix in _FILES]


def _outside(out_dir: Path, playbook: str) -> bool:
    """True unless `<out_dir>/<playbook>.*` are files right in `out_dir`. The names a command reaches here with are
    checked already (settings, workspace): this holds for any caller, since a name is a path's last part only
    when it is a plain name."""
    return not is_playbook_name(playbook) or any((out_dir / f"{playbook}{s}").parent != out_dir for _, s in _FILES)


def export_files(db: Database, rules: ExportRules, out_dir: Path) -> list[Path]:
    """The nightly's files (`own_files`).

    Raises:
        PlaybookFileError: one of them could not be written safely.
    """
    for result in own_files(db, rules, out_dir):
        if result.status == "refused":
            raise PlaybookFileError(result.message)
    return [out_dir / f"{rules.playbook}{suffix}" for _, suffix in _FILES]


_FILES: tuple[tuple[ExportFormat, str], ...] = (("markdown", ".md"), ("json", ".json"))


def export_playbook(ws: Workspace, playbook: str) -> list[Path]:
    """`export_files` of `playbook` into the settings' `out_dir`, as the nightly run writes them."""
    return export_files(ws.database(playbook), ws.rules(playbook), ws.out_dir)


def publish_targets(
    db: Database,
    rules: Sequence[ExportRules],
    *,
    root: Path | None = None,
    default_kinds: Sequence[str] = (),
    recorded_as: Callable[[Path], str] = str,
) -> list[Published]:
    """Write every configured export target of each playbook (`[playbook_settings.NAME] targets`), each within
    budget; a file that cannot be written safely is refused with its reason and the others still go out.

    `root`: write the repository targets into this working copy instead (`publish --git`); targets named by
    `path` are left out there. `default_kinds`: the kinds a playbook without targets gets under `root`.
    `recorded_as`: the name the `exports` table keeps for a written file.
    """
    results: list[Published] = []
    for rule in rules:
        with db.for_playbook(rule.playbook).open() as con:
            # Each target with the project it is for: a repository's folder name (None: a file named by `path`
            # serves every project, and so does a working copy of unknown name under `root`).
            targets = [(t, _project_of(t)) for t in rule.targets]
            if root is not None:
                rooted = [(t.in_repo(root), project) for t, project in targets]
                targets = [(t, project) for t, project in rooted if t is not None] or (
                    [] if targets else [(ExportTarget(kind=k, repo=root), None) for k in default_kinds]  # type: ignore[arg-type]
                )
            if not targets:
                continue
            exports = {project: prepare_export(con, rule, project=project) for project in {p for _, p in targets}}
            for target, project in targets:
                path = target.file()
                results.append(write_export(con, exports[project], target, path, recorded_as=recorded_as(path)))
    return results


def _project_of(target: ExportTarget) -> str | None:
    if target.repo is None:
        return None
    return project_of(str(target.repo.expanduser().resolve())) or None


class Exported(BaseModel):
    """What `export_to` did: the text (when it went to standard output) or the file written, and the note.
    `empty`: a format agents read (`claude-md`) and a playbook with no entry, so nothing was said."""

    text: str | None
    path: Path | None
    note: str | None
    empty: bool = False


def export_to(
    ws: Workspace,
    playbook: str,
    fmt: ExportFormat,
    out_file: Path | None = None,
    *,
    version: int | None = None,
    whole: bool = False,
    sources: bool = False,
) -> Exported:
    """`playbook export`: one version in `fmt`, as text, or written to `out_file` (`claude-md`: its marked block)
    and recorded.

    Raises:
        PlaybookFileError: `out_file` cannot be written safely (broken markers, not UTF-8, ...); it is left as it
            was.
    """
    db, rules = ws.database(playbook), ws.rules(playbook)
    if out_file is None:
        with db.read() as con:
            export = prepare_export(con, rules, version, whole=whole)
            shaped = entry_sources(con, playbook) if sources else None
        text = render_export(export, fmt, sources=shaped)
        return Exported(text=text, path=None, note=export.note, empty=text is None)
    with db.write("export", create=False) as con:
        export = prepare_export(con, rules, version, whole=whole)
        shaped = entry_sources(con, playbook) if sources else None
        done = write_export(con, export, fmt, out_file, sources=shaped)
    if done.status == "refused":
        raise PlaybookFileError(done.message)
    return Exported(text=None, path=out_file, note=export.note, empty=done.status == "empty")


def publishable(db: Database, ws: Workspace, playbooks: Sequence[str]) -> list[ExportRules]:
    """The export rules of `playbooks`, each of which must exist.

    Raises:
        ConfigError: a name is not a playbook name.
        StoreError: a playbook does not exist.
    """
    rules = [ws.rules(name) for name in playbooks]  # checks each name before a file is named after it
    for name in playbooks:
        with db.for_playbook(name).read() as con:
            require_playbook(con, name)
    return rules


def how_to_add_targets(playbook: str) -> str:
    """The one line that says how a playbook gets export targets of its own."""
    return (
        "No export targets are configured, so only the playbook's own files were written; add `targets = [{ kind ="
        f' "claude-md", repo = "~/src/app" }}]` under `[playbook_settings.{playbook}]` in playbook.toml'
        " (docs/delivery.md), or pass --git REPO."
    )
