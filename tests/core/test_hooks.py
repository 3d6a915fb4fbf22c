"""What the hooks decide, from plain snapshot values: the guards a command sets off, the entries a prompt calls up,
the digest and the holdout; and that the module the hooks import runs on the standard library alone."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.hooks import (
    Simple,
    build_index,
    fires,
    guard_answer,
    held_out,
    markdown,
    prompt_context,
    prompt_entries,
    simple_commands,
    start_context,
)
from core.markdown import to_markdown
from core.models import Entry, Playbook

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("guard", "command", "cwd", "expected"),
    [
        ({"words": ["npm", "install"]}, "npm install left-pad", "/src/app", True),
        ({"words": ["npm", "install"]}, "pnpm install", "/src/app", False),  # another program, not a substring
        ({"words": ["npm", "install"]}, "cd web && CI=1 /usr/bin/npm install 2>&1", "/src/app", True),
        ({"words": ["npm", "install"]}, "echo npm install", "/src/app", False),  # an argument, not the command
        ({"words": ["npm", "install"]}, "git status; npm install", "/src/app", True),
        ({"words": ["npm", "install"]}, "npm 'install", "/src/app", False),  # unreadable: nothing fires
        ({"words": ["pytest"], "unless": ["uv", "run", "pytest"]}, "uv run pytest -q", "/src/app", False),
        ({"words": ["pytest"], "unless": ["uv", "run", "pytest"]}, "pytest -q", "/src/app", True),
        ({"words": ["uv", "run", "pytest"], "contains": ["-m", "unit"]}, "uv run pytest t -m unit", "/", True),
        ({"words": ["uv", "run", "pytest"], "contains": ["-m", "unit"]}, "uv run pytest -m slow", "/", False),
        ({"words": ["node", "build.js"], "folder": "assets"}, "node build.js", "/src/app", True),
        ({"words": ["node", "build.js"], "folder": "assets"}, "cd assets && node build.js", "/src/app", False),
        ({"words": ["node", "build.js"], "folder": "assets"}, "node build.js", "/src/app/assets", False),
        ({"words": ["node", "build.js"], "folder": "web/assets"}, "cd web && cd assets && node build.js", "/", False),
        ({"words": ["node", "build.js"], "folder": "web/assets"}, "cd web && cd .. && node build.js", "/", True),
        ({"words": ["mix", "test"], "piped_into": "tail"}, "mix test 2>&1 | tail -20", "/", True),
        ({"words": ["mix", "test"], "piped_into": "tail"}, "mix test", "/", False),
    ],
)
def test_a_guard_fires_on_the_simple_command_it_names(
    guard: dict[str, Any], command: str, cwd: str, expected: bool
) -> None:
    assert fires(guard, command, cwd) is expected


@given(st.text(max_size=200))
def test_any_line_is_read_or_refused_without_an_error(line: str) -> None:
    for simple in simple_commands(line):
        assert simple.words and all(isinstance(w, str) for w in simple.words)


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_the_holdout_is_a_stable_draw(session: str, playbook: str, entry: str) -> None:
    assert held_out(session, playbook, entry, 0.5) == held_out(session, playbook, entry, 0.5)
    assert not held_out(session, playbook, entry, 0.0) and held_out(session, playbook, entry, 1.0)


def test_the_holdout_share_is_the_share_of_sessions_left_out() -> None:
    out = sum(held_out(f"s-{i}", "default", "pat-001", 0.2) for i in range(5000))
    assert 900 < out < 1100  # 20 % of 5,000, within about three standard deviations


ENTRY = st.builds(
    lambda i, text: Entry(name=f"pat-{i:03d}", text=text),
    st.integers(0, 999),
    st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=30).filter(str.strip),
)


@given(st.dictionaries(st.sampled_from(["PATTERNS", "MISTAKES TO AVOID", "OTHERS"]), st.lists(ENTRY, max_size=4)))
def test_the_hooks_write_a_playbook_as_the_exports_do(sections: dict[str, list[Entry]]) -> None:
    if not any(sections.values()):
        return
    title = "Lessons from past sessions (`default`)"
    plain = {s: [(e.name, e.text) for e in items] for s, items in sections.items()}
    assert markdown(title, plain) == to_markdown(Playbook(sections=sections), title=title, counters=False)


def snapshot(texts: list[str], holdout: float = 0.0, digest: int = 12) -> dict[str, Any]:
    entries = [["OTHERS", {"name": f"oth-{i:03d}", "text": t}] for i, t in enumerate(texts)]
    return {
        "holdout": holdout,
        "digest_entries": digest,
        "playbooks": [
            {
                "name": "default",
                "version": 3,
                "entries": entries,
                "projects": {},
                "index": build_index(texts),
                "guards": [
                    {"playbook": "default", "entry": "oth-000", "text": texts[0], "words": ["npm", "install"]},
                    {
                        "playbook": "default",
                        "entry": "oth-001",
                        "text": texts[1],
                        "words": ["pytest"],
                        "hard": True,
                    },
                ],
            }
        ],
    }


TEXTS = [
    "`npm install` fails here; `pnpm install` works.",
    "`pytest -m unit` selects no test here.",
    "The staging database is reset every night at 02:00; never keep fixtures there.",
    "Release notes live in CHANGELOG.md; add a line under Unreleased for every user-visible change.",
    "Screenshots for the docs are made with `make shots` in the docs folder.",
]


def test_a_prompt_calls_up_the_entries_it_is_about_and_not_the_digest() -> None:
    whole = snapshot(TEXTS, digest=1)
    text, (got,) = prompt_context(whole, "s-1", "/src/app", "where do the release notes for this change go?")
    assert got.shown == ["oth-003"] and "CHANGELOG.md" in text
    text, _ = prompt_context(whole, "s-1", "/src/app", "npm install fails")
    assert "oth-000" not in text  # in the digest: given at the start already
    assert prompt_context(whole, "s-1", "/src/app", "hello there") == ("", [])


def test_bm25_ranks_the_entry_with_the_rarer_shared_words_first() -> None:
    index = build_index(TEXTS)
    ranked = prompt_entries(index, "reset the staging database fixtures", most=3)
    assert ranked[0][0] == 2 and all(score > 0 for _, score in ranked)


def test_the_digest_is_the_first_entries_and_a_held_out_entry_is_recorded() -> None:
    text, (got,) = start_context(snapshot(TEXTS, digest=2), "s-1", "/src/app", digest=True)
    assert got.shown == ["oth-000", "oth-001"] and "oth-002" not in text
    text, (got,) = start_context(snapshot(TEXTS, holdout=1.0), "s-1", "/src/app")
    assert text == "" and got.shown == [] and len(got.held_out) == len(TEXTS)


def test_a_hard_rule_refuses_a_soft_one_adds_context_and_a_held_out_session_gets_neither() -> None:
    decision, text, (got,) = guard_answer(snapshot(TEXTS), "s-1", "/src/app", "npm install")
    assert decision is None and "pnpm install" in text and got.shown == ["oth-000"]
    decision, text, _ = guard_answer(snapshot(TEXTS), "s-1", "/src/app", "pytest -q")
    assert decision == "deny" and "[oth-001]" in text
    decision, text, (got,) = guard_answer(snapshot(TEXTS, holdout=1.0), "s-1", "/src/app", "pytest -q")
    assert decision is None and text == "" and got.held_out == ["oth-001"] and got.shown == []
    assert guard_answer(snapshot(TEXTS), "s-1", "/src/app", "ls -la") == (None, "", [])


def test_the_hook_runner_imports_the_standard_library_alone() -> None:
    """A hook's process must start in milliseconds: no pydantic, no DuckDB, no Typer, no parser grammar."""
    code = (
        "import sys, flows.delivery.hookrun\n"
        "mods = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(mods & {'pydantic', 'duckdb', 'typer', 'rich', 'tree_sitter', 're2', 'prefect'}))"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_here_document_is_what_its_command_reads_and_the_lines_after_it_are_commands() -> None:
    line = "python3 - <<'EOF' | tail -3\nimport yaml\nprint('a && b')\nEOF\ncd web\nnpm test # all of them\n"
    assert simple_commands(line) == [
        Simple(("python3", "-"), None, "tail", "import yaml\nprint('a && b')"),
        Simple(("tail", "-3")),
        Simple(("npm", "test"), "web"),
    ]
    assert simple_commands("cat <<-END\n\tone\n\tEND") == [Simple(("cat",), stdin="\tone")]
    assert simple_commands("git status &&\n  git diff") == [Simple(("git", "status")), Simple(("git", "diff"))]


# The standard library's modules a test may name in an import (a private one, `_tkinter`, is the interpreter's).
_STDLIB = sorted(m for m in sys.stdlib_module_names if not m.startswith("_"))


@given(st.lists(st.sampled_from(_STDLIB), min_size=1, max_size=4), st.booleans())
def test_code_of_the_standard_library_alone_never_needs_a_module_python_lacks(modules: list[str], piped: bool) -> None:
    guard = {"words": ["python3"], "imports": ["yaml"]}
    code = f"import {', '.join(modules)}\nprint(1)"
    line = f"python3 - <<'EOF'\n{code}\nEOF" if piped else f"python3 -c {shlex.quote(code)}"
    assert not fires(guard, line, "/src/app")
    assert fires(guard, line.replace("print(1)", "import yaml.parser"), "/src/app")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("node scripts/build.js", True),  # a project file: it may require anything
        ("node /tmp/scratch/check.js", False),  # the agent's scratch script
        ("node -e \"require('left-pad')\"", True),  # another language's code is not read: it may need the module
        ("cd /tmp && node check.js", False),
    ],
)
def test_a_module_fact_of_another_interpreter_spares_only_a_scratch_script(command: str, expected: bool) -> None:
    assert fires({"words": ["node"], "imports": ["express"]}, command, "/src/app") is expected


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=30), max_size=6))
def test_a_here_documents_text_is_read_whole_whatever_it_holds(lines: list[str]) -> None:
    body = "\n".join(line for line in lines if line != "EOF")
    assert simple_commands(f"cat <<'EOF' > out.txt\n{body}\nEOF\nls -l") == [
        Simple(("cat",), stdin=body),
        Simple(("ls", "-l")),
    ]
