"""`request_timeout_s` bounds a whole call: a loopback server that answers one byte a second (its headers, or its
body) is cut at the deadline and the call counts as failed, for the Messages API client (retries included) and
for an OpenAI-compatible server, and a `curate` run ends instead of waiting on it. A server that asks for a wait
(`retry-after`) past the deadline ends the call at once as rate limited, and an answer is read up to 16 MiB
(decoded), never more, deadline or not."""

from __future__ import annotations

import email.utils
import json
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.llm.base import LLMRequest, LLMResponse
from core.llm.claude import AnthropicProvider, make_client
from core.llm.openai_compat import OpenAICompatProvider
from flows.cli import app
from tests.helpers import message, peak_mib, write_session
from tests.servers import JsonHandler, chat_completion, serving

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
        write_session(tmp_path / "t" / "s.jsonl", "d1", datetime(2026, 5, 1), error=True)
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


class Unruly:
    """A loopback model server (Messages API and OpenAI-compatible) that answers every request one way (`how`):
    `wait`, a 429 with `headers` (`retry-after: 30`) for the first `refusals` requests and a whole answer after
    them; `endless`, a 200 whose body never ends; `bomb`, a gzip body of 64 KiB that decodes to 64 MiB. Counts the
    requests it got."""

    def __init__(self, how: str, headers: dict[str, str] | None = None, refusals: int = 1_000_000) -> None:
        self.how, self.headers, self.refusals = how, headers or {}, refusals
        self.requests = 0
        owner = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                self.body()
                owner.requests += 1
                try:
                    owner.respond(self)
                except OSError:  # the client hung up mid-answer, as a bound on it does
                    pass

        self.handler = Handler

    def respond(self, handler: JsonHandler) -> None:
        chat = handler.path.endswith("/chat/completions")
        if self.how == "wait" and self.requests > self.refusals:
            handler.answer(chat_completion("{}") if chat else message("{}"))
        elif self.how == "wait":
            data = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
            handler.send_response(429)
            for name, value in {"Content-Type": "application/json", **self.headers}.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data.encode())
        elif self.how == "endless":  # HTTP/1.0 with no length: the body lasts until the server closes it
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.end_headers()
            handler.wfile.write(b'{"pad": "')
            chunk = b"x" * (1 << 20)
            while True:
                handler.wfile.write(chunk)
        else:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Encoding", "gzip")
            handler.send_header("Content-Length", str(len(_bomb())))
            handler.end_headers()
            handler.wfile.write(_bomb())


_BOMB: list[bytes] = []


def _bomb() -> bytes:
    """`{"pad": "xxx...` of 64 MiB, gzip-compressed to about 64 KiB (made a MiB at a time, never whole)."""
    if not _BOMB:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip format
        parts = [packer.compress(b'{"pad": "')]
        parts += [packer.compress(b"x" * (1 << 20)) for _ in range(64)]
        _BOMB.append(b"".join([*parts, packer.flush()]))
    return _BOMB[0]


def _provider(kind: str, url: str, deadline: float | None) -> AnthropicProvider | OpenAICompatProvider:
    """The real provider `kind` pointed at `url`: the Anthropic SDK's client (its own retries, 4 of them) or the
    OpenAI-compatible one (whose `timeout` is its deadline)."""
    if kind == "anthropic":
        return AnthropicProvider(
            make_client(api_key="k", base_url=url, timeout=30.0, max_retries=4), deadline_s=deadline
        )
    return OpenAICompatProvider(url + "/v1", timeout=deadline or 30.0)


def _timed(provider: AnthropicProvider | OpenAICompatProvider) -> tuple[LLMResponse, float]:
    started = time.monotonic()
    answer = provider.complete(REQUEST)
    return answer, time.monotonic() - started


