"""Code spans that are no command line: an expression or a statement of a programming language (`os.getenv`,
`subprocess.run(cmd, shell=False)`, `SameSite=Lax`), read by Python's own parser, and what refuses one.

The screen (`core.screen`) reads a span as a shell command line unless this module reads it as code: then the calls
that run a string, the links its strings and comments name and the paths outside the project in its strings are
what it judges, not words a shell would take for programs.
"""

from __future__ import annotations

import ast
import itertools
import json
import shlex
import tomllib
from collections.abc import Iterator

import re2
import yaml

from core.allowlist import Refusal, Vouched, command_refusals, link_refusals, path_refusal
from core.dockerfile import DOCKERFILE_FENCES, read_dockerfile
from core.fenced_code import read_block
from core.links import bare_hosts, find_links
from core.program_calls import clip

__all__ = ["SYSTEM_ROOTS", "code_expression", "code_refusals", "fenced_refusals"]

# The top folders of a file system (Linux, macOS): a path in a sentence that starts with one of them is a file
# outside the project; `/api/users` or `/health` is a route.
SYSTEM_ROOTS = frozenset(
    "bin boot dev etc home lib lib32 lib64 media mnt opt proc root run sbin srv sys tmp usr var Users Library System"
    " Applications Volumes private cores nix snap Network".split()
)


# What a script is named with: a dotted word ending in one of these is a file the shell runs (`deploy.sh`), not a
# qualified name of code (`subprocess.run`).
_SCRIPT_SUFFIXES = frozenset(
    "sh bash zsh fish py pyw rb pl pm php js mjs cjs ts mts cts jsx tsx lua r exe bat cmd ps1 psm1 jar bin app out"
    " so dll dylib".split()
)
# An environment variable's name as the shell's conventions write it: capitals, digits, underscores.
_ENVIRONMENT_NAME = re2.compile(r"^[A-Z_][A-Z0-9_]*$")


def code_expression(span: str) -> ast.Module | None:
    """The parse of a span that is an expression or a statement of code rather than a shell command line, as
    Python's own parser reads it (whose expressions are those of most languages for these shapes): each statement is a
    qualified name (`os.getenv`), a call (`subprocess.run(cmd)`), a subscript, or an assignment of one
    (`__all__ = [...]`, `SameSite=Lax`); never a bare word (`ls`), an operator between words (`rm -rf` is `rm - rf`
    to Python), an import (`import` is also a program), a script named by its file (`deploy.sh`) nor a variable the
    shell's conventions would name (`NODE_TLS_REJECT_UNAUTHORIZED=0`, read as an environment setting). None for
    any other span."""
    span = _decorated(span)
    if not any(mark in span for mark in ".([="):  # a name alone, or words: what no code shape has
        return None
    try:
        tree = ast.parse(span, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body or not _written_tight(span, tree):
        return None
    for statement in tree.body:
        if isinstance(statement, ast.Expr):
            if not _qualified(statement.value):
                return None
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if not all(isinstance(t, (ast.Name, ast.Attribute, ast.Subscript)) for t in targets):
                return None
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any(_ENVIRONMENT_NAME.match(n) and not n.startswith("__") for n in names):
                return None
        else:
            return None
    return tree


def _decorated(span: str) -> str:
    """A decorator's expression (`@app.route("/x")` is `app.route("/x")`); any other span as it is."""
    return span[1:] if span.startswith("@") and "\n" not in span else span


def _written_tight(span: str, tree: ast.Module) -> bool:
    """True when every attribute, call and subscript in `tree` is written as code writes it, with nothing between
    the name and its `.`, `(` or `[`: Python reads `cat .npmrc` as `cat.npmrc` and `ls [ab]` as a subscript, the shell
    as a program and its argument."""
    lines = span.splitlines(keepends=True)
    starts = list(itertools.accumulate((len(line) for line in lines), initial=0))
    for node in ast.walk(tree):
        inner = node.value if isinstance(node, (ast.Attribute, ast.Subscript)) else getattr(node, "func", None)
        if not isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)) or inner is None:
            continue
        if inner.end_lineno is None or inner.end_col_offset is None:
            return False
        at = starts[inner.end_lineno - 1] + _offset(lines[inner.end_lineno - 1], inner.end_col_offset)
        mark = "." if isinstance(node, ast.Attribute) else "[" if isinstance(node, ast.Subscript) else "("
        if span[at : at + 1] != mark or (mark == "." and not span[at + 1 : at + 2].isidentifier()):
            return False
    return True


