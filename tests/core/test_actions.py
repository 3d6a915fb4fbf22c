"""What the agent did, as triggers read it: shell calls as simple commands with their folder, and edited files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

import duckdb
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.actions import Call, action_rows, actions, call_actions
from core.adherence import tally
from core.guards import guards_of
from core.lessons import Command, Correction
from core.models import SessionMessage
from core.store.actions import refresh_actions, session_commands
from core.store.db import connect, open_db
from core.store.ingest import ingest
from tests.helpers import claude_session
from tests.profiles import examples


def call(seq: int, tool: str, **values: object) -> SessionMessage:
    return SessionMessage(seq=seq, role="assistant", kind="tool_use", tool_name=tool, tool_input=json.dumps(values))


def test_a_session_s_calls_are_read_as_commands_and_edits() -> None:
    found = actions(
        [
            call(1, "Bash", command="cd assets && FOO=1 /usr/local/bin/npm install --save left-pad 2>&1 | tail -5"),
            call(2, "Edit", file_path="/src/app/lib/a.py", old_string="a", new_string="b"),
            call(3, "exec_command", cmd="pnpm test", workdir="/src/app/web"),
            call(4, "Bash", command="echo $(whoami)"),
            call(5, "Read", file_path="/src/app/README.md"),
            call(6, "Bash", command="cat <<'EOF'\nline one\nEOF"),
        ]
    )
    # Claude Code's shell keeps its folder between calls: the `cd` of call 1 holds for call 6; Codex's call names its
    # own working folder and moves nothing.
    assert [(a.seq, a.kind, a.text, a.folder, a.piped_into) for a in found] == [
        (1, "command", "npm install --save left-pad", "assets", "tail"),
        (1, "command", "tail -5", "assets", None),
        (2, "edit", "/src/app/lib/a.py", None, None),
        (3, "command", "pnpm test", "/src/app/web", None),
        (6, "command", "cat", "assets", None),
    ]


_CALLS = st.sampled_from(
    [
        ("Bash", {"command": "cd sub"}),
        ("Bash", {"command": "cd /w/other && npm test 2>&1 | tail -3"}),
        ("Bash", {"command": "git status"}),
        ("exec_command", {"cmd": "pnpm install", "workdir": "/w/web"}),
        ("Edit", {"file_path": "/w/app/a.py", "old_string": "a", "new_string": "b"}),
        ("Write", {"file_path": "/w/app/b.py", "content": "print(1)\n" * 50}),
        ("Read", {"file_path": "/w/app/README.md"}),
        ("Grep", {"pattern": "cd sub"}),
        ("TodoWrite", {"todos": [{"content": "run npm test", "status": "pending"}]}),
    ]
)


@pytest.mark.slow  # an ingest an example
def test_the_actions_ingest_stores_are_those_every_call_of_the_file_gives(tmp_path: Path) -> None:
    # Ingest reads only the calls `actions` reads (shell and edit tools): whatever other calls stand between them, what
    # it stores is what `actions` makes of all of the file's calls.
    con = connect(tmp_path / "store.duckdb")
    files = count()

    @settings(max_examples=examples(25), deadline=None)
    @given(st.lists(_CALLS, min_size=1, max_size=8))
    def check(calls: list[tuple[str, dict[str, object]]]) -> None:
        n = next(files)
        turns: list[tuple[str, object]] = [("user", "go")]
        for i, (tool, values) in enumerate(calls):
            block = {"type": "tool_use", "id": f"t{n}-{i}", "name": tool, "input": values}
            turns += [("assistant", [block]), ("user", [{"type": "tool_result", "tool_use_id": f"t{n}-{i}"}])]
        path = tmp_path / f"s{n}.jsonl"
        claude_session(path, f"session-{n}", datetime(2026, 1, 1, tzinfo=UTC), turns)
        ingest(con, [path])
        every_call = [call(i * 2 + 2, tool, **values) for i, (tool, values) in enumerate(calls)]
        stored = con.execute(
            "SELECT seq, kind, text, folder, piped_into FROM actions WHERE source_path = ? ORDER BY seq, rowid",
            [str(path)],
        ).fetchall()
        assert stored == [(a.seq, a.kind, a.text, a.folder, a.piped_into) for a in actions(every_call)]

    check()
    con.close()


def _transcript(path: Path, session_id: str, cwd: str, commands: list[str]) -> None:
    """A Claude Code session file as Claude Code writes it: a user prompt, then for each command an assistant record
    with its Bash `tool_use` and a user record with its `tool_result`, each record chained to the one before."""
    start = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    records: list[dict[str, object]] = []

    def add(kind: str, content: object, **extra: object) -> None:
        at = start.replace(second=len(records)).isoformat().replace("+00:00", "Z")
        parent = records[-1]["uuid"] if records else None
        record = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session_id,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "message": {"role": kind, "content": content, **extra},
            "uuid": f"{session_id}-{len(records)}",
            "timestamp": at,
        }
        records.append(record)

    add("user", "check the config loads")
    for i, command in enumerate(commands):
        use = {"type": "tool_use", "id": f"toolu_{session_id}_{i}", "name": "Bash", "input": {"command": command}}
        add("assistant", [use], id=f"msg_{session_id}_{i}", type="message", model="claude-sonnet-4-5")
        add("user", [{"type": "tool_result", "tool_use_id": use["id"], "content": "ok", "is_error": False}])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_module_lesson_s_adherence_is_judged_on_the_code_an_ingested_call_ran(tmp_path: Path) -> None:
    """`python3` lacks `yaml` here: `python3 -c "import yaml"` ignored the lesson (its stored text, `python3 -c import
    yaml`, read as code `import` that needs nothing), `uv run python3 -c ...` followed it, a here document fed to
    `python3` that imports `yaml` ignored it, one that imports `json` did not need it."""
    module = Correction(
        how="module",
        failed=Command(words=("python3",)),
        worked=Command(words=("uv", "run", "python3")),
        modules=("yaml",),
    )
    guards = [g.model_dump() for g in guards_of(module, playbook="default", entry="e-1", text="lesson")]
    sessions = {
        "bare": ["ls -la", "python3 -c \"import yaml; print(yaml.safe_load(open('c.yml')))\""],
        "wrapped": ['uv run python3 -c "import yaml; print(1)"', 'python3 -c "import yaml"'],
        "heredoc": ["cd tools && python3 - <<'EOF' 2>&1 | tail -3\nimport yaml\nprint(yaml)\nEOF"],
        "stdlib": ["python3 - <<'EOF'\nimport json\nEOF"],
    }
    for sid, lines in sessions.items():
        _transcript(tmp_path / "projects" / "-w-app" / f"{sid}.jsonl", sid, "/w/app", lines)
    with connect(tmp_path / "store.duckdb") as con:
        ingest(con, [tmp_path / "projects"])
        commands = session_commands(con, sorted(sessions))
        (doc,) = commands["heredoc"][1]
    assert doc == (("python3", "-"), "tools", "tail", "import yaml\nprint(yaml)")
    judged = {sid: tally(guards, [sid], commands) for sid in sessions}
    assert {sid: (t.fired, t.followed) for sid, t in judged.items()} == {
        "bare": (1, 0),
        "wrapped": (1, 1),
        "heredoc": (1, 0),
        "stdlib": (1, 1),
    }


def test_a_store_from_before_words_regains_its_commands_words_at_the_next_ingest(tmp_path: Path) -> None:
    """A store from before actions kept words (schema 28: only the joined text) is migrated; until the next ingest a
    reader takes an old row's words from its text (the code `-c` was given is two words), and that ingest reads the
    stored calls again, so the row regains the line's words and its here document: nothing is lost."""
    lines = ['python3 -c "import yaml"', "python3 - <<'EOF'\nimport yaml\nEOF"]
    _transcript(tmp_path / "projects" / "-w-app" / "s.jsonl", "s", "/w/app", lines)
    path = tmp_path / "store.duckdb"
    with connect(path) as con:
        ingest(con, [tmp_path / "projects"])
    old = duckdb.connect(str(path))  # back to schema 28, as playbook left it: no words, no here document
    old.execute("ALTER TABLE actions DROP COLUMN words")
    old.execute("ALTER TABLE actions DROP COLUMN stdin")
    old.execute("UPDATE actions SET text = 'python3 -c import yaml' WHERE seq = (SELECT min(seq) FROM actions)")
    old.execute("ALTER TABLE files DROP COLUMN reader_version")  # schema 30
    old.execute("DELETE FROM schema_version WHERE version >= 29")
    old.close()
    with open_db(path) as con:
        before = [c[0] for c in session_commands(con, ["s"])["s"][1]]
    assert before == [("python3", "-c", "import", "yaml"), ("python3",)]
    with connect(path) as con:
        ingest(con, [tmp_path / "projects"])
        after = session_commands(con, ["s"])["s"][1]
    assert after == [
        (("python3", "-c", "import yaml"), None, None, None),
        (("python3", "-"), None, None, "import yaml"),
    ]


