"""`request_timeout_s` bounds a whole call: a loopback server that answers one byte a second (its headers, or its
body) is cut at the deadline and the call counts as failed, for the Messages API client (retries included) and
for an OpenAI-compatible server, and a `curate` run ends instead of waiting on it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.llm.base import LLMRequest
from core.llm.claude import AnthropicProvider, make_client
from core.llm.openai_compat import OpenAICompatProvider
from flows.cli import app
from tests.helpers import write_session

REQUEST = LLMRequest(step="reflector", model="m", system="s", user="u", schema_name="ReflectorOutput")
BODY = json.dumps({"choices": [{"message": {"content": "{}"}}]}).encode()


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


class Drip:
    """A loopback HTTP server that reads each request and answers one byte a second: the headers themselves
    (`what = "headers"`) or a whole body behind prompt headers (`"body"`). Counts the requests it got."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.requests = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                self.requests += 1
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(BODY)}\r\n\r\n"
                if self.what == "body":
                    conn.sendall(head.encode())
                    payload = BODY
                else:
                    payload = head.encode() + BODY
                for i in range(len(payload)):
                    if self.stop.is_set():
                        return
                    conn.sendall(payload[i : i + 1])
                    time.sleep(1)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.fixture(params=["headers", "body"])
def drip(request: pytest.FixtureRequest) -> Iterator[Drip]:
    server = Drip(request.param)
    yield server
    server.close()


@pytest.mark.slow
def test_the_messages_api_client_is_cut_at_the_deadline_retries_included(drip: Drip) -> None:
    client = make_client(api_key="k", base_url=drip.url, timeout=2.0, max_retries=4)
    provider = AnthropicProvider(client, deadline_s=2.0)
    started = time.monotonic()
    answer = provider.complete(REQUEST)
    took = time.monotonic() - started
    assert answer.failure == "timeout" and answer.text is None
    assert took < 6, took  # one byte a second for ~150 bytes: 150 s without the deadline (and 5x with retries)
    assert drip.requests == 1  # the retries found the deadline passed and did not ask again


@pytest.mark.slow
def test_an_openai_compatible_server_is_cut_at_the_deadline(drip: Drip) -> None:
    provider = OpenAICompatProvider(drip.url + "/v1", timeout=2.0)
    started = time.monotonic()
    answer = provider.complete(REQUEST)
    assert answer.failure == "timeout" and "within 2 s" in (answer.error or "")
    assert time.monotonic() - started < 6


@pytest.mark.slow
def test_a_run_against_a_drip_fed_server_ends_and_retries_the_session_later(tmp_path: Path) -> None:
    server = Drip("body")
    try:
        db = tmp_path / "p.duckdb"
        write_session(tmp_path / "t" / "s.jsonl", "d1", __import__("datetime").datetime(2026, 5, 1), error=True)
        runner = CliRunner()
        assert runner.invoke(app, ["ingest", str(tmp_path / "t"), "--db", str(db)]).exit_code == 0
        env = {
            "PLAYBOOK_OPENAI_BASE_URL": server.url + "/v1",
            "PLAYBOOK_REQUEST_TIMEOUT_S": "2",
            "PLAYBOOK_MIN_MESSAGES": "1",
            "PLAYBOOK_MAX_RUN_MINUTES": "1",
        }
        started = time.monotonic()
        done = runner.invoke(app, ["curate", "--llm", "openai", "--db", str(db), "--create", "--json"], env=env)
        assert time.monotonic() - started < 60
        assert done.exit_code == 1, done.output  # every session it tried failed: retried next run
        assert "timeout: no whole answer within 2 s" in done.output
    finally:
        server.close()
