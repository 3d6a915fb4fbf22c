"""A project's folder on this machine as a lesson's citations meet it: does what the lesson rests on still exist, and
at which commit (a git repository) was that checked."""

from __future__ import annotations

from pathlib import Path

from core.citations import Citation, stale_reason
from core.io.declared import declared_scripts

__all__ = ["Checked", "check_citations", "head_commit"]

Checked = tuple[
    str | None, str | None
]  # (why the lesson no longer holds, or None; the commit checked, if a repository)


def _small(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:4096] if path.is_file() else None
    except OSError:
        return None


def _git_dir(root: Path) -> Path | None:
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        pointer = _small(dot)  # a worktree or a submodule: `gitdir: PATH`
        if pointer is not None and pointer.startswith("gitdir: "):
            found = Path(pointer[len("gitdir: ") :].strip())
            return found if found.is_absolute() else folder / found
    return None


def head_commit(root: Path) -> str | None:
    """The commit `root`'s work tree is at, or None outside a git repository. Read from the repository's files,
    never by running git: a cloned repository's config could make git run its programs."""
    gitdir = _git_dir(root)
    head = _small(gitdir / "HEAD") if gitdir else None
    if gitdir is None or head is None:
        return None
    head = head.strip()
    if not head.startswith("ref: "):
        return head if len(head) == 40 else None
    ref = head[len("ref: ") :].strip()
    common = Path((_small(gitdir / "commondir") or ".").strip())
    for base in (gitdir, gitdir / common if not common.is_absolute() else common):
        loose = _small(base / ref)
        if loose and len(loose.strip()) == 40:
            return loose.strip()
        for line in (_small(base / "packed-refs") or "").splitlines():
            commit, _, name = line.partition(" ")
            if name.strip() == ref and len(commit) == 40:
                return commit
    return None


def check_citations(citations: list[Citation], root: Path) -> Checked:
    """Whether `citations` still hold in the project at `root` (its folder on this machine), and the commit checked.
    A path is looked up inside `root` only: one that leaves it (`..`, a link out) counts as gone."""
    base = root.resolve()

    def exists(path: str) -> bool:
        target = (base / path).resolve()
        return (target == base or base in target.parents) and target.exists()

    scripts: dict[tuple[str | None, str], set[str] | None] = {
        (c.folder, c.manifest): declared_scripts(base / c.folder if c.folder else base, c.manifest)
        for c in citations
        if c.kind == "script" and c.manifest is not None
    }
    return stale_reason(citations, exists, scripts), head_commit(base)
