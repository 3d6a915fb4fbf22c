"""What a model's sentence may say about a safeguard: only what the screen can read as keeping it.

Four blind sets in a row got the same kind of text past the phrase readers (`core.safeguards_off`): a safeguard
talked off in words no reader had met ("lift them, push, then restore them", "tell git not to run them", "drop the
coverage gate to zero"). A list of the ways to say "switch it off" is never complete, so for text a model wrote this
reads the other way round: a clause that names a safeguard (hooks, CI, tests, coverage, linters and type checkers,
scanners and audits, review and approval, branch rules, signing, TLS and certificates, permissions and the sandbox,
secrets), or that speaks of one by a pronoun in an entry that names one, is admitted only in a shape known to keep
it:

- an imperative of a keeping act: run, fix, add, wait for, ask, keep ... on ("Run the linter before pushing", "fix
  what the hook reports", "wait for the approval");
- a prohibition of an act that weakens, changes, sends or releases ("never skip the hooks", "don't paste tokens into
  issues", "don't touch the CI config"), or what "rather than" / "instead of" sets aside ("rather than lowering the
  gate");
- a fact of what the safeguard does or must be ("the scanner job runs on every PR", "coverage must stay above 85%",
  "branch protection requires one approval", "TLS verification stays on");
- a condition ("if the hook fails"), a list of names ("type checks, unit tests and a license scan").

A clause is read where it names a safeguard, speaks of one by a pronoun, opens a sentence that names a gate (hooks,
CI, coverage, linters, scanners, branch rules, signing, TLS, permissions, the sandbox), or holds a weakening word in
an entry that names a gate. What an imperative does to a failing test, an assertion or a golden file is finding out
why (run, fix, read, quarantine with a ticket), not changing it until it passes.

Anything else about a safeguard waits for a person's review (`safeguard`): a permission ("can be skipped"), a state
no list here knows ("is a formality", "is informational"), a concession ("even if", "regardless"), a verb no list
here knows. The keyless miner's lessons are typed values rendered by our own code and are not read here. Code
spans are the allow-list's to judge and are read as one opaque word.

A pronoun (and "that file", "its contents", "the value") is read as what it stands for (`core.referents`): the subject
of a statement or the object of an imperative in the nearest piece that names something, passing over a step that
only goes somewhere ("open the config file and delete it"). One that stands for a secret is read as the word
"secret"; one that stands for a container or a server is no safeguard. What an imperative may do to a secret is keep
it (rotate, read, use ...), and every place it takes one must keep secrets (`core.secret_talk`); a fact may not say one
shows ("must be tracked in git"). The words all this reads by are `core.safeguard_words`'. Pure functions.
"""

from __future__ import annotations

import itertools

import re2

from core.program_calls import clip
from core.prohibitions import prohibited
from core.reading import folded, run_on, sentences, spelled_out, spelling_hidden, unemphasised
from core.referents import antecedent
from core.safeguard_words import (
    ARTICLE_OK,
    BE,
    BULLET,
    BY_MEANS,
    CHECKED_IN,
    CLAUSE_CUT,
    CODE,
    CONCESSION,
    CONDITION,
    CONTINUATIONS,
    CONTRACTED_IS,
    CREATES,
    DEMONSTRATIVES,
    DETERMINERS,
    DISAPPROVED,
    ENV_TEMPLATE,
    FACT,
    FAILING,
    FILE_SPAN,
    FILLER,
    GATE_FOLDERS,
    GITIGNORED,
    GUARD,
    HELD_BY,
    IN_PASSING,
    KEEP,
    KEEP_ONLY_WITH,
    KEEPING,
    KEPT_AWAY,
    KEPT_IN,
    KEPT_STATES,
    LEAD,
    MAY,
    MODAL_KEEPS,
    NAMES_OPEN,
    NEED,
    NEGATED_DUTY,
    NEGATION,
    NEVER_SHOWS,
    NONE_LEFT,
    NOT_NEEDED,
    NOT_SAFEGUARD,
    ON_A_FAILURE,
    OPENS_CONDITION,
    PATH,
    PLACE,
    POSSESSIVE,
    PREPOSITIONS,
    PROHIBITED_OK,
    PROHIBITION,
    PRONOUN,
    REFERRER,
    REFUSED,
    SAFEGUARD,
    SECRET_CARE,
    SECRET_NAMED,
    SECRET_PLACING,
    SECRET_STATES,
    SET_ASIDE,
    STATE_OK,
    TOOLS,
    URL,
    USES,
    VERBS,
    WEAK,
    WEAKENER_OFF,
    WORD,
    is_a,
    lemmas,
    words_in,
)
from core.secret_sends import keeps_secrets
from core.secret_talk import only_secrets, said_of_a_secret, secret_act

