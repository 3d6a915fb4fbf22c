"""What Claude Code's hooks decide, from the snapshot's plain values: which entries the holdout keeps from a session,
which guards a shell command sets off, and which entries a prompt calls up.

Hooks run on every session start, prompt and shell call, so this module imports the standard library only (no
model classes, no parser with a compiled grammar): a hook's process starts, answers and ends in milliseconds. A
command line is split by `shlex` (the standard library's shell lexer) into simple commands; a line it cannot read
sets off no guard (a guard only adds context or, for a rule the user made hard, refuses a call: reading too little
is the safe side). Pure: values in, values out.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import math
import posixpath
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from core.projects import project_of

__all__ = [
    "SESSION_ID",
    "Given",
    "Simple",
    "applies",
    "build_index",
    "fires",
    "for_project",
    "guard_answer",
    "held_out",
    "markdown",
    "prompt_context",
    "prompt_entries",
    "simple_commands",
    "start_context",
    "terms",
]

# The shape of a session id a hook or the ledger accepts (anything else is not a session of Claude Code's).
SESSION_ID = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"

_SEPARATORS = frozenset({"&&", "||", ";", "&", "|", "|&", "\n", "(", ")", ";;"})
_REDIRECTS = frozenset({">", ">>", "<", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|"})
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_TERM_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.+-")
# Words too common to tell one lesson from another.
_STOP = frozenset(
    "a an and are as at be but by do does for from has have here how i if in into is it its me my no not of on or"
    " our run so that the their then there these this to us use was we what when which will with you your".split()
)
MAX_LINE = 4000  # a longer command line is data, not a command a lesson names


def held_out(session_id: str, playbook: str, entry_id: str, share: float) -> bool:
    """True when `entry_id` is left out of this session: a hash of the three, uniform on [0, 1), below `share`.
    The same session always gets the same answer (a resumed or compacted session sees what it saw)."""
    if share <= 0:
        return False
    digest = hashlib.sha256(f"{session_id}\x00{playbook}\x00{entry_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


class Simple(NamedTuple):
    """One simple command of a line: its words (the program's name without its folder first), the folder a `cd`
    before it in the line moved to (None: it did not), the program a pipe hands its output to, and the text a here
    document feeds it (`python3 - <<'EOF'`; None: none)."""

    words: tuple[str, ...]
    folder: str | None = None
    piped_into: str | None = None
    stdin: str | None = None


def _delimiter(line: str, i: int) -> tuple[str, int]:
    """The here document's delimiter word that starts at `i` (quotes removed), and where it ends."""
    if i < len(line) and line[i] in "'\"":
        end = line.find(line[i], i + 1)
        end = len(line) if end < 0 else end
        return line[i + 1 : end], end + 1
    j = i
    while j < len(line) and line[j] not in " \t\n;&|<>()":
        j += 1
    return line[i:j].replace("\\", "").replace("'", "").replace('"', ""), j


def _here_documents(line: str) -> tuple[str, list[str]]:
    """The line as commands without their here documents' text, each unquoted line break a `;` (where a command
    ends: not after `&&`, `|` ...) and comments dropped; and the here documents' texts in order. The shell's own
    rule: a document starts on the line after its `<<WORD` and ends at a line that is WORD (`<<-`: after tabs)."""
    if "\n" not in line and "<<" not in line and "#" not in line:
        return line, []  # most lines: nothing to read apart
    out: list[str] = []
    last = ""  # the last character written that is no blank: where a line break ends a command (kept as written,
    # since reading it back from `out` at each line break would cost the line's length each time)
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []  # (delimiter, tabs stripped)
    quote: str | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote is not None:  # inside quotes: only the closing quote (and, in double quotes, an escape) counts
            step = 2 if quote == '"' and c == "\\" else 1
            out.append(line[i : i + step])
            last = line[i : i + step][-1]
            quote = None if c == quote else quote
            i += step
            continue
        if c == "\\":
            if line[i + 1 : i + 2] != "\n":  # an escaped line break joins two lines
                out.append(line[i : i + 2])
                last = line[i + 1 : i + 2] or "\\"
            i += 2
        elif c in "'\"":
            quote = c
            out.append(c)
            last = c
            i += 1
        elif c == "#" and (not out or out[-1][-1:] in " \t\n;&|()"):
            end = line.find("\n", i)
            i = n if end < 0 else end
        elif line.startswith("<<", i) and not line.startswith("<<<", i):
            j = i + 2
            strip = line[j : j + 1] == "-"
            j += strip
            while j < n and line[j] in " \t":
                j += 1
            word, j = _delimiter(line, j)
            if word:
                pending.append((word, strip))
            out.append(line[i:j])
            last = line[i:j].rstrip(" \t")[-1:] or last
            i = j
        elif c == "\n":
            out.append(" " if last in ("", "|", "&", ";", "(") else " ; ")
            last = last if last in ("", "|", "&", ";", "(") else ";"
            i += 1
            for word, strip in pending:
                body: list[str] = []
                while i < n:
                    end = line.find("\n", i)
                    end = n if end < 0 else end
                    text, i = line[i:end], end + 1
                    if (text.lstrip("\t") if strip else text) == word:
                        break
                    body.append(text)
                bodies.append("\n".join(body))
            pending = []
        else:
            out.append(c)
            last = last if c in " \t" else c
            i += 1
    bodies += ["" for _ in pending]  # a document the line never ends: nothing of it was read
    return "".join(out), bodies


def simple_commands(line: str) -> list[Simple]:
    """The simple commands of a shell line, split at `&&`, `||`, `;`, `&`, pipes and line breaks; environment
    assignments, redirections and comments dropped; a here document's text kept as what its command reads; `cd DIR`
    taken as where the rest runs. Empty when the lexer cannot read the line."""
    if len(line) > MAX_LINE:
        return []
    commands, bodies = _here_documents(line)
    lexer = shlex.shlex(commands, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote
        return []
    if sum(t == "<<" for t in tokens) != len(bodies):
        bodies = []  # read apart from the lexer: no command is given a document it may not read
    groups: list[tuple[list[str], str | None, str | None]] = []  # (words, the separator after them, a document)
    words: list[str] = []
    stdin: str | None = None
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        if token in _SEPARATORS:
            groups.append((words, token, stdin))
            words, stdin = [], None
        elif token in _REDIRECTS or (token[:1] in "<>&" and set(token) <= set("<>&|")):
            if words and words[-1].isdigit():  # `2>&1`: the descriptor is the redirection's, not an argument
                words.pop()
            if token == "<<" and bodies:
                stdin = bodies.pop(0)
            skip = True  # its target follows
        elif not words and _assignment(token):
            continue
        else:
            words.append(token)
    groups.append((words, None, stdin))
    found: list[Simple] = []
    folder: str | None = None
    for i, (group, after, text) in enumerate(groups):
        if not group:
            continue
        if group[0] == "cd":  # `cd a && cd b`: in a/b, as the stored actions read it
            target = group[1] if len(group) > 1 else None
            folder = posixpath.normpath(posixpath.join(folder, target)) if folder and target else target
            continue
        piped = None
        if after in ("|", "|&") and i + 1 < len(groups) and groups[i + 1][0]:
            piped = posixpath.basename(groups[i + 1][0][0])
        found.append(Simple((posixpath.basename(group[0]), *group[1:]), folder, piped, text))
    return found


def _assignment(token: str) -> bool:
    """`NAME=value` before a command: an environment assignment, not its program."""
    name, equals, _ = token.partition("=")
    return bool(equals and name) and not name[0].isdigit() and set(name) <= _NAME_CHARS


def _starts(words: Sequence[str], prefix: Sequence[str]) -> bool:
    return len(words) >= len(prefix) and tuple(words[: len(prefix)]) == tuple(prefix)


def _holds(words: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return n == 0 or any(tuple(words[i : i + n]) == tuple(part) for i in range(len(words) - n + 1))


def _inside(folder: str | None, cwd: str, want: str) -> bool:
    """True when a command run after `cd folder` (None: no cd) from `cwd` runs in a folder named by `want`
    (`assets`, `web/assets`)."""
    where = posixpath.normpath(posixpath.join(cwd or "/", folder)) if folder else posixpath.normpath(cwd or "/")
    want = want.strip("/")
    return where == want or where.endswith("/" + want)


def fires(guard: Mapping[str, Any], command: str | Sequence[Simple], cwd: str) -> bool:
    """True when `guard` (a compiled command lesson, `core.guards`) is set off by the shell line `command` (or its
    `simple_commands`) run in `cwd`: one simple command starts with its words, holds its `contains` words, is not
    the complying `unless` form, runs outside its `folder` (a folder lesson), and is piped into its `piped_into`
    (a hidden failure)."""
    words = tuple(guard.get("words") or ())
    if not words:
        return False
    for simple in simple_commands(command) if isinstance(command, str) else command:
        if not _starts(simple.words, words) or not _holds(simple.words[len(words) :], guard.get("contains") or ()):
            continue
        unless = guard.get("unless")
        if unless and _starts(simple.words, unless):
            continue
        folder = guard.get("folder")
        if folder and _inside(simple.folder, cwd, folder):
            continue
        piped = guard.get("piped_into")
        if piped and simple.piped_into != piped:
            continue
        imports = guard.get("imports")
        if imports is not None and not _may_import(simple, imports, cwd):
            continue
        return True
    return False


def _python(program: str) -> bool:
    """`python`, `python3`, `python3.12`: CPython's own command names."""
    version = program.removeprefix("python")
    return version != program and all(c.isdigit() or c == "." for c in version)


def _python_runs(words: Sequence[str]) -> tuple[str, str] | None:
    """What a Python command line runs, as CPython reads its options: ("code", text) for `-c`, ("module", name)
    for `-m`, ("script", path) for a file, ("stdin", "") when it reads its program from its input; None when it
    runs nothing (`--version`, `-h`)."""
    i = 1
    while i < len(words):
        word = words[i]
        if word == "-":
            return "stdin", ""
        if word == "--" or not word.startswith("-"):
            script = words[i + 1] if word == "--" and i + 1 < len(words) else word
            return ("script", script) if script != "--" else ("stdin", "")
        if word.startswith("--"):
            if word in ("--version", "--help", "--help-all", "--help-env", "--help-xoptions"):
                return None
            i += 2 if word == "--check-hash-based-pycs" else 1
            continue
        for j, option in enumerate(word[1:], 1):
            if option in "cm":  # the rest of the word, or the next one, is its value; options end here
                value = word[j + 1 :] or (words[i + 1] if i + 1 < len(words) else None)
                if value is None:
                    return None
                return ("code" if option == "c" else "module", value)
            if option in "WX":
                i += 0 if word[j + 1 :] else 1  # its value is the rest of the word, or the next one
                break
            if option in "hV?":
                return None
        i += 1
    return "stdin", ""


def _needs(module: str, imports: Sequence[str]) -> bool:
    """True when importing `module` can need one of `imports`: it is one, or lies outside the standard library
    (a package of the project's or anyone's, which may import them in turn)."""
    top = module.split(".")[0]
    return top in {m.split(".")[0] for m in imports} or top not in sys.stdlib_module_names


def _imported(code: str) -> list[str] | None:
    """The modules Python code imports (`import a.b`, `from a import b`, `__import__("a")`,
    `importlib.import_module("a")`), read by Python's own parser; None when it is not Python."""
    import ast  # only a module fact's guard reads code: the other hooks do not pay for the parser

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                found.append(node.args[0].value)
    return found


def _project_file(path: str, folder: str | None, cwd: str) -> bool:
    """True when `path`, run after `cd folder` (None: no cd) from `cwd`, is a file inside `cwd`, the project (a
    scratch file elsewhere, `/tmp/scan.py`, is the agent's own; a path the shell would expand is not read)."""
    if path.startswith(("~", "$")) or (folder or "").startswith(("~", "$")):
        return False
    root = posixpath.normpath(cwd or "/")
    where = posixpath.normpath(posixpath.join(root, folder or "", path))
    return where == root or where.startswith(root.rstrip("/") + "/")


def _may_import(simple: Simple, imports: Sequence[str], cwd: str) -> bool:
    """True when the call `simple` can need a module its program lacks (`imports`, or any the standard library does
    not hold): Python code it is given imports one (`-c`, a here document), `-m` runs one, it runs a file of the
    project's (which may import anything), or what it runs cannot be seen (its input from a pipe). Code that does not
    parse cannot run: it needs nothing. Another language's code is not read here: its call needs nothing only when
    it runs a file outside the project (a scratch script)."""
    if not _python(simple.words[0]):
        script = simple.words[1] if len(simple.words) > 1 else "-"
        return script.startswith("-") or _project_file(script, simple.folder, cwd)
    runs = _python_runs(simple.words)
    if runs is None:
        return False
    kind, value = runs
    if kind == "module":
        return _needs(value, imports)
    if kind == "script":
        return _project_file(value, simple.folder, cwd)
    code = value if kind == "code" else simple.stdin
    if code is None:
        return True  # a program read from a pipe or a file: it may import anything
    modules = _imported(code)
    return modules is not None and any(_needs(m, imports) for m in modules)


def terms(text: str) -> list[str]:
    """The words a prompt and an entry are compared by: lower case, letters and digits (a file or command name
    keeps its dots and dashes), without the most common words."""
    found: list[str] = []
    for run in "".join(c if c in _TERM_CHARS else " " for c in text.lower()).split():
        word = run.strip("_.+-")
        if len(word) > 1 and word not in _STOP:
            found.append(word)
    return found


def prompt_entries(
    index: Mapping[str, Any], prompt: str, *, most: int, least_score: float = 1.0
) -> list[tuple[int, float]]:
    """The entries (their positions in the index) that `prompt` calls up, best first, at most `most`: BM25 (k1 1.2,
    b 0.75) over each entry's terms, `index` as `core.guards.prompt_index` builds it; an entry below `least_score`
    is not called up (a prompt that shares one common word with it)."""
    postings: Mapping[str, Sequence[int]] = index.get("postings") or {}  # term -> [position, tf, position, tf, ...]
    lengths: Sequence[int] = index.get("lengths") or []
    n = len(lengths)
    if not n:
        return []
    average = sum(lengths) / n or 1.0
    scores: dict[int, float] = {}
    for term in set(terms(prompt)):
        hits = postings.get(term) or ()
        if not hits:
            continue
        found = len(hits) // 2
        idf = math.log(1 + (n - found + 0.5) / (found + 0.5))
        for position, tf in zip(hits[::2], hits[1::2], strict=True):
            norm = tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[position] / average))
            scores[position] = scores.get(position, 0.0) + idf * norm
    # The best `most` of thousands of scored entries (a common word calls up most of a large playbook): a heap's
    # pick, not a sort of them all; the same order (score down, position up).
    return heapq.nsmallest(most, ((p, s) for p, s in scores.items() if s >= least_score), key=lambda x: (-x[1], x[0]))


def build_index(texts: Iterable[str]) -> dict[str, Any]:
    """The BM25 index of `texts` (an entry's text and its triggers), in positions of their order: each term's
    postings as one flat list of (position, count) pairs (a snapshot that loads fast)."""
    postings: dict[str, list[int]] = {}
    lengths: list[int] = []
    for position, text in enumerate(texts):
        found = terms(text)
        lengths.append(len(found))
        counts: dict[str, int] = {}
        for t in found:
            counts[t] = counts.get(t, 0) + 1
        for t, tf in counts.items():
            postings.setdefault(t, []).extend((position, tf))
    return {"postings": postings, "lengths": lengths}


class Given(NamedTuple):
    """What one session got of one playbook through one hook: the entries given, and those the holdout kept out."""

    playbook: str
    version: int
    shown: list[str]
    held_out: list[str]

    def line(self) -> dict[str, Any]:
        """As the ledger writes it."""
        return {"playbook": self.playbook, "version": self.version, "shown": self.shown, "held_out": self.held_out}


def applies(playbook: Mapping[str, Any], cwd: str) -> bool:
    """True when a session in `cwd` should get `playbook` (a snapshot's playbook): a bound playbook's globs take
    the project's folder name or its path; the global one beside bound ones takes what their globs do not."""
    project = project_of(cwd)

    def hit(globs: Sequence[str]) -> bool:
        return any(fnmatchcase(v, g) for g in globs for v in (project, cwd) if v)

    if playbook.get("globs"):
        return hit(playbook["globs"])
    return not hit(playbook.get("other_globs") or []) if playbook.get("everywhere_else") else True


def for_project(bound: Mapping[str, str], entry_id: str, project: str) -> bool:
    """Whether an agent working on `project` should have the entry: another project's facts ("In api: run the
    tests with `make test`") are noise in its context. `bound`: entry id -> the one project it is about."""
    return bound.get(entry_id, project) == project


def markdown(title: str, sections: Mapping[str, Sequence[tuple[str, str]]]) -> str:
    """The entries as `core.markdown.to_markdown` writes them without counters: the title, one `##` heading per
    section with entries, one bullet per entry with its id."""
    lines = [f"# {title}", ""]
    for section, items in sections.items():
        if not items:
            continue
        lines += [f"## {section}", ""]
        lines += [f"- **[{name}]** {text}" for name, text in items]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _entries(playbook: Mapping[str, Any], cwd: str, most: int | None = None) -> list[tuple[str, str, str]]:
    """(section, id, text) of the playbook's entries a session in `cwd` may have (its project's or anyone's): the
    first `most` of them, when given (the digest reads no further than it needs)."""
    here = project_of(cwd)
    bound = playbook.get("projects") or {}
    found = (
        (section, entry["name"], entry["text"])
        for section, entry in playbook.get("entries") or []
        if for_project(bound, entry["name"], here)
    )
    return list(itertools.islice(found, most))


def _digest_size(snapshot: Mapping[str, Any]) -> int:
    return int(snapshot.get("digest_entries") or 12)


def start_context(
    snapshot: Mapping[str, Any], session_id: str, cwd: str, *, digest: bool = False
) -> tuple[str, list[Given]]:
    """What a starting session gets: its project's playbooks without the entries held out of it, the whole
    playbook or (`digest`, when the prompt hook gives the rest as prompts call them up) the first
    `digest_entries` of each that are for this project (the export's order: the most useful first); and what it
    got of each playbook. An empty text when nothing applies."""
    share = float(snapshot.get("holdout") or 0.0)
    got: list[Given] = []
    parts: list[str] = []
    for pb in snapshot.get("playbooks") or []:
        if not applies(pb, cwd):
            continue
        relevant = _entries(pb, cwd, _digest_size(snapshot) if digest else None)
        held = [name for _, name, _ in relevant if held_out(session_id, pb["name"], name, share)]
        kept: dict[str, list[tuple[str, str]]] = {}
        for section, name, text in relevant:
            if name not in held:
                kept.setdefault(section, []).append((name, text))
        got.append(Given(pb["name"], int(pb["version"]), [n for v in kept.values() for n, _ in v], held))
        if kept:
            parts.append(markdown(f"Lessons from past sessions (`{pb['name']}`)", kept))
    return "\n\n".join(parts), got


def prompt_context(snapshot: Mapping[str, Any], session_id: str, cwd: str, prompt: str) -> tuple[str, list[Given]]:
    """The entries `prompt` calls up (not those the session's digest gave at its start), within the snapshot's
    `prompt_entries` and `prompt_chars`, without those held out of the session; and what it got."""
    share = float(snapshot.get("holdout") or 0.0)
    most = int(snapshot.get("prompt_entries") or 5)
    room = int(snapshot.get("prompt_chars") or 1600)
    got: list[Given] = []
    lines: list[str] = []
    for pb in snapshot.get("playbooks") or []:
        if not applies(pb, cwd):
            continue
        entries = pb.get("entries") or []
        here = project_of(cwd)
        bound = pb.get("projects") or {}
        digest = {name for _, name, _ in _entries(pb, cwd, _digest_size(snapshot))}
        shown: list[str] = []
        held: list[str] = []
        for position, _score in prompt_entries(pb.get("index") or {}, prompt, most=most):
            _section, entry = entries[position]
            name, text = entry["name"], entry["text"]
            if name in digest or not for_project(bound, name, here):
                continue
            if held_out(session_id, pb["name"], name, share):
                held.append(name)
                continue
            line = f"- **[{name}]** {text}"
            if len(line) > room:
                break
            room -= len(line) + 1
            shown.append(name)
            lines.append(line)
        if shown or held:
            got.append(Given(pb["name"], int(pb["version"]), shown, held))
    text = "Lessons from past sessions about this request:\n\n" + "\n".join(lines) + "\n" if lines else ""
    return text, got


def guard_answer(
    snapshot: Mapping[str, Any], session_id: str, cwd: str, command: str
) -> tuple[str | None, str, list[Given]]:
    """The guards `command` sets off in a session in `cwd`: ("deny", reason) when one is a hard rule, (None,
    context) for the lessons of the others, and what the session got; guards of entries held out of the session
    stay silent and are recorded as held out."""
    share = float(snapshot.get("holdout") or 0.0)
    here = project_of(cwd)
    simples = simple_commands(command)
    programs = {s.words[0] for s in simples}
    got: list[Given] = []
    deny: list[str] = []
    soft: list[str] = []
    for pb in snapshot.get("playbooks") or []:
        if not applies(pb, cwd):
            continue
        bound = pb.get("projects") or {}
        shown: list[str] = []
        held: list[str] = []
        for guard in pb.get("guards") or []:
            name = guard["entry"]
            if (guard.get("words") or [""])[0] not in programs or name in shown or name in held:
                continue  # a guard names its program first: the others cannot fire
            if not for_project(bound, name, here) or not fires(guard, simples, cwd):
                continue
            if held_out(session_id, pb["name"], name, share):
                held.append(name)
                continue
            shown.append(name)
            (deny if guard.get("hard") else soft).append(f"[{name}] {guard['text']}")
        if shown or held:
            got.append(Given(pb["name"], int(pb["version"]), shown, held))
    if deny:
        return "deny", "A rule of this project (playbook): " + " ".join(deny), got
    if soft:
        return None, "A lesson from past sessions (playbook) about this command: " + " ".join(soft), got
    return None, "", got
