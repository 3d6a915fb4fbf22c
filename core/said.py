"""What the user said, as far as the transcript shows they typed it: the reason they gave when they stopped a call
or refused a plan, their next words after a stop or Esc, a prompt that corrects the agent, a prompt's sentence
that states a lasting rule ("as always never push secrets"), and what they typed in answer to the agent's question
(not an option the agent offered). Someone else's words are never theirs: a shell result
dressed as a refusal where the harness does not frame failures, another tool's error text, what they pasted."""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Literal

import re2

from core.lessons import Command, ConventionalCommits, Preference, Stopped
from core.models import SessionMessage
from core.runs import (
    REJECTED,
    REJECTION_REASON,
    SHELL_TOOLS,
    USER_HOME,
    command_key,
    command_of,
    key_words,
    parse,
    whole_text,
)

__all__ = [
    "chooses_among",
    "commit_style",
    "interrupted",
    "names_one_thing",
    "said",
    "sentences",
    "some_sentence",
    "typed_answers",
    "typed_words",
]


# Claude Code's own tools, whose refusal text is the harness's (a refused `ExitPlanMode` is a refused plan). Not
# Codex's: its shell output is the program's own, and Codex has no such refusal text.
_CLAUDE_SHELLS = frozenset({"Bash", "PowerShell"})

_HARNESS_TOOLS = _CLAUDE_SHELLS | {"Edit", "MultiEdit", "Write", "NotebookEdit", "ExitPlanMode"}

# How Claude Code frames a shell command that failed; an older version passed the program's own output through,
# which a program could open with the refusal's words.
_FRAMED_FAILURE = re2.compile(r"^Exit code -?\d+")

# Claude Code's marker for Esc: a user turn the harness writes, never typed.
_INTERRUPTED = re2.compile(r"^\[Request interrupted by user(?: for tool use)?\]")

# A prompt that corrects or instructs: at its start (weak cues), or anywhere (strong ones).
_CORRECTS = re2.compile(
    r"(?i)^\s*(?:no[,.!]?\s|nope\b|don'?t\b|do not\b|never\b|always\b|stop\b|instead\b|actually\b|please don'?t\b|"
    r"that'?s (?:wrong|not)\b|wrong\b|not like that\b|use \S+ instead\b|we (?:use|prefer)\b|i prefer\b|"
    r"prefer\b|let'?s not\b|why not use\b|(?:could|can|shall) we (?:just )?(?:reuse|use)\b)"
)

_STRONG = re2.compile(
    r"(?i)\b(?:i don'?t want\b|i'?d rather\b|please (?:don'?t|never|always)\b|don'?t (?:ever|assume)\b|"
    r"make (?:any )?assumptions\b|we always\b|we never\b)"
)

_CONTINUED = re2.compile(r"\\\s*\n|\[Image #\d+\]")  # a line continued with a backslash; a pasted image

_SENTENCE_END = re2.compile(r"[.!?]\s")

_PARAGRAPH = re2.compile(r"\n[ \t]*\n")

_SENTENCE_SPLIT = re2.compile(r"(?:[.!?]+|\s[-–—]\s)\s+")
_SENTENCE_MARKS = ".!?-–—"  # what `_SENTENCE_SPLIT` needs to split a line

# A sentence that states a lasting rule of the user's or a fact of the project, wherever it stands in a prompt.
_DURABLE = re2.compile(
    r"(?i)\b(?:as always|remember to|be sure to|from now on|going forward|in the future|every time|each time|"
    r"in this (?:repo|repository|project|codebase),? we\b|this is a public repo|"
    r"we (?:don'?t|do not) (?:need|want|use)\b|we (?:always|never|deploy|release|use|prefer)\b|"
    r"we (?:have|keep|store|host|run) our\b|we only (?:want|use)\b|"
    r"should(?:n'?t| not| only| never| always| align with| follow| match)\b|if you need to \w+ \S+,? refer to|"
    r"(?:solved|fixed|works|goes away) when (?:i|you|we)\b|^(?:avoid|never|always)\b|"
    r"^(?:please\s+)?make (?:that|this|it) (?:a |the |our |your )?(?:standard|default|rule|habit|norm)\b)"
)

