"""Code trees: a fenced block's syntax tree (tree-sitter's) as the readers of each language read it. Strings
written whole (escapes read as the characters they write), names bound once to one, dotted names, the words a call
is handed, and what every language refuses alike: a launcher judged by the command its constant words make, a call
that runs a string, a query built from values, all gathered in one `Reading`."""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from core.allowlist import Refusal, Vouched, command_refusals
from core.program_calls import clip

__all__ = [
    "BINDING_TYPES",
    "MAYBE_QUERIES",
    "QUERIES",
    "Reading",
    "built_from_values",
    "built_names",
    "call_arguments",
    "constant_strings",
    "dotted_name",
    "launch_refusals",
    "node_text",
    "object_value",
    "query_refusals",
    "runs_string",
    "string_value",
    "written_words",
]


@dataclass
class Reading:
    """What a block refuses by what it runs, and the strings and comments it writes (for links and paths)."""

    refusals: list[Refusal] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)


def node_text(node: Node | None) -> str:
    """The source text of `node` ("" for none)."""
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


_STRING_TYPES = frozenset(
    "string template_string interpreted_string_literal raw_string_literal string_literal".split()
)  # fmt: skip
_FRAGMENT_TYPES = frozenset(
    "string_fragment interpreted_string_literal_content raw_string_literal_content string_content escape_sequence"
    " unescaped_single_string_fragment unescaped_double_string_fragment".split()
)


def string_value(node: Node | None, constants: dict[str, str] | None = None) -> str | None:
    """The value of a string written whole (a literal, a template with nothing substituted, a name bound once to
    one), or None for anything built at run time."""
    while node is not None and node.type in ("parenthesized_expression", "reference_expression"):
        node = node.named_children[0] if node.named_child_count == 1 else None
    if node is None:
        return None
    if node.type in ("identifier",) and constants is not None:
        return constants.get(node_text(node))
    if node.type not in _STRING_TYPES:
        return None
    if any(child.type == "template_substitution" for child in node.children):
        return None
    fragments = [child for child in node.children if child.type in _FRAGMENT_TYPES]
    return "".join(_unescape(node_text(f)) if f.type == "escape_sequence" else node_text(f) for f in fragments)


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