_PLAIN_LINE = st.lists(
    st.sampled_from(
        "npm install -q 2>&1 | tail -5 && || ; & FOO=1 cd web > >> out /usr/bin/npm ./run a=b - %1 @x +x a,b x:y |& 2>"
        " 1>&2 &> -c".split()
    ),
    max_size=12,
).map(" ".join)


@given(_PLAIN_LINE)
@example("a=b - a=b -")  # the grammar read the second `a=b` as an assignment, the hooks as an argument
def test_a_plain_line_s_words_are_those_the_hooks_read(line: str) -> None:
    """A line of bare words and operators is not lexed twice: each command the grammar reads of it has the words and
    the pipe of the hooks' next command of the same program, as a line lexed twice takes them."""
    from core.hooks import simple_commands

    read = [s for s in simple_commands(line) if s.words]
    at = 0
    for action in actions([call(1, "Bash", command=line)]):
        same = [k for k in range(at, len(read)) if read[k].words[0] == action.words[0]]
        if same:
            at = same[0] + 1
            assert (action.words, action.piped_into) == (read[same[0]].words, read[same[0]].piped_into)


# Tool inputs as agents write them and as they are not: objects naming a line, a working folder or a file in every
# type JSON has, and text DuckDB and Python read apart (a trailing comma, a key named twice, a lone surrogate, no
# JSON at all, a redacted input) or neither reads as an object.
_LINES = st.sampled_from(
    [
        "cd sub",
        "cd /w/other && npm test 2>&1 | tail -3",
        "git status",
        "  pnpm install  ",
        "python3 - <<'EOF'\nimport yaml\nEOF",
        'python3 -c "import yaml"',
        "echo $(whoami) | grep x",
        "",
        " \n",
    ]
)
_VALUES = st.one_of(
    _LINES,
    st.text(max_size=12),
    st.none(),
    st.integers(),
    st.booleans(),
    st.lists(_LINES, max_size=3),
    st.lists(st.sampled_from(["bash", "-lc", "-c", "ls"]), max_size=3).map(lambda w: [*w, "git status"]),
    st.dictionaries(st.sampled_from(["a", "command"]), st.integers(), max_size=2),
)
_KEYS = st.sampled_from(["command", "cmd", "workdir", "file_path", "notebook_path", "old_string", "x"])


