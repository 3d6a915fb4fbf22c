"""A team's transcripts in object storage: what a developer pushes (redacted on their machine), what the nightly
job fetches (only keys that stay inside the cache), and what `forget` deletes on request."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from core.errors import ConfigError, ObjectChangedError, PlaybookFileError
from core.invisible import visible
from core.io.keys import Refused, cache_path, check_contributor, inside
from core.io.objects import fetch, is_url, list_objects, put_bytes, remove_folder
from core.redact import Redactor
from core.store.ingest import FileResult
from core.store.registry import playbook_names
from core.store.screening import support_of
from core.store.team import fetched, forget_contributor, pushed, record_fetch, record_push
from core.store.versions import load_version
from core.transcript_redaction import redact_transcript
from core.transcripts.detect import detect
from core.transcripts.discovery import discover
from flows.context import Database, RemoteSource
from flows.workspace import Workspace

__all__ = [
    "ForgetSummary",
    "PushSummary",
    "fetch_remote",
    "forget",
    "forget_command",
    "push_command",
    "push_transcripts",
]


def fetch_remote(
    con: duckdb.DuckDBPyConnection, db: Database, source: RemoteSource, url: str
) -> tuple[Path, list[FileResult]]:
    """Fetch the new or changed objects of `url` (by tag and size) into its cache (contributors in
    `exclude_contributors` are not fetched). A key that would not stay inside the cache (`..`, an absolute path, a
    link), that is too long or not a contributor's, or that cannot be written here, is skipped with its reason; an
    object that changed on every read since it was listed is skipped until the next ingest (`failed`); the others
    go on. What is recorded is the version actually fetched, so a later change is fetched and read as a change.

    Returns:
        The cache folder, for ingest, and the objects skipped (for the ingest summary).
    """
    cache = db.remote_cache(url)
    cache.mkdir(parents=True, exist_ok=True)
    known = fetched(con, url)
    excluded = set(source.exclude_contributors)
    refused: list[FileResult] = []
    for obj in list_objects(url, source.storage_options):
        local = cache_path(cache, obj.key)
        if isinstance(local, Refused):
            refused.append(FileResult(path=f"{url}/{visible(obj.key)}", status="refused", error=local.reason))
            continue
        contributor = obj.key.split("/", 1)[0]
        if contributor in excluded:
            continue
        if known.get(obj.key) == (obj.tag, obj.size) and local.exists():
            continue
        try:
            got = fetch(url, obj, local, source.storage_options)
        except ObjectChangedError as exc:
            refused.append(FileResult(path=f"{url}/{visible(obj.key)}", status="failed", error=visible(str(exc))))
            continue
        except PlaybookFileError as exc:
            refused.append(FileResult(path=f"{url}/{visible(obj.key)}", status="refused", error=str(exc)))
            continue
        record_fetch(con, url, obj.key, got.tag, got.size, str(local), contributor)
    return cache, refused


class PushSummary(BaseModel):
    """What `push_transcripts` did."""

    url: str
    contributor: str
    pushed: list[str] = Field(default_factory=list)  # object keys written
    unchanged: int = 0
    failed: dict[str, str] = Field(default_factory=dict)  # local path -> why
    secrets: int = 0
    personal: int = 0
    left_out: dict[str, int] = Field(default_factory=dict)  # local path -> records nested beyond reason, not sent


def push_transcripts(
    db: Database, redactor: Redactor, url: str, paths: Sequence[Path], contributor: str, options: Mapping[str, Any]
) -> PushSummary:
    """Upload the new or grown transcript files under `paths` to `url/<contributor>/<format>/...`, redacted
    here first (secrets and personal data, in every string of every record, ids kept); the object keys are
    masked the same way. A ledger in the local database remembers what was pushed (size and mtime)."""
    summary = PushSummary(url=url, contributor=check_contributor(contributor))
    files, missing = discover(paths)
    for m in missing:
        summary.failed[str(m)] = "no such file or folder"
    with db.open() as con:
        done = pushed(con, url)
        for path in files:
            key_path = str(path)
            try:
                st = path.stat()
                if done.get(key_path) == (st.st_size, st.st_mtime):
                    summary.unchanged += 1
                    continue
                found = detect(path)
                if found.format is None:
                    continue  # not a transcript (an index, a settings file): never leaves the machine
                text, secrets, personal, dropped = redact_transcript(
                    path.read_bytes().decode("utf-8", "replace"), redactor
                )
            except OSError as exc:
                summary.failed[key_path] = f"unreadable: {exc.strerror or exc}"
                continue
            root = next((Path(p) for p in paths if path.is_relative_to(Path(p).resolve())), path.parent)
            inner = path.relative_to(root.resolve()) if path.is_relative_to(root.resolve()) else Path(path.name)
            # Names carry personal data (Claude Code's folders encode the home path), not secrets: each part is
            # masked, ids kept.
            masked = "/".join(redactor.personal(part)[0] for part in inner.parts)
            key = f"{contributor}/{found.format}/{masked}"
            put_bytes(url, key, text.encode(), options)
            record_push(con, url, key_path, key, st.st_size, st.st_mtime, secrets, personal)
            summary.pushed.append(key)
            if dropped:
                summary.left_out[key_path] = dropped
            summary.secrets += secrets
            summary.personal += personal
    return summary


class ForgetSummary(BaseModel):
    """What `forget` deleted."""

    contributor: str
    sessions: int
    messages: int
    calls: int
    objects: int
    files: int
    # Per playbook, the live entries whose only support was this contributor's sessions: the screen holds them
    # from now on (`withdrawn`), until a person releases them in `playbook review`.
    held: dict[str, list[str]] = Field(default_factory=dict)


def forget(db: Database, contributor: str, urls: Sequence[str], options: Mapping[str, Any]) -> ForgetSummary:
    """Delete `contributor`'s transcripts, messages and stored exchanges from the database, their fetched
    copies, and their objects under every URL of `urls` (only keys under `<url>/<contributor>/`); the
    deletion is recorded in `forgotten`.

    Raises:
        ConfigError: `contributor` is not a valid contributor name; nothing is deleted.
    """
    check_contributor(contributor)
    with db.open() as con:
        held: dict[str, list[str]] = {}
        for name in playbook_names(con):
            texts = {e.name: e.text for _, e in load_version(con, name).entries()}
            only = [e for e, support in support_of(con, name, texts).items() if support.contributors == {contributor}]
            if only:
                held[name] = only
        done = forget_contributor(con, contributor)
    files = 0
    caches = db.remote_root
    for local in done.paths:
        # Only fetched copies: a path recorded before keys were checked could point anywhere.
        if not inside(caches, Path(local)):
            continue
        with contextlib.suppress(FileNotFoundError):
            Path(local).unlink()
            files += 1
    objects = sum(remove_folder(url, contributor, options) for url in urls)
    return ForgetSummary(
        contributor=contributor,
        sessions=done.sessions,
        messages=done.messages,
        calls=done.calls,
        objects=objects,
        files=files,
        held=held,
    )


def push_command(ws: Workspace, url: str, folders: Sequence[Path], contributor: str | None) -> PushSummary:
    """`playbook push`: the folders given (default: the configured ones) pushed to `url` under the run lock, as
    `contributor` (default: `contributor`, else this user's stable pseudonym).

    Raises:
        ConfigError: `url` is not an object-storage URL, there is no folder to push, or the name is refused.
    """
    if not is_url(url):
        raise ConfigError(f"`{url}` is not an object-storage URL; use s3://bucket/prefix, gs://..., file:///...")
    folders = list(folders) or ws.settings.local_transcripts()
    if not folders:
        raise ConfigError("No transcript folders to push; pass PATH or set `transcripts` in playbook.toml.")
    db = ws.store
    with db.lock("playbook push"):
        return push_transcripts(
            db,
            ws.redactor,
            url,
            folders,
            contributor or ws.settings.contributor_name(),
            ws.settings.storage_options,
        )


def forget_command(ws: Workspace, contributor: str, confirm: Callable[[], bool] | None = None) -> ForgetSummary | None:
    """`playbook forget`: the contributor checked, then (once `confirm` agrees; None: no question) deleted from
    the database, the fetched copies and every configured bucket, under the run lock. None when not confirmed.

    Raises:
        ConfigError: the name is not a contributor's.
    """
    check_contributor(contributor)
    if confirm is not None and not confirm():
        return None
    db = ws.store
    urls = [str(t) for t in ws.settings.transcripts if is_url(t)]
    with db.lock("playbook forget"):
        return forget(db, contributor, urls, ws.settings.storage_options)
