"""git and gh: the subcommands lessons may run, and the options that run a command or switch a safeguard off.

Also the hosts git's scp-like remote words name (`git@evil.sh:x.git`), which the allow-list judges as links.
"""

from __future__ import annotations

import re2

from core.program_calls import Call, Refused, clip, long_option, short_option

__all__ = ["gh", "git", "remote_hosts"]


_GIT_SUBCOMMANDS = frozenset(
    "status diff log show add commit checkout switch branch stash fetch pull push rebase merge tag blame grep reset"
    " ls-files ls-tree rev-parse rev-list remote worktree cherry-pick restore mv rm bisect describe shortlog"
    " submodule init clone reflog revert format-patch range-diff whatchanged notes lfs sparse-checkout"
    " show-ref symbolic-ref cat-file count-objects fsck gc maintenance help version".split()
)
# Options that run a command, read another configuration, or switch a safeguard off, by subcommand ("" for all):
# (long name, the shortest abbreviation git accepts for it, the short letters, the rule).
_GIT_OPTIONS: dict[str, list[tuple[str, int, str, str]]] = {
    "": [
        ("--exec", 5, "", "inline_code"),
        ("--upload-pack", 5, "", "inline_code"),
        ("--receive-pack", 5, "", "inline_code"),
        ("--config", 6, "", "environment"),  # `-c` is git's own option (before the subcommand), not a subcommand's
        ("--template", 6, "", "inline_code"),
        ("--ext-diff", 6, "", "inline_code"),
        ("--no-verify", 6, "", "bypass"),
        ("--force", 5, "", "bypass"),
        ("--force-with-lease", 8, "", "bypass"),
        ("--force-if-includes", 8, "", "bypass"),
        ("--output", 5, "", "path"),
    ],
    "push": [
        ("--delete", 4, "d", "bypass"),
        ("--mirror", 4, "", "bypass"),
        ("--prune", 5, "", "bypass"),
        ("--force", 4, "f", "bypass"),
    ],
    "commit": [("--no-verify", 5, "n", "bypass"), ("--no-gpg-sign", 6, "", "bypass")],
    "merge": [("--no-verify", 5, "n", "bypass")],
    "rebase": [("--exec", 4, "x", "inline_code"), ("--no-verify", 5, "", "bypass")],
    "branch": [("--force", 4, "Df", "bypass")],
    "checkout": [("--force", 4, "f", "bypass"), ("--discard-changes", 4, "", "bypass")],
    "switch": [("--force", 4, "f", "bypass"), ("--discard-changes", 4, "", "bypass")],
    "tag": [("--force", 4, "f", "bypass")],
    "reset": [("--hard", 4, "", "bypass"), ("--merge", 4, "", "bypass"), ("--keep", 4, "", "bypass")],
    "clone": [("--config", 4, "c", "environment"), ("--upload-pack", 4, "u", "inline_code")],
    "fetch": [("--upload-pack", 4, "", "inline_code")],
    "pull": [("--upload-pack", 4, "", "inline_code"), ("--force", 4, "f", "bypass")],
    "grep": [("--open-files-in-pager", 4, "O", "inline_code")],
    "restore": [("--source", 4, "s", "bypass"), ("--worktree", 4, "W", "bypass")],
    "clean": [],
}
# Subcommands that reach a remote: a word there with `host:path` or `user@host:` (scp-like) names a host.
_GIT_REMOTE = frozenset("clone fetch pull push remote submodule ls-remote archive".split())
# Where the words after the repository are refspecs, and the options of git (and those subcommands) that take a value.
_GIT_REFSPECS = frozenset("fetch pull push".split())
_GIT_REMOTE_VALUE_FLAGS = frozenset(
    "-C --git-dir --work-tree --namespace --depth --shallow-since --shallow-exclude --deepen --repo -o --push-option"
    " --upload-pack --receive-pack -j --jobs --server-option --negotiation-tip --origin -b --branch".split()
)


def _origin(remote: str) -> bool:
    """True for the remote a lesson's push may name: `origin`, the one a clone sets up (a URL or host is read by the
    link rules, `git_hosts`)."""
    return remote == "origin" or "/" in remote or ":" in remote