__all__ = ["SAFEGUARD", "safeguard_refusals", "safeguard_refusals_after"]

_PIECE = re2.compile(r"[^;\n]+")


def _prohibits(clause: str) -> bool | None:
    """Whether `clause` is a prohibition that keeps (True), one that sets a keeping act aside (False), or no
    prohibition (None)."""
    if (duty := NEGATED_DUTY.match(clause)) is not None:
        return is_a(duty.group(1) or duty.group(2), KEEP)
    head = PROHIBITION.match(clause)
    if head is None:
        return None
    verb = head.group(1) or head.group(2)
    if head.group(1) and not re2.match(
        r"^(?:please\s+|you\s+|we\s+)?(?:never|do|don|dont|must\s+not|mustn|should\s+not"
        r"|shouldn|may\s+not|cannot|can'?t|can\s+never|must\s+never|should\s+never"
        r"|avoid|no|nobody|no\s+one)",
        clause,
    ):
        return None  # "we may ...", "you should ...": no prohibition, read as a fact
    if verb.startswith("-"):
        return True  # a flag prohibited
    if is_a(verb, KEEPING):
        return WEAK.search(clause[head.end() :]) is not None  # "never run with the hooks off" keeps
    if is_a(verb, USES) or is_a(verb, CREATES):  # "don't install the git hooks", "don't write tests for it" set a
        # safeguard aside; "never use `--no-verify`", "never write secrets to logs" do not
        after = words_in(clause[head.end() :])
        if is_a(verb, CREATES):  # its object only, and a kind of test is no test set aside ("tests that sleep")
            after = list(itertools.takewhile(lambda w: w not in PREPOSITIONS, after))
            if set(after) & {"that", "which", "who", "without"}:
                return True
        object_ = " ".join(after[:4])
        return SAFEGUARD.search(SECRET_NAMED.sub("x", object_)) is None
    return is_a(verb, PROHIBITED_OK)


def _named_in_passing(clause: str) -> bool:
    """True when every safeguard `clause` names is a test or a review named after a preposition: where the act
    happens, not what it is done to ("capture the bug as a failing test", not "retire the flaky suite")."""
    found = False
    for match in SAFEGUARD.finditer(clause):
        before = words_in(clause[: match.start()])[-3:]
        if IN_PASSING.match(match.group()) is None or not PREPOSITIONS.intersection(before):
            return False
        found = True
    return found


