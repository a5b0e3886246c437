"""Issue 22 outside the server: what a hostile endpoint, a question or a slow query can do to the
library and the command (M-6, M-7, M-8, L-2, L-3, L-5, L-6, L-7). Loopback only; every loop is
bounded and stops by itself."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kbq import output
from kbq.api import KnowledgeBase
from kbq.cli import main
from kbq.errors import KbqError, QueryTimeoutError
from kbq.store.remote import MAX_CELLS, EndpointError, remote_select

ROOT = Path(__file__).resolve().parent.parent
XSD = "http://www.w3.org/2001/XMLSchema#"
HOSTILE_TEXT = "ok\x1b]0;owned\x07\x1b[2J\x9b31m\u202e\r"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


class RawEndpoint:
    """A loopback TCP server: each connection gets `script(conn)` after its request is read."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/sparql"
        self.script = lambda conn: None
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0
                )
                while len(body) < length:
                    body += conn.recv(65536)
                self.script(conn)
            except OSError:
                pass

    def answer(self, body: bytes, media: str = "application/sparql-results+json", status: str = "200 OK") -> None:
        head = f"HTTP/1.1 {status}\r\nContent-Type: {media}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        self.script = lambda conn: conn.sendall(head.encode() + body)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def raw() -> Iterator[RawEndpoint]:
    server = RawEndpoint()
    yield server
    server.close()


def _results(columns: list[str], rows: list[dict[str, object]]) -> bytes:
    return json.dumps({"head": {"vars": columns}, "results": {"bindings": rows}}).encode()


def _trickle(prefix: bytes, drip: bytes) -> object:
    """Send `prefix`, then one byte of `drip` every 0.3 s (at most 40: the loop ends by itself)."""

    def script(conn: socket.socket) -> None:
        conn.sendall(prefix)
        for byte in drip[:40]:
            time.sleep(0.3)
            conn.sendall(bytes([byte]))

    return script


# --- M-7: one deadline for the whole remote exchange ------------------------------------------------

OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"


@pytest.mark.parametrize(
    ("prefix", "drip"),
    [
        (b"", b"HTTP/1.1 200 OK\r\n" * 3),  # the status line
        (b"HTTP/1.1 200 OK\r\n", b"X-Slow: " + b"a" * 100),  # a header
        (OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"0000000000000000000000000000004"),  # a chunk size
        (OK_HEAD + b"Content-Length: 1000\r\n\r\n", b'{"head": {"vars": []}' + b" " * 100),  # the body
    ],
    ids=["status", "header", "chunk size", "body"],
)
def test_a_remote_trickling_any_part_meets_the_deadline(raw: RawEndpoint, prefix: bytes, drip: bytes) -> None:
    raw.script = _trickle(prefix, drip)
    start = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        remote_select(raw.url, "ASK {}", timeout=1.5)
    assert time.monotonic() - start < 3.0


# --- M-8: remote answers bounded in values, not only bytes ------------------------------------------


def test_many_variables_times_many_solutions_is_refused(raw: RawEndpoint) -> None:
    body = _results([f"v{i}" for i in range(20_000)], [{} for _ in range(200)])  # ~0.2 MB -> 4,000,000 cells
    assert len(body) < 300_000
    raw.answer(body)
    with pytest.raises(EndpointError, match="variables"):
        remote_select(raw.url, "SELECT * {}")


def test_many_tiny_objects_are_refused_while_parsing(raw: RawEndpoint) -> None:
    raw.answer(b'{"head": {"vars": ["x"]}, "results": {"bindings": [' + b",".join([b"{}"] * (MAX_CELLS + 10)) + b"]}}")
    with pytest.raises(EndpointError, match="objects"):
        remote_select(raw.url, "SELECT * {}")


# --- L-7, L-5, M-6: hostile endpoint values ---------------------------------------------------------

HOSTILE_VALUES = [
    {"type": "literal", "value": "9" * 400, "datatype": XSD + "integer"},
    {"type": "literal", "value": "9" * 5000, "datatype": XSD + "integer"},
    {"type": "literal", "value": "INF", "datatype": XSD + "double"},
    {"type": "literal", "value": "-INF", "datatype": XSD + "double"},
    {"type": "literal", "value": "NaN", "datatype": XSD + "double"},
    {"type": "literal", "value": "1e999", "datatype": XSD + "decimal"},
    {"type": "literal", "value": "not a number", "datatype": XSD + "integer"},
    {"type": "literal", "value": HOSTILE_TEXT},
    {"type": "uri", "value": "http://x/" + HOSTILE_TEXT},
]


