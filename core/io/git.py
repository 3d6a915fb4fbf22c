"""Git, for publishing exports through code review (`playbook publish --git`).

A thin wrapper over the `git` command, so the repository's own configuration (remotes, credentials,
hooks, signing) applies as it does for its developers. Work happens in a temporary worktree, so the
developer's checkout, its branch and its uncommitted changes are never touched. Every failure becomes one
`GitError` carrying git's own first line.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from core.errors import ConfigError, GitError
from core.patterns import SPACE, Pattern

__all__ = [
    "PUBLISH_TRAILER",
    "add_worktree",
    "branch_tip",
    "checked_out_branch",
    "commit_all",
    "default_branch",
    "git",
    "is_ancestor",
    "published_versions",
    "push",
    "remote_of",
    "remotes",
    "remove_worktree",
    "review_branch",
    "set_branch",
    "work_tree_root",
]

# The trailer a publish commit ends with, one per playbook: where the next publish's summary starts.
PUBLISH_TRAILER = "Playbook-Version"
_TRAILER = Pattern(rf"^{PUBLISH_TRAILER}: (?P<name>[^{SPACE}]+)=(?P<version>[0-9]+)$", multiline=True)
# A review branch name: ASCII words joined by `/`, `.`, `_`, `-`, starting with a letter or digit. What git admits
# beyond this (`+x`, `@`, `a@b`, non-ASCII) is not needed for a review branch and reads as a refspec or a revision.
_BRANCH = Pattern(r"[A-Za-z0-9][A-Za-z0-9._/-]*")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")  # never wait for a password on a scheduled run
    return env


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run `git ARGS` in `cwd`; its stdout, stripped.

    Raises:
        GitError: git is missing, or the command failed (with `check`).
    """
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=_env(), check=False
        )
    except FileNotFoundError as exc:
        raise GitError("`git` is not installed; install it to publish with --git.") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"`git {' '.join(args)}` in `{cwd}` did not finish within 300 s.") from exc
    if check and done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[0]
        raise GitError(f"`git {' '.join(args)}` failed in `{cwd}`: {said}")
    return done.stdout.strip()


def work_tree_root(path: Path) -> Path:
    """The top folder of the working copy `path` is in.

    Raises:
        GitError: `path` is not inside a git working copy.
    """
    if not path.is_dir():
        raise GitError(f"`{path}` is not a folder; pass a working copy of the team repository to --git.")
    top = git(path, "rev-parse", "--show-toplevel", check=False)
    if not top:
        raise GitError(f"`{path}` is not a git working copy; clone the team repository and pass its folder to --git.")
    return Path(top)


def remotes(repo: Path) -> list[str]:
    """The names of the repository's remotes."""
    return git(repo, "remote").split()


def remote_of(repo: Path) -> str | None:
    """The remote to push to: `origin` when there is one, else the first, else None."""
    names = remotes(repo)
    return "origin" if "origin" in names else (names[0] if names else None)


def checked_out_branch(repo: Path) -> str | None:
    """The branch checked out in `repo`'s working copy; None on a detached HEAD."""
    return git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False) or None


def review_branch(repo: Path, branch: str) -> str:
    """`branch` when it is a plain local branch name a publish may create or move; asks git nothing that changes.

    Admitted: a name of ASCII letters, digits and `._/-` (starting with a letter or digit) that
    `git check-ref-format --branch` accepts as it is (it expands `@` and `@{-1}` to other branches), that is not
    `HEAD`, not under `refs/` (or `heads/`, `tags/`, `remotes/`, its short spellings) and not under a remote's
    name (`origin/main` would shadow the remote-tracking branch).

    Raises:
        ConfigError: any other name; nothing was run that changes the repository.
    """
    why = ""
    if not _BRANCH.fullmatch(branch):
        why = "use letters, digits and `._/-`, starting with a letter or digit"
    elif branch == "HEAD" or branch.split("/", 1)[0] in {"refs", "heads", "tags", "remotes"}:
        why = "give a branch name, not a ref"  # `heads/main` is git's short spelling of `refs/heads/main`
    elif branch.split("/", 1)[0] in remotes(repo):
        why = f"`{branch.split('/', 1)[0]}/` names a remote; give a local branch name"
    elif git(repo, "check-ref-format", "--branch", branch, check=False) != branch:
        why = "git does not accept it as a branch name"
    if why:
        raise ConfigError(f"--branch {branch!r} is not a branch name a publish can use: {why}. Nothing was changed.")
    return branch


