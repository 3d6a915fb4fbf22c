"""Claude Code JSONL (`<projects>/<project>/<session>.jsonl`, `<session>/subagents/agent-*.jsonl`).

Parsing is DuckDB's: `read_json` with explicit columns scans the files and content blocks are parsed once
into typed structs, so a batch of files is normalised without a Python loop over lines. A malformed or
non-UTF-8 line becomes a NULL row (counted as a bad line). Kept: user and assistant text, tool calls, tool
results with `is_error`, thinking (marked), compaction summaries, each with its record `uuid` (so copies of
one session in several files count once). Every other record type (`progress`, `file-history-snapshot`,
`permission-mode`, `summary` titles, and types not invented yet) is noise, counted by type.
"""

from __future__ import annotations

import duckdb

from core.transcripts._batch import MAX_OBJECT_SIZE

__all__ = ["load_claude_code"]

_COLUMNS = (
    "{type: 'VARCHAR', sessionId: 'VARCHAR', timestamp: 'VARCHAR', uuid: 'VARCHAR', cwd: 'VARCHAR',"
    " gitBranch: 'VARCHAR', version: 'VARCHAR', isSidechain: 'BOOLEAN', isMeta: 'BOOLEAN',"
    " isCompactSummary: 'BOOLEAN', agentId: 'VARCHAR', summary: 'VARCHAR',"
    " message: 'STRUCT(id VARCHAR, content JSON)'}"
)
# Content blocks are parsed once, into typed structs, instead of one JSON parse per extracted field.
_BLOCK = (
    '[{"type": "VARCHAR", "text": "VARCHAR", "thinking": "VARCHAR", "name": "VARCHAR", "id": "VARCHAR",'
    ' "input": "JSON", "tool_use_id": "VARCHAR", "content": "JSON", "is_error": "BOOLEAN"}]'
)

# A line DuckDB cannot parse (malformed JSON, invalid UTF-8) comes back as a row of NULLs: counted as bad.
_LINES = f"""
CREATE OR REPLACE TEMP TABLE _cc_lines AS
WITH raw AS (
    SELECT filename AS path, row_number() OVER () AS seq, *
    FROM read_json($files, format = 'newline_delimited', filename = true, ignore_errors = true,
                   maximum_object_size = {MAX_OBJECT_SIZE}, columns = {_COLUMNS})
)
SELECT r.path, b.session_id, r.seq,
       r.type IS NULL AND r.message IS NULL AND r.sessionId IS NULL AS bad,
       r.type, try_cast(r.timestamp AS TIMESTAMPTZ) AS ts, r.cwd, r.gitBranch AS git_branch,
       r.version AS agent_version, coalesce(r.isSidechain, false) AS is_sidechain,
       coalesce(r.isMeta, false) AS is_meta, coalesce(r.isCompactSummary, false) AS is_compact,
       r.agentId AS agent_id, r.summary, r.message.id AS msg_id, coalesce(r.message.id, r.uuid) AS key,
       r.uuid AS record_id,
       r.message.content AS content, json_type(r.message.content) AS content_type
FROM raw r JOIN _batch_files b ON b.path = r.path
"""

_PARTS = f"""
INSERT INTO _parts BY NAME
SELECT session_id, path AS source_path, seq, 0 AS part, ts, type AS role,
       CASE WHEN is_compact THEN 'summary' ELSE 'text' END AS kind,
       content->>'$' AS text, false AS is_error,
       coalesce(key, path || ':' || seq) AS message_key, is_sidechain, agent_id,
       is_meta OR starts_with(ltrim(content->>'$'), '<system-reminder>') AS is_meta,
       type = 'user' AND NOT is_meta AND NOT is_compact AND NOT is_sidechain
           AND NOT starts_with(ltrim(content->>'$'), '<system-reminder>') AS is_prompt,
       record_id
FROM _cc_lines
WHERE NOT bad AND type IN ('user', 'assistant') AND content_type = 'VARCHAR';

INSERT INTO _parts BY NAME
WITH blocks AS (
    SELECT *, unnest(from_json(content, '{_BLOCK}')) AS b,
           unnest(range(json_array_length(content)::BIGINT)) AS part
    FROM _cc_lines
    WHERE NOT bad AND type IN ('user', 'assistant') AND content_type = 'ARRAY'
)
SELECT session_id, path AS source_path, seq, part::INTEGER AS part, ts,
       CASE WHEN b.type = 'tool_result' THEN 'tool' ELSE type END AS role,
       CASE b.type
           WHEN 'text' THEN CASE WHEN is_compact THEN 'summary' ELSE 'text' END
           WHEN 'thinking' THEN 'thinking'
           WHEN 'redacted_thinking' THEN 'thinking'
           WHEN 'tool_use' THEN 'tool_use'
           WHEN 'tool_result' THEN 'tool_result'
           WHEN 'image' THEN 'image'
           ELSE coalesce(b.type, 'unknown')
       END AS kind,
       CASE b.type
           WHEN 'text' THEN b.text
           WHEN 'thinking' THEN b.thinking
           WHEN 'tool_result' THEN CASE json_type(b.content)
               WHEN 'VARCHAR' THEN b.content->>'$'
               WHEN 'ARRAY' THEN array_to_string(json_extract_string(b.content, '$[*].text'), chr(10))
               ELSE NULL END
           WHEN 'image' THEN '[image]'
           ELSE NULL
       END AS text,
       b.name AS tool_name,
       CASE WHEN b.type = 'tool_use' THEN b.input::VARCHAR END AS tool_input,
       coalesce(b.id, b.tool_use_id) AS tool_use_id,
       coalesce(b.is_error, false) AS is_error,
       coalesce(key, path || ':' || seq) AS message_key, is_sidechain, agent_id,
       is_meta OR (b.type = 'text' AND starts_with(ltrim(b.text), '<system-reminder>')) AS is_meta,
       type = 'user' AND b.type = 'text' AND NOT is_meta AND NOT is_compact AND NOT is_sidechain
           AND NOT starts_with(ltrim(b.text), '<system-reminder>')
           AND NOT starts_with(b.text, '[Request interrupted') AS is_prompt,
       record_id
FROM blocks;
"""

_STATS = """
INSERT INTO _file_noise
SELECT path, coalesce(type, '(no type)'), count(*)
FROM _cc_lines WHERE NOT bad AND (type IS NULL OR type NOT IN ('user', 'assistant')) GROUP BY ALL;

INSERT INTO _file_stats
SELECT path, count(*) AS n_lines, count(*) FILTER (WHERE bad) AS bad_lines,
       count(*) FILTER (WHERE NOT bad AND (type IS NULL OR type NOT IN ('user', 'assistant'))) AS noise_records
FROM _cc_lines GROUP BY path;

INSERT INTO _file_meta
SELECT path, any_value(session_id),
       arg_min(cwd, seq) FILTER (WHERE cwd IS NOT NULL),
       arg_min(git_branch, seq) FILTER (WHERE git_branch IS NOT NULL),
       arg_max(agent_version, seq) FILTER (WHERE agent_version IS NOT NULL),
       arg_max(summary, seq) FILTER (WHERE type = 'summary' AND summary IS NOT NULL)
FROM _cc_lines GROUP BY path;
"""


def load_claude_code(con: duckdb.DuckDBPyConnection, files: list[str]) -> None:
    """Normalise Claude Code files (already in `_batch_files`) into the batch temp tables."""
    con.execute(_LINES, {"files": files})
    con.execute(_PARTS)
    con.execute(_STATS)
    con.execute("DROP TABLE _cc_lines")
