"""The issue 8 attacks on a real `kbq serve` on 127.0.0.1, each with /health polled meanwhile.

`tight` runs without the network sandbox and with small limits, so each attack is quick:
1 MB answers, 2 s to send a head, a body or to read an answer, 16 KiB heads, 32 slow clients,
300 MB per query. /health must answer within 1 s during every attack, and no process may die
(but a worker that runs out of memory, which is replaced).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote_plus

import httpx
import pytest
from conftest import TINY_KB
from server_helpers import ServerProcess, children, kbq_env, shared_kbq, start_kbq

pytestmark = pytest.mark.server
TIGHT = (
    "--no-sandbox",
    "--workers",
    "2",
    "--timeout",
    "8",
    "--max-response-bytes",
    "1000000",
    "--worker-memory",
    "300",
    "--header-timeout",
    "2",
    "--body-timeout",
    "2",
    "--send-timeout",
    "2",
    "--max-header-bytes",
    "16384",
    "--max-slow-clients",
    "32",
    "--cache-size",
    "0",
)


@pytest.fixture(scope="module")
def tight() -> ServerProcess:
    return shared_kbq(*TIGHT)


@pytest.fixture(scope="module")
def default() -> ServerProcess:
    return shared_kbq()


class HealthWatch:
    """Polls /health from a thread; the slowest answer and any failure are kept."""

    def __init__(self, url: str) -> None:
        self.url, self.slowest, self.failures, self.polls = url + "/health", 0.0, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self._stop.is_set():
                start = time.monotonic()
                try:
                    response = client.get(self.url)
                    if response.status_code != 200:
                        self.failures.append(f"{response.status_code}: {response.text[:200]}")
                except httpx.HTTPError as exc:
                    self.failures.append(repr(exc))
                self.slowest = max(self.slowest, time.monotonic() - start)
                self.polls += 1
                self._stop.wait(0.1)

    def __enter__(self) -> HealthWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        deadline = time.monotonic() + 3
        while self.polls < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        self._stop.set()
        self._thread.join(10)
        assert self.polls >= 2, "the watch did not poll"
        assert self.failures == [] and self.slowest < 1.0, (self.slowest, self.failures[:3])


def raw(server: ServerProcess) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def wait_workers(server: ServerProcess, count: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if httpx.get(server.url + "/health").json()["workers"] == count:
            return
        time.sleep(0.1)
    raise AssertionError("workers did not come back")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# --- High: the guard ----------------------------------------------------------------------------


def test_a_100kb_quadratic_body_does_not_freeze_the_server(default: ServerProcess) -> None:
    """0.3 s at 8 KB, 77 s at 100 KB for the old tokenizer, on the event loop."""
    body = "SELECT * WHERE { " + "a." * 49_900 + " }"
    with HealthWatch(default.url):
        start = time.monotonic()
        sparql = {"Content-Type": "application/sparql-query"}
        response = httpx.post(default.url + "/sparql", content=body, headers=sparql, timeout=60)
        assert time.monotonic() - start < 5
    assert response.status_code == 400 and "kbq refuses it" in response.text


def test_glued_service_and_from_never_leave_an_unsandboxed_server(tight: ServerProcess) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        queries = [
            f"PREFIX : <http://127.0.0.1:{port}/> SELECT ?x WHERE {{ SERVICE:leak {{ ?s ?p ?x }} }}",
            f"PREFIX p: <http://127.0.0.1:{port}/> SELECT ?x WHERE {{ SERVICEp:x {{ ?s ?p ?x }} }}",
            f"PREFIX : <http://127.0.0.1:{port}/> SELECT ?x WHERE {{ SERVICESILENT:x {{ ?s ?p ?x }} }}",
            f"PREFIX : <http://127.0.0.1:{port}/> SELECT ?x WHERE {{ ?a ?b true sErViCe:x {{ ?s ?p ?x }} }}",
            f"PREFIX : <http://127.0.0.1:{port}/> SELECT ?x WHERE {{ ?a ?b ?c FILTER(?c<2)SERVICE:x#>\n{{ ?s ?p ?x }} }}",
            f"PREFIX : <http://127.0.0.1:{port}/> SELECT ?x FROM:x WHERE {{ ?s ?p ?x }}",
        ]
        for query in queries:
            response = httpx.post(tight.url + "/sparql", data={"query": query})
            assert response.status_code == 400 and "refused" in response.text, (query, response.text)
        with pytest.raises(TimeoutError):
            listener.accept()


# --- Medium ---------------------------------------------------------------------------------------

BIG = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"  # every triple (36,000 rows of full IRIs): well over 1 MB as JSON


def test_an_answer_over_the_byte_limit_is_413(tight: ServerProcess) -> None:
    """M1: rows were bounded, bytes were not (a 2 KB query made a 335 MB body)."""
    with HealthWatch(tight.url):
        response = httpx.post(tight.url + "/sparql", data={"query": BIG}, timeout=30)
    assert response.status_code == 413 and "larger than 1000000 bytes" in response.text
    small = httpx.post(tight.url + "/sparql", data={"query": BIG + " LIMIT 100"})
    assert small.status_code == 200


def test_clients_that_never_read_are_dropped() -> None:
    """M1: four non-reading clients took the server from 54 MB to 1.3 GB. Now an answer is
    capped in bytes, all answers being sent are capped together (503 past it), and a client that
    reads nothing for 2 s is dropped with its answer."""
    server = start_kbq("--no-sandbox", "--workers", "1", "--max-response-bytes", "8000000", "--send-timeout", "2")
    try:
        # ~6 MB of JSON whichever triples come first (a padded row, not a multiple of the subject's IRI,
        # whose length depends on the KB's contents and the store's order)
        wide = "CONCAT(STR(?s)" + ", ?pad" * 8 + ")"
        pad = "x" * 100
        form = "query=" + quote_plus(f'SELECT ?s ({wide} AS ?x) WHERE {{ ?s ?p ?o BIND("{pad}" AS ?pad) }} LIMIT 6000')
        request = (
            "POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(form)}\r\n\r\n{form}"
        ).encode()
        before = rss_mb(server.proc.pid)
        socks = []
        with HealthWatch(server.url):
            for _ in range(12):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the answer waits in the server
                sock.connect(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
                sock.sendall(request)
                socks.append(sock)
            peak, held = 0.0, 0
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                health = httpx.get(server.url + "/health").json()
                peak = max(peak, rss_mb(server.proc.pid) - before)
                held = max(held, health["sending_bytes"])
                if health["sending_bytes"] == 0 and time.monotonic() > deadline - 11:
                    break
                time.sleep(0.2)
        assert held > 4_000_000  # answers did wait for the readers (so this test can fail)
        assert health["sending_bytes"] == 0  # every unread answer was dropped
        assert peak < 200  # 12 x 6 MB would be 70+ MB before copies; the budget admits 4 at a time
    finally:
        for sock in socks:
            sock.close()
        server.stop()


def test_a_worker_killed_while_idle_is_replaced(tight: ServerProcess) -> None:
    """Found on the way: a worker the OS killed while idle was handed the next query (500, an
    internal error) and never replaced (every later query: 503)."""
    before = children(tight.proc.pid)
    os.kill(sorted(before)[0], 9)
    time.sleep(0.2)
    for _ in range(3):
        assert httpx.post(tight.url + "/sparql", data={"query": "ASK {}"}, timeout=30).status_code == 200
    wait_workers(tight, 2)
    assert len(children(tight.proc.pid)) == 2


def test_a_query_that_eats_memory_gets_503_and_a_new_worker(tight: ServerProcess) -> None:
    """M2: string doubling and a cartesian ORDER BY reached 3.5 GB within the 10 s limit."""
    doubling = (
        'SELECT (STRLEN(?s40) AS ?n) WHERE { BIND("0123456789" AS ?s0) '
        + " ".join(f"BIND(CONCAT(?s{i}, ?s{i}) AS ?s{i + 1})" for i in range(40))
        + " }"
    )
    cartesian = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f"
    for query in (doubling, cartesian):
        with HealthWatch(tight.url):
            start = time.monotonic()
            response = httpx.post(tight.url + "/sparql", data={"query": query}, timeout=60)
            assert response.status_code == 503 and "300 MB" in response.text, response.text
            assert time.monotonic() - start < 8
        wait_workers(tight, 2)
    assert httpx.post(tight.url + "/sparql", data={"query": "ASK {}"}).json()["boolean"] is True


def test_half_sent_requests_time_out_and_do_not_crowd_out_health(tight: ServerProcess) -> None:
    """M3: 1,100 half-sent requests made /health fail."""
    socks = []
    with HealthWatch(tight.url):
        for _ in range(300):
            sock = raw(tight)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(sock)
        time.sleep(2.5)  # past the head timeout
    dropped = 0
    for sock in socks:
        sock.settimeout(3)
        try:
            dropped += b" 408 " in sock.recv(4096)
        except (ConnectionResetError, TimeoutError):
            pass
        sock.close()
    assert dropped == len(socks)


def test_an_endless_header_is_431_without_blocking(tight: ServerProcess) -> None:
    """M4: a 150 MB unterminated header blocked the event loop for 24 s."""
    with HealthWatch(tight.url):
        sock = raw(tight)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: ")
        sent = 0
        try:
            while sent < 150 << 20:
                sock.sendall(b"a" * (1 << 20))
                sent += 1 << 20
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(5)
        try:
            reply = sock.recv(4096)
        except ConnectionResetError:
            reply = b""
        sock.close()
    assert sent < 8 << 20  # the server stopped reading after ~16 KiB, not 150 MB
    assert reply == b"" or b"431" in reply


def test_a_body_that_never_arrives_is_408(tight: ServerProcess) -> None:
    sock = raw(tight)
    sock.sendall(
        b"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/sparql-query\r\nContent-Length: 1000\r\n\r\nASK"
    )
    sock.settimeout(10)
    start = time.monotonic()
    reply = b""
    while chunk := sock.recv(4096):  # until the server closes
        reply += chunk
    sock.close()
    assert b" 408 " in reply and b"did not arrive within 2 s" in reply and time.monotonic() - start < 6


def test_nesting_that_segfaulted_the_engine_is_400(tight: ServerProcess) -> None:
    """M6 through the server: the engine never sees it; workers live on."""
    workers = children(tight.proc.pid)
    with HealthWatch(tight.url):
        braces = "SELECT * WHERE " + "{" * 3000 + "}" * 3000
        brackets = "SELECT * WHERE { ?s ?p " + "[ ?p " * 200 + "1" + " ]" * 200 + " }"
        for query in (braces, brackets):
            response = httpx.post(tight.url + "/sparql", data={"query": query})
            assert response.status_code == 400 and "deeper than 64 levels" in response.text
    assert children(tight.proc.pid) == workers


# --- Low ------------------------------------------------------------------------------------------


def test_ask_with_a_lone_surrogate_or_deep_json_is_400(default: ServerProcess) -> None:
    url = default.url + "/ask"
    json_type = {"Content-Type": "application/json"}
    assert httpx.post(url, content=b'{"q": "gpu for \\ud800"}', headers=json_type).status_code == 400
    deep = b'{"q": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = httpx.post(url, content=deep, headers=json_type)
    assert response.status_code == 400 and "nested too deeply" in response.json()["error"]
    assert httpx.post(url, content=b'{"q": {"a": 1}}', headers=json_type).status_code == 400
    assert httpx.get(url + "?q=gpu%20for%20%ED%A0%80").status_code in (200, 400)


def test_questions_with_extreme_values_never_500(default: ServerProcess) -> None:
    """Years near 9999, huge limits and numbers: a clear 4xx, never an internal error (the
    compiler's own handling of these is the owner's item of issue 8)."""
    for question in (
        "gpus as of 9999-12",
        "gpus as of 0001-01",
        "gpus limit 99999999999999999999999",
        "gpus where memory >= 99999999999999999999999999999gb",
        "gpus where memory >= 0.0000000000000000000001gb",
        "gpus order by memory desc limit 0",
    ):
        response = httpx.get(default.url + "/ask", params={"q": question}, timeout=30)
        assert response.status_code in (200, 400), (question, response.status_code, response.text)
        assert "internal error" not in response.text


def test_only_loopback_host_names_are_answered(default: ServerProcess) -> None:
    """A Host header was reflected into the service description (DNS rebinding onto loopback)."""
    evil = httpx.get(default.url + "/sparql", headers={"Host": "evil.example"})
    assert evil.status_code == 400 and "evil.example" not in httpx.get(default.url + "/sparql").text
    for host in ("localhost", "127.0.0.1", f"localhost:{default.url.rsplit(':', 1)[1]}"):
        assert httpx.get(default.url + "/health", headers={"Host": host}).status_code == 200


def test_sandbox_off_is_reported(tight: ServerProcess, default: ServerProcess) -> None:
    health = httpx.get(tight.url + "/health").json()
    assert health["network_sandbox"] is False and "--no-sandbox" in health["warnings"][0]
    assert "network sandbox off (--no-sandbox was given)" in tight.log_text()
    on = httpx.get(default.url + "/health").json()
    if on["network_sandbox"]:
        assert on["warnings"] == []
    else:  # this system refuses network namespaces: said so
        assert "refused an empty network namespace" in on["warnings"][0]


def test_kbq_build_while_serving_keeps_the_server_answering(tmp_path: Path) -> None:
    """`kbq build` while `kbq serve` runs deleted the live snapshot; a worker started after
    (a crash, a timeout) could not open it. (The tests' tiny KB, KBQ_DATA_DIR: two builds of a second.)"""
    tiny = {"KBQ_DATA_DIR": str(TINY_KB)}
    env = {**kbq_env(), **tiny, "KBQ_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "kbq", "build"], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    server = start_kbq("--workers", "1", "--no-sandbox", cache=tmp_path / "cache", env=tiny)
    try:
        rebuilt = subprocess.run([sys.executable, "-m", "kbq", "build"], env=env, capture_output=True, text=True, timeout=180)
        assert rebuilt.returncode == 0, rebuilt.stderr
        (worker,) = children(server.proc.pid)
        os.kill(worker, 9)  # the replacement opens the snapshot again
        wait_workers(server, 1)
        response = httpx.post(server.url + "/sparql", data={"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"})
        assert response.status_code == 200 and int(response.json()["results"]["bindings"][0]["n"]["value"]) > 3000
    finally:
        server.stop()
