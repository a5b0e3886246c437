"""What every route of `kbq serve` shares: the settings, the worker pool, a response cache, and
the budget of answer bytes being sent (so clients that do not read cannot pile answers up)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from kbq.output import to_json
from kbq.sanitize import clean
from kbq.serve.pool import PoolBusy, QueryTimeout, Reply, WorkerLost, WorkerPool
from kbq.store.snapshot import SnapshotInfo


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    overlays: tuple[str, ...] = ()
    timeout: float = 10.0
    max_query_length: int = 100_000
    max_results: int = 100_000
    max_concurrent: int = 64
    workers: int = 2
    cors_origins: tuple[str, ...] = ()
    cache_size: int = 512
    sandbox: bool = True
    max_response_bytes: int = 32 << 20
    max_sending_bytes: int = 128 << 20  # all answers being sent at once (a client: a quarter)
    send_timeout: float = 30.0  # grace before an answer must be read at min_send_rate
    min_send_rate: int = 256 * 1024  # bytes/s
    worker_memory_mb: int = 1024  # per worker, on top of what it holds after loading the snapshot
    allowed_hosts: tuple[str, ...] = ()
    max_connections: int = 1000


class ResponseCache:
    """Replies by exact request. The snapshot never changes while the server runs, so an
    answer stays right; only bodies up to `max_body` bytes are kept, at most `size` of them and
    `max_total` bytes in all, least recent out first."""

    def __init__(self, size: int, max_body: int = 1 << 20, max_total: int = 64 << 20) -> None:
        self.size, self.max_body, self.max_total = size, max_body, max_total
        self.total = 0
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()

    def get(self, key: Hashable) -> bytes | None:
        body = self._items.get(key)
        if body is not None:
            self._items.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        if self.size <= 0 or len(body) > self.max_body:
            return
        old = self._items.pop(key, None)
        self.total += len(body) - (len(old) if old is not None else 0)
        self._items[key] = body
        while len(self._items) > self.size or self.total > self.max_total:
            _key, dropped = self._items.popitem(last=False)
            self.total -= len(dropped)


class SendBudget:
    """Bytes of answers being sent now, in total and per client address.

    Past the total, or past a client's fair share (`limit // shares`), a new answer is refused
    with 503, so a few slow readers cannot take the whole budget from everyone else (issue 22,
    M-1). Small answers (up to `small` bytes: an ASK, a short table, an error) are always let
    through: their memory is bounded by the connection limit, and the server stays able to answer."""

    def __init__(self, limit: int, *, shares: int = 4, small: int = 64 * 1024) -> None:
        self.limit, self.used = limit, 0
        self.share = max(small, limit // max(1, shares))
        self.small = small
        self.by_client: dict[str, int] = {}

    def take(self, size: int, client: str = "-") -> bool:
        held = self.by_client.get(client, 0)
        if size > self.small and held > 0 and (self.used + size > self.limit or held + size > self.share):
            return False
        self.used += size
        self.by_client[client] = held + size
        return True

    def give(self, size: int, client: str = "-") -> None:
        self.used = max(0, self.used - size)
        left = self.by_client.get(client, 0) - size
        if left > 0:
            self.by_client[client] = left
        else:
            self.by_client.pop(client, None)


class BudgetedResponse(Response):
    """A response whose body counts against the send budget until the client has taken it (or
    was dropped). It is sent in chunks, so a client that does not read holds up the sender (and
    is dropped after the send timeout) instead of a full copy waiting in a socket buffer."""

    CHUNK = 256 * 1024

    def __init__(
        self,
        budget: SendBudget,
        content: bytes,
        *,
        client: str = "-",
        grace: float = 30.0,
        min_rate: int = 256 * 1024,
        **kwargs: object,
    ) -> None:
        super().__init__(content, **kwargs)  # type: ignore[arg-type]
        self.budget, self.size, self.client = budget, len(content), client
        # A reader slower than `min_rate` bytes/s (after `grace` s) holds the budget no longer.
        self.allowed = grace + self.size / min_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            body, step = self.body, self.CHUNK
            if len(body) <= step:
                await send({"type": "http.response.body", "body": body})
                return
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.allowed
            for start in range(0, len(body), step):
                if loop.time() > deadline:
                    raise SlowReader(f"the client read {start} of {self.size} bytes in {self.allowed:.0f} s: dropped")
                more = start + step < len(body)
                await send({"type": "http.response.body", "body": body[start : start + step], "more_body": more})
        finally:
            self.budget.give(self.size, self.client)


class SlowReader(Exception):
    """A client read its answer too slowly: the response is cut (uvicorn closes the connection)."""


@dataclass
class ServerState:
    config: ServerConfig
    info: SnapshotInfo
    served_graphs: frozenset[str]
    pool: WorkerPool
    cache: ResponseCache = field(init=False)
    budget: SendBudget = field(init=False)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cache = ResponseCache(self.config.cache_size)
        self.budget = SendBudget(self.config.max_sending_bytes)


def client_address(request: Request) -> str:
    """The peer's address: the unit of a fair share (behind a proxy, the proxy's)."""
    return request.client.host if request.client else "-"


def answer(
    state: ServerState, body: bytes, media_type: str, headers: dict[str, str] | None = None, *, client: str = "-"
) -> Response:
    """A 200 answer, or 503 while too many answer bytes are still being sent (to all, or to this
    client's address)."""
    if not state.budget.take(len(body), client):
        return failure(
            503,
            f"server busy: {state.budget.used >> 20} MiB of answers are still being sent "
            f"({state.budget.by_client.get(client, 0) >> 20} MiB to you); try again shortly",
            as_json=media_type == "application/json",
            headers={"Retry-After": "1"},
        )
    config = state.config
    return BudgetedResponse(
        state.budget,
        body,
        client=client,
        grace=config.send_timeout,
        min_rate=config.min_send_rate,
        media_type=media_type,
        headers=headers,
    )


def failure(
    status: int, message: str, *, as_json: bool, extra: dict[str, object] | None = None, headers: dict[str, str] | None = None
) -> Response:
    """An error response: JSON {error, ...} for /ask, plain text for the SPARQL endpoint."""
    if as_json:
        return SafeJSONResponse({"error": message, **(extra or {})}, status_code=status, headers=headers)
    return PlainTextResponse(clean(message) + "\n", status_code=status, headers=headers)


class SafeJSONResponse(JSONResponse):
    """Strict JSON (no NaN), control characters as \\u escapes: what kbq.output.to_json writes."""

    def render(self, content: object) -> bytes:
        return to_json(content).encode("utf-8")  # type: ignore[arg-type]


async def run_job(state: ServerState, job: Mapping[str, object], *, as_json: bool) -> Reply | Response:
    """Run a job on the pool; limits become 503 responses (Retry-After when busy)."""
    try:
        return await state.pool.run(job)
    except PoolBusy as exc:
        return failure(503, f"server busy: {exc}; try again shortly", as_json=as_json, headers={"Retry-After": "1"})
    except QueryTimeout as exc:
        return failure(503, str(exc), as_json=as_json)
    except WorkerLost as exc:
        return failure(503, str(exc), as_json=as_json)
