"""What a Makefile's targets run: their recipe lines, read as GNU make reads the file.

`core.recipes` says why a declared task is judged by its recipe. A Makefile says more than its recipes: what make
computes when it reads the file (`VERSION := $(shell ...)`), the shell it runs lines with (`SHELL`), the files it
also reads (`include`), the goal `make` alone makes (`.DEFAULT_GOAL`), the pattern rules a target without a recipe
falls back on, a target's own variables, branches of a conditional. Each is read as make reads it; what cannot be
read before make runs holds every target (`core.recipes.unread`). Only what is known not to change what runs is
admitted: the rest of make's grammar is held, not guessed at.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

import re2

from core.patterns import Match
from core.program_tasks import TASK_NAME
from core.recipes import EVERY, FALLBACK, PROGRAM_SETTINGS, Recipe, physical_lines, shell_command, unread

__all__ = ["makefile_recipes"]

_ASSIGN = re2.compile(
    r"^((?:(?:override|private|export|unexport)\s+)*)([A-Za-z_.][A-Za-z0-9_.-]*)\s*(:::=|::=|:=|\?=|\+=|!=|=)\s*(.*)$"
)
_VARIABLE = re2.compile(r"\$(?:[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]|([@<^+?*|]))")
_MOST_LINES = 200  # a task runs no more lines than this that we read
_MOST_RECIPES = 50_000  # a Makefile that runs more lines than this is held whole
_MOST_WAYS = 16  # a line read more ways than this (a variable set in each branch of several conditionals) is held
_DEEP = 5  # variables that name variables, this deep

# Functions that compute text from text, and run and write nothing (GNU make's manual, "Functions for
# Transforming Text" and kin). `shell` runs its command (judged as a line); `eval`, `call`, `file`, `guile`, `load`
# and any other name run or write what only make knows: held.
_PURE = frozenset(
    "subst patsubst strip findstring filter filter-out sort word wordlist words firstword lastword dir notdir suffix"
    " basename addsuffix addprefix join wildcard realpath abspath if or and intcmp foreach let origin flavor value"
    " info warning error".split()
)
# Special targets that only say how make treats other targets; `.ONESHELL` and `.DEFAULT` are read below, and any
# other (`.EXPORT_ALL_VARIABLES` exports every variable to every recipe) is held.
_SPECIAL = frozenset(
    ".PHONY .SUFFIXES .PRECIOUS .INTERMEDIATE .SECONDARY .SECONDEXPANSION .DELETE_ON_ERROR .IGNORE .SILENT"
    " .LOW_RESOLUTION_TIME .NOTPARALLEL .NOTINTERMEDIATE .POSIX .WAIT".split()
)
_PARENTHESES = re2.compile(r"\$[({]|[(){}]")
_CLOSES = {"(": ")", "{": "}"}
_CALL_NAME = re2.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]+")
_MOST_PARENTHESES = 20_000  # in all the text make expands as it reads the file
_MOST_CALLS = 256  # in one line make reads; past them the file is held
_LONGEST = 1 << 16  # a line or value longer than this, after expanding it, is held
_TOO_MUCH = f"$(unread: a line that reads more than {_MOST_WAYS} ways or longer than {_LONGEST} characters)"
# `.c.o:` and `.sh:`, as old Makefiles write a pattern: a single suffix (`.chk:`) makes `X` from `X.chk` once the
# suffix is known (`.SUFFIXES: .chk`, or one of make's own), so any such name is read as one (a file target named
# so, `.venv:`, has its lines judged for every target without a recipe: more is judged, never less).
_SUFFIX_RULE = re2.compile(r"^\.[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)?$")
_SPECIAL_SHAPE = re2.compile(r"^\.[A-Z_]+$")
_WILDCARD = re2.compile(r"\$\(wildcard ([^$()]*)\)")
_CONTINUATION = re2.compile(r"[ \t]*\\\n[ \t]*")
_COMMENT = re2.compile(r"(?:^|[^\\])(#)")
_CONDITIONALS = ("ifeq", "ifneq", "ifdef", "ifndef")
_NAMES = re2.compile(r"^(?:[ \t]+[A-Za-z_][A-Za-z0-9_]*)+$")  # `export A B`: names, none computed


@dataclass
class _Makefile:
    """What the reader has read so far: variables (each with every value a branch may give it), targets' recipe
    lines and prerequisites, pattern rules' lines, what runs when make reads the file, and what it cannot read."""

    variables: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)
    prerequisites: dict[str, list[str]] = field(default_factory=dict)
    on_read: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    default_goal: str | None = None  # `.DEFAULT_GOAL`'s
    first: str | None = None  # the first target: make's goal when `.DEFAULT_GOAL` names none
    one_shell: bool = False
    exported: dict[str, None] = field(default_factory=dict)  # names `export` gives the recipes' programs, in order
    branch_depth: int = 0
    parentheses: int = _MOST_PARENTHESES  # what is left of `_MOST_PARENTHESES`

    def expanded(self, text: str, target: str = "", prerequisites: tuple[str, ...] = ()) -> list[str]:
        """Every way `text` reads with the file's variables set (each branch's value), an unset one empty as make
        reads it, `$(MAKE)` as `make`, `$@` as `target`, `$<` and `$^` as its prerequisites, `$$` as `$`; a
        function is left as written, for the judge (which holds what make or the shell computes when it runs).
        Bounded: more than `_MOST_WAYS` ways, or a way longer than `_LONGEST`, reads as a line that holds."""
        return _Expansion(self.variables, target, prerequisites).of(text, 0) or [_TOO_MUCH]

    def read_now(self, text: str, what: str) -> list[str]:
        """`text`, which make expands when it reads the file (an immediate assignment, a rule's targets and
        prerequisites, a conditional): its `$(shell ...)` commands run then, for every target, and are judged as
        lines; any other function that is not pure text holds the file."""
        ways = self.expanded(text)
        self.parentheses -= sum(way.count("(") + way.count(")") + way.count("{") + way.count("}") for way in ways)
        if self.parentheses < 0:  # each costs a step of `_calls`: a file of them is held, not read for seconds
            self.unread.append(f"the Makefile computes more than playbook reads ({_MOST_PARENTHESES} parentheses)")
            return ways
        for way in ways:
            for name, argument in _calls(way) if way != _TOO_MUCH else [("unread", "")]:
                if name == "unread":
                    self.unread.append(
                        f"{what} is more than playbook reads ({_MOST_CALLS} calls, {_LONGEST} characters)"
                    )
                elif name == "shell":
                    self.on_read.append(argument)
                elif name not in _PURE:
                    self.unread.append(f"{what} calls make's `{name}` when make reads the file")
        return ways

    def assign(self, assignment: Match, target: str | None = None) -> None:
        """A variable set, for the whole file or (`target`) for one target and what it makes."""
        modifiers, name, operator, value = (assignment.group(i) or "" for i in (1, 2, 3, 4))
        where = f"`{name}` (for `{target}`)" if target else f"`{name}`"
        if "unexport" in modifiers.split():
            self.unread.append(f"the Makefile takes {where} from the programs its recipes run")
            return
        if "export" in modifiers.split():
            self.exported[name] = None  # judged as a variable set before each command (`_environment`)
        if name == ".DEFAULT_GOAL" and target is None:
            goals = [w for way in self.read_now(value, where) for w in way.split()[:1]]
            self.default_goal = goals[0] if len(set(goals)) == 1 else None
            if len(set(goals)) != 1:
                self.unread.append("the default goal is known only when make runs")
            return
        if name in ("SHELL", ".SHELLFLAGS"):
            if not all(_admitted_shell(name, way) for way in self.read_now(value, where)):
                self.unread.append(f"the Makefile runs its recipes with {where} = `{value[:60]}`")
            return
        if name.startswith((".", "MAKE", "GNUMAKE", "MFLAGS")):
            self.unread.append(f"{where} changes how make reads the file or runs its recipes")
            return
        if operator == "!=":
            self.on_read.append(value)  # a shell assignment: the command runs when make reads the file
            values = [f"$(shell {value})"]
        elif operator in (":=", "::=", ":::="):
            if name not in self.variables and _names(value, name):
                self.unread.append(f"{where} extends a value the environment gives it")
                return
            values = self.read_now(value, where)
        else:
            values = [value]
        known = self.variables.get(name)
        if operator == "+=" and known:
            values = [f"{old} {new}" for old in known for new in values]
        elif operator == "?=" and known:
            values = known + values  # set only when unset: either may hold
        elif known and (target is not None or self.branch_depth):
            values = known + values  # a branch, or a target's own value, beside the file's
        self.variables[name] = list(dict.fromkeys(values))


