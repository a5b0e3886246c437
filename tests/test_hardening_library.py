"""The library and `kbq sparql` under issue 8: SERVICE refused unless asked, nesting that killed
the process with SIGSEGV, a hostile remote endpoint, and SPARQL with extreme values. Loopback only.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbq.api import KnowledgeBase
from kbq.errors import KbqError, QueryTooComplex, RefusedQuery, SparqlError
from kbq.store.remote import EndpointError, remote_select

ROOT = Path(__file__).resolve().parent.parent
DEEP = "SELECT * WHERE " + "{" * 3000 + "}" * 3000


class Endpoint:
    """A loopback HTTP server answering every request with `reply(handler)`; counts requests."""

    def __init__(self) -> None:
        self.calls = 0
        self.reply: Callable[[http.server.BaseHTTPRequestHandler], None] = lambda h: None
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.calls += 1
                owner.reply(self)

            do_GET = do_POST

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def answer(self, body: bytes, media: str = "application/sparql-results+json", status: int = 200) -> None:
        def reply(h: http.server.BaseHTTPRequestHandler) -> None:
            h.send_response(status)
            h.send_header("Content-Type", media)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

        self.reply = reply


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    found = Endpoint()
    found.answer(b'{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"remote"}}]}}')
    yield found
    found.server.shutdown()
    found.server.server_close()


def kbq(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kbq", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=dict(os.environ)
    )


# --- SERVICE in the library and the command ------------------------------------------------------


def test_the_library_refuses_service_unless_asked(kb: KnowledgeBase, endpoint: Endpoint) -> None:
    prefixed = f"PREFIX : <{endpoint.url.removesuffix('sparql')}> SELECT ?x WHERE {{ SERVICE:sparql {{ ?s ?p ?x }} }}"
    plain = f"SELECT ?x WHERE {{ SERVICE <{endpoint.url}> {{ ?s ?p ?x }} }}"
    for query in (prefixed, plain):
        with pytest.raises(RefusedQuery, match="allow_service=True"):
            kb.sparql(query)
        with pytest.raises(RefusedQuery):
            kb.table(query)
    assert endpoint.calls == 0
    assert kb.sparql(plain, allow_service=True).rows == [["remote"]]  # documented: then it does go out
    assert endpoint.calls == 1


def test_the_command_refuses_service_unless_asked(endpoint: Endpoint) -> None:
    query = f"SELECT ?x WHERE {{ SERVICE <{endpoint.url}> {{ ?s ?p ?x }} }}"
    refused = kbq("sparql", query)
    assert refused.returncode == 2 and "--allow-service" in refused.stderr and endpoint.calls == 0
    allowed = kbq("sparql", "--allow-service", query, "--format", "json")
    assert allowed.returncode == 0 and json.loads(allowed.stdout)["rows"] == [["remote"]] and endpoint.calls == 1


def test_engine_errors_are_typed(kb: KnowledgeBase) -> None:
    """An evaluation error of the engine (here: SERVICE on an unbound variable) is a SparqlError."""
    with pytest.raises(SparqlError, match="SPARQL evaluation failed"):
        kb.table("SELECT * WHERE { SERVICE ?nowhere { ?s ?p ?o } }", allow_service=True)


# --- M6: nesting that killed the process ---------------------------------------------------------


def test_deep_nesting_is_a_clear_error_in_the_library(kb: KnowledgeBase) -> None:
    with pytest.raises(QueryTooComplex, match="deeper than 64 levels"):
        kb.sparql(DEEP)


def test_deep_nesting_never_kills_the_process() -> None:
    """`KnowledgeBase.default().sparql(DEEP)` died with SIGSEGV; `kbq sparql` likewise."""
    code = (
        "import sys; from kbq import KnowledgeBase; from kbq.errors import KbqError\n"
        "try:\n    KnowledgeBase.default().sparql(sys.argv[1])\nexcept KbqError as exc:\n    print(type(exc).__name__)\n"
    )
    library = subprocess.run([sys.executable, "-c", code, DEEP], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert library.returncode == 0 and library.stdout.strip() == "QueryTooComplex", library.stderr[-500:]
    command = kbq("sparql", DEEP)
    assert command.returncode == 2 and "deeper than 64 levels" in command.stderr
    assert command.returncode != -signal.SIGSEGV


# --- a hostile remote endpoint --------------------------------------------------------------------


def test_remote_deep_json_is_an_endpoint_error(endpoint: Endpoint) -> None:
    endpoint.answer(b'{"head": {"vars": []}, "results": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    with pytest.raises(EndpointError, match="nested too deeply"):
        remote_select(endpoint.url, "SELECT * {}")


def test_remote_false_is_not_read_as_true(endpoint: Endpoint) -> None:
    endpoint.answer(b'{"head": {}, "boolean": "false"}')
    with pytest.raises(EndpointError, match="not true or false"):
        remote_select(endpoint.url, "ASK {}")
    endpoint.answer(b'{"head": {}, "boolean": false}')
    assert remote_select(endpoint.url, "ASK {}").rows == [[False]]


@pytest.mark.parametrize(
    "body",
    [
        b"[1]",
        b'{"head": {"vars": "x"}}',
        b'{"head": {"vars": ["x"]}, "results": {"bindings": [1]}}',
        b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": 3}]}}',
    ],
)
def test_remote_json_of_the_wrong_shape(endpoint: Endpoint, body: bytes) -> None:
    endpoint.answer(body)
    with pytest.raises(EndpointError):
        remote_select(endpoint.url, "SELECT * {}")


def test_remote_answers_are_capped_in_size(endpoint: Endpoint) -> None:
    def endless(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/sparql-results+json")
        h.end_headers()
        try:
            for _ in range(4096):  # up to 256 MB, never all read
                h.wfile.write(b" " * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass

    endpoint.reply = endless
    start = time.monotonic()
    with pytest.raises(EndpointError, match="more than 1000000 bytes"):
        remote_select(endpoint.url, "SELECT * {}", max_bytes=1_000_000)
    assert time.monotonic() - start < 10


def test_a_trickling_remote_meets_the_time_limit(endpoint: Endpoint) -> None:
    def trickle(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/sparql-results+json")
        h.end_headers()
        try:
            for _ in range(60):
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass

    endpoint.reply = trickle
    start = time.monotonic()
    with pytest.raises(KbqError, match="time limit"):
        remote_select(endpoint.url, "SELECT * {}", timeout=1)
    assert time.monotonic() - start < 4


def test_remote_redirects_go_to_http_only(endpoint: Endpoint) -> None:
    def redirect(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(302)
        h.send_header("Location", "ftp://127.0.0.1/data")
        h.send_header("Content-Length", "0")
        h.end_headers()

    endpoint.reply = redirect
    with pytest.raises(EndpointError, match="only http"):
        remote_select(endpoint.url, "SELECT * {}")


def test_the_library_over_a_hostile_remote(endpoint: Endpoint) -> None:
    endpoint.answer(b'{"head": {}, "boolean": "false"}')
    with pytest.raises(EndpointError):
        KnowledgeBase.remote(endpoint.url).table("ASK {}")


# --- SPARQL with extreme values -------------------------------------------------------------------

NUMBERS = st.one_of(
    st.integers(min_value=-(10**60), max_value=10**60).map(str),
    st.sampled_from(["1e308", "1e400", "-1e400", "4.9e-324", "0.0", "-0.0", "1" * 5000, "9" * 50 + ".5"]),
)
DATES = st.one_of(
    st.sampled_from(["9999-12-31", "0001-01-01", "-9999-01-01", "99999-01-01", "2020-02-30", "2020-13-01", "0000-00-00"]),
    st.builds(lambda y, m, d: f"{y:04d}-{m:02d}-{d:02d}", st.integers(-99999, 99999), st.integers(0, 13), st.integers(0, 32)),
)
EXPRESSIONS = st.one_of(
    NUMBERS.map(lambda n: n),
    NUMBERS.map(lambda n: f'"{n}"^^<http://www.w3.org/2001/XMLSchema#double>'),
    NUMBERS.map(lambda n: f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'),
    DATES.map(lambda d: f'"{d}"^^<http://www.w3.org/2001/XMLSchema#date>'),
    DATES.map(lambda d: f'"{d}T23:59:60Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'),
    st.sampled_from(['"P99999999999Y"^^<http://www.w3.org/2001/XMLSchema#duration>', "NOW()", "RAND()", '"\\uFFFF"']),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    left=EXPRESSIONS,
    right=EXPRESSIONS,
    op=st.sampled_from(["+", "-", "*", "/", "<", "="]),
    limit=st.one_of(st.none(), st.integers(min_value=0, max_value=10**30)),
    offset=st.one_of(st.none(), st.integers(min_value=0, max_value=10**30)),
)
def test_extreme_values_only_give_a_table_or_a_kbq_error(
    kb: KnowledgeBase, left: str, right: str, op: str, limit: int | None, offset: int | None
) -> None:
    query = f"SELECT ?a ?b ?c (YEAR(?b) AS ?y) WHERE {{ BIND({left} AS ?a) BIND({right} AS ?b) BIND(?a {op} ?b AS ?c) }}"
    query += f" LIMIT {limit}" if limit is not None else ""
    query += f" OFFSET {offset}" if offset is not None else ""
    try:
        table = kb.table(query)
    except KbqError:
        return
    assert table.columns == ["a", "b", "c", "y"] and len(table.rows) <= 1
