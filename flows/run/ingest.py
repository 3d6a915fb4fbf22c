"""Ingest: transcript folders and files, and the objects developers pushed to a team's bucket, into the database."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import ConfigError
from core.io.objects import is_url
from core.store.ingest import FileResult, IngestSummary, ingest
from core.transcripts.discovery import discover
from flows.delivery.hookrun import ledger_path
from flows.run.progress import emit

if TYPE_CHECKING:  # imported where used: a re-ingest with nothing new pays for no more than it needs
    from core.redact import Redactor
    from core.transcripts import Format
    from flows.context import Database, RemoteSource
    from flows.workspace import Workspace

__all__ = ["check_sources", "ingest_command", "ingest_with", "run_ingest"]


def run_ingest(
    db: Database,
    paths: Sequence[Path | str],
    fmt: Format | None = None,
    *,
    remote: RemoteSource | None = None,
    redact_secrets: bool = True,
    redactor: Callable[[], Redactor] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """Ingest transcript files and folders, and the transcripts pushed to object-storage URLs, into the
    settings' database. Objects are fetched when new or changed (their ETag or size), into a cache beside the
    database, and every session read from them records its contributor.

    Args:
        redactor: gives the redactor the notes merged from the hooks' feedback file pass; called only when there
            is such a folder to merge (building it compiles every pattern it has).

    Raises:
        ConfigError: no paths were given and none are configured.
    """
    return _ingest_checked(
        db,
        check_sources(paths),
        fmt,
        remote=remote,
        redact_secrets=redact_secrets,
        redactor=redactor,
        progress=progress,
    )


def _ingest_checked(
    db: Database,
    sources: Sequence[Path | str],
    fmt: Format | None = None,
    *,
    remote: RemoteSource | None,
    redact_secrets: bool,
    redactor: Callable[[], Redactor] | None,
    progress: Callable[[int, int], None] | None,
) -> IngestSummary:
    """`run_ingest` of `sources` as `check_sources` gave them: folders already walked into their files (resolved),
    which nothing walks or resolves again."""
    local = [Path(p) for p in sources if not is_url(p)]
    urls = [str(p) for p in sources if is_url(p)]
    refused: list[FileResult] = []
    with db.open() as con:
        if urls:
            from flows.context import RemoteSource
            from flows.team import fetch_remote

            for url in urls:
                cache, skipped = fetch_remote(con, db, remote or RemoteSource(), url)
                local.append(cache)
                refused += skipped
        summary = ingest(
            con,
            local,
            discovered=not urls,  # a bucket's cache is a folder, walked by the ingest
            fmt=fmt or "auto",
            progress=progress or (lambda done, total: emit("ingest", done, total)),
            redact_secrets=redact_secrets,
        )
        if urls:
            from core.store.team import tag_contributors

            tag_contributors(con)
        summary.results += refused
        # What the hooks gave the sessions and what agents reported, in files of the hooks' folder beside the
        # database (`ledger_path`, `feedback_path` too): without that folder there is nothing to merge.
        if ledger_path(db.path).parent.is_dir():
            from flows.delivery.hook import merge_ledger

            merged = merge_ledger(con, db, redactor() if redactor else None)
            summary.exposures, summary.exposure_lines_skipped = merged.rows, merged.skipped
        return summary


def check_sources(paths: Sequence[Path | str]) -> list[Path | str]:
    """Fail early, before any database is opened or created, on sources that cannot be what the user meant: none at
    all, a path that does not exist, or local sources without a single transcript file. (An object-storage URL is
    listed by the ingest itself.) Returns the sources with each folder walked once into its transcript files, so
    the steps after this one (the idle check, the ingest) do not walk it again.

    Raises:
        ConfigError: with the path and what to do.
    """
    if not paths:
        raise ConfigError(
            "No transcript folders given, and none found in ~/.claude/projects or ~/.codex/sessions; pass PATH,"
            " or set `transcripts` in playbook.toml or PLAYBOOK_TRANSCRIPTS."
        )
    local = [Path(p) for p in paths if not is_url(p)]
    for path in local:
        if not path.exists():
            raise ConfigError(f"Transcript path `{path}` does not exist; check the path or `transcripts`.")
    files = discover(local)[0] if local else []
    if local and len(local) == len(paths) and not files:
        shown = ", ".join(f"`{p}`" for p in local)
        raise ConfigError(
            f"No transcript files (*.jsonl, *.json) in {shown}; nothing to ingest. Claude Code keeps them in"
            " ~/.claude/projects, Codex in ~/.codex/sessions."
        )
    return [*files, *(p for p in paths if is_url(p))]


def ingest_with(
    ws: Workspace,
    paths: Sequence[Path | str],
    fmt: Format | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """`paths` (files, folders, object-storage URLs) ingested with the settings' consent and redaction; the
    caller holds the run lock."""
    return _ingest_with_checked(ws, check_sources(paths), fmt, progress)


def _ingest_with_checked(
    ws: Workspace,
    sources: Sequence[Path | str],
    fmt: Format | None,
    progress: Callable[[int, int], None] | None,
) -> IngestSummary:
    return _ingest_checked(
        ws.store,
        sources,
        fmt,
        remote=ws.remote,
        redact_secrets=not ws.settings.keep_raw_text,
        redactor=lambda: ws.redactor,  # built (its patterns compiled) only when the hooks' notes are merged
        progress=progress,
    )


def ingest_command(
    ws: Workspace,
    paths: Sequence[Path | str],
    fmt: Format | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IngestSummary:
    """`playbook ingest`: `ingest_with` under the run lock (taken once the sources are known to hold something), of
    `paths` (none: the configured transcript folders)."""
    sources = check_sources(paths or ws.settings.transcripts)  # the one walk of the folders
    with ws.store.lock("playbook ingest"):
        return _ingest_with_checked(ws, sources, fmt, progress)