class _Expansion:
    """One expansion of a text: variables' values expanded once each (a value that names another a thousand times,
    which names another, reads in time linear in the file), every way bounded."""

    def __init__(self, variables: dict[str, list[str]], target: str, prerequisites: tuple[str, ...]) -> None:
        self.variables, self.target, self.prerequisites = variables, target, prerequisites
        self.known: dict[str, list[str] | None] = {}

    def of(self, text: str, depth: int) -> list[str] | None:
        """Every way `text` reads, or None past the bounds."""
        ways: list[list[str]] = [[]]
        length = 0
        last = 0
        for match in _VARIABLE.finditer(text.replace("$$", "\0\0")):  # `$$` is a dollar for the shell
            values = self.values(match, depth)
            if values is None:
                return None
            literal = text[last : match.start()].replace("$$", "$")
            last = match.end()
            if len(values) == 1:
                for way in ways:
                    way += (literal, values[0])
            else:
                ways = [[*way, literal, value] for way in ways for value in values]
            length += len(literal) + max(map(len, values))
            if len(ways) > _MOST_WAYS or length > _LONGEST:
                return None
        tail = text[last:].replace("$$", "$")
        return list(dict.fromkeys("".join([*way, tail]) for way in ways))

    def values(self, match: Match, depth: int) -> list[str] | None:
        name, automatic = match.group(1), match.group(2)
        if automatic is not None:
            if automatic in "@*":
                return [self.target]
            return [" ".join(self.prerequisites[:1] if automatic == "<" else self.prerequisites)]
        if name in ("MAKE", "MAKE_COMMAND"):
            return ["make"]
        if name not in self.variables:
            return [""]  # unset, as make reads it: empty
        if depth >= _DEEP:
            return [match.group(0) or ""]  # left as `$(NAME)`: held
        if name not in self.known:
            self.known[name] = None  # a value that names itself reads as too much
            ways = [self.of(value, depth + 1) for value in self.variables[name]]
            found = [w for way in ways if way is not None for w in way]
            self.known[name] = None if None in ways or len(found) > _MOST_WAYS else list(dict.fromkeys(found))
        return self.known[name]


