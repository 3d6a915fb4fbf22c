"""Numbered, named migrations and the derived analytics views.

Each migration runs once, in order, inside one transaction, and is recorded in `schema_version`.
Never edit a released migration: add a new one.
"""

from __future__ import annotations

from core.models import ENTRY_ID_PATTERN
from core.projects import project_patterns

__all__ = ["MIGRATIONS", "VIEWS", "project_sql"]


def project_sql(column: str) -> str:
    """SQL naming the project of the folder in `column`, by the rules `core.projects.project_of` reads (NULL when
    the folder has no name): the rules are RE2 patterns without a quote, so they go into the text as literals."""
    tried = ", ".join(f"nullif(regexp_extract({column}, '{rule}', 1), '')" for rule in project_patterns())
    return f"coalesce({tried})"


_INITIAL = """
CREATE TABLE files (
    path VARCHAR PRIMARY KEY,
    size BIGINT NOT NULL,
    mtime DOUBLE NOT NULL,
    content_hash VARCHAR,
    format VARCHAR,
    session_id VARCHAR,
    status VARCHAR NOT NULL,          -- ok | empty | failed | unrecognised
    n_lines BIGINT DEFAULT 0,
    bad_lines BIGINT DEFAULT 0,
    noise_records BIGINT DEFAULT 0,
    error VARCHAR,
    is_main BOOLEAN DEFAULT true,     -- false for Claude Code subagent files
    cwd VARCHAR,
    git_branch VARCHAR,
    agent_version VARCHAR,
    title VARCHAR,
    ingested_at TIMESTAMPTZ DEFAULT now()
);

CREATE TABLE sessions (
    session_id VARCHAR PRIMARY KEY,
    format VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    project VARCHAR,
    cwd VARCHAR,
    git_branch VARCHAR,
    agent_version VARCHAR,
    title VARCHAR,
    started_at TIMESTAMPTZ,
    ended_at TIMESTAMPTZ,
    n_messages BIGINT DEFAULT 0,
    n_user_prompts BIGINT DEFAULT 0,
    n_tool_calls BIGINT DEFAULT 0,
    n_tool_errors BIGINT DEFAULT 0,
    n_noise_records BIGINT DEFAULT 0,
    n_bad_lines BIGINT DEFAULT 0,
    ingested_at TIMESTAMPTZ DEFAULT now()
);

CREATE TABLE messages (
    session_id VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    seq BIGINT NOT NULL,              -- record order within the source file
    part INTEGER NOT NULL,            -- content block within the record
    ts TIMESTAMPTZ,
    role VARCHAR NOT NULL,            -- user | assistant | tool
    kind VARCHAR NOT NULL,            -- text | thinking | tool_use | tool_result | summary | image
    text VARCHAR,
    tool_name VARCHAR,
    tool_input VARCHAR,
    tool_use_id VARCHAR,
    is_error BOOLEAN DEFAULT false,
    message_key VARCHAR,              -- lines sharing one assistant message.id share this key
    is_sidechain BOOLEAN DEFAULT false,
    agent_id VARCHAR,
    is_meta BOOLEAN DEFAULT false,    -- injected context (system reminders, environment blocks)
    is_prompt BOOLEAN DEFAULT false   -- a real user prompt
);

CREATE TABLE playbooks (
    name VARCHAR PRIMARY KEY,
    sections_json VARCHAR NOT NULL,
    created_at TIMESTAMPTZ DEFAULT now()
);

CREATE TABLE versions (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    source VARCHAR NOT NULL,          -- init | session | import | revert
    session_id VARCHAR,
    parent_version INTEGER,
    run_id VARCHAR,
    ops_proposed INTEGER DEFAULT 0,
    ops_applied INTEGER DEFAULT 0,
    ops_skipped INTEGER DEFAULT 0,
    evaluations INTEGER DEFAULT 0,
    pruned INTEGER DEFAULT 0,
    n_entries INTEGER DEFAULT 0,
    note VARCHAR,
    PRIMARY KEY (playbook, version)
);

-- Type-2 rows: an entry row is valid for versions valid_from <= v < valid_to (NULL = still valid).
CREATE TABLE entries (
    playbook VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    section VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    text VARCHAR NOT NULL,
    helpful INTEGER NOT NULL,
    harmful INTEGER NOT NULL,
    valid_from INTEGER NOT NULL,
    valid_to INTEGER
);
CREATE INDEX entries_open ON entries (playbook, valid_to);

CREATE TABLE operations (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    session_id VARCHAR,
    idx INTEGER NOT NULL,
    type VARCHAR NOT NULL,
    status VARCHAR NOT NULL,          -- applied | skipped | truncated
    reason VARCHAR,
    entry_id VARCHAR,
    target_ids VARCHAR,
    section VARCHAR,
    old_text VARCHAR,
    new_text VARCHAR,
    raw VARCHAR
);

CREATE TABLE evaluations (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    session_id VARCHAR,
    name VARCHAR,
    rating VARCHAR,
    status VARCHAR,
    rationale VARCHAR
);

CREATE TABLE prunes (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    session_id VARCHAR,
    name VARCHAR NOT NULL,
    section VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    helpful INTEGER NOT NULL,
    harmful INTEGER NOT NULL
);

CREATE TABLE applied_sessions (
    playbook VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    version INTEGER,
    status VARCHAR NOT NULL,          -- applied | skipped
    reason VARCHAR,
    applied_at TIMESTAMPTZ DEFAULT now(),
    PRIMARY KEY (playbook, session_id)
);
"""

