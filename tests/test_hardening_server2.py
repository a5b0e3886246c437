"""Issue 22's attacks on a real `kbq serve` on 127.0.0.1 (M-1, M-2, M-3, M-10, L-1, L-12), each as
small as still proves its bound, with /health polled meanwhile (under 1 s, always 200).

The server is tests/test_hardening_server.py's `tight` one: 1 MB answers (so a 4 MB send budget
and a 1 MB share per client address), 2 s to send a head or a body or to read an answer, 32 slow
clients. Every loop here is bounded and stops by itself.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from conftest import TINY_KB
from server_helpers import ServerProcess, children, kbq_env, shared_kbq, start_kbq
from test_hardening_server import TIGHT, HealthWatch, raw, wait_workers

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def tight() -> ServerProcess:
    return shared_kbq(*TIGHT)


def _reply(sock: socket.socket, seconds: float = 5.0) -> bytes:
    """What the server sent until it closed (or `seconds` passed)."""
    sock.settimeout(0.5)
    data, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def _send_until_closed(sock: socket.socket, piece: bytes, limit: int) -> int:
    """Send `piece` again and again, at most `limit` bytes, until the server closes; bytes sent."""
    sent = 0
    try:
        while sent < limit:
            sock.sendall(piece)
            sent += len(piece)
    except OSError:
        pass
    return sent


# --- M-3: trailers and chunk extensions -------------------------------------------------------------


@pytest.mark.parametrize("part", ["trailer", "chunk extension"])
def test_chunked_framing_and_trailers_are_bounded(tight: ServerProcess, part: str) -> None:
    """A 180 MB trailer kept /health silent for 30 s. Past the body limit (~320 KB), 413, closed."""
    head = (
        b"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/sparql-query\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    with HealthWatch(tight.url), raw(tight) as sock:
        if part == "trailer":
            sock.sendall(head + b"6\r\nASK {}\r\n0\r\nX-Trailer: ")
        else:
            sock.sendall(head + b"6;ext=")
        start = time.monotonic()
        sent = _send_until_closed(sock, b"a" * 65536, 4 << 20)
        reply = _reply(sock)
        assert time.monotonic() - start < 5
    assert sent < 4 << 20 and reply.startswith(b"HTTP/1.1 413"), reply[:200]


# --- M-2: slow bodies are slow clients too ------------------------------------------------------------


def test_slow_heads_and_slow_bodies_are_capped_together(tight: ServerProcess) -> None:
    """1,010 connections that sent a head but not the body made every request 503 for 30 s.
    Now heads and bodies count in one cap (32 here): past it the longest-waiting goes."""
    socks: list[socket.socket] = []
    body_head = (
        b"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/sparql-query\r\nContent-Length: 1000\r\n\r\nASK"
    )
    try:
        with HealthWatch(tight.url):
            for i in range(60):
                sock = raw(tight)
                sock.sendall(body_head if i % 2 else b"GET /health HTTP/1.1\r\nHost: 127")
                socks.append(sock)
            time.sleep(0.5)
            assert httpx.post(tight.url + "/sparql", data={"query": "ASK {}"}, timeout=5).status_code == 200
            health = httpx.get(tight.url + "/health").json()
            assert sum(health["slow_clients"].values()) <= 32, health
        closed = 0
        for sock in socks[:28]:  # the oldest were closed to let the newest in
            closed += _reply(sock, 0.5).startswith(b"HTTP/1.1 408")
        assert closed >= 20
    finally:
        for sock in socks:
            sock.close()


# --- M-1: slow readers ------------------------------------------------------------------------------


def _big_query(tight: ServerProcess) -> str:
    """A SELECT whose JSON answer is between 400 KB and the 1 MB limit."""
    for limit in (3000, 2000, 1500, 1000):
        query = f"SELECT ?s ?p ?o WHERE {{ ?s ?p ?o }} ORDER BY ?s ?p ?o LIMIT {limit}"
        size = len(httpx.post(tight.url + "/sparql", data={"query": query}, timeout=30).content)
        if 400_000 < size < 1_000_000:
            return query
    pytest.skip("no answer of the wanted size")


def test_slow_readers_cannot_take_the_send_budget(tight: ServerProcess) -> None:
    """8 clients reading ~128 KB/s held the whole budget: even ASK {} got 503. Now a client
    address holds at most its share, small answers always pass, and a reader slower than
    --min-send-rate is cut off after the grace."""
    query = _big_query(tight)
    request = "GET /sparql?" + str(httpx.QueryParams({"query": query})) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    port = int(tight.url.rsplit(":", 1)[1])
    readers: list[socket.socket] = []
    got = [0] * 6
    try:
        with HealthWatch(tight.url):
            for _ in range(6):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect(("127.0.0.1", port))
                sock.sendall(request.encode())
                readers.append(sock)
            deadline = time.monotonic() + 12
            while time.monotonic() < deadline:  # read 2 KB a reader every 0.2 s (10 KB/s), meanwhile ask
                for i, sock in enumerate(readers):
                    sock.settimeout(0.01)
                    try:
                        got[i] += len(sock.recv(2048))
                    except (TimeoutError, OSError):
                        pass
                ask = httpx.post(tight.url + "/sparql", data={"query": "ASK {}"}, timeout=5)
                assert ask.status_code == 200, ask.text
                assert httpx.get(tight.url + "/health").json()["sending_bytes"] <= 1_100_000
                time.sleep(0.2)
        assert max(got) < 400_000  # nobody got a whole answer at 10 KB/s: cut off, or refused
        assert httpx.get(tight.url + "/health").json()["sending_bytes"] == 0
    finally:
        for sock in readers:
            sock.close()


# --- L-12: the access log ----------------------------------------------------------------------------


def test_a_request_path_cannot_forge_a_log_line_or_reach_the_terminal(tight: ServerProcess) -> None:
    forged = '/x%0a2026-01-01 00:00:00,000 INFO kbq.access: 10.0.0.1 "GET /admin" 200%1b]0;owned%07'
    with raw(tight) as sock:
        sock.sendall(f"GET {forged.replace(' ', '%20')} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        assert _reply(sock, 2).startswith(b"HTTP/1.1 404")
    time.sleep(0.3)
    log = tight.log_text()
    assert "\\x0a2026-01-01" in log and "\\x1b]0;owned" in log
    assert not any(line.startswith("2026-01-01 00:00:00,000 INFO kbq.access") for line in log.splitlines())
    assert "\x1b" not in log


# --- L-1: crashes reported as crashes, /health steady -------------------------------------------------


def test_a_worker_crash_is_reported_as_a_crash_and_health_holds(tight: ServerProcess) -> None:
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    wait_workers(tight, 2)
    result: list[httpx.Response] = []
    thread = threading.Thread(
        target=lambda: result.append(httpx.post(tight.url + "/sparql", data={"query": slow}, timeout=30)), daemon=True
    )
    with HealthWatch(tight.url):
        thread.start()
        time.sleep(1.0)
        for pid in children(tight.proc.pid):
            os.kill(pid, signal.SIGSEGV)
        thread.join(20)
        wait_workers(tight, 2)
    assert result and result[0].status_code == 503 and "crashed (SIGSEGV)" in result[0].text, result
    assert "MB a query may use" not in result[0].text
    health = httpx.get(tight.url + "/health").json()
    assert health["status"] == "ok" and health["worker_exits"] >= 2


# --- M-10: a cache moved under a running server --------------------------------------------------------


def test_a_moved_cache_is_found_again_when_a_worker_restarts(tmp_path: Path) -> None:
    """Moving the cache made every worker replacement fail for good: 0 workers, 503. (The tests'
    tiny KB, KBQ_DATA_DIR: the worker's rebuild takes a second, not the shipped KB's build.)"""
    cache = tmp_path / "cache"
    tiny = {"KBQ_DATA_DIR": str(TINY_KB)}
    built = subprocess.run(
        [sys.executable, "-m", "kbq", "build"],
        env={**kbq_env(), **tiny, "KBQ_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert built.returncode == 0, built.stderr
    server = start_kbq("--no-sandbox", "--workers", "1", cache=cache, env=tiny)
    try:
        cache.rename(tmp_path / "moved")
        for pid in children(server.proc.pid):
            os.kill(pid, signal.SIGKILL)
        deadline, answered = time.monotonic() + 240, None
        while time.monotonic() < deadline and answered is None:  # a rebuild on 2 shared cores
            response = httpx.get(server.url + "/ask", params={"q": "gpu for lstm"}, timeout=30)
            if response.status_code == 200:
                answered = response
            time.sleep(1)
        assert answered is not None, server.log_text()[-2000:]
        assert httpx.get(server.url + "/health").json()["status"] == "ok"
    finally:
        server.stop()