def _calls(text: str) -> list[tuple[str, str]]:
    """The make functions `text` calls, nested ones too, as (name, argument text), found in one pass; past
    `_MOST_CALLS`, or an argument longer than `_LONGEST`, a call `unread` stands for the rest."""
    found: list[tuple[str, str]] = []
    open_at: list[tuple[int, str]] = []  # where each open parenthesis's text starts (-1: not a `$(`), and its kind
    ends: list[tuple[int, int]] = []
    for match in _PARENTHESES.finditer(text):
        token = match.group(0)
        if token[0] == "$":
            open_at.append((match.end(), token[1]))
        elif token in "({":
            open_at.append((-1, token))
        elif open_at and _CLOSES[open_at[-1][1]] == token:
            start = open_at.pop()[0]
            if start >= 0:
                ends.append((start, match.start()))
    ends += [(start, len(text)) for start, _ in open_at if start >= 0]  # unclosed: make fails, but read it all
    for start, end in sorted(ends):
        # A window, not `match(text, start)`: re2 counts a position from the text's start (quadratic here).
        name = _CALL_NAME.match(text[start : start + 72])
        if name is None:
            continue  # a variable's name, no call
        if len(found) >= _MOST_CALLS or end - start > _LONGEST:
            return [*found, ("unread", "")]
        found.append((name.group(1), text[start + name.end() : end].strip()))
    return found


def _names(value: str, name: str) -> bool:
    """Whether `value` names the variable `name` (`PATH := ./bin:$(PATH)`)."""
    return f"$({name})" in value or f"${{{name}}}" in value


def _admitted_shell(name: str, value: str) -> bool:
    """A `SHELL` that is a known shell from the system's folders, `.SHELLFLAGS` that only stop on errors or trace
    (`core.recipes.shell_command`)."""
    try:
        words = shlex.split(value)
    except ValueError:
        return False
    return shell_command(["sh", *words] if name == ".SHELLFLAGS" else words)


def _logical_lines(text: str) -> list[str]:
    """`text`'s lines as make reads them: a line ending in an odd number of backslashes goes on into the next, kept
    as written (a backslash-newline) for the reader of each kind of line to join its own way."""
    lines: list[str] = []
    pending: list[str] = []
    for line in physical_lines(text):
        if (len(line) - len(line.rstrip("\\"))) % 2:
            pending.append(line)
            continue
        lines.append("\n".join([*pending, line]))
        pending = []
    if pending:
        lines.append("\n".join(pending))
    return lines


