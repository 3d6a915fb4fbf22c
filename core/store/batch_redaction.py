"""An ingest batch redacted before it is stored: secrets out of its normalised parts and titles.

DuckDB screens the batch's temp tables (`_parts`, `_file_meta`) for the records that may hold a secret, a
condition every secret the redactor finds meets; only those reach the Python redactor (`core.redact`).
"""

from __future__ import annotations

import duckdb

from core.redact import MIXED_PAIR, MIXED_RUN, RULES, redact, redact_parts, rule_shapes, secret_shapes

__all__ = ["redact_batch"]


def redact_batch(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Replace every secret in the batch's parts and titles by a marker, before anything is stored.

    The blocks of one record are scanned together (`redact_parts`), so a secret cut across two blocks
    is caught. Only records that may hold a secret reach the redactor: DuckDB selects those where a block,
    a tool input or the words joined across two adjacent blocks may hold one (`_MAY_HOLD_SECRET_ROWS`), a
    condition every secret meets (RE2's `\\S` is ASCII, so its joined words contain Python's); the redactor's
    rules run only on records where a rule's shape is, and only the rules whose shapes are there. Returns how many
    secrets were replaced, per file.
    """
    con.execute(_MIXED_RUN)
    shapes = secret_shapes()
    screen = {"either": f"{shapes}|{MIXED_PAIR}", "shapes": shapes, "run": MIXED_RUN}
    screen |= {f"rule_{i}": shape for i, shape in enumerate(rule_shapes())}
    rows = con.execute(_MAY_HOLD_SECRET_ROWS, screen).fetchall()
    changed: list[tuple[int, str | None, str | None]] = []
    counts: dict[str, int] = {}
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j][1:3] == rows[i][1:3]:
            j += 1
        record = rows[i:j]
        rules = tuple(RULES[k] for k in record[0][5])  # those whose shape the record holds, in `RULES` order
        texts, n = redact_parts([r[3] or "" for r in record], rules=rules)
        for row, text in zip(record, texts, strict=True):
            tool_input, k = redact(row[4], rules=rules) if row[4] else (row[4], 0)
            n += k
            new_text = text if row[3] is not None else None
            if new_text != row[3] or tool_input != row[4]:
                changed.append((row[0], new_text, tool_input))
        if n:
            counts[record[0][1]] = counts.get(record[0][1], 0) + n
        i = j
    if changed:
        con.execute("CREATE OR REPLACE TEMP TABLE _redacted (id BIGINT, text VARCHAR, tool_input VARCHAR)")
        # One statement: `executemany` runs one per row (0.2 s for 450 rows).
        ids, new_texts, new_inputs = (list(column) for column in zip(*changed, strict=True))
        con.execute(
            "INSERT INTO _redacted SELECT unnest($ids), unnest($texts), unnest($inputs)",
            {"ids": ids, "texts": new_texts, "inputs": new_inputs},
        )
        con.execute(
            "UPDATE _parts SET text = r.text, tool_input = r.tool_input FROM _redacted r WHERE _parts.rowid = r.id"
        )
        con.execute("DROP TABLE _redacted")
    for path, title in con.execute("SELECT path, title FROM _file_meta WHERE title IS NOT NULL").fetchall():
        clean, n = redact(title)
        if n:
            con.execute("UPDATE _file_meta SET title = ? WHERE path = ?", [clean, path])
            counts[path] = counts.get(path, 0) + n
    return counts


# A run of 32 token characters or more mixing upper- and lower-case letters and digits (`MIXED_RUN` finds the
# runs holding an upper-case letter and a digit), in C++.
_MIXED_RUN = r"""
CREATE OR REPLACE TEMP MACRO _mixed_run(x, run) AS
len(list_filter(regexp_extract_all(x, run), lambda t: len(t) >= 32 AND upper(t) <> t)) > 0
"""

# The indexes of the rules whose shapes `screened` holds; each pattern a parameter of its own, so DuckDB builds each
# RE2 program once per query.
_WHICH_RULES = "[" + ", ".join(f"CASE WHEN regexp_matches(screened, $rule_{i}) THEN {i} END" for i in range(len(RULES)))
_WHICH_RULES += "]"

# The records that may hold a secret: a block, a tool input or the words joined across two adjacent blocks
# holds a rule's shape (`rules`: the rules whose shapes it holds, the only ones the redactor need run) or a mixed
# token run. A block and its tool input are screened as one text, so each pattern is used once per query (RE2 builds a
# pattern's program once per use, which is much of the cost of a small batch); a match across the join only widens
# the screen. Words join across blocks only in records with a text block after the first (a few in a thousand), and
# only those go through the window: carrying every text through it was a third of the query. Every text is scanned
# once, for either condition (`$either`); the 3 % that meet it are told apart after: two full passes, one per
# condition, took twice the time. Which rules' shapes a text holds is asked only of the texts that hold one.
_MAY_HOLD_SECRET_ROWS = rf"""
WITH multi AS (
    SELECT DISTINCT source_path, seq FROM _parts WHERE part > 0 AND text IS NOT NULL
), across AS (
    SELECT source_path, seq, regexp_extract(coalesce(text, ''), '\S*$')
               || lead(regexp_extract(coalesce(text, ''), '^\S*')) OVER (PARTITION BY source_path, seq ORDER BY part)
               AS screened
    FROM _parts SEMI JOIN multi USING (source_path, seq)
), texts AS (
    SELECT source_path, seq, concat_ws(chr(10), text, tool_input) AS screened FROM _parts
    WHERE text IS NOT NULL OR tool_input IS NOT NULL
    UNION ALL
    SELECT source_path, seq, screened FROM across WHERE screened IS NOT NULL
), candidates AS (
    SELECT source_path, seq, screened FROM texts WHERE regexp_matches(screened, $either)
), screened AS (
    SELECT source_path, seq, screened, regexp_matches(screened, $shapes) AS shaped, _mixed_run(screened, $run) AS mixed
    FROM candidates
), ruled AS (  -- which rules' shapes, only where one is: each rule alone is a full pass of its own
    SELECT source_path, seq, CASE WHEN shaped THEN {_WHICH_RULES} END AS rules FROM screened WHERE shaped OR mixed
), flagged AS (
    SELECT source_path, seq,
           coalesce(list_sort(list_distinct(flatten(list(rules) FILTER (WHERE rules IS NOT NULL)))), []) AS rules
    FROM ruled GROUP BY ALL
), flagged_parts AS (  -- a semi join builds on `flagged`: a join could build on every part, texts and all
    SELECT p.rowid AS id, source_path, seq, part, text, tool_input
    FROM _parts p SEMI JOIN flagged USING (source_path, seq)
    WHERE text IS NOT NULL OR tool_input IS NOT NULL
)
SELECT id, source_path, seq, text, tool_input, rules FROM flagged_parts JOIN flagged USING (source_path, seq)
ORDER BY source_path, seq, part
"""