def _offset(line: str, utf8_offset: int) -> int:
    """The character offset in `line` of `ast`'s byte offset (its column offsets count UTF-8 bytes)."""
    return len(line.encode("utf-8")[:utf8_offset].decode("utf-8", "ignore"))


def _qualified(node: ast.expr) -> bool:
    """True for a dotted name of code (not a script's file name), a call of one or of a name, or a subscript."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    if isinstance(node, ast.Subscript):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr.lower() not in _SCRIPT_SUFFIXES
    return False


# Calls that run a string as code or as a shell's command line, or build any object a string names (a deserialiser
# that runs what its input says): the code a lesson writes runs whatever reaches them, as `eval` in the shell does.
_RUNS_A_STRING = frozenset(
    "eval exec execfile compile __import__ system popen spawnl spawnlp spawnv spawnvp startfile".split()
)
_DESERIALISERS = frozenset(
    "pickle.load pickle.loads cpickle.load cpickle.loads marshal.load marshal.loads yaml.load yaml.unsafe_load"
    " yaml.full_load dill.load dill.loads jsonpickle.decode shelve.open".split()
)


# Calls that run a query their first argument writes: a query built from values (an f-string, `%`, `+`,
# `.format`) runs whatever a value says (an injection); one with placeholders and its values apart is safe.
_RUNS_A_QUERY = frozenset("execute executemany executescript raw extra text query run_sql".split())


def _built_from_values(node: ast.expr) -> bool:
    """True for a string built from values at run time: an f-string with a value in it, `"..." % x`, `"..." + x`,
    `"...".format(x)`."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        sides = (node.left, node.right)
        return any(isinstance(n, (ast.Constant, ast.JoinedStr)) for n in sides) and not all(
            isinstance(n, ast.Constant) for n in sides
        )
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"


# Calls that start a program: the program and its arguments are their first argument (a list of words, or a command
# line), judged as the allow-list judges a command; one built at run time runs whatever it is handed.
_LAUNCHERS = {
    "subprocess": frozenset("run call check_call check_output popen getoutput getstatusoutput".split()),
    "asyncio": frozenset("create_subprocess_exec create_subprocess_shell".split()),
    "pexpect": frozenset("spawn run".split()),
    "os": frozenset(
        "execv execve execvp execvpe execl execle execlp execlpe spawnv spawnve spawnvp spawnvpe spawnl spawnle"
        " spawnlp spawnlpe posix_spawn posix_spawnp".split()
    ),
}


def _launched(name: str, node: ast.Call) -> str | None:
    """The command line a call that starts a program runs (`subprocess.run(["rm", "-rf", "x"])`: `rm -rf x`), ""
    when it is built at run time, or None when the call starts no program."""
    module, _, function = name.rpartition(".")
    if function not in _LAUNCHERS.get(module.rsplit(".", 1)[-1], ()):
        return None
    if module.rsplit(".", 1)[-1] == "os":
        return ""  # the process replaced or spawned by path and mode: read as handed at run time, held
    first = node.args[0] if node.args else None
    if function == "create_subprocess_exec":  # its words are its arguments
        first = ast.List(elts=list(node.args), ctx=ast.Load())
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    if isinstance(first, ast.List | ast.Tuple) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts
    ):
        return shlex.join(str(e.value) for e in first.elts if isinstance(e, ast.Constant))
    return ""


def _called(node: ast.Call) -> str:
    """The dotted name a call calls (`os.system`), or "" when it calls no name."""
    return _dotted(node.func)