ASKING_30_S = {
    "seconds": lambda: {"retry-after": "30"},
    "milliseconds": lambda: {"retry-after-ms": "30000"},
    "date": lambda: {"retry-after": email.utils.formatdate(time.time() + 30, usegmt=True)},
}


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
@pytest.mark.parametrize("asked", sorted(ASKING_30_S))
def test_a_wait_asked_past_the_deadline_ends_the_call_at_once_as_rate_limited(kind: str, asked: str) -> None:
    """The SDK obeys `retry-after`: before this, 30 s a call under a 2 s deadline, to fail as a `timeout`."""
    server = Unruly("wait", ASKING_30_S[asked]())
    with serving(server.handler) as url:
        answer, took = _timed(_provider(kind, url, deadline=2.0))
    assert took < 8, took  # a correctness bound: the call ends by its deadline, here at once
    assert answer.text is None and answer.failure == "rate_limit", answer.error
    assert (answer.error or "").startswith("rate limited: HTTP 429 asking for a wait of ")
    assert "s before another try, past the call's deadline (" in (answer.error or "")
    assert server.requests == 1  # the SDK's retries never reached the server again


def test_a_wait_within_the_deadline_is_still_waited_for() -> None:
    server = Unruly("wait", {"retry-after": "1"}, refusals=1)
    with serving(server.handler) as url:
        answer, took = _timed(_provider("anthropic", url, deadline=10.0))
    assert answer.ok, answer.error
    assert server.requests == 2 and 1 <= took < 8, took


@pytest.mark.parametrize(
    ("kind", "deadline"),
    [("anthropic", 10.0), ("anthropic", None), ("openai", 10.0)],
    ids=["sdk", "sdk-no-deadline", "openai"],
)
@pytest.mark.parametrize("how", ["endless", "bomb"])
def test_an_answer_is_read_up_to_16_mib_and_no_further(kind: str, deadline: float | None, how: str) -> None:
    """A body without end (or a small gzip body that decodes to 64 MiB) fails the call with its reason as soon as
    16 MiB have been read, deadline or not; before, the answer was read whole (400 MB a second over loopback)."""
    server = Unruly(how)
    before = peak_mib()
    with serving(server.handler) as url:
        answer, took = _timed(_provider(kind, url, deadline))
    assert answer.text is None and answer.failure == "bad_reply", answer.error
    assert answer.error == (
        "bad reply: answer larger than 16 MiB from `127.0.0.1`, read no further (an answer of `max_tokens` is a few"
        " hundred KB at most)"
    )
    assert server.requests == 1  # not asked again: the call is over
    assert took < 8, took
    assert peak_mib() - before < 200  # the bound, plus a copy or two of it; never the whole answer


@pytest.mark.slow
def test_a_run_against_a_rate_limited_server_ends_at_once_and_says_why(tmp_path: Path) -> None:
    """`retry-after: 30` under `request_timeout_s = 10`: each call took 30 s and failed as a `timeout`."""
    server = Unruly("wait", {"retry-after": "30"})
    db = tmp_path / "p.duckdb"
    write_session(tmp_path / "t" / "s.jsonl", "r1", datetime(2026, 5, 1), error=True)
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(tmp_path / "t"), "--db", str(db)]).exit_code == 0
    with serving(server.handler) as url:
        env = {
            "ANTHROPIC_API_KEY": "sk-ant-test-0000000000000000",
            "ANTHROPIC_BASE_URL": url,
            "PLAYBOOK_REQUEST_TIMEOUT_S": "10",
            "PLAYBOOK_MIN_MESSAGES": "1",
        }
        started = time.monotonic()
        done = runner.invoke(app, ["curate", "--llm", "anthropic", "--db", str(db), "--create", "--json"], env=env)
        took = time.monotonic() - started
    assert done.exit_code == 1, done.output  # the session failed: tried again by the next run
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "Error: Every session this run attempted failed (1); the first reason: rate limited: HTTP 429 asking for a"
            " wait of 30 s before another try, past the call's deadline ("
        )
    )
    assert took < 20, took
    assert server.requests == 1
