"""A git dependency pinned to one commit of a public forge.

A manifest that takes a package from git (`{ git = "https://github.com/o/r", rev = "<sha>" }`) is fetched by every
`uv run` or `cargo test`. Pinned to a full commit id, what is fetched is fixed by its content, as a release on the
public registry is by its version, and a public forge serves it: admitted like a declared package. A branch, a tag,
a short id, another host, a port, credentials in the address, or any other scheme is not fixed, or sends the fetch
where the project chose: it holds the tool.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import re2

__all__ = ["FORGES", "pinned_git", "pinned_git_url"]

# Hosts that serve public repositories by commit id, and keep what a commit id names: a fetch from them fetches
# what the id says and tells no one the project chose where it came from.
FORGES = frozenset({"github.com", "gitlab.com", "codeberg.org", "bitbucket.org"})
_COMMIT = re2.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")  # SHA-1, or SHA-256 for a repository in that format
_REPOSITORY = re2.compile(r"^/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+$")


def pinned_git(url: object, rev: object) -> bool:
    """True when `url` is an https address of a repository on a public forge (`FORGES`) and `rev` a full commit id."""
    if not isinstance(url, str) or not isinstance(rev, str) or not _COMMIT.match(rev):
        return False
    address = url.removeprefix("git+")
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:  # a port that is no number, an unclosed bracket
        return False
    return (
        parts.scheme == "https"
        and parts.hostname in FORGES
        and parts.netloc == parts.hostname  # no credentials, no port, written in lower case
        and port is None
        and not parts.query
        and not parts.fragment
        and bool(_REPOSITORY.match(parts.path))
        and ".." not in parts.path.split("/")
    )


def pinned_git_url(url: str) -> bool:
    """True for a requirement's address in pip's and PEP 508's form, `git+https://host/o/r@<commit>` (no fragment),
    whose repository and commit `pinned_git` admits."""
    address, at, rev = url.removeprefix("git+").rpartition("@")
    return url.startswith("git+") and bool(at) and pinned_git(address, rev)