def test_hostile_values_become_unknowns_not_infinities(raw: RawEndpoint) -> None:
    raw.answer(_results(["x"], [{"x": v} for v in HOSTILE_VALUES]))
    values = [row[0] for row in remote_select(raw.url, "SELECT * {}").rows]
    assert values[:7] == [None] * 7
    assert all(not (isinstance(v, float) and not math.isfinite(v)) for v in values)


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "chart"])
def test_hostile_endpoint_text_reaches_no_output_raw(raw: RawEndpoint, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    raw.answer(_results(["x", HOSTILE_TEXT], [{"x": v, HOSTILE_TEXT: v} for v in HOSTILE_VALUES]))
    code = main(["sparql", "SELECT * {}", "--endpoint", raw.url, "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    for text in (out, err):
        assert not any(ch in text for ch in RAW), repr(text[:300])
    assert ("\\u001b]0;owned" if fmt == "json" else "\\x1b]0;owned") in out  # shown, not obeyed
    if fmt == "json":
        json.loads(out, parse_constant=lambda name: pytest.fail(f"non-strict JSON: {name}"))


def test_hostile_error_text_reaches_stderr_escaped(raw: RawEndpoint, capsys: pytest.CaptureFixture[str]) -> None:
    raw.answer(HOSTILE_TEXT.encode(), media="text/plain", status="400 Bad Request")
    assert main(["sparql", "SELECT * {}", "--endpoint", raw.url]) == 2
    err = capsys.readouterr().err
    assert "owned" in err and not any(ch in err for ch in RAW)


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=range(len(HOSTILE_VALUES)))
def test_questions_over_a_hostile_endpoint_never_exit_70(
    raw: RawEndpoint, value: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever every look-up of a question is answered with (a value of every column, in
    every row), kbq answers or says what is wrong with the endpoint: never an internal error."""

    def script(conn: socket.socket) -> None:
        body = _results([f"c{i}" for i in range(3)], [{f"c{i}": value for i in range(3)}] * 3)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        )

    raw.script = script
    for question in ("gpu for lstm", "describe rtx 4090", "memory for llama 3.1 8b inference"):
        code = main(["--endpoint", raw.url, question, "--format", "json"])
        out, err = capsys.readouterr()
        assert code != 70 and "internal error" not in err, (question, err[-300:])
        assert json.loads(out)


def test_json_is_strict() -> None:
    text = output.to_json({"a": math.inf, "b": [math.nan, -math.inf, 1.5], "c": "\x1b\u202e"})
    data = json.loads(text, parse_constant=lambda name: pytest.fail(name))
    assert data == {"a": None, "b": [None, None, 1.5], "c": "\x1b\u202e"}  # the same string back, lossless
    assert "\x1b" not in text and "\u202e" not in text


# --- L-6: every error has a JSON form ------------------------------------------------------------------


def test_argument_errors_are_json_under_format_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "json", "gpu for lstm", "--no-such-option"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["type"] == "UsageError" and "--no-such-option" in out["error"]


def test_internal_errors_are_json_under_format_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import kbq.cli

    def broken(args: object) -> object:
        raise RuntimeError("a bug \x1b[2J")

    monkeypatch.setattr(kbq.cli, "_open", broken)
    assert main(["gpu for lstm", "--format", "json"]) == 70
    out, err = capsys.readouterr()
    assert json.loads(out)["type"] == "InternalError"
    assert "\x1b" not in err and "RuntimeError" in err


# --- L-3: numbers no float holds ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "question", ["gpus where memory >= {n}gb", "gpu for llama 3.1 70b inference on {n} x h100", "gpus limit {n}"]
)
def test_a_400_digit_number_is_a_clear_error(kb: KnowledgeBase, question: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = question.format(n="9" * 400)
    assert main([text, "--format", "json"]) == 2
    error = json.loads(capsys.readouterr().out)
    assert error["type"] == "KbqSyntaxError" and "digits" in error["error"] and error["column"] == text.index("9") + 1


# --- L-2: a time limit in the library and the command ------------------------------------------------

SLOW = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l } LIMIT 1 OFFSET 100000000000"


def test_the_library_stops_waiting_at_its_time_limit(kb: KnowledgeBase) -> None:
    start = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        kb.table(SLOW, timeout=1.0)
    assert time.monotonic() - start < 2.5
    assert kb.table("ASK {}").rows == [[True]]  # the next query still runs


def test_the_command_stops_at_its_time_limit(kb: KnowledgeBase) -> None:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kbq", "sparql", SLOW, "--timeout", "1", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2 and json.loads(done.stdout)["type"] == "QueryTimeoutError"
    assert time.monotonic() - start < 15  # a cold start, then 1 s


def test_kbq_errors_only(kb: KnowledgeBase) -> None:
    with pytest.raises(KbqError):
        kb.table("SELECT * WHERE { ?s ?p (" + " ".join("1" for _ in range(5000)) + ") }")


# --- M-6: a hostile overlay in describe, compare and why ----------------------------------------------


@pytest.fixture(scope="module")
def hostile_overlay(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    overlay = folder / "evil.ttl"
    overlay.write_text(
        "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
        'kb:TitanRTX kbq:note "evil\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u202e note" .\n'
    )
    return overlay, Path(os.environ["KBQ_CACHE_DIR"])  # the session's: the overlay build starts from its snapshot


@pytest.mark.parametrize(
    ("question", "fmt"),
    [
        ("describe titan rtx", "table"),
        ("describe titan rtx", "csv"),
        ("describe titan rtx", "json"),
        ("compare titan rtx and rtx 2080 ti", "table"),
        ("compare titan rtx and rtx 2080 ti", "chart"),
        ("why titan rtx for bert", "table"),
    ],
)
def test_a_hostile_overlay_reaches_no_output_raw(hostile_overlay: tuple[Path, Path], question: str, fmt: str) -> None:
    overlay, cache = hostile_overlay
    done = subprocess.run(
        [sys.executable, "-m", "kbq", question, "--kb", str(overlay), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "KBQ_CACHE_DIR": str(cache)},
    )
    assert done.returncode in (0, 1), done.stderr[-500:]
    for text in (done.stdout, done.stderr):
        assert not any(ch in text for ch in RAW), repr(text[:300])
    if question.startswith("describe"):
        assert "owned" in done.stdout  # the note is shown, escaped
