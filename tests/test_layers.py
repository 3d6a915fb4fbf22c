"""The layer rules, checked: core/ imports no shell, the run loop needs no Prefect, SQL only in the store (and
the transcript readers' staging tables), and each command is one library call plus rendering."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BANNED = {"prefect", "flows", "typer", "rich"}


@pytest.mark.parametrize("path", sorted((ROOT / "core").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_imports_no_shell(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            assert name.split(".")[0] not in BANNED, f"{path.relative_to(ROOT)} imports {name}"


def test_run_loop_and_cli_import_no_prefect() -> None:
    """The run loop, its steps and the CLI's start-up are read and run without Prefect (fast `--help`)."""
    import subprocess
    import sys

    code = "import sys, flows.run.curation, flows.run.steps, flows.cli; print(sorted(m for m in sys.modules if m.startswith('prefect')))"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


SQL = re.compile(r"\b(SELECT|INSERT INTO|DELETE FROM|UPDATE [a-z_]+ SET)\b")


def test_sql_lives_in_the_store() -> None:
    """Queries live in core/store; flows/ only sequences them. The one other place is core/transcripts: a format
    reader is DuckDB's JSON reader plus SQL, and it writes only the `_`-prefixed staging tables that
    core/store/ingest creates and copies from."""
    for path in sorted([*(ROOT / "flows").rglob("*.py"), *(ROOT / "core").rglob("*.py")]):
        where = path.relative_to(ROOT).parts
        if where[:2] == ("core", "store"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if where[:2] == ("core", "transcripts"):
                target = re.search(r"INSERT INTO (\w+)", line)
                assert target is None or target.group(1).startswith("_"), f"{'/'.join(where)}:{number}: {line.strip()}"
                continue
            assert not SQL.search(line), f"{'/'.join(where)}:{number} has SQL: {line.strip()}"


COMMANDS = sorted(p for p in (ROOT / "flows" / "cli").glob("*.py") if not p.name.startswith("_"))


def _calls(node: ast.AST, library: set[str]) -> int:
    """Calls of library functions anywhere in an expression or a simple statement (an `x if c else y` counts
    its costlier branch)."""
    if isinstance(node, ast.IfExp):
        return _calls(node.test, library) + max(_calls(node.body, library), _calls(node.orelse, library))
    own = int(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in library)
    return own + sum(_calls(child, library) for child in ast.iter_child_nodes(node))


def _ends(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], (ast.Return, ast.Raise))


