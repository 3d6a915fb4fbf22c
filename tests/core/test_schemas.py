"""The structured-output schemas are generated from the answer models, and every answer they admit is read by the
lenient parsing contracts without loss (within their documented bounds)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.curator import parse_curator
from core.models import MAX_BULLET_TAGS, MAX_OPERATIONS, OP_TYPES, BulletTag, CuratorOutput, ReflectorOutput
from core.reflector import parse_reflector
from core.schemas import (
    ANSWERS,
    OUTPUT_SCHEMAS,
    CuratorAnswer,
    OperationAnswer,
    ReflectorAnswer,
    TagAnswer,
    bounded_schema,
)

TEXT = st.text(max_size=40)
TAGS = st.builds(TagAnswer, name=TEXT, tag=st.sampled_from(["helpful", "harmful", "neutral"]), rationale=TEXT)
OPERATIONS = st.builds(
    OperationAnswer,
    type=st.sampled_from(list(OP_TYPES)),
    text=TEXT,
    section=TEXT,
    target_id=TEXT,
    source_ids=st.lists(TEXT, max_size=3),
    trigger=TEXT,
    scope=st.sampled_from(["project", "global"]),
)


def test_every_object_is_closed_and_names_what_it_requires() -> None:
    def objects(node: object) -> list[dict[str, object]]:
        if isinstance(node, list):
            return [o for v in node for o in objects(v)]
        if not isinstance(node, dict):
            return []
        own = [node] if node.get("type") == "object" else []
        return own + [o for v in node.values() for o in objects(v)]

    for name, schema in OUTPUT_SCHEMAS.items():
        assert "$defs" not in json.dumps(schema) and '"title"' not in json.dumps(schema), name
        for obj in objects(schema):
            assert obj["additionalProperties"] is False
            assert set(obj["required"]) <= set(obj["properties"])  # type: ignore[arg-type]
    assert OUTPUT_SCHEMAS["ReflectorOutput"]["required"] == ["analysis", "bullet_tags"]
    operation = OUTPUT_SCHEMAS["CuratorOutput"]["properties"]["operations"]["items"]
    assert operation["required"] == ["type"] and operation["properties"]["type"]["enum"] == list(OP_TYPES)


def test_the_fields_asked_for_are_fields_the_contracts_read() -> None:
    assert set(ReflectorAnswer.model_fields) <= set(ReflectorOutput.model_fields)
    assert set(TagAnswer.model_fields) <= set(BulletTag.model_fields)
    assert set(CuratorAnswer.model_fields) <= set(CuratorOutput.model_fields)
    assert set(ANSWERS) == set(OUTPUT_SCHEMAS)


@given(st.builds(ReflectorAnswer, analysis=TEXT, bullet_tags=st.lists(TAGS, max_size=5)))
def test_a_reflector_answer_the_schema_admits_parses_whole(answer: ReflectorAnswer) -> None:
    data = answer.model_dump()
    jsonschema.validate(data, OUTPUT_SCHEMAS["ReflectorOutput"])
    parsed = parse_reflector(json.dumps(data))
    assert parsed is not None and parsed.analysis == answer.analysis
    first: dict[str, TagAnswer] = {}
    for tag in answer.bullet_tags:
        first.setdefault(tag.name, tag)  # an entry keeps its first verdict
    assert [t.model_dump() for t in parsed.bullet_tags] == [t.model_dump() for t in first.values()][:MAX_BULLET_TAGS]


@pytest.mark.slow
@given(st.builds(CuratorAnswer, reasoning=TEXT, operations=st.lists(OPERATIONS, max_size=14)))
def test_a_curator_answer_the_schema_admits_parses_whole(answer: CuratorAnswer) -> None:
    data = answer.model_dump()
    jsonschema.validate(data, OUTPUT_SCHEMAS["CuratorOutput"])
    parsed = parse_curator(json.dumps(data))
    assert parsed is not None and parsed.reasoning == answer.reasoning
    assert parsed.operations == data["operations"][:MAX_OPERATIONS]
    assert parsed.truncated_from == (len(data["operations"]) if len(data["operations"]) > MAX_OPERATIONS else None)


def test_an_answer_outside_the_schema_is_refused_by_it() -> None:
    wrong = {"reasoning": "", "operations": [{"type": "RENAME"}]}
    try:
        jsonschema.validate(wrong, OUTPUT_SCHEMAS["CuratorOutput"])
    except jsonschema.ValidationError as exc:
        assert "RENAME" in str(exc)
    else:
        raise AssertionError("an unknown operation type passed the schema")
    tight = bounded_schema("CuratorOutput", 300)
    assert tight["properties"]["operations"]["maxItems"] == 1
