"""JavaScript code: what a fenced JavaScript or TypeScript block runs (`child_process` and its kin, zx's and Bun's `$`,
Deno's and Bun's launchers, `eval` and what else runs a string, a module loaded by a name built at run time, a query
built from values), a launcher named without being called (an alias runs whatever it is later handed), and the
strings it writes."""

from __future__ import annotations

import shlex

from tree_sitter import Node

from core.allowlist import Refusal, Vouched
from core.code_tree import (
    MAYBE_QUERIES,
    QUERIES,
    Reading,
    call_arguments,
    dotted_name,
    launch_refusals,
    node_text,
    object_value,
    query_refusals,
    runs_string,
    string_value,
    written_words,
)
from core.program_calls import clip

__all__ = ["read_javascript"]


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
                or (value.type == "new_expression" and node_text(value.child_by_field_name("constructor")) == "RegExp")
            )
            if regex:
                names.add(node_text(node.child_by_field_name("name")))
    return names


def _js_launched(name: str, call: Node, constants: dict[str, str]) -> str | None:
    """The command line a JavaScript launcher call runs, or None when it is built at run time."""
    function = name.rsplit(".", 1)[-1]
    arguments = call_arguments(call)
    first = arguments[0] if arguments else None
    if function in _JS_COMMAND_LINES:
        return string_value(first, constants)
    if name.endswith(("Bun.spawn", "Bun.spawnSync")) or name == "Deno.run":
        cmd = object_value(first, "cmd") if first is not None and first.type == "object" else first
        words = written_words([cmd], constants) if cmd is not None else None
        return shlex.join(words) if words else None
    if name.endswith("Deno.Command"):
        args = object_value(arguments[1] if len(arguments) > 1 else None, "args")
        words = written_words([first, *([args] if args is not None else [])], constants) if first is not None else None
        return shlex.join(words) if words else None
    words = written_words([a for a in arguments if a.type != "object"], constants)
    if not words:
        return None
    if function == "fork":
        words = ["node", *words]
    shell = any(object_value(a, "shell") is not None for a in arguments if a.type == "object")
    return " ".join(words) if shell else shlex.join(words)


def read_javascript(
    nodes: list[Node],
    parents: dict[int, Node],
    constants: dict[str, str],
    built: set[str],
    vouched: Vouched,
    reading: Reading,
) -> None:
    """Adds to `reading` what a JavaScript or TypeScript block's `nodes` run (each call and `new` judged, each
    launcher named without being called held) and the strings it writes, a module named by a package left out."""
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
        if node.type in ("identifier", "property_identifier") and node_text(node) in _JS_NAMED:
            reference = _named_at_rest(node, parents, callees)
            if reference is not None:
                reading.refusals.append(
                    Refusal("inline_code", f"`{clip(node_text(reference), 40)}` is named to run code or a program")
                )
        elif node.type in ("call_expression", "new_expression"):
            function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
            reading.refusals += _js_call_refusals(node, function, constants, built, regexes, modules, vouched)
        elif node.type in ("string", "template_string") and (
            node.id not in modules or "://" in node_text(node) or node_text(node)[1:2] in ("/", "~")
        ):  # a module named by a package is no link; one by a URL or a path outside the project is read as one
            value = string_value(node)
            if value is not None:
                reading.strings.append(value)
            else:  # a template with values in it: each written part on its own, as a Python f-string's
                reading.strings += [node_text(c) for c in node.children if c.type == "string_fragment"]


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
        return [Refusal("inline_code", f"`{clip(node_text(function), 40)}(...)` calls a name computed at run time")]
    name = dotted_name(function)
    last = name.rsplit(".", 1)[-1]
    arguments = call_arguments(call)
    first = arguments[0] if arguments else None
    if function.type == "import" or name == "require":  # a module named: a package, unless built at run time
        if first is not None and first.type == "string":
            modules.add(first.id)
            return []
        return [Refusal("inline_code", f"`{clip(name or 'import', 40)}(...)` loads code named at run time")]
    template = call.child_by_field_name("arguments")
    if (last == "$" or name.endswith("Bun.$")) and template is not None and template.type == "template_string":
        return launch_refusals(name, string_value(template, constants), vouched)  # run by a shell (zx, Bun)
    if last in _JS_RUNS_A_STRING or name in _JS_LOADS_CODE or last == "constructor":  # `{}.constructor.constructor`
        return [runs_string(name)]
    if last in _JS_TIMERS and first is not None and first.type in ("string", "template_string"):
        return [runs_string(name)]
    if last == "exec" and function.type == "member_expression":
        receiver = function.child_by_field_name("object")
        if receiver is not None and (receiver.type == "regex" or node_text(receiver) in regexes):
            return []  # a regular expression matching text
    if last in ("exec", "fork") and function.type == "member_expression" and not arguments:
        return []  # handed nothing to run: a query's `.exec()`, `cluster.fork()` of the same script
    if last == "Worker" and any(object_value(a, "eval") is not None for a in arguments):
        return [runs_string(name)]  # `new Worker(code, { eval: true })`
    if (
        last in _JS_COMMAND_LINES
        or last in _JS_PROGRAMS
        or name.endswith(("Bun.spawn", "Bun.spawnSync", "Deno.Command"))
        or name == "Deno.run"
    ):
        return launch_refusals(name, _js_launched(name, call, constants), vouched)
    if last.lower() in QUERIES or last.lower() in MAYBE_QUERIES:
        return query_refusals(name, call, constants, built, strict=last.lower() in QUERIES)
    return []