# A sentence that makes the one before it lasting by pointing back at it ("request a review. Make that standard in
# your workflow", "Do that from now on"): its rule is the sentence before, read with it as one quote. ("Make it a
# rule to rebase first" says its rule itself: `_points_back`.)
_POINTS_BACK = re2.compile(r"(?i)^(?:please\s+)?(?:make|do|keep|use) (?:that|this|it)\b")


def _points_back(sentence: str) -> bool:
    """True when `sentence` says to keep doing what the one before it said, and says no rule of its own."""
    return bool(_POINTS_BACK.match(sentence)) and " to " not in f" {sentence.lower()} "


# The first line of pasted output rather than words: a prompt sign, a log's or a tool's line.
_PASTED = re2.compile(
    r"(?i)^(?:[❯$>#]\s|\[[\w /:-]+\]|"
    r"(?:error|warning|fatal|remote|traceback|fetching|found|download|commit [0-9a-f]{7})\b)"
)

# A sentence that hedges ("maybe we don't need ..."), speaks of the work at hand ("this shouldn't need to be
# stacked", "that means the logs should ...") or hangs on the answer to a question of it ("if so, it should be able
# to ..."): a lasting rule is asserted, and of the project, not of "this".
_TASK_BOUND = re2.compile(
    r"(?i)^(?:(?:and|but|so|ok|also|just),? )*(?:maybe|perhaps|probably|i think|i guess|i suppose|if (?:so|not|yes)\b|"
    r"(?:this|that|these|those)(?:'s| is| are| was| means| should| shouldn'?t| will| would| needs?| can)\b)"
)

# A step the agent left out, as the user checks for it: a question, then what to do when the answer is no ("does
# the readme reflect the changes as well? if not please make it so"). Not "if so, add it": that asks whether the
# work at hand needs a step, a condition of this session, not a standing expectation.
_REMINDER = re2.compile(
    r"(?i)(?:^|[.!]\s+)([^.!?\n]*\?\s*if not,?\s*(?:please\s+)?(?:make|add|update|do|fix|write|include|change)\b"
    r"[^.!?\n]*)"
)

# Words that say what to do or not to do: a question without one, after a stop, asks; it does not instruct.
_DIRECTIVE = re2.compile(
    r"(?i)\b(?:should|shouldn'?t|must|need|needs|don'?t|do not|never|always|instead|prefer|rather|want|use|"
    r"can'?t we|could we|why not|no longer|is just|not|i'?d (?:\w+ )?(?:love|like)|i would (?:\w+ )?(?:love|like))\b"
)

# An order, by its first word: a verb that says what to make or where to put it ("write this out as an ADR", "put it
# in the README"). Only a stop's reason is read so: typed in place of the call the user refused, an order there
# says what to do instead; the same words in a prompt are the next task.
_ORDER = re2.compile(
    r"(?i)^(?:please\s+)?(?:write|put|add|move|keep|create|make|document|record|save|split|rename|turn|place|"
    r"store|ask|open)\b"
)

_QUESTION = re2.compile(
    r"(?i)^(?:(?:wait|but|and|so|hmm|ok|also),? )?(?:why|what|how|when|where|which|who|should(?:n'?t)? we|"
    r"can(?:'?t)? we|could we|shall we|do we|does|did|is|are|isn'?t|aren'?t|would|will)\b"
)

# A question that proposes what to do rather than asks whether.
_SUGGESTS = re2.compile(r"(?i)\b(?:can'?t we|could(?:n'?t)? we|shouldn'?t we|why not|why don'?t we|how about)\b")

# A name of code: in backticks, a flag, a dotted, slashed or snake_case name, a CamelCase word.
_CODEISH = re2.compile(r"`[^`]+`|(?:^|\s)--?[a-z]|\w[._/:]\w|\w_\w|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*")

