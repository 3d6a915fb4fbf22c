"""Object storage for a team's transcripts: any fsspec URL (`s3://`, `gs://`, `az://`, `file://`).

Layout under a URL: `<contributor>/<format>/<path of the file under its transcript folder>`, written by
`playbook push` (already redacted) and read by ingest. Credentials and endpoints come from the usual places
for each store (for S3: the AWS environment variables and files, `AWS_ENDPOINT_URL` included) or from
`storage_options`. Errors of the storage libraries become one `StoreError` line naming the URL.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import re2

from core.errors import ConfigError, ObjectChangedError, PlaybookFileError, StoreError
from core.io.keys import Contributor, check_contributor, key_error

__all__ = ["RemoteObject", "fetch", "is_url", "list_objects", "put_bytes", "remove_folder"]

_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs"}
_MD5 = re2.compile(r"[0-9a-f]{32}")  # an S3 ETag that is the body's MD5 (one part, no KMS)
READS = 3  # reads of an object that keeps changing before it is left for the next ingest


class RemoteObject(NamedTuple):
    """One object under a URL: its key relative to the URL, its size, and a version tag (the ETag, else the
    modification time), which changes whenever the object does."""

    key: str
    size: int
    tag: str


def is_url(value: str | Path) -> bool:
    """True for an object-storage URL (`scheme://...`), False for a local path."""
    return isinstance(value, str) and "://" in value


@contextlib.contextmanager
def _translated(url: str, doing: str) -> Iterator[None]:
    try:
        yield
    except ImportError as exc:
        scheme = url.split("://", 1)[0]
        package = _PACKAGES.get(scheme, f"the fsspec driver for {scheme}://")
        raise ConfigError(
            f"Object storage `{url}` needs {package}; install it (`pip install {package}`, or the `s3` extra)."
        ) from exc
    except (OSError, ValueError) as exc:  # botocore, gcsfs and adlfs errors reach us as OSError subclasses
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"Object storage `{url}`: {doing} failed: {said}") from exc
    except Exception as exc:  # a driver's own error type (botocore's ClientError, ...): still one line
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"Object storage `{url}`: {doing} failed: {type(exc).__name__}: {said}") from exc


def _fs(url: str, options: Mapping[str, Any]) -> tuple[Any, str]:
    import fsspec  # comes with Prefect; imported here so local-only commands never pay for it

    fs, root = fsspec.core.url_to_fs(url, **dict(options))
    return fs, root.rstrip("/")


def put_bytes(url: str, key: str, data: bytes, options: Mapping[str, Any] | None = None) -> None:
    """Write `data` at `url/key` (parents are created where the store has folders).

    Raises:
        StoreError: `key` is not a key a team's store may hold (`core.io.keys.key_error`), or the write failed.
    """
    why = key_error(key)
    if why:
        raise StoreError(f"Object storage `{url}`: refusing to write `{key}`: {why}.")
    with _translated(url, f"writing `{key}`"):
        fs, root = _fs(url, options or {})
        path = f"{root}/{key}"
        if "/" in key:
            with contextlib.suppress(Exception):  # object stores have no folders; local ones need them
                fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        fs.pipe_file(path, data)


def list_objects(url: str, options: Mapping[str, Any] | None = None) -> list[RemoteObject]:
    """Every object under `url`, keys relative to it, sorted; [] when nothing is there yet."""
    with _translated(url, "listing"):
        fs, root = _fs(url, options or {})
        fs.invalidate_cache()
        if not fs.exists(root):
            return []
        found = fs.find(root, detail=True)
    out = []
    for path, info in found.items():
        # Only what is below the URL's folder: `team/acme` must not list `team/acme-old/...`.
        if info.get("type") == "directory" or not str(path).startswith(root + "/"):
            continue
        out.append(_described(str(path)[len(root) + 1 :], info))
    return sorted(out)


def _described(key: str, info: Mapping[str, Any]) -> RemoteObject:
    tag = info.get("ETag") or info.get("etag") or info.get("mtime") or info.get("LastModified") or ""
    return RemoteObject(key, int(info.get("size") or 0), str(tag).strip('"'))


def fetch(url: str, listed: RemoteObject, dest: Path, options: Mapping[str, Any] | None = None) -> RemoteObject:
    """Download the object `listed` to `dest` as the version it is, never half one version and half another.

    A body is taken when its size is the listed one and either its MD5 is the listed ETag (S3, one part) or the
    object, asked again after the read, still has the listed tag and size. Otherwise the object changed since it
    was listed (a teammate overwrote it, or a large object changed between its ranged reads): it is read again
    as it is now, up to `READS` times. The file is written beside `dest`, then renamed: a reader never sees half
    a file. `dest` must come from `core.io.keys.cache_path`, which keeps it inside the cache.

    Returns:
        The version written: `listed`, or what the object had become when it was read again.

    Raises:
        ObjectChangedError: the object changed on every read, or went; nothing is written.
        StoreError: the object cannot be read.
        PlaybookFileError: it cannot be written at `dest` (a name the file system refuses, a file where a folder
            should be, a full disk); nothing is left half-written.
    """
    with _translated(url, f"reading `{listed.key}`"):
        fs, root = _fs(url, options or {})
        got = _read(fs, f"{root}/{listed.key}", listed)
    if isinstance(got, str):
        raise ObjectChangedError(
            f"Object `{listed.key}` {got}; what was fetched of it before is kept, and the next ingest fetches it again."
        )
    data, version = got
    partial = dest.with_name(dest.name + ".part")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        partial.replace(dest)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise PlaybookFileError(f"cannot be written here: {exc.strerror or exc}") from exc
    return version


def _read(fs: Any, path: str, listed: RemoteObject) -> tuple[bytes, RemoteObject] | str:
    """The object's body and the version it is, or why no read gave one whole version."""
    want = listed
    for _ in range(READS):
        try:
            data = fs.cat_file(path)
            if (
                len(data) == want.size
                and _MD5.fullmatch(want.tag)
                and hashlib.md5(data, usedforsecurity=False).hexdigest() == want.tag
            ):
                return data, want  # the body is the listed version itself: no need to ask again
            fs.invalidate_cache(path)
            now = _described(listed.key, fs.info(path))
        except FileNotFoundError:
            return "was deleted after it was listed"
        if len(data) == want.size and now == want:
            return data, want
        want = now  # changed: read it again as it is now
    return f"changed on each of {READS} reads (listed: {listed.size:,} bytes, tag `{listed.tag}`)"


def remove_folder(url: str, contributor: Contributor, options: Mapping[str, Any] | None = None) -> int:
    """Delete every object under `url/<contributor>/` and nothing else; how many there were.

    Raises:
        ConfigError: `contributor` is not a valid contributor name (`/`, `..`, an empty name would reach
            other contributors' objects).
    """
    folder = check_contributor(contributor)
    with _translated(url, f"deleting `{folder}/`"):
        fs, root = _fs(url, options or {})
        fs.invalidate_cache()
        path = f"{root}/{folder}"
        if not fs.exists(path):
            return 0
        files = [
            p
            for p, info in fs.find(path, detail=True).items()
            if info.get("type") != "directory" and str(p).startswith(path + "/")
        ]
        if files:
            fs.rm(files)
        with contextlib.suppress(Exception):  # a local store keeps the emptied folders
            fs.rm(path, recursive=True)
        return len(files)