def _make_syntax(raw: str) -> str:
    """A line of make's own syntax as make reads it: each backslash-newline and the blanks around it one space, and
    a comment from the first `#` no backslash escapes (inside a function call too) taken off."""
    line = _CONTINUATION.sub(" ", raw)
    comment = _COMMENT.search(line)
    if comment is not None:
        line = line[: comment.start(1)]
    return line.replace("\\#", "#").strip()


def _read(text: str) -> _Makefile:
    """The Makefile `text`, line by line as make reads it."""
    made = _Makefile()
    current: list[str] = []
    defining: str | None = None
    body: list[str] = []
    for raw in _logical_lines(text):
        if defining is not None:
            if raw.strip() == "endef":
                made.variables[defining] = ["\n".join(body)]
                defining = None
            else:
                body.append(raw)
            continue
        if raw.startswith("\t") and current:
            # A recipe line goes to the shell as written, a backslash-newline in it too (a `#` comment ends at it),
            # less the tab that starts each of its lines.
            for target in current:
                made.lines.setdefault(target, []).append(raw[1:].replace("\\\n\t", "\\\n"))
            continue
        stripped = _make_syntax(raw)
        if not stripped or stripped.startswith("#"):
            continue
        word = stripped.split(maxsplit=1)[0]
        if word in ("define", "override", "export", "unexport", "private") and stripped.split()[1:2] == ["define"]:
            word = "define"
        if word == "define":
            words = stripped.split()
            name = words[-1] if words[-1] not in ("=", ":=", "::=", "?=", "+=", "!=") else words[-2]
            if "unexport" in words[: words.index("define")]:
                made.unread.append(f"the Makefile takes `{name}` from the programs its recipes run")
            elif "export" in words[: words.index("define")]:
                made.exported[name] = None
            if name in ("SHELL", ".SHELLFLAGS") or name.startswith((".", "MAKE", "GNUMAKE", "MFLAGS")):
                made.unread.append(f"`define {name}` changes how make reads the file or runs its recipes")
            defining, body, current = name, [], []
            continue
        current = _directive(made, stripped, word, current)
    if defining is not None:
        made.unread.append(f"`define {defining}` has no `endef`")
    return made


def _directive(made: _Makefile, stripped: str, word: str, current: list[str]) -> list[str]:
    """One line of the file outside a recipe; the targets the recipe lines after it belong to."""
    if word in _CONDITIONALS or (word == "else" and stripped.split()[1:2] and stripped.split()[1] in _CONDITIONALS):
        made.branch_depth += word != "else"
        made.read_now(stripped.split(maxsplit=2 if word == "else" else 1)[-1], f"`{word}`")
        return current  # a conditional inside a recipe chooses among its lines: both are read
    if word in ("else", "endif"):
        made.branch_depth = max(0, made.branch_depth - (word == "endif"))
        return current
    if word in ("include", "-include", "sinclude"):
        made.unread.append(f"the Makefile also reads `{stripped.partition(' ')[2][:60]}`")
        return []
    if word in ("vpath", "undefine"):
        return []
    if word == "export" and "=" not in stripped and _NAMES.match(stripped[len(word) :]):
        made.exported.update(dict.fromkeys(stripped.split()[1:]))  # what they hold, or the environment's own
        return []
    if word in ("load", "-load", "export", "unexport") and "=" not in stripped:
        # A bare `export` exports every variable; `unexport` takes one from the programs (a setting the user made).
        made.unread.append(f"`{stripped[:60]}` changes what make or its recipes run")
        return []
    colon, equals = stripped.find(":"), stripped.find("=")
    # An assignment has its `=` first, or right after its colons (`CC := gcc`, `X ?= a:b`); a rule its colon.
    if equals >= 0 and (colon < 0 or equals < colon or stripped[colon:equals].strip(":") == ""):
        if (assignment := _ASSIGN.match(stripped)) is not None:
            made.assign(assignment)
        else:
            made.unread.append(f"`{stripped[:60]}` is read only by make")
        return []
    if colon <= 0:
        made.read_now(stripped, "a line")  # `$(eval ...)`, `$(info ...)`: what make computes as it reads
        return []
    return _rule(made, stripped)