def _typed(
    clause: str,
    led: str,
    first_clause: bool = False,
    of_a_safeguard: bool = False,
    gated: bool = False,
    ambiguous: bool = False,
) -> bool:
    """Whether `clause` (folded, one clause, code spans as `code`) reads in a shape known to keep a safeguard. `led`:
    what opened it, "aside" ("rather than" / "instead of"), "listing" (it goes on a prohibition's list: "don't weaken
    or remove a check"), "condition" ("if the hook fails") or "". `of_a_safeguard`: a word in it refers to one;
    `gated`: its entry names a gate; `ambiguous`: a word in it may stand for a safeguard named before or for a thing
    named since."""
    if CONCESSION.search(clause):
        return False
    words = words_in(clause)
    if not words:
        return True
    if ambiguous and SAFEGUARD.search(clause) is None and WEAK.search(clause) is None and is_a(words[0], KEEP | VERBS):
        return True  # "start the test container and stop it": a known act that weakens nothing, whichever it stands for
    if led == "condition" or CONDITION.match(clause):
        return True  # a condition instructs nothing: the clause it leads to is read on its own
    if led == "listing" and not is_a(words[0], KEEPING):
        return True  # "never paste keys into issues, PRs or chat", "don't weaken or remove a check"
    if led == "aside-of-keeping" and is_a(words[0], KEEPING):
        return True  # "check the lint rules before committing instead of waiting for CI to complain"
    if led in ("aside", "aside-of-keeping"):  # "rather than lowering the gate", "than localhost", not "than the tests"
        # what is set aside weakens ("rather than lowering the gate"), or is no safeguard ("rather than localhost");
        # not "instead of opening a pull request", "rather than waiting for review"
        object_ = words[:5] if words[0].endswith("ing") else words[:2]  # an act and its object, or a name
        if only_secrets(clause):
            # "rather than hard-coding it", "rather than searching for it"; not "rather than rotating it"
            acted = secret_act(clause, words)
            placed = is_a(words[0], SECRET_PLACING) and PLACE.search(clause) is not None
            return not (acted and (is_a(words[0], SECRET_CARE) or placed))
        return WEAK.search(clause) is not None or SAFEGUARD.search(" ".join(object_)) is None
    if words[0] == "not" and len(words) > 1 and is_a(words[1], VERBS):  # "fixed before merging, not ignored"
        return WEAK.search(clause) is not None if is_a(words[1], KEEPING) else is_a(words[1], PROHIBITED_OK)
    if words[0] in ("not", "never") and len(words) > 1 and not is_a(words[1], VERBS) and not first_clause:
        # a contrast ("use `secrets`, not `random`", "never for tokens"): what it sets aside is no safeguard
        rest = [w for w in words[1:] if w not in ("a", "an", "the", "by", "for", "as", "to", "in", "with")]
        return not rest or TOOLS.match(rest[0]) is not None or SAFEGUARD.match(SECRET_NAMED.sub("x", rest[0])) is None
    secrets_only = only_secrets(clause)
    if secrets_only and NEVER_SHOWS.search(clause) and SECRET_NAMED.search(clause):
        return True  # "so it never appears in shell history", "so it doesn't end up in dotfiles"
    if secrets_only and NOT_NEEDED.match(clause):
        return True  # "you do not need the token locally": a secret not wanted is no safeguard off
    if (kept := _prohibits(clause)) is not None:
        return kept
    if WEAKENER_OFF.search(clause):
        return True  # "auto-approve stays off": what is off is itself a way round a safeguard
    weak = list(WEAK.finditer(clause))
    if weak and KEPT_AWAY.match(clause):
        return True  # "keep the signing key off laptops"
    if weak and REFUSED.search(clause):
        return True  # "unsigned commits are rejected": what the safeguard refuses
    if weak and not all(prohibited(clause, m.start(), m.end()) for m in weak):
        # "remove the secret", not "remove the hook" nor "remove its teeth"
        named = SECRET_NAMED.search(clause) is not None
        return secrets_only and not of_a_safeguard and (named or not gated) and is_a(words[0], SECRET_CARE)
    if weak:
        return True  # "it's wrong to force-push", "skipping the hooks is never acceptable"
    first = words[0]
    if secrets_only and SECRET_NAMED.search(clause) and (kept_in := KEPT_IN.search(clause)) is not None:
        return keeps_secrets(clause[kept_in.end() :])  # "API keys belong in env vars", not "... in the README"
    if secrets_only and (acted := secret_act(clause, words)) is not None:
        return acted
    if secrets_only and (said := said_of_a_secret(clause)) is not None:
        return said
    if secrets_only and first == "code" and not first_clause:
        return True  # values listed for a secret ("set `httpOnly: true` and `secure: true` on the session cookie")
    if is_a(first, KEEP) and first not in BE:
        settled_in_code = first in ("set", "configure") and "code" in words  # a setting's value is the code's to judge
        if FAILING.search(clause) and not is_a(first, ON_A_FAILURE) and not settled_in_code:
            return False  # "replace the assertions in failing tests": the test made to pass, not the code fixed
        rule = next((KEEP_ONLY_WITH[w] for w in lemmas(first) if w in KEEP_ONLY_WITH), None)
        return rule is None or rule.search(clause) is not None
    if _named_in_passing(clause):
        return True  # "reproduce the bug in a test first", "mock services at the boundary in tests"
    # ("mark that test as expected to fail"; "tools that write outside the repo" opens with its subject)
    plural = first.endswith("s") and not first.endswith("ss")
    demonstrative = words[1:2] and words[1] in DEMONSTRATIVES and not plural
    if (demonstrative or (words[1:2] and words[1] in DETERMINERS)) and first not in DETERMINERS | PREPOSITIONS:
        return False  # an imperative whose verb no list here knows: "retire the required review"
    # a fact: the subject, then what it does, must be or is
    for i, word in enumerate(words):
        if (
            word in ("must", "should", "will", "shall")
            and words[i + 1 : i + 2] in (["never"], ["not"])
            and i + 2 < len(words)
        ):
            verb = words[i + 2]  # "tests must never call production services": a prohibition said of the subject
            return (is_a(verb, PROHIBITED_OK) or is_a(verb, HELD_BY)) and not is_a(verb, KEEPING) and verb != "be"
        if word in NEGATION or word.endswith("n't"):
            return False  # "is not required", "never blocks", "doesn't need review"
        if word in ("must", "should", "will", "shall") or (word in NEED and words[i + 1 : i + 2] == ["to"]):
            after = [w for w in words[i + 1 :] if w not in ("to", "always", "still", "also", "get")]
            if after[:1] == ["be"]:  # "must be green", not "should be skipped"
                return len(after) > 1 and (after[1] in STATE_OK or is_a(after[1], KEEPING))
            return bool(after) and (is_a(after[0], KEEPING) or after[0] in MODAL_KEEPS)
        if word in MAY and i + 1 < len(words):
            after = [w for w in words[i + 1 :] if w not in ("always", "still", "also")]
            # "so CI can run them", "so a DBA can review them", "so it can be rotated"; not "can be skipped", "can
            # merge when CI is red": a permission to merge or push over it is none
            if after[:1] == ["be"]:
                return len(after) > 1 and after[1] in KEPT_STATES
            return is_a(after[0], KEEPING)
        if word in BE:
            state = [w for w in words[i + 1 :] if w not in ("always", "also", "still", "usually", "currently")]
            if not state:
                return False
            if state[0] in DISAPPROVED and state[1:2] == ["to"] and len(state) > 2:
                return is_a(state[2], PROHIBITED_OK) and not is_a(state[2], KEEPING)  # "it is wrong to force-push"
            if state[0] in ("a", "an", "the"):
                return len(state) > 1 and state[1] in ARTICLE_OK
            if secrets_only and state[0] in SECRET_STATES:
                return True  # "tokens in fixtures are fake"
            return state[0] in STATE_OK or (state[0][0].isdigit() and state[0].strip("0.%") != "")
        if word in FACT and (SAFEGUARD.match(word) is None or (i and words[i - 1] == "code")):
            # "tests", "checks": the subject, no verb; but "`actionlint` checks workflow files"
            return True
    # no verb read: a name or a list of names ("unit tests", "a `flaky` marker with the ticket number"); a
    # sentence's first clause must open as a name does ("retire the pre-commit hook" is an imperative)
    if first_clause and words[0] not in NAMES_OPEN and SAFEGUARD.match(words[0]) is None:
        return False
    return PRONOUN.search(clause) is None and (len(words) <= 4 or (words[0] in DETERMINERS and len(words) <= 7))


