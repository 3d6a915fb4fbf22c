"""Past one machine on Prefect itself: with `shard = "playbook"` and a work pool, a nightly ingests into the store and
submits one `curate-playbook` flow run per playbook (the deployment of prefect.yaml, deployed with `prefect
deploy`); two real workers (separate processes, stopped by pid) take them, each playbook is curated into its own
shard, and every model call holds a slot of a Prefect global concurrency limit. The model is an OpenAI-compatible
server on loopback that answers by the session and counts the calls in flight across every process."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import trust_config
from tests.servers import JsonHandler, chat_completion, prefect_server, serving, stop

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).with_name("playbook"))
PREFECT = str(Path(sys.executable).with_name("prefect"))
PLAYBOOKS = ("default", "api", "web")
LIMIT = 2  # the global concurrency limit: at most this many model calls in flight over both workers
pytestmark = pytest.mark.slow


class Model:
    """An OpenAI-compatible `/v1/chat/completions` that answers from the request alone (the same answer in any
    process), slowly enough for calls to overlap, and records how many were in flight at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most = 0
        self.calls = 0
        model = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = self.body()
                with model.lock:
                    model.in_flight += 1
                    model.calls += 1
                    model.most = max(model.most, model.in_flight)
                try:
                    time.sleep(0.4)
                    text = answer(body)
                finally:
                    with model.lock:
                        model.in_flight -= 1
                self.answer(chat_completion(text))

        self.handler = Handler
        self.url = ""


def answer(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    system = str(messages[0]["content"])
    user = str(messages[-1]["content"])
    if system.startswith("You are the Curator"):
        found = re.search(r'"analysis": "Session ([^"]+) ran its checks', user)
        session = found.group(1)[:8] if found else "unknown"
        return json.dumps(
            {
                "reasoning": "r",
                "operations": [{"type": "ADD", "section": "OTHERS", "text": f"Lesson of session {session}."}],
            }
        )
    session = re.search(r"^Session: (\S+)", user, re.MULTILINE)
    return json.dumps(
        {"analysis": f"Session {session.group(1) if session else 'unknown'} ran its checks.", "bullet_tags": []}
    )


@pytest.fixture
def model() -> Iterator[Model]:
    served = Model()
    with serving(served.handler) as url:
        served.url = f"{url}/v1"
        yield served


def config(work: Path, url: str, pool: str | None) -> Path:
    path = work / "playbook.toml"
    lines = [
        f'db = "{work / "p.duckdb"}"',
        f'out_dir = "{work / "out"}"',
        f"playbooks = {json.dumps(list(PLAYBOOKS))}",
        'shard = "playbook"',
        f'openai_base_url = "{url}"',
        "max_input_tokens = 60000",
        "concurrency = 4",
        'near_duplicates = "off"',
    ]
    if pool:
        lines.append(f'work_pool = "{pool}"')
    path.write_text("\n".join(lines) + "\n")
    return trust_config(path)


def environment(work: Path, api: str | None, cfg: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "ANTHROPIC_", "PREFECT_"))}
    env |= {"PLAYBOOK_CONFIG": str(cfg), "PREFECT_HOME": str(work / "prefect-home"), "PLAYBOOK_HOME": str(ROOT)}
    if api:
        env |= {"PREFECT_API_URL": api, "PREFECT_LOGGING_LEVEL": "INFO"}
    return env


