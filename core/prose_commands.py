"""Commands written in a sentence, without backticks: a program a sentence names and the command-like words after
it ("install it with pip install x"), the command a clause names right before a span of flags ("run git push with
`-f`"), the program a sentence speaks of ("in curl calls, add `-k`"), and a sentence's words with where each starts.
The screen (`core.screen`) judges what these find as the allow-list judges a command. Pure functions.
"""

from __future__ import annotations

import itertools

import re2

from core.allowlist import Refusal, Vouched, command_refusals, is_program
from core.language import is_function_word

__all__ = [
    "ADVERBS",
    "CLAUSE_START",
    "TASK_RUNNERS",
    "WORD_BREAKS",
    "command_word",
    "named_command",
    "prose_programs",
    "prose_words",
    "sentence_program",
]


# A word that continues a command written in a sentence: a flag, a path, a package or a version, an assignment
# (`command_word`), or a hyphenated name.
_COMMAND_MARKS = frozenset("./@=:0123456789~")
_HYPHENATED = re2.compile(r"^[a-z][a-z0-9]*-[a-z0-9-]+$")
# Subcommands that continue a command written in a sentence ("pip install x", "npm run build").
_SUBCOMMANDS = frozenset(
    "install i add run exec dlx x ci test build push commit clone fetch pull checkout reset rebase merge remote"
    " config set get sync lock remove uninstall publish login create init start dev serve deploy tool pip global"
    " compose up down".split()
)
# Task runners named by English words ("make it work", "just add it", "the task builds"): in a sentence, only a flag
# or a task's joined name (`make wipe-prod-db`, `just test:ci`) continues them.
TASK_RUNNERS = frozenset("make just task rake".split())
_TASK_WORD = re2.compile(r"^(?:-.*|[a-z][a-z0-9]*[-_:][a-z0-9_:-]+)$")
# After these, the next word is what they install (`pip install requests`), unless it is an adverb.
_INSTALLS = frozenset("install i add require get dlx x create exec".split())
_FETCHERS = frozenset("npx uvx pnpx bunx pipx".split())
ADVERBS = frozenset(
    "here there now first again instead locally globally manually only too also once later it them everything"
    " anything nothing dependencies deps packages fails failed works worked hangs errors breaks succeeds is was"
    " will would should must can may might takes runs gives prints complains reports writes creates removes updates"
    " step command output".split()
)


# Where a clause begins around a command written in a sentence.
CLAUSE_START = re2.compile(r"[.;:!?,(]\s+|\(")
WORD_BREAKS = str.maketrans(dict.fromkeys("\t\n\f\r(),;\"'", " "))
# Words between a command named in a sentence and the flags that follow it ("run git push with `-f`").
_NAMING_WORDS = frozenset("with using and the these those its arguments args flags flag options option".split())
_NAMED_SUBCOMMANDS = _SUBCOMMANDS | frozenset("clean restore rm branch tag stash switch gc prune".split())


def named_command(before: str, vouched: Vouched) -> str | None:
    """The command a sentence names right before a span of flags: a known program as the clause's last word ("run
    rm with" -> `rm`), or before one of its subcommands ("rerun git push with" -> `git push`; not "pnpm passes the")."""
    words = CLAUSE_START.split(before.rstrip().rstrip(":"))[-1].split()  # "run rm with these arguments: `-rf`"
    while words and words[-1].lower().rstrip(":") in _NAMING_WORDS:
        words.pop()
    tail = [w.lower().rstrip(":") for w in words[-2:]]
    if tail and is_program(tail[-1], vouched):
        return tail[-1]
    if len(tail) == 2 and tail[1] in _NAMED_SUBCOMMANDS and is_program(tail[0], vouched):
        return " ".join(tail)
    return None


def sentence_program(before: str, vouched: Vouched) -> str | None:
    """The last known program the sentence before a span names, anywhere in it (`before`: the text up to the span)."""
    sentence = _SENTENCE_MARK.split(before)[-1]
    for word in reversed(sentence.translate(WORD_BREAKS).split()):
        name = word.strip("`*_.:!?").lower()
        if name and not is_function_word(name) and is_program(name, vouched):
            return name
    return None


_SENTENCE_MARK = re2.compile(r"[.!?](?:\s|$)")


# A release number written after a program's name: dotted numbers, as a version is written.
_VERSION = re2.compile(r"v?\d+(?:\.\d+)+")


def command_word(word: str) -> bool:
    """True for a word of a sentence (no white space in it) that continues a command: led by `-` or `~`, holding a
    path's, version's or assignment's mark, or a hyphenated lower-case name."""
    if word[:1] in ("-", "~") or not _COMMAND_MARKS.isdisjoint(word):
        return True
    return "-" in word and _HYPHENATED.match(word) is not None


def prose_words(prose: str) -> list[tuple[str, int]]:
    """The words of `prose` and where each starts: runs of characters that are no white space, parenthesis, comma,
    semicolon or quote (split by str, not a pattern call per word: a sentence of many short words stays cheap)."""
    pieces = prose.translate(WORD_BREAKS).split(" ")
    starts = itertools.accumulate(map((1).__add__, map(len, pieces)), initial=0)  # each piece and its space, in C
    return [(piece, at) for piece, at in zip(pieces, starts, strict=False) if piece]


def prose_programs(prose: str, vouched: Vouched) -> tuple[list[Refusal], set[int]]:
    """What refuses the commands a sentence writes without backticks ("rerun it (pytest -k NAME -x)", "install it
    with pip install x"): a program named in the sentence and the command-like words after it (flags, paths,
    packages, subcommands) are read as the allow-list reads a command. And where each word so read starts."""
    found: list[Refusal] = []
    words = prose_words(prose)
    names = [word.rstrip(".:!?").lower() for word, _ in words]
    used: set[int] = set()
    for i in [i for i, name in enumerate(names) if is_program(name, vouched)]:  # most sentences: none
        if i in used:
            continue
        run = [names[i]]
        for j in range(i + 1, len(words)):
            nxt, at = words[j]
            between = prose[words[j - 1][1] + len(words[j - 1][0]) : at]
            # a clause's mark, or a line's end (a table row, a bullet), ends the command a sentence writes
            if any(c in between for c in ",;)(\n") or words[j - 1][0].endswith((".", ":", "!", "?")):
                break
            clean = nxt.rstrip(".:!?")
            if run[-1] in _INSTALLS | _FETCHERS and clean.lower() in ("the", "a", "an", "this", "that"):
                continue  # "pip install the x package": the article is no part of the command
            takes = run[-1] in _INSTALLS | _FETCHERS or run[-1].startswith("-")  # a package, or a flag's value
            named = takes and not is_function_word(clean) and clean.lower() not in ADVERBS
            if run[0] in TASK_RUNNERS:
                if not (_TASK_WORD.match(clean) or (run[-1].startswith("-") and command_word(clean))):
                    break  # a flag, its value, or a task's joined name
            elif not (command_word(clean) or clean in _SUBCOMMANDS or named):
                break
            run.append(clean)
            used.add(j)
        if len(run) > 1 and not all(_VERSION.fullmatch(w) for w in run[1:]):
            # (a name and a release, "Go 1.22", "node 20.11", is a runtime named, not a command)
            found += command_refusals(" ".join(run), vouched)
    return found, {at for k, (w, at) in enumerate(words) if k in used}