def _rule(made: _Makefile, stripped: str) -> list[str]:
    """A rule's line: its targets, their prerequisites (or a variable of their own), a recipe line after `;`."""
    targets_text, _, rest = stripped.partition(":")
    rest = rest.removeprefix(":")  # a double-colon rule
    targets = [t for way in made.read_now(targets_text, "a rule") for t in way.split()]
    own = _ASSIGN.match(rest.strip())
    if own is not None:
        for target in targets:
            made.assign(own, target)
        return []
    rest, _, inline = rest.partition(";")
    if ":" in rest:  # a static pattern rule: `$(OBJS): %.o: %.c`, made for its targets
        rest = rest.rpartition(":")[2]
    # Order-only prerequisites (after `|`) are made first too, when missing.
    prerequisites = [p for way in made.read_now(rest.replace("|", " "), "a rule") for p in way.split()]
    if any("$" in p for p in prerequisites):  # `.SECONDEXPANSION`: `$$(DEP)` is expanded once more
        prerequisites = [q for p in prerequisites for way in made.read_now(p, "a rule") for q in way.split()]
    current: list[str] = []
    for target in targets:
        if target in (".ONESHELL",):
            made.one_shell = True
        elif target in _SPECIAL:
            continue
        elif "%" in target or target == ".DEFAULT":
            current.append(FALLBACK)  # a pattern or `.DEFAULT`: what a target without a recipe runs
        elif _SPECIAL_SHAPE.match(target):
            made.unread.append(f"the Makefile's `{target}` changes how make runs its recipes")
        elif _SUFFIX_RULE.match(target):
            current.append(FALLBACK)  # a suffix rule, as a pattern
        else:
            if made.first is None and not (target.startswith(".") and "/" not in target):  # `./ship` is a goal
                made.first = target
            made.prerequisites.setdefault(target, []).extend(prerequisites)
            made.lines.setdefault(target, [])
            current.append(target)
    for target in current:
        if inline.strip():
            made.lines.setdefault(target, []).append(inline)
    return current


def makefile_recipes(text: str) -> list[Recipe]:
    """A Makefile's targets with their recipe lines (the `@`, `-` and `+` that only say how make runs a line taken
    off; one line of all of them under `.ONESHELL`), a line `make DEP` for each task a target depends on and the
    lines of each file it makes first, the default goal as the task "" (`make`), what runs when make reads the file
    and what it cannot read as every task's (`make:*`), and its pattern rules' lines as a fallback (`make:%`)."""
    made = _read(text)
    found: list[Recipe] = [(f"make:{EVERY}", line) for line in made.on_read]
    found += [unread("make", why) for why in dict.fromkeys(made.unread)]
    found += [(f"make:{EVERY}", line) for line in _environment(made, text)]
    fallback = _commands(made, FALLBACK, made.lines.get(FALLBACK, []) + _built_in_rules(made))
    found += [(f"make:{FALLBACK}", line) for line in fallback]
    goal = made.default_goal or made.first
    closures: dict[str, list[str]] = {}
    for target in made.lines:
        if target == FALLBACK:
            continue
        lines = _closure(made, target, fallback, closures, 0)
        found += [(f"make:{target}", line) for line in lines]
        if target == goal:
            found += [("make:", line) for line in lines]
        if len(found) > _MOST_RECIPES:
            return [unread("make", f"the Makefile runs more than {_MOST_RECIPES} recipe lines")]
    if goal is not None and goal not in made.lines:
        found.append(unread("make", f"the default goal `{goal[:40]}` is no target of the file"))
    return list(dict.fromkeys(found))


# Make's built-in rules (`make -p`): the programs they run and the flags they pass, each a variable a Makefile may
# set (`CC = ./tools/cc` runs for `test: helper.o` with no rule of its own), with make's default program.
_BUILT_IN = (
    ("CC", "cc", "$(CC) $(CPPFLAGS) $(CFLAGS) $(TARGET_ARCH) -c $(LDFLAGS) $(LDLIBS)"),
    ("CXX", "g++", "$(CXX) $(CPPFLAGS) $(CXXFLAGS) $(TARGET_ARCH) -c $(LDFLAGS) $(LDLIBS)"),
    ("CPP", "cc -E", "$(CPP) $(CPPFLAGS)"),
    ("AS", "as", "$(AS) $(ASFLAGS)"),
    ("AR", "ar", "$(AR) $(ARFLAGS)"),
    ("FC", "f77", "$(FC) $(FFLAGS) -c"),
    ("PC", "pc", "$(PC) $(PFLAGS) -c"),
    ("LEX", "lex", "$(LEX) $(LFLAGS)"),
    ("YACC", "yacc", "$(YACC) $(YFLAGS)"),
    ("LINT", "lint", "$(LINT) $(LINTFLAGS)"),
    ("RM", "rm -f", "$(RM)"),
    ("M2C", "m2c", "$(M2C) $(M2FLAGS)"),
    ("MAKEINFO", "makeinfo", "$(MAKEINFO)"),
    ("TEX", "tex", "$(TEX)"),
    ("CO", "co", "$(CO) $(COFLAGS)"),
    ("GET", "get", "$(GET) $(GFLAGS)"),
)
_REFERENCE = re2.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)")
# What the built-in rules expand: judged with them, not as environment.
_MAKE_ITSELF = frozenset(_REFERENCE.findall(" ".join(rule for _, _, rule in _BUILT_IN)))


