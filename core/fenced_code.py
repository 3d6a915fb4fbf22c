"""A fenced block of Go, TypeScript/JavaScript or Rust, read by its language's own parser (tree-sitter's grammars):
what in it starts a program, runs a string as code or runs a query built from values, and the strings and comments
it writes.

Allow, don't deny: a block is read only when its parser reads it whole, with no error node; a call that starts a
program is judged as the command its constant words make (escapes read as the characters they write), and one whose
words are built at run time is held, as is any launcher named without being called (an alias runs whatever it is
later handed); a name its API's authors give to a safeguard switched off (`InsecureSkipVerify`, `danger_...`,
`SslVerifyMode::NONE`) waits for review unless set false. The strings and comments are returned to be read for
links and outside paths by the caller (`core.code_spans`), as a Python block's are.
"""

from __future__ import annotations

import importlib
import shlex
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Language, Node, Parser

from core.allowlist import Refusal, Vouched, command_refusals
from core.program_calls import clip

__all__ = ["FENCED_LANGUAGES", "Reading", "read_block"]

# Fence info strings, by the grammar that reads them.
FENCED_LANGUAGES = {
    **dict.fromkeys(("go", "golang"), "go"),
    **dict.fromkeys(("ts", "typescript", "mts", "cts"), "typescript"),
    "tsx": "tsx",
    **dict.fromkeys(("js", "javascript", "jsx", "mjs", "cjs", "node", "nodejs"), "javascript"),
    **dict.fromkeys(("rust", "rs"), "rust"),
}


_NAMES = {"go": "Go", "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TSX", "rust": "Rust"}


# Each grammar's module and the function in it that gives its language.
_GRAMMARS = {
    "go": ("tree_sitter_go", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "rust": ("tree_sitter_rust", "language"),
}


@cache
def _parser(grammar: str) -> Parser:
    """The parser of one grammar, imported and built once, when a block first needs it (a screen that meets no such
    block loads none of them)."""
    module, function = _GRAMMARS[grammar]
    return Parser(Language(getattr(importlib.import_module(module), function)()))


@dataclass
class Reading:
    """What a block refuses by what it runs, and the strings and comments it writes (for links and paths)."""

    refusals: list[Refusal] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)


def read_block(language: str, body: str, vouched: Vouched) -> Reading | None:
    """The reading of a fenced block in `language` (a fence's info string), or None when no grammar here reads that
    language. A block its parser finds an error in is refused: it is no code of that language, and is not read as
    any other."""
    grammar = FENCED_LANGUAGES.get(language.lower())
    if grammar is None:
        return None
    source = (body + "\n").encode("utf-8")  # Go ends a statement at a newline
    try:
        root = _parser(grammar).parse(source).root_node
    except (ValueError, RecursionError, MemoryError):
        root = None
    if root is None or root.has_error:  # not code of that language: held, never read as another (shell, Python)
        name = language.lower()
        return Reading(refusals=[Refusal("syntax", f"the `{name}` block does not parse as {_NAMES[grammar]}")])
    nodes, parents = _walk(root)
    bindings = [node for node in nodes if node.type in _BINDING_TYPES]
    constants = _constants(bindings)
    built = _built_names(bindings)
    reading = Reading()
    if grammar == "go":
        _read_go(nodes, constants, built, vouched, reading)
    elif grammar == "rust":
        _read_rust(nodes, parents, constants, built, vouched, reading)
    else:
        _read_script(nodes, parents, constants, built, vouched, reading)
    reading.strings += _comments(nodes)
    if any(word in body.lower() for word in ("danger", "insecure", "verify")):  # one pass the fewest blocks need
        reading.refusals += _safeguards_off(nodes, parents)
    return reading