def default_branch(repo: Path, remote: str | None) -> str:
    """The repository's default branch: the remote's HEAD when known, else the checked-out branch."""
    if remote:
        head = git(repo, "symbolic-ref", "--quiet", "--short", f"refs/remotes/{remote}/HEAD", check=False)
        if head:
            return head.split("/", 1)[1]
    return checked_out_branch(repo) or "main"


def branch_tip(repo: Path, ref: str) -> str | None:
    """The commit `ref` names, or None when it does not exist."""
    return git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False) or None


def published_versions(repo: Path, commit: str) -> dict[str, int]:
    """The playbook versions a publish commit carried (its trailers); {} for any other commit."""
    trailers = _TRAILER.finditer(git(repo, "log", "-1", "--format=%B", "--end-of-options", commit))
    return {m.group("name") or "": int(m.group("version") or 0) for m in trailers}


def add_worktree(repo: Path, path: Path, commit: str) -> None:
    """A detached worktree of `commit` at `path` (the developer's checkout stays as it is)."""
    git(repo, "worktree", "add", "--detach", "--quiet", "--", str(path), commit)


def remove_worktree(repo: Path, path: Path) -> None:
    """Remove a worktree made by `add_worktree` (never raises: cleanup)."""
    git(repo, "worktree", "remove", "--force", str(path), check=False)
    git(repo, "worktree", "prune", check=False)


def commit_all(worktree: Path, paths: list[Path], message: str) -> str | None:
    """Commit `paths` with `message`; the new commit, or None when they hold no change."""
    rel = [str(p.relative_to(worktree)) for p in paths]
    git(worktree, "add", "--", *rel)
    if not git(worktree, "status", "--porcelain", "--", *rel):
        return None
    identity = []
    # A machine without a git identity (a CI runner, a fresh server) can still commit; a configured one wins.
    if not git(worktree, "config", "user.email", check=False):
        identity = ["-c", "user.name=playbook", "-c", "user.email=playbook@localhost"]
    git(worktree, *identity, "commit", "--quiet", "-m", message, "--", *rel)
    return git(worktree, "rev-parse", "HEAD")


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """True when commit `older` is `newer` or one of its ancestors."""
    return _succeeds(repo, "merge-base", "--is-ancestor", "--end-of-options", older, newer)


def _succeeds(repo: Path, *args: str) -> bool:
    """True when `git ARGS` exits 0 (a question git answers with its exit code)."""
    try:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, timeout=300, env=_env(), check=False)
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"`git {' '.join(args)}` could not run in `{repo}`: {exc}") from exc
    return done.returncode == 0


def set_branch(repo: Path, branch: str, commit: str) -> None:
    """Move the local `branch` forward to `commit` (created when missing).

    Raises:
        GitError: `branch` has commits that `commit` does not contain: it is never moved back or aside.
    """
    tip = branch_tip(repo, f"refs/heads/{branch}")
    if tip is not None and not is_ancestor(repo, tip, commit):
        raise GitError(f"Local branch `{branch}` has commits the publish would orphan; nothing was moved.")
    git(repo, "branch", "--force", "--", branch, commit)


def push(repo: Path, remote: str, branch: str) -> None:
    """Push `branch` to `remote` (a fast-forward: the branch only ever grows)."""
    git(repo, "push", "--quiet", "--", remote, f"refs/heads/{branch}:refs/heads/{branch}")