def _dotted(func: ast.expr) -> str:
    """The dotted name an expression is (`os.system`), or "" when it is none."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def code_refusals(span: str, tree: ast.Module, vouched: Vouched) -> list[Refusal]:
    """What refuses code that is no command (`code_expression`): a call that runs a string (`eval`, `os.system`,
    `pickle.loads`), the links its strings and comments name (a dotted name of code, `subprocess.run`, is no host),
    and a string in it that is a path outside the project (`open("/etc/passwd")`). What it turns off is the second
    line's to read."""
    found: list[Refusal] = []
    for node in ast.walk(tree):
        # a call, or the function named to be called (`pickle.loads`, "deserialise with it")
        name = _called(node).lower() if isinstance(node, ast.Call) else ""
        name = _dotted(node).lower() if isinstance(node, ast.Attribute) and not name else name
        if name and (name.rsplit(".", 1)[-1] in _RUNS_A_STRING or name in _DESERIALISERS):
            found.append(Refusal("inline_code", f"`{clip(name, 40)}(...)` runs whatever string reaches it"))
            break
        launched = _launched(name, node) if name and isinstance(node, ast.Call) else None
        if launched == "":
            found.append(Refusal("inline_code", f"`{clip(name, 40)}(...)` starts a program it is handed at run time"))
            break
        if launched:
            found += command_refusals(launched, vouched)
        if name and name.rsplit(".", 1)[-1] in _RUNS_A_QUERY and isinstance(node, ast.Call) and node.args:
            if _built_from_values(node.args[0]):
                found.append(Refusal("inline_code", f"`{clip(name, 40)}(...)` runs a query built from values"))
                break
    strings = [line.split("#", 1)[1] for line in span.splitlines() if "#" in line]
    strings += [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return found + _strings_refusals(strings, vouched)


def _strings_refusals(strings: list[str], vouched: Vouched) -> list[Refusal]:
    """What the strings and comments of code refuse: the links they name, and a path outside the project (a route,
    `/api/users`, is none)."""
    found: list[Refusal] = []
    for string in strings:
        found += link_refusals([*find_links(string), *bare_hosts(string, code=True)], vouched)
        route = string.startswith("/") and string[1:].split("/", 1)[0] not in SYSTEM_ROOTS  # `/api/users`, a route
        refused = path_refusal(string, mention=True) if string[:1] in ("/", "~", ".") and not route else None
        found += [refused] if refused is not None else []
    return found


# A fenced block whose info string names a language read here by that language's own parser: Python (`ast`), the
# data formats (JSON, TOML, YAML: values, never run), SQL that only reads, Go, TypeScript/JavaScript and Rust
# (`core.fenced_code`) and a Dockerfile (`core.dockerfile`). Any other language, or a Python or data block its
# parser does not read, is held as before (a command line to the shell).
_PYTHON_FENCES = frozenset("python py python3 pycon".split())
_DATA_FENCES = frozenset("json jsonc json5 toml yaml yml".split())
_SQL_FENCES = frozenset("sql postgres postgresql psql mysql sqlite".split())
# Keys whose value a tool runs as a command line (CI steps, compose services, package.json scripts, hooks): judged
# as the allow-list judges a command; `uses` names an action run in CI, admitted from GitHub's own owners only.
_RUN_KEYS = frozenset(
    "run script scripts before_script after_script command commands cmd entrypoint entry exec shell hooks".split()
)
_TRUSTED_ACTIONS = ("actions/", "github/", "./")
# SQL that only reads: each statement opens with one of these, and no word of it writes or changes the schema.
_SQL_READS = frozenset("select with explain show describe values table".split())
_SQL_WRITES = frozenset(
    "insert update delete merge upsert drop truncate alter create grant revoke copy call do exec execute attach"
    " detach vacuum pragma load install replace rename set reset lock".split()
)
_SQL_NOISE = re2.compile(r"--[^\n]*|/\*(?s:.)*?\*/|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_SQL_WORD = re2.compile(r"[A-Za-z_]+")


def fenced_refusals(language: str, body: str, vouched: Vouched) -> list[Refusal] | None:
    """What refuses a fenced block in `language`, read by that language's parser; None when no parser here reads
    it (then it is a command line, as any other span)."""
    language = language.lower()
    if language in _PYTHON_FENCES:
        try:
            tree = ast.parse(body, mode="exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return code_refusals(body, tree, vouched)
    if language in _DATA_FENCES:
        data = _data(language, body)
        if data is None:
            return None
        # YAML's anchors can make a short text a tree of many leaves, or one with no end: walk a bounded part
        values = list(itertools.islice(_values(data), _MOST_VALUES + 1))
        if len(values) > _MOST_VALUES or any(depth > _DEEPEST for *_, depth in values):
            return None
        return _data_refusals(values, vouched)
    if language in _SQL_FENCES:
        return _sql_refusals(body)
    # Go, TypeScript/JavaScript, Rust (tree-sitter's grammars), a Dockerfile (its own line reader)
    reading = read_dockerfile(body, vouched) if language in DOCKERFILE_FENCES else read_block(language, body, vouched)
    if reading is not None:
        return reading.refusals + _strings_refusals(list(dict.fromkeys(reading.strings)), vouched)  # each once
    return None


def _data(language: str, body: str) -> object | None:
    """`body` as its format's parser reads it (YAML's safe loader: no tag builds an object), or None."""
    try:
        if language.startswith("json"):
            return json.loads(body)
        if language == "toml":
            return tomllib.loads(body)
        return yaml.safe_load(body)
    except (ValueError, yaml.YAMLError, RecursionError):
        return None


# A text of at most `MAX_SCREENED` characters holds no more values than this, nor nests deeper, but through YAML's
# aliases (one list named again and again, or inside itself).
_MOST_VALUES = 2000
_DEEPEST = 64


def _values(
    data: object, path: tuple[str, ...] = (), run: bool = False, depth: int = 0
) -> Iterator[tuple[tuple[str, ...], str, bool, int]]:
    """Each value of `data` with the keys above it, whether a key above it runs it (a list of words under one is a
    command's words: `command: ["npm", "start"]`) and how deep it sits: a string as written, any other scalar as
    JSON writes it (`false`, `0`, `null`), an empty table or list as "" (its key is still a setting: `"deny": []`);
    a level past `_DEEPEST` is yielded empty and not entered."""
    key = path[-1] if path else ""
    if depth > _DEEPEST:
        yield path, "", run, depth
    elif isinstance(data, dict) and data:
        for name, value in data.items():
            yield from _values(value, (*path, str(name)), run or str(name).lower() in _RUN_KEYS, depth + 1)
    elif isinstance(data, list) and data:
        if run and all(isinstance(v, str) for v in data) and key.lower() in _RUN_KEYS:
            yield path, " ".join(data), run, depth
            return
        for value in data:
            yield from _values(value, path, run, depth + 1)
    elif isinstance(data, str):
        yield path, data, run, depth
    else:
        yield path, "" if isinstance(data, dict | list) else json.dumps(data, default=str), run, depth


# The words of a key that make its value a setting of a safeguard or of the agent's own powers, held for review
# whatever the value says (`"sandbox": {"enabled": false}`, `disableAllHooks: true`, `approval_policy = "never"`,
# `permissions.allow: ["Bash(*)"]`): what a data block may set unreviewed is everything else. A key's words are
# its parts between `_`, `-`, `.` and a capital (`disableAllHooks`: disable, all, hooks), each read by its start.
_SAFEGUARD_KEY_STARTS = (
    "permission", "allow", "deny", "approv", "sandbox", "hook", "trust", "polic", "privilege", "principal",
    "verif", "unverif", "ssl", "tls", "cert", "csrf", "xsrf", "cors", "origin", "secur", "insecure", "auth", "sign",
    "integrity", "protect", "sanitiz", "escap", "hsts", "https", "httponly", "samesite", "skip", "disabl", "bypass",
    "ignor", "exempt", "unsafe", "danger", "permissive", "network", "mcp", "helper", "secret", "token", "password",
    "passwd", "credential", "private", "continue", "fail", "threshold",
)  # fmt: skip
_KEY_PART = re2.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?:[a-z0-9]+)?")


def _safeguard_key(path: tuple[str, ...]) -> str | None:
    """The first key of `path` whose words name a safeguard or the agent's powers (`_SAFEGUARD_KEY_STARTS`); the
    keys below one that runs its value name commands (`"scripts": {"lint": ...}`), not settings."""
    for key in path:
        if any(part.lower().startswith(_SAFEGUARD_KEY_STARTS) for part in _KEY_PART.findall(key)):
            return key
        if key.lower() in _RUN_KEYS:
            break
    return None


def _data_refusals(values: list[tuple[tuple[str, ...], str, bool, int]], vouched: Vouched) -> list[Refusal]:
    """What refuses data (its `_values`): a setting under a key that names a safeguard or the agent's powers; a
    value a key runs, judged as a command; an action from outside GitHub's own owners; the links and outside paths
    its strings name."""
    found: list[Refusal] = []
    for path, value, run, _depth in values:
        key = path[-1] if path else ""
        guarded = _safeguard_key(path)
        if guarded is not None:
            found.append(Refusal("bypass", f"`{clip('.'.join(path), 60)}` sets `{clip(guarded, 40)}`, a safeguard"))
            continue
        if run:
            found += command_refusals(value, vouched)
        elif key.lower() == "uses" and not value.startswith(_TRUSTED_ACTIONS):
            found.append(Refusal("program", f"`{clip(value, 60)}` runs an action no one vouches for"))
        found += link_refusals([*find_links(value), *bare_hosts(value, code=True)], vouched)
        refused = path_refusal(value, mention=True) if value[:1] in ("/", "~", ".") else None
        found += [refused] if refused is not None else []
    return found


def _sql_refusals(body: str) -> list[Refusal]:
    """What refuses SQL: any statement that does more than read."""
    plain = _SQL_NOISE.sub(" ", body)
    for statement in plain.split(";"):
        words = [w.lower() for w in _SQL_WORD.findall(statement)]
        if not words:
            continue
        if words[0] not in _SQL_READS or _SQL_WRITES.intersection(words):
            return [Refusal("program", f"`{clip(' '.join(statement.split()), 60)}` is SQL that does more than read")]
    return []
