"""A fenced block of Go, TypeScript/JavaScript or Rust, read by its language's own parser (tree-sitter's grammars):
what in it starts a program, runs a string as code or runs a query built from values, and the strings and comments
it writes.

Allow, don't deny: a block is read only when its parser reads it whole, with no error node; a call that starts a
program is judged as the command its constant words make (escapes read as the characters they write), and one whose
words are built at run time is held, as is any launcher named without being called (an alias runs whatever it is
later handed); a name its API's authors give to a safeguard switched off (`InsecureSkipVerify`, `danger_...`,
`SslVerifyMode::NONE`) waits for review unless set false. The strings and comments are returned to be read for
links and outside paths by the caller (`core.code_spans`), as a Python block's are. Here the block is parsed and
handed to its language's reader (`core.go_code`, `core.javascript_code`, `core.rust_code`, on the shared reading of
a tree in `core.code_tree`); the names of safeguards switched off and the comments are read alike in every language.
"""

from __future__ import annotations

import importlib
from functools import cache

from tree_sitter import Language, Node, Parser

from core.allowlist import Refusal, Vouched
from core.code_tree import (
    BINDING_TYPES,
    Reading,
    built_names,
    call_arguments,
    constant_strings,
    node_text,
)
from core.go_code import read_go
from core.javascript_code import read_javascript
from core.program_calls import clip
from core.rust_code import read_rust

__all__ = ["FENCED_LANGUAGES", "read_block"]


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
    bindings = [node for node in nodes if node.type in BINDING_TYPES]
    constants = constant_strings(bindings)
    built = built_names(bindings)
    reading = Reading()
    if grammar == "go":
        read_go(nodes, constants, built, vouched, reading)
    elif grammar == "rust":
        read_rust(nodes, parents, constants, built, vouched, reading)
    else:
        read_javascript(nodes, parents, constants, built, vouched, reading)
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


_NAME_NODES = frozenset("identifier field_identifier property_identifier shorthand_property_identifier".split())
_OFF_VALUES = frozenset(("false", "0", "False"))


def _safeguards_off(nodes: list[Node], parents: dict[int, Node]) -> list[Refusal]:
    """Names an API's authors give to what switches a safeguard off (`InsecureSkipVerify`,
    `danger_accept_invalid_hostnames`, rustls's `dangerous()`, `dangerouslySetInnerHTML`) and a peer left unverified
    (`SslVerifyMode::NONE`), unless the block sets them off (`: false`, `(false)`)."""
    found: list[Refusal] = []
    for node in nodes:
        name = node_text(node) if node.type in _NAME_NODES else ""
        if node.type == "scoped_identifier" and "verify" in node_text(node.child_by_field_name("path")).lower():
            name = "verify_none" if node_text(node.child_by_field_name("name")) == "NONE" else ""
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
        return bool(values) and node_text(values[-1]) in _OFF_VALUES
    if above is not None and above.type in ("field_expression", "member_expression"):
        call = parents.get(above.id)
        if call is not None and call.type == "call_expression":
            arguments = call_arguments(call)
            return len(arguments) == 1 and node_text(arguments[0]) in _OFF_VALUES
    return False


def _comments(nodes: list[Node]) -> list[str]:
    """The text of each comment, without its marks."""
    found = []
    for node in nodes:
        if node.type in ("comment", "line_comment", "block_comment"):
            text = node_text(node)
            found.append(text[2:-2] if text.startswith("/*") else text[2:])
    return found
