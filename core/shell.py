"""A shell command line as the shell reads it: parsed by a real grammar (tree-sitter's bash) into simple commands.

What a lesson tells an agent to run is decided on this parse, never on a regular expression over the text: a
regex sees `c\\url` and `'cu'rl` as strangers, the shell sees `curl`. Each simple command keeps its program as
written and as the shell reads it, its arguments' literal values (None where the shell would expand something:
`$X`, `$(...)`, `$'...'`), its environment assignments, its redirections and whether a pipe feeds it; whatever
the grammar does not make a simple command of (a subshell, a function, `if`, a background `&`, text the grammar
cannot read) is named in `constructs`. Pure: text in, a value out.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache, lru_cache

import re2
import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = ["CommandLine", "Redirect", "SimpleCommand", "parse_command"]

# A command line longer than this is not a lesson's command; parsing it would only cost time.
MAX_COMMAND_CHARS = 2000
# Substitutions deeper than this are no lesson's command either, and each level is a level of recursion here.
MAX_NESTING = 50


@dataclass(frozen=True)
class Redirect:
    """One redirection: its operator (`>`, `>>`, `<`, `2>&1`, `<<`), and its target's literal value (None when the
    shell would expand it; the heredoc's body for `<<`)."""

    operator: str
    target: str | None
    heredoc: bool = False


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: `program` as written (`c\\url`) and as the shell reads it (`words[0]`), the literal values
    of its words (None where the shell expands), the `NAME=value` assignments before it, its redirections, and
    whether a pipe feeds it (`piped`: it reads another command's output)."""

    written: str
    words: tuple[str | None, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    piped: bool = False
    substitutions: tuple[CommandLine, ...] = ()  # `$(...)`, backticks and `<(...)` inside its words, parsed

    @property
    def program(self) -> str | None:
        """The program as the shell reads it, or None when it is expanded at run time (`$CMD`)."""
        return self.words[0] if self.words else None

    @property
    def args(self) -> tuple[str | None, ...]:
        """The arguments' literal values."""
        return self.words[1:]


@dataclass(frozen=True)
class CommandLine:
    """A parsed command line: its simple commands in order, and the constructs that are not simple commands
    (`subshell`, `if_statement`, `background`, `syntax error`, ...)."""

    text: str
    commands: tuple[SimpleCommand, ...] = ()
    constructs: tuple[str, ...] = field(default=())

    @property
    def readable(self) -> bool:
        """True when the whole line is simple commands joined by `&&`, `||`, `;` and pipes."""
        return not self.constructs


@cache
def _language() -> Language:
    return Language(tree_sitter_bash.language())


def _parser() -> Parser:
    # A new parser for every line (it costs a fraction of a microsecond): no state carried from one line to the next.
    return Parser(_language())


_LIST_NODES = {"program", "list", "pipeline", "redirected_statement", "command_substitution", "process_substitution"}
_JOINERS = {"&&", "||", ";", "|", "|&", "\n", "$(", ")", "`", "<(", ">("}
_WORD_NODES = {"word", "number", "raw_string", "string", "concatenation", "simple_expansion", "expansion",
               "command_substitution", "process_substitution", "ansi_c_string", "translated_string",
               "arithmetic_expansion", "brace_expression"}  # fmt: skip


def _unescape_word(text: str) -> str:
    """A bare word's value: a backslash quotes the next character (`c\\url` is `curl`)."""
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":  # a backslash-newline joins lines
                out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


# An unquoted brace expansion inside one word: `{~,.}`, `{1..3}`.
_BRACES = re2.compile(r"(?:^|[^\\])\{[^{}]*(?:,|\.\.)[^{}]*\}")


def _braced(node: Node) -> bool:
    """True when a concatenation holds an unquoted `{...}` with a comma or `..` (a brace expansion)."""
    text = "".join(_text(c) if c.type == "word" else "\x00" for c in node.children)
    return "{" in text and bool(_BRACES.search(text))


def _string_value(node: Node) -> str | None:
    """A double-quoted string's value, or None when it holds an expansion."""
    parts = []
    for child in node.children:
        if child.type == '"':
            continue
        if child.type != "string_content":
            return None
        raw = _text(child)
        out = []
        i = 0
        while i < len(raw):
            if raw[i] == "\\" and i + 1 < len(raw) and raw[i + 1] in '"\\$`\n':
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            out.append(raw[i])
            i += 1
        parts.append("".join(out))
    return "".join(parts)


# The line being read, as the bytes the nodes' offsets point into (the grammar reads an ASCII shadow of it).
_SOURCE: ContextVar[bytes] = ContextVar("_SOURCE", default=b"")


def _text(node: Node) -> str:
    return _SOURCE.get()[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _shadow(source: bytes) -> bytes:
    """`source` with every byte outside printable ASCII (a multi-byte character's, a control character's) written as
    `a`: the same words and the same offsets, in the only input tree-sitter-bash 0.25 reads without crashing (a line
    with a character of another plane, or a NUL, made its scanner fault now and then: found by hypothesis)."""
    return source.translate(_ASCII_ONLY)


_ASCII_ONLY = bytes(b if 32 <= b < 127 or b in (9, 10) else ord("a") for b in range(256))


def _value(node: Node) -> str | None:
    """The literal value of a word node, or None when the shell would expand part of it at run time."""
    kind = node.type
    if kind == "word" and "{" in (text := _text(node)) and _BRACES.search(text):
        return None  # `{a,b}`, `{1..3}`: the shell expands it into other words
    if kind == "word" or kind == "number":
        return _unescape_word(_text(node))
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "string":
        return _string_value(node)
    if kind == "brace_expression" or (kind == "concatenation" and _braced(node)):
        return None  # the shell expands it into other words
    if kind == "concatenation":
        parts = [_value(c) if c.type in _WORD_NODES else _text(c) for c in node.children]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p is not None)
    return None


class _Walk:
    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.constructs: list[str] = []

    def statement(self, node: Node, piped: bool = False, redirects: tuple[Redirect, ...] = ()) -> None:
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.constructs.append("syntax error")
        elif kind == "comment":
            return
        elif kind == "command":
            self.command(node, piped, redirects)
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            found = tuple(self.redirect(c) for c in node.children if c.type.endswith("redirect"))
            for child in node.children:
                if child.type == "ERROR" or child.is_missing:
                    self.constructs.append("syntax error")
            if body is None:  # a redirection with no command (`2>&1 | tail`): nothing runs there
                return
            self.statement(body, piped, redirects + found)
        elif kind == "pipeline":
            first = True
            for child in node.children:
                if child.type in _JOINERS:
                    continue
                self.statement(child, piped=piped or not first, redirects=())
                first = False
        elif kind in ("program", "list"):
            # Only a list's first statement is in a pipe the list is in: tree-sitter-bash reads `a | b | c && d` as a
            # pipe into the list `b | c && d`, where bash pipes `a | b | c` and runs `d` after it.
            first = True
            for child in node.children:
                if child.type in _JOINERS:
                    continue
                if child.type == "&":
                    self.constructs.append("background `&`")
                    continue
                self.statement(child, piped and first)
                first = False
        else:
            self.constructs.append(kind.replace("_", " "))

    def redirect(self, node: Node) -> Redirect:
        operator = "".join(
            _text(c) for c in node.children if c.type not in _WORD_NODES and not c.type.startswith("heredoc")
        )
        if node.type == "heredoc_redirect":
            body = next((c for c in node.children if c.type == "heredoc_body"), None)
            for child in node.children:
                if child.type in ("ERROR",) or child.is_missing:
                    self.constructs.append("syntax error")
            return Redirect("<<", _text(body) if body is not None else "", heredoc=True)
        targets = [c for c in node.children if c.type in _WORD_NODES]
        target = _value(targets[-1]) if targets else None
        for t in targets:
            self.nested(t)
        return Redirect(operator.strip(), target)

    def nested(self, node: Node) -> tuple[CommandLine, ...]:
        """The command lines inside `node`'s substitutions (`$(...)`, backticks, `<(...)`), each parsed."""
        found: list[CommandLine] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("command_substitution", "process_substitution"):
                inner = _Walk()
                for child in n.children:
                    if child.type not in _JOINERS:
                        inner.statement(child)
                found.append(CommandLine(_text(n), tuple(inner.commands), tuple(inner.constructs)))
                continue
            stack.extend(n.children)
        return tuple(found)

    def command(self, node: Node, piped: bool, redirects: tuple[Redirect, ...]) -> None:
        words: list[str | None] = []
        written = ""
        assignments: list[str] = []
        own: list[Redirect] = list(redirects)
        subs: list[CommandLine] = []
        end = -1  # where the last word ended: a word that starts right there is the same word to the shell
        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(_text(child))
                subs.extend(self.nested(child))
            elif child.type == "command_name":
                inner = child.children[0] if child.children else child
                written = _text(inner)
                words.append(_value(inner))
                subs.extend(self.nested(inner))
                end = child.end_byte
            elif child.type.endswith("redirect"):
                own.append(self.redirect(child))
            elif child.type in _WORD_NODES:
                value = _value(child)
                if child.start_byte == end and words:  # `'s'\udo`: the grammar splits what the shell joins
                    last = words.pop()
                    words.append(None if last is None or value is None else last + value)
                    if len(words) == 1:
                        written += _text(child)
                else:
                    words.append(value)
                subs.extend(self.nested(child))
                end = child.end_byte
            elif child.type == "ERROR" or child.is_missing:
                self.constructs.append("syntax error")
            else:
                self.constructs.append(child.type.replace("_", " "))
        if not words:  # `FOO=1` alone sets a variable
            self.constructs.append("variable assignment")
            return
        self.commands.append(SimpleCommand(written, tuple(words), tuple(assignments), tuple(own), piped, tuple(subs)))


@lru_cache(maxsize=4096)
def parse_command(text: str) -> CommandLine:
    """`text` parsed as a bash command line. Never raises: what is not simple commands is named in `constructs`.
    (Kept for the last few thousand lines: a session names the same commands again and again.)"""
    if len(text) > MAX_COMMAND_CHARS:
        return CommandLine(text, (), ("a command line too long to read",))
    if text.count("$(") + text.count("`") + text.count("<(") > MAX_NESTING:
        return CommandLine(text, (), ("commands nested too deep to read",))
    source = text.encode("utf-8", "replace")
    tree = _parser().parse(_shadow(source))
    walk = _Walk()
    token = _SOURCE.set(source)
    try:
        walk.statement(tree.root_node)
    except RecursionError:  # a grammar tree deeper than the walk can follow
        return CommandLine(text, (), ("commands nested too deep to read",))
    finally:
        _SOURCE.reset(token)
    if _skipped(source, tree.root_node):
        walk.constructs.append("text the grammar skipped")
    return CommandLine(text, tuple(walk.commands), tuple(dict.fromkeys(walk.constructs)))


def _skipped(source: bytes, root: Node) -> bool:
    """True when tree-sitter-bash left out some of `source` with no error node: a leading `-` (`- FOO=1 npm`) is
    dropped silently, so the commands read would not be what bash runs."""
    at = 0
    for child in [*root.children, None]:
        end = len(source) if child is None else child.start_byte
        if source[at:end].replace(b"\\\n", b"").strip():
            return True
        at = at if child is None else max(at, child.end_byte)
    return False