_WORDS = re2.compile(r"^[\pL\d\s,;:'\"()`*/.!?&+-]*[\pL]{3,}[\pL\d\s,;:'\"()`*/.!?&+-]*$")

_QUOTE_MAX = 200

_LINK = re2.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+")

_SHORT = 60  # an order shorter than this, with no subject of its own, leans on the sentence before it

_LEANS = re2.compile(r"(?i)^(?:avoid|never|always|don'?t|do not|please|only|instead)\b")

# How a thing "should be", said in a short prompt (a reaction to what the agent did: "The code should be semantic so
# the comment doesn't say the what"); in a longer prompt the same words describe the work asked for ("the result
# should be a markdown document"), a task, not a rule.
_SHOULD_BE = re2.compile(r"(?i)\bshould be\b")
_REACTION_SENTENCES = 3

# A sentence that gives the reason for the one before it ("The lint script should be in local only. Since we use the
# branch name X for this kind of change, the app validates it"): the rule is read with its reason, as one quote.
_REASON = re2.compile(r"(?i)^(?:since|because|as)\b")


# A name chosen for one thing the work at hand makes ("I want the package to be called acme-cli", "call it X",
# "rename the flag to Y"): once the change is in, the code records the name and a later session reads it there,
# so the words are a decision of that change, not a rule. A convention is said of a kind ("test files are named
# test_*.py"), not wished for one thing, and is left alone.
_NAME_CHOSEN = re2.compile(
    r"(?i)\b(?:want|like|prefer)s? (?:it|this|that|the [\w.-]+) to be (?:called|named|renamed)\b"
    r"|\b(?:call|name) (?:it|this|that) [`'\"]?[\w.-]|\brename (?:it|this|that|the [\w.-]+) (?:to|as)\b"
)


# A choice among what the agent proposed ("actually let's go with the API key approach you recommended", "option 2"):
# it settles the work at hand, which the change then records; it is no rule for the next session.
_CHOICE = re2.compile(
    r"(?i)\b(?:let'?s|lets|we'?ll|i'?ll|we will|i will)\s+(?:go|stick)\s+with\b"
    r"|\b(?:you|you've|you have)\s+(?:recommended|suggested|proposed)\b"
    r"|\b(?:go|stick)\s+with\s+(?:option|approach|alternative|choice|plan)\b"
    r"|\b(?:option|approach|alternative|choice)\s+(?:\d|[a-d]\b|one\b|two\b|three\b)"
)


def chooses_among(text: str) -> bool:
    """True when the user's words pick one of the options the agent proposed ("let's go with the approach you
    recommended"): a decision of the work at hand, not a lasting rule."""
    return bool(_CHOICE.search(text))


def names_one_thing(text: str) -> bool:
    """True when the user's words choose a name for one thing of the work at hand ("I want the package to be
    called acme-cli"): a decision the change itself records, not a lasting rule."""
    return bool(_NAME_CHOSEN.search(text))


def _flat(text: str) -> str:
    """What the user typed, as one line: their home folder masked, a link said as `(a link)` (a keyless lesson
    carries none)."""
    return " ".join(_LINK.sub("(a link)", USER_HOME.sub("~", _CONTINUED.sub(" ", text))).split())


def _quote(text: str) -> str:
    """What the user typed, as one line (`_flat`), the first sentence of a long prompt. (Its callers quote no words
    that hold a link: the link is masked here all the same.)"""
    flat = _flat(text)
    if len(flat) > _QUOTE_MAX:
        end = _SENTENCE_END.search(flat)
        flat = flat[: end.start() + 1] if end else flat
    return flat if len(flat) <= _QUOTE_MAX else flat[: _QUOTE_MAX - 1] + "…"


