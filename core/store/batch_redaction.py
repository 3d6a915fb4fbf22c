"""An ingest batch redacted before it is stored: secrets out of its normalised parts and titles.

DuckDB screens the batch's temp tables (`_parts`, `_file_meta`) for the records that may hold a secret, a
condition every secret the redactor finds meets; only those reach the Python redactor (`core.redact`). A secret
cut where one message ends and the next begins is looked for the same way, on the lines either side.
"""

from __future__ import annotations

from functools import cache

import duckdb
import re2

from core.redact import (
    BOUNDARY_CHARS,
    MIXED_PAIR,
    MIXED_RUN,
    RULES,
    Marked,
    boundary_spans,
    redact,
    redact_parts,
    rule_shapes,
    secret_shapes,
)
from core.transcript_redaction import keys_kept_apart

__all__ = ["FAMILY_RULES", "redact_batch"]


def redact_batch(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Replace every secret in the batch's parts and titles by a marker, before anything is stored.

    The blocks of one record are scanned together (`redact_parts`), so a secret cut across two blocks
    is caught. Only records that may hold a secret reach the redactor: DuckDB selects those where a block,
    a tool input or the lines joined across two adjacent blocks may hold one (`_MAY_HOLD_SECRET_ROWS`), a
    condition every secret meets; the redactor's rules run only on records where a rule's shape is, and only the
    rules whose shapes are there. A secret cut where one message's text ends and the next one's begins is found the
    same way, on the lines either side (`_message_boundaries`), so what is stored is what
    `core.redact.redact_conversation` makes of the file's messages. Returns how many secrets were replaced, per file.
    """
    con.execute(_MIXED_RUN)
    shapes = secret_shapes()
    screen = {"either": f"{shapes}|{MIXED_PAIR}", "shapes": shapes, "run": MIXED_RUN}
    across_messages, texts = _message_boundaries(con, screen["either"])  # on the texts as read, before any change
    rows = con.execute(_MAY_HOLD_SECRET_ROWS, screen).fetchall()
    changed: list[tuple[int, str | None, str | None]] = []
    counts: dict[str, int] = {}
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j][1:3] == rows[i][1:3]:
            j += 1
        record = rows[i:j]
        # the rules of the families whose shapes the record holds, in `RULES` order
        rules = tuple(
            RULES[k] for k in sorted(k for family in _families_in(record[0][5]) for k in FAMILY_RULES[family])
        )
        extra = {k: across_messages.pop(row[0]) for k, row in enumerate(record) if row[0] in across_messages}
        new_texts, n = redact_parts([r[3] or "" for r in record], rules=rules, extra=extra)
        for row, text in zip(record, new_texts, strict=True):
            tool_input, k = redact(row[4], rules=rules) if row[4] else (row[4], 0)
            if k:  # a tool's input is JSON: two secrets as keys of one object must not become one key
                tool_input = keys_kept_apart(row[4], tool_input)
            n += k
            new_text = text if row[3] is not None else None
            if new_text != row[3] or tool_input != row[4]:
                changed.append((row[0], new_text, tool_input))
        if n:
            counts[record[0][1]] = counts.get(record[0][1], 0) + n
        i = j
    # Texts with a secret across a message boundary in a record that holds no secret of its own: no rule can find one
    # in it (its record was not screened in), so the boundary's spans are all there is.
    for rowid, spans in across_messages.items():
        path, text, tool_input = texts[rowid]
        (new_text,), n = redact_parts([text], rules=False, extra={0: spans})
        changed.append((rowid, new_text, tool_input))
        counts[path] = counts.get(path, 0) + n
    _write_back(con, changed)
    for path, title in con.execute("SELECT path, title FROM _file_meta WHERE title IS NOT NULL").fetchall():
        clean, n = redact(title)
        if n:
            con.execute("UPDATE _file_meta SET title = ? WHERE path = ?", [clean, path])
            counts[path] = counts.get(path, 0) + n
    return counts


def _write_back(con: duckdb.DuckDBPyConnection, changed: list[tuple[int, str | None, str | None]]) -> None:
    """Put (rowid, text, tool_input) rows into `_redacted`, in one statement (`executemany` runs one per row: 0.2 s
    for 450 rows); the commit stores them in place of those parts' own (an UPDATE of `_parts` rewrote whole
    segments of the temp table: up to 0.07 s a batch)."""
    if not changed:
        return
    ids, new_texts, new_inputs = (list(column) for column in zip(*changed, strict=True))
    con.execute(
        "INSERT INTO _redacted SELECT unnest($ids), unnest($texts), unnest($inputs)",
        {"ids": ids, "texts": new_texts, "inputs": new_inputs},
    )


def _message_boundaries(
    con: duckdb.DuckDBPyConnection, either: str
) -> tuple[dict[int, list[Marked]], dict[int, tuple[str, str, str | None]]]:
    """The secrets that show only where one prompt's last text block ends and the next prompt's first begins (a paste
    split over two messages, "the password is" / "hunter2x!"), by rowid of the part they are in; and those
    parts as read (path, text, tool input). DuckDB hands over only the pairs whose joined lines hold a shape or a
    mixed run (`either`)."""
    spans: dict[int, list[Marked]] = {}
    texts: dict[int, tuple[str, str, str | None]] = {}
    for path, left_id, left, left_input, right_id, right, right_input in con.execute(
        _BOUNDARY_PAIRS, {"either": either}
    ).fetchall():
        in_left, in_right = boundary_spans(left, right)
        sides = ((left_id, in_left, left, left_input), (right_id, in_right, right, right_input))
        for rowid, found, text, tool_input in sides:
            if found:
                spans.setdefault(rowid, []).extend(found)
                texts[rowid] = (path, text, tool_input)
    return spans, texts


# Each prompt's first and last text block (what a person pasted, split over two messages; only the user's prompts: the
# same screen over every assistant text took a tenth of the batch), the last line of one beside the first line of the
# next; a pair is screened by both joins `redact_boundary` makes (as
# they are, and with a space), one after the other in one text: the line break between them only widens the screen.
# Only the line either side (at most `BOUNDARY_CHARS` of it) is carried through the window, never a whole text.
_BOUNDARY_PAIRS = rf"""
WITH ends AS (
    SELECT source_path, seq, rowid AS left_id,
           regexp_extract(right(text, {BOUNDARY_CHARS}), '[^\n]*$') AS tail,
           lead(seq) OVER w AS next_seq, lead(rowid) OVER w AS right_id,
           lead(regexp_extract(left(text, {BOUNDARY_CHARS}), '^[^\n]*')) OVER w AS head
    FROM _parts WHERE kind = 'text' AND role = 'user' AND NOT is_meta AND text IS NOT NULL
    WINDOW w AS (PARTITION BY source_path ORDER BY seq, part)
), flagged AS (  -- a message's last text block, and the next message's first
    SELECT source_path, seq, left_id, right_id FROM ends
    WHERE next_seq <> seq AND tail <> '' AND head <> ''
      AND regexp_matches(tail || head || chr(10) || tail || ' ' || head, $either)
)
SELECT f.source_path, f.left_id, l.text, l.tool_input, f.right_id, r.text, r.tool_input
FROM flagged f JOIN _parts l ON l.rowid = f.left_id JOIN _parts r ON r.rowid = f.right_id
ORDER BY f.source_path, f.seq
"""


# A run of 32 token characters or more mixing upper- and lower-case letters and digits (`MIXED_RUN` finds the
# runs holding an upper-case letter and a digit), in C++; or a run of 34 that starts as a Twilio SID does (`AC`/`SK`
# and 32 hex digits, which may all be digits: no lower-case letter then).
_MIXED_RUN = r"""
CREATE OR REPLACE TEMP MACRO _mixed_run(x, run) AS
len(list_filter(regexp_extract_all(x, run),
                lambda t: len(t) >= 32 AND (upper(t) <> t OR (len(t) = 34 AND left(t, 2) IN ('AC', 'SK'))))) > 0
