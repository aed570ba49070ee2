"""Bounds on one chat request of the ``llm`` answerer: an overall deadline, a reply-size cap, a
requests-per-minute pace and a circuit breaker.

The official ``openai`` client's ``timeout`` is per network read, so a server that trickles one
byte a second holds a request for as long as it likes. :class:`GuardedTransport` wraps the
client's HTTP transport: it reads the reply body chunk by chunk and stops when the request's
deadline has passed (:class:`DeadlineExceeded`, a timeout) or the body outgrew the cap
(:class:`ReplyTooLarge`). The deadline of the request a thread is making is set with
:func:`deadline` around the call (each request runs in one thread from start to end).

>>> b = CircuitBreaker(2)
>>> b.failed(); b.is_open
False
>>> b.failed(); b.is_open
True
>>> b.succeeded(); b.is_open   # an open breaker stays open for the rest of the run
True
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable, Iterator

try:  # the openai client's HTTP library (httpx2 in openai >= 3, httpx before)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older openai
    import httpx  # type: ignore[no-redef]

_local = threading.local()


class DeadlineExceeded(httpx.ReadTimeout):
    """The overall deadline of a request passed while its reply was still arriving."""


class ReplyTooLarge(httpx.ReadError):
    """The reply body is larger than the configured cap."""


@contextlib.contextmanager
def deadline(at: float) -> Iterator[None]:
    """Requests made by this thread inside the block must have their reply by ``time.monotonic() == at``."""
    old = getattr(_local, "deadline", None)
    _local.deadline = at
    try:
        yield
    finally:
        _local.deadline = old


class _GuardedStream(httpx.SyncByteStream):
    def __init__(self, inner: Any, at: float | None, max_bytes: int) -> None:
        self._inner, self._at, self._max = inner, at, max_bytes

    def __iter__(self) -> Iterator[bytes]:
        n = 0
        for chunk in self._inner:
            n += len(chunk)
            if n > self._max:
                raise ReplyTooLarge(f"reply larger than {self._max} bytes")
            if self._at is not None and time.monotonic() > self._at:
                raise DeadlineExceeded("the request's overall deadline passed while the reply was arriving")
            yield chunk

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


class GuardedTransport(httpx.BaseTransport):
    """An HTTP transport whose replies stop at the calling thread's deadline and at ``max_bytes``."""

    def __init__(self, max_bytes: int, inner: Any | None = None) -> None:
        self._inner = inner or httpx.HTTPTransport()
        self.max_bytes = int(max_bytes)

    def handle_request(self, request: Any) -> Any:
        at = getattr(_local, "deadline", None)
        if at is not None and time.monotonic() > at:
            raise DeadlineExceeded("the request's overall deadline passed before it was sent")
        resp = self._inner.handle_request(request)
        return httpx.Response(status_code=resp.status_code, headers=resp.headers,
                              stream=_GuardedStream(resp.stream, at, self.max_bytes), extensions=resp.extensions)

    def close(self) -> None:
        self._inner.close()


class Pace:
    """At most ``per_minute`` request starts a minute, spread evenly (None: no limit); thread-safe."""

    def __init__(self, per_minute: float | None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()
        self._clock, self._sleep = clock, sleep

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self._sleep(start - now)


class CircuitBreaker:
    """Opens after ``after`` consecutive failed requests (0: never); an open breaker stays open."""

    def __init__(self, after: int) -> None:
        self.after = int(after)
        self._run = 0
        self._open = False
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def consecutive_failures(self) -> int:
        return self._run

    def failed(self) -> None:
        with self._lock:
            self._run += 1
            if self.after and self._run >= self.after:
                self._open = True

    def succeeded(self) -> None:
        with self._lock:
            self._run = 0