def _stopped(message: SessionMessage) -> Stopped:
    """What a stopped call was: a shell command's name, or the kind of change (never a path, never the tool's own
    name: an MCP server names its tools as it likes)."""
    if message.tool_name in SHELL_TOOLS:
        found = command_of(message.tool_input)
        parsed = parse(found[0], found[1]) if found else None
        if parsed is not None:
            return Stopped(what="command", command=Command(words=key_words(command_key(parsed.words))))
    kinds: dict[str, Literal["edit", "new_file", "notebook", "plan"]] = {
        "ExitPlanMode": "plan",
        "Edit": "edit",
        "MultiEdit": "edit",
        "Write": "new_file",
        "NotebookEdit": "notebook",
    }
    return Stopped(what=kinds.get(message.tool_name or "", "tool"))


@functools.lru_cache(maxsize=4)
def sentences(text: str) -> tuple[str, ...]:
    """The sentences of what the user typed (a line break ends one too), without the full stop that ends the last
    (the others lose theirs to the split). Kept for the last few texts: a prompt's preferences and its habits are
    read from the same sentences, and the split is most of what reading a typed prompt costs."""
    flat = _CONTINUED.sub(" ", text)
    found = [
        " ".join(p.split())
        for line in flat.splitlines()
        # a line with no mark that ends a sentence is one (the split costs a call per line: 15,000 in a 1 MB prompt)
        for p in (_SENTENCE_SPLIT.split(line) if any(mark in line for mark in _SENTENCE_MARKS) else (line,))
        if p.strip()
    ]
    return tuple(s.removesuffix(".") if s.endswith(".") and not s.endswith("..") else s for s in found)


def some_sentence(pattern: re2._Regexp, split: Sequence[str]) -> bool:
    """False only when no sentence of `split` (`sentences`) holds a match of `pattern`: one search of them joined a
    line each, so a prompt's cost does not grow by a search per sentence for a pattern it never says. Each line
    reads as its sentence does (`^` and `$` at its ends, a word boundary the same at a line break as at the text's
    ends; not `\\A` or `\\z`, which no caller's pattern uses); a match that spans a line break only sends the caller to
    read the sentences one by one."""
    return bool(_per_line(pattern.pattern).search("\n".join(split)))


@functools.cache
def _per_line(pattern: str) -> re2._Regexp:
    return re2.compile("(?m)" + pattern)


def _cue_sentences(text: str, cue: re2._Regexp = _DURABLE) -> list[str]:
    """What a prompt says as a lasting rule or a fact of the project ("as always never push sensitive data", "in
    this repo we commit ...", "we don't need backward compatibility"), or with a strong cue (`_STRONG`: "do not
    make assumptions"), or in a short prompt how a thing "should be" (`_SHOULD_BE`): each sentence that says so,
    after the sentence before it when it is a short order that leans on it ("avoid inventing our own"), and with
    the sentence after it when that gives its reason ("Since we use ..."); a sentence that points back at the one
    before it ("Make that standard in your workflow") is said with it."""
    split = sentences(text)
    short_prompt = cue is _DURABLE and len(split) <= _REACTION_SENTENCES
    if not short_prompt and not some_sentence(cue, split):
        return []
    cued = list(
        itertools.islice(
            (
                i
                for i, sentence in enumerate(split)
                if (cue.search(sentence) or (short_prompt and _SHOULD_BE.search(sentence)))
                and not _asks(sentence)
                and not _TASK_BOUND.match(sentence)
            ),
            _MOST_RULES,
        )
    )
    if not cued:
        return []
    said, is_cued = [], set(cued)  # a set: a prompt of 80,000 cued sentences made the list's lookups quadratic
    for i in cued:
        if i - 1 in is_cued and _REASON.match(split[i]):
            continue  # already said with the rule it gives the reason for
        if i == 0 and _points_back(split[i]):
            continue  # it points back at nothing the prompt says
        short = i > 0 and ((len(split[i]) < _SHORT and bool(_LEANS.match(split[i]))) or _points_back(split[i]))
        sentence = f"{split[i - 1]}. {split[i]}" if short else split[i]
        if i + 1 < len(split) and _REASON.match(split[i + 1]):
            sentence = f"{sentence}. {split[i + 1]}"
        said.append(sentence)
    return [sentence for sentence in said if not _LINK.search(sentence)]


