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

import hashlib
import itertools
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Literal

import re2
from pydantic import BaseModel, Field

from core.allowlist import Refusal, Vouched, command_refusals, is_program, link_refusals, path_refusal
from core.invisible import normalise
from core.language import language_of, mixed_words, scripts_of
from core.links import find_links
from core.models import Playbook

__all__ = [
    "Hold",
    "HoldRule",
    "Screened",
    "Support",
    "Vouched",
    "entry_holds",
    "screen_playbook",
    "text_holds",
    "text_key",
]

HoldRule = Literal[
    "syntax", "program", "privilege", "pipe", "inline_code", "substitution", "environment", "path", "bypass",
    "install", "link", "script", "language", "override", "credential", "tainted", "quorum", "withdrawn",
]  # fmt: skip

# A code span: text between single backticks. Anything else with a backtick is an unclosed span.
_SPAN = re2.compile(r"`([^`\n]*)`")
# Shell syntax that has no business in a sentence; arrows and comparisons (`->`, `>=`) are prose.
_PROSE_SHELL = re2.compile(r"\||\\|\$[({A-Za-z_]|[<>]\(|&&|[{}]|(?:^|[^-=<>])[<>](?:[^=-]|$)")
# A comparison in a sentence ("functions < 50 lines", "at most > 3"): `<` or `>` before a number.
_COMPARISON = re2.compile(r"^\s?[<>]\s?\d")
_PROSE_FLAG = re2.compile(r"(?:^|[\s(\"'])(--?[A-Za-z][\w-]*)")
_PROSE_PATH = re2.compile(r"(?:^|[\s(\"'=:])((?:~|/|\$HOME|%[A-Z]+%|[A-Za-z]:\\)[^\s,;)\"']*|\.[A-Za-z][\w.-]*)")
# The top folders of a file system (Linux, macOS): a path in a sentence that starts with one of them is a file
# outside the project; `/api/users` or `/health` is a route.
_SYSTEM_ROOTS = frozenset(
    "bin boot dev etc home lib lib32 lib64 media mnt opt proc root run sbin srv sys tmp usr var Users Library System"
    " Applications Volumes private cores nix snap Network".split()
)
_PROSE_PRIVILEGE = re2.compile(r"(?i)(?:^|\W)(sudo|doas|pkexec|runas|gsudo)(?:\W|$)")
# Where a clause begins and ends around a flag written in a sentence, and the words that end a command there.
_CLAUSE_START = re2.compile(r"[.;:!?,(]\s+|\(")
_CLAUSE_END = re2.compile(
    r"[;,)]|[.!?](?:\s|$)|\s(?:to|if|before|after|when|and|or|so|then|but|because|while|until|on|for|in|the)\s"
)
_PROSE_PROHIBITION = re2.compile(
    r"(?i)(?:^|\W)(?:never|do not|don't|dont|avoid|without|rather than|instead of|not|no)"
    r"(?:\s+(?:use|using|run|running|pass|passing|add|adding|reach for|rely on|type|with|a|the))*\s*$"
)
_VARIABLE = re2.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
_PLACEHOLDER = ("...", "…")
# A prohibition right before a span: "Never use `git push --force`" names what not to run.
_PROHIBITION = re2.compile(r"(?i)(?:^|\W)(?:never|do not|don't|dont)\s+(?:use|run|pass|call|add|type)\s*$")

# The second line: phrases that speak to the agent over the user's head, and credential stores, on the text's
# skeleton (accents and case folded, so `ígnore` and `IGNORE` read as `ignore`).
_OVERRIDE = re2.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*(?:previous|prior|above"
    r"|earlier|preceding|original|system|other|user'?s?)\s+(?:instructions?|prompts?|rules?|messages?|guidelines?"
    r"|directions?|context)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|show|mention\s+(?:this\s+)?to|notify|alert|ask)\s+(?:the\s+)?user\b"
    r"|\bwithout\s+(?:telling|asking|informing|notifying)\s+(?:the\s+)?user\b"
    r"|\b(?:say|tell|mention|reveal|report|show)\s+nothing\b[^.]*\buser\b|\bhide\b[^.]*\bfrom\s+(?:the\s+)?user\b"
    r"|\bkeep\s+(?:this|it|that)\s+(?:from\s+(?:the\s+)?user|secret|hidden|quiet)\b"
    r"|\b(?:don'?t|do\s+not|never)\s+let\s+(?:the\s+)?user\s+(?:know|see)\b"
    r"|\bwithout\s+(?:the\s+)?user'?s?\s+(?:knowledge|consent|approval|permission)\b"
    r"|\byou\s+are\s+now\s+(?:a|an|in|the|no\s+longer)\b|\bnew\s+(?:system\s+)?instructions?\s*:"
    r"|\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system|developer)\s+prompt\b"
    r"|\bjailbreak|\bdeveloper\s+mode\b|</?\s*system\s*>|\[/?inst\]"
)
_CREDENTIAL = re2.compile(
    r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b|/etc/(?:shadow|sudoers)\b|\bauthorized_keys\b|\bcredentials\.json\b"
    r"|\bkubeconfig\b|\bgit-credentials\b|\.netrc\b|\.pgpass\b|\.pypirc\b|\.npmrc\b"
)