"""

# The indexes of the rules whose shapes `screened` holds; each pattern a parameter of its own, so DuckDB builds each
# RE2 program once per query.
# Rules DuckDB asks about together: a family's shapes in one pattern, so a shaped text takes one pass a family, not
# one a rule (39 rules); the redactor then runs every rule of the families there (most of them start with a literal,
# which RE2 finds at memory speed). A rule named nowhere here is a family of its own.
_FAMILIES = {
    "keys": ("private_key", "putty_key"),
    "vendors": (
        "anthropic_key", "openai_key", "stripe_key", "aws_key", "github_token", "gitlab_token", "slack_token",
        "google_key", "npm_token", "huggingface_token", "sendgrid_key", "jwt",
    ),
    "headers": ("authorization", "bearer"),
    "urls": ("connection_string", "webhook", "url_signature"),
    "commands": (
        "password_flag", "pass_option", "openssl_key", "short_password_flag", "zip_password", "sshpass", "docker_login",
        "piped_password", "sudo_herestring", "htpasswd", "user_password_flag",
    ),
    "files": ("netrc", "pgpass", "env_assignment", "registry_auth"),
    "assignments": ("quoted_assignment", "assignment"),
}  # fmt: skip


def _family_rules() -> list[tuple[int, ...]]:
    """Each family's rules, as indexes into `RULES`, in the order the families first appear there."""
    family_of = {name: family for family, names in _FAMILIES.items() for name in names}
    grouped: dict[str, list[int]] = {}
    for i, rule in enumerate(RULES):
        grouped.setdefault(family_of.get(rule.name, rule.name), []).append(i)
    return [tuple(indexes) for indexes in grouped.values()]


