"""A whole-call deadline and a size bound for HTTP model calls: `request_timeout_s` bounds the call, not each read,
and an answer is read up to `MAX_ANSWER_BYTES`.

An HTTP client's timeouts are per read: a server that sends one byte a second never trips them, and one call
held a run step for 454 s with `request_timeout_s = 10`. Here a provider opens `call_deadline(seconds)` around a
call; every request made inside it goes through `DeadlineTransport`, which refuses to start after the deadline,
and at the deadline shuts down the socket the request is using (found through httpcore's documented `trace`
hook), so a blocked read returns at once. The SDK's retries then find the deadline passed and fail at once too.

Two answers end the call at once, as a `CallEnded` that says why (its `failure` is the kind to record): one larger
than `MAX_ANSWER_BYTES` once decoded (read no further: a 1.5 GB answer drove the process to 5.9 GB), and an error
whose `retry-after` asks for a longer wait than the call has left (the SDK obeys it: a 429 with `retry-after: 30`
made each call take 30 s under `request_timeout_s = 10`, to fail as a timeout). Once ended, the call's later
requests (the SDK's retries) raise the same `CallEnded` without reaching the server.
"""

from __future__ import annotations

import contextlib
import email.utils
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpx2

from core.errors import TransientError
from core.llm.base import MAX_ANSWER_BYTES, Failure, answer_too_large

__all__ = [
    "CallEnded",
    "DeadlineTransport",
    "asked_wait",
    "call_deadline",
    "call_over",
    "ended_by",
    "past_deadline",
    "remaining",
]

# Headers of the body as it came over the wire; the body handed on is decoded, with a length of its own.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class CallEnded(TransientError):
    """A model call the transport ended on purpose: the message says why, `failure` is its kind. Transient: the
    same call may be answered later (a failed call fails its session without counting against it)."""

    def __init__(self, message: str, failure: Failure) -> None:
        super().__init__(message)
        self.failure: Failure = failure


@dataclass
class _Call:
    deadline: float | None  # `time.monotonic()` by which the call ends; None: no deadline
    ended: CallEnded | None = None  # why the transport ended the call, once it has


_call: ContextVar[_Call | None] = ContextVar("playbook_model_call", default=None)


@contextlib.contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """Requests made in this block (this thread) are one model call: they end by `seconds` from now (None: no
    deadline), and each answer is read up to `MAX_ANSWER_BYTES`."""
    token = _call.set(_Call(None if seconds is None else time.monotonic() + seconds))
    try:
        yield
    finally:
        _call.reset(token)


def remaining() -> float | None:
    """Seconds left before the current call's deadline (negative once past), or None without one."""
    call = _call.get()
    return None if call is None or call.deadline is None else call.deadline - time.monotonic()


def past_deadline() -> bool:
    """True when the current call has a deadline and it has passed."""
    left = remaining()
    return left is not None and left <= 0


def call_over() -> bool:
    """True when the current call can get no answer any more: its deadline passed, or the transport ended it."""
    call = _call.get()
    return call is not None and (call.ended is not None or past_deadline())


def ended_by(exc: BaseException) -> CallEnded | None:
    """The `CallEnded` behind `exc` (itself, or its cause or context: the SDK wraps what a transport raises)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, CallEnded):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def asked_wait(headers: httpx2.Headers) -> float | None:
    """Seconds a response asks the client to wait before it tries again (`retry-after-ms`, or `retry-after` in
    seconds or as an HTTP date, read as the Anthropic SDK reads them), or None when it asks for none."""
    with contextlib.suppress(KeyError, ValueError):
        return float(headers["retry-after-ms"]) / 1000
    said = headers.get("retry-after")
    if said is None:
        return None
    with contextlib.suppress(ValueError):
        return float(said)
    when = email.utils.parsedate_tz(said)
    return None if when is None else float(email.utils.mktime_tz(when) - time.time())


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it, which `close` would not


def _read_at_most(response: httpx2.Response, limit: int) -> bytes | None:
    """The body, decoded, or None once it passes `limit` bytes (then no more of it is read). Decoded bytes are
    what is counted: a gzip body of 16 MB may hold 16 GB."""
    parts: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def _end(call: _Call, ended: CallEnded) -> CallEnded:
    call.ended = ended
    return ended


class DeadlineTransport(httpx2.BaseTransport):
    """An HTTP transport whose requests end by the deadline of the call they belong to (`call_deadline`), each
    answer read whole, up to `MAX_ANSWER_BYTES`.

    Connections are not kept between requests, so each request's socket is its own to shut down; a model call
    lasts seconds, and a new connection costs milliseconds.
    """

    def __init__(self, inner: httpx2.BaseTransport | None = None, *, max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.inner = inner or httpx2.HTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))
        self.max_bytes = max_bytes

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send `request` within the current deadline; its whole body is read here, under the same deadline.

        Raises:
            CallEnded: the call was ended: its answer passed `max_bytes`, or it asked for a wait past the deadline.
            httpx2.ReadTimeout: the deadline passed.
        """
        call = _call.get()
        if call is None:
            # Not a model call: the batch API's requests, whose results (one JSON line per answer, up to
            # hundreds of MB for a whole batch) the SDK reads as a stream, line by line.
            return self.inner.handle_request(request)
        if call.ended is not None:
            raise call.ended
        left = remaining()
        if left is not None and left <= 0:
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

        watchdog = None if left is None else threading.Timer(left, expire)
        if watchdog is not None:
            watchdog.daemon = True
            watchdog.start()
        try:
            response = self.inner.handle_request(request)
            try:
                body = _read_at_most(response, self.max_bytes)
            finally:
                response.close()
        except httpx2.TransportError as exc:
            if past_deadline():
                raise httpx2.ReadTimeout(
                    f"the call's deadline passed ({exc.__class__.__name__} when its socket was shut)", request=request
                ) from exc
            raise
        finally:
            if watchdog is not None:
                watchdog.cancel()
        if past_deadline():
            raise httpx2.ReadTimeout("the call's deadline passed while its answer arrived", request=request)
        if body is None:
            raise _end(call, CallEnded(answer_too_large(f"`{request.url.host}`"), "bad_reply"))
        self._refuse_wait_past_deadline(call, response)
        return httpx2.Response(
            status_code=response.status_code,
            headers=[(k, v) for k, v in response.headers.multi_items() if k.lower() not in _WIRE_HEADERS],
            content=body,
            extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
            request=request,
        )

    @staticmethod
    def _refuse_wait_past_deadline(call: _Call, response: httpx2.Response) -> None:
        """End the call when `response` is an error that asks for a wait the call has no time for: the retry after
        it could not start before the deadline."""
        asked = asked_wait(response.headers) if response.status_code >= 400 else None
        left = remaining()
        if asked is None or left is None or asked <= left:
            return
        raise _end(
            call,
            CallEnded(
                f"rate limited: HTTP {response.status_code} asking for a wait of {asked:g} s before another try,"
                f" past the call's deadline ({max(left, 0):.1f} s left of `request_timeout_s`)",
                "rate_limit",
            ),
        )

    def close(self) -> None:
        """Close the inner transport."""
        self.inner.close()
