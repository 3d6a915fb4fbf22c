"""Near-duplicate lessons: an ADD that says what a live entry already says is skipped as `near_duplicate`,
names the entry and the similarity, and is counted as a rediscovery of it (never as a helpful tag); the
sentence model is the real all-MiniLM-L6-v2 from its wheel, the fallback the lexical measure."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.consolidate import merge_operations, near_pairs
from core.llm.embed import Lexical, load_embedder, near_finder
from core.models import CuratorOutput, Entry, Playbook
from core.near_misses import different
from core.operations import apply_operations
from core.selection import SessionFilter
from core.store.db import open_db
from core.store.ingest import ingest
from flows.config import Settings
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import claude_session, expose, message
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
LESSONS = json.loads((ROOT / "data" / "lessons" / "paraphrases.json").read_text())["lessons"]
SAMPLES = ROOT / "data" / "samples" / "claude-code"
SESSIONS = ["0d3a8e6f-290f-4105-a327-a2496e5e2a83", "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["minilm", "lexical"])
def test_the_default_thresholds_hold_their_precision_on_the_labelled_set(kind: str) -> None:
    embedder = load_embedder(kind)
    texts = [t for group in LESSONS for t in group]
    label = [i for i, group in enumerate(LESSONS) for _ in group]
    vectors = embedder.embed(texts)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    flagged = same = 0
    for a, b in itertools.combinations(range(len(texts)), 2):
        if float(vectors[a] @ vectors[b]) >= embedder.threshold:
            flagged += 1
            same += label[a] == label[b]
    assert flagged and same / flagged >= 0.95  # a skipped ADD is almost never a different lesson


NEAR_MISSES = json.loads((ROOT / "data" / "lessons" / "near_misses.json").read_text())["pairs"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["minilm", "lexical"])
def test_lessons_alike_in_words_but_not_in_meaning_are_kept_apart_and_paraphrases_still_merge(kind: str) -> None:
    embedder = load_embedder(kind)
    kept = 0
    for first, second in NEAR_MISSES:
        playbook = Playbook(sections={"OTHERS": [Entry(name="oth-001", text=first)]})
        ops = [{"type": "ADD", "text": second, "section": "OTHERS"}]
        _, report = apply_operations(playbook, ops, near=near_finder(embedder, {}, embedder.threshold))
        kept += report.outcomes[0].status == "applied"
    assert kept >= 0.9 * len(NEAR_MISSES), f"{kept} of {len(NEAR_MISSES)} kept apart"
    # No pair of wordings of one lesson that the threshold merges is told apart: the paraphrase merges are whole.
    texts = [t for group in LESSONS for t in group]
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    for group in LESSONS:
        for a, b in itertools.combinations(group, 2):
            if float(vectors[a] @ vectors[b]) >= embedder.threshold:
                entries = [("OTHERS", Entry(name="oth-001", text=a)), ("OTHERS", Entry(name="oth-002", text=b))]
                assert len(merge_operations(entries, vectors, embedder.threshold)) == 1, (a, b)


def test_a_paraphrase_is_skipped_and_names_the_entry_a_new_lesson_is_added() -> None:
    embedder = load_embedder("minilm")
    playbook = Playbook(sections={"OTHERS": [Entry(name="oth-001", text=LESSONS[1][0])]})
    ops = [
        {"type": "ADD", "text": LESSONS[1][1], "section": "OTHERS"},  # the same lesson, other words
        {"type": "ADD", "text": LESSONS[12][0], "section": "OTHERS"},  # another lesson
    ]
    result, report = apply_operations(playbook, ops, near=near_finder(embedder, {}, embedder.threshold))
    skipped, added = report.outcomes
    assert (skipped.status, skipped.code, skipped.entry_id) == ("skipped", "near_duplicate", "oth-001")
    assert skipped.similarity is not None and skipped.similarity >= embedder.threshold
    assert skipped.reason.startswith("ADD: near-duplicate of oth-001 (similarity 0.")
    assert added.status == "applied" and [e.text for _, e in result.entries()] == [LESSONS[1][0], LESSONS[12][0]]


def test_the_lexical_fallback_catches_a_close_rewording() -> None:
    embedder = Lexical()
    near = near_finder(embedder, {}, embedder.threshold)
    live = {"Run the type checker after refactoring signatures.": 1}
    assert near("After refactoring signatures, run the type checker.", live) is not None
    assert near("Quote file paths that may contain spaces in shell commands.", live) is None


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([t for group in LESSONS[:8] for t in group]), min_size=0, max_size=12), min_size=1
    ),
    st.sampled_from([t for group in LESSONS[:8] for t in group]),
)
def test_the_finder_answers_as_a_fresh_comparison_would(queries: list[list[str]], probe: str) -> None:
    # One finder serves a whole epoch while the live texts change; its matrix keeps every text it has seen, and
    # only the live ones may be answered.
    embedder = Lexical()
    near = near_finder(embedder, {}, -1.0)
    for texts in [*queries, [probe]]:
        got = near(probe, Counter(texts))
        if not texts:
            assert got is None
            continue
        vectors = embedder.embed([probe, *texts])
        scores = dict(zip(texts, (vectors[1:] @ vectors[0]).tolist(), strict=True))
        # Lessons the near-miss rules tell apart are never an answer, however close.
        scores = {t: v for t, v in scores.items() if not different(probe, t)}
        if not scores:
            assert got is None
            continue
        best = max(scores.values())
        assert got is not None and got[0] in scores
        assert scores[got[0]] == pytest.approx(best) and got[1] == pytest.approx(best)


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 1_100), st.integers(0, 2**32 - 1), st.sampled_from([0.2, 0.5, 0.9]))
def test_the_duplicate_rate_counts_every_pair_once(n: int, seed: int, threshold: float) -> None:
    # Counted by blocks of rows: the same as every pair i < j compared, across block edges too.
    # Quarters in a few dimensions: every product is exact in float32, so no pair sits on the threshold by rounding.
    matrix = np.random.default_rng(seed).integers(-2, 3, (n, 6)).astype(np.float32) / 4
    matrix[:, [1, 4]] = 0  # dimensions no entry uses (most of the word-stem vectors'), which the count leaves out
    # Texts without numbers or quotes: the count is the vectors' alone (no near-miss rule has a say).
    entries = [Entry(name=f"oth-{i:04d}", text="lesson " + "".join(chr(97 + int(d)) for d in str(i))) for i in range(n)]
    vectors = {e.text: matrix[i] for i, e in enumerate(entries)}
    products = matrix @ matrix.T
    expected = sum(int((products[i, i + 1 :] >= threshold).sum()) for i in range(n))
    assert near_pairs(entries, vectors, threshold) == expected


def _replay(tmp_path: Path, analysis: str, operations: list[list[dict[str, str]]]) -> Path:
    """A `replay:` provider's file: for the i-th of SESSIONS, a reflection saying `analysis` and a curator answer
    with `operations[i]`."""
    rows = []
    for session, ops in zip(SESSIONS, operations, strict=False):
        rows.append(
            {"session_id": session, "step": "reflector", "text": json.dumps({"analysis": analysis, "bullet_tags": []})}
        )
        rows.append(
            {"session_id": session, "step": "curator", "text": json.dumps({"reasoning": "r", "operations": ops})}
        )
    path = tmp_path / "replay.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_run_counts_rediscoveries_and_keeps_the_vectors(tmp_path: Path) -> None:
    db = tmp_path / "n.duckdb"
    with open_db(db) as con:
        ingest(con, [SAMPLES / "claude-code-log" / "-Users-dain-workspace-claude-code-log-sample"])
    path = _replay(
        tmp_path,
        "a",
        [
            [{"type": "ADD", "text": LESSONS[3][0]}],
            [{"type": "ADD", "text": LESSONS[3][2]}, {"type": "ADD", "text": LESSONS[20][0], "trigger": "ERR!"}],
        ],
    )
    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", epoch_size=1, min_messages=1))
    run = run_curation(settings, "default", settings.provider(f"replay:{path}"))
    assert run.sessions_applied >= 2 and run.skip_reasons.get("ADD: near duplicate") == 1
    per = 100 / run.sessions_applied
    assert run.quality == {
        "added_per_100": round(2 * per, 1),
        "merged_per_100": 0.0,
        "retired_per_100": 0.0,
        "budget_entries": 2 / 40,
        "budget_tokens": pytest.approx(run.quality["budget_tokens"]),
        "duplicate_rate": 0.0,  # the paraphrase was kept out
        "trigger_share": 0.5,
    }
    assert 0 < run.quality["budget_tokens"] < 0.1 and "duplicate rate 0.0%" in run.quality_line()
    assert "50% of entries have a trigger" in run.quality_line()
    with open_db(db) as con:
        found = con.execute("SELECT entry_id, session_id, text FROM rediscoveries").fetchall()
        view = con.execute("SELECT entry_id, rediscoveries FROM v_rediscoveries").fetchall()
        live = [r[0] for r in con.execute("SELECT text FROM entries WHERE valid_to IS NULL ORDER BY name").fetchall()]
        helpful = con.execute("SELECT sum(helpful) FROM entries WHERE valid_to IS NULL").fetchone()
        stored = con.execute("SELECT count(*) FROM text_embeddings").fetchone()
    entry = found[0][0]
    assert found == [(entry, SESSIONS[1], LESSONS[3][2])] and view == [(entry, 1)]
    assert sorted(live) == sorted([LESSONS[3][0], LESSONS[20][0]]) and helpful == (0,)  # never mixed
    assert stored is not None and stored[0] >= 3


def test_the_curator_is_shown_the_live_entries_close_to_each_finding(tmp_path: Path) -> None:
    import httpx2

    from core.llm.claude import AnthropicProvider, make_client
    from core.llm.pricing import CostCap
    from core.store.registry import ensure_playbook
    from core.store.versions import write_version
    from flows.models.providers import ProviderSpec

    db = tmp_path / "c.duckdb"
    with open_db(db) as con:
        ingest(con, [SAMPLES / "claude-code-log" / "-Users-dain-workspace-claude-code-log-sample"])
        ensure_playbook(con, "default")
        seeded = Playbook(
            sections={
                "PATTERNS & APPROACHES": [Entry(name="pat-001", text=LESSONS[0][0])],
                "OTHERS": [Entry(name="oth-001", text=LESSONS[30][0])],
            }
        )
        write_version(con, "default", seeded, source="import")
    curator_users: list[str] = []
    curator_systems: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if "operations" in json.dumps(body.get("output_config", {})):
            curator_users.append(body["messages"][0]["content"])
            curator_systems.append(body["system"][0]["text"])
            text = json.dumps({"reasoning": "r", "operations": []})
        else:
            analysis = f"The agent ran the whole suite for every change. {LESSONS[0][2]} The user was happy with the final result."
            text = json.dumps({"analysis": analysis, "bullet_tags": []})
        return httpx2.Response(200, json=message(text, input_tokens=5, output_tokens=5))

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        return AnthropicProvider(client, cost_cap=cap)

    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", min_messages=1, epoch_size=1, max_entries=1))
    model = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")
    assert run_curation(settings, "default", model, factory=factory).sessions_applied >= 1
    assert "Budget: 2 of 1 entries" in curator_systems[0] and "OVER its budget" in curator_systems[0]
    close = curator_users[0].split("Close entries")[1]
    assert f"- Finding: {LESSONS[0][2]}" in close
    assert "  - [pat-001] (similarity 0." in close and LESSONS[0][0] in close
    assert "oth-001" not in close  # the Docker lesson is close to no finding


def test_consolidate_merges_near_duplicates_with_counters_summed(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    playbook = {
        "version": "1.0",
        "sections": {
            "PATTERNS & APPROACHES": [
                {"name": "pat-001", "text": LESSONS[1][0], "helpful": 1, "harmful": 0},
                {"name": "pat-002", "text": LESSONS[22][0], "helpful": 0, "harmful": 0},
                {"name": "pat-003", "text": LESSONS[1][3], "helpful": 4, "harmful": 1},
            ],
            "OTHERS": [{"name": "oth-001", "text": LESSONS[9][0], "helpful": 2, "harmful": 0}],
        },
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(playbook))
    db = str(tmp_path / "c.duckdb")
    runner = CliRunner()
    assert runner.invoke(app, ["import", str(path), "--db", db]).exit_code == 0
    planned = runner.invoke(app, ["consolidate", "--dry-run", "--json", "--db", db])
    assert planned.exit_code == 0, planned.stderr
    merges = json.loads(planned.stdout)["merges"]
    assert merges == [
        {
            "type": "MERGE",
            "source_ids": ["pat-001", "pat-003"],
            "merged_text": LESSONS[1][3],  # the better evidence: 4 helpful, 1 harmful
            "section": "PATTERNS & APPROACHES",
        }
    ]
    with open_db(tmp_path / "c.duckdb") as con:
        assert con.execute("SELECT max(version) FROM versions").fetchone() == (1,)  # a dry run writes nothing
    done = runner.invoke(app, ["consolidate", "--db", db])
    assert done.exit_code == 0 and "1 cluster(s) merged: version 2, 4 -> 3 entries." in done.stdout
    shown = json.loads(runner.invoke(app, ["show", "--db", db, "--format", "json"]).stdout)["sections"]
    merged = [e for e in shown["PATTERNS & APPROACHES"] if e["text"] == LESSONS[1][3]]
    assert [(e["helpful"], e["harmful"]) for e in merged] == [(5, 1)]  # counters summed
    with open_db(tmp_path / "c.duckdb") as con:
        assert con.execute("SELECT source FROM versions WHERE version = 2").fetchone() == ("consolidate",)
        assert con.execute("SELECT kind, status FROM runs").fetchall() == [("consolidate", "ok")]
        sources = con.execute("SELECT target_ids FROM operations WHERE version = 2 AND type = 'MERGE'").fetchone()
    assert sources is not None and json.loads(sources[0]) == ["pat-001", "pat-003"]  # provenance kept
    again = runner.invoke(app, ["consolidate", "--db", db])
    assert "nothing to merge" in again.stdout


def test_exports_fit_the_budget_and_say_what_they_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    entries = [
        {"name": f"oth-{i:03d}", "text": group[0], "helpful": i, "harmful": 0} for i, group in enumerate(LESSONS[:5], 1)
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"version": "1.0", "sections": {"OTHERS": entries}}))
    db = str(tmp_path / "b.duckdb")
    runner = CliRunner()
    assert runner.invoke(app, ["import", str(path), "--db", db]).exit_code == 0
    monkeypatch.setenv("PLAYBOOK_MAX_ENTRIES", "2")
    claude = tmp_path / "CLAUDE.md"
    claude.write_text("# My notes\n\nKeep this line.\n")
    done = runner.invoke(app, ["export", "--format", "claude-md", "--out", str(claude), "--db", db])
    assert done.exit_code == 0, done.stderr
    text = claude.read_text()
    assert "Keep this line." in text and "[oth-005]" in text and "[oth-004]" in text  # the most helpful two
    assert "[oth-001]" not in text and "3 more entries left out to fit the budget (2 entries" in text
    assert "left out to fit the budget" in done.stderr
    whole = runner.invoke(app, ["export", "--format", "json", "--all", "--db", db])
    assert len(json.loads(whole.stdout)["sections"]["OTHERS"]) == 5


@pytest.mark.slow
def test_entries_nobody_confirms_go_stale_and_leave_the_exports(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    entries = [{"name": f"oth-{i:03d}", "text": LESSONS[i][0], "helpful": 0, "harmful": 0} for i in (1, 2, 3)]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"version": "1.0", "sections": {"OTHERS": entries}}))
    db = tmp_path / "s.duckdb"
    runner = CliRunner()
    assert runner.invoke(app, ["import", str(path), "--db", str(db)]).exit_code == 0
    with open_db(db) as con:  # a history that started 200 days ago
        con.execute("UPDATE versions SET created_at = now() - INTERVAL 200 DAY WHERE version <= 1")
        ingest(con, [SAMPLES / "claude-code-log" / "-Users-dain-workspace-claude-code-log-sample"])
    expose(db, {SESSIONS[0]: ["oth-002"]})  # its agent had the entry (the hook's record), so the tag counts
    tags = {"analysis": "a", "bullet_tags": [{"name": "oth-002", "tag": "helpful", "rationale": "it applied"}]}
    replay = tmp_path / "r.jsonl"
    replay.write_text(
        "\n".join(
            json.dumps({"session_id": sid, "step": step, "text": json.dumps(text)})
            for sid in SESSIONS[:1]
            for step, text in (("reflector", tags), ("curator", {"reasoning": "r", "operations": []}))
        )
        + "\n"
    )
    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", min_messages=1))
    run_curation(settings, "default", settings.provider(f"replay:{replay}"), chosen=SessionFilter(limit=1))
    listed = runner.invoke(app, ["stale", "--json", "--db", str(db)])
    assert [r["name"] for r in json.loads(listed.stdout)] == ["oth-001", "oth-003"]  # oth-002 was confirmed now
    exported = json.loads(runner.invoke(app, ["export", "--db", str(db)]).stdout)
    assert [e["name"] for e in exported["sections"]["OTHERS"]] == ["oth-002"]
    everything = json.loads(runner.invoke(app, ["export", "--all", "--db", str(db)]).stdout)
    assert len(everything["sections"]["OTHERS"]) == 3
    assert json.loads(runner.invoke(app, ["stale", "--json", "--days", "365", "--db", str(db)]).stdout) == []
    from flows.insight.evolution import write_evolution_report

    page = write_evolution_report(db, "default", tmp_path / "report", stale_after_days=90).index.read_text()
    stale_part = page.split("<h2>Stale entries</h2>")[1].split("<h2>")[0]
    assert "<code>oth-001</code>" in stale_part and "<code>oth-002</code>" not in stale_part
    assert "for 90 days" in stale_part


def _two_near_duplicates(tmp_path: Path, extra: list[dict] | None = None) -> Workspace:
    from typer.testing import CliRunner

    from flows.cli import app

    entries = [
        {"name": "pat-001", "text": LESSONS[1][0], "helpful": 1, "harmful": 0},
        {"name": "pat-002", "text": LESSONS[22][0], "helpful": 0, "harmful": 0},
        {"name": "pat-003", "text": LESSONS[1][3], "helpful": 4, "harmful": 1},
        *(extra or []),
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    db = tmp_path / "m.duckdb"
    assert CliRunner().invoke(app, ["import", str(path), "--db", str(db)]).exit_code == 0
    return Workspace.of(Settings(db=db, out_dir=tmp_path / "out"))


@pytest.mark.parametrize("answer", ["merge", "junk"])
def test_consolidate_has_a_configured_model_judge_groups_that_may_say_the_same(tmp_path: Path, answer: str) -> None:
    import httpx2

    from core.llm.claude import AnthropicProvider, make_client
    from core.llm.pricing import CostCap
    from flows.models.providers import ProviderSpec
    from flows.run.consolidation import run_consolidation

    # pat-001 and pat-003 are near-duplicates (merged in any case); pat-004 says pat-002's lesson in other words,
    # below the threshold (0.48): only a judge can merge them.
    settings = _two_near_duplicates(tmp_path, extra=[{"name": "pat-004", "text": LESSONS[22][3], "helpful": 2}])
    bodies: list[dict] = []
    written = "Lint locally (ruff) before each commit so CI stays green."

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        ops = [
            {"type": "MERGE", "source_ids": ["pat-003", "pat-001"], "merged_text": written},
            {"type": "MERGE", "source_ids": ["pat-002", "pat-004"], "merged_text": LESSONS[22][1]},
            {"type": "MERGE", "source_ids": ["pat-002", "pat-404"], "merged_text": "an id it made up"},
            {"type": "DELETE", "target_id": "pat-002", "reason": "the model may only merge here"},
        ]
        text = json.dumps({"reasoning": "r", "operations": ops}) if answer == "merge" else "I cannot do that."
        return httpx2.Response(200, json=message(text, input_tokens=50, output_tokens=20))

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        return AnthropicProvider(client, cost_cap=cap)

    spec = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")
    summary, ops = run_consolidation(settings, "default", provider=spec, factory=factory)
    (body,) = bodies  # one call for the pass
    user = body["messages"][0]["content"]
    prompt = user if isinstance(user, str) else " ".join(part["text"] for part in user)
    assert "- group 1:" in prompt and all(f"- pat-00{i}: " in prompt for i in (1, 2, 3, 4))
    with open_db(settings.settings.db) as con:
        live = con.execute("SELECT text, helpful, harmful FROM entries WHERE valid_to IS NULL ORDER BY name").fetchall()
        calls = con.execute("SELECT step, session_id, run_id FROM llm_calls").fetchall()
        apart = con.execute("SELECT count(*) FROM kept_apart").fetchone()
    assert calls == [("curator", None, summary.run_id)]
    if answer == "merge":  # both merges taken (counters summed), the made-up id and the DELETE ignored
        assert sorted(live) == sorted([(written, 5, 1), (LESSONS[22][1], 2, 0)])
        assert apart == (4,)  # the pairs across the two lessons, not shown again for a while
        assert summary.notices == [
            "The curator judged 1 group(s) of 4 entries that may say the same lesson: 2 of its merges taken,"
            " 4 pair(s) kept apart (not shown again for 7 days)."
        ]
        # The two merged entries have new texts: shown once more (the answer names ids that are gone: kept apart),
        # then not again while that verdict is fresh.
        again, _ = run_consolidation(settings, "default", provider=spec, factory=factory)
        assert len(bodies) == 2 and again.status == "nothing-to-do" and "1 pair(s) kept apart" in again.notices[0]
        third, _ = run_consolidation(settings, "default", provider=spec, factory=factory)
        assert len(bodies) == 2 and third.status == "nothing-to-do" and third.notices == []
    else:  # no usable answer: the near-duplicates still merge, with the text of the one with the best evidence
        assert sorted(live) == sorted([(LESSONS[1][3], 5, 1), (LESSONS[22][0], 0, 0), (LESSONS[22][3], 2, 0)])
        assert apart == (0,) and "no usable answer" in summary.notices[0]
    assert ops and all(op["type"] == "MERGE" for op in ops)


def test_a_wording_merged_into_an_entry_comes_back_as_a_rediscovery_of_it() -> None:
    from core.consolidate import merged_wordings

    playbook = Playbook(sections={"OTHERS": [Entry(name="oth-003", text="Run the narrow test first.")]})
    aliases = merged_wordings(
        [
            ("oth-002", ["oth-001", "oth-000"], "Start with one test.\nOne test first."),
            ("oth-003", ["oth-002", "oth-009"], "Narrow the run to one test.\nA failing test first."),
        ]
    )
    assert aliases["Start with one test."] == "oth-003"  # moved with its entry when that was merged again
    # An id given again (here to a later merge's result) names a new entry: older wordings do not follow it.
    reused = merged_wordings(
        [
            ("oth-002", ["oth-001", "oth-000"], "A."),
            ("oth-003", ["oth-002"], "B."),
            ("oth-002", ["oth-010", "oth-011"], "C."),
        ]
    )
    assert reused == {"A.": "oth-003", "B.": "oth-003", "C.": "oth-002"}
    # An id given again to an ADD (the entry it named was deleted): its wordings belong to nobody now.
    added = merged_wordings([("oth-002", ["oth-001", "oth-000"], "A."), ("oth-002", [], ""), ("oth-004", [], "")])
    assert added == {}
    ops = [{"type": "ADD", "text": "One test first.", "section": "OTHERS"}]
    result, report = apply_operations(playbook, ops, aliases=aliases)
    (outcome,) = report.outcomes
    assert result is not playbook or result.size() == 1
    assert (outcome.status, outcome.code, outcome.entry_id) == ("skipped", "near_duplicate", "oth-003")
    assert "merged into oth-003" in outcome.reason
    gone = {"One test first.": "oth-777"}  # merged into an entry that no longer lives: a new lesson again
    assert apply_operations(playbook, ops, aliases=gone)[1].outcomes[0].status == "applied"


def test_a_judge_confirms_which_candidate_pairs_merge() -> None:
    """Candidates from similarity, membership from the judge: a pair it refuses stays apart, even when the
    similarity alone would join it, and clusters form only through confirmed pairs."""
    from core.consolidate import merge_operations

    texts = ["Run the narrow test first.", "Run the narrowest test first.", "Run the narrow tests first, always."]
    embedder = load_embedder("lexical")
    known = dict(zip(texts, embedder.embed(texts), strict=True))
    entries = [("OTHERS", Entry(name=f"oth-00{i}", text=t)) for i, t in enumerate(texts, 1)]
    joined = merge_operations(entries, known, 0.1)
    assert [sorted(op["source_ids"]) for op in joined] == [["oth-001", "oth-002", "oth-003"]]
    only_first_two = merge_operations(
        entries, known, 0.1, confirm=lambda a, b: {a.name, b.name} == {"oth-001", "oth-002"}
    )
    assert [sorted(op["source_ids"]) for op in only_first_two] == [["oth-001", "oth-002"]]
    assert merge_operations(entries, known, 0.1, confirm=lambda a, b: False) == []


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(2, 14),
    st.integers(0, 2**32 - 1),
    st.lists(st.lists(st.integers(0, 16), min_size=1, max_size=4), max_size=5),
    st.booleans(),
)
def test_a_judged_consolidation_merges_only_what_similarity_or_the_judge_joined(
    n: int, seed: int, answer: list[list[int]], answered: bool
) -> None:
    from core.consolidate import candidate_groups, judged_merges, merge_operations

    matrix = np.random.default_rng(seed).integers(-2, 3, (n, 4)).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-6)
    entries = [("OTHERS", Entry(name=f"oth-{i:03d}", text=f"lesson {i}")) for i in range(n)]
    vectors = {e.text: matrix[i] for i, (_, e) in enumerate(entries)}
    groups = candidate_groups(entries, vectors, floor=0.3, max_group=4)
    members = [i for g in groups for i in g]
    assert len(members) == len(set(members)) and all(2 <= len(g) <= 4 for g in groups)
    judged = CuratorOutput(
        reasoning="r",
        operations=[
            {"type": "MERGE", "source_ids": [f"oth-{i:03d}" for i in ids], "merged_text": "merged"} for ids in answer
        ],
    )
    similar = merge_operations(entries, vectors, 0.9)
    ops, apart, taken = judged_merges(entries, similar, groups, judged if answered else None, 500)
    if not answered:
        assert ops == similar and apart == [] and taken == 0
    sources = [set(op["source_ids"]) for op in ops]
    assert sum(map(len, sources)) == len(set().union(*sources))  # no entry in two merges
    for cluster in similar:  # what similarity joins is always joined
        assert any(set(cluster["source_ids"]) <= s for s in sources)
    group_of = {f"oth-{i:03d}": g for g, shown in enumerate(groups) for i in shown}
    for pair in apart:  # kept apart: shown in one group, and not merged together
        a, b = (f"oth-{int(t.split()[1]):03d}" for t in pair)
        assert group_of[a] == group_of[b] and not any({a, b} <= s for s in sources)


def test_nightly_has_a_model_judge_the_entries_a_run_added() -> None:
    from core.runsummary import RunSummary
    from flows.models.providers import ProviderSpec
    from flows.run.consolidation import needs_consolidation

    model = ProviderSpec(kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5")
    rules = ProviderSpec(kind="heuristic", reflector_model="rules", curator_model="rules")
    quiet = {"duplicate_rate": 0.0, "budget_entries": 0.5, "budget_tokens": 0.5}
    added = RunSummary(run_id="r", kind="nightly", ops={"ADD": {"applied": 2}}, quality=quiet)
    nothing = RunSummary(run_id="r", kind="nightly", ops={"ADD": {"skipped": 3}}, quality=quiet)
    settings = Workspace.of(Settings())
    assert (
        needs_consolidation(settings, added, model) == "2 new entries for the model to judge against their neighbours"
    )
    assert needs_consolidation(settings, added, rules) is None  # no model: only the duplicate rate and the budget
    assert needs_consolidation(settings, nothing, model) is None
    assert (
        needs_consolidation(Workspace.of(settings.settings.model_copy(update={"near_duplicates": "off"})), added, model)
        is None
    )


def _seeded(db: Path) -> list[str]:
    """A store of the sample project's sessions and a playbook of paraphrases of a few lessons (near pairs by word
    stems), as imported: the texts, in order (entries oth-001...)."""
    from core.store.registry import ensure_playbook
    from core.store.versions import write_version

    seeded = [t for group in LESSONS[:6] for t in group]
    with open_db(db) as con:
        ingest(con, [SAMPLES / "claude-code-log" / "-Users-dain-workspace-claude-code-log-sample"])
        ensure_playbook(con, "default")
        entries = [Entry(name=f"oth-{i + 1:03d}", text=t) for i, t in enumerate(seeded)]
        write_version(con, "default", Playbook(sections={"OTHERS": entries}), source="import")
    return seeded


def test_a_run_brings_the_kept_pair_count_up_to_date_to_the_count_of_every_pair(tmp_path: Path) -> None:
    from core.consolidate import texts_digest
    from core.store.embeddings import kept_pair_count
    from core.store.versions import load_version

    db = tmp_path / "k.duckdb"
    _seeded(db)  # some of whose near pairs the runs delete
    path = _replay(
        tmp_path,
        "a finding",
        [
            [{"type": "ADD", "text": LESSONS[20][0]}],
            [{"type": "DELETE", "target_id": "oth-001", "reason": "r"}, {"type": "ADD", "text": LESSONS[25][0]}],
        ],
    )
    ws = Workspace.of(
        Settings(db=db, out_dir=tmp_path / "out", epoch_size=1, min_messages=1, near_duplicates="lexical")
    )
    lexical = Lexical()
    rates = []
    for _ in SESSIONS:  # one session a run, in the order they are pending
        with open_db(db) as con:
            start = [e.text for _, e in load_version(con, "default").entries()]
            kept = kept_pair_count(con, "default", lexical.name, lexical.threshold, texts_digest(start))
        run = run_curation(ws, "default", ws.provider(f"replay:{path}"), chosen=SessionFilter(limit=1))
        assert run.sessions_applied == 1
        with open_db(db) as con:
            live = [e for _, e in load_version(con, "default").entries()]
        vectors = dict(zip([e.text for e in live], lexical.embed([e.text for e in live]), strict=True))
        assert run.quality["duplicate_rate"] == near_pairs(live, vectors, lexical.threshold) / len(live)
        rates.append((kept, run.quality["duplicate_rate"]))
    # The first run counted every pair (nothing kept yet); the second started from what the first kept.
    assert rates[0][0] is None and rates[1][0] is not None and rates[1][1] > 0


@pytest.mark.slow
def test_a_wording_merged_away_by_an_earlier_epoch_of_the_run_is_a_rediscovery(tmp_path: Path) -> None:
    """The run keeps the merged wordings between its epochs and reads them again once an epoch merged."""
    db = tmp_path / "m.duckdb"
    start = datetime(2026, 4, 1, 9, tzinfo=UTC)
    ids = [f"m{i}" for i in range(3)]
    for i, sid in enumerate(ids):
        claude_session(tmp_path / "t" / f"{sid}.jsonl", sid, start + timedelta(hours=i), [("user", f"task {i}")])
    with open_db(db) as con:
        ingest(con, [tmp_path / "t"])
    first, second, merged = LESSONS[3][0], LESSONS[20][0], LESSONS[5][0]
    answers = [
        [{"type": "ADD", "text": first, "section": "OTHERS"}, {"type": "ADD", "text": second, "section": "OTHERS"}],
        [{"type": "MERGE", "source_ids": ["oth-001", "oth-002"], "merged_text": merged}],
        [{"type": "ADD", "text": first, "section": "OTHERS"}],  # a wording the merge took away
    ]
    path = tmp_path / "replay.jsonl"
    path.write_text(
        "".join(
            json.dumps({"session_id": sid, "step": "reflector", "text": json.dumps({"analysis": "a"})})
            + "\n"
            + json.dumps(
                {"session_id": sid, "step": "curator", "text": json.dumps({"reasoning": "r", "operations": a})}
            )
            + "\n"
            for sid, a in zip(ids, answers, strict=True)
        )
    )
    ws = Workspace.of(
        Settings(db=db, out_dir=tmp_path / "out", epoch_size=1, min_messages=1, near_duplicates="lexical")
    )
    run = run_curation(ws, "default", ws.provider(f"replay:{path}"))
    assert run.sessions_applied == 3 and run.epochs == 3
    with open_db(db) as con:
        ops = con.execute(
            "SELECT session_id, type, status, code, entry_id FROM operations ORDER BY version, idx"
        ).fetchall()
        live = con.execute("SELECT name, text FROM entries WHERE valid_to IS NULL").fetchall()
    assert ops[:3] == [
        ("m0", "ADD", "applied", None, "oth-001"),
        ("m0", "ADD", "applied", None, "oth-002"),
        ("m1", "MERGE", "applied", None, ops[2][4]),
    ]
    assert ops[3] == ("m2", "ADD", "skipped", "near_duplicate", ops[2][4])  # merged into the MERGE's entry
    assert live == [(ops[2][4], merged)]


def test_an_epochs_finder_stores_every_vector_at_once_and_reads_them_when_first_asked(tmp_path: Path) -> None:
    from core.operations import live_texts
    from core.store.embeddings import vectors_for
    from flows.run.near import near_duplicates
    from flows.run.run_state import RunMemo, StepResult

    ws = Workspace.of(Settings(db=tmp_path / "f.duckdb", out_dir=tmp_path / "out", near_duplicates="lexical"))
    config = ws.run_config("default", ws.provider("heuristic"))
    similarity = config.similarity()
    assert similarity is not None
    playbook = Playbook(sections={"OTHERS": [Entry(name=f"oth-{i + 1:03d}", text=LESSONS[i][0]) for i in range(6)]})
    proposed = CuratorOutput(reasoning="r", operations=[{"type": "ADD", "text": LESSONS[20][0]}])
    memo = RunMemo()
    with open_db(ws.settings.db) as con:
        near = near_duplicates(
            con, config, memo, playbook, [StepResult[CuratorOutput](session_id="s", output=proposed)]
        )
        stored = con.execute("SELECT count(*) FROM text_embeddings").fetchone()
        # Every live and proposed text's vector stored as the epoch starts (as before), none of the live texts' read
        # back yet; the proposal's, computed for it, kept as stored (not read back when asked).
        held = memo.vectors.get(similarity[0].name, {})
        assert stored == (7,) and list(held) == [LESSONS[20][0]]
        read = vectors_for(con, similarity[0], [LESSONS[20][0]])[LESSONS[20][0]]
        assert read.dtype == held[LESSONS[20][0]].dtype and np.array_equal(read, held[LESSONS[20][0]])
        assert near is not None
        found = near(LESSONS[2][1], live_texts(playbook))
        assert set(held) == {LESSONS[i][0] for i in range(6)} | {LESSONS[20][0], LESSONS[2][1]}
    fresh = near_finder(similarity[0], {}, similarity[1])(LESSONS[2][1], live_texts(playbook))
    assert found == fresh and found is not None and found[0] == LESSONS[2][0]


def test_a_run_that_changes_no_counted_text_reports_the_kept_count(tmp_path: Path) -> None:
    from core.store.versions import load_version

    db = tmp_path / "u.duckdb"
    seeded = _seeded(db)
    # the second session: a lesson the playbook has word for word, a rediscovery, no text changes
    path = _replay(
        tmp_path, "a finding", [[{"type": "ADD", "text": LESSONS[20][0]}], [{"type": "ADD", "text": seeded[0]}]]
    )
    ws = Workspace.of(
        Settings(db=db, out_dir=tmp_path / "out", epoch_size=1, min_messages=1, near_duplicates="lexical")
    )
    lexical = Lexical()
    rates = []
    for _ in SESSIONS:
        run = run_curation(ws, "default", ws.provider(f"replay:{path}"), chosen=SessionFilter(limit=1))
        with open_db(db) as con:
            live = [e for _, e in load_version(con, "default").entries()]
            kept = con.execute("SELECT texts, pairs FROM near_pair_counts").fetchall()
        vectors = dict(zip([e.text for e in live], lexical.embed([e.text for e in live]), strict=True))
        pairs = near_pairs(live, vectors, lexical.threshold)
        assert pairs > 0 and run.quality["duplicate_rate"] == pairs / len(live)
        rates.append((run.ops_skipped, kept))
    assert rates[0][0] == 0 and rates[1][0] == 1 and rates[1][1] == rates[0][1]  # the same texts, the same count