def shards(work: Path) -> dict[str, list[tuple[str, str]]]:
    """Each playbook's entries (id, text), read through the CLI."""
    found = {}
    for name in PLAYBOOKS:
        shown = subprocess.run(
            [PLAYBOOK, "show", "-p", name, "--format", "json"],
            env=environment(work, None, work / "playbook.toml"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shown.returncode == 0, shown.stderr
        found[name] = sorted(
            (e["name"], e["text"]) for items in json.loads(shown.stdout)["sections"].values() for e in items
        )
    return found


def prefect(env: dict[str, str], *args: str) -> None:
    """A `prefect` command against the test's server; it must succeed."""
    done = subprocess.run([PREFECT, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def deploy_pool(work: Path, env: dict[str, str], pool: str) -> None:
    """A process work pool and the `curate-playbook` deployment of prefect.yaml on it, as docs/scaling.md says."""
    prefect(env, "--no-prompt", "work-pool", "create", pool, "--type", "process")
    (work / "prefect.yaml").write_text((ROOT / "prefect.yaml").read_text().replace("playbook-local", pool))
    prefect(env, "--no-prompt", "deploy", "--prefect-file", str(work / "prefect.yaml"), "--name", "curate-playbook")


def nightly(work: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """`playbook nightly` of the work folder's samples with the loopback model."""
    return subprocess.run(
        [PLAYBOOK, "nightly", str(work / "samples"), "--llm", "openai", *extra],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture
def own_prefect(tmp_path: Path) -> Iterator[str]:
    """A Prefect server of this test's own: `playbook serve` (tests/flows/test_schedule.py, perhaps running at the
    same time on the shared server) registers a `curate-playbook/curate-playbook` deployment too, and the last
    registration of a name wins, so on a shared server the fan-out's runs could go to that process instead."""
    home = tmp_path / "prefect-server"
    home.mkdir()
    with prefect_server(home) as url:
        yield url


def test_a_nightly_fans_out_over_two_workers_within_one_model_limit(
    tmp_path: Path, own_prefect: str, model: Model
) -> None:
    prefect_api = own_prefect
    pool = f"playbook-pool-{os.getpid()}"
    work = tmp_path / "fanned"
    work.mkdir()
    shutil.copytree(ROOT / "data" / "samples" / "claude-code", work / "samples")
    env = environment(work, prefect_api, config(work, model.url, pool))
    env["PREFECT_WORKER_QUERY_SECONDS"] = "1"  # workers look for runs every second (10 s by default)

    prefect(env, "--no-prompt", "gcl", "create", "model-calls", "--limit", str(LIMIT))
    deploy_pool(work, env, pool)

    workers, logs = [], []
    try:
        for i in (1, 2):
            log = work / f"worker-{i}.log"
            logs.append(log)
            with log.open("wb") as out:
                workers.append(
                    subprocess.Popen(
                        [
                            PREFECT,
                            "worker",
                            "start",
                            "--pool",
                            pool,
                            "--type",
                            "process",
                            "--limit",
                            "1",
                            "--name",
                            f"w{i}",
                        ],
                        env=env,
                        cwd=ROOT,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        done = nightly(work, env, "--json")
        assert done.returncode == 0, done.stderr[-3000:]
        summaries = json.loads(done.stdout)
        assert sorted(s["playbook"] for s in summaries) == sorted(PLAYBOOKS)
        counts = [(s["sessions_applied"], s["sessions_failed"], s["failures"]) for s in summaries]
        assert all(s["sessions_applied"] == 5 and s["sessions_failed"] == 0 for s in summaries), counts
    finally:
        for worker in workers:
            stop(worker)
    # Both workers took flow runs of this nightly (each takes one at a time: `--limit 1`). Both may try to submit
    # the same run; the server lets one have it, and the other logs that it aborted its submission.
    taken = []
    for log in logs:
        text = log.read_text(errors="replace")
        submitted = set(re.findall(r"submitting flow run '([0-9a-f-]{36})'", text))
        taken.append(submitted - set(re.findall(r"Aborted submission of flow run '([0-9a-f-]{36})'", text)))
    assert all(taken) and not (taken[0] & taken[1]) and len(taken[0] | taken[1]) == len(PLAYBOOKS), taken
    # Every playbook has its own shard, and the calls of all of them never exceeded the limit.
    assert all((work / f"p.{name}.duckdb").exists() for name in PLAYBOOKS)
    assert model.calls >= 2 * 5 * len(PLAYBOOKS) and 1 < model.most <= LIMIT, (model.calls, model.most)

    # The same nightly in one process, without Prefect: the same playbooks, shard for shard.
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copytree(ROOT / "data" / "samples" / "claude-code", alone / "samples")
    single = nightly(alone, environment(alone, None, config(alone, model.url, None)), "--json")
    assert single.returncode == 0, single.stderr[-3000:]
    fanned = shards(work)
    assert all(len(v) == 5 for v in fanned.values()) and fanned == shards(alone)
    # `playbook sql` sees the shards as one schema.
    counted = subprocess.run(
        [PLAYBOOK, "sql", "select playbook, count(*) as n from versions group by all order by 1", "--json"],
        env=environment(work, None, work / "playbook.toml"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(counted.stdout) == [{"playbook": p, "n": 6} for p in sorted(PLAYBOOKS)]


def test_a_nightly_on_a_pool_without_workers_ends_in_one_line_within_its_time_limit(
    tmp_path: Path, own_prefect: str, model: Model
) -> None:
    """No worker takes the runs: they stay scheduled, and the nightly gives up at `max_run_minutes` instead of
    waiting for ever, in one line that says what to start; the store it ingested is kept."""
    pool = f"playbook-idle-pool-{os.getpid()}"
    work = tmp_path / "idle"
    work.mkdir()
    (work / "samples").mkdir()
    shutil.copy(ROOT / "data" / "samples" / "claude-code" / "spotter" / "short.jsonl", work / "samples")
    env = environment(work, own_prefect, config(work, model.url, pool)) | {"PLAYBOOK_MAX_RUN_MINUTES": "0.1"}
    deploy_pool(work, env, pool)
    started = time.monotonic()
    done = nightly(work, env)
    assert done.returncode == 1, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: 3 of 3 curation runs on work pool") and f"prefect worker start -p {pool}" in last
    assert "Traceback" not in done.stderr and time.monotonic() - started < 120
    assert model.calls == 0 and (work / "p.duckdb").exists()  # ingested, nothing curated


def test_prefect_deploy_all_from_the_repository_root_registers_every_deployment(
    tmp_path: Path, own_prefect: str
) -> None:
    """The design card's layout: `prefect deploy --all` at the root of a clone finds prefect.yaml and its
    entrypoints, with nothing else to pass (no `--prefect-file`)."""
    env = environment(tmp_path, own_prefect, tmp_path / "playbook.toml")
    prefect(env, "--no-prompt", "work-pool", "create", "playbook-local", "--type", "process")
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    prefect(env, "--no-prompt", "deploy", "--all")
    listed = subprocess.run(
        [PREFECT, "deployment", "ls"],
        env=env | {"COLUMNS": "200"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    for name in ("nightly/nightly", "backfill/backfill", "curate-playbook/curate-playbook"):
        assert name in " ".join(listed.stdout.split()), listed.stdout
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    assert after == before  # deploying wrote nothing into the checkout