def _pasted(text: str) -> bool:
    """True when a prompt is mostly pasted output (a log, a command's answer), not the user's own sentences."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return True
    if _PASTED.match(lines[0]):
        return True
    if len(lines) <= 3:
        return False
    # Mostly pasted when fewer than half the lines read as words: counted only until that is settled either way.
    words, needed = 0, len(lines) / 2
    for n, line in enumerate(lines):
        words += bool(_WORDS.match(line))
        if words >= needed:
            return False
        if words + len(lines) - n - 1 < needed:
            return True
    return True


def _asks(sentence: str) -> bool:
    """True when a sentence is a question (its mark, or its first words: people often leave the mark out)."""
    return sentence.rstrip().endswith("?") or bool(_QUESTION.match(sentence))


def _instructs(text: str) -> bool:
    """True unless the words are only a question: a question may still say what to do ("can't we use X?"), but one
    that only asks whether ("do we even need X then?") does not, whatever words it asks about."""
    split = sentences(text)
    if split and all(_QUESTION.match(s) for s in split):  # the mark is often left out: "should we group runs by X"
        return bool(_SUGGESTS.search(text))
    return not text.rstrip().endswith("?") or bool(_DIRECTIVE.search(text))


def _says_something(text: str) -> bool:
    """True when the words say what to do or name a thing of the project (a command, a file, a flag, an identifier):
    "use pnpm", "set group.visible"; not "i'll take it from here"."""
    return bool(_DIRECTIVE.search(text) or _CODEISH.search(text))


def _reaction(text: str) -> bool:
    """True when words said in reaction to what the agent just did (a stop's reason, the next words after a stop or
    Esc, a prompt that corrects) make a lesson: they instruct, say what to do or name a thing of the project, and
    can be quoted whole. "actually i'm comfortable with this" or "the name will cause issues" says nothing to keep;
    a prompt too long to quote whole is the next task, whose sentences count only where they state a lasting rule;
    words that point at a link point at nothing once the link is taken out (a keyless lesson carries none)."""
    return _says_something(text) and _instructs(text) and len(_flat(text)) <= _QUOTE_MAX and not _LINK.search(text)


def _orders(text: str) -> bool:
    """True when a stop's reason is an order (`_ORDER`) that can be quoted whole and points at no link."""
    return bool(_ORDER.match(text.strip())) and len(_flat(text)) <= _QUOTE_MAX and not _LINK.search(text)


def _framed_shell(messages: Sequence[SessionMessage], calls: Mapping[str, SessionMessage]) -> bool:
    """True when the session's harness frames every failed shell command (`Exit code 1` first), and at least one
    shows it: there, a shell result that opens with the refusal's words can only be the harness's. Elsewhere a
    program's output could be dressed as the user stopping it, so a stopped shell command is not the user's."""
    failures = [
        m.text or ""
        for m in messages
        if m.kind == "tool_result"
        and m.is_error
        and m.tool_use_id is not None
        and (calls[m.tool_use_id].tool_name if m.tool_use_id in calls else None) in _CLAUDE_SHELLS
        and not REJECTED.match(m.text or "")
    ]
    return bool(failures) and all(_FRAMED_FAILURE.match(text) for text in failures)


def _typed(text: str) -> str:
    """The part of a prompt the user typed, as far as the text shows: its first paragraph, up to a line that ends
    with a colon (what follows a blank line or "the lead wrote:" is what they pasted: someone else's words)."""
    first = _PARAGRAPH.split(text.strip(), maxsplit=1)[0]
    kept: list[str] = []
    for line in first.splitlines():
        kept.append(line)
        if line.rstrip().endswith(":"):
            break
    typed = "\n".join(kept)
    if len(typed) > _MAX_TYPED:  # up to the last sentence that ends within the bound
        end = max(typed.rfind(mark, 0, _MAX_TYPED) for mark in ("\n", ". ", "! ", "? "))
        typed = typed[: end + 1] if end > 0 else typed[:_MAX_TYPED]
    return typed


