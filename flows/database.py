"""The database and this machine, as the read-only commands see them: every block checked, a user's read-only
SQL, the recent runs, the evolution report, and what `doctor` finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.errors import PlaybookError, StoreError
from core.store.db import open_db, verify
from core.store.ingest import FolderSurvey, survey
from core.store.overview import Overview, database_overview
from core.store.readonly import run_read_only
from core.store.registry import require_playbook
from core.store.runs import RunRow, list_runs
from core.store.snapshot import write_parquet
from core.trust import ConfigFile
from flows.config import Settings, default_transcripts
from flows.context import Database, run_config, shard_path
from flows.evolution import EvolutionReport, write_evolution_report
from flows.prefect_api import prefect_api
from flows.providers import resolve_provider
from flows.steps import template_for

__all__ = ["Checked", "Doctor", "check", "doctor", "query", "recent_runs", "report", "snapshot"]


class Checked(BaseModel):
    """A database read in full: tables and rows, every block's checksum verified."""

    tables: int
    rows: int


def check(settings: Settings) -> Checked:
    """Read every table in full, so DuckDB verifies every block's checksum.

    Raises:
        StoreError: a table is damaged; the message names it and how to recover.
    """
    db = Database.of(settings)
    with open_db(db.path, read_only=True, wait=db.wait_s) as con:
        tables, rows, broken = verify(con)
    if broken:
        names = ", ".join(f"`{t}` ({why})" for t, why in broken[:2]) + (
            f" and {len(broken) - 2} more tables" if len(broken) > 2 else ""
        )
        raise StoreError(
            f"Database `{db.path}` is damaged: {names}. Restore the newest copy from `{db.path}.backups/`"
            " (docs/recovery.md) and run `playbook nightly` again."
        )
    return Checked(tables=tables, rows=rows)


def query(settings: Settings, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(columns, rows) of one read-only statement (`core.store.readonly`); with shards, over all of them."""
    return run_read_only(settings.db, sql, wait=settings.wait_s, shards=shards_of(settings))


def shards_of(settings: Settings) -> list[Path]:
    """The playbooks' shards beside the store that exist (`shard = "playbook"`; none otherwise)."""
    if settings.shard != "playbook":
        return []
    store = settings.db
    found = {shard_path(store, name) for name in settings.playbooks}
    found |= set(store.parent.glob(f"{store.stem}.*{store.suffix}"))
    return sorted(p for p in found if p.is_file() and p != store)


def recent_runs(settings: Settings, limit: int = 20) -> list[RunRow]:
    """The newest runs first."""
    with Database.of(settings).read() as con:
        return list_runs(con, limit)


def report(settings: Settings, playbook: str, out_dir: Path | None = None) -> EvolutionReport:
    """Write `playbook`'s evolution report (a static page and its PNG charts)."""
    db = Database.of(settings, playbook)
    with db.read() as con:
        require_playbook(con, playbook)
    return write_evolution_report(
        db.path,
        playbook,
        out_dir or settings.out_dir / "report",
        settings.redactor(),
        wait=db.wait_s,
        budget=settings.budget(playbook),
        stale_after_days=settings.stale_after_days,
        impact_min_sessions=settings.impact_min_sessions,
        store=db.store,
    )


class Transcripts(BaseModel):
    """The transcript folders `doctor` looked at: the agents' own found on this machine (`defaults`), or the
    configured ones."""

    defaults: bool
    folders: list[FolderSurvey]


class DatabaseState(BaseModel):
    """The database file: whether it exists, and what it holds (None when it does not or cannot be read)."""

    path: Path
    exists: bool
    overview: Overview | None = None


class ProviderChoice(BaseModel):
    """The provider `auto` picks here and why, and the one configured."""

    auto_picks: str
    why: str
    configured: str


class Doctor(BaseModel):
    """What playbook would use here, and what is wrong, each with its fix."""

    transcripts: Transcripts
    database: DatabaseState
    provider: ProviderChoice
    prefect_api: str
    problems: list[str]
    # The settings files read, and of each the keys ignored because it is not trusted (`playbook trust`).
    config: list[ConfigFile]


def doctor(settings: Settings) -> Doctor:
    """Transcript folders (files and sessions per format), the database, the provider `auto` picks and why, the
    Prefect API, and the settings files read (with what of each was ignored)."""
    problems: list[str] = []
    folders = survey(settings.local_transcripts())
    if not folders:
        problems.append(
            "No transcript folder found (looked for ~/.claude/projects, $CLAUDE_CONFIG_DIR/projects and"
            " ~/.codex/sessions); pass PATH to `playbook ingest`, or set `transcripts` in playbook.toml."
        )
    problems += [
        f"Transcript folder `{f.path}` does not exist; fix `transcripts` or create it." for f in folders if not f.exists
    ]
    overview = None
    if settings.db.exists():
        try:
            with open_db(settings.db, read_only=True, wait=settings.wait_s) as con:
                overview = database_overview(con)
        except PlaybookError as exc:
            problems.append(str(exc))
    spec = resolve_provider("auto", settings)
    if settings.llm != "auto":  # what a run would resolve, with the reason it could not
        try:
            resolve_provider(settings.llm, settings)
        except PlaybookError as exc:
            problems.append(str(exc))
    for name in settings.playbooks:  # the prompt templates a run would load (a broken one stops it)
        for step in ("reflector", "curator"):
            try:
                template_for(run_config(settings, name, None), step)
            except PlaybookError as exc:
                problems.append(str(exc))
    api = prefect_api()
    return Doctor(
        transcripts=Transcripts(defaults=settings.transcripts == default_transcripts(), folders=folders),
        database=DatabaseState(path=settings.db, exists=settings.db.exists(), overview=overview),
        provider=ProviderChoice(
            auto_picks=spec.kind,
            why=spec.reason or "",
            configured=settings.llm,
        ),
        prefect_api=api or "none: runs go without Prefect (recorded in DuckDB); schedules need `prefect server start`",
        problems=problems,
        config=list(settings.config_files),
    )


def snapshot(settings: Settings, folder: Path) -> list[Path]:
    """Every table as Parquet into `folder`, for notebooks and BI tools (a reader while a run holds the file)."""
    with Database.of(settings).read() as con:
        return write_parquet(con, folder)
