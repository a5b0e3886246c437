"""`kbq serve`: the SPARQL 1.1 endpoint, the kbq language over HTTP, and the web page.

Routes: `/sparql` (kbq.serve.sparql), `/ask?q=` (the answer `kbq --format json` prints),
`/health`, `/docs/language.md` and `/docs/language.html` (the language reference), `/` and `/static/` (the page, served
from kbq/static: no CDN). Queries run in
killable worker processes (kbq.serve.pool); logging is configured in `main()` only.

`/ask` statuses: 200 with the answer; 200 with empty `rows` and a `message` when the
question is well formed but nothing satisfies it (the CLI's "no result", exit 1); 400 with
`{error, column, expected, suggestions, detail}` for a question kbq cannot read; 413 too
long; 503 over the time limit or when busy (with Retry-After).

Every limit (SECURITY.md lists them with their defaults) is a command-line option: query
length, rows and bytes of an answer, time and memory of a query, request head size and time,
body time, slow clients, connections, and the Host names answered.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kbq.errors import KbqError
from kbq.sanitize import clean_line
from kbq.serve.http import ConnectionLimits, SlowClients, protocol_class
from kbq.serve.pool import WorkerPool
from kbq.serve.sparql import ProtocolError, read_body, sparql_endpoint
from kbq.serve.state import SafeJSONResponse, ServerConfig, ServerState, answer, failure, run_job
from kbq.serve.state import client_address as _client
from kbq.store.names import NAMES_GRAPH
from kbq.store.resources import ASSERTED_GRAPH, INFERRED_GRAPH, data_root
from kbq.store.snapshot import SnapshotInfo

STATIC = Path(__file__).resolve().parent / "static"
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
log = logging.getLogger("kbq.serve.app")
access = logging.getLogger("kbq.access")


class AccessLog:
    """ASGI middleware: one line per request with status, size and time taken; and, when
    `allowed_hosts` is given, a 400 for a Host name not in it (DNS rebinding onto loopback, a
    Host reflected in the service description). One layer for both: each costs a request."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...] = ("*",)) -> None:
        self.app = app
        self.hosts = HostCheck(allowed_hosts) if "*" not in allowed_hosts else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status, size = 0, 0

        async def sending(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            refused = self.hosts.refusal(scope) if self.hosts is not None else None
            await (refused if refused is not None else self.app)(scope, receive, sending)
        finally:
            client = scope.get("client") or ("-", 0)
            access.info(
                '%s "%s %s" %d %dB %.1fms',
                clean_line(str(client[0])),
                clean_line(scope["method"]),
                clean_line(scope["path"]),  # decoded: a %0a would forge a log line (issue 22, L-12)
                status,
                size,
                (time.perf_counter() - start) * 1000,
            )


class HostCheck:
    """The Host names a server answers for; values already found allowed are remembered."""

    def __init__(self, allowed: tuple[str, ...]) -> None:
        self.allowed = frozenset(h.lower() for h in allowed)
        self.seen: set[bytes] = set()

    def _allowed(self, raw: bytes) -> bool:
        text = raw.decode("latin-1").strip().lower()
        host = text[1:].split("]", 1)[0] if text.startswith("[") else text.rsplit(":", 1)[0] if text.count(":") == 1 else text
        if host in self.allowed:
            if len(self.seen) < 256:
                self.seen.add(raw)
            return True
        return False

    def refusal(self, scope: Scope) -> Response | None:
        raw = next((value for name, value in scope["headers"] if name == b"host"), b"")
        if raw in self.seen or self._allowed(raw):
            return None
        shown = raw.decode("latin-1")
        return failure(400, f"this server does not answer for the host {shown!r} (see --allowed-host)", as_json=False)


def _json_field(data: dict[str, object], name: str) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else ""]
    if not isinstance(value, str | int | float):
        raise ProtocolError(400, f'"{name}" must be a string')
    return [str(value)]


