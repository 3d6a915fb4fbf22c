"""What `playbook doctor` finds on this machine: the transcript folders (files and sessions per format), the
database, the provider `auto` picks and why, the Prefect API, and the settings files read, each problem with its
fix."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from core.errors import PlaybookError
from core.prompts import load_template
from core.store.db import open_db
from core.store.overview import Overview, database_overview
from core.transcripts.discovery import FolderSurvey, survey
from core.trust import ConfigFile
from flows.config import default_transcripts
from flows.prefect_api import prefect_api
from flows.workspace import Workspace

__all__ = ["DatabaseState", "Doctor", "ProviderChoice", "Transcripts", "doctor"]


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


def doctor(ws: Workspace) -> Doctor:
    """Transcript folders (files and sessions per format), the database, the provider `auto` picks and why, the
    Prefect API, and the settings files read (with what of each was ignored)."""
    problems: list[str] = []
    folders = survey(ws.settings.local_transcripts())
    if not folders:
        problems.append(
            "No transcript folder found (looked for ~/.claude/projects, $CLAUDE_CONFIG_DIR/projects and"
            " ~/.codex/sessions); pass PATH to `playbook ingest`, or set `transcripts` in playbook.toml."
        )
    problems += [
        f"Transcript folder `{f.path}` does not exist; fix `transcripts` or create it." for f in folders if not f.exists
    ]
    overview = None
    if ws.settings.db.exists():
        try:
            with open_db(ws.settings.db, read_only=True, wait=ws.settings.wait_s) as con:
                overview = database_overview(con)
        except PlaybookError as exc:
            problems.append(str(exc))
    spec = ws.provider("auto")
    if ws.settings.llm != "auto":  # what a run would resolve, with the reason it could not
        try:
            ws.provider(ws.settings.llm)
        except PlaybookError as exc:
            problems.append(str(exc))
    for name in ws.playbooks:  # the prompt templates a run would load (a broken one stops it)
        for step in ("reflector", "curator"):
            try:
                load_template(step, override_dirs=list(ws.run_config(name, None).prompt_dirs))
            except PlaybookError as exc:
                problems.append(str(exc))
    api = prefect_api()
    return Doctor(
        transcripts=Transcripts(defaults=ws.settings.transcripts == default_transcripts(), folders=folders),
        database=DatabaseState(path=ws.settings.db, exists=ws.settings.db.exists(), overview=overview),
        provider=ProviderChoice(
            auto_picks=spec.kind,
            why=spec.reason or "",
            configured=ws.settings.llm,
        ),
        prefect_api=api or "none: runs go without Prefect (recorded in DuckDB); schedules need `prefect server start`",
        problems=problems,
        config=list(ws.settings.config_files),
    )