def git(call: Call) -> Refused:
    """git: its own subcommands, never with an option that runs a command, reads another configuration or switches a
    safeguard off (`--force`, `--no-verify`), nor one that discards work."""
    args = list(call.args)
    found: Refused = []
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-c",) or flag.startswith(("-c", "--config-env", "--exec-path", "--conf")):
            return [("environment", f"`git {clip(flag)}` changes git's configuration for the command")]
        if flag in ("-C", "--git-dir", "--work-tree", "--namespace") and args:
            args.pop(0)
    if not args:
        return found
    sub, rest = args[0], args[1:]
    if sub == "update-index":
        # only to record a file's executable bit (`--chmod=+x`): its other options hide changes from git
        # (`--assume-unchanged`, `--skip-worktree`) or write the index by hand (`--cacheinfo`, `--index-info`)
        flags = [a for a in rest if a.startswith("-") and a != "--"]
        if flags and all(a in ("--chmod=+x", "--chmod=-x") for a in flags):
            return found
        written = clip(" ".join(["update-index", *flags]))
        return [("program", f"`git {written}` is not a git command lessons may run")]
    if sub not in _GIT_SUBCOMMANDS:
        return [("program", f"`git {clip(sub)}` is not a git command lessons may run")]
    for arg in rest:
        if arg == "--":
            break
        for name, shortest, letters, rule in _GIT_OPTIONS.get("", []) + _GIT_OPTIONS.get(sub, []):
            if (arg.startswith("--") and long_option(arg, name, shortest)) or (letters and short_option(arg, letters)):
                found.append((rule, f"`git {sub} {clip(arg)}` ({name})"))
    words = [a for a in rest if not a.startswith("-")]
    if sub == "push" and any(w.startswith(("+", ":")) or ":+" in w for w in words):
        found.append(("bypass", "`git push +ref` overwrites a remote branch"))
    if sub == "push" and words and not _origin(words[0]):
        # Pushing to a remote other than the project's own (`git push heroku main`, `git push prod`) deploys or
        # publishes: only origin, the remote a clone sets up, is where a lesson's push goes.
        found.append(("program", f"`git push {clip(words[0])}` pushes to a remote other than origin (a deploy)"))
    if sub == "push" and any(o in ("-o", "--push-option") or o.startswith("--push-option=") for o in rest):
        found.append(("bypass", "`git push -o` passes options to the server (`ci.skip`, ...)"))
    paths = words if sub in ("restore", "checkout", "rm") else []
    if sub == "rm" and not any(long_option(a, "--cached", 4) for a in rest):  # `--cached` only untracks: the files stay
        if any(short_option(a, "f") or long_option(a, "--force", 4) for a in rest):
            found.append(("bypass", "`git rm -f` deletes files with their uncommitted changes"))
        elif any(short_option(a, "r") for a in rest) and any(_whole_tree(w) for w in paths):
            found.append(("bypass", "`git rm -r .` deletes every tracked file"))
    if (sub == "reflog" and words[:1] in (["expire"], ["delete"])) or (sub == "gc" and any("prune" in a for a in rest)):
        found.append(("bypass", f"`git {sub}` throws away what could recover lost work"))
    if sub == "branch" and any(short_option(a, "MCD") for a in rest):
        found.append(("bypass", "`git branch -M` overwrites a branch"))
    if sub == "bisect" and words[:1] == ["run"]:
        found.append(("inline_code", "`git bisect run` runs a command"))
    if sub == "submodule" and "foreach" in words:
        found.append(("inline_code", "`git submodule foreach` runs a command"))
    if sub == "stash" and words[:1] in (["drop"], ["clear"]):
        found.append(("bypass", f"`git stash {words[0]}` discards work"))
    forced = any(short_option(a, "f") or long_option(a, "--force", 4) for a in rest)
    everything = any(short_option(a, "Au") or long_option(a, "--all", 4) or long_option(a, "--update", 4) for a in rest)
    if sub == "add" and forced and (everything or any(_whole_tree(w) or _folder_like(w) for w in words)):
        # A file named one by one is the user's to add (secret names are refused as paths); a folder or the whole
        # tree takes in what .gitignore keeps out (`.env`, keys).
        found.append(("bypass", "`git add -f` over a folder adds what .gitignore keeps out (`.env`, keys)"))
    staged_only = any(long_option(a, "--staged", 5) for a in rest) or any(short_option(a, "S") for a in rest)
    if sub == "restore" and not staged_only and any(_whole_tree(w) or _folder_like(w) for w in paths):
        found.append(("bypass", "`git restore` over a folder or the whole tree discards every change in it"))
    branches = 1 + any(a in ("-b", "-t", "--track", "--orphan") for a in rest)  # a new branch and where it starts
    if sub == "checkout" and (
        len(words) > branches or "--" in rest or any(_whole_tree(w) or _path_only(w) for w in paths)
    ):
        found.append(("bypass", "`git checkout` over files discards their changes"))
    if sub == "remote" and words[:1] not in ([], ["-v"], ["show"], ["add"], ["set-url"], ["get-url"], ["prune"]):
        found.append(("program", f"`git remote {clip(words[0])}` is not a remote command lessons may run"))
    return found


