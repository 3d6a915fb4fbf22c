"""The exchange store (`core.store.exchanges`): an epoch's exchanges stored in one statement are the rows a
statement each would store, whatever they hold (failures, cached answers, compacted payloads, no parse)."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.base import LLMRequest, LLMResponse, Payload, Usage
from core.store.db import connect
from core.store.exchanges import record_exchange, record_exchanges
from tests.profiles import examples

TEXT = st.text(max_size=20)
MAYBE = st.none() | TEXT

REQUESTS = st.builds(
    LLMRequest,
    step=st.sampled_from(["reflector", "curator"]),
    session_id=MAYBE,
    model=TEXT,
    system=TEXT,
    user=TEXT,
    schema_name=st.just("ReflectorOutput"),
    payload=st.none()
    | st.builds(
        Payload,
        tokens_est=st.integers(0, 10**6),
        budget_tokens=st.none() | st.integers(0, 10**6),
        compacted=st.booleans(),
        dropped_fields=st.lists(TEXT, max_size=3),
        compaction_reason=MAYBE,
    ),
)
RESPONSES = st.builds(
    LLMResponse,
    text=MAYBE,
    provider=st.sampled_from(["anthropic", "heuristic"]),
    model=TEXT,
    usage=st.builds(Usage, input_tokens=st.integers(0, 10**7), output_tokens=st.integers(0, 10**5)),
    cost_usd=st.floats(0, 10),
    latency_ms=st.floats(0, 10**5),
    error=MAYBE,
    cached=st.booleans(),
)
EXCHANGES = st.lists(st.tuples(REQUESTS, RESPONSES, st.none() | st.fixed_dictionaries({"analysis": TEXT})), max_size=6)


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute("SELECT * EXCLUDE (created_at) FROM llm_calls ORDER BY rowid").fetchall()


@settings(max_examples=examples(50), deadline=None)
@given(exchanges=EXCHANGES)
def test_exchanges_stored_together_are_the_rows_stored_one_by_one(
    exchanges: list[tuple[LLMRequest, LLMResponse, dict[str, str] | None]],
) -> None:
    together, apart = connect(":memory:"), connect(":memory:")
    where = {"playbook": "default", "playbook_version": 3, "run_id": "r1"}
    record_exchanges(together, exchanges, **where)  # type: ignore[arg-type]
    for request, response, parsed in exchanges:
        record_exchange(apart, request, response, parsed=parsed, **where)  # type: ignore[arg-type]
    assert _rows(together) == _rows(apart)
    stored = together.execute(
        "SELECT prompt_hash, session_id, provider, raw_text, input_tokens, error, payload_budget_tokens,"
        " dropped_fields, parsed IS NULL FROM llm_calls ORDER BY rowid"
    ).fetchall()
    expected = [
        (
            request.prompt_hash(),
            request.session_id,
            response.provider + (" (cached)" if response.cached else ""),
            response.text,
            0 if response.cached else response.usage.input_tokens,
            response.error
            if response.error is not None or parsed is not None
            else "unparseable: no JSON object in the model text",
            request.payload.budget_tokens if request.payload else None,
            request.payload.dropped_fields if request.payload else None,
            parsed is None,
        )
        for request, response, parsed in exchanges
    ]
    assert stored == expected
    together.close()
    apart.close()