_LLM_AND_RUNS = """
CREATE TABLE llm_calls (
    prompt_hash VARCHAR NOT NULL,
    step VARCHAR NOT NULL,            -- reflector | curator | reflection
    session_id VARCHAR,
    playbook VARCHAR,
    playbook_version INTEGER,
    provider VARCHAR NOT NULL,
    model VARCHAR,
    raw_text VARCHAR,
    parsed VARCHAR,
    input_tokens BIGINT DEFAULT 0,
    output_tokens BIGINT DEFAULT 0,
    cache_read_tokens BIGINT DEFAULT 0,
    cache_write_tokens BIGINT DEFAULT 0,
    cost_usd DOUBLE DEFAULT 0,
    latency_ms DOUBLE DEFAULT 0,
    error VARCHAR,
    run_id VARCHAR,
    created_at TIMESTAMPTZ DEFAULT now()
);
CREATE INDEX llm_calls_hash ON llm_calls (prompt_hash);

CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL,            -- nightly | curate | backfill | ingest
    playbook VARCHAR,
    provider VARCHAR,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    status VARCHAR NOT NULL,          -- running | ok | partial | failed
    sessions_considered INTEGER DEFAULT 0,
    sessions_applied INTEGER DEFAULT 0,
    sessions_skipped INTEGER DEFAULT 0,
    sessions_failed INTEGER DEFAULT 0,
    ops_applied INTEGER DEFAULT 0,
    ops_skipped INTEGER DEFAULT 0,
    pruned INTEGER DEFAULT 0,
    evaluations INTEGER DEFAULT 0,
    input_tokens BIGINT DEFAULT 0,
    output_tokens BIGINT DEFAULT 0,
    cost_usd DOUBLE DEFAULT 0,
    duration_s DOUBLE DEFAULT 0,
    report VARCHAR
);
"""

_EPOCHS = """
CREATE TABLE epochs (
    playbook VARCHAR NOT NULL,
    epoch_no INTEGER NOT NULL,
    base_version INTEGER NOT NULL,    -- the frozen playbook every session of the epoch is judged against
    session_ids VARCHAR NOT NULL,     -- JSON list, in apply order
    run_id VARCHAR,
    status VARCHAR NOT NULL,          -- open | done
    created_at TIMESTAMPTZ DEFAULT now(),
    PRIMARY KEY (playbook, epoch_no)
);
"""

_SKIP_CODES = """
ALTER TABLE operations ADD COLUMN code VARCHAR;
UPDATE operations SET code = CASE
    WHEN status = 'truncated' THEN 'truncated'
    WHEN status <> 'skipped' THEN NULL
    WHEN reason LIKE '%duplicate text%' THEN 'duplicate_text'
    WHEN reason LIKE '%not found%' THEN 'not_found'
    WHEN reason LIKE '%fewer than 2%' THEN 'too_few_sources'
    WHEN reason LIKE '%empty or missing%' THEN 'empty_field'
    WHEN reason LIKE 'Unknown operation type%' THEN 'unknown_type'
    WHEN reason LIKE '%not an object%' THEN 'not_object'
    ELSE 'other'
END;
"""

_IDENTITY = """
ALTER TABLE messages ADD COLUMN record_id VARCHAR;
ALTER TABLE files ADD COLUMN agent_id VARCHAR;
ALTER TABLE files ADD COLUMN agent_type VARCHAR;
ALTER TABLE files ADD COLUMN agent_description VARCHAR;
ALTER TABLE sessions ADD COLUMN n_subagent_tool_calls BIGINT DEFAULT 0;
ALTER TABLE sessions ADD COLUMN n_subagent_tool_errors BIGINT DEFAULT 0;
ALTER TABLE sessions ADD COLUMN n_subagents BIGINT DEFAULT 0;
ALTER TABLE sessions ADD COLUMN n_files BIGINT DEFAULT 0;
ALTER TABLE sessions ADD COLUMN n_secrets_redacted BIGINT;   -- counted when the session is rendered for a model
ALTER TABLE sessions ADD COLUMN n_personal_masked BIGINT;
CREATE TABLE file_noise (
    path VARCHAR NOT NULL,
    record_type VARCHAR NOT NULL,     -- a record type that holds no conversation (progress, permission-mode, ...)
    n BIGINT NOT NULL
);
-- Sessions now take their identity from the records (sessionId), not the file name: every file is read
-- again at the next ingest, and sessions left without a file are removed then.
UPDATE files SET mtime = -1, content_hash = NULL;
"""