# A pathspec's magic prefix (`:/`, `:(top,glob)`, `:!`): what follows is still a path from the top of the tree.
_PATHSPEC_MAGIC = re2.compile(r"^:(?:\([^)]*\)|[/!^]+)?")
# Names of files that have no suffix: `git restore Makefile` is one file, `git restore src` a folder.
_PLAIN_FILES = frozenset(
    "makefile gnumakefile dockerfile containerfile gemfile rakefile procfile justfile jenkinsfile vagrantfile brewfile"
    " podfile fastfile license licence readme changelog authors codeowners version notice copying".split()
)


def _pathspec(word: str) -> str:
    """A pathspec as git reads it, magic dropped and `./` collapsed: `:/`, `./`, `:(top).` are all ``."""
    rest = _PATHSPEC_MAGIC.sub("", word, count=1) if word.startswith(":") else word
    parts = [p for p in rest.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


def _whole_tree(word: str) -> bool:
    """True for a pathspec that names the whole tree (`.`, `./`, `:/`, `:/.`, `*`, `:(top)`, `**/*`)."""
    return not _pathspec(word).replace("*", "").replace("/", "")


def _folder_like(word: str) -> bool:
    """True for a pathspec that names more than one file: a glob, a folder (`src/`, `src`: no suffix)."""
    spec = _pathspec(word)
    name = spec.rsplit("/", 1)[-1].lower()
    return word.endswith("/") or any(c in spec for c in "*?[") or ("." not in name and name not in _PLAIN_FILES)


def _path_only(word: str) -> bool:
    """True for a word `git checkout` can only read as a path, never a branch (`./src`, `:/x`, `src/`, `*.py`)."""
    return word.startswith(("./", ":")) or word.endswith("/") or any(c in word for c in "*?[")


def remote_hosts(call: Call) -> list[str]:
    """The hosts git's scp-like remote words name (`git@evil.sh:x.git`, `evil.sh:tools.git`)."""
    if call.family != "git":
        return []
    words = []
    skip = False
    for arg in call.args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in _GIT_REMOTE_VALUE_FLAGS
        else:
            words.append(arg)
    if not words or words[0] not in _GIT_REMOTE:
        return []
    hosts = []
    for i, word in enumerate(words[1:], 1):
        if "://" in word:
            continue
        head, sep, _ = word.partition(":")
        # The repository comes first (`git push evil.sh:x.git`); the words after it are refspecs (`HEAD:feat/x`,
        # `main:main`), read as a host only when spelled as one (`git@evil.sh:x`, `evil.sh:x`).
        spelled = "." in head or "@" in head
        if sep and head and "/" not in head and (i == 1 or words[0] not in _GIT_REFSPECS or spelled):
            hosts.append(head.rsplit("@", 1)[-1])
    return hosts


_GH_ALLOWED = {
    "pr": "view list create checkout diff status checks comment review edit ready close reopen merge".split(),
    "issue": "view list create comment edit close reopen status".split(),
    "run": "view list watch rerun download".split(),
    "workflow": "view list".split(),
    "repo": ["view"],
    "release": "view list download".split(),
    "auth": "status login".split(),
    "browse": [],
    "search": [],
    "label": ["list"],
    "status": [],
}


def gh(call: Call) -> Refused:
    """gh: the subcommands lessons may run, on this repository unless they only read; never an approval or a merge,
    nor a printed token."""
    words = call.positionals()
    if not words:
        return []
    allowed = _GH_ALLOWED.get(words[0])
    if allowed is None or (allowed and (len(words) < 2 or words[1] not in allowed)):
        return [("program", f"`gh {' '.join(words[:2])}` is not a gh command lessons may run")]
    reads = len(words) > 1 and words[1] in ("view", "list", "status", "checks", "diff")
    if not reads and any(a in ("-R", "--repo") or a.startswith("--repo=") for a in call.args):
        return [("link", f"`gh {' '.join(words[:2])} --repo` works on a repository other than this one")]
    if words[:2] == ["pr", "merge"] or (words[:2] == ["pr", "review"] and any(
        long_option(a, "--approve", 4) or short_option(a, "a") for a in call.args
    )):  # fmt: skip
        return [("bypass", f"`gh pr {words[1]}` approves or merges with the user's authority: a review is theirs")]
    if words[0] == "auth" and any(a in ("-t", "--show-token") for a in call.args):
        return [("path", "`gh auth status --show-token` prints a credential")]
    return []
