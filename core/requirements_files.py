"""pip's requirements files: what an install from one fetches, and from where.

`pip install -r requirements.txt` installs what the file lists, and the file may say where from: an index
(`--index-url`, `--extra-index-url`), a folder or page of archives (`--find-links`, `--no-index`), a host whose
certificate is not checked (`--trusted-host`), a repository or an archive by URL (`-e git+https://...`,
`pkg @ https://...`). A lesson's install is judged by the files it names (`core.task_judge`): only a file of
requirements by name and version, or by a public forge's commit named by its full id (`core.pinned_git`), with the
options that only say how to check or pick them, is admitted; any other line holds the install (round 8b published
eight such installs).
"""

from __future__ import annotations

import re2

from core.pinned_git import pinned_git_url
from core.recipes import physical_lines, unread

__all__ = ["requirements_lines", "requirements_named"]

# A requirement by name (extras, a version, a marker), and nothing that names where it comes from.
_REQUIREMENT = re2.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9._,\s-]*\])?\s*(?:(?:===|~=|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"
    r"(?:\s*,\s*(?:===|~=|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?\s*(?:;[^@]*)?$"
)
# Options that only say how requirements are checked or picked.
_ADMITTED_OPTION = re2.compile(
    r"^(?:--hash[= ]\S+|--require-hashes|--pre|--prefer-binary|--only-binary[= ]\S+|--no-binary[= ]\S+)$"
)
# A requirement by a git commit: `name @ git+https://host/o/r@<rev>` (a marker after it), or the editable form
# `-e git+https://host/o/r@<rev>#egg=name`; `pinned_git_url` judges the address and the commit.
_BY_COMMIT = re2.compile(
    r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9._,\s-]*\])?\s*@\s*(git\+\S+@[0-9a-f]+)\s*(?:;[^@]*)?"
    r"|(?:-e|--editable)\s+(git\+\S+@[0-9a-f]+)#egg=[A-Za-z0-9][A-Za-z0-9._-]*)$"
)
_NESTED = re2.compile(r"^(?:-r|--requirement|-c|--constraint)(?:\s*=?\s*)(\S+)$")
_HASH = re2.compile(r"\s+--hash[= ]\S+")


def requirements_named(text: str) -> list[str]:
    """The files a requirements file reads too (`-r base.txt`, `-c constraints.txt`), as written."""
    return [m.group(1) for line in _lines(text) if (m := _NESTED.match(line)) is not None]


def requirements_lines(name: str, text: str) -> list[str]:
    """What an install from the requirements file `name` is judged by (`core.recipes.Tasks.requirements`): a line
    that holds it for each line of the file that names more than a requirement, or one line saying it was read and
    admits it (`""`)."""
    held = []
    for line in _lines(text):
        if _NESTED.match(line) or _ADMITTED_OPTION.match(line):
            continue
        requirement = _HASH.sub("", line)
        if not _REQUIREMENT.match(requirement) and not _by_commit(requirement):
            held.append(line)
    if not held:
        return [""]
    why = "what or where from is more than a name"
    return [unread("", f"{name} installs `{line[:50]}`: {why}")[1] for line in held[:4]]


def _by_commit(line: str) -> bool:
    """A requirement pinned to a public forge's commit by its full id."""
    found = _BY_COMMIT.match(line)
    if found is None:
        return False
    return pinned_git_url(found.group(1) if found.group(1) is not None else found.group(2))


def _lines(text: str) -> list[str]:
    """The file's lines as pip reads them: a comment (` #`) off, a backslash-newline joined, blanks dropped."""
    joined = "\n".join(physical_lines(text)).replace("\\\n", " ")
    out = []
    for line in joined.split("\n"):
        line = line.strip()
        if line.startswith("#"):
            continue
        cut = line.find(" #")
        line = (line[:cut] if cut >= 0 else line).strip()
        if line:
            out.append(line)
    return out