_FAILURES = """
CREATE TABLE session_failures (
    playbook VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,        -- runs whose preparation or model output for it could not be processed
    reason VARCHAR,
    last_run_id VARCHAR,
    updated_at TIMESTAMPTZ DEFAULT now(),
    PRIMARY KEY (playbook, session_id)
);
"""

_REDACTED_AT_INGEST = """
ALTER TABLE files ADD COLUMN n_secrets BIGINT DEFAULT 0;    -- secrets replaced by a marker before storing
-- Secrets are now redacted before anything is stored: every file is read again at the next ingest, so the
-- messages stored raw by earlier versions are replaced by redacted ones.
UPDATE files SET mtime = -1, content_hash = NULL;
"""

_GROWTH = """
-- What a playbook had seen of a session when it applied or skipped it: a session that grows afterwards is
-- taken up again for its new part (messages after `upto`), and a "too short" skip is reconsidered.
ALTER TABLE applied_sessions ADD COLUMN n_messages BIGINT;
ALTER TABLE applied_sessions ADD COLUMN upto TIMESTAMPTZ;
UPDATE applied_sessions a SET n_messages = s.n_messages, upto = s.ended_at FROM sessions s
    WHERE s.session_id = a.session_id;
-- The size of the file content whose messages are stored: a file that shrinks below it keeps them.
ALTER TABLE files ADD COLUMN stored_size BIGINT;
UPDATE files SET stored_size = size WHERE status = 'ok';
"""

_NEAR_DUPLICATES = """
-- Sentence vectors, computed once per text and model.
CREATE TABLE text_embeddings (
    model VARCHAR NOT NULL,
    text_hash VARCHAR NOT NULL,
    vector FLOAT[] NOT NULL,
    PRIMARY KEY (model, text_hash)
);
-- An ADD skipped because a live entry already says it: a rediscovery of that entry (never a helpful tag).
CREATE TABLE rediscoveries (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    session_id VARCHAR,
    entry_id VARCHAR NOT NULL,
    similarity DOUBLE,
    text VARCHAR
);
ALTER TABLE operations ADD COLUMN similarity DOUBLE;
"""

_TRIGGERS_AND_EXPORTS = """
-- The literal patterns that mark an entry's situation in a transcript; a MERGE result inherits its sources'.
CREATE TABLE entry_triggers (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    trigger VARCHAR NOT NULL,
    version INTEGER NOT NULL
);
ALTER TABLE operations ADD COLUMN trigger VARCHAR;
-- Every export written: which version, where, and which entries it carried (budget and staleness applied).
CREATE TABLE exports (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    target VARCHAR NOT NULL,
    exported_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    entry_ids VARCHAR[] NOT NULL
);
"""

_REVIEWS = """
-- A reviewer's decision on a playbook (`review = "required"`): the version that may be exported from now on.
CREATE TABLE reviews (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    reviewed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    approved INTEGER NOT NULL,
    rejected INTEGER NOT NULL,
    reviewer VARCHAR
);
"""

_REQUESTED_MODEL = """
ALTER TABLE llm_calls ADD COLUMN requested_model VARCHAR;
"""

# Seed 004's context contract, per exchange: the request's estimated size, its budget, what compaction dropped.
_PAYLOAD_ACCOUNTING = """
ALTER TABLE llm_calls ADD COLUMN payload_tokens_est INTEGER;
ALTER TABLE llm_calls ADD COLUMN payload_budget_tokens INTEGER;
ALTER TABLE llm_calls ADD COLUMN payload_compacted BOOLEAN;
ALTER TABLE llm_calls ADD COLUMN dropped_fields VARCHAR[];
ALTER TABLE llm_calls ADD COLUMN compaction_reason VARCHAR;
"""

# Teams: who a session came from, what a developer pushed, what was fetched from a bucket, what was forgotten.
_TEAMS = """
ALTER TABLE sessions ADD COLUMN contributor VARCHAR;
ALTER TABLE files ADD COLUMN contributor VARCHAR;
CREATE TABLE pushed_files (
    url VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    size BIGINT NOT NULL,
    mtime DOUBLE NOT NULL,
    secrets INTEGER DEFAULT 0,
    personal INTEGER DEFAULT 0,
    pushed_at TIMESTAMPTZ DEFAULT now(),
    PRIMARY KEY (url, path)
);
CREATE TABLE remote_objects (
    url VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    tag VARCHAR,
    size BIGINT,
    local_path VARCHAR NOT NULL,
    contributor VARCHAR,
    fetched_at TIMESTAMPTZ DEFAULT now(),
    PRIMARY KEY (url, key)
);
CREATE TABLE forgotten (
    contributor VARCHAR NOT NULL,
    forgotten_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    sessions INTEGER,
    messages BIGINT,
    calls INTEGER,
    objects INTEGER,
    session_ids VARCHAR[]
);
"""