def _walk(root: Node) -> tuple[list[Node], dict[int, Node]]:
    """Every node under `root` in source order, and each one's parent by its id (tree-sitter finds a node's parent
    from the root down, each time: asked in a loop, that is quadratic). No recursion: a block nests as it likes."""
    nodes: list[Node] = []
    parents: dict[int, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        children = node.children
        for child in children:
            parents[child.id] = node
        stack.extend(reversed(children))
    return nodes, parents


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


_STRING_TYPES = frozenset(
    "string template_string interpreted_string_literal raw_string_literal string_literal".split()
)  # fmt: skip
_FRAGMENT_TYPES = frozenset(
    "string_fragment interpreted_string_literal_content raw_string_literal_content string_content escape_sequence"
    " unescaped_single_string_fragment unescaped_double_string_fragment".split()
)


def _string_value(node: Node | None, constants: dict[str, str] | None = None) -> str | None:
    """The value of a string written whole (a literal, a template with nothing substituted, a name bound once to
    one), or None for anything built at run time."""
    while node is not None and node.type in ("parenthesized_expression", "reference_expression"):
        node = node.named_children[0] if node.named_child_count == 1 else None
    if node is None:
        return None
    if node.type in ("identifier",) and constants is not None:
        return constants.get(_text(node))
    if node.type not in _STRING_TYPES:
        return None
    if any(child.type == "template_substitution" for child in node.children):
        return None
    fragments = [child for child in node.children if child.type in _FRAGMENT_TYPES]
    return "".join(_unescape(_text(f)) if f.type == "escape_sequence" else _text(f) for f in fragments)


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v", "a": "\a"}


def _unescape(sequence: str) -> str:
    """The character an escape writes (`\\x7c` is `|`, `\\u{2e}` and `\\u002e` are `.`, Go's `\\174` is `|`): what
    runs is the string's value, not how it is spelled. One not understood is kept as written."""
    body = sequence[1:]
    try:
        if body[:2] == "u{" and body.endswith("}"):
            return chr(int(body[2:-1], 16))
        if body[:1] in ("x", "u", "U") and len(body) > 1:
            return chr(int(body[1:], 16))
        if len(body) == 3 and all(c in "01234567" for c in body):
            return chr(int(body, 8))
    except (ValueError, OverflowError):
        return sequence
    return _SIMPLE_ESCAPES.get(body, body) if len(body) == 1 else sequence


_BINDING_TYPES = frozenset(
    "variable_declarator const_spec var_spec short_var_declaration assignment_statement let_declaration const_item"
    " static_item assignment_expression augmented_assignment_expression compound_assignment_expr".split()
)


def _binding(node: Node) -> tuple[Node | None, Node | None]:
    """The name a declaration binds and the value it binds it to (`const q = ...`, `q := ...`, `let q = ...`), the
    name alone when it is assigned again or one of several at once (then no value counts), or (None, None)."""
    if node.type == "variable_declarator":  # JavaScript, TypeScript
        return node.child_by_field_name("name"), node.child_by_field_name("value")
    if node.type in ("const_spec", "var_spec", "short_var_declaration", "assignment_statement"):  # Go
        left = node.child_by_field_name("name") or node.child_by_field_name("left")
        right = node.child_by_field_name("value") or node.child_by_field_name("right")
        names = left.named_children if left is not None and left.type == "expression_list" else [left]
        values = right.named_children if right is not None and right.type == "expression_list" else [right]
        return (names[0], values[0]) if len(names) == 1 and len(values) == 1 else (names[0], None)
    if node.type in ("let_declaration", "const_item", "static_item"):  # Rust
        return node.child_by_field_name("pattern") or node.child_by_field_name("name"), node.child_by_field_name(
            "value"
        )
    if node.type in ("assignment_expression", "augmented_assignment_expression", "compound_assignment_expr"):
        return node.child_by_field_name("left"), None  # assigned again: not constant
    return None, None


def _constants(nodes: list[Node]) -> dict[str, str]:
    """The names bound once in the block, each to a string written whole (`const q = "..."`, `q := "..."`,
    `let q = "..."`): a query or a command named by one is as constant as one written in place."""
    bound: dict[str, list[str | None]] = {}
    for node in nodes:
        if node.type in ("const_spec", "var_spec", "short_var_declaration", "assignment_statement"):
            left = node.child_by_field_name("name") or node.child_by_field_name("left")
            if left is not None and left.type == "expression_list" and left.named_child_count > 1:
                for each in left.named_children:  # several at once: none of them counts as constant
                    bound.setdefault(_text(each), []).append(None)
                continue
        name, value = _binding(node)
        if name is not None and name.type == "identifier":
            bound.setdefault(_text(name), []).append(_string_value(value))
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


_DOTTED_PARTS = {
    "member_expression": ("object", "property"),
    "selector_expression": ("operand", "field"),
    "field_expression": ("value", "field"),
    "scoped_identifier": ("path", "name"),
}
_NAME_TYPES = frozenset("identifier property_identifier field_identifier package_identifier type_identifier".split())


def _dotted(node: Node | None) -> str:
    """The dotted name an expression is (`exec.Command`, `child_process.exec`, `std.process.Command.new`), with ""
    for a part that is no name (`require("x").exec` is `.exec`). Walked, not recursed: a chain may be long."""
    parts: list[str] = []
    while node is not None:
        if node.type in _DOTTED_PARTS:
            left, right = _DOTTED_PARTS[node.type]
            parts.append(_text(node.child_by_field_name(right)))
            node = node.child_by_field_name(left)
        elif node.type in ("non_null_expression", "parenthesized_expression") and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "generic_function":  # `sqlx::query_as::<_, User>`
            node = node.child_by_field_name("function")
        else:
            parts.append(_text(node) if node.type in _NAME_TYPES else "")
            break
    return ".".join(reversed(parts))


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return []
    return [a for a in arguments.named_children if a.type not in ("comment", "line_comment", "block_comment")]


def _words(nodes: list[Node], constants: dict[str, str]) -> list[str] | None:
    """The words a list of arguments writes (strings, arrays of strings), or None when any is built at run time."""
    words: list[str] = []
    for node in nodes:
        items = node.named_children if node.type in ("array", "array_expression") else [node]
        if node.type == "reference_expression" and node.named_child_count == 1:
            return _words(node.named_children, constants)
        if node.type == "macro_invocation" and _text(node.child_by_field_name("macro")) == "vec":
            tree = next((c for c in node.named_children if c.type == "token_tree"), None)
            items = [c for c in tree.named_children] if tree is not None else []
        for item in items:
            value = _string_value(item, constants)
            if value is None:
                return None
            words.append(value)
    return words


def _launch_refusals(name: str, command: str | None, vouched: Vouched) -> list[Refusal]:
    """The command a launcher runs, judged by the allow-list; held when its words are built at run time."""
    if command is None or not command.strip():
        return [Refusal("inline_code", f"`{clip(name, 40)}(...)` starts a program it is handed at run time")]
    return command_refusals(command, vouched)


def _runs_string(name: str) -> Refusal:
    return Refusal("inline_code", f"`{clip(name, 40)}(...)` runs whatever string reaches it")


# Calls that run the query their SQL argument writes, by names that only query (`db.QueryContext`, `pool.query`):
# admitted only with a query written whole (its values apart, as placeholders), or named by one; and names some
# query with and other code uses too (`execute`, a template's `Execute`): held when the query is built from values
# (`+`, a template, `fmt.Sprintf`, `format!`, or a name bound to one of those in the block).
_QUERIES = frozenset(
    "query querycontext queryrow queryrowcontext queryx queryxcontext queryrowx execcontext namedexec mustexec"
    " $queryrawunsafe $executerawunsafe query_as query_scalar".split()
)
_MAYBE_QUERIES = frozenset("execute executemany prepare preparecontext raw unsafe".split())
_FORMATS = frozenset("sprintf format concat join".split())


def _built(node: Node | None, built: set[str]) -> bool:
    """True for a string built from values at run time: `"..." + x`, a template with a value in it, a formatting
    call (`fmt.Sprintf`, `format!`), or a name the block binds to one of those."""
    while node is not None and node.type in ("parenthesized_expression", "reference_expression"):
        node = node.named_children[0] if node.named_child_count == 1 else None
    if node is None:
        return False
    if node.type == "identifier":
        return _text(node) in built
    if node.type == "binary_expression":
        return any(c.type in _STRING_TYPES or _built(c, built) for c in node.named_children)
    if node.type == "template_string":
        return any(child.type == "template_substitution" for child in node.children)
    if node.type == "call_expression":
        return _dotted(node.child_by_field_name("function")).rsplit(".", 1)[-1].lower() in _FORMATS
    return node.type == "macro_invocation" and _text(node.child_by_field_name("macro")) == "format"


def _built_names(nodes: list[Node]) -> set[str]:
    """The names the block binds to a string built from values (`const q = "..." + name`, `q := fmt.Sprintf(...)`)."""
    built: set[str] = set()
    for _ in range(2):  # a name built from a name built from values
        for node in nodes:
            name, value = _binding(node)
            if name is not None and name.type == "identifier" and _built(value, built):
                built.add(_text(name))
    return built


def _query_refusals(
    name: str, call: Node, constants: dict[str, str], built: set[str], *, strict: bool
) -> list[Refusal]:
    """A query call whose SQL (its first argument, or the one after a context) is built from values, or (`strict`,
    a name that only queries) not written whole."""
    arguments = _arguments(call)
    if name.rsplit(".", 1)[-1].lower().endswith("context") and arguments:
        arguments = arguments[1:]
    if not arguments:
        return []
    first = arguments[0]
    if _built(first, built):
        return [Refusal("inline_code", f"`{clip(name, 40)}(...)` runs a query built from values")]
    if not strict or _string_value(first, constants) is not None:
        return []
    if first.type == "call_expression" and _text(first.child_by_field_name("function")) == "sql":
        return []  # a tagged template (`sql`...``) binds what it substitutes as values
    if first.type == "object" and _string_value(_object_value(first, "text"), constants) is not None:
        return []  # `{ text: "...", values: [...] }`
    return [Refusal("inline_code", f"`{clip(name, 40)}(...)` runs a query not written whole")]


# --- Go ------------------------------------------------------------------------------------------------------------

# Calls that start a process or load code, held whatever they are handed (a process replaced, a plugin loaded).
_GO_HELD = frozenset(
    "os.StartProcess syscall.Exec syscall.ForkExec syscall.StartProcess unix.Exec unix.ForkExec plugin.Open".split()
)
_GO_COMMANDS = frozenset(("Command", "CommandContext"))
_GO_FIELDS = _GO_COMMANDS | {name.rsplit(".", 1)[-1] for name in _GO_HELD}


def _read_go(nodes: list[Node], constants: dict[str, str], built: set[str], vouched: Vouched, reading: Reading) -> None:
    execs = {"exec"}  # the names `os/exec` is imported under
    imported: set[int] = set()
    for node in nodes:
        if node.type == "import_spec":
            path, alias = node.child_by_field_name("path"), node.child_by_field_name("name")
            imported.add(path.id if path is not None else -1)
            if _string_value(path) == "os/exec" and alias is not None:
                execs.add(_text(alias))
                if _text(alias) in (".", "_"):  # `Command` called bare, or started where it cannot be read
                    reading.refusals.append(
                        Refusal("inline_code", f'`import {_text(alias)} "os/exec"` hides its launchers')
                    )
            if _string_value(path) == "C":  # cgo: the comment above it is C code, compiled in; not read here
                reading.refusals.append(Refusal("inline_code", 'a Go block that imports "C" builds C code it holds'))
    called = {f.id for c in nodes if c.type == "call_expression" and (f := c.child_by_field_name("function"))}
    for node in nodes:
        if node.type == "comment" and _text(node).startswith("//go:generate"):  # `go generate` runs it
            reading.refusals += _launch_refusals("go:generate", _text(node).removeprefix("//go:generate"), vouched)
        elif (
            node.type == "selector_expression"
            and _text(node.child_by_field_name("field")) in _GO_FIELDS
            and getattr(node.child_by_field_name("operand"), "type", "") == "identifier"  # a package's function
        ):
            name = _dotted(node)
            package, _, function = name.rpartition(".")
            launcher = (package in execs and function in _GO_COMMANDS) or name in _GO_HELD
            if launcher and node.id not in called:
                reading.refusals.append(Refusal("inline_code", f"`{clip(name, 40)}` is named to start a program"))
        elif node.type == "assignment_statement" and any(
            _text(n.child_by_field_name("field")) in ("Args", "Path", "Env", "SysProcAttr")
            for n in getattr(node.child_by_field_name("left"), "named_children", [])
            if n.type == "selector_expression"
        ):  # `cmd.Args = append(cmd.Args, x)`: what a command runs, changed after it was built
            reading.refusals.append(Refusal("inline_code", f"`{clip(_text(node), 40)}` changes what a command runs"))
        elif node.type == "composite_literal" and _dotted(node.child_by_field_name("type")).split(".")[0] in execs:
            reading.refusals.append(Refusal("inline_code", "an `exec.Cmd` starts a program it is handed"))
        elif node.type == "qualified_type" and _dotted(node) in {f"{e}.Cmd" for e in execs}:
            pass  # a type named (`*exec.Cmd` in a signature): what starts it is judged where it is started
        elif node.type == "call_expression":
            name = _dotted(node.child_by_field_name("function"))
            package, _, function = name.rpartition(".")
            if package in execs and function in _GO_COMMANDS:
                arguments = _arguments(node)[1 if function == "CommandContext" else 0 :]
                words = _words(arguments, constants) if all(a.type != "variadic_argument" for a in arguments) else None
                reading.refusals += _launch_refusals(name, shlex.join(words) if words else None, vouched)
            elif name in _GO_HELD:
                reading.refusals += _launch_refusals(name, None, vouched)
            elif (function.lower() in _QUERIES or function == "Exec") and package not in execs:
                reading.refusals += _query_refusals(name, node, constants, built, strict=True)
            elif function.lower() in _MAYBE_QUERIES:  # `tmpl.Execute(w, data)` is a template's
                reading.refusals += _query_refusals(name, node, constants, built, strict=False)
        elif node.type in ("interpreted_string_literal", "raw_string_literal") and node.id not in imported:
            value = _string_value(node)
            reading.strings.append(value if value is not None else _text(node))


# --- JavaScript, TypeScript ----------------------------------------------------------------------------------------

# Calls that start a program: those handed a command line, and those handed a program and its words.
_JS_COMMAND_LINES = frozenset("exec execSync execaCommand execaCommandSync".split())
_JS_PROGRAMS = frozenset("spawn spawnSync execFile execFileSync execa execaSync fork".split())
# Calls that run a string as code, or load code a value names.
_JS_RUNS_A_STRING = frozenset(
    "eval Function runInNewContext runInThisContext runInContext compileFunction Script execScript".split()
)
_JS_LOADS_CODE = frozenset(("process.binding", "process.dlopen", "module._compile", "vm.Script"))
_JS_TIMERS = frozenset(("setTimeout", "setInterval", "setImmediate"))
_JS_NAMED = _JS_COMMAND_LINES | _JS_PROGRAMS | _JS_RUNS_A_STRING
# Where a launcher's name may stand without being called: imported or destructured under its own name.
_JS_BINDING_PARENTS = frozenset(
    "import_specifier shorthand_property_identifier_pattern object_pattern export_specifier".split()
)


def _regex_names(nodes: list[Node]) -> set[str]:
    """The names bound to a regular expression (`const re = /x/` or `new RegExp(...)`): their `.exec` matches text."""
    names = set()
    for node in nodes:
        if node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            regex = value is not None and (
                value.type == "regex"
                or (value.type == "new_expression" and _text(value.child_by_field_name("constructor")) == "RegExp")
            )
            if regex:
                names.add(_text(node.child_by_field_name("name")))
    return names


def _object_value(node: Node | None, key: str) -> Node | None:
    """The value under `key` in an object literal (`{ cmd: [...] }`), or None."""
    if node is None or node.type != "object":
        return None
    for pair in node.named_children:
        if pair.type == "pair" and _text(pair.child_by_field_name("key")).strip("\"'") == key:
            return pair.child_by_field_name("value")
    return None


def _js_launched(name: str, call: Node, constants: dict[str, str]) -> str | None:
    """The command line a JavaScript launcher call runs, or None when it is built at run time."""
    function = name.rsplit(".", 1)[-1]
    arguments = _arguments(call)
    first = arguments[0] if arguments else None
    if function in _JS_COMMAND_LINES:
        return _string_value(first, constants)
    if name.endswith(("Bun.spawn", "Bun.spawnSync")) or name == "Deno.run":
        cmd = _object_value(first, "cmd") if first is not None and first.type == "object" else first
        words = _words([cmd], constants) if cmd is not None else None
        return shlex.join(words) if words else None
    if name.endswith("Deno.Command"):
        args = _object_value(arguments[1] if len(arguments) > 1 else None, "args")
        words = _words([first, *([args] if args is not None else [])], constants) if first is not None else None
        return shlex.join(words) if words else None
    words = _words([a for a in arguments if a.type != "object"], constants)
    if not words:
        return None
    if function == "fork":
        words = ["node", *words]
    shell = any(_object_value(a, "shell") is not None for a in arguments if a.type == "object")
    return " ".join(words) if shell else shlex.join(words)


def _read_script(
    nodes: list[Node],
    parents: dict[int, Node],
    constants: dict[str, str],
    built: set[str],
    vouched: Vouched,
    reading: Reading,
) -> None:
    regexes = _regex_names(nodes)
    callees: set[int] = set()
    modules: set[int] = set()  # an import's or a require's module name: a package, not a link
    for node in nodes:
        if node.type in ("call_expression", "new_expression"):
            function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
            if function is not None:
                callees.add(function.id)
        source = node.child_by_field_name("source") if node.type in ("import_statement", "export_statement") else None
        if source is not None:
            modules.add(source.id)
    for node in nodes:
        if node.type in ("identifier", "property_identifier") and _text(node) in _JS_NAMED:
            reference = _named_at_rest(node, parents, callees)
            if reference is not None:
                reading.refusals.append(
                    Refusal("inline_code", f"`{clip(_text(reference), 40)}` is named to run code or a program")
                )
        elif node.type in ("call_expression", "new_expression"):
            function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
            reading.refusals += _js_call_refusals(node, function, constants, built, regexes, modules, vouched)
        elif node.type in ("string", "template_string") and (
            node.id not in modules or "://" in _text(node) or _text(node)[1:2] in ("/", "~")
        ):  # a module named by a package is no link; one by a URL or a path outside the project is read as one
            value = _string_value(node)
            if value is not None:
                reading.strings.append(value)
            else:  # a template with values in it: each written part on its own, as a Python f-string's
                reading.strings += [_text(c) for c in node.children if c.type == "string_fragment"]


# Where a name is declared rather than referred to: a key, a method or a field of one's own.
_JS_DECLARING = {
    "pair": "key",
    "method_definition": "name",
    "public_field_definition": "name",
    "function_declaration": "name",
    "property_signature": "name",
    "method_signature": "name",
    "abstract_method_signature": "name",
}


def _named_at_rest(node: Node, parents: dict[int, Node], callees: set[int]) -> Node | None:
    """The reference a launcher's or an evaluator's name makes when it is not called (`promisify(exec)`,
    `const run = eval`, `import { exec as run }`): an alias runs whatever it is later handed. None when the name is
    called, declared, or imported or destructured under its own name (its calls are judged where they are)."""
    parent = parents.get(node.id)
    if parent is None:
        return node
    if parent.type in _JS_DECLARING and parent.child_by_field_name(_JS_DECLARING[parent.type]) == node:
        return None
    if parent.type in _JS_BINDING_PARENTS and not (
        parent.type == "import_specifier" and parent.child_by_field_name("alias") is not None
    ):
        return None
    member = parent.type == "member_expression" and parent.child_by_field_name("property") == node
    reference = parent if member else node
    return None if reference.id in callees else reference


def _js_call_refusals(
    call: Node,
    function: Node | None,
    constants: dict[str, str],
    built: set[str],
    regexes: set[str],
    modules: set[int],
    vouched: Vouched,
) -> list[Refusal]:
    """What one call or `new` refuses: a launcher judged by the command it runs, a call that runs a string, a
    module loaded by a name built at run time, a query not written whole."""
    if function is None:
        return []
    if function.type in ("subscript_expression",):
        return [Refusal("inline_code", f"`{clip(_text(function), 40)}(...)` calls a name computed at run time")]
    name = _dotted(function)
    last = name.rsplit(".", 1)[-1]
    arguments = _arguments(call)
    first = arguments[0] if arguments else None
    if function.type == "import" or name == "require":  # a module named: a package, unless built at run time
        if first is not None and first.type == "string":
            modules.add(first.id)
            return []
        return [Refusal("inline_code", f"`{clip(name or 'import', 40)}(...)` loads code named at run time")]
    template = call.child_by_field_name("arguments")
    if (last == "$" or name.endswith("Bun.$")) and template is not None and template.type == "template_string":
        return _launch_refusals(name, _string_value(template, constants), vouched)  # run by a shell (zx, Bun)
    if last in _JS_RUNS_A_STRING or name in _JS_LOADS_CODE or last == "constructor":  # `{}.constructor.constructor`
        return [_runs_string(name)]
    if last in _JS_TIMERS and first is not None and first.type in ("string", "template_string"):
        return [_runs_string(name)]
    if last == "exec" and function.type == "member_expression":
        receiver = function.child_by_field_name("object")
        if receiver is not None and (receiver.type == "regex" or _text(receiver) in regexes):
            return []  # a regular expression matching text
    if last in ("exec", "fork") and function.type == "member_expression" and not arguments:
        return []  # handed nothing to run: a query's `.exec()`, `cluster.fork()` of the same script
    if last == "Worker" and any(_object_value(a, "eval") is not None for a in arguments):
        return [_runs_string(name)]  # `new Worker(code, { eval: true })`
    if (
        last in _JS_COMMAND_LINES
        or last in _JS_PROGRAMS
        or name.endswith(("Bun.spawn", "Bun.spawnSync", "Deno.Command"))
        or name == "Deno.run"
    ):
        return _launch_refusals(name, _js_launched(name, call, constants), vouched)
    if last.lower() in _QUERIES or last.lower() in _MAYBE_QUERIES:
        return _query_refusals(name, call, constants, built, strict=last.lower() in _QUERIES)
    return []


# --- Rust ----------------------------------------------------------------------------------------------------------

# Methods of a `Command` that add to the command it runs, or set how it runs without changing what.
_RUST_ADDS = frozenset(("arg", "args"))
_RUST_SETS = frozenset(
    "current_dir stdin stdout stderr env_clear env_remove kill_on_drop process_group uid gid".split()
)
# Calls that run a string by a shell or replace the process: held whatever they are handed.
_RUST_HIDDEN = frozenset(("Command", "system", "execv", "execvp", "execve"))
_RUST_HELD_LAST = frozenset("system execv execve execvp execvpe execl execle execlp fexecve popen".split())


def _read_rust(
    nodes: list[Node],
    parents: dict[int, Node],
    constants: dict[str, str],
    built: set[str],
    vouched: Vouched,
    reading: Reading,
) -> None:
    commands = {"std.process.Command", "process.Command", "tokio.process.Command", "async_process.Command"}
    uses = " ".join(_text(n) for n in nodes if n.type == "use_declaration")
    runs = any(n.type == "field_identifier" and _text(n) in ("status", "output", "spawn", "exec") for n in nodes)
    if "process::" in uses or "clap" not in uses or runs:  # the process `Command`, unless clap's builds a parser
        commands.add("Command")
    for node in nodes:
        if node.type == "use_as_clause" and _text(node.child_by_field_name("path")).endswith("process::Command"):
            commands.add(_text(node.child_by_field_name("alias")))
    bound: dict[str, list[str] | None] = {}  # a `let` name bound to a command, and its words
    starts: list[tuple[str, Node]] = []
    for node in nodes:
        if node.type == "call_expression":
            name = _dotted(node.child_by_field_name("function"))
            path, _, function = name.rpartition(".")
            if function == "new" and path in commands:
                starts.append((name, node))
            elif function.lower() in _QUERIES or function.lower() in _MAYBE_QUERIES:
                reading.refusals += _query_refusals(name, node, constants, built, strict=function.lower() in _QUERIES)
            elif function in _RUST_HELD_LAST and path.split(".")[0] in ("libc", "nix", "unistd", "std", ""):
                reading.refusals.append(
                    _runs_string(name)
                    if function == "system"
                    else Refusal("inline_code", f"`{clip(name, 40)}(...)` starts a program it is handed at run time")
                )
        elif node.type == "identifier" and _text(node) in _RUST_HIDDEN:
            holder = parents.get(node.id)
            if holder is not None and holder.type == "token_tree":  # a macro's tokens are not parsed as code here
                reading.refusals.append(Refusal("inline_code", f"a macro is handed `{_text(node)}`, not read here"))
        elif node.type in ("string_literal", "raw_string_literal"):
            value = _string_value(node)
            reading.strings.append(value if value is not None else _text(node))
    for name, start in starts:
        words = _words(_arguments(start), constants)
        top, words = _rust_chain(start, words, parents, constants)
        holder = parents.get(top.id)
        if holder is not None and holder.type == "let_declaration":
            pattern = holder.child_by_field_name("pattern")
            bound[_text(pattern).removeprefix("mut ").strip()] = words
        else:
            reading.refusals += _launch_refusals(name, shlex.join(words) if words else None, vouched)
    calls = [node for node in nodes if node.type == "call_expression"]
    for node in calls if bound else ():  # `cmd.arg("x")` on a bound command, in the order written
        callee = node.child_by_field_name("function")
        receiver = (
            callee.child_by_field_name("value") if callee is not None and callee.type == "field_expression" else None
        )
        if receiver is not None and receiver.type == "identifier" and _text(receiver) in bound:
            _, bound[_text(receiver)] = _rust_chain(receiver, bound[_text(receiver)], parents, constants)
    for owner, words in bound.items():
        reading.refusals += _launch_refusals(owner, shlex.join(words) if words else None, vouched)
    for node in calls if starts else ():  # an `.arg(...)` elsewhere handed words at run time may add to a command
        callee = node.child_by_field_name("function")
        if callee is not None and callee.type == "field_expression":
            method = _text(callee.child_by_field_name("field"))
            if method in _RUST_ADDS and _words(_arguments(node), constants) is None:
                reading.refusals += _launch_refusals(f".{method}", None, vouched)
            elif method in ("env", "envs"):
                reading.refusals.append(Refusal("environment", f"`.{method}(...)` sets what a program runs with"))


def _rust_chain(
    start: Node, words: list[str] | None, parents: dict[int, Node], constants: dict[str, str]
) -> tuple[Node, list[str] | None]:
    """The words a builder chain adds from `start` (`.arg("x").args(["y"])`), and the last node of the chain."""
    node = start
    while True:
        field = parents.get(node.id)
        call = parents.get(field.id) if field is not None else None
        if field is None or call is None or field.type != "field_expression" or call.type != "call_expression":
            break
        method = _text(field.child_by_field_name("field"))
        if method in _RUST_ADDS:
            added = _words(_arguments(call), constants)
            words = None if words is None or added is None else [*words, *added]
        elif method not in _RUST_SETS and method not in ("env", "envs"):
            break
        node = call
    while (above := parents.get(node.id)) is not None and above.type in ("try_expression", "reference_expression"):
        node = above
    return node, words


_NAME_NODES = frozenset("identifier field_identifier property_identifier shorthand_property_identifier".split())
_OFF_VALUES = frozenset(("false", "0", "False"))


def _safeguards_off(nodes: list[Node], parents: dict[int, Node]) -> list[Refusal]:
    """Names an API's authors give to what switches a safeguard off (`InsecureSkipVerify`,
    `danger_accept_invalid_hostnames`, rustls's `dangerous()`, `dangerouslySetInnerHTML`) and a peer left unverified
    (`SslVerifyMode::NONE`), unless the block sets them off (`: false`, `(false)`)."""
    found: list[Refusal] = []
    for node in nodes:
        name = _text(node) if node.type in _NAME_NODES else ""
        if node.type == "scoped_identifier" and "verify" in _text(node.child_by_field_name("path")).lower():
            name = "verify_none" if _text(node.child_by_field_name("name")) == "NONE" else ""
        elif name.upper() == "SSL_VERIFY_NONE":
            name = "verify_none"
        if not name.lower().startswith(("danger", "insecure", "verify_none")) or _set_off(node, parents):
            continue
        found.append(Refusal("bypass", f"`{clip(name, 40)}` is named by its authors as a safeguard switched off"))
    return found


def _set_off(node: Node, parents: dict[int, Node]) -> bool:
    """True when the block gives the name `false` or 0: a key's value, a field's, or a call's one argument."""
    above = parents.get(node.id)
    if above is not None and above.type == "literal_element":  # Go: `Key: value` in a composite literal
        above = parents.get(above.id)
    if above is not None and above.type in ("pair", "keyed_element", "field_initializer", "assignment_expression"):
        values = [c for c in above.named_children if c.id != node.id and node.id not in {d.id for d in c.children}]
        return bool(values) and _text(values[-1]) in _OFF_VALUES
    if above is not None and above.type in ("field_expression", "member_expression"):
        call = parents.get(above.id)
        if call is not None and call.type == "call_expression":
            arguments = _arguments(call)
            return len(arguments) == 1 and _text(arguments[0]) in _OFF_VALUES
    return False


def _comments(nodes: list[Node]) -> list[str]:
    """The text of each comment, without its marks."""
    found = []
    for node in nodes:
        if node.type in ("comment", "line_comment", "block_comment"):
            text = _text(node)
            found.append(text[2:-2] if text.startswith("/*") else text[2:])
    return found
