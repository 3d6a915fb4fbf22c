"""Codex CLI rollouts (`sessions/YYYY/MM/DD/rollout-*.jsonl`), current and older layouts.

Current layout: every line is `{timestamp, type, payload}` with `type` one of `session_meta`,
`response_item`, `event_msg`, `turn_context`, `compacted`. Older layout: a first line
`{id, timestamp, instructions, git}` then bare response items (`{type: "message", role, content}`,
`function_call`, ...) and `{record_type: "state"}` lines. Both are normalised in SQL.

User prompts come from `event_msg/user_message` when the file has them (the response-item copy of a
user turn also carries injected environment blocks); otherwise from user response items. An Esc
(`event_msg/turn_aborted`, reason `interrupted`) is stored as Claude Code's marker for it.
"""

from __future__ import annotations

import json

import duckdb

from core.transcripts._batch import files_table, json_type_of, number_in_file, read_names

__all__ = ["READER_VERSION", "load_codex"]

# What this reader extracts, as a number: bump it whenever a change here stores other rows (text, flags, keys, counts)
# from the same file, so the ingest reads every file it read before again (`core.transcripts.reader_versions`).
# 1: a block Codex writes (`<user_instructions>`, `<environment_context>`, AGENTS.md) is never a prompt.
READER_VERSION = 1

# The fields of a record: the current layout's `payload` and the older layout's bare fields share one shape, so `p`
# below is the same struct for both.
_FIELDS: dict[str, object] = {
    "type": "VARCHAR", "role": "VARCHAR", "content": "JSON", "name": "VARCHAR", "arguments": "VARCHAR",
    "input": "VARCHAR", "call_id": "VARCHAR", "output": "JSON", "summary": "JSON", "message": "VARCHAR",
    "id": "VARCHAR", "cwd": "VARCHAR", "cli_version": "VARCHAR", "version": "VARCHAR", "git": {"branch": "VARCHAR"},
    "action": "JSON", "reason": "VARCHAR",
}  # fmt: skip
# A line as the current layout writes it, with the older layout's markers (`record_type`, a first line's `id`).
_LINE = json.dumps(
    {"timestamp": "VARCHAR", "record_type": "VARCHAR", "type": "VARCHAR", "id": "VARCHAR", "payload": _FIELDS}
)
_OLD_LAYOUT = json.dumps(_FIELDS)


def _sql_type(shape: object) -> str:
    """The SQL type of a `json_transform` shape (`{"branch": "VARCHAR"}` is `STRUCT(branch VARCHAR)`)."""
    if isinstance(shape, dict):
        return "STRUCT(" + ", ".join(f"{k} {_sql_type(v)}" for k, v in shape.items()) + ")"
    return str(shape)


# Both layouts' fields as `read_json` columns: what a line of either layout is typed to. Not read here (see `_LINES`);
# `bench/bench_ingest.py` loads these as the floor a reader of rollouts cannot go below.
_COLUMNS = (
    "{timestamp: 'VARCHAR', record_type: 'VARCHAR', payload: '"
    + _sql_type(_FIELDS)
    + "', "
    + ", ".join(f"{k}: '{_sql_type(v)}'" for k, v in _FIELDS.items())
    + "}"
)

# Each line is split by `read_ndjson_objects` and typed by `json_transform` to the current layout only; a line with no
# `payload` (the older layout) is typed again to its bare fields, and only such lines are (CASE runs a branch on the
# rows that take it). Reading every line's bare fields as well (`read_json` with both shapes as columns) and packing
# them into a struct took a third of the reader's CPU (0.22 s of 0.66 for 142 MB of rollouts), for rollouts that have
# none. A line that is not JSON, or not an object, comes back as NULLs: counted as bad. A line carries its file's
# number (`fid`), not its path and session: those are joined from `_cx_files` to the parts and the files' statistics.
_LINES = f"""
CREATE OR REPLACE TEMP TABLE _cx_lines AS
WITH raw AS (
    SELECT file_index::INTEGER AS fid, row_number() OVER () AS seq, json, json_transform(json, '{_LINE}') AS r
    FROM read_ndjson_objects($files, ignore_errors = true, maximum_object_size = $max_object_size)
), typed AS (
    SELECT l.fid, l.seq,
           r.type IS NULL AND r.payload IS NULL AND r.record_type IS NULL AND r.id IS NULL AS bad,
           CASE WHEN r.payload IS NOT NULL THEN r.type
                WHEN r.record_type IS NOT NULL THEN 'state'
                WHEN r.type IS NULL AND r.id IS NOT NULL THEN 'session_meta'
                ELSE 'response_item' END AS rtype,
           CASE WHEN r.payload IS NOT NULL THEN r.payload ELSE json_transform(json, '{_OLD_LAYOUT}') END AS p,
           try_cast(r.timestamp AS TIMESTAMPTZ) AS ts
    FROM raw l
)
SELECT *, p.type AS ptype, p.role AS role FROM typed
"""