async def _ask_params(request: Request, limit: int) -> tuple[str | None, bool]:
    params: dict[str, list[str]] = parse_qs(request.url.query, keep_blank_values=True)
    if request.method == "POST":
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        body = await read_body(request, 3 * limit + 4096)
        try:
            text = body.decode("utf-8")
            if media == "application/x-www-form-urlencoded":
                params = parse_qs(text, keep_blank_values=True)
            elif media == "application/json":
                data = json.loads(text)
                if not isinstance(data, dict):
                    raise ProtocolError(400, 'expected a JSON object {"q": "..."}')
                params = {"q": _json_field(data, "q"), "explain": _json_field(data, "explain")}
            elif media == "text/plain":
                params = {"q": [text]}
            else:
                raise ProtocolError(415, "use application/x-www-form-urlencoded, application/json or text/plain")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProtocolError(400, f"cannot read the request body: {exc}") from None
        except RecursionError:
            raise ProtocolError(400, "cannot read the request body: JSON nested too deeply") from None
    questions = params.get("q") or []
    question = questions[0] if questions else None
    if question is not None:
        try:
            question.encode("utf-8")
        except UnicodeEncodeError:
            raise ProtocolError(400, "q is not valid Unicode text (it holds a lone surrogate)") from None
    explain = (params.get("explain") or [""])[0].lower() in ("1", "true", "yes", "on")
    return question, explain


async def ask(request: Request) -> Response:
    """A kbq question -> the same JSON as `kbq --format json QUESTION`."""
    state: ServerState = request.app.state.kbq
    limit = state.config.max_query_length
    try:
        question, explain = await _ask_params(request, limit)
    except ProtocolError as exc:
        return failure(exc.status, exc.message, as_json=True)
    if question is None or not question.strip():
        return failure(400, "missing parameter q (a kbq question, e.g. q=gpu for lstm)", as_json=True)
    if len(question) > limit:
        return failure(413, f"question of {len(question)} characters is over this server's limit of {limit}", as_json=True)
    key = ("ask", question, explain)
    if (cached := state.cache.get(key)) is not None:
        return answer(state, cached, "application/json", client=_client(request))
    reply = await run_job(state, {"op": "ask", "q": question, "explain": explain}, as_json=True)
    if isinstance(reply, Response):
        return reply
    if reply.status != 200:
        error = dict(reply.error or {"error": "query failed"})
        return SafeJSONResponse(error, status_code=reply.status)
    state.cache.put(key, reply.body)
    return answer(state, reply.body, "application/json", client=_client(request))


async def health(request: Request) -> Response:
    """Whether this server can answer a query now, and why not: 200 "ok" while a worker is ready
    or being started after a crash (queries wait for it), and neither the query queue nor the
    connections are full; 503 otherwise, with the reason. Never runs a query itself."""
    state: ServerState = request.app.state.kbq
    pool = state.pool
    slow: SlowClients = request.app.state.slow_clients
    problems = []
    if not pool.started:
        problems.append("starting")
    elif pool.ready == 0 and (pool.failing or not pool.restarting):
        problems.append(f"no query worker can start: {pool.failing or 'none is running'}")
    if pool.pending >= pool.max_pending:
        problems.append(f"{pool.pending} queries running or queued, the limit")
    connections = slow.open
    if connections >= state.config.max_connections:
        problems.append(f"{connections} open connections, the limit")
    body = {
        "status": "ok" if not problems else "unavailable",
        "problems": problems,
        "workers": pool.ready,
        "size": pool.size,
        "restarting": pool.restarting,
        "worker_exits": pool.exits,
        "pending": pool.pending,
        "connections": connections,
        "slow_clients": slow.kinds(),
        "snapshot": state.info.key,
        "triples": state.info.asserted + state.info.inferred,
        "network_sandbox": pool.sandboxed,
        "sending_bytes": state.budget.used,
        "warnings": state.warnings + ([] if pool.sandboxed or not pool.ready else [_sandbox_warning(state.config)]),
    }
    return SafeJSONResponse(body, status_code=200 if not problems else 503, headers={"Cache-Control": "no-store"})


def _sandbox_warning(config: ServerConfig) -> str:
    why = "--no-sandbox was given" if not config.sandbox else "this system refused an empty network namespace"
    return (
        f"network sandbox off ({why}): query workers can reach the network, and only the query guard "
        "stops SERVICE; see SECURITY.md"
    )


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)


async def language(request: Request) -> Response:
    """The language reference (docs/language.md, written by `kbq help --write`), as plain text."""
    path = Path(data_root()) / "docs" / "language.md"
    if not path.is_file():
        return failure(404, "the language reference is not installed (kbq help --all prints it)", as_json=False)
    return FileResponse(path, media_type="text/plain; charset=utf-8", headers=PAGE_HEADERS)


