"""Hypothesis properties of the engine: invariants under arbitrary (also malformed) input, and the curator's properties."""

from __future__ import annotations

from collections import Counter
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core import layered
from core import operations as engine
from core.agent_reports import reports_carried
from core.models import ApplyReport, BulletTag, CuratorOutput, Entry, OpOutcome, Playbook, ReflectorOutput
from core.operations import apply_evaluations, apply_operations, apply_session
from core.sections import DEFAULT_SECTIONS
from tests.profiles import examples

NAMES = DEFAULT_SECTIONS.names
texts = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")


@st.composite
def playbooks(draw: st.DrawFn) -> Playbook:
    sections: dict[str, list[Entry]] = {}
    for name in NAMES:
        slug = DEFAULT_SECTIONS.slug_of(name)
        numbers = draw(st.lists(st.integers(1, 30), unique=True, max_size=4))
        sections[name] = [
            Entry(
                name=f"{slug}-{n:03d}",
                text=draw(texts),
                helpful=draw(st.integers(0, 6)),
                harmful=draw(st.integers(0, 6)),
            )
            for n in numbers
        ]
    return Playbook(sections=sections)


def ids_of(playbook: Playbook) -> list[str]:
    return [e.name for _, e in playbook.entries()]


def junk() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.integers(), st.text(max_size=6), st.lists(st.integers(), max_size=2), st.just(""))


def raw_operations(ids: list[str]) -> st.SearchStrategy[Any]:
    some_id = st.one_of(st.sampled_from(ids), junk()) if ids else junk()
    section = st.one_of(st.sampled_from([*NAMES, "others", " Mistakes to avoid ", "bogus"]), junk())
    field = st.one_of(texts, junk())
    op = st.fixed_dictionaries(
        {"type": st.sampled_from(["ADD", "UPDATE", "MERGE", "DELETE", "add", "REPLACE", ""])},
        optional={
            "text": field,
            "section": section,
            "target_id": some_id,
            "merged_text": field,
            "source_ids": st.one_of(st.lists(some_id, max_size=4), junk()),
            "reason": field,
        },
    )
    return st.one_of(op, junk())


@st.composite
def scenario(draw: st.DrawFn) -> tuple[Playbook, list[Any], list[Any]]:
    playbook = draw(playbooks())
    ids = ids_of(playbook)
    ops = draw(st.lists(raw_operations(ids), max_size=14))
    name = st.one_of(st.sampled_from(ids), st.text(max_size=5)) if ids else st.text(max_size=5)
    evals = draw(
        st.lists(
            st.one_of(
                st.fixed_dictionaries({"name": name, "tag": st.sampled_from(["helpful", "harmful", "neutral", "meh"])}),
                st.fixed_dictionaries({"name": name, "rating": st.sampled_from(["helpful", "harmful", "neutral"])}),
                junk(),
            ),
            max_size=6,
        )
    )
    return playbook, ops, evals


@pytest.mark.slow
@settings(max_examples=examples(300))
@given(scenario())
def test_invariants_hold_for_any_input(case: tuple[Playbook, list[Any], list[Any]]) -> None:
    playbook, ops, evals = case
    before = playbook.model_dump()
    tagged, _ = apply_evaluations(playbook, evals)
    result, report = apply_operations(tagged, ops)
    assert playbook.model_dump() == before  # input untouched
    ids = ids_of(result)
    assert len(ids) == len(set(ids))  # unique ids
    assert list(result.sections) == NAMES  # canonical sections
    assert all(e.helpful >= 0 and e.harmful >= 0 for _, e in result.entries())
    assert report.applied() <= 10
    assert sum(1 for o in report.outcomes if o.status != "truncated") == min(len(ops), 10)
    assert report.rolled_back is None
    for section, entry in result.entries():  # ids carry their section's slug unless inherited
        if entry.name not in ids_of(tagged):
            assert entry.name.startswith(DEFAULT_SECTIONS.slug_of(section) + "-")