# The files with `event_msg/user_message` records, from the stored lines: asked of the parse itself (a semi-join
# on it), the parse was held whole in memory a second time (0.03 s of 0.3 a batch's 60 MB of rollouts).
_EVENTS = """
CREATE OR REPLACE TEMP TABLE _cx_events AS
SELECT DISTINCT fid FROM _cx_lines WHERE rtype = 'event_msg' AND ptype = 'user_message'
"""
# A semi-join, not a window over each file's records: 12 % less for the whole reader.
_HAS_EVENTS = "fid IN (SELECT fid FROM _cx_events)"

# What Codex itself puts in a user-role message of an older rollout (no `event_msg` beside it): the repository's
# AGENTS.md, which whoever wrote the repository chose, never what the person typed. With the tagged blocks it writes
# (`<user_instructions>`, `<environment_context>`), never a prompt, whichever record carries it (round 9: a
# `user_message` event repeating an AGENTS.md block vouched for the program it named).
_INJECTED = "(starts_with(ltrim(text), '# AGENTS.md instructions for ') OR contains(text, '<INSTRUCTIONS>'))"

# Esc in Codex: the turn it stopped ends in `turn_aborted` with reason `interrupted`. Stored as the marker Claude
# Code writes for the same key, so one reading of "the user stopped the agent" serves both (`core.said`).
_INTERRUPTED = "[Request interrupted by user]"

_PARTS = f"""
INSERT INTO _parts BY NAME
WITH items AS (
    SELECT *,
        CASE
            WHEN rtype = 'event_msg' AND ptype = 'user_message' THEN 'prompt'
            WHEN rtype = 'response_item' AND ptype = 'message' AND role = 'user' AND NOT {_HAS_EVENTS} THEN 'user'
            WHEN rtype = 'response_item' AND ptype = 'message' AND role = 'assistant' THEN 'assistant'
            WHEN rtype = 'response_item' AND ptype = 'reasoning' THEN 'thinking'
            WHEN rtype = 'response_item' AND ptype IN ('function_call', 'custom_tool_call', 'local_shell_call',
                                                      'web_search_call') THEN 'tool_use'
            WHEN rtype = 'response_item' AND ptype IN ('function_call_output', 'custom_tool_call_output',
                                                      'local_shell_call_output') THEN 'tool_result'
            WHEN rtype = 'compacted' THEN 'summary'
            WHEN rtype = 'event_msg' AND ptype = 'turn_aborted' AND p.reason = 'interrupted' THEN 'interrupt'
        END AS what,
        CASE {json_type_of("p.output")} WHEN 'VARCHAR' THEN p.output->>'$' ELSE p.output::VARCHAR END AS output
    FROM _cx_lines WHERE NOT bad
), texts AS (
    SELECT *,
        CASE what
            WHEN 'prompt' THEN p.message
            WHEN 'user' THEN array_to_string(json_extract_string(p.content, '$[*].text'), chr(10))
            WHEN 'assistant' THEN array_to_string(json_extract_string(p.content, '$[*].text'), chr(10))
            WHEN 'thinking' THEN array_to_string(json_extract_string(p.summary, '$[*].text'), chr(10))
            WHEN 'tool_result' THEN CASE WHEN json_valid(output) AND json_type(output, '$.output') = 'VARCHAR'
                                         THEN output->>'$.output' ELSE output END
            WHEN 'summary' THEN p.message
            WHEN 'interrupt' THEN '{_INTERRUPTED}'
        END AS text
    FROM items WHERE what IS NOT NULL
)
SELECT session_id, path AS source_path, seq, 0 AS part, ts,
       CASE WHEN what IN ('prompt', 'user', 'summary', 'interrupt') THEN 'user'
            WHEN what = 'tool_result' THEN 'tool' ELSE 'assistant' END AS role,
       CASE WHEN what IN ('prompt', 'user', 'assistant', 'interrupt') THEN 'text' ELSE what END AS kind,
       text,
       CASE WHEN what = 'tool_use' THEN coalesce(p.name, CASE ptype WHEN 'web_search_call' THEN 'web_search'
                                                                        WHEN 'local_shell_call' THEN 'shell' END) END
           AS tool_name,
       CASE WHEN what = 'tool_use' THEN coalesce(p.arguments, p.input, p.action::VARCHAR) END AS tool_input,
       p.call_id AS tool_use_id,
       what = 'tool_result' AND coalesce(
           try_cast(CASE WHEN json_valid(output) THEN output->>'$.metadata.exit_code' END AS INTEGER),
           try_cast(regexp_extract(output, '(?i)exit(?:ed with)? code:? (-?\\d+)', 1) AS INTEGER),
           0) <> 0 AS is_error,
       path || ':' || seq AS message_key, false AS is_sidechain, NULL AS agent_id,
       what IN ('user', 'prompt') AND (starts_with(ltrim(text), '<') OR {_INJECTED}) AS is_meta,
       what IN ('user', 'prompt') AND NOT starts_with(ltrim(text), '<') AND NOT {_INJECTED} AS is_prompt
FROM texts JOIN _cx_files USING (fid)
"""

