"""The screen: only what is known to be safe reaches an agent's context.

Transcripts hold web pages, tool output and text written by strangers, and a lesson is loaded by every agent at
the start of every session (the "rules file backdoor" / memory-poisoning class). A list of bad strings always misses
the next spelling, so the screen decides what is *admitted*, and an entry that is not admitted is **held**: never
exported, listed by `playbook review` with the rule that held it, released only by an explicit approval of that
very text (`playbook review --release ID`). An entry is admitted when, after NFKC and without the characters no one
sees (`core.invisible.normalise`):

- every command in a code span is admitted by the allow-list (`core.allowlist`: parsed by the shell's grammar,
  known programs, no pipe into an interpreter, no substitution, nothing outside the project, no bypass flag, no
  named install, links only to vouched hosts); a single word in backticks is a name (`.nvmrc`, `$TOKEN`, a flag),
  checked as a path, a flag and a link;
- its prose holds no shell syntax (`|`, `$(`, `\\`, `<(`), no flag and no path outside the project: a command
  belongs in a code span, where it is checked;
- its links lead to hosts the lesson may name: none in a keyless lesson; loopback or a host the user's own prompts
  named in a model's (`core.links`: parsed as a browser does, compared in IDNA form);
- no word mixes scripts, every script is one the user's own prompts use, and it is written in English or a
  language the user writes in (`core.language`);

and, as a second line behind the allow-list, no phrase in it (or across it and the entry next to it) speaks to the
agent over the user's head or names a credential store. What it rests on counts too: its only support is text the
agent read (`tainted`), in a shared playbook fewer than `min_contributors` contributors support it (`quorum`), or
every session behind it was withdrawn by its contributor (`withdrawn`). Pure functions: the store supplies what the
user vouches for (`Vouched`), the support and the releases.
"""

from __future__ import annotations

import html
from dataclasses import replace
from typing import Literal

import re2
from pydantic import BaseModel

from core.allowlist import (
    CommandRule,
    Refusal,
    Vouched,
    bypass_flag,
    command_refusals,
    is_program,
    link_refusals,
    path_refusal,
)
from core.code_spans import SYSTEM_ROOTS, code_expression, code_refusals, fenced_refusals
from core.dockerfile import DOCKERFILE_FENCES
from core.fenced_code import FENCED_LANGUAGES
from core.invisible import normalise
from core.language import (
    is_english_function_word,
    is_function_word,
    language_of,
    mixed_words,
    reads_as_english,
    scripts_of,
)
from core.lessons import quoted, untrusted_parts
from core.links import HOST_PATTERNS, bare_hosts, defanged, find_links, without_documents
from core.patterns import AnyOf
from core.phrases import Reading, phrase_reading
from core.prose_commands import (
    ADVERBS,
    CLAUSE_START,
    TASK_RUNNERS,
    WORD_BREAKS,
    command_word,
    named_command,
    prose_programs,
    sentence_program,
)
from core.quote_words import quote_hold
from core.reading import skeleton, spelled_out, unemphasised
from core.safeguard_talk import safeguard_refusals

__all__ = ["MAX_SCREENED", "SCREEN_VERSION", "Hold", "HoldRule", "Vouched", "reading_holds", "text_holds"]

# A command's rules, then what only a whole text or a team's record can break.
HoldRule = Literal[
    CommandRule,
    "script",
    "language",
    "override",
    "credential",
    "safeguard",
    "wording",
    "tainted",
    "quorum",
    "withdrawn",
]

