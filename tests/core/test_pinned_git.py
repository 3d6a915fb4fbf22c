"""A git dependency pinned to a commit of a public forge runs its tool; any other git dependency holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.allowlist import Vouched, command_refusals
from core.io.declared import declared_programs, declared_tasks
from core.pinned_git import FORGES, pinned_git

SHA = "7ca74011c014de62236373cf4d364ad2758e5f06"


def _refused(tmp_path: Path, name: str, text: str, line: str) -> list[str]:
    (tmp_path / name).write_text(text)
    vouched = Vouched(programs=declared_programs([tmp_path]), tasks=declared_tasks([tmp_path]))
    return [r.detail for r in command_refusals(line, vouched)]


UV = '[project]\nname = "x"\ndependencies = ["types"]\n[tool.uv.sources]\ntypes = {{ {source} }}\n'
CARGO = '[package]\nname = "x"\n[dependencies]\nserde = {{ {source} }}\n'


@pytest.mark.parametrize(
    ("name", "text", "line"), [("pyproject.toml", UV, "uv run pytest"), ("Cargo.toml", CARGO, "cargo test")]
)
def test_a_commit_of_a_public_forge_by_its_full_id_runs_the_tool(
    tmp_path: Path, name: str, text: str, line: str
) -> None:
    # langlearn-tts (data/unseen/projects) takes a package of its own organisation this way
    source = f'git = "https://github.com/punt-labs/langlearn-types", rev = "{SHA}"'
    assert _refused(tmp_path, name, text.format(source=source), line) == []


@pytest.mark.parametrize(
    "source",
    [
        'git = "https://github.com/o/r", branch = "main"',
        'git = "https://github.com/o/r", tag = "v1.0"',
        'git = "https://github.com/o/r", rev = "7ca7401"',  # a short id names whatever commit comes to match it
        'git = "https://github.com/o/r"',
        f'git = "https://evil.example/o/r", rev = "{SHA}"',
        f'git = "http://github.com/o/r", rev = "{SHA}"',
        f'git = "ssh://git@github.com/o/r", rev = "{SHA}"',
        f'git = "https://token@github.com/o/r", rev = "{SHA}"',
        f'git = "https://github.com:8443/o/r", rev = "{SHA}"',
        f'git = "https://github.com.evil.example/o/r", rev = "{SHA}"',
        f'git = "https://github.com/o/r", rev = "{SHA}", branch = "main"',
    ],
)
@pytest.mark.parametrize(
    ("name", "text", "line"), [("pyproject.toml", UV, "uv run pytest"), ("Cargo.toml", CARGO, "cargo test")]
)
def test_any_other_git_dependency_holds_the_tool(tmp_path: Path, source: str, name: str, text: str, line: str) -> None:
    refused = _refused(tmp_path, name, text.format(source=source), line)
    assert refused and ("from elsewhere" in refused[0] or "from a source" in refused[0]), refused


@given(
    scheme=st.sampled_from(["https", "http", "git", "ssh", "git+https", "file"]),
    host=st.sampled_from([*sorted(FORGES), "GitHub.com", "github.com.", "evil.example", "github.com@evil.example"]),
    rev=st.one_of(st.from_regex(r"[0-9a-f]{40}", fullmatch=True), st.text(max_size=64)),
    path=st.sampled_from(["/o/r", "/o/r.git", "/o", "/o/../r", "/o/r?x=1", "/o/r#x"]),
)
def test_only_https_to_a_forge_at_a_full_commit_id_is_pinned(scheme: str, host: str, rev: str, path: str) -> None:
    pinned = pinned_git(f"{scheme}://{host}{path}", rev)
    assert pinned == (
        scheme in ("https", "git+https")
        and host in FORGES
        and len(rev) == 40
        and all(c in "0123456789abcdef" for c in rev)
        and path in ("/o/r", "/o/r.git")
    )


@pytest.mark.parametrize(
    ("line", "admitted"),
    [
        (f"types @ git+https://github.com/o/types@{SHA}", True),
        (f"types[cli] @ git+https://gitlab.com/o/types.git@{SHA} ; python_version >= '3.11'", True),
        (f"-e git+https://codeberg.org/o/types@{SHA}#egg=types", True),
        ("types @ git+https://github.com/o/types@main", False),  # a branch: whatever it points to when installed
        (f"types @ git+https://evil.example/o/types@{SHA}", False),
        (f"types @ git+https://me:token@github.com/o/types@{SHA}", False),
        (f"-e git+https://github.com/o/types@{SHA[:12]}#egg=types", False),
        (f"-e git+ssh://git@github.com/o/types@{SHA}#egg=types", False),
    ],
)
def test_a_requirements_file_may_name_a_forge_commit_by_its_full_id(tmp_path: Path, line: str, admitted: bool) -> None:
    refused = _refused(tmp_path, "requirements.txt", f"requests==2.31.0\n{line}\n", "pip install -r requirements.txt")
    assert (refused == []) == admitted, refused