def _clauses(sentence: str) -> list[tuple[int, int, str]]:
    """Where `sentence`'s clauses are (start, end), each with what opened it (see `_typed`)."""
    parts: list[tuple[int, int, str]] = []
    start, led, keeping = 0, "", None
    for cut_at in CLAUSE_CUT.finditer(sentence):
        parts.append((start, cut_at.start(), led))
        cut = cut_at.group().strip()
        if SET_ASIDE.search(cut + " "):
            if keeping is None:  # "check the rules before committing instead of waiting for CI": the aside of a keep
                head = WORD.match(FILLER.sub("", sentence))
                first = sentence[: parts[0][1]]
                keeping = head is not None and is_a(head.group(), KEEP) and head.group() not in KEEP_ONLY_WITH
                keeping = keeping and WEAK.search(first) is None
            led = "aside-of-keeping" if keeping else "aside"
        elif OPENS_CONDITION.search(cut):
            led = "condition"
        elif cut in CONTINUATIONS and led in ("aside", "aside-of-keeping"):
            pass  # "instead of guessing or searching the disk for it": the aside goes on
        elif cut in CONTINUATIONS and (
            led == "listing" or _prohibits(FILLER.sub("", sentence[start : cut_at.start()].strip())) is not None
        ):
            led = "listing"
        else:
            led = ""
        start = cut_at.end()
    parts.append((start, len(sentence), led))
    return parts