# The rules one prompt states that are read: no prompt in data/ states more than 2; a pasted document of rules is
# not the user's words, and read whole it costs a quote per sentence.
_MOST_RULES = 16
# What of one prompt the rules read: people type far less (the largest typed prompt in data/ is 23 KB); more is a
# pasted document, which they read sentence by sentence: a prompt of 80,000 rules took a minute (round 11).
_MAX_TYPED = 64 * 1024


def typed_words(prompt: str) -> str | None:
    """What the user typed of a prompt (`_typed`: before a pasted part), or None when it is mostly pasted output
    (a log, a command's answer) or nothing is left."""
    if _pasted(prompt):
        return None
    typed = _typed(prompt)
    return typed if typed.strip() else None


# Claude Code's question tool: the agent offers options, the user picks one or types their own answer, and may add
# notes. An option is the agent's words (picking one is a choice among proposals); what the user typed is an answer
# that is none of the options, and the notes.
_ASKING_TOOLS = frozenset({"AskUserQuestion"})
# What the harness writes after the answers (its words, not the user's).
_ANSWERS_END = re2.compile(r"\.?\s*(?:Read the answers carefully|You can now continue)")
_NOTES = " notes: "


def _options(tool_input: str | None) -> list[tuple[str, frozenset[str]]]:
    """The questions of a question-tool call, each with the labels of the options it offered."""
    try:
        value = json.loads(tool_input or "")
    except ValueError:
        return []
    questions = value.get("questions") if isinstance(value, dict) else None
    found: list[tuple[str, frozenset[str]]] = []
    for q in questions if isinstance(questions, list) else []:
        if isinstance(q, dict) and isinstance(q.get("question"), str):
            offered = q.get("options")
            options: list[object] = offered if isinstance(offered, list) else []
            labels = frozenset(
                whole_text(o["label"]) for o in options if isinstance(o, dict) and isinstance(o.get("label"), str)
            )
            found.append((whole_text(q["question"]), labels))
    return found


def _picked(answer: str, labels: frozenset[str]) -> bool:
    """True when `answer` is one option's label or several of them joined (a question that takes many answers
    lists those picked, separated by commas): nothing of it is the user's own."""
    rest = answer
    for label in sorted(labels, key=len, reverse=True):
        rest = rest.replace(label, "")
    return bool(labels) and not rest.strip(" ,")


def typed_answers(tool_input: str | None, answer: str) -> list[str]:
    """What the user typed in answer to the agent's questions (`AskUserQuestion`: its input, and the harness's
    text of the answers): an answer that is none of the options offered, and the notes added to one. An option
    picked is the agent's words, not the user's, and is left out."""
    questions = _options(tool_input)
    answer = whole_text(answer)  # a lone surrogate (escaped alone in JSON) is text no pattern reads: made whole
    marks = sorted((at, q, labels) for q, labels in questions if (at := answer.find(f'"{q}"=')) >= 0)
    typed: list[str] = []
    for n, (at, q, labels) in enumerate(marks):
        start = at + len(q) + 3
        end = marks[n + 1][0] if n + 1 < len(marks) else len(answer)
        part = answer[start:end]
        if (stop := _ANSWERS_END.search(part)) is not None:
            part = part[: stop.start()]
        part = part.rstrip(" ,.")
        given, _, notes = part.partition(_NOTES)
        given = given.strip()
        if given.startswith('"') and given.endswith('"') and not _picked(given[1:-1], labels):
            typed.append(given[1:-1])
        if notes.strip():
            typed.append(notes.strip())
    return [t for t in typed if t.strip()]


