"""Every exchange with a model, stored; a prompt asked again is answered from here so a rerun never pays twice. (The
rules, which no model answers, store their findings instead: `core.store.findings`.)"""

from __future__ import annotations

import json
from collections.abc import Sequence

import duckdb

from core.llm.base import LLMRequest, LLMResponse, Usage
from core.store.db import columnar_insert

__all__ = ["cached_response", "record_exchange", "record_exchanges", "reusable_reflection"]


def cached_response(con: duckdb.DuckDBPyConnection, request: LLMRequest) -> LLMResponse | None:
    """The newest successful, parseable answer to the same prompt, marked `cached` and free. Only a model's answers
    are here: the rules' results are their findings (`core.store.findings`), which a model run never inherits."""
    row = con.execute(
        "SELECT raw_text, provider, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens"
        " FROM llm_calls WHERE prompt_hash = ? AND error IS NULL AND parsed IS NOT NULL"
        " ORDER BY created_at DESC LIMIT 1",
        [request.prompt_hash()],
    ).fetchone()
    if row is None:
        return None
    return LLMResponse(
        text=row[0],
        provider=row[1],
        model=row[2],
        cached=True,
        usage=Usage(input_tokens=row[3], output_tokens=row[4], cache_read_tokens=row[5], cache_write_tokens=row[6]),
    )


def reusable_reflection(con: duckdb.DuckDBPyConnection, playbook: str, request: LLMRequest) -> LLMResponse | None:
    """A reflection of the same session, still pending, whose curator call failed: reused (marked `cached`)
    instead of paying the reflector again, provided the session has not changed since it was judged.

    Its prompt differs only by the playbook it was frozen against (the run that retries is a later epoch);
    tags for entries that are gone since are skipped by the engine like any unknown id.
    """
    row = con.execute(
        "SELECT c.raw_text, c.provider, c.model FROM llm_calls c JOIN sessions s USING (session_id)"
        " WHERE c.playbook = ? AND c.session_id = ? AND c.step = 'reflector' AND c.error IS NULL"
        " AND c.parsed IS NOT NULL AND c.created_at >= s.ingested_at"
        " ORDER BY c.created_at DESC LIMIT 1",
        [playbook, request.session_id],
    ).fetchone()
    if row is None:
        return None
    return LLMResponse(text=row[0], provider=row[1], model=row[2], cached=True)


def record_exchange(
    con: duckdb.DuckDBPyConnection,
    request: LLMRequest,
    response: LLMResponse,
    *,
    parsed: object | None,
    playbook: str | None,
    playbook_version: int | None,
    run_id: str | None,
) -> None:
    """Store one exchange: prompt hash, model, raw text, parsed output, usage, cost, latency, error, and the
    request's payload accounting (estimate, budget, compaction)."""
    record_exchanges(
        con, [(request, response, parsed)], playbook=playbook, playbook_version=playbook_version, run_id=run_id
    )


# Each column of `llm_calls` an exchange fills, with its type (the rows go in as one list per column).
_COLUMNS = (
    ("prompt_hash", "VARCHAR"),
    ("step", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("playbook", "VARCHAR"),
    ("playbook_version", "INTEGER"),
    ("provider", "VARCHAR"),
    ("model", "VARCHAR"),
    ("raw_text", "VARCHAR"),
    ("parsed", "VARCHAR"),
    ("input_tokens", "BIGINT"),
    ("output_tokens", "BIGINT"),
    ("cache_read_tokens", "BIGINT"),
    ("cache_write_tokens", "BIGINT"),
    ("cost_usd", "DOUBLE"),
    ("latency_ms", "DOUBLE"),
    ("error", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("requested_model", "VARCHAR"),
    ("payload_tokens_est", "INTEGER"),
    ("payload_budget_tokens", "INTEGER"),
    ("payload_compacted", "BOOLEAN"),
    ("dropped_fields", "VARCHAR[]"),
    ("compaction_reason", "VARCHAR"),
)
_INSERT = columnar_insert("llm_calls", _COLUMNS)


def record_exchanges(
    con: duckdb.DuckDBPyConnection,
    exchanges: Sequence[tuple[LLMRequest, LLMResponse, object | None]],
    *,
    playbook: str | None,
    playbook_version: int | None,
    run_id: str | None,
) -> None:
    """`record_exchange` for many (request, response, parsed output) in one statement: an INSERT costs ~2 ms of CPU
    however few rows it carries, and the rules answer an epoch's requests at once."""
    rows = []
    for request, response, parsed in exchanges:
        error = response.error
        payload = request.payload
        if error is None and parsed is None:
            error = "unparseable: no JSON object in the model text"
        free = response.cached
        rows.append(
            (
                request.prompt_hash(),
                request.step,
                request.session_id,
                playbook,
                playbook_version,
                response.provider + (" (cached)" if free else ""),
                response.model,
                response.text,
                json.dumps(parsed.model_dump() if hasattr(parsed, "model_dump") else parsed)
                if parsed is not None
                else None,
                0 if free else response.usage.input_tokens,
                0 if free else response.usage.output_tokens,
                0 if free else response.usage.cache_read_tokens,
                0 if free else response.usage.cache_write_tokens,
                0.0 if free else response.cost_usd,
                response.latency_ms,
                error,
                run_id,
                request.model,  # beside the model the server says answered (a local server names its file)
                payload.tokens_est if payload else None,
                payload.budget_tokens if payload else None,
                payload.compacted if payload else None,
                payload.dropped_fields if payload else None,
                payload.compaction_reason if payload else None,
            )
        )
    if rows:
        con.execute(_INSERT, [list(column) for column in zip(*rows, strict=True)])