@settings(max_examples=examples(200))
@given(scenario())
def test_counters_are_conserved_except_for_deletes(case: tuple[Playbook, list[Any], list[Any]]) -> None:
    playbook, ops, _ = case
    result, report = apply_operations(playbook, ops)
    # Replay the outcomes on a name -> entry map to know each deleted entry's counters.
    removed_helpful = 0
    state = {e.name: e for _, e in playbook.entries()}
    for o in report.outcomes:
        if o.status != "applied":
            continue
        if o.type == "DELETE":
            removed_helpful += state.pop(o.entry_id or "").helpful
        elif o.type == "MERGE":
            merged = [state.pop(i) for i in o.target_ids]
            state[o.entry_id or ""] = Entry(name=o.entry_id or "", text="m", helpful=sum(e.helpful for e in merged))
        elif o.type == "ADD":
            state[o.entry_id or ""] = Entry(name=o.entry_id or "", text="a")
    assert (
        sum(e.helpful for _, e in result.entries()) == sum(e.helpful for _, e in playbook.entries()) - removed_helpful
    )


@settings(max_examples=examples(100))
@given(scenario(), st.integers(0, 9))
def test_rollback_leaves_input_untouched(case: tuple[Playbook, list[Any], list[Any]], fail_at: int) -> None:
    playbook, ops, _ = case
    before = playbook.model_dump()
    real = engine._apply_one
    calls = {"n": 0}

    def flaky(state: Any, index: int, raw: object, guards: Any, near: Any, aliases: Any = None) -> OpOutcome:
        calls["n"] += 1
        if calls["n"] > fail_at:
            raise RuntimeError("injected failure")
        return real(state, index, raw, guards, near, aliases)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_apply_one", flaky)
        result, report = apply_operations(playbook, ops)
    if ops and fail_at < min(len(ops), 10):
        assert result is playbook and report.rolled_back == "RuntimeError: injected failure"
    assert playbook.model_dump() == before


# --- the curator's properties --------------------------------------------------------------------


@settings(max_examples=examples(100))
@given(scenario())
def test_property_1_json_round_trip(case: tuple[Playbook, list[Any], list[Any]]) -> None:
    playbook, ops, _evals = case
    reflector = ReflectorOutput(analysis="a", bullet_tags=[BulletTag(name="pat-001", tag="helpful")])
    curator = CuratorOutput(reasoning="r", operations=[o for o in ops if isinstance(o, dict)])
    result, report = apply_session(playbook, reflector, curator)
    for model in (playbook, result, report, reflector, curator):
        assert type(model).model_validate_json(model.model_dump_json()) == model


