"""Object storage for a team's transcripts: any fsspec URL (`s3://`, `gs://`, `az://`, `file://`).

Layout under a URL: `<contributor>/<format>/<path of the file under its transcript folder>`, written by
`playbook push` (already redacted) and read by ingest. Credentials and endpoints come from the usual places
for each store (for S3: the AWS environment variables and files, `AWS_ENDPOINT_URL` included) or from
`storage_options`. Errors of the storage libraries become one `StoreError` line naming the URL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from core.errors import ConfigError, PlaybookFileError, StoreError
from core.io.keys import Contributor, check_contributor, key_error

__all__ = ["RemoteObject", "fetch", "is_url", "list_objects", "put_bytes", "remove_folder"]

_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs"}


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
        key = str(path)[len(root) + 1 :]
        tag = info.get("ETag") or info.get("etag") or info.get("mtime") or info.get("LastModified") or ""
        out.append(RemoteObject(key, int(info.get("size") or 0), str(tag).strip('"')))
    return sorted(out)


def fetch(url: str, key: str, dest: Path, options: Mapping[str, Any] | None = None) -> None:
    """Download `url/key` to `dest` (written beside it, then renamed: a reader never sees half a file).

    `dest` must come from `core.io.keys.cache_path`, which keeps it inside the cache.

    Raises:
        StoreError: the object cannot be read.
        PlaybookFileError: it cannot be written at `dest` (a name the file system refuses, a file where a folder
            should be, a full disk); nothing is left half-written.
    """
    with _translated(url, f"reading `{key}`"):
        fs, root = _fs(url, options or {})
        data = fs.cat_file(f"{root}/{key}")
    partial = dest.with_name(dest.name + ".part")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        partial.replace(dest)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise PlaybookFileError(f"cannot be written here: {exc.strerror or exc}") from exc


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