BINDING_TYPES = frozenset(
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


def constant_strings(nodes: list[Node]) -> dict[str, str]:
    """The names bound once in the block, each to a string written whole (`const q = "..."`, `q := "..."`,
    `let q = "..."`): a query or a command named by one is as constant as one written in place."""
    bound: dict[str, list[str | None]] = {}
    for node in nodes:
        if node.type in ("const_spec", "var_spec", "short_var_declaration", "assignment_statement"):
            left = node.child_by_field_name("name") or node.child_by_field_name("left")
            if left is not None and left.type == "expression_list" and left.named_child_count > 1:
                for each in left.named_children:  # several at once: none of them counts as constant
                    bound.setdefault(node_text(each), []).append(None)
                continue
        name, value = _binding(node)
        if name is not None and name.type == "identifier":
            bound.setdefault(node_text(name), []).append(string_value(value))
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


_DOTTED_PARTS = {
    "member_expression": ("object", "property"),
    "selector_expression": ("operand", "field"),
    "field_expression": ("value", "field"),
    "scoped_identifier": ("path", "name"),
}
_NAME_TYPES = frozenset("identifier property_identifier field_identifier package_identifier type_identifier".split())


def dotted_name(node: Node | None) -> str:
    """The dotted name an expression is (`exec.Command`, `child_process.exec`, `std.process.Command.new`), with ""
    for a part that is no name (`require("x").exec` is `.exec`). Walked, not recursed: a chain may be long."""
    parts: list[str] = []
    while node is not None:
        if node.type in _DOTTED_PARTS:
            left, right = _DOTTED_PARTS[node.type]
            parts.append(node_text(node.child_by_field_name(right)))
            node = node.child_by_field_name(left)
        elif node.type in ("non_null_expression", "parenthesized_expression") and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "generic_function":  # `sqlx::query_as::<_, User>`
            node = node.child_by_field_name("function")
        else:
            parts.append(node_text(node) if node.type in _NAME_TYPES else "")
            break
    return ".".join(reversed(parts))


def call_arguments(call: Node) -> list[Node]:
    """The arguments a call is handed, comments left out."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return []
    return [a for a in arguments.named_children if a.type not in ("comment", "line_comment", "block_comment")]


def written_words(nodes: list[Node], constants: dict[str, str]) -> list[str] | None:
    """The words a list of arguments writes (strings, arrays of strings), or None when any is built at run time."""
    words: list[str] = []
    for node in nodes:
        items = node.named_children if node.type in ("array", "array_expression") else [node]
        if node.type == "reference_expression" and node.named_child_count == 1:
            return written_words(node.named_children, constants)
        if node.type == "macro_invocation" and node_text(node.child_by_field_name("macro")) == "vec":
            tree = next((c for c in node.named_children if c.type == "token_tree"), None)
            items = [c for c in tree.named_children] if tree is not None else []
        for item in items:
            value = string_value(item, constants)
            if value is None:
                return None
            words.append(value)
    return words


def launch_refusals(name: str, command: str | None, vouched: Vouched) -> list[Refusal]:
    """The command a launcher runs, judged by the allow-list; held when its words are built at run time."""
    if command is None or not command.strip():
        return [Refusal("inline_code", f"`{clip(name, 40)}(...)` starts a program it is handed at run time")]
    return command_refusals(command, vouched)


def runs_string(name: str) -> Refusal:
    """The refusal of a call named `name` that runs whatever string reaches it."""
    return Refusal("inline_code", f"`{clip(name, 40)}(...)` runs whatever string reaches it")


# Calls that run the query their SQL argument writes, by names that only query (`db.QueryContext`, `pool.query`):
# admitted only with a query written whole (its values apart, as placeholders), or named by one; and names some
# query with and other code uses too (`execute`, a template's `Execute`): held when the query is built from values
# (`+`, a template, `fmt.Sprintf`, `format!`, or a name bound to one of those in the block).
QUERIES = frozenset(
    "query querycontext queryrow queryrowcontext queryx queryxcontext queryrowx execcontext namedexec mustexec"
    " $queryrawunsafe $executerawunsafe query_as query_scalar".split()
)
MAYBE_QUERIES = frozenset("execute executemany prepare preparecontext raw unsafe".split())
_FORMATS = frozenset("sprintf format concat join".split())


def built_from_values(node: Node | None, built: set[str]) -> bool:
    """True for a string built from values at run time: `"..." + x`, a template with a value in it, a formatting
    call (`fmt.Sprintf`, `format!`), or a name the block binds to one of those."""
    while node is not None and node.type in ("parenthesized_expression", "reference_expression"):
        node = node.named_children[0] if node.named_child_count == 1 else None
    if node is None:
        return False
    if node.type == "identifier":
        return node_text(node) in built
    if node.type == "binary_expression":
        return any(c.type in _STRING_TYPES or built_from_values(c, built) for c in node.named_children)
    if node.type == "template_string":
        return any(child.type == "template_substitution" for child in node.children)
    if node.type == "call_expression":
        return dotted_name(node.child_by_field_name("function")).rsplit(".", 1)[-1].lower() in _FORMATS
    return node.type == "macro_invocation" and node_text(node.child_by_field_name("macro")) == "format"


def built_names(nodes: list[Node]) -> set[str]:
    """The names the block binds to a string built from values (`const q = "..." + name`, `q := fmt.Sprintf(...)`)."""
    built: set[str] = set()
    for _ in range(2):  # a name built from a name built from values
        for node in nodes:
            name, value = _binding(node)
            if name is not None and name.type == "identifier" and built_from_values(value, built):
                built.add(node_text(name))
    return built


def query_refusals(name: str, call: Node, constants: dict[str, str], built: set[str], *, strict: bool) -> list[Refusal]:
    """A query call whose SQL (its first argument, or the one after a context) is built from values, or (`strict`,
    a name that only queries) not written whole."""
    arguments = call_arguments(call)
    if name.rsplit(".", 1)[-1].lower().endswith("context") and arguments:
        arguments = arguments[1:]
    if not arguments:
        return []
    first = arguments[0]
    if built_from_values(first, built):
        return [Refusal("inline_code", f"`{clip(name, 40)}(...)` runs a query built from values")]
    if not strict or string_value(first, constants) is not None:
        return []
    if first.type == "call_expression" and node_text(first.child_by_field_name("function")) == "sql":
        return []  # a tagged template (`sql`...``) binds what it substitutes as values
    if first.type == "object" and string_value(object_value(first, "text"), constants) is not None:
        return []  # `{ text: "...", values: [...] }`
    return [Refusal("inline_code", f"`{clip(name, 40)}(...)` runs a query not written whole")]


def object_value(node: Node | None, key: str) -> Node | None:
    """The value under `key` in an object literal (`{ cmd: [...] }`), or None."""
    if node is None or node.type != "object":
        return None
    for pair in node.named_children:
        if pair.type == "pair" and node_text(pair.child_by_field_name("key")).strip("\"'") == key:
            return pair.child_by_field_name("value")
    return None