REFERENCE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>kbq language reference</title><link rel="icon" href="data:,"><link rel="stylesheet" href="../static/kbq.css">
</head><body class="reference"><header><p><a href="../">kbq</a> &middot; <a href="language.md">markdown</a></p></header>
<main>{body}</main></body></html>
"""


async def language_html(request: Request) -> Response:
    """The language reference rendered as HTML (markdown-it-py; raw HTML in the markdown is escaped)."""
    path = Path(data_root()) / "docs" / "language.md"
    if not path.is_file():
        return failure(404, "the language reference is not installed (kbq help --all prints it)", as_json=False)
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(path.read_text(encoding="utf-8"))
    return HTMLResponse(REFERENCE_PAGE.format(body=body), headers=PAGE_HEADERS)


def create_app(
    config: ServerConfig,
    info: SnapshotInfo,
    slow_clients: SlowClients | None = None,
    resolve: Callable[[], str] | None = None,
) -> Starlette:
    """The ASGI app; its lifespan starts and stops the worker pool. `slow_clients`: the
    connection layer's registry (for /health); `resolve`: finds the snapshot again when workers
    can no longer open it (a moved or removed cache)."""
    pool = WorkerPool(
        info.path,
        size=config.workers,
        max_pending=config.max_concurrent,
        timeout=config.timeout,
        max_results=config.max_results,
        sandbox=config.sandbox,
        max_bytes=config.max_response_bytes,
        memory_mb=config.worker_memory_mb,
        resolve=resolve,
    )
    state = ServerState(
        config=config, info=info, served_graphs=frozenset({ASSERTED_GRAPH, INFERRED_GRAPH, NAMES_GRAPH}), pool=pool
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await pool.start()
        log.info("kbq serve: %d workers ready (network sandbox: %s)", pool.ready, "on" if pool.sandboxed else "off")
        if not pool.sandboxed:
            log.warning("kbq serve: %s", _sandbox_warning(config))
        try:
            yield
        finally:
            await pool.close()

    middleware = [Middleware(AccessLog, allowed_hosts=config.allowed_hosts or ("*",))]
    if config.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(config.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["Accept", "Content-Type"],
                max_age=600,
            )
        )
    routes = [
        Route("/", index, methods=["GET"]),
        Route("/sparql", sparql_endpoint, methods=["GET", "POST"]),
        Route("/ask", ask, methods=["GET", "POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/docs/language.md", language, methods=["GET"]),
        Route("/docs/language.html", language_html, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.kbq = state
    app.state.slow_clients = slow_clients or SlowClients()
    return app


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kbq serve", description="Serve the KB: SPARQL 1.1 endpoint, /ask and a web page.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--kb", action="append", default=[], metavar="FILE", help="a Turtle overlay (repeatable)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds a query may run before it is stopped (default 10)")
    p.add_argument("--max-query-length", type=int, default=100_000, metavar="N", help="characters (default 100000)")
    p.add_argument("--max-results", type=int, default=100_000, metavar="N", help="rows or triples (default 100000)")
    p.add_argument("--max-concurrent", type=int, default=64, metavar="N", help="queries running or queued (default 64)")
    p.add_argument(
        "--workers",
        type=int,
        default=max(2, min(8, os.cpu_count() or 2)),
        metavar="N",
        help="query worker processes (default: CPUs, 2 to 8)",
    )
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN", help="allow this origin (repeatable)")
    p.add_argument("--cache-size", type=int, default=512, metavar="N", help="answers kept in memory (0: none)")
    p.add_argument("--no-sandbox", action="store_true", help="do not put workers in an empty network namespace")
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="answer requests for this Host name (repeatable; default: the loopback names when bound to loopback, "
        "else any; '*' for any)",
    )
    p.add_argument("--max-response-bytes", type=int, default=32 << 20, metavar="N", help="bytes of one answer (default 32 MiB)")
    p.add_argument(
        "--worker-memory", type=int, default=1024, metavar="MB", help="memory a query may use in its worker (default 1024 MB)"
    )
    p.add_argument("--max-header-bytes", type=int, default=64 * 1024, metavar="N", help="bytes of a request head (default 65536)")
    p.add_argument("--header-timeout", type=float, default=10.0, metavar="S", help="seconds to send a request head (default 10)")
    p.add_argument("--body-timeout", type=float, default=30.0, metavar="S", help="seconds to send a request body (default 30)")
    p.add_argument(
        "--send-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a client may read nothing of an answer (default 30)",
    )
    p.add_argument(
        "--max-slow-clients",
        type=int,
        default=256,
        metavar="N",
        help="connections still sending their request head; past it the slowest is closed (default 256)",
    )
    p.add_argument("--max-connections", type=int, default=1000, metavar="N", help="open connections (default 1000)")
    p.add_argument(
        "--min-send-rate",
        type=int,
        default=256 * 1024,
        metavar="BYTES",
        help="bytes/s a client must read an answer at, after --send-timeout (default 262144)",
    )
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p


class _OneLineFormatter(logging.Formatter):
    """Each log message on one line with its control characters escaped, whatever it quotes (a
    path, a question, a file name): no forged lines, nothing a terminal obeys (issue 22, L-12)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = clean_line(record.message)
        return super().formatMessage(record)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted (Ctrl-C or SIGTERM)."""
    import uvicorn

    from kbq.build import pipeline

    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.setFormatter(_OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    config = ServerConfig(
        host=args.host,
        port=args.port,
        overlays=tuple(args.kb),
        timeout=args.timeout,
        max_query_length=args.max_query_length,
        max_results=args.max_results,
        max_concurrent=args.max_concurrent,
        workers=max(1, args.workers),
        cors_origins=tuple(args.cors_origin),
        cache_size=args.cache_size,
        sandbox=not args.no_sandbox,
        max_response_bytes=args.max_response_bytes,
        max_sending_bytes=4 * args.max_response_bytes,
        worker_memory_mb=args.worker_memory,
        allowed_hosts=_allowed_hosts(args.host, args.allowed_host),
        max_connections=args.max_connections,
        send_timeout=args.send_timeout,
        min_send_rate=args.min_send_rate,
    )
    try:
        store, info = pipeline.ensure(
            [Path(p) for p in args.kb], engine=os.environ.get("KBQ_ENGINE", "sparql"), progress=log.info, verify=True
        )
    except KbqError as exc:
        log.error("kbq serve: %s", exc)
        return exc.exit_code
    del store  # the workers open it read-only (this process keeps its lock: a rebuild will not remove it)
    _raise_open_file_limit()
    if not _is_loopback(args.host):
        log.warning("kbq serve: listening on %s, reachable from other machines", args.host)
    log.info("kbq serve: http://%s:%d/ (SPARQL at /sparql, timeout %g s)", args.host, args.port, args.timeout)
    # On SIGTERM/Ctrl-C, requests still running after 5 s are cancelled (their workers killed).
    limits = ConnectionLimits(
        max_head_bytes=args.max_header_bytes,
        head_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        send_timeout=args.send_timeout,
        max_slow_clients=args.max_slow_clients,
        max_body_bytes=3 * args.max_query_length + 4096 + 16 * 1024,
    )
    slow_clients = SlowClients()

    def resolve() -> str:
        """The snapshot for these overlays now: found again in the cache, or rebuilt there by a
        `kbq build` child (a build in this process would hold the event loop up)."""
        import subprocess
        import sys

        from kbq.store import snapshot

        engine = os.environ.get("KBQ_ENGINE", "reasonable")
        if snapshot.problem(snapshot.snapshot_path(args.kb, engine), verify=True) is not None:
            log.warning("kbq serve: the snapshot is gone or damaged; rebuilding it in %s", snapshot.cache_root())
            overlays = [flag for path in args.kb for flag in ("--kb", path)]
            subprocess.run(
                [sys.executable, "-m", "kbq", "build", "--engine", engine, *overlays],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=float(os.environ.get("KBQ_BUILD_TIMEOUT", "900")) + 60,
                check=False,
            )
        _store, found = pipeline.ensure([Path(p) for p in args.kb], engine=engine, progress=log.info, verify=True)
        return found.path

    uvicorn.run(
        create_app(config, info, slow_clients, resolve),
        host=args.host,
        port=args.port,
        http=protocol_class(limits, slow_clients),
        limit_concurrency=args.max_connections,
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    return 0


def _allowed_hosts(bind: str, given: list[str]) -> tuple[str, ...]:
    if given:
        return tuple(given)
    if _is_loopback(bind):
        return ("127.0.0.1", "localhost", "::1", bind)
    return ("*",)


def _raise_open_file_limit() -> None:
    """Slow clients each hold a socket: use every descriptor the system allows this process."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    except (ImportError, ValueError, OSError):
        pass