# A record is conversation when the reader above turns it into a part; everything else is noise, by type.
_CONVERSATION = f"""
    (rtype = 'event_msg' AND ptype = 'user_message')
    OR (rtype = 'response_item' AND ptype = 'message' AND role = 'user' AND NOT {_HAS_EVENTS})
    OR (rtype = 'response_item' AND ptype = 'message' AND role = 'assistant')
    OR (rtype = 'response_item' AND ptype IN ('reasoning', 'function_call', 'custom_tool_call',
        'local_shell_call', 'web_search_call', 'function_call_output', 'custom_tool_call_output',
        'local_shell_call_output'))
    OR rtype = 'compacted'
    OR (rtype = 'event_msg' AND ptype = 'turn_aborted' AND p.reason = 'interrupted')
"""

# The lines counted once by what they are (a few rows a file), and the noise and the line counts summed from that: a
# second scan of the lines with the test above took a third of the reader's statistics.
_STATS = f"""
CREATE OR REPLACE TEMP TABLE _cx_kinds AS
SELECT f.path, k.* EXCLUDE (fid) FROM (
    SELECT fid, bad, rtype, ptype, ({_CONVERSATION}) AS conversation, count(*) AS n FROM _cx_lines GROUP BY ALL
) k JOIN _cx_files f USING (fid);

INSERT INTO _file_noise
SELECT path, rtype || coalesce('/' || ptype, ''), sum(n) FROM _cx_kinds WHERE NOT bad AND NOT conversation GROUP BY ALL;

INSERT INTO _file_stats
SELECT path, sum(n), coalesce(sum(n) FILTER (WHERE bad), 0),
       coalesce(sum(n) FILTER (WHERE NOT bad AND NOT conversation), 0)
FROM _cx_kinds GROUP BY path;

INSERT INTO _file_meta
SELECT f.path, f.session_id, l.cwd, l.git_branch, l.agent_version, NULL FROM (
    SELECT fid,
           arg_min(p.cwd, seq) FILTER (WHERE p.cwd IS NOT NULL) AS cwd,
           arg_min(p.git.branch, seq) FILTER (WHERE p.git.branch IS NOT NULL) AS git_branch,
           arg_min(coalesce(p.cli_version, p.version), seq) FILTER (WHERE rtype = 'session_meta') AS agent_version
    FROM _cx_lines GROUP BY fid
) l JOIN _cx_files f USING (fid);
"""


def load_codex(con: duckdb.DuckDBPyConnection, files: list[str], max_object_size: int) -> None:
    """Normalise Codex rollout files (already in `_batch_files`) into the batch temp tables, reading lines of up to
    `max_object_size` bytes (`object_size_bound` of the files' sizes)."""
    con.execute(_LINES, {"files": read_names(con, files), "max_object_size": max_object_size})
    con.execute(files_table("_cx_files"), {"files": files})
    con.execute(number_in_file("_cx_lines"))
    con.execute(_EVENTS)
    con.execute(_PARTS)
    con.execute(_STATS)
    for table in ("_cx_lines", "_cx_events", "_cx_kinds", "_cx_files"):
        con.execute(f"DROP TABLE {table}")
