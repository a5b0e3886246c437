"""The HTTP connection layer of `kbq serve`: uvicorn's httptools protocol with bounds.

uvicorn bounds neither the size nor the time of a request head, nor the bytes of a chunked body's
trailers and chunk extensions: a 150 MB header blocked the event loop for 24 s, a 180 MB trailer
for 30 s, and 1,100 half-sent requests made /health fail. Here every part of every request is
bounded in bytes and time, and every kind of slow peer is capped together:

* the head: at most `max_head_bytes` bytes (else 431, closed), within `head_timeout` s (else 408);
* everything after the head (body, chunk sizes and extensions, trailers): at most
  `max_body_bytes` bytes counted as they arrive, before the parser sees them (else 413, closed),
  within `body_timeout` s (else 408, closed);
* the answer: a client that reads nothing of it for `send_timeout` s is dropped (its unsent
  answer and memory with it); one that reads it slower than `min_send_rate` bytes/s after that
  grace is cut off by kbq.serve.state.BudgetedResponse;
* a connection waiting on its peer (head or body not all here, or an answer it does not read
  fast enough to keep the socket writable) is a slow client; past `max_slow_clients` of them,
  whatever their kind, the one waiting longest is closed, so a well-formed request (a load
  balancer's /health: one packet) always gets in.

This subclasses a private uvicorn class (its httptools protocol): pyproject.toml pins uvicorn
below its next minor version, and tests/test_hardening_server.py checks each bound end to end.
Exposed to the internet, run it behind a reverse proxy that buffers requests and answers
(SECURITY.md, "Deployment").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# The private surface this module relies on (checked once, so an incompatible uvicorn fails at
# start, naming what is missing, instead of silently serving without bounds).
_HOOKS = ("data_received", "on_headers_complete", "on_message_complete", "on_response_complete", "pause_writing")
_MISSING = [name for name in _HOOKS if not callable(getattr(HttpToolsProtocol, name, None))]
if _MISSING:
    raise ImportError(f"this uvicorn's HttpToolsProtocol lacks {', '.join(_MISSING)}: kbq serve needs uvicorn <0.55")


@dataclass(frozen=True)
class ConnectionLimits:
    max_head_bytes: int = 64 * 1024
    head_timeout: float = 10.0
    body_timeout: float = 30.0
    send_timeout: float = 30.0
    max_slow_clients: int = 256
    max_body_bytes: int = 3 * 100_000 + 4096 + 16 * 1024  # the routes' body limit + chunk framing and trailers


class SlowClients:
    """Connections waiting on their peer, oldest first, whatever they wait for (a head, a body,
    a reader): one registry, one cap. Read by /health."""

    def __init__(self) -> None:
        self.waiting: dict[Any, tuple[float, str]] = {}  # protocol -> (since, what)
        self.open = 0  # connections open now

    def __len__(self) -> int:
        return len(self.waiting)

    def kinds(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _since, what in self.waiting.values():
            counts[what] = counts.get(what, 0) + 1
        return counts


def _reply_and_close(transport: asyncio.Transport, status: int, reason: str, message: str) -> None:
    body = (message + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    if not transport.is_closing():
        transport.write(head + body)  # uvloop's transports are not asyncio.WriteTransport instances
    transport.close()


def protocol_class(limits: ConnectionLimits, registry: SlowClients | None = None) -> type[HttpToolsProtocol]:
    """An httptools protocol class bound to `limits` (uvicorn creates one per connection).

    Connections waiting on their peer are kept in one dict, oldest first (when each began to
    wait), with what they wait for; one timer per second closes those past their timeout, so a
    request costs a few dict operations, not a timer of its own."""
    clients = registry if registry is not None else SlowClients()
    slow = clients.waiting
    sweeper: list[asyncio.TimerHandle] = []
    tick = min(1.0, limits.head_timeout / 2, limits.body_timeout / 2, limits.send_timeout / 2)
    timeouts = {"head": limits.head_timeout, "body": limits.body_timeout, "reader": limits.send_timeout}

    def sweep(loop: asyncio.AbstractEventLoop) -> None:
        sweeper.clear()
        now = loop.time()
        for protocol, (since, what) in list(slow.items()):
            if what == "reader":
                protocol._check_reader(now)
            elif since <= now - timeouts[what]:
                protocol._drop(408, "Request Timeout", f"the request {what} did not arrive within {timeouts[what]:g} s")
        if slow:
            sweeper.append(loop.call_later(tick, sweep, loop))

    def arm(loop: asyncio.AbstractEventLoop) -> None:
        if not sweeper:
            sweeper.append(loop.call_later(tick, sweep, loop))

    class BoundedProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._head_bytes = 0
            self._body_bytes = 0
            self._phase = "head"
            self._paused_since = 0.0

        def _wait(self, what: str) -> None:
            """Wait on the peer for `what`: the newest slow client; past the cap the oldest goes."""
            slow.pop(self, None)
            slow[self] = (self.loop.time(), what)
            if len(slow) > limits.max_slow_clients:
                oldest = next(iter(slow))
                oldest._drop(408, "Request Timeout", "too many slow clients: this connection waited longest")
            arm(self.loop)

        # A request head is expected: at the start and after each response.
        def _expect_head(self) -> None:
            self._head_bytes = self._body_bytes = 0
            self._phase = "head"
            self._wait("head")

        def _drop(self, status: int, reason: str, message: str) -> None:
            slow.pop(self, None)
            if self.transport is None or self.transport.is_closing():
                return
            if self._phase == "answer":
                self.transport.abort()  # a response is under way: no second status line
            else:
                _reply_and_close(self.transport, status, reason, message)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            clients.open += 1
            self._expect_head()

        def connection_lost(self, exc: Exception | None) -> None:
            slow.pop(self, None)
            clients.open -= 1
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._phase != "body":  # a head, or a pipelined next head while answering
                self._head_bytes += len(data)
                super().data_received(data)
                if self._phase != "body" and self._head_bytes > limits.max_head_bytes:
                    self._drop(431, "Request Header Fields Too Large", f"the request head is over {limits.max_head_bytes} bytes")
                return
            # Body, chunk framing and trailers: counted before the parser sees them (httptools
            # gathers a trailer by concatenation: unbounded, it blocked the event loop).
            self._body_bytes += len(data)
            if self._phase == "body" and self._body_bytes > limits.max_body_bytes:
                self._drop(413, "Content Too Large", f"the request body is over {limits.max_body_bytes} bytes")
                return
            super().data_received(data)

        def on_headers_complete(self) -> None:
            self._phase = "body"
            self._body_bytes = 0
            self._wait("body")  # until on_message_complete (at once when there is no body)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            if self._phase == "body":
                slow.pop(self, None)
                self._phase = "answer"
                self._head_bytes = 0
            super().on_message_complete()

        def on_response_complete(self) -> None:
            if self._phase == "body":  # answered before its body was all here (a 413): the rest is no head
                slow.pop(self, None)
                self.transport.close()
                return
            super().on_response_complete()
            if not self.transport.is_closing():
                self._expect_head()

        def pause_writing(self) -> None:
            """The client reads slower than we write: a slow client until it catches up."""
            super().pause_writing()
            self._paused_since = self.loop.time()
            self._wait("reader")

        def resume_writing(self) -> None:
            super().resume_writing()
            if slow.get(self, (0.0, ""))[1] == "reader":
                slow.pop(self, None)

        def _check_reader(self, now: float) -> None:
            """Dropped when it read nothing for send_timeout (the answer's own rate: BudgetedResponse)."""
            if now - self._paused_since > limits.send_timeout:
                self._drop(408, "Request Timeout", "the client does not read its answer")

    return BoundedProtocol