_KEPT_APART = """
-- Pairs of entry texts a model, judging a consolidation, kept apart (they say different lessons): not shown to
-- it again until the verdict is older than `rejudge_after_days`. By text, so a rewritten entry is judged anew.
CREATE TABLE kept_apart (
    playbook VARCHAR NOT NULL,
    text_a VARCHAR NOT NULL,
    text_b VARCHAR NOT NULL,  -- text_a < text_b
    run_id VARCHAR,
    judged_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (playbook, text_a, text_b)
);
"""

_SCREEN_RELEASES = """
-- Entries the screen held (core/screen.py) that a person approved for export anyway: by entry and the text they
-- approved, so a later change of the text is screened again.
CREATE TABLE screen_releases (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    text_key VARCHAR NOT NULL,
    rules VARCHAR[],
    released_by VARCHAR,
    released_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (playbook, entry_id, text_key)
);
"""

_OBSERVATIONS = """
-- What the rules miner (core/miner.py) found in each session, kept so a run weighs a project's sessions without
-- reading them again: observed again when the session grew or the miner's rules changed (`miner_version`).
CREATE TABLE observations (
    session_id VARCHAR PRIMARY KEY,
    n_messages INTEGER NOT NULL,
    miner_version INTEGER NOT NULL,
    observed JSON NOT NULL
);
"""

_EXPOSURES = """
-- What the SessionStart hook gave each session (`shown`) and left out of it (the holdout), merged from its
-- append-only ledger at ingest; how far each ledger file has been read.
CREATE TABLE exposures (
    session_id VARCHAR NOT NULL,
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    shown BOOLEAN NOT NULL,
    version INTEGER,
    source VARCHAR NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, playbook, entry_id, source)
);
CREATE TABLE exposure_ledgers (
    path VARCHAR PRIMARY KEY,
    read_bytes BIGINT NOT NULL,
    skipped_lines BIGINT NOT NULL DEFAULT 0,
    merged_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
"""

_ACTIONS = """
-- What the agent did, as triggers read it (core/actions.py): each shell call's simple commands (the program's name
-- and its arguments) with the folder they ran in, and each file an edit changed; `action_files`: the file contents
-- they were read from (a file ingested again is read again).
CREATE TABLE actions (
    session_id VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    seq BIGINT NOT NULL,
    kind VARCHAR NOT NULL,            -- command | edit
    text VARCHAR NOT NULL,
    folder VARCHAR,
    piped_into VARCHAR                -- the program a pipe hands the command's output to
);
CREATE TABLE action_files (
    path VARCHAR PRIMARY KEY,
    content_hash VARCHAR
);
"""

_GUARDS = """
-- The typed lesson an entry was written from (the rules miner's ADD carries it): what a guard is compiled from, and
-- only while the entry's text is what the lesson renders (core/guards.py). A MERGE or a model's ADD has none.
CREATE TABLE entry_lessons (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    lesson VARCHAR NOT NULL
);
-- What an entry rests on in its project (core/citations.py: a folder, a file, a declared script, the project's own
-- program), read from its typed lesson when it was added, with the project's folder (`root`) of the session.
CREATE TABLE entry_citations (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    manifest VARCHAR,
    folder VARCHAR,
    root VARCHAR
);
-- Each `playbook revalidate`: whether an entry's citations held in its project, and at which commit.
CREATE TABLE entry_checks (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    checked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    root VARCHAR,
    commit_id VARCHAR,
    reason VARCHAR
);
-- Entries a person made hard rules in `playbook review --hard`: their guards refuse the call (`--soft` undoes it;
-- the newest row of an entry decides).
CREATE TABLE hard_rules (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    hard BOOLEAN NOT NULL,
    decided_by VARCHAR,
    decided_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
"""

_FEEDBACK = """
-- What agents said of an entry through `playbook mcp` (`report_outcome`): helped, hurt or wrong, with a note
-- (redacted), per session. Evidence about the entry; it never changes its text.
CREATE TABLE feedback (
    session_id VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    note VARCHAR,
    reported_at TIMESTAMPTZ NOT NULL,
    merged_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The outcomes a playbook's run counted (as helpful / harmful tags, in a version of its own).
CREATE TABLE feedback_counted (
    playbook VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    reported_at TIMESTAMPTZ NOT NULL,
    version INTEGER NOT NULL
);
"""