# Shell syntax that has no business in a sentence; arrows and comparisons (`->`, `>=`) are prose.
_PROSE_SHELL = re2.compile(r"\||\\|\$[({A-Za-z_]|[<>]\(|&&|[{}]|(?:^|[^-=<>])[<>](?:[^=-]|$)")
# A comparison in a sentence ("functions < 50 lines", "at most > 3"): `<` or `>` before a number.
_COMPARISON = re2.compile(r"^\s?[<>]\s?\d")
_PROSE_FLAG = re2.compile(r"(?:^|[\s(\"'])(--?[A-Za-z][\w-]*)")
_PROSE_PATH = re2.compile(r"(?:^|[\s(\"'=:])((?:~|/|\$HOME|%[A-Z]+%|[A-Za-z]:\\)[^\s,;)\"']*|\.[A-Za-z][\w.-]*)")
_PROSE_ASSIGNMENT = re2.compile(r"(?:^|[\s(\"'])([A-Z][A-Z0-9_]*=[^\s,;)]*)")
_PROSE_PRIVILEGE = re2.compile(r"(?i)(?:^|\W)(sudo|doas|pkexec|runas|gsudo)(?:\W|$)")
# The marks a sentence must hold for any of the patterns above to find something in it, as one pattern searched in
# its UTF-8 bytes (no offsets turned): most sentences hold none, and one pass over them says so.
_PROSE_MARKS = AnyOf(_PROSE_SHELL, _PROSE_FLAG, _PROSE_PATH, _PROSE_ASSIGNMENT, _PROSE_PRIVILEGE)
# Those marks and every link or host (`core.links`): a sentence that holds none of them (most) is read for the
# programs it names and nothing else.
_PROSE_QUIET = AnyOf(*HOST_PATTERNS, _PROSE_MARKS.source)
_CLAUSE_END = re2.compile(r"[;,)]|[.!?](?:\s|$)")
# A negation right before a flag or a span, and nothing twisting it after ("unless", "then use it"): a prohibition.
_NEGATIONS = re2.compile(r"(?i)\b(?:never|not|no|don'?t|dont|without|avoid|instead\s+of|rather\s+than)\b")
_PROHIBITION = re2.compile(
    r"(?i)(?:^|\W)(?:never|do not|don't|dont|avoid|without|rather than|instead of|not|no)(?:\s+[\w'-]+){0,4}\s*$"
)
# A negation that asks for the thing ("never forget X", "don't hesitate to use X", "do not skip X").
_NEGATED_DUTY = re2.compile(
    r"(?i)\b(?:never|not|no|don'?t|dont)\s+(?:forget|hesitate|fail|neglect|omit|miss|skip|stop|leave\s+out)"
)
# What turns a prohibition into a permission ("Never use X unless ...", "... when CI is green", "then use it").
_TWIST = re2.compile(
    r"(?i)\b(?:unless|except|but|then|however|otherwise|fine|okay|ok|allowed|if|when|whenever|while|until|once"
    r"|as\s+long\s+as|only|more\s+than|after)\b"
)
# Past a `;` a new clause begins: a time or a condition there ("; ask the user when a command needs approval") is its
# own, but a word that permits or excepts ("; it is fine on your own branches") still twists the prohibition.
_TWIST_ACROSS = re2.compile(r"(?i)\b(?:unless|except|but|however|otherwise|fine|okay|ok|allowed)\b")
# ... and so does a time or a condition whose clause names the act again ("; when the hook is slow, use it").
_NAMED_AGAIN = re2.compile(r"(?i)\b(?:it|them|that|this|one)\b")
# A single word in backticks right after one of these is a command to run ("run `reboot`"), not a name.
_RUN_VERB = re2.compile(r"(?i)\b(?:run|runs|running|execute|exec|type|call|invoke|launch|start)\s*$")
_NAME = re2.compile(r"^[\w.@/+#%,~:=-]+$")
# Runners that, named alone, run the project's default task (`make`, `tox`, `./gradlew`): a lesson that names one
# ("run the tests with `tox`") tells an agent to run what the project's files make that default.
_DEFAULT_RUNNERS = TASK_RUNNERS | {"gmake", "tox", "gradlew", "mvnw"}
# A span whose first word has parentheses or ends in a colon, and no shell syntax anywhere, is words
# (`feat(api): add paging`), not a command.
_PROSE_HEAD = re2.compile(r"[()]|:$")
_SHELL_CHARS = re2.compile(r"[|&;<>$`'\"\\]")
_COMMENT_MARKS = ("// ", "# ", "/* ", "-- ", "; ", "<!-- ")
# A placeholder a lesson writes in a command (`bd close <id>`): a word to the shell, not a redirection.
_PLACEHOLDER_WORD = re2.compile(r"<[A-Za-z][\w.-]*>")
# A variable set, named alone in a span (`GIT_SSL_NO_VERIFY=true`).
_SETTING = re2.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
# A setting in code rather than the shell's: a name that is no environment variable's (not all capitals) set with
# `=` (`verify=True`), or any name set with spaces around `=` or after `:` (`DEBUG = False`, `strict: true`), which the
# shell never reads as an assignment, to a plain value. What turns a safeguard off is the second line's to read
# (`core.phrases`: `verify=False` is held there, whatever the case of its name).
_CODE_SETTING = re2.compile(
    r"^(?:[a-z_][A-Za-z0-9_.]*[a-z][A-Za-z0-9_.]*=|[A-Za-z_][\w.]*(?:\s+=\s*|\s*=\s+|:\s+))"
    r"(?i:true|false|none|null|nil|yes|no|on|off|-?\d+(?:\.\d+)?|\"[\w.-]*\"|'[\w.-]*')$"
)
# A web route as a span writes it: segments of letters, digits, `-`, `_`, `.`, `{}` and `:` parameters, no dot
# segment (`/..`, `/.ssh`).
_ROUTE = re2.compile(r"^(?:/[A-Za-z0-9_{:][\w{}:.-]*)+/?$")
# What separates a sentence's words for reading commands in it: RE2's \s, and the marks that end a clause.
_VARIABLE = re2.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
_PLACEHOLDER = ("...", "…")
# Bumped whenever a rule of the screen changes what it admits or what a hold says: a verdict a run kept for the next
# (`screen_verdicts`, `core.store.screen_verdicts`) is read again only under the same version (and the same code).
SCREEN_VERSION = 8  # 8: a task runner runs a routine or a task the project declares
# A text longer than this is no lesson (entries are cut at `max_entry_chars`, 500 by default): held unread, so no
# text makes the screen take long.
MAX_SCREENED = 2000
# How much of a sentence around a span or a flag says whether it is prohibited (a clause, bounded: a long text
# must not make every flag read all of it).
_WINDOW = 200