@pytest.mark.parametrize(
    ("model", "payload"),
    [
        (ApplyReport, {"outcomes": "not a list"}),
        (ApplyReport, {"entries_before": "many"}),
        (Entry, {"name": "x", "text": "y", "helpful": -1}),
        (Entry, {"name": "", "text": "y"}),
        (Playbook, {"sections": []}),
        (ReflectorOutput, {"bullet_tags": "x"}),
        (CuratorOutput, {"operations": 3}),
        (Playbook, {"contract_version": 2, "sections": {}}),
    ],
)
def test_property_2_type_errors_rejected(model: type[Any], payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(payload)


@settings(max_examples=examples(200))
@given(playbooks(), st.sampled_from(["helpful", "harmful", "neutral"]), st.data())
def test_property_3_counter_update(playbook: Playbook, tag: str, data: st.DataObject) -> None:
    ids = ids_of(playbook)
    if not ids:
        return
    target = data.draw(st.sampled_from(ids))
    result, _ = apply_evaluations(playbook, [BulletTag(name=target, tag=tag)])
    old, new = playbook.find(target), result.find(target)
    assert old and new
    assert new[1].helpful - old[1].helpful == (tag == "helpful")
    assert new[1].harmful - old[1].harmful == (tag == "harmful")


@settings(max_examples=examples(200))
@given(playbooks(), texts, st.sampled_from(NAMES))
def test_property_4_add(playbook: Playbook, text: str, section: str) -> None:
    result, _ = apply_operations(playbook, [{"type": "ADD", "text": text, "section": section}])
    if any(e.text == text for _, e in playbook.entries()):
        assert result.size() == playbook.size()
        return
    assert result.size() == playbook.size() + 1
    assert result.sections[section][-1].text == text


@settings(max_examples=examples(200))
@given(playbooks(), texts, st.data())
def test_property_5_update(playbook: Playbook, text: str, data: st.DataObject) -> None:
    ids = ids_of(playbook)
    if not ids:
        return
    target = data.draw(st.sampled_from(ids))
    result, _ = apply_operations(playbook, [{"type": "UPDATE", "target_id": target, "text": text}])
    assert result.size() == playbook.size()
    old, new = playbook.find(target), result.find(target)
    assert old and new and new[1].text == text and new[0] == old[0]
    assert (new[1].helpful, new[1].harmful) == (old[1].helpful, old[1].harmful)


@settings(max_examples=examples(200))
@given(playbooks(), st.data())
def test_property_6_delete(playbook: Playbook, data: st.DataObject) -> None:
    ids = ids_of(playbook)
    if not ids:
        return
    target = data.draw(st.sampled_from(ids))
    result, _ = apply_operations(playbook, [{"type": "DELETE", "target_id": target}])
    assert result.size() == playbook.size() - 1
    assert result.find(target) is None


@given(playbooks(), st.lists(st.integers(0, 40), max_size=12), st.integers(0, 6), st.floats(0, 1))
@settings(max_examples=examples(200), deadline=None)
def test_guards_bound_what_one_session_can_remove(
    playbook: Playbook, picks: list[int], max_removed: int, share: float
) -> None:
    from core.models import Guards

    ids = ids_of(playbook)
    ops = [{"type": "DELETE", "target_id": ids[i % len(ids)]} for i in picks] if ids else []
    guards = Guards(max_removed=max_removed, max_removed_share=share)
    reflector = ReflectorOutput(analysis="a", bullet_tags=[])
    result, report = apply_session(playbook, reflector, CuratorOutput(reasoning="r", operations=ops), guards=guards)
    removed = playbook.size() - result.size()
    if report.held:
        assert result is playbook and report.held.startswith("mass_change")
    else:
        assert removed <= max(max_removed, share * playbook.size())


@given(st.text(max_size=300))
@settings(max_examples=examples(300), deadline=None)
def test_clean_entry_text_is_one_clean_paragraph(text: str) -> None:
    cleaned = engine.clean_entry_text(text)
    assert "\n" not in cleaned and "\x00" not in cleaned and "<!--" not in cleaned and "-->" not in cleaned
    assert not any(ord(c) < 32 for c in cleaned) and cleaned == cleaned.strip()
    assert engine.clean_entry_text(cleaned) == cleaned


@given(playbooks(), st.integers(0, 8), st.integers(0, 60))
@settings(max_examples=examples(200), deadline=None)
def test_an_export_always_fits_its_budget(playbook: Playbook, max_entries: int, max_tokens: int) -> None:
    from core.budget import Budget, entry_tokens, fit_budget

    budget = Budget(max_entries=max_entries, max_tokens=max_tokens)
    fitted, use = fit_budget(playbook, budget)
    kept = ids_of(fitted)
    assert len(kept) <= max_entries and sum(entry_tokens(e.text) for _, e in fitted.entries()) <= max_tokens
    assert kept == [i for i in ids_of(playbook) if i in kept]  # a subset, in playbook order
    assert use.left_out == playbook.size() - fitted.size()
    if not use.over:
        assert fitted is playbook


def close_operations(ids: list[str]) -> st.SearchStrategy[Any]:
    """Valid operations on few texts and two sections: texts come back, ids are reused, near-duplicates meet."""
    text = st.sampled_from(["a", "A", "b", "B", "c"])
    section = st.sampled_from(["OTHERS", "MISTAKES TO AVOID"])
    target = st.sampled_from(ids) if ids else st.just("oth-001")
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("ADD"), "text": text, "section": section}),
        st.fixed_dictionaries({"type": st.just("UPDATE"), "target_id": target, "text": text}),
        st.fixed_dictionaries({"type": st.just("DELETE"), "target_id": target}),
        st.fixed_dictionaries(
            {"type": st.just("MERGE"), "source_ids": st.lists(target, min_size=2, max_size=3), "merged_text": text}
        ),
    )


def _casefold_twin(text: str, live: Any) -> tuple[str, float] | None:
    """A near-duplicate finder for the engine's tests: a live text equal to `text` but for case."""
    twins = sorted(t for t, n in live.items() if n > 0 and t.casefold() == text.casefold())
    return (twins[0], 1.0) if twins else None


@settings(max_examples=examples(150))
@given(st.one_of(st.just(engine.empty_playbook()), playbooks()), st.data())
def test_sessions_applied_one_after_another_agree_with_each_applied_afresh(
    playbook: Playbook, data: st.DataObject
) -> None:
    # Each result carries the engine's indexes to the next session; a fresh copy of the same playbook (built again,
    # nothing carried) must give the very same playbook and report, and no input may change. The indexes layer each
    # session's changes on the last, folded into one every so many changes: at every fold size.
    fold = data.draw(st.sampled_from([0, 1, 3, layered._FOLD_MIN]))
    with patch.object(layered, "_FOLD_MIN", fold):
        _sessions_agree(playbook, data)