@st.composite
def _tool_input(draw: st.DrawFn) -> str:
    named = draw(st.sampled_from(["command", "cmd", "file_path", "notebook_path"]))  # most inputs name something
    value = {named: draw(_LINES), **draw(st.dictionaries(_KEYS, _VALUES, max_size=3))}
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    shape = draw(
        st.sampled_from(
            ["as is", "blanks", "trailing comma", "key twice", "surrogate", "array", "not json", "redacted"]
        )
    )
    if shape == "blanks":
        return draw(st.sampled_from([" ", "\n", "\t\r\n", "\x0c"])) + text + draw(st.sampled_from(["", " ", "\n"]))
    if shape == "trailing comma" and value:
        return text[:-1] + ",}"
    if shape == "key twice" and value:
        key, again = draw(st.sampled_from(sorted(value))), draw(_VALUES)
        return text[:-1] + f", {json.dumps(key)}: {json.dumps(again)}}}"
    if shape == "surrogate":  # under a key no reading takes: a value with one cannot be stored (UTF-8) at all
        return json.dumps({**value, "x": "x\ud800y"})
    if shape == "array":
        return json.dumps([value])
    if shape == "not json":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if shape == "redacted":
        return "[REDACTED_ARGUMENTS len=83 sha=b4e1e5f7]"
    return text


_TOOLS = st.sampled_from(["Bash", "exec_command", "shell", "Edit", "Write", "NotebookEdit", "MultiEdit", "Read"])


