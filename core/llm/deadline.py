"""A whole-call deadline for HTTP model calls: `request_timeout_s` bounds the call, not each read.

An HTTP client's timeouts are per read: a server that sends one byte a second never trips them, and one call
held a run step for 454 s with `request_timeout_s = 10`. Here a provider opens `call_deadline(seconds)` around a
call; every request made inside it goes through `DeadlineTransport`, which refuses to start after the deadline,
and at the deadline shuts down the socket the request is using (found through httpcore's documented `trace`
hook), so a blocked read returns at once. The SDK's retries then find the deadline passed and fail at once too.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import httpx2

__all__ = ["DeadlineTransport", "call_deadline", "past_deadline", "remaining"]

_deadline: ContextVar[float | None] = ContextVar("playbook_call_deadline", default=None)


@contextlib.contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """Requests made in this block (this thread) end by `seconds` from now; None: no deadline."""
    token = _deadline.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the current call's deadline (negative once past), or None without one."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def past_deadline() -> bool:
    """True when the current call has a deadline and it has passed."""
    left = remaining()
    return left is not None and left <= 0


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it, which `close` would not


class DeadlineTransport(httpx2.BaseTransport):
    """An HTTP transport whose requests end by the deadline of the call they belong to (`call_deadline`).

    Connections are not kept between requests, so each request's socket is its own to shut down; a model call
    lasts seconds, and a new connection costs milliseconds.
    """

    def __init__(self, inner: httpx2.BaseTransport | None = None) -> None:
        self.inner = inner or httpx2.HTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send `request` within the current deadline; its whole body is read here, under the same deadline."""
        left = remaining()
        if left is None:
            return self.inner.handle_request(request)
        if left <= 0:
            raise httpx2.ReadTimeout("the call's deadline passed before this request", request=request)
        sockets: list[socket.socket] = []
        earlier: Callable[..., Any] | None = request.extensions.get("trace")

        def trace(event: str, info: dict[str, Any]) -> None:
            if event == "connection.connect_tcp.complete":
                stream = info.get("return_value")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if isinstance(sock, socket.socket):
                    sockets.append(sock)
                    if past_deadline():
                        _shutdown(sock)
            if earlier is not None:
                earlier(event, info)

        request.extensions = {**request.extensions, "trace": trace}

        def expire() -> None:
            for sock in sockets:
                _shutdown(sock)

        watchdog = threading.Timer(left, expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            response = self.inner.handle_request(request)
            try:
                body = b"".join(response.iter_raw())
            finally:
                response.close()
        except httpx2.TransportError as exc:
            if past_deadline():
                raise httpx2.ReadTimeout(
                    f"the call's deadline passed ({exc.__class__.__name__} when its socket was shut)", request=request
                ) from exc
            raise
        finally:
            watchdog.cancel()
        if past_deadline():
            raise httpx2.ReadTimeout("the call's deadline passed while its answer arrived", request=request)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            content=body,
            extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
            request=request,
        )

    def close(self) -> None:
        """Close the inner transport."""
        self.inner.close()