def safeguard_refusals(cut: str, text: str = "", *, across: bool = False) -> list[tuple[str, str]]:
    """The first clause of `cut` (a text `folded` and cut into `sentences`) in no shape known to keep a safeguard,
    where it names one, speaks of one by a pronoun in a text that names one, or weakens something in a sentence
    that names one: [("safeguard", what)], or []. `text`, the text `cut` was read from, is read once more as its
    spelling reads (`d i s a b l e  t h e  t e s t s`) when it hides one. `across`: `cut` is two entries read one
    after the other, for a pronoun in one whose safeguard the other names (each is read alone for the rest)."""
    found = _refusals(cut, across)
    if not found and text and spelling_hidden(text):
        found = _refusals(sentences(folded(run_on(unemphasised(spelled_out(text))))), across)
    return found


def _secret_named(sentence: str, start: int, end: int, secrets: list[tuple[int, int]]) -> str:
    """The clause `sentence[start:end]`, each word in it that stands for a secret (`secrets`: where) read as
    "secret"."""
    parts, at = [], start
    for left, right in secrets:
        if start <= left and right <= end:
            parts += [sentence[at:left], "secret"]
            at = right
    return "".join(parts) + sentence[at:end]


def safeguard_refusals_after(first: str, then: str, between: str = "") -> list[tuple[str, str]]:
    """`safeguard_refusals(joined, across=True)` of two entries read one after the other (`first`, then `then`, each
    cut into `sentences`; `between`: what `joined` puts between them), where neither says anything held alone
    ("The pre-push hook is slow." then "Skip it."), read only where the two can say more than each alone: a
    sentence of `first` that runs on into `then`, a sentence of `then` with a word that may refer back, and every
    sentence of an entry that alone was not read at all (it names no safeguard). The rest reads as it did alone,
    where nothing was held, or with less (across two entries, naming a gate in one does not make the other's
    weakening words read). Where a rewrite reaches across the two (a code span, a hook's name), all is read."""
    together = first + between + then
    if SAFEGUARD.search(together) is None:
        return []
    text = _unmasked(together)
    if SAFEGUARD.search(text) is None:
        return []
    text = _plain_words(text)
    first_unmasked, then_unmasked = _unmasked(first), _unmasked(then)
    head = _plain_words(first_unmasked) + between
    if text != head + _plain_words(then_unmasked):
        return _read(text, gated=False)
    first_read, then_read = _read_alone(first, first_unmasked), _read_alone(then, then_unmasked)
    # A `first` that ends no sentence ("The hooks are slow" then "Skip them.") runs on into `then`'s first.
    runs_on = head.rstrip(" ")[-1:] not in ("", ";", "\n")
    start = (max(head.rfind(";"), head.rfind("\n")) + 1 if runs_on else len(head)) if first_read else 0
    return _read(text, start, gated=False, referring_from=len(head) if then_read else None)


def _read_alone(cut: str, unmasked: str) -> bool:
    """Whether `_refusals` reads `cut`'s sentences at all (it names a safeguard, and once `unmasked` still does)."""
    return SAFEGUARD.search(cut) is not None and SAFEGUARD.search(unmasked) is not None


def _unmasked(cut: str) -> str:
    """`cut` with code spans, links, hooks of no safeguard and paths read for what they are."""
    # Each pass only where what it rewrites can be (a pattern call costs a few microseconds even where none is).
    text = CODE.sub("code", FILE_SPAN.sub(r"\1", cut)) if "`" in cut else cut
    text = URL.sub("link", text) if "://" in text else text
    text = NOT_SAFEGUARD.sub("x", text) if "hook" in text else text
    if "/" in text:
        text = PATH.sub(lambda m: m.group().replace("/", " ") if GATE_FOLDERS.search(m.group()) else "path", text)
    return text


def _plain_words(text: str) -> str:
    """`text` (`_unmasked`) with the phrasings the clauses are read by written plainly ("it's", "checked in")."""
    text = CONTRACTED_IS.sub(r"\1 is", text) if "'s" in text else text
    text = BY_MEANS.sub(r", \1", text) if " by " in text else text
    text = CHECKED_IN.sub("commit", text) if "check" in text else text
    text = NONE_LEFT.sub("clean", text) if "zero" in text or "0" in text else text
    text = ENV_TEMPLATE.sub("env-template", text) if ".env." in text else text
    return GITIGNORED.sub("untracked", text) if "ignore" in text else text


