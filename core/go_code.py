"""Go code: what a fenced Go block runs (`os/exec`'s commands, a process replaced, a plugin loaded, cgo,
`go:generate`, a query built from values) and the strings it writes."""

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
    string_value,
    written_words,
)
from core.program_calls import clip

__all__ = ["read_go"]


# Calls that start a process or load code, held whatever they are handed (a process replaced, a plugin loaded).
_GO_HELD = frozenset(
    "os.StartProcess syscall.Exec syscall.ForkExec syscall.StartProcess unix.Exec unix.ForkExec plugin.Open".split()
)
_GO_COMMANDS = frozenset(("Command", "CommandContext"))
_GO_FIELDS = _GO_COMMANDS | {name.rsplit(".", 1)[-1] for name in _GO_HELD}


def read_go(nodes: list[Node], constants: dict[str, str], built: set[str], vouched: Vouched, reading: Reading) -> None:
    """Adds to `reading` what a Go block's `nodes` run (`os/exec` and the calls that replace a process or load a
    plugin, cgo, `go:generate`, queries) and the strings it writes."""
    execs = {"exec"}  # the names `os/exec` is imported under
    imported: set[int] = set()
    for node in nodes:
        if node.type == "import_spec":
            path, alias = node.child_by_field_name("path"), node.child_by_field_name("name")
            imported.add(path.id if path is not None else -1)
            if string_value(path) == "os/exec" and alias is not None:
                execs.add(node_text(alias))
                if node_text(alias) in (".", "_"):  # `Command` called bare, or started where it cannot be read
                    reading.refusals.append(
                        Refusal("inline_code", f'`import {node_text(alias)} "os/exec"` hides its launchers')
                    )
            if string_value(path) == "C":  # cgo: the comment above it is C code, compiled in; not read here
                reading.refusals.append(Refusal("inline_code", 'a Go block that imports "C" builds C code it holds'))
    called = {f.id for c in nodes if c.type == "call_expression" and (f := c.child_by_field_name("function"))}
    for node in nodes:
        if node.type == "comment" and node_text(node).startswith("//go:generate"):  # `go generate` runs it
            reading.refusals += launch_refusals("go:generate", node_text(node).removeprefix("//go:generate"), vouched)
        elif (
            node.type == "selector_expression"
            and node_text(node.child_by_field_name("field")) in _GO_FIELDS
            and getattr(node.child_by_field_name("operand"), "type", "") == "identifier"  # a package's function
        ):
            name = dotted_name(node)
            package, _, function = name.rpartition(".")
            launcher = (package in execs and function in _GO_COMMANDS) or name in _GO_HELD
            if launcher and node.id not in called:
                reading.refusals.append(Refusal("inline_code", f"`{clip(name, 40)}` is named to start a program"))
        elif node.type == "assignment_statement" and any(
            node_text(n.child_by_field_name("field")) in ("Args", "Path", "Env", "SysProcAttr")
            for n in getattr(node.child_by_field_name("left"), "named_children", [])
            if n.type == "selector_expression"
        ):  # `cmd.Args = append(cmd.Args, x)`: what a command runs, changed after it was built
            reading.refusals.append(
                Refusal("inline_code", f"`{clip(node_text(node), 40)}` changes what a command runs")
            )
        elif node.type == "composite_literal" and dotted_name(node.child_by_field_name("type")).split(".")[0] in execs:
            reading.refusals.append(Refusal("inline_code", "an `exec.Cmd` starts a program it is handed"))
        elif node.type == "qualified_type" and dotted_name(node) in {f"{e}.Cmd" for e in execs}:
            pass  # a type named (`*exec.Cmd` in a signature): what starts it is judged where it is started
        elif node.type == "call_expression":
            name = dotted_name(node.child_by_field_name("function"))
            package, _, function = name.rpartition(".")
            if package in execs and function in _GO_COMMANDS:
                arguments = call_arguments(node)[1 if function == "CommandContext" else 0 :]
                words = (
                    written_words(arguments, constants)
                    if all(a.type != "variadic_argument" for a in arguments)
                    else None
                )
                reading.refusals += launch_refusals(name, shlex.join(words) if words else None, vouched)
            elif name in _GO_HELD:
                reading.refusals += launch_refusals(name, None, vouched)
            elif (function.lower() in QUERIES or function == "Exec") and package not in execs:
                reading.refusals += query_refusals(name, node, constants, built, strict=True)
            elif function.lower() in MAYBE_QUERIES:  # `tmpl.Execute(w, data)` is a template's
                reading.refusals += query_refusals(name, node, constants, built, strict=False)
        elif node.type in ("interpreted_string_literal", "raw_string_literal") and node.id not in imported:
            value = string_value(node)
            reading.strings.append(value if value is not None else node_text(node))