# Fence info strings that name a shell: a block in one of these (or with none) is a command line.
_MARKDOWN_FENCES = frozenset({"markdown", "md"})
_SHELL_FENCES = frozenset("sh bash zsh fish shell console terminal shellsession powershell pwsh ps1 cmd bat".split())
_FENCE_INFO = re2.compile(r"^([A-Za-z][\w+#.-]*)[ \t]*\n")


class Hold(BaseModel):
    """Why an entry is held: the rule and what in the text (or its support) matched."""

    rule: HoldRule
    detail: str


def _runs_default(span: str) -> bool:
    """True for a runner named alone whose bare run is the project's default task (`tox`, `./gradlew`)."""
    return span.rsplit("/", 1)[-1] in _DEFAULT_RUNNERS


def _clip(text: str, most: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def _bypasses(flags: list[str]) -> list[Refusal]:
    """The flags among `flags` that switch a safeguard off, said alone (no program to read them with)."""
    return [
        Refusal("bypass", f"`{_clip(flag, 60)}` ({what}) switches a safeguard off")
        for flag in flags
        if (what := bypass_flag(flag)) is not None
    ]


def _twisted_across(sentence: str) -> bool:
    """True when what follows a prohibition in its sentence, past its clause, twists it: a word that permits, or a
    condition whose clause names the act again."""
    return bool(_TWIST_ACROSS.search(sentence)) or bool(_TWIST.search(sentence) and _NAMED_AGAIN.search(sentence))


def _prohibited(before: str, after: str) -> bool:
    """True when what follows `before` is said as a prohibition ("Never use X", "without X") that nothing twists
    ("Do not commit without X" is two negations; "Never use X unless ..." and "Never forget X" are none)."""
    clause = CLAUSE_START.split(before)[-1]
    return (
        bool(_PROHIBITION.search(clause))
        and not _NEGATED_DUTY.search(clause)
        and len(_NEGATIONS.findall(clause)) % 2 == 1
        and not _TWIST.search(_CLAUSE_END.split(after, maxsplit=1)[0] + " " + after.split(".", 1)[0].split(";", 1)[0])
        and not _twisted_across(after.split(".", 1)[0])
    )


def _code_spans(text: str) -> tuple[list[tuple[str, int, int]], str, bool]:
    """The code spans of `text` as markdown reads them (a run of backticks closes at the next run of the same
    length; an entry is one line, so a fence has no language line and all it holds is read), each with where it is,
    the prose between them, and whether a backtick was left unclosed."""
    spans: list[tuple[str, int, int]] = []
    prose: list[str] = []
    at = last = 0
    unclosed = False
    while (opened := text.find("`", at)) >= 0:
        width = len(text[opened:]) - len(text[opened:].lstrip("`"))
        close = opened + width
        while True:
            close = text.find("`" * width, close)
            if close < 0 or text[close + width : close + width + 1] != "`":
                break
            close += len(text[close:]) - len(text[close:].lstrip("`"))
        if close < 0:
            unclosed = True
            break
        content = text[opened + width : close].strip()
        prose.append(text[last:opened])
        spans.append((content, opened, close + width))
        at = last = close + width
    prose.append(text[last:])
    return spans, " ".join(prose), unclosed


_IN_FOLDER = re2.compile(r"(?i)\b(?:in|from|inside|under|within|into)\s+`*$")


def _span_refusals(span: str, before: str, after: str, vouched: Vouched, written: set[str]) -> list[Refusal]:
    """What refuses one code span: a command by the allow-list (read with the program a sentence names right before
    it, as in "run rm with `-rf ~/`"); a name (one plain word) as a path, a setting, a flag, a variable and a link, or
    as a command when a sentence tells the agent to run it; a code comment (`// SAFETY:`) as words."""
    written_as_is = span.strip()
    span = _PLACEHOLDER_WORD.sub("ID", written_as_is)
    if not span or span in _PLACEHOLDER:
        return []
    info = _FENCE_INFO.match(span)
    if info and info.group(1).lower() in (*FENCED_LANGUAGES, *DOCKERFILE_FENCES):
        span = written_as_is  # a language whose own grammar reads `<T>` and `<div>` sees the block as written
    if info and info.group(1).lower() in _MARKDOWN_FENCES:
        # a block of markdown is text a reader sees as text: judged as a lesson is, whole (its body is shorter, so
        # this ends)
        return [Refusal(h.rule, h.detail) for h in reading_holds(span[info.end() :], vouched, None)]
    if info and info.group(1).lower() not in _SHELL_FENCES:
        # a whole module, a data format or SQL, read by its own parser first (a TOML table of strings is also
        # Python that parses: read as Python, its settings were never read as settings)
        body = span[info.end() :]
        by_parser = fenced_refusals(info.group(1), body, vouched)
        if by_parser is not None:
            return by_parser
        fenced = code_expression(body)
        if fenced is not None:  # a block in another language named that is an expression Python reads: code
            return code_refusals(body, fenced, vouched)
    if span.startswith(_COMMENT_MARKS):
        code = [line for line in span.splitlines() if line.strip() and not line.lstrip().startswith(_COMMENT_MARKS)]
        if code:  # a block that opens with a comment: the comment is words, the lines after it are what runs
            return command_refusals("\n".join(code), vouched, written)
        return link_refusals(find_links(span), vouched) + link_refusals(bare_hosts(span, code=True), vouched)
    if span.startswith("-"):  # flags: with the command the sentence names, or alone (`--collect-only -q`)
        named = named_command(before, vouched)
        if named:
            found = command_refusals(f"{named} {span}", vouched, written)
        else:
            found = _bypasses(span.split()) + command_refusals(f"true {span}", vouched, written)
            # the program the sentence speaks of ("in curl calls, add `-k`"): what the flags switch off in it
            spoken = sentence_program(before, vouched)
            if spoken:
                found += [r for r in command_refusals(f"{spoken} {span}", vouched, written) if r.rule == "bypass"]
        return [] if all(r.rule == "bypass" for r in found) and _prohibited(before, after) else found
    if span.startswith("$") and _VARIABLE.match(span):
        return []
    if _CODE_SETTING.match(span):  # `verify=True`, `DEBUG = False`: code, whose setting the second line reads
        return []
    links = list(find_links(span)) + list(bare_hosts(span, code=True))
    parsed = code_expression(span)
    if parsed is not None:  # `subprocess.run`, `os.getenv`, `SameSite=Lax`, `verify="ca.pem"`: code, not a command
        found = code_refusals(span, parsed, vouched)
        # "never `yaml.load`": what not to write, said as such
        return [] if found and all(r.rule == "inline_code" for r in found) and _prohibited(before, after) else found
    if _SETTING.match(span):  # `NODE_TLS_REJECT_UNAUTHORIZED=0`: a variable set, as the allow-list reads one
        found = [r for r in command_refusals(f"{span} true", vouched, written) if r.rule in ("environment", "bypass")]
        return [] if _prohibited(before, after) else found  # "Never set `X=0`": what not to do, said as such
    first = span.split()[0] if span.split() else ""
    if _PROSE_HEAD.search(first) and not _SHELL_CHARS.search(span) and any(c.isspace() for c in span):
        rest = span.split(None, 1)[1]
        head = rest.split()
        # `hotfix: git push -f origin main`: a command after all; `build: make the image smaller`: words (a task
        # runner named by an English word, then an article and plain words: make would stop at the missing `the`)
        worded = len(head) > 1 and head[0] in TASK_RUNNERS and is_english_function_word(head[1])
        worded = worded and all(w.isalpha() for w in head)
        if is_program(head[0].lower(), vouched) and not worded:
            return command_refusals(rest, vouched, written) + link_refusals(links, vouched)
        return link_refusals(links, vouched)  # `feat(api): add paging`: words, not a command
    if not _NAME.match(span) or any(c.isspace() for c in span) or _RUN_VERB.search(before) or _runs_default(span):
        found = command_refusals(span, vouched, written)
        if found and all(r.rule == "bypass" for r in found) and _prohibited(before, after):
            return []  # "Never use `git push --force`": what not to run, said as such
        return found + ([] if found else link_refusals(links, vouched))
    if links:
        return link_refusals(links, vouched)
    if span.lower() in ("sudo", "doas", "pkexec", "su", "runas", "gsudo"):
        return [Refusal("privilege", f"`{span}` runs a command as another user")]
    if span.startswith("/") and not span.startswith("//") and _ROUTE.match(span) is not None:
        if span[1:].split("/", 1)[0] not in SYSTEM_ROOTS:
            return []  # `/healthz`, `/api/v1/users`: a route, as a sentence reads one (`/etc/hosts` is a file)
    looks_like_path = "/" in span or span.startswith((".", "~")) or ":\\" in span
    refused = path_refusal(span, mention=True) if looks_like_path else None
    return [refused] if refused is not None else []


# Words that put a flag in a sentence without being a program ("pass -v", "add --watch", "with --all").
_FLAG_VERBS = frozenset(
    "pass passing use using add adding with without run running try set setting enable disable give append remove"
    " drop include prefer flag option options like e.g. i.e. via plus and or then also".split()
)
# Up to three command-like words right before a flag in a sentence (`aws rds delete-db-instance --skip...`).
_UNKNOWN_COMMAND = re2.compile(r"(?:^|[\s(])((?:[a-z][a-z0-9._-]*\s+){1,3})$")
# What tells the agent to run the words after it ("run kubectl delete ...", "clean up with terraform destroy"), or a
# clause that opens with them after a comma ("when the deploy hangs, helm uninstall the release").
_RUN_INTRODUCER = re2.compile(
    r"(?i)(?:^|[\s(])(?:run|runs|running|rerun|execute|exec|invoke|call|type|launch|start|issue|with|using|via)"
    r"\s+(?:(?:just|simply|then|also)\s+)?([a-z][a-z0-9._-]*)"
    r"|(?i:\b(?:if|when|whenever|once|after|before|until|while)\b)[^,;:.]{1,60},\s+(?:(?:just|simply|then)\s+)?"
    r"(?:(?i:run|execute|invoke|call|type|launch)\s+(?:(?:just|simply|then)\s+)?)?([a-z][a-z0-9._-]*)\s"
)
# The words a command's subcommands are (a shape, not a judgement: any command of a program no list knows is held).
# (Not those that are also nouns of a sentence: "run one test", "start the build".)
_COMMAND_VERBS = frozenset(
    "delete destroy apply uninstall rm remove drop prune purge flush flushall flushdb wipe kill terminate get put set"
    " exec describe rollback rollout scale upgrade stop restart logs attach cp patch replace taint unset annotate drain"
    " cordon port-forward proxy tunnel http tcp expose kv push pull login deploy create install".split()
)
# Words that end the words of a command written in a sentence: prepositions and conjunctions.
_COMMAND_ENDS = frozenset(
    "against on in at to for from with without before after until when if while via into onto over under by of"
    " and or then so but because since unless once whenever everywhere".split()
)


def _prose_unknown_commands(prose: str, vouched: Vouched) -> list[Refusal]:
    """What refuses a command of a program no list knows that a sentence tells the agent to run: the words after
    "run", "with" or a clause's start, when they read as a command (a subcommand, a flag, a path, a number, a
    hyphenated name after the first word), as the allow-list reads it; not when said as a prohibition."""
    found: list[Refusal] = []
    for match in _RUN_INTRODUCER.finditer(prose):
        group = 1 if match.group(1) is not None else 2
        first, start = match.group(group).lower(), match.start(group)
        if is_english_function_word(first) or first in ADVERBS or first in _COMMAND_ENDS:
            continue
        rest = prose[match.end(group) : match.end(group) + _WINDOW].translate(WORD_BREAKS)
        run = [first]
        for word in rest.split(" ")[1:7] if rest.startswith(" ") else []:
            clean = word.rstrip(".:!?")
            low = clean.lower()
            if not clean or low in _COMMAND_ENDS or is_english_function_word(clean) or low in ADVERBS:
                break
            run.append(clean)
            if clean != word:  # a sentence mark ends it
                break
        verb = any(w.lower() in _COMMAND_VERBS for w in run[1:4])
        # after a clause of its own, only a subcommand says the words are a command ("if X, helm uninstall Y")
        shaped = verb or (group == 1 and any(command_word(w) for w in run[1:4]))
        if len(run) < 2 or not shaped:
            continue
        before, after = prose[max(0, start - _WINDOW) : start], prose[start:][:_WINDOW]
        if _prohibited(before, after):
            continue
        found += command_refusals(" ".join(run), vouched)[:1]
        if found:
            break
    return found


def _prose_flags(prose: str, vouched: Vouched, covered: set[int]) -> list[Refusal]:
    """What refuses the flags of a sentence not read with a program (`covered`: where those that were start): a flag
    with no program before it is a mention, refused only when it switches a safeguard off and is not said as a
    prohibition."""
    found: list[Refusal] = []
    for match in _PROSE_FLAG.finditer(prose):
        flag = match.group(1)
        start = match.start(1)
        if start in covered:
            continue  # read with its program
        before, after = prose[max(0, start - _WINDOW) : start], prose[start + len(flag) :][:_WINDOW]
        refused = _bypasses([flag])
        if refused and not _prohibited(before, after):
            found += refused
        # A flag after words no program list knows (`terraform destroy -auto-approve`): those words are a command
        # of an unknown program, unless they are a sentence's ("pass -v", "use the --all flag").
        head = _UNKNOWN_COMMAND.search(before)
        if head and not any(is_function_word(w) or w.lower() in _FLAG_VERBS for w in head.group(1).split()):
            found += [r for r in command_refusals(f"{head.group(1)} {flag}", vouched) if r.rule == "program"][:1]
    return found


def _prose_refusals(prose: str, vouched: Vouched) -> list[Refusal]:
    """What refuses the text outside code spans: its links, shell syntax, commands and flags, variables set,
    paths outside the project and commands run as another user."""
    words = unemphasised(prose)
    if not _PROSE_QUIET.found_in(prose) and (words == prose or not _PROSE_QUIET.found_in(words)):
        # no link, host or mark: what follows would find only these
        return prose_programs(words, vouched)[0] + _prose_unknown_commands(words, vouched)
    links = list(find_links(prose))  # read once: for what refuses them, and to take them out of the words
    found = link_refusals(links, vouched)
    if (undotted := defanged(prose)) != prose:  # a host spelled without its dots is a host
        found += link_refusals(find_links(undotted), vouched) + link_refusals(bare_hosts(undotted), vouched)
    plain = without_documents(prose)
    for link in links:
        plain = plain.replace(link.written, " ")
    words = unemphasised(plain)
    found += link_refusals(bare_hosts(words), vouched)  # as shown: `**evil.com**` is a host
    # Shell syntax and privilege are read in `plain`, flags, assignments and paths in `words`: where neither holds a
    # mark of any (most sentences), only the programs it names are read.
    marked = _PROSE_MARKS.found_in(plain) or (words != plain and _PROSE_MARKS.found_in(words))
    for shell in _PROSE_SHELL.finditer(plain) if marked else ():
        if _COMPARISON.match(plain[shell.start() : shell.end() + 2]):
            continue
        found.append(
            Refusal("syntax", f"shell syntax (`{shell.group().strip()}`) outside a code span, where it is not checked")
        )
        break
    programs, covered = prose_programs(words, vouched)
    found += programs + _prose_unknown_commands(words, vouched)
    if not marked:
        return found
    found += _prose_flags(words, vouched, covered)
    for match in _PROSE_ASSIGNMENT.finditer(words):
        start = match.start(1)
        if _prohibited(words[max(0, start - _WINDOW) : start], words[match.end(1) :][:_WINDOW]):
            continue  # "Never set NODE_TLS_REJECT_UNAUTHORIZED=0": what not to do, said as such
        found += [r for r in command_refusals(f"{match.group(1)} true", vouched) if r.rule == "environment"][:1]
    for match in _PROSE_PATH.finditer(words):
        word = match.group(1).rstrip(".:!?")
        if word == "/" or (word.startswith("/") and word[1:].split("/", 1)[0] not in SYSTEM_ROOTS):
            continue
        outside = path_refusal(word, mention=True)
        if outside is not None:
            found.append(outside)
            break
    # Read with and without emphasis: `_sudo_` is sudo to a reader, but `_` is a word character to the pattern.
    privilege = _PROSE_PRIVILEGE.search(plain) or _PROSE_PRIVILEGE.search(words)
    if privilege:
        found.append(Refusal("privilege", f"`{privilege.group(1)}` runs a command as another user"))
    return found


# Markdown's own structure, which a reader sees as layout, not as characters: a blockquote's `>` at a line's start, a
# table's `|` between cells of a row (a line that opens and closes with one) and its delimiter row, a footnote's
# `[^label]` and the `[^label]:` that opens its text (CommonMark and GFM).
_BLOCKQUOTE = re2.compile(r"(?m)^[ \t]{0,3}(?:>[ \t]?)+")
_TABLE_ROW = re2.compile(r"(?m)^[ \t]*\|.*\|[ \t]*$")
_TABLE_DELIMITER = re2.compile(r"^[ \t|:-]*-[ \t|:-]*$")
_FOOTNOTE = re2.compile(r"\[\^[^\]\s]{1,40}\]:?")


def _markdown_shown(prose: str) -> str:
    """`prose` as markdown lays it out: without the marks of its blockquotes, tables and footnotes (`> Keep PRs
    small` is a quote, not a redirection; `| test | make test |` a table row, not a pipe)."""
    if ">" in prose:
        prose = _BLOCKQUOTE.sub("", prose)
    if "[^" in prose:
        prose = _FOOTNOTE.sub(" ", prose)
    if "|" in prose:
        prose = _TABLE_ROW.sub(_table_row_shown, prose)
    return prose


def _table_row_shown(row: re2._Match) -> str:
    """A table row as its cells show: a delimiter row (`|---|:-:|`) is none, a row's bars are no pipes."""
    return " " if _TABLE_DELIMITER.match(row.group()) else row.group().replace("|", " ")


def _without_links(prose: str) -> str:
    """`prose` without the links written in it: a URL's words (`.com`, `/main/`) are no language's."""
    for link in find_links(prose):
        prose = prose.replace(link.written, " ")
    return prose


def text_holds(text: str, vouched: Vouched | None = None, *, typed: bool = False) -> list[Hold]:
    """The holds on what `text` says; [] for a lesson the screen admits. `vouched`: what the user and their projects
    vouch for (programs, hosts, scripts, languages); nothing but the defaults when None. `typed`: our own code wrote
    the text from a typed lesson's fields (the keyless miner), so what it says of a safeguard is no model's free
    sentence (`core.safeguard_talk`)."""
    return reading_holds(text, vouched or Vouched(), None, typed=typed)


def reading_holds(
    text: str, vouched: Vouched, reading: Reading | None, stored: str | None = None, *, typed: bool = False
) -> list[Hold]:
    """`text_holds`, given the second line's reading of its normalised text (`phrase_reading`) when it was read
    already, and that text (`stored`, `normalise(text)`) when it was."""
    if len(text) > MAX_SCREENED:
        return [Hold(rule="syntax", detail=f"{len(text):,} characters, longer than any lesson: not read")]
    stored = normalise(text) if stored is None else stored
    if len(stored) > MAX_SCREENED:  # NFKC writes some characters as many (`\ufdfa` is 18)
        return [Hold(rule="syntax", detail=f"{len(stored):,} characters once normalised: not read")]
    text = skeleton(stored)  # look-alike dashes, slashes and bars read as what the shell reads
    spans, prose, unclosed = _code_spans(text)
    refusals: list[Refusal] = []
    written: set[str] = set()  # what the lesson's commands write, across spans ("`printf x > a.sh`, then `sh a.sh`")
    # The folders the lesson names ("run `make test` in `sub/`", "from `web`"): its tasks may be run there, and are
    # judged there too (round 8: a sub-folder's Makefile that pushed was read as the top's).
    folders = frozenset(
        content.strip()
        for content, start, _ in spans
        if content.strip().endswith("/") or _IN_FOLDER.search(text[max(0, start - 16) : start])
    )
    if folders:
        vouched = replace(vouched, folders=vouched.folders | folders)
    for content, start, end in spans:
        before, after = text[max(0, start - _WINDOW) : start], text[end : end + _WINDOW]
        refusals += _span_refusals(content, before, after, vouched, written)
    if unclosed:
        refusals.append(Refusal("syntax", "an unclosed code span (a lone backtick)"))
    prose = _markdown_shown(prose)
    refusals += _prose_refusals(prose, vouched)
    if (spelled := spelled_out(prose)) != prose:  # `- - n o - v e r i f y` is a flag to whoever reads it
        refusals += [r for r in _prose_refusals(spelled, vouched) if r.rule == "bypass"]
    for word, scripts in mixed_words(stored):
        refusals.append(Refusal("script", f"`{_clip(word, 40)}` mixes {' and '.join(sorted(scripts))} letters"))
    strangers = sorted(scripts_of([stored]) - set(vouched.scripts) - {"Latin"})
    if strangers:
        refusals.append(Refusal("script", f"{', '.join(strangers)} letters, a script the user's prompts never use"))
    unlinked = _without_links(prose)
    language = language_of(unlinked)
    if language is not None and language != "en" and language not in vouched.languages:
        refusals.append(Refusal("language", f"written in `{language}`, a language the user's prompts never use"))
    elif language is None and not vouched.languages - {"en"} and not reads_as_english(unlinked):
        # English is what the screen reads: a sentence it cannot read is not admitted for a user who writes English
        refusals.append(Refusal("language", "no English word in it: written in a language the screen cannot read"))
    reading = phrase_reading(stored) if reading is None else reading
    refusals += [Refusal(rule, detail) for rule, detail in reading[2]]
    if not typed:
        refusals += [Refusal(rule, detail) for rule, detail in safeguard_refusals(reading[1], stored)]
    else:
        # Our own sentence around a typed lesson's fields is not read for what it says of a safeguard; what in it came
        # from outside (the user's quoted words, the folder name a stranger may have chosen) is read as free text.
        for part in untrusted_parts(stored):
            said = phrase_reading(part)
            refusals += [Refusal(rule, detail) for rule, detail in said[2]]
            refusals += [Refusal(rule, detail) for rule, detail in safeguard_refusals(said[1], part)]
        # ... and a quote always waits for a reader (`core.quote_words`): the readers above know how harm is usually
        # said, and no list of words knows what a sentence means.
        if (said_words := quoted(stored)) is not None:
            refusals.append(Refusal("wording", quote_hold(said_words)))
    if "&" in stored and (shown := _references_shown(stored)) != stored:
        # Markdown shows a character reference as its character (`s&#117;do` is `sudo`, `&#45;&#45;force` is
        # `--force`): the text is read as shown too. Each decoding shortens it, so this ends.
        refusals += [
            Refusal(h.rule, f"{h.detail} (once `&...;` references are shown as characters)")
            for h in reading_holds(shown, vouched, None, typed=typed)
        ]
    holds: list[Hold] = []
    seen: set[str] = set()
    for refusal in refusals:
        if refusal.rule not in seen:  # one hold per rule: the first thing it refused
            seen.add(refusal.rule)
            holds.append(Hold(rule=refusal.rule, detail=refusal.detail))  # type: ignore[arg-type]
    return holds


# How a lesson writes about markup (`List&lt;String&gt;`, "the engine writes &lt; for you"): read as written, or
# every such lesson would be held as shell syntax. The others (`&#45;`, `&nbsp;`) are only ever a spelling.
_MARKUP_REFERENCES = re2.compile(r"(&(?:lt|gt|amp|quot);)")


def _references_shown(text: str) -> str:
    """`text` with its character references shown as characters, but those of markup."""
    pieces = _MARKUP_REFERENCES.split(text)
    return "".join(piece if i % 2 else html.unescape(piece) for i, piece in enumerate(pieces))