def _sessions_agree(playbook: Playbook, data: st.DataObject) -> None:
    current = playbook
    for _ in range(data.draw(st.integers(1, 8))):
        ids = ids_of(current)
        ops = data.draw(
            st.lists(st.one_of(close_operations(ids), close_operations(ids), raw_operations(ids)), max_size=6)
        )
        tags = data.draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(ids) if ids else st.just("x"),
                        "tag": st.sampled_from(["helpful", "harmful"]),
                    }
                ),
                max_size=4,
            )
        )
        before = current.model_dump()
        fresh = Playbook.model_validate(before)
        reflector, curator = ReflectorOutput(bullet_tags=tags), CuratorOutput(operations=ops)
        carried, report = apply_session(current, reflector, curator, near=_casefold_twin)
        afresh, fresh_report = apply_session(fresh, reflector, curator, near=_casefold_twin)
        assert current.model_dump() == before
        assert carried.model_dump() == afresh.model_dump()
        assert report.model_dump() == fresh_report.model_dump()
        assert dict(engine.live_texts(carried)) == dict(engine.live_texts(afresh))
        current = carried


def test_a_model_answer_is_bounded_where_it_is_parsed() -> None:
    """A reflection that tags one entry 10,000 times gives it one verdict; a curator answer of 10,000 operations
    keeps 10 and says how many there were; applying it records one truncation, not 9,990."""
    import json

    from core.curator import parse_curator
    from core.models import MAX_BULLET_TAGS
    from core.reflector import parse_reflector

    book = Playbook.model_validate(
        {"sections": {"OTHERS": [{"name": "oth-001", "text": "prefer pathlib", "helpful": 0, "harmful": 0}]}}
    )
    tags = [{"name": "oth-001", "tag": "helpful", "rationale": "r"}] * 10_000
    tags += [{"name": f"oth-{i:03d}", "tag": "harmful", "rationale": ""} for i in range(2, 300)]
    reflection = parse_reflector(json.dumps({"analysis": "a", "bullet_tags": tags}))
    assert reflection is not None and len(reflection.bullet_tags) == MAX_BULLET_TAGS
    assert [t.name for t in reflection.bullet_tags].count("oth-001") == 1
    ops = [{"type": "ADD", "text": f"lesson {i}"} for i in range(10_000)]
    curation = parse_curator(json.dumps({"reasoning": "r", "operations": ops}))
    assert curation is not None and len(curation.operations) == 10 and curation.truncated_from == 10_000
    result, report = apply_session(book, reflection, curation)
    found = result.find("oth-001")
    assert found is not None and found[1].helpful == 1
    assert report.proposed == 10_000 and report.truncated_from == 10_000 and report.applied() == 10
    (cut,) = [o for o in report.outcomes if o.status == "truncated"]
    assert cut.reason == "Operations list truncated from 10000 to 10" and cut.raw == {"dropped": 9990}
    exactly = parse_curator(json.dumps({"operations": ops[:10]}))
    assert exactly is not None and exactly.truncated_from is None