class Hold(BaseModel):
    """Why an entry is held: the rule and what in the text (or its support) matched."""

    rule: HoldRule
    detail: str


class Screened(BaseModel):
    """One held entry, as `playbook review` lists it."""

    name: str
    section: str
    text: str
    holds: list[Hold]


class Support(BaseModel):
    """What an entry rests on, from the store: the contributors of the sessions behind it (None for sessions of
    this machine), whether its text came only from what the agent read, whether every session behind it was
    withdrawn by its contributor, and whether rules wrote it without a model (`keyless`: such a lesson carries no
    link at all)."""

    contributors: set[str | None] = Field(default_factory=set)
    tainted: str | None = None
    withdrawn: str | None = None
    keyless: bool = False


def text_key(text: str) -> str:
    """The key a release is recorded under: it approves this text, not whatever the entry says later."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _skeleton(text: str) -> str:
    """`text` without accents and case: what the second line's phrases are matched on."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _clip(text: str, most: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def _span_refusals(span: str, before: str, vouched: Vouched) -> list[Refusal]:
    """What refuses one code span: a command (several words) by the allow-list, a name (one word) as a path, a flag,
    a variable and a link."""
    span = span.strip()
    if not span or span in _PLACEHOLDER:
        return []
    if span.startswith("-"):  # flags named alone (`--collect-only -q`): a bypass among them, unless prohibited
        found = [r for r in command_refusals(f"true {span}", vouched) if r.rule == "bypass"]
        return [] if _PROHIBITION.search(before) else found
    if any(c.isspace() for c in span) or "|" in span or "$(" in span or ";" in span:
        found = command_refusals(span, vouched)
        if found and all(r.rule == "bypass" for r in found) and _PROHIBITION.search(before):
            return []  # "Never use `git push --force`": what not to run, said as such
        return found
    if span.startswith("$"):
        return [] if _VARIABLE.match(span) else command_refusals(span, vouched)
    links = [link for link in find_links(span)]
    if links:
        return link_refusals(links, vouched)
    if span.lower() in ("sudo", "doas", "pkexec", "su", "runas", "gsudo"):
        return [Refusal("privilege", f"`{span}` runs a command as another user")]
    refused = path_refusal(span) if ("/" in span or span.startswith((".", "~", "$")) or ":\\" in span) else None
    return [refused] if refused is not None else []


def _prose_commands(prose: str, vouched: Vouched) -> list[Refusal]:
    """What refuses the commands a sentence writes without backticks ("rerun it (pytest -k NAME -x)"): each flag
    is read with the program named right before it, up to the end of its clause, as the allow-list reads a command;
    a flag with no program before it is a mention, refused only when it switches a safeguard off and no prohibition
    comes right before it ("Do not reach for --force" says what not to do)."""
    found: list[Refusal] = []
    for match in _PROSE_FLAG.finditer(prose):
        start = match.start(1)
        clause = _CLAUSE_START.split(prose[:start])[-1]
        words = clause.split()
        program_at = None
        for back in range(len(words) - 1, max(len(words) - 3, -1), -1):  # the program, or a subcommand after it
            if is_program(words[back].strip("(\"'"), vouched):
                program_at = back
                break
        if program_at is not None:
            head = " ".join(w.strip("(\"'") for w in words[program_at:])
            tail = _CLAUSE_END.split(prose[start:], maxsplit=1)[0]
            found += command_refusals(f"{head} {tail}".strip(), vouched)
            continue
        flag = match.group(1)
        refused = [r for r in command_refusals(f"true {flag}", vouched) if r.rule == "bypass"]
        if refused and not _PROSE_PROHIBITION.search(clause):
            found += refused
    return found


def _prose_refusals(prose: str, vouched: Vouched) -> list[Refusal]:
    """What refuses the text outside code spans: its links, shell syntax, flags, paths outside the project and
    commands run as another user."""
    found = link_refusals(find_links(prose), vouched)
    without_links = prose
    for link in find_links(prose):
        without_links = without_links.replace(link.written, " ")
    for shell in _PROSE_SHELL.finditer(without_links):
        if _COMPARISON.match(without_links[shell.start() : shell.end() + 2]):
            continue
        found.append(
            Refusal("syntax", f"shell syntax (`{shell.group().strip()}`) outside a code span, where it is not checked")
        )
        break
    found += _prose_commands(without_links, vouched)
    for match in _PROSE_PATH.finditer(without_links):
        word = match.group(1).rstrip(".:!?")
        if word in ("/", "~") or (word.startswith("/") and word[1:].split("/", 1)[0] not in _SYSTEM_ROOTS):
            continue
        refused = path_refusal(word)
        if refused is not None:
            found.append(refused)
            break
    privilege = _PROSE_PRIVILEGE.search(without_links)
    if privilege:
        found.append(Refusal("privilege", f"`{privilege.group(1)}` runs a command as another user"))
    return found


