"""Publishing: every configured export target (`playbook publish`), then the hook's snapshot; or through code review
(`playbook publish --git`): the export targets written into a temporary worktree of the team's repository,
committed on a review branch that only grows, and pushed when there is a remote. The developer's checkout is never
changed."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import duckdb
from pydantic import BaseModel, Field

from core.errors import ConfigError, GitError
from core.io.git import (
    PUBLISH_TRAILER,
    add_worktree,
    branch_tip,
    checked_out_branch,
    commit_all,
    default_branch,
    git,
    is_ancestor,
    published_versions,
    push,
    remote_of,
    remove_worktree,
    review_branch,
    set_branch,
    work_tree_root,
)
from core.store.history import VersionChanges, version_changes
from core.store.versions import current_version
from flows.context import Database
from flows.delivery.exports import (
    DEFAULT_GIT_KINDS,
    ExportRules,
    Published,
    exported_version,
    how_to_add_targets,
    own_files,
    publish_targets,
    publishable,
)
from flows.delivery.hook import write_snapshot
from flows.workspace import Workspace

__all__ = ["GitPublished", "Publication", "publish_configured", "publish_git", "publish_message", "publish_to_git"]


class GitPublished(BaseModel):
    """What `publish_git` did: the branch, the commit (None when nothing changed), where it was pushed."""

    repo: str
    branch: str
    commit: str | None = None
    pushed_to: str | None = None
    message: str = ""
    files: list[Published] = Field(default_factory=list)


def publish_git(db: Database, rules: Sequence[ExportRules], repo: Path, branch: str) -> GitPublished:
    """Write the export targets of the playbooks `rules` name into a worktree of `repo` on `branch`, commit them with a
    summary of what changed since the last publish, and push the branch when the repository has a remote.

    The branch grows from its last publish (from the default branch the first time); nothing is committed
    when nothing changed; the default branch is refused.

    Raises:
        ConfigError: `branch` is no plain branch name, the repository's default branch, or the branch checked out
            in `repo`; nothing is changed.
        GitError: `repo` is not a working copy, or a git command failed.
    """
    top = work_tree_root(repo.expanduser())
    branch = review_branch(top, branch)  # before any git call that changes something: a name can be an option
    remote = remote_of(top)
    default = default_branch(top, remote)
    _refuse_reserved(top, branch, default)
    if remote:
        git(top, "fetch", "--quiet", "--", remote)
    base = _publish_base(top, remote, branch) or (
        (branch_tip(top, f"{remote}/{default}") if remote else None) or branch_tip(top, "HEAD")
    )
    if base is None:
        raise GitError(f"`{top}` has no commit to start the `{branch}` branch from; commit something first.")
    since = published_versions(top, base)
    result = GitPublished(repo=str(top), branch=branch)
    with tempfile.TemporaryDirectory(prefix="playbook-publish-") as tmp:
        tree = Path(tmp) / "tree"
        add_worktree(top, tree, base)
        try:
            files = publish_targets(
                db,
                rules,
                root=tree,
                default_kinds=DEFAULT_GIT_KINDS,
                recorded_as=lambda p: f"{top / p.relative_to(tree)} ({branch})",
            )
            written = [f.file for f in files if f.status == "written" and f.file is not None]
            upto: dict[str, int] = {}
            changes = {}
            for r in rules:
                with db.for_playbook(r.playbook).open() as con:
                    upto[r.playbook] = _published_version(con, r)
                    changes[r.playbook] = version_changes(con, r.playbook, since.get(r.playbook, 0), upto[r.playbook])
            message = publish_message(upto, since, changes)
            commit = commit_all(tree, written, message) if written else None
            if commit:
                set_branch(top, branch, commit)
                if remote:
                    push(top, remote, branch)
        finally:
            remove_worktree(top, tree)
    return result.model_copy(
        update={
            "commit": commit,
            "pushed_to": remote if commit else None,
            "message": message if commit else "nothing changed since the last publish",
            "files": files,
        }
    )


def _refuse_reserved(top: Path, branch: str, default: str) -> None:
    """Refuse the branches a publish never moves: the default branch (the remote's HEAD, `main`, `master`, in any
    case: a case-insensitive file system holds one ref for `MAIN` and `main`) and the branch checked out in `top`
    (the checkout is never changed).

    Raises:
        ConfigError: `branch` is one of them.
    """
    other = "playbook/update" if branch != "playbook/update" else "playbook/lessons"
    checked_out = checked_out_branch(top)
    if checked_out is not None and branch.casefold() == checked_out.casefold():
        raise ConfigError(
            f"Refusing to publish on `{branch}`: it is checked out in `{top}`, and publish never changes your checkout;"
            f" check out another branch there, or pass --branch {other}."
        )
    if branch.casefold() in {default.casefold(), "main", "master"}:
        raise ConfigError(f"Refusing to publish on `{branch}`, the default branch: pass --branch {other}.")


def _publish_base(top: Path, remote: str | None, branch: str) -> str | None:
    """Where the next publish commit grows from: the newer of the local `branch` and the remote's, so that
    commits only one of them has are built on, never orphaned; None when neither exists.

    Raises:
        GitError: the two have diverged (each has commits the other lacks); nothing is changed.
    """
    local = branch_tip(top, f"refs/heads/{branch}")
    theirs = branch_tip(top, f"refs/remotes/{remote}/{branch}") if remote else None
    if local is None or theirs is None or local == theirs:
        return local or theirs
    if is_ancestor(top, theirs, local):
        return local  # commits made here and not pushed yet: the publish goes on top and pushes them too
    if is_ancestor(top, local, theirs):
        return theirs
    raise GitError(
        f"Local branch `{branch}` and `{remote}/{branch}` have diverged (each has commits the other lacks);"
        f" merge or rebase `{branch}` and push it, or pass another --branch. Nothing was changed."
    )


def publish_message(upto: dict[str, int], since: dict[str, int], changes: dict[str, VersionChanges]) -> str:
    """A publish commit's message: a subject, one line per playbook (versions, operations, sessions since the
    last publish) and one trailer per playbook, where the next publish starts counting."""
    subject = "playbook: " + ", ".join(f"{name} v{v}" for name, v in upto.items())
    lines = []
    for name, v in upto.items():
        c = changes[name]
        ops = ", ".join(f"{n} {t}" for t, n in c.operations.items()) or "no operations"
        start = since.get(name, 0)
        lines.append(
            f"- {name}: version {start} -> {v} ({c.versions} new version{'s' * (c.versions != 1)}),"
            f" {ops}, from {c.sessions} session{'s' * (c.sessions != 1)}"
        )
    trailers = [f"{PUBLISH_TRAILER}: {name}={v}" for name, v in upto.items()]
    return "\n".join([subject, "", "Since the last publish:", *lines, "", *trailers]) + "\n"


def _published_version(con: duckdb.DuckDBPyConnection, rules: ExportRules) -> int:
    found = exported_version(con, rules)
    return current_version(con, rules.playbook) if found is None else found


def publish_to_git(ws: Workspace, playbooks: Sequence[str], repo: Path, branch: str) -> GitPublished:
    """`playbook publish --git`: `publish_git` of `playbooks` under the run lock.

    Raises:
        StoreError: a playbook does not exist.
    """
    db = ws.database()
    rules = publishable(db, ws, playbooks)
    with db.lock("playbook publish"):
        return publish_git(db, rules, repo, branch)


class Publication(BaseModel):
    """What `playbook publish` wrote; `note`: how to add targets, when none is configured."""

    files: list[Published]
    note: str | None = None


def publish_configured(ws: Workspace, playbooks: Sequence[str]) -> Publication:
    """`playbook publish`: every configured export target of `playbooks`, under the run lock; where none of them
    has a target (a fresh set-up), each playbook's own files in `out_dir`, as the nightly writes them.

    Raises:
        StoreError: a playbook does not exist.
    """
    db = ws.database()
    rules = publishable(db, ws, playbooks)
    note = None
    with db.lock("playbook publish"):
        if any(r.targets for r in rules):
            published = publish_targets(db, rules)
        else:
            published = [p for r in rules for p in own_files(ws.database(r.playbook), r, ws.out_dir)]
            note = how_to_add_targets(playbooks[0])
    write_snapshot(ws, only_if_present=True)
    return Publication(files=published, note=note)