_SESSION_KEYS = """
-- Whose a session is: keyed by the contributor whose folder its file came from ('' for this machine's own files) and
-- the id its records carry, so a file under one contributor's folder never joins another's session. The first pair
-- to claim an id stores it as it is, a later one from elsewhere as `<id>@<contributor>` (core/store/session_keys.py).
-- Rows outlive `forget`, so a forgotten id is never handed to someone else.
CREATE TABLE session_keys (
    contributor VARCHAR NOT NULL,
    source_id VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (contributor, source_id)
);
-- What a team session says, as the hashes of its normalised message parts: the screen's quorum counts sessions by
-- content, so a copy under another contributor's folder is the same session.
CREATE TABLE session_content (
    session_id VARCHAR NOT NULL,
    parts UBIGINT[] NOT NULL
);
"""

_PART_KEYS = """
-- What a message part is, whichever record carries it (core/transcripts/claude_code.py: a tool call by its id, a
-- result by its call's, other parts by message id, time, position, kind and text): a resumed session's file replays
-- its earlier records under new uuids, and those copies were stored and counted twice. Claude Code files are read
-- again at the next ingest, so what is stored from them carries its key and each replayed part is stored once.
ALTER TABLE messages ADD COLUMN part_key VARCHAR;
UPDATE files SET mtime = -1, content_hash = NULL WHERE format = 'claude-code';
"""

_SCREEN_VERDICTS = """
-- The screen's verdicts kept between runs (core/store/screen_verdicts.py): by a key of the exact text, what the user
-- vouches for and the screen's version and code; `rules` is that code's fingerprint, so verdicts of other code go.
CREATE TABLE screen_verdicts (
    key VARCHAR PRIMARY KEY,
    rules VARCHAR NOT NULL,
    holds VARCHAR NOT NULL,
    screened_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
"""

_VERSION_SESSIONS = """
-- Which sessions each version applied, in order, with each one's note: a version of a keyless run holds an epoch's
-- sessions (`versions.session_id` names a version's session only when it has exactly one). Filled from the versions
-- written before.
CREATE TABLE version_sessions (
    playbook VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    session_id VARCHAR NOT NULL,
    note VARCHAR
);
INSERT INTO version_sessions SELECT playbook, version, session_id, note FROM versions WHERE session_id IS NOT NULL;
"""

_NEAR_PAIR_COUNTS = """
-- The duplicate rate's count of near pairs at the end of a playbook's last run (core/store/embeddings.py), so the
-- next run counts only the pairs its changed entries make: by embedder and threshold; `texts` is a digest of the
-- texts counted (`core.consolidate.texts_digest`) and `rules` a fingerprint of the code that decides a pair.
CREATE TABLE near_pair_counts (
    playbook VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    threshold DOUBLE NOT NULL,
    rules VARCHAR NOT NULL,
    texts VARCHAR NOT NULL,
    pairs INTEGER NOT NULL,
    PRIMARY KEY (playbook, model, threshold)
);
"""

_RULES_FINDINGS = """
-- What the rules (the `heuristic` provider: the miner, no model) found in each session a playbook's run curated, as
-- what it is (core/store/findings.py): the reflection and the operations, one row per session and run, with the
-- miner's version (NULL: moved here from `llm_calls`, where the rules' results were kept as if a model had answered,
-- with a prompt hash, tokens and a cost of nothing). `llm_calls` keeps a model's exchanges only.
CREATE TABLE rules_findings (
    playbook VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    run_id VARCHAR,
    playbook_version INTEGER,         -- the version the session was judged against
    miner_version INTEGER,
    reflection JSON,                  -- ReflectorOutput
    curation JSON,                    -- CuratorOutput
    error VARCHAR,                    -- why the rules found nothing (their input was missing)
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO rules_findings
    SELECT playbook, session_id, run_id, min(playbook_version), NULL,
           arg_max(parsed, created_at) FILTER (WHERE step = 'reflector' AND parsed IS NOT NULL),
           arg_max(parsed, created_at) FILTER (WHERE step = 'curator' AND parsed IS NOT NULL),
           arg_max(error, created_at) FILTER (WHERE error IS NOT NULL),
           max(created_at)
    FROM llm_calls
    WHERE provider LIKE 'heuristic%' AND playbook IS NOT NULL AND session_id IS NOT NULL
    GROUP BY playbook, session_id, run_id;
DELETE FROM llm_calls WHERE provider LIKE 'heuristic%';
"""

_WORKTREE_PROJECTS = f"""
-- A session in a worktree an agent tool made (`app/.worktrees/2`, `app/.claude/worktrees/x`, Conductor's and Codex's
-- folders) belongs to the project that holds the worktree, not to the task's folder name (core/projects.py).
UPDATE sessions SET project = {project_sql("cwd")}
WHERE cwd IS NOT NULL AND project IS DISTINCT FROM {project_sql("cwd")};
"""