def text_holds(text: str, vouched: Vouched | None = None) -> list[Hold]:
    """The holds on what `text` says; [] for a lesson the screen admits. `vouched`: what the user and their projects
    vouch for (programs, hosts, scripts, languages); nothing but the defaults when None."""
    vouched = vouched or Vouched()
    text = normalise(text)
    refusals: list[Refusal] = []
    prose_parts: list[str] = []
    last = 0
    for match in _SPAN.finditer(text):
        prose_parts.append(text[last : match.start()])
        refusals += _span_refusals(match.group(1), text[: match.start()], vouched)
        last = match.end()
    prose_parts.append(text[last:])
    prose = " ".join(prose_parts)
    if "`" in prose:
        refusals.append(Refusal("syntax", "an unclosed code span (a lone backtick)"))
    refusals += _prose_refusals(prose, vouched)
    for word, scripts in mixed_words(text):
        refusals.append(Refusal("script", f"`{_clip(word, 40)}` mixes {' and '.join(sorted(scripts))} letters"))
    strangers = sorted(scripts_of([text]) - set(vouched.scripts) - {"Latin"})
    if strangers:
        refusals.append(Refusal("script", f"{', '.join(strangers)} letters, a script the user's prompts never use"))
    language = language_of(prose)
    if language is not None and language != "en" and language not in vouched.languages:
        refusals.append(Refusal("language", f"written in `{language}`, a language the user's prompts never use"))
    refusals += _second_line(text)
    holds: list[Hold] = []
    seen: set[str] = set()
    for refusal in refusals:
        if refusal.rule not in seen:  # one hold per rule: the first thing it refused
            seen.add(refusal.rule)
            holds.append(Hold(rule=refusal.rule, detail=refusal.detail))  # type: ignore[arg-type]
    return holds


def _second_line(text: str) -> list[Refusal]:
    skeleton = _skeleton(text)
    found = []
    override = _OVERRIDE.search(skeleton)
    if override:
        found.append(Refusal("override", f"`{_clip(override.group())}` speaks to the agent over the user's head"))
    credential = _CREDENTIAL.search(skeleton)
    if credential:
        found.append(Refusal("credential", f"`{credential.group()}` names a credential store"))
    return found


def entry_holds(
    text: str, vouched: Vouched | None, support: Support | None, *, shared: bool, min_contributors: int
) -> list[Hold]:
    """Every hold on one entry: what its text says, and what it rests on (`support`; `shared`: the playbook
    learns from several contributors' sessions, so one contributor alone may not put a lesson in it)."""
    vouched = vouched or Vouched()
    if support is not None and support.keyless:
        vouched = replace(vouched, links=False)
    holds = text_holds(text, vouched)
    if support is None:
        return holds
    if support.tainted:
        holds.append(Hold(rule="tainted", detail=support.tainted))
    if support.withdrawn:
        holds.append(Hold(rule="withdrawn", detail=support.withdrawn))
    elif shared and support.contributors and len(support.contributors) < min_contributors:
        who = ", ".join(sorted(c or "this machine" for c in support.contributors))
        holds.append(
            Hold(
                rule="quorum",
                detail=f"supported by {len(support.contributors)} contributor(s) ({who}); {min_contributors} needed",
            )
        )
    return holds


def _split_overrides(entries: list[tuple[str, str]]) -> dict[str, Hold]:
    """Entries that say nothing alone but speak over the user's head read one after the other (an instruction
    split across two entries): each of the pair, with a hold naming the other."""
    found: dict[str, Hold] = {}
    for (a, text_a), (b, text_b) in itertools.pairwise(entries):
        joined = _second_line(f"{normalise(text_a)} {normalise(text_b)}")
        alone = _second_line(normalise(text_a)) or _second_line(normalise(text_b))
        if joined and not alone and joined[0].rule == "override":
            found[a] = Hold(rule="override", detail=f"read with `{b}` after it: {joined[0].detail}")
            found[b] = Hold(rule="override", detail=f"read with `{a}` before it: {joined[0].detail}")
    return found


def screen_playbook(
    playbook: Playbook,
    vouched: Vouched | None,
    support: Mapping[str, Support],
    released: Iterable[tuple[str, str]],
    *,
    shared: bool = False,
    min_contributors: int = 2,
) -> tuple[Playbook, list[Screened]]:
    """`playbook` without its held entries, and the held ones with their holds. An entry whose exact text was
    released (`released`: (entry id, `text_key`) pairs) stays."""
    approved = set(released)
    split = _split_overrides([(e.name, e.text) for _, e in playbook.entries()])
    held: list[Screened] = []
    sections = {}
    for name, items in playbook.sections.items():
        kept = []
        for entry in items:
            holds = entry_holds(
                entry.text, vouched, support.get(entry.name), shared=shared, min_contributors=min_contributors
            )
            if entry.name in split and not any(h.rule == "override" for h in holds):
                holds.append(split[entry.name])
            if holds and (entry.name, text_key(entry.text)) not in approved:
                held.append(Screened(name=entry.name, section=name, text=entry.text, holds=holds))
            else:
                kept.append(entry)
        sections[name] = kept
    if not held:
        return playbook, []
    return playbook.model_copy(update={"sections": sections}), held