def test_the_store_reads_each_stored_call_as_python_reads_its_input(tmp_path: Path) -> None:
    """The store takes the line, folder and file of each call out of its input in SQL, handing Python only the
    inputs it might read otherwise: whatever the input, what it stores is what `call_actions` makes of the calls."""
    con = connect(tmp_path / "store.duckdb")
    files = count()

    @settings(max_examples=examples(300), deadline=None)
    @given(st.lists(st.tuples(_TOOLS, _tool_input()), min_size=1, max_size=8))
    def check(calls: list[tuple[str, str]]) -> None:
        path = f"/w/s{next(files)}.jsonl"
        con.execute(
            "INSERT INTO files (path, size, mtime, content_hash, status, session_id) VALUES (?, 1, 0, ?, 'ok', 's')",
            [path, path],
        )
        con.executemany(
            "INSERT INTO messages (session_id, source_path, seq, part, role, kind, tool_name, tool_input)"
            " VALUES ('s', ?, ?, 0, 'assistant', 'tool_use', ?, ?)",
            [[path, seq, tool, tool_input] for seq, (tool, tool_input) in enumerate(calls)],
        )
        refresh_actions(con)
        stored = con.execute(
            "SELECT seq, kind, text, folder, piped_into, words, stdin FROM actions WHERE source_path = ?"
            " ORDER BY seq, rowid",
            [path],
        ).fetchall()
        read = call_actions((seq, tool, tool_input) for seq, (tool, tool_input) in enumerate(calls))
        assert stored == [(a.seq, a.kind, a.text, a.folder, a.piped_into, list(a.words) or None, a.stdin) for a in read]

    check()
    con.close()


@settings(max_examples=examples(200))
@given(st.lists(st.tuples(st.sampled_from(["command", "edit"]), _LINES, st.sampled_from([None, "", "/w", "sub"]))))
def test_a_line_read_before_gives_the_actions_it_gives_read_first(calls: list[tuple[str, str, str | None]]) -> None:
    """Each (line, folder) is read once and kept: the actions of a session's calls are the same whether its lines
    were read before (in this session, in reverse, or not at all)."""
    from core.actions import _commands

    given_calls = [Call(seq, kind, text, folder) for seq, (kind, text, folder) in enumerate(calls)]  # type: ignore[arg-type]
    _commands.cache_clear()
    first = action_rows(given_calls)
    again = action_rows(given_calls)
    _commands.cache_clear()
    action_rows(list(reversed(given_calls)))
    after_others = action_rows(given_calls)
    assert first == again == after_others


def test_a_call_naming_half_a_surrogate_pair_is_stored_with_it_replaced(tmp_path: Path) -> None:
    """One crafted Codex call (a command escaping half of a UTF-16 pair, "\\ud800", which no UTF-8 text holds)
    stopped an ingest ("cannot encode str as UTF-8"). Its line is stored with U+FFFD in its place, and every other
    action of the file is stored as from the file without it."""
    sample = sorted((Path(__file__).parents[2] / "data" / "unseen" / "jdx+hk").glob("*.jsonl"))[0]  # not redacted
    lines = sample.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"exec_command"' in line and '\\"cmd\\"' in line)
    record = json.loads(lines[at])
    arguments = json.loads(record["payload"]["arguments"])
    arguments["cmd"] = "echo HALF"
    record["payload"]["arguments"] = json.dumps(arguments).replace("HALF", "\\ud800")
    crafted, plain = tmp_path / "crafted" / sample.name, tmp_path / "plain" / sample.name
    for path, line in ((crafted, json.dumps(record)), (plain, lines[at])):
        path.parent.mkdir()
        path.write_text("\n".join([*lines[:at], line, *lines[at + 1 :]]) + "\n", encoding="utf-8")
    stored = []
    for path in (crafted, plain):
        with open_db(tmp_path / f"{path.parent.name}.duckdb") as con:
            ingest(con, [path])
            stored.append(con.execute("SELECT seq, kind, text FROM actions ORDER BY seq, rowid").fetchall())
    replaced = [row for row in stored[0] if row not in stored[1]]
    assert [text for _, _, text in replaced] == ["echo \ufffd"]
    assert len(stored[0]) == len(stored[1])


@pytest.mark.parametrize(
    ("line", "piped"),
    [
        ("a | b | c && d", [False, True, True, False]),  # bash pipes `a | b | c`, then runs `d`
        ("npm | npm | npm && npm", [False, True, True, False]),
        ("a | b && c", [False, True, False]),
    ],
)
def test_a_list_after_a_pipe_is_not_piped_past_its_first_statement(line: str, piped: list[bool]) -> None:
    from core.shell import parse_command

    assert [c.piped for c in parse_command(line).commands] == piped


def test_text_the_grammar_drops_silently_is_named() -> None:
    # tree-sitter-bash leaves out a leading `-` with no error node: the commands read are not what bash would run
    from core.shell import parse_command

    assert "text the grammar skipped" in parse_command("- FOO=1 npm | npm").constructs
    assert parse_command("ls \\\n  -la && make  # done").constructs == ()