FAMILY_RULES = _family_rules()


@cache
def _family_set() -> re2.Set:
    """Each family's shapes, one pattern a family, in one RE2 set: which families a text holds, in one pass."""
    shapes_of = rule_shapes()
    families = re2.Set.SearchSet(re2.Options())
    for rules in FAMILY_RULES:
        families.Add("|".join(shapes_of[k] for k in rules))
    families.Compile()
    return families


def _families_in(shaped: list[str] | None) -> set[int]:
    """The families whose shapes `shaped` (the texts of a record that hold a rule's shape) hold.

    In Python, one set pass a text: DuckDB asked each family's pattern of each such text, ten passes. A set runs on
    RE2's DFA alone and matches nothing when that runs out of memory; a text that holds a shape holds some family's,
    so a text said to hold none has every family's rules run on it, as a text no set could read."""
    found: set[int] = set()
    for text in shaped or ():
        families = _family_set().Match(text)
        found.update(families if families else range(len(FAMILY_RULES)))
    return found


# The records that may hold a secret: a block, a tool input or the lines joined across two adjacent blocks (as they
# are, and with a space: both joins `redact_boundary` makes) holds a rule's shape (`rules`: the rules whose shapes it
# holds, the only ones the redactor need run) or a mixed token run. A block and its tool input are screened as one
# text, so each pattern is used once per query (RE2 builds a pattern's program once per use, which is much of the
# cost of a small batch); a match across the join only widens the screen. Lines join across blocks only in records
# with a text block after the first (a few in a thousand), and only those go through the window: carrying every text
# through it was a third of the query. Every text is scanned once, for either condition (`$either`); the 3 % that
# meet it are told apart after: two full passes, one per condition, took twice the time. Which rules' shapes a text
# holds is asked only of the texts that hold one. A text is screened once however many parts hold it (whether it may
# hold a secret is a function of the text alone): a file read twice, a subagent's prompt in its parent, a forked
# session's history; about half the bytes of data/samples' texts are such repeats, after replayed parts are dropped.
_MAY_HOLD_SECRET_ROWS = rf"""
WITH multi AS (
    SELECT DISTINCT source_path, seq FROM _parts WHERE part > 0 AND text IS NOT NULL
), across AS (
    SELECT source_path, seq, tail || head || chr(10) || tail || ' ' || head AS screened
    FROM (
        SELECT source_path, seq, regexp_extract(right(coalesce(text, ''), {BOUNDARY_CHARS}), '[^\n]*$') AS tail,
               lead(regexp_extract(left(coalesce(text, ''), {BOUNDARY_CHARS}), '^[^\n]*'))
                   OVER (PARTITION BY source_path, seq ORDER BY part) AS head
        FROM _parts SEMI JOIN multi USING (source_path, seq)
    )
), texts AS (
    SELECT source_path, seq, concat_ws(chr(10), text, tool_input) AS screened FROM _parts
    WHERE text IS NOT NULL OR tool_input IS NOT NULL
    UNION ALL
    SELECT source_path, seq, screened FROM across WHERE screened IS NOT NULL
), screens AS (  -- shape and run asked once of each distinct candidate text, however many parts hold it
    SELECT screened, regexp_matches(screened, $shapes) AS shaped, _mixed_run(screened, $run) AS mixed
    FROM (SELECT DISTINCT screened FROM texts) WHERE regexp_matches(screened, $either)
), flagged AS (  -- which families' shapes, only where one is, is asked in Python (`_families_in`)
    SELECT source_path, seq, list(screened) FILTER (WHERE shaped) AS shaped
    FROM texts JOIN screens USING (screened)
    GROUP BY ALL HAVING bool_or(shaped) OR bool_or(mixed)
), flagged_parts AS (  -- a semi join builds on `flagged`: a join could build on every part, texts and all
    SELECT p.rowid AS id, source_path, seq, part, text, tool_input
    FROM _parts p SEMI JOIN flagged USING (source_path, seq)
    WHERE text IS NOT NULL OR tool_input IS NOT NULL
)
SELECT id, source_path, seq, text, tool_input,
       CASE WHEN part = min(part) OVER (PARTITION BY source_path, seq) THEN shaped END  -- once a record, on its first
FROM flagged_parts JOIN flagged USING (source_path, seq)
ORDER BY source_path, seq, part
"""