def said(messages: Sequence[SessionMessage]) -> list[Preference]:
    """Every preference the session's user said, in order, as typed lessons."""
    found: list[Preference] = []
    calls: dict[str, SessionMessage] = {m.tool_use_id: m for m in messages if m.kind == "tool_use" and m.tool_use_id}
    framed = _framed_shell(messages, calls)
    stopped: Stopped | None = None  # the call the user stopped (or Esc) without a reason, until their next words
    for m in messages:
        if m.is_sidechain:
            continue
        if (
            m.kind == "tool_result"
            and m.is_error
            and REJECTED.match(m.text or "")
            and m.tool_use_id in calls
            and (calls[m.tool_use_id].tool_name or "") in _HARNESS_TOOLS
            and (framed or calls[m.tool_use_id].tool_name not in _CLAUDE_SHELLS)
        ):
            what = _stopped(calls[m.tool_use_id])
            reason = REJECTION_REASON.search(m.text or "")
            if reason:
                if _reaction(reason.group("reason")) or _orders(reason.group("reason")):
                    said = _quote(reason.group("reason"))
                    found.append(Preference(said=said, stopped=what, reason=True))
                stopped = None
            else:
                stopped = what
        elif (
            m.kind == "tool_result"
            and not m.is_error
            and m.tool_use_id in calls
            and calls[m.tool_use_id].tool_name in _ASKING_TOOLS
        ):
            for typed in typed_answers(calls[m.tool_use_id].tool_input, m.text or ""):
                if not _pasted(typed) and _reaction(typed):
                    found.append(Preference(said=_quote(typed), answered=True))
        elif interrupted(m):
            stopped = stopped or Stopped(what="interrupt")
        elif m.is_prompt and m.text and m.text.strip():
            typed = _typed(m.text)
            if _pasted(m.text) or not typed.strip():
                pass  # a log or someone else's text the user pasted: not their words
            elif stopped is not None and _reaction(typed):
                found.append(Preference(said=_quote(typed), stopped=stopped))
            elif _CORRECTS.match(typed) and _reaction(typed):
                found.append(Preference(said=_quote(typed)))
            elif (reminder := _REMINDER.search(typed)) and not _LINK.search(reminder.group(1)):
                found.append(Preference(said=_quote(reminder.group(1))))
            elif _STRONG.search(typed) and (strong := _cue_sentences(typed, _STRONG)):
                found += [Preference(said=_quote(cue)) for cue in strong]  # the sentence that says it, not the first
            else:
                found += [Preference(said=_quote(cue)) for cue in _cue_sentences(typed)]
            stopped = None
    return found


def interrupted(message: SessionMessage) -> bool:
    """True for Claude Code's own turn that marks an Esc (never typed)."""
    return (
        message.role == "user"
        and message.kind == "text"
        and not message.is_prompt
        and bool(_INTERRUPTED.match(message.text or ""))
    )


# A title in Conventional Commits form, as the user wrote it in backticks or quotes, in a prompt about a commit or a
# pull request ("make the commit title `feat(api): ...`").
_CONVENTIONAL = re2.compile(
    r"[`\"'](?:feat|fix|chore|docs|refactor|test|perf|build|ci|style|revert)(\([\w./-]+\))?!?: [^`\"'\n]+[`\"']"
)
_ABOUT_COMMITS = re2.compile(r"(?i)\b(?:commit|pr|pull request)s?\b.*\b(?:title|message|subject)s?\b")


def commit_style(messages: Sequence[SessionMessage]) -> ConventionalCommits | None:
    """Conventional Commits, when the user typed a commit or pull-request title in that form (their words, not a
    log the agent read: a repository's history may mix styles the user does not ask for)."""
    for m in messages:
        if m.is_prompt and not m.is_sidechain and m.text and not _pasted(m.text):
            typed = _typed(m.text)
            title = _CONVENTIONAL.search(typed)
            if title and _ABOUT_COMMITS.search(typed):
                return ConventionalCommits(scoped=title.group(1) is not None)
    return None
