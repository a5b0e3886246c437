"""What every route of `kbq serve` shares: the settings, the worker pool, a response cache."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from starlette.responses import JSONResponse, PlainTextResponse, Response

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


@dataclass
class ServerState:
    config: ServerConfig
    info: SnapshotInfo
    served_graphs: frozenset[str]
    pool: WorkerPool
    cache: ResponseCache = field(init=False)

    def __post_init__(self) -> None:
        self.cache = ResponseCache(self.config.cache_size)


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
