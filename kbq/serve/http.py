"""The HTTP connection layer of `kbq serve`: uvicorn's httptools protocol with bounds.

uvicorn bounds neither the size nor the time of a request head: a 150 MB header blocked the
event loop for 24 s, and 1,100 half-sent requests made /health fail. Here every connection:

* must send a complete request head within `head_timeout` seconds (else 408, closed), and in at
  most `max_head_bytes` bytes (else 431, closed); then its body within `body_timeout` seconds
  (else 408, closed), whichever route reads it;
* counts as a slow client while its head is incomplete; past `max_slow_clients` of those, the
  oldest is closed, so a well-formed request (a load balancer's /health: one packet) gets in;
* is dropped when it reads nothing of a response for `send_timeout` seconds (a client that never
  reads would otherwise keep the whole answer in memory).

Request bodies are bounded in size by the routes (kbq.serve.sparql.read_body).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


@dataclass(frozen=True)
class ConnectionLimits:
    max_head_bytes: int = 64 * 1024
    head_timeout: float = 10.0
    body_timeout: float = 30.0
    send_timeout: float = 30.0
    max_slow_clients: int = 256


def _reply_and_close(transport: asyncio.Transport, status: int, reason: str, message: str) -> None:
    body = (message + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    if not transport.is_closing():
        transport.write(head + body)  # uvloop's transports are not asyncio.WriteTransport instances
    transport.close()


def protocol_class(limits: ConnectionLimits) -> type[HttpToolsProtocol]:
    """An httptools protocol class bound to `limits` (uvicorn creates one per connection).

    Connections waiting for a request head, and those whose body is still arriving, are kept in
    two dicts, oldest first (when each began to wait); one timer per second closes those past
    their timeout, so a request costs a few dict operations, not a timer of its own."""
    slow: dict[BoundedProtocol, float] = {}
    bodies: dict[BoundedProtocol, float] = {}
    sweeper: list[asyncio.TimerHandle] = []
    tick = min(1.0, limits.head_timeout / 2, limits.body_timeout / 2)

    def sweep(loop: asyncio.AbstractEventLoop) -> None:
        sweeper.clear()
        now = loop.time()
        for waiting, timeout, what in ((slow, limits.head_timeout, "head"), (bodies, limits.body_timeout, "body")):
            while waiting:
                oldest, since = next(iter(waiting.items()))
                if since > now - timeout:
                    break
                oldest._drop(408, "Request Timeout", f"the request {what} did not arrive within {timeout:g} s")
        if slow or bodies:
            sweeper.append(loop.call_later(tick, sweep, loop))

    def arm(loop: asyncio.AbstractEventLoop) -> None:
        if not sweeper:
            sweeper.append(loop.call_later(tick, sweep, loop))

    class BoundedProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._head_bytes = 0
            self._send_timer: asyncio.TimerHandle | None = None

        # A request head is expected: at the start and after each response.
        def _expect_head(self) -> None:
            self._head_bytes = 0
            slow.pop(self, None)
            slow[self] = self.loop.time()
            if len(slow) > limits.max_slow_clients:
                oldest = next(iter(slow))
                oldest._drop(408, "Request Timeout", "too many slow clients: this connection was the slowest")
            arm(self.loop)

        def _drop(self, status: int, reason: str, message: str) -> None:
            slow.pop(self, None)
            bodies.pop(self, None)
            if self.transport is not None and not self.transport.is_closing():
                _reply_and_close(self.transport, status, reason, message)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._expect_head()

        def connection_lost(self, exc: Exception | None) -> None:
            slow.pop(self, None)
            bodies.pop(self, None)
            if self._send_timer is not None:
                self._send_timer.cancel()
                self._send_timer = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self not in slow:
                super().data_received(data)
                return
            self._head_bytes += len(data)
            super().data_received(data)
            if self in slow and self._head_bytes > limits.max_head_bytes:
                self._drop(431, "Request Header Fields Too Large", f"the request head is over {limits.max_head_bytes} bytes")

        def on_headers_complete(self) -> None:
            slow.pop(self, None)
            bodies[self] = self.loop.time()  # until on_message_complete (at once when there is no body)
            arm(self.loop)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            bodies.pop(self, None)
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._expect_head()

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._send_timer is None:
                self._send_timer = self.loop.call_later(limits.send_timeout, self._reader_too_slow)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._send_timer is not None:
                self._send_timer.cancel()
                self._send_timer = None

        def _reader_too_slow(self) -> None:
            self._send_timer = None
            if self.transport is not None:
                self.transport.abort()  # drops the unsent answer, and its memory

    return BoundedProtocol
