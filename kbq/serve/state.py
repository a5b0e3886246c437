"""What every route of `kbq serve` shares: the settings, the worker pool, a response cache, and
the budget of answer bytes being sent (so clients that do not read cannot pile answers up)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

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
    max_sending_bytes: int = 128 << 20  # all answers being sent at once
    worker_memory_mb: int = 1024  # per worker, on top of what it holds after loading the snapshot
    allowed_hosts: tuple[str, ...] = ()


class ResponseCache:
    """Replies by exact request. The snapshot never changes while the server runs, so an
    answer stays right; only bodies up to `max_body` bytes are kept, least recent out first."""

    def __init__(self, size: int, max_body: int = 1 << 20) -> None:
        self.size, self.max_body = size, max_body
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()

    def get(self, key: Hashable) -> bytes | None:
        body = self._items.get(key)
        if body is not None:
            self._items.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        if self.size <= 0 or len(body) > self.max_body:
            return
        self._items[key] = body
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


class SendBudget:
    """Bytes of answers being sent now; past the limit, new answers are refused with 503."""

    def __init__(self, limit: int) -> None:
        self.limit, self.used = limit, 0

    def take(self, size: int) -> bool:
        if self.used + size > self.limit and self.used > 0:
            return False
        self.used += size
        return True

    def give(self, size: int) -> None:
        self.used = max(0, self.used - size)


class BudgetedResponse(Response):
    """A response whose body counts against the send budget until the client has taken it (or
    was dropped). It is sent in chunks, so a client that does not read holds up the sender (and
    is dropped after the send timeout) instead of a full copy waiting in a socket buffer."""

    CHUNK = 256 * 1024

    def __init__(self, budget: SendBudget, content: bytes, **kwargs: object) -> None:
        super().__init__(content, **kwargs)  # type: ignore[arg-type]
        self.budget, self.size = budget, len(content)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            body, step = self.body, self.CHUNK
            if len(body) <= step:
                await send({"type": "http.response.body", "body": body})
                return
            for start in range(0, len(body), step):
                more = start + step < len(body)
                await send({"type": "http.response.body", "body": body[start : start + step], "more_body": more})
        finally:
            self.budget.give(self.size)


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


def answer(state: ServerState, body: bytes, media_type: str, headers: dict[str, str] | None = None) -> Response:
    """A 200 answer, or 503 while too many answer bytes are still being sent to slow clients."""
    if not state.budget.take(len(body)):
        return failure(
            503,
            f"server busy: {state.budget.used >> 20} MiB of answers are still being sent; try again shortly",
            as_json=media_type == "application/json",
            headers={"Retry-After": "1"},
        )
    return BudgetedResponse(state.budget, body, media_type=media_type, headers=headers)


def failure(
    status: int, message: str, *, as_json: bool, extra: dict[str, object] | None = None, headers: dict[str, str] | None = None
) -> Response:
    """An error response: JSON {error, ...} for /ask, plain text for the SPARQL endpoint."""
    if as_json:
        return JSONResponse({"error": message, **(extra or {})}, status_code=status, headers=headers)
    return PlainTextResponse(message + "\n", status_code=status, headers=headers)


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