_ACTION_WORDS = """
-- A command's words and the text a here document feeds it, as the guards read the line (core.hooks): `text` joins
-- the words with spaces, so adherence read `python3 -c "import yaml"` as `python3 -c import yaml` and never saw a
-- here document. The stored calls (`messages`) still hold every line whole, so the files' actions are forgotten as
-- read: the next ingest reads each stored call again (about a second at 1 GB, once) and loses nothing. Until then a
-- reader takes an old row's words from its text (core/store/actions.py `old_words`).
ALTER TABLE actions ADD COLUMN words VARCHAR[];   -- the program's name without its folder, then its arguments
ALTER TABLE actions ADD COLUMN stdin VARCHAR;     -- the here document's text (`python3 - <<'EOF'`); NULL: none
DELETE FROM action_files;
"""

_READER_VERSIONS = """
-- The version of the reader that read each file (core/transcripts/reader_versions.py): a file whose reader has another
-- version now is read again at the next ingest, as if it had changed, so what is stored is what the current reader
-- makes of it. A store from before kept no version, and its readers did change without a migration (Codex's
-- `<user_instructions>` and AGENTS.md blocks stopped being prompts, Claude Code's blocks were bounded), so which
-- reading a row holds is unknown: every file read is given version 0, which no reader has, and is read again once.
-- That costs one full ingest; keeping the rows would keep text flagged as the user's prompt that the current reader
-- does not flag. NULL: nothing read (an empty, unrecognised or failed file), so no reading to renew.
ALTER TABLE files ADD COLUMN reader_version INTEGER;
UPDATE files SET reader_version = 0 WHERE status IN ('ok', 'shrunk');
"""

_HELD_IDS = f"""
-- Entries whose id is not one playbook makes (`core.models.ENTRY_ID_PATTERN`): import checks ids since, but an older
-- version's import stored any id, and an id is printed bare in CLAUDE.md, the hooks' digest and MCP answers (a line
-- break, a marker, a heading and a command in it were). Stored rows are read without validation (`load_version`, for
-- speed), so every id is checked here once and each such entry is held from every delivery (flows.delivery.exports);
-- the rows stay as they are: history is never rewritten. Ids made from then on are checked where they are made. Run
-- again (a store taken back to an earlier schema) it adds only what it did not hold.
CREATE TABLE IF NOT EXISTS held_ids (
    playbook VARCHAR NOT NULL,
    entry_id VARCHAR NOT NULL,
    found_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (playbook, entry_id)
);
INSERT OR IGNORE INTO held_ids (playbook, entry_id)
    SELECT DISTINCT playbook, name FROM entries WHERE NOT regexp_matches(name, '{ENTRY_ID_PATTERN}');
"""

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "initial: ingest ledger, sessions, messages, versioned playbooks", _INITIAL),
    (2, "llm exchanges and run metrics", _LLM_AND_RUNS),
    (3, "epochs: resumable groups of sessions sharing one frozen playbook", _EPOCHS),
    (4, "skip codes: skipped operations carry a machine code beside the reason", _SKIP_CODES),
    (5, "identity from records: subagents, record ids, noise by type, per-thread tool counts", _IDENTITY),
    (6, "session failures: attempts, and quarantine after too many", _FAILURES),
    (7, "secrets redacted at ingest, counted per file", _REDACTED_AT_INGEST),
    (8, "growing sessions taken up again; shrinking files keep what was stored", _GROWTH),
    (9, "near-duplicate lessons: text vectors and rediscoveries", _NEAR_DUPLICATES),
    (10, "entry triggers and the exports written", _TRIGGERS_AND_EXPORTS),
    (11, "reviews: approved versions of playbooks that require review", _REVIEWS),
    (12, "the model a call asked for, beside the one the server named", _REQUESTED_MODEL),
    (13, "payload accounting of each exchange: estimate, budget, compaction", _PAYLOAD_ACCOUNTING),
    (14, "teams: contributors, pushed files, fetched objects, forgotten contributors", _TEAMS),
    (15, "consolidations a model judges: pairs of texts it kept apart", _KEPT_APART),
    (16, "entries held by the screen that a person released", _SCREEN_RELEASES),
    (17, "what the rules miner found in each session", _OBSERVATIONS),
    (18, "exposure: what the SessionStart hook gave each session, and its holdout", _EXPOSURES),
    (19, "session keys by contributor and id; team sessions' content, for the quorum", _SESSION_KEYS),
    (20, "what the agent did: shell commands and edited files, for triggers", _ACTIONS),
    (21, "typed lessons of entries, their citations and checks, and the entries made hard rules", _GUARDS),
    (22, "what agents said of entries through the MCP server", _FEEDBACK),
    (23, "message parts keyed by what they are: a resumed session's replayed records are stored once", _PART_KEYS),
    (24, "the screen's verdicts kept between runs", _SCREEN_VERDICTS),
    (25, "the sessions each version applied: a keyless run writes one version per epoch", _VERSION_SESSIONS),
    (26, "the duplicate rate's pair count kept between runs", _NEAR_PAIR_COUNTS),
    (27, "the rules' findings per session, apart from a model's exchanges", _RULES_FINDINGS),
    (28, "a worktree's sessions belong to the project that holds it", _WORKTREE_PROJECTS),
    (29, "a command's words and here document as the guards read them, for adherence", _ACTION_WORDS),
    (30, "the reader version each file was read with: a changed reader reads its files again", _READER_VERSIONS),
    (31, "entries stored by an older version with an id playbook never makes, held from delivery", _HELD_IDS),
]

