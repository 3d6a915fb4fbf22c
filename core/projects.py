"""The project a session's folder belongs to: its name, as lessons ("In app: ...") and the hooks use it.

Usually the folder's own name. A git worktree an agent tool made is named for the task, not the project
(`app/.worktrees/2`, `app/.claude/worktrees/bright-fox`), so there the project is the folder the tool keeps its
worktrees for: the one holding `.worktrees` or `.claude/worktrees` (Claude Code's `--worktree`), the repository
folder under `conductor/workspaces/` (Conductor), the checkout inside `.codex/worktrees/<id>/` (Codex). Both
separators are read, since a Windows session records `D:\\app\\.claude\\worktrees\\x`.

The rules are data, read here by splitting the path (the hooks import this module: standard library only, and no
pattern) and turned into RE2 patterns for the store (`project_patterns`, `core.store.schema.project_sql`), so ingest
names a session's project as the hooks do; a property test holds the two readings together.
"""

from __future__ import annotations

__all__ = ["WORKTREE_LAYOUTS", "project_of", "project_patterns"]

PROJECT, ANY = "{project}", "*"
# Each layout is the folders a path holds, in order: a literal name, ANY folder, or the PROJECT's folder. The
# folder after a tool's marks is the worktree itself, so it must be there (ANY) for the path to be one.
WORKTREE_LAYOUTS: tuple[tuple[str, ...], ...] = (
    (PROJECT, ".worktrees", ANY),
    (PROJECT, ".claude", "worktrees", ANY),
    ("conductor", "workspaces", PROJECT, ANY),
    (".codex", "worktrees", ANY, PROJECT),
)


def project_of(cwd: str | None) -> str:
    """The project of a session that worked in `cwd` ("" when there is no folder name to take): the first layout
    the path holds, at its first place, else the last folder's name."""
    if not cwd:
        return ""
    parts = cwd.replace("\\", "/").split("/")
    for layout in WORKTREE_LAYOUTS:
        for start in range(len(parts) - len(layout) + 1):
            here = parts[start : start + len(layout)]
            if all(
                part == folder or (folder in (PROJECT, ANY) and part) for part, folder in zip(here, layout, strict=True)
            ):
                return here[layout.index(PROJECT)]
    return cwd.replace("\\", "/").rstrip("/").rpartition("/")[2]


def project_patterns() -> tuple[str, ...]:
    """The same rules as RE2 patterns with one group each (the project), tried in order: the layouts, then the
    folder's own name. No quantifier nests another, so each runs in time linear in the path."""
    sep, name = r"[/\\]", r"[^/\\]+"

    def folder(token: str) -> str:
        if token == PROJECT:
            return f"({name})"
        if token == ANY:
            return name
        return "".join(c if c.isalnum() or c == "_" else "\\" + c for c in token)

    layouts = tuple(f"(?:^|{sep})" + sep.join(folder(t) for t in layout) for layout in WORKTREE_LAYOUTS)
    return (*layouts, f"({name}){sep}*$")