def _most_calls(block: list[ast.stmt], library: set[str]) -> int:
    """The most library calls on one path through `block`: the branches of an `if` are alternatives, and a
    branch that returns does not go on to the statements after it."""
    total = 0
    for i, stmt in enumerate(block):
        if isinstance(stmt, ast.If):
            rest = _most_calls(block[i + 1 :], library)
            branches = [_most_calls(b, library) + (0 if _ends(b) else rest) for b in (stmt.body, stmt.orelse)]
            return total + _calls(stmt.test, library) + max(branches)
        if isinstance(stmt, (ast.With, ast.For, ast.Try)):
            heads = [*getattr(stmt, "items", []), getattr(stmt, "iter", None)]
            total += sum(_calls(h, library) for h in heads if h is not None)
            total += sum(_most_calls(getattr(stmt, f, []), library) for f in ("body", "orelse", "finalbody"))
            continue
        total += _calls(stmt, library)
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return total
    return total


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.name)
def test_a_command_is_one_library_call_plus_rendering(path: Path) -> None:
    """Each command body imports what it needs from flows/ only (the library; core is reached through it,
    values and types aside) and calls at most one library function on any path; the rest is rendering."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    commands = [
        f
        for f in tree.body
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command" for d in f.decorator_list)
    ]
    assert commands, f"{path.name} defines no command"
    for fn in commands:
        library: set[str] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.module:
                top = node.module.split(".")[0]
                assert top in ("flows", "core"), f"{fn.name} imports {node.module}"
                if node.module.startswith("flows.") and not node.module.startswith("flows.cli"):
                    library |= {a.asname or a.name for a in node.names if a.name[:1].islower()}
                else:
                    assert all(a.name[:1].isupper() for a in node.names), (
                        f"{fn.name} calls into {node.module} directly: {[a.name for a in node.names]}"
                    )
        calls = _most_calls(fn.body, library)
        assert calls <= 1, f"{fn.name} makes {calls} library calls on one path"


def test_the_call_count_sees_two_calls_on_one_path_and_not_across_branches() -> None:
    def count(source: str) -> int:
        return _most_calls(ast.parse(source).body, {"show", "diff"})

    assert count("a = show(x)\nif a:\n    print(a)\nb = diff(a)") == 2
    assert count("if f:\n    print(show(x))\n    return\nprint(diff(y))") == 1
    assert count("with lock():\n    show(x)\n    diff(y)") == 2
    assert count("x = show(a) if f else diff(b)") == 1


def test_no_test_module_imports_another() -> None:
    """What tests share lives in tests/helpers.py (and the servers in tests/servers.py), never in a test module
    or conftest.py another test would import."""
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "data" in path.relative_to(ROOT / "tests").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [f"{node.module}.{a.name}" for a in node.names]
                if isinstance(node, ast.ImportFrom) and node.module
                else []
            )
            for name in names:
                parts = name.split(".")
                assert not any(p.startswith("test_") or p == "conftest" for p in parts[1:]), (
                    f"{path.relative_to(ROOT)} imports {name}"
                )


def _import_graph() -> dict[str, set[str]]:
    """Every module of core/, flows/ and prompts/ and the modules of ours it imports, at any depth of the file
    (a function's own import and a type-checking one count: a cycle hidden in a function is still a cycle)."""
    modules: dict[str, Path] = {}
    for base in ("core", "flows", "prompts"):
        for path in (ROOT / base).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def resolved(name: str) -> str | None:
        while name and name not in modules:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for name in names:
                found = resolved(name) if name.split(".")[0] in ("core", "flows", "prompts") else None
                if found and found != module:
                    graph[module].add(found)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def _package(module: str) -> str:
    """The subpackage a module belongs to (`core.store.ingest` -> `core.store`), or the module at the top."""
    return ".".join(module.split(".")[:2]) if module.count(".") >= 2 else module


def test_no_import_cycle_between_modules_or_packages() -> None:
    graph = _import_graph()
    assert _cycles(graph) == []
    packages: dict[str, set[str]] = {}
    for module, imported in graph.items():
        packages.setdefault(_package(module), set()).update(
            _package(m) for m in imported if _package(m) != _package(module)
        )
    for imported in list(packages.values()):
        for name in imported:
            packages.setdefault(name, set())
    assert _cycles(packages) == []


def test_no_upward_import() -> None:
    """core never imports flows; the library under flows/ never imports its CLI; the exception tree and the
    prompts' package import nothing of playbook's (everything imports them)."""
    graph = _import_graph()
    for module, imported in graph.items():
        if module.startswith("core"):
            assert not any(m.startswith("flows") for m in imported), module
        if module.startswith("flows") and not module.startswith("flows.cli"):
            assert not any(m.startswith("flows.cli") for m in imported), module
    assert graph["core.errors"] == set() and graph["prompts"] == set()


def test_each_ecosystem_s_policies_import_only_what_the_policies_share() -> None:
    """`core.program_calls` (the call as a policy reads it) imports nothing of ours; each ecosystem's policies
    (`core.policy_*`) import only it and `core.program_tasks`, never another ecosystem's nor the table in
    `core.programs` that imports them all. (`core.program_tasks` reads a declared task's name with the reviewed
    lexicon, `core.quote_words`, which imports no policy.)"""
    graph = _import_graph()
    shared = {"core.program_calls", "core.program_tasks"}
    assert graph["core.program_calls"] == set()
    assert graph["core.program_tasks"] == {"core.program_calls", "core.quote_words"}
    assert not any(m.startswith(("core.policy_", "core.program")) for m in graph["core.quote_words"])
    ecosystems = [m for m in graph if m.startswith("core.policy_")]
    assert "core.policy_git" in ecosystems
    for module in ecosystems:
        assert graph[module] <= shared, f"{module} imports {sorted(graph[module] - shared)}"
    assert set(ecosystems) <= graph["core.programs"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# What builds the workspace's pieces from the settings: the settings themselves, the values built from them, the
# provider resolution, and the workspace (the one place that calls the builders).
BUILDERS = {"flows/config.py", "flows/context.py", "flows/models/providers.py", "flows/workspace.py"}
PIECES = {
    ("Database", "of"),
    ("Database", "store_of"),
    ("ExportRules", "of"),
    ("RemoteSource", "of"),
    ("ProviderHandle", "of"),
}


def _library() -> list[Path]:
    return sorted((ROOT / "flows").rglob("*.py"))


def test_settings_stay_in_the_modules_that_build_the_workspace() -> None:
    """Below the workspace nothing takes `Settings`: a function takes the workspace or the one piece it needs."""
    for path in _library():
        where = str(path.relative_to(ROOT))
        if where in BUILDERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = (
                [a.name for a in node.names]
                if isinstance(node, ast.ImportFrom)
                else [node.id]
                if isinstance(node, ast.Name)
                else [node.attr]
                if isinstance(node, ast.Attribute)
                else []
            )
            assert "Settings" not in named, f"{where}:{getattr(node, 'lineno', '?')} names Settings"


def test_each_piece_of_the_workspace_is_built_in_one_place() -> None:
    """`Database.of`, `ExportRules.of`, `resolve_provider`, ... are called by the workspace only."""
    calls: dict[str, list[str]] = {}
    for path in _library():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (
                f"{func.value.id}.{func.attr}"
                if isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and (func.value.id, func.attr) in PIECES
                else func.id
                if isinstance(func, ast.Name) and func.id in ("resolve_provider", "run_config")
                else None
            )
            if name:
                calls.setdefault(name, []).append(f"{where}:{node.lineno}")
    assert set(calls) == {f"{a}.{b}" for a, b in PIECES} | {"resolve_provider", "run_config"}
    for name, sites in calls.items():
        assert [s.split(":")[0] for s in sites] == ["flows/workspace.py"], (name, sites)