VIEWS = r"""
CREATE OR REPLACE MACRO playbook_at(pb, v) AS TABLE
    SELECT e.section, e.position, e.name, e.text, e.helpful, e.harmful
    FROM entries e
    WHERE e.playbook = pb AND e.valid_from <= v AND (e.valid_to IS NULL OR e.valid_to > v);

CREATE OR REPLACE VIEW v_operations_daily AS
    SELECT o.playbook, date_trunc('day', v.created_at) AS day, o.type, o.status, count(*) AS n
    FROM operations o JOIN versions v USING (playbook, version)
    GROUP BY ALL;

CREATE OR REPLACE VIEW v_skip_reasons AS
    SELECT o.playbook, date_trunc('day', v.created_at) AS day, o.type, coalesce(o.code, 'other') AS code,
           any_value(o.reason) AS example, count(*) AS n
    FROM operations o JOIN versions v USING (playbook, version)
    WHERE o.status = 'skipped'
    GROUP BY o.playbook, day, o.type, o.code;

CREATE OR REPLACE VIEW v_section_sizes AS
    SELECT v.playbook, v.version, v.created_at, e.section, count(e.name) AS n_entries
    FROM versions v
    JOIN entries e ON e.playbook = v.playbook AND e.valid_from <= v.version
        AND (e.valid_to IS NULL OR e.valid_to > v.version)
    GROUP BY ALL;

CREATE OR REPLACE VIEW v_entry_lifetimes AS
    SELECT e.playbook, e.name, min(e.valid_from) AS born, max(coalesce(e.valid_to, -1)) AS died_raw,
           bool_or(e.valid_to IS NULL) AS alive,
           arg_max(e.text, e.valid_from) AS last_text,
           arg_max(e.helpful, e.valid_from) AS helpful, arg_max(e.harmful, e.valid_from) AS harmful,
           count(*) AS n_revisions
    FROM entries e GROUP BY e.playbook, e.name;

CREATE OR REPLACE VIEW v_prunes AS
    SELECT p.*, v.created_at FROM prunes p JOIN versions v USING (playbook, version);

CREATE OR REPLACE VIEW v_session_noise AS
    SELECT f.session_id, n.record_type, sum(n.n)::BIGINT AS n
    FROM file_noise n JOIN files f USING (path)
    WHERE f.session_id IS NOT NULL
    GROUP BY ALL;

CREATE OR REPLACE VIEW v_rediscoveries AS
    SELECT playbook, entry_id, count(*) AS rediscoveries, max(version) AS last_version,
           round(avg(similarity), 3) AS mean_similarity
    FROM rediscoveries GROUP BY ALL;

-- The triggers a session's actions match (core/actions.py): a command whose first words are the trigger's (`npm
-- install` is `npm install left-pad`, never `pnpm install`), or an edited file the trigger names (its path, or its
-- end after a slash). One row per trigger and session.
CREATE OR REPLACE VIEW v_action_hits AS
    WITH pats AS (SELECT DISTINCT trigger AS pat, split_part(trigger, ' ', 1) AS program FROM entry_triggers)
    SELECT DISTINCT p.pat, a.session_id
    FROM pats p JOIN actions a ON a.kind = 'command' AND split_part(a.text, ' ', 1) = p.program
    WHERE a.text = p.pat OR starts_with(a.text, p.pat || ' ')
    UNION
    SELECT DISTINCT p.pat, a.session_id
    FROM pats p JOIN actions a ON a.kind = 'edit' AND (a.text = p.pat OR ends_with(a.text, '/' || p.pat));

-- For each live entry with a trigger: in how many sessions the trigger text occurs, before and after the
-- entry was first exported (never exported: every session counts as before). An observation, not a cause.
CREATE OR REPLACE VIEW v_trigger_recurrence AS
    WITH live AS (
        SELECT t.playbook, t.entry_id, string_agg(DISTINCT t.trigger, ' | ') AS triggers,
               list(DISTINCT t.trigger) AS pats
        FROM entry_triggers t JOIN entries e ON e.playbook = t.playbook AND e.name = t.entry_id AND e.valid_to IS NULL
        GROUP BY ALL
    ), first_export AS (
        SELECT x.playbook, u.entry_id, min(x.exported_at) AS first_exported_at
        FROM exports x, unnest(x.entry_ids) AS u(entry_id)
        GROUP BY ALL
    ), hits AS (
        SELECT DISTINCT l.playbook, l.entry_id, m.session_id
        FROM live l, unnest(l.pats) AS p(pat)
        JOIN messages m ON m.text IS NOT NULL AND contains(lower(m.text), lower(p.pat))
        UNION
        SELECT l.playbook, l.entry_id, a.session_id
        FROM live l, unnest(l.pats) AS p(pat) JOIN v_action_hits a ON a.pat = p.pat
    ), timed AS (
        SELECT l.playbook, l.entry_id, l.triggers, f.first_exported_at, s.session_id,
               f.first_exported_at IS NOT NULL AND s.started_at >= f.first_exported_at AS after_export,
               h.session_id IS NOT NULL AS seen
        FROM live l
        LEFT JOIN first_export f ON f.playbook = l.playbook AND f.entry_id = l.entry_id
        LEFT JOIN sessions s ON true
        LEFT JOIN hits h ON h.playbook = l.playbook AND h.entry_id = l.entry_id AND h.session_id = s.session_id
    )
    SELECT playbook, entry_id, triggers, first_exported_at,
           count(session_id) FILTER (WHERE NOT after_export) AS sessions_before,
           count(session_id) FILTER (WHERE NOT after_export AND seen) AS seen_before,
           count(session_id) FILTER (WHERE after_export) AS sessions_after,
           count(session_id) FILTER (WHERE after_export AND seen) AS seen_after
    FROM timed GROUP BY ALL;

-- Which entries a session's agent had from an exported file it loads: for each agent file written (an absolute
-- CLAUDE.md or `.claude/rules/` file for Claude Code, AGENTS.md for Codex), the latest export before the session
-- started, when the session ran in the file's folder or below (a `.claude` or `.codex` folder's file serves the
-- folder above it: `~/.claude/CLAUDE.md` every session under the home folder).
CREATE OR REPLACE VIEW v_export_exposure AS
    WITH files AS (
        SELECT playbook, target, exported_at, entry_ids,
               CASE WHEN target LIKE '%/CLAUDE.md' OR target LIKE '%/.claude/rules/%' THEN 'claude-code'
                    WHEN target LIKE '%/AGENTS.md' THEN 'codex' END AS format,
               regexp_replace(regexp_replace(target, '/[^/]*$', ''), '/(\.claude(/rules)?|\.codex)$', '') AS root
        FROM exports WHERE starts_with(target, '/')
    ), held AS (
        SELECT s.session_id, f.playbook, f.target, arg_max(f.entry_ids, f.exported_at) AS entry_ids
        FROM sessions s JOIN files f ON f.format = s.format AND s.started_at >= f.exported_at
            AND (s.cwd = f.root OR starts_with(s.cwd, f.root || '/'))
        GROUP BY ALL
    )
    SELECT DISTINCT session_id, playbook, unnest(entry_ids) AS entry_id FROM held;

-- When each entry was first added: the time of the version it first appears in.
CREATE OR REPLACE VIEW v_entry_born AS
    SELECT e.playbook, e.name, min(v.created_at) AS created
    FROM entries e JOIN versions v ON v.playbook = e.playbook AND v.version = e.valid_from
    GROUP BY ALL;

-- The hooks' records (`exposures`, merged from a ledger any process of the user can append to) that can be true: of
-- a stored session that started once the entry existed. A hook gives the entries of the playbook as it is when the
-- session starts (a resumed one what it got then), so a record of an entry added after that start, of an entry no
-- version has, or of a session never stored, is no evidence: impact, adherence, stale and the report read exposures
-- through this view (`v_exposure`), so they all count the same sessions.
CREATE OR REPLACE VIEW v_hook_exposure AS
    SELECT x.* FROM exposures x
    JOIN sessions s ON s.session_id = x.session_id
    JOIN v_entry_born b ON b.playbook = x.playbook AND b.name = x.entry_id
    WHERE s.started_at >= b.created;

-- Every entry a session had, and how it is known: `hook` (the SessionStart hook gave it) or `export` (a file the
-- agent loads carried it when the session started).
CREATE OR REPLACE VIEW v_exposure AS
    SELECT DISTINCT session_id, playbook, entry_id, 'hook' AS source FROM v_hook_exposure WHERE shown
    UNION ALL
    SELECT x.session_id, x.playbook, x.entry_id, 'export' AS source FROM v_export_exposure x
    WHERE NOT EXISTS (SELECT 1 FROM v_hook_exposure h WHERE h.shown AND h.session_id = x.session_id
                      AND h.playbook = x.playbook AND h.entry_id = x.entry_id);

CREATE OR REPLACE VIEW v_run_costs AS
    SELECT run_id, kind, playbook, started_at, sessions_applied, input_tokens, output_tokens, cost_usd,
           CASE WHEN sessions_applied > 0 THEN cost_usd / sessions_applied END AS cost_per_applied_session
    FROM runs;
"""