def _built_in_rules(made: _Makefile) -> list[str]:
    """The built-in rules' lines whose program or flags the file sets (a program it leaves to make's default runs as
    make's own), for what a target without a recipe runs."""
    lines = []
    for program, default, rule in _BUILT_IN:
        if any(name in made.variables for name in _REFERENCE.findall(rule)):
            lines.append(rule if program in made.variables else rule.replace(f"$({program})", default, 1))
    return lines


def _environment(made: _Makefile, text: str) -> list[str]:
    """The variables the file gives its recipes' programs, each judged as a variable set before a command
    (`NAME=value true`, its value as make expands it), where only those known to choose a mode, a format or a
    project folder pass: those it exports, those the environment gives every program (`PROGRAM_SETTINGS`: make
    gives the file's value instead, `PATH = tools/bin:/usr/bin`), and any it sets and never expands, whose only
    use is that."""
    expanded = set(_REFERENCE.findall(text.replace("$$", "")))
    lines = []
    for name, values in made.variables.items():
        given = name in made.exported or PROGRAM_SETTINGS.match(name) is not None
        if not given and (name in expanded or name in _MAKE_ITSELF):
            continue
        ways = [way for value in values[:_MOST_WAYS] for way in made.expanded(value)]
        lines += [f"{name}={shlex.quote(way)} true" for way in dict.fromkeys(ways[:_MOST_WAYS])]
    return lines


def _commands(made: _Makefile, target: str, lines: list[str]) -> list[str]:
    """`lines` of `target`'s recipe as the shell gets them, every way the file's variables read."""
    prerequisites = tuple(made.prerequisites.get(target, ()))
    commands = [
        way.lstrip("@-+ \t") for line in _bounded(lines) for way in made.expanded(line.strip(), target, prerequisites)
    ]
    commands = [_WILDCARD.sub(r"\1", c) for c in commands if c]  # the files a glob names, as the shell's glob
    if made.one_shell and len(commands) > 1:
        return ["\n".join(commands)]  # one shell for the whole recipe: a `cd` carries to the lines after it
    return commands


def _closure(
    made: _Makefile, target: str, fallback: list[str], closures: dict[str, list[str]], depth: int
) -> list[str]:
    """What `target` runs: `make DEP` for a task it depends on (the judge reads that task's recipe), the lines of a
    file it makes first (and of those it makes first, `_DEEP` files deep), its own lines, and the pattern rules'
    once for a prerequisite no rule of the file makes. Each target's is found once (`closures`): a file of many
    targets that share prerequisites reads in time linear in it."""
    if target in closures:
        return closures[target]
    closures[target] = []  # a prerequisite that leads back here adds nothing, as make drops a circular one
    found: list[str] = []
    unmade = False
    for dep in made.prerequisites.get(target, ()):
        if dep in made.lines and TASK_NAME.match(dep):
            found.append(f"make {dep}")
        elif dep in made.lines and depth >= _DEEP:
            found.append(f"$(unread: files made first more than {_DEEP} deep)")
        elif dep in made.lines:
            found += _closure(made, dep, fallback, closures, depth + 1)
        else:
            unmade = True
        if len(found) > _MOST_LINES:
            break
    found += (fallback if unmade else []) + _commands(made, target, made.lines.get(target, []))
    closures[target] = _bounded(list(dict.fromkeys(found)))
    return closures[target]


def _bounded(lines: list[str]) -> list[str]:
    """`lines`, or as many as are read and a line that holds the task: what is past them is not judged."""
    if len(lines) <= _MOST_LINES:
        return lines
    return [*lines[:_MOST_LINES], f"$(unread: a recipe of more than {_MOST_LINES} lines)"]
