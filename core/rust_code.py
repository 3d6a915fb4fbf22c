"""Rust code: what a fenced Rust block runs (a `std::process::Command` and the words its builder chain adds, the
calls that run a string by a shell or replace the process, a query built from values) and the strings it writes."""

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
    query_refusals,
    runs_string,
    string_value,
    written_words,
)
from core.program_calls import clip

__all__ = ["read_rust"]


# Methods of a `Command` that add to the command it runs, or set how it runs without changing what.
_RUST_ADDS = frozenset(("arg", "args"))
_RUST_SETS = frozenset(
    "current_dir stdin stdout stderr env_clear env_remove kill_on_drop process_group uid gid".split()
)
# Calls that run a string by a shell or replace the process: held whatever they are handed.
_RUST_HIDDEN = frozenset(("Command", "system", "execv", "execvp", "execve"))
_RUST_HELD_LAST = frozenset("system execv execve execvp execvpe execl execle execlp fexecve popen".split())


def read_rust(
    nodes: list[Node],
    parents: dict[int, Node],
    constants: dict[str, str],
    built: set[str],
    vouched: Vouched,
    reading: Reading,
) -> None:
    """Adds to `reading` what a Rust block's `nodes` run (each `Command` with the words its chain or a `let`
    name's later calls add, the calls that run a string or replace the process, queries) and the strings it
    writes."""
    commands = {"std.process.Command", "process.Command", "tokio.process.Command", "async_process.Command"}
    uses = " ".join(node_text(n) for n in nodes if n.type == "use_declaration")
    runs = any(n.type == "field_identifier" and node_text(n) in ("status", "output", "spawn", "exec") for n in nodes)
    if "process::" in uses or "clap" not in uses or runs:  # the process `Command`, unless clap's builds a parser
        commands.add("Command")
    for node in nodes:
        if node.type == "use_as_clause" and node_text(node.child_by_field_name("path")).endswith("process::Command"):
            commands.add(node_text(node.child_by_field_name("alias")))
    bound: dict[str, list[str] | None] = {}  # a `let` name bound to a command, and its words
    starts: list[tuple[str, Node]] = []
    for node in nodes:
        if node.type == "call_expression":
            name = dotted_name(node.child_by_field_name("function"))
            path, _, function = name.rpartition(".")
            if function == "new" and path in commands:
                starts.append((name, node))
            elif function.lower() in QUERIES or function.lower() in MAYBE_QUERIES:
                reading.refusals += query_refusals(name, node, constants, built, strict=function.lower() in QUERIES)
            elif function in _RUST_HELD_LAST and path.split(".")[0] in ("libc", "nix", "unistd", "std", ""):
                reading.refusals.append(
                    runs_string(name)
                    if function == "system"
                    else Refusal("inline_code", f"`{clip(name, 40)}(...)` starts a program it is handed at run time")
                )
        elif node.type == "identifier" and node_text(node) in _RUST_HIDDEN:
            holder = parents.get(node.id)
            if holder is not None and holder.type == "token_tree":  # a macro's tokens are not parsed as code here
                reading.refusals.append(Refusal("inline_code", f"a macro is handed `{node_text(node)}`, not read here"))
        elif node.type in ("string_literal", "raw_string_literal"):
            value = string_value(node)
            reading.strings.append(value if value is not None else node_text(node))
    for name, start in starts:
        words = written_words(call_arguments(start), constants)
        top, words = _rust_chain(start, words, parents, constants)
        holder = parents.get(top.id)
        if holder is not None and holder.type == "let_declaration":
            pattern = holder.child_by_field_name("pattern")
            bound[node_text(pattern).removeprefix("mut ").strip()] = words
        else:
            reading.refusals += launch_refusals(name, shlex.join(words) if words else None, vouched)
    calls = [node for node in nodes if node.type == "call_expression"]
    for node in calls if bound else ():  # `cmd.arg("x")` on a bound command, in the order written
        callee = node.child_by_field_name("function")
        receiver = (
            callee.child_by_field_name("value") if callee is not None and callee.type == "field_expression" else None
        )
        if receiver is not None and receiver.type == "identifier" and node_text(receiver) in bound:
            _, bound[node_text(receiver)] = _rust_chain(receiver, bound[node_text(receiver)], parents, constants)
    for owner, words in bound.items():
        reading.refusals += launch_refusals(owner, shlex.join(words) if words else None, vouched)
    for node in calls if starts else ():  # an `.arg(...)` elsewhere handed words at run time may add to a command
        callee = node.child_by_field_name("function")
        if callee is not None and callee.type == "field_expression":
            method = node_text(callee.child_by_field_name("field"))
            if method in _RUST_ADDS and written_words(call_arguments(node), constants) is None:
                reading.refusals += launch_refusals(f".{method}", None, vouched)
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
        method = node_text(field.child_by_field_name("field"))
        if method in _RUST_ADDS:
            added = written_words(call_arguments(call), constants)
            words = None if words is None or added is None else [*words, *added]
        elif method not in _RUST_SETS and method not in ("env", "envs"):
            break
        node = call
    while (above := parents.get(node.id)) is not None and above.type in ("try_expression", "reference_expression"):
        node = above
    return node, words
