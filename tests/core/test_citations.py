"""What a lesson rests on in its repository, read from its typed lesson, and why it no longer holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.citations import Citation, citations_of, stale_reason
from core.io.declared import declared_scripts
from core.io.repository import check_citations, head_commit
from core.lessons import Command, CommandFact, Correction, OwnTool
from tests.helpers import git


@pytest.mark.parametrize(
    ("words", "folder", "expected"),
    [
        (("pnpm", "dev"), None, [("script", "dev", "package.json", None)]),
        (
            ("npm", "run", "build", "--", "--watch"),
            "web",
            [("folder", "web", None, None), ("script", "build", "package.json", "web")],
        ),
        (("npm", "install"), None, []),  # npm's own subcommand: no script
        (("pnpm", "install"), None, []),
        (("make", "test"), None, [("script", "test", "Makefile", None)]),
        (("just", "lint"), None, [("script", "lint", "justfile", None)]),
        (("node", "build.js"), "assets", [("folder", "assets", None, None), ("file", "build.js", None, "assets")]),
        (("./gradlew", "build"), None, [("program", "gradlew", None, None)]),
        (("uv", "run", "pytest"), None, []),  # a program of the machine: no citation
        (("python", "../outside.py"), None, []),  # outside the project: not the project's
        (("cat", "/etc/passwd"), None, []),
    ],
)
def test_a_command_cites_what_it_runs_in_the_project(
    words: tuple[str, ...], folder: str | None, expected: list[tuple[str, str, str | None, str | None]]
) -> None:
    lesson = CommandFact(category="run", command=Command(words=words, folder=folder))
    assert [(c.kind, c.value, c.manifest, c.folder) for c in citations_of(lesson)] == expected


def test_a_correction_rests_on_the_command_that_worked_and_a_tool_on_nothing() -> None:
    fixed = Correction(
        how="program", failed=Command(words=("npm", "run", "dev")), worked=Command(words=("pnpm", "dev"))
    )
    assert [c.value for c in citations_of(fixed)] == ["dev"]
    assert citations_of(OwnTool(program="bd")) == []


def test_the_reason_names_what_is_gone() -> None:
    cited = [Citation(kind="folder", value="assets"), Citation(kind="file", value="build.js", folder="assets")]
    assert stale_reason(cited, lambda p: p in {"assets", "assets/build.js"}, {}) is None
    assert stale_reason(cited, lambda p: p == "assets", {}) == "file `assets/build.js` no longer exists"
    script = [Citation(kind="script", value="dev", manifest="package.json")]
    assert stale_reason(script, lambda p: True, {(None, "package.json"): {"start"}}) == (
        "`package.json` no longer declares `dev`"
    )
    assert "no longer exists" in (stale_reason(script, lambda p: True, {(None, "package.json"): None}) or "")


def test_a_real_repository_s_head_is_read_from_its_files_and_paths_stay_inside_it(tmp_path: Path) -> None:
    repo = tmp_path / "web"
    (repo / "assets").mkdir(parents=True)
    (repo / "assets" / "build.js").write_text("x")
    (repo / "Makefile").write_text("VERSION := 1\nbuild: deps\n\tcc\ntest:\n\tpytest\n.PHONY: test\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    assert head_commit(repo) == git(repo, "rev-parse", "HEAD")
    git(repo, "pack-refs", "--all")  # the branch now only in packed-refs
    assert head_commit(repo / "assets") == git(repo, "rev-parse", "HEAD")
    git(repo, "worktree", "add", "-q", str(tmp_path / "other"), "-b", "other")
    assert head_commit(tmp_path / "other") == git(repo, "rev-parse", "HEAD")
    assert head_commit(tmp_path) is None
    assert declared_scripts(repo, "Makefile") == {"build", "test"}
    (tmp_path / "secret.js").write_text("x")
    outside = [Citation(kind="file", value="../secret.js")]
    assert check_citations(outside, repo)[0] == "file `../secret.js` no longer exists"  # never looked up outside
    (repo / "link.js").symlink_to(tmp_path / "secret.js")
    assert check_citations([Citation(kind="file", value="link.js")], repo)[0] is not None
    assert check_citations([Citation(kind="file", value="build.js", folder="assets")], repo) == (
        None,
        git(repo, "rev-parse", "HEAD"),
    )


def test_a_model_s_words_cite_paths_and_commands_inside_the_project_only() -> None:
    from core.citations import citations_from_words

    found = citations_from_words(
        ["cd assets && node build.js", "docs/", "npm run lint", "/etc/passwd", "https://x.test/a.js", "../up.py", "ok"]
    )
    assert [(c.kind, c.value, c.manifest, c.folder) for c in found] == [
        ("folder", "assets", None, None),
        ("file", "build.js", None, "assets"),
        ("folder", "docs", None, None),
        ("script", "lint", "package.json", None),
    ]  # a bare word (`ok`) is no path