def _refusals(cut: str, across: bool = False) -> list[tuple[str, str]]:
    if SAFEGUARD.search(cut) is None:  # what is read below names no more than the text does: most texts end here
        return []
    text = _unmasked(cut)
    if SAFEGUARD.search(text) is None:
        return []
    text = _plain_words(text)
    # a gate named anywhere in an entry: weakening words are read in every sentence of it (not of its neighbour)
    return _read(text, gated=not across and GUARD.search(text) is not None)


# A word that opens a reply and says nothing of what follows ("no, use ...", "ok, run ..."): no clause of its own.
INTERJECTION = re2.compile(r"^(?:no|nope|nah|yes|yeah|yep|ok|okay|right|well|hmm+|actually|sorry|wait|oh|ah)$")


def _read(text: str, start: int = 0, *, gated: bool, referring_from: int | None = None) -> list[tuple[str, str]]:
    """The first clause of `text`'s sentences from `start` on in no shape known to keep a safeguard. From
    `referring_from` on, only sentences with a word that may refer back are read."""
    for piece in _PIECE.finditer(text, start):
        sentence = BULLET.sub("", piece.group()).strip()
        if referring_from is not None and piece.start() >= referring_from:
            if REFERRER.search(sentence) is None and POSSESSIVE.search(sentence) is None:
                continue
        offset = piece.start() + piece.group().find(sentence)
        # Where what makes a clause worth reading is, found once per sentence (a clause is read only where one is:
        # a text of many short clauses costs a pattern call per sentence, not per clause). A pronoun is read where
        # what it refers to is a safeguard or a secret; one that stands for a secret is read as the word "secret".
        named = [m.start() for m in SAFEGUARD.finditer(sentence)]
        referred = [
            (*span, kind)
            for m in REFERRER.finditer(sentence)
            if (
                kind := antecedent(
                    text[: offset + (span := m.span(1) if m.group(1) else m.span(2))[0]],
                    m.group(1).split()[-1] if m.group(1) and " " in m.group(1) else "",
                    m.group(1) or m.group(2),
                )
            )
            is not None
            # "the value", "the file": a secret's, when one was named; a safeguard is named by a pronoun
            and (kind == "secret" or not (m.group(1) or "").startswith("the "))
        ]
        if not named and not gated and not referred:
            continue
        marks = sorted(named + [start for start, _, _ in referred])
        secrets = [(start, end) for start, end, kind in referred if kind == "secret"]
        doubtful = [start for start, _, kind in referred if kind == "ambiguous"]
        # where a word refers to a safeguard, a possessive included ("remove its teeth")
        guards = [start for start, _, kind in referred if kind == "safeguard"] + [
            m.start() for m in POSSESSIVE.finditer(sentence) if antecedent(text[: offset + m.start()]) == "safeguard"
        ]
        if named or gated:
            marks = sorted(marks + [m.start() for m in WEAK.finditer(sentence)])
            marks = sorted(marks + [m.start() for m in FAILING.finditer(sentence)])
            marks = sorted(marks + [m.start() for m in CONCESSION.finditer(sentence)])
        guarded = GUARD.search(sentence) is not None
        at = 0
        first = 0  # the sentence's first clause, past an interjection that opens it ("no, use `make lint` to lint")
        for i, (start, end, led) in enumerate(_clauses(sentence)):
            while at < len(marks) and marks[at] < start:
                at += 1
            if i == first and INTERJECTION.match(sentence[start:end].strip().strip(".!?\"'*_,")):
                first += 1
                continue
            # what opens a sentence naming a gate: "nudge the floor down until CI passes"
            opens = i == first and guarded
            if not opens and not (at < len(marks) and marks[at] < end):
                continue
            clause = FILLER.sub("", _secret_named(sentence, start, end, secrets).strip().strip(".!?\"'*_"))
            of_a_safeguard = any(start <= at < end for at in guards)
            ambiguous = any(start <= at < end for at in doubtful)
            if (lead := LEAD.match(clause)) is not None:  # a conjunction a parenthesis or a mark left at its head
                clause, led = clause[lead.end() :], "aside" if SET_ASIDE.match(lead.group()) else led
            if clause and not _typed(
                clause, led, first_clause=i == first, of_a_safeguard=of_a_safeguard, gated=gated, ambiguous=ambiguous
            ):
                return [
                    ("safeguard", f"`{clip(clause, 80)}` says of a safeguard what the screen cannot read as keeping")
                ]
    return []