@settings(max_examples=examples(100))
@given(playbooks(), st.data())
def test_unseen_texts_found_without_a_pass_are_every_text_a_pass_finds(playbook: Playbook, data: st.DataObject) -> None:
    # A caller that hands each session's unseen texts on (embeds them, finds them clean) ends up with every live
    # text, as a pass over all of them would give: the incremental answer equals the full one at every step.
    done: set[str] = set()
    covered: list[Any] = []
    current = playbook
    for _ in range(data.draw(st.integers(1, 10))):
        ids = ids_of(current)
        ops = data.draw(st.lists(st.one_of(close_operations(ids), raw_operations(ids)), max_size=5))
        current, _ = apply_operations(current, ops)
        live = engine.live_texts(current)
        texts = [e.text for _, e in current.entries()]
        assert dict(live) == dict(Counter(texts))  # what the layers read is what a count afresh gives
        unseen = layered.unseen_texts(live, done, covered)
        assert set(texts) - done <= set(unseen)
        done.update(data.draw(st.sampled_from([unseen, unseen[: len(unseen) // 2]])))  # some callers stop early
    done.update(layered.unseen_texts(engine.live_texts(current), done, covered))
    assert {e.text for _, e in current.entries()} <= done


@settings(max_examples=examples(150))
@given(playbooks(), st.data())
def test_sessions_applied_to_one_playbook_in_turn_each_agree_with_it_applied_afresh(
    playbook: Playbook, data: st.DataObject
) -> None:
    """Two sessions applied to the same carried playbook (a branch, as a retried epoch does) each give what they
    give applied to a fresh copy: what one changes of the indexes it was carried (the id numbers in use, the texts)
    never reaches the other."""
    ids = ids_of(playbook)
    first_ops, second_ops = (
        data.draw(st.lists(st.one_of(close_operations(ids), raw_operations(ids)), min_size=1, max_size=6))
        for _ in range(2)
    )
    carried, _ = apply_operations(playbook, [{"type": "ADD", "text": "seed", "section": "OTHERS"}])
    fresh = Playbook.model_validate(carried.model_dump())
    for ops in (first_ops, second_ops, first_ops):
        branch, report = apply_operations(carried, ops)
        alone, alone_report = apply_operations(fresh, ops)
        assert branch.model_dump() == alone.model_dump()
        assert report.model_dump() == alone_report.model_dump()


@settings(max_examples=examples(200))
@given(
    st.sampled_from(["pat", "mis", "p-1"]),
    st.lists(
        st.one_of(
            st.builds(lambda s, n: f"{s}-{n}", st.sampled_from(["pat", "mis", "p-1", "pa"]), st.integers(0, 2000)),
            st.builds(
                lambda s, t: f"{s}-{t}", st.sampled_from(["pat", "p-1"]), st.text("0123456789٣²x -_\n", max_size=5)
            ),
        ),
        max_size=12,
    ),
)
def test_a_new_id_is_one_above_the_highest_number_of_its_slug(slug: str, ids: list[str]) -> None:
    """`{slug}-NNN` one above the highest NNN (ASCII digits only) among the ids that are exactly `{slug}-NNN`."""
    import re

    used = [int(m.group(1)) for i in ids if (m := re.fullmatch(rf"{re.escape(slug)}-([0-9]+)", i))]
    assert engine.next_entry_id(ids, slug) == f"{slug}-{max(used, default=0) + 1:03d}"


@given(helpful=st.integers(0, 20), harmful=st.integers(0, 20), share=st.floats(0, 1))
def test_agents_reports_weigh_against_helpful_but_never_make_the_three(
    helpful: int, harmful: int, share: float
) -> None:
    """Of an entry's harmful tags, `reported` are agents' own reports (`playbook mcp`): with none it is the seeds'
    rule; with some, an entry is pruned only if the rule holds and the other tags alone make the 3."""
    reported = int(harmful * share)
    entry = Entry(name="pat-001", text="Run the failing test first.", helpful=helpful, harmful=harmful)
    seeds = harmful >= 3 and harmful > helpful
    assert engine.should_prune(entry) is seeds
    assert engine.should_prune(entry, reported) is (seeds and harmful - reported >= 3)
    book = Playbook(sections={"PATTERNS & APPROACHES": [entry]})
    kept, pruned = engine.prune(book, {"pat-001": reported})
    assert [p.name for p in pruned] == (["pat-001"] if seeds and harmful - reported >= 3 else [])
    assert kept.size() == 1 - len(pruned)


def test_a_merge_carries_its_sources_agents_reports_so_they_still_never_make_the_three() -> None:
    """Two entries each with 2 harmful tags, all agents' reports, merged: the merged entry's 4 must stay agents'
    (round 11: a merge turned them into tags that pruned). With the reports carried it stays; a chain of merges
    adds them up."""
    book = Playbook(
        sections={
            "OTHERS": [
                Entry(name="oth-001", text="Prefer pathlib over os.path.", harmful=2),
                Entry(name="oth-002", text="Use pathlib.Path for file paths.", harmful=2),
            ]
        }
    )
    merge = {"type": "MERGE", "source_ids": ["oth-001", "oth-002"], "merged_text": "Prefer pathlib for file paths."}
    session = (ReflectorOutput(bullet_tags=[]), CuratorOutput(operations=[merge]))
    kept, report = apply_session(book, *session, reported={"oth-001": 2, "oth-002": 2})
    assert [e.harmful for e in kept.sections["OTHERS"]] == [4] and report.pruned == []
    _, report = apply_session(book, *session, reported={"oth-001": 1})  # three of the four are tags: pruned
    assert [p.harmful for p in report.pruned] == [4]
    assert reports_carried({"a": 1, "b": 2, "d": 4}, [("c", ["a", "b"]), ("e", ["c", "d"])]) == {
        "a": 1, "b": 2, "c": 3, "d": 4, "e": 7,
    }  # fmt: skip
