"""Real server processes on 127.0.0.1 for the server, remote and browser tests (and the bench).

`shared_kbq(*args)` starts `python -m kbq serve --port P *args` once per argument list and
stops it at exit; `start_oxigraph(data)` loads N-Triples into an Oxigraph store and serves it
read-only. Every process gets KBQ_CACHE_DIR: the caller's, else one temporary folder for the
whole session, so the snapshot is built once.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "examples" / "questions.kbq"
# Used when examples/questions.kbq is not there: the README's questions.
README_QUESTIONS = [
    "gpu for lstm where cooling=blower",
    "best gpu for bert on dense 9-card chassis as of 2020-03",
    "gpus where memory >= 24gb and nvlink = yes order by bandwidth desc limit 5",
    "gpu for llama 3.1 70b inference at int4 in an 8-card server",
    "gpu for resnet-50 training on a 4-gpu workstation",
    "frameworks for rnn",
    "sdks for inference",
    "applications of gan",
    "algorithms for machine translation",
    "requirements for lstm",
    "compare rtx 2080 ti and titan rtx",
    "describe quadro rtx 8000",
    "why quadro rtx 8000 for bert",
    "keys",
]
_SESSION: dict[str, str] = {}
_SERVERS: dict[tuple[str, ...], ServerProcess] = {}


def golden_questions() -> list[str]:
    """examples/questions.kbq (one question a line, '#' comments), else the README's questions."""
    if not GOLDEN.exists():
        return list(README_QUESTIONS)
    lines = (line.strip() for line in GOLDEN.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def kbq_env() -> dict[str, str]:
    """The environment for kbq processes: one KBQ_CACHE_DIR for the whole test session."""
    if "KBQ_CACHE_DIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="kbq-test-cache-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["KBQ_CACHE_DIR"] = folder
    _SESSION.setdefault("cache", os.environ["KBQ_CACHE_DIR"])
    return {**os.environ, "KBQ_CACHE_DIR": _SESSION["cache"], "PYTHONUNBUFFERED": "1"}


def cli_json(question: str, *extra: str) -> dict[str, object]:
    """`kbq QUESTION --format json [EXTRA...]` run as a real command."""
    done = subprocess.run(
        [sys.executable, "-m", "kbq", question, "--format", "json", *extra],
        capture_output=True,
        text=True,
        env=kbq_env(),
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path
    extra: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        for proc in [self.proc, *self.extra]:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _wait(server: ServerProcess, probe: str, timeout: float) -> ServerProcess:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server exited with {server.proc.returncode}:\n{server.log_text()[-3000:]}")
        if http_ok(probe):
            return server
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"server not ready after {timeout} s:\n{server.log_text()[-3000:]}")


def start_kbq(
    *args: str,
    timeout: float = 120.0,
    cache: str | os.PathLike[str] | None = None,
    root: Path = ROOT,
    env: dict[str, str] | None = None,
) -> ServerProcess:
    """`python -m kbq serve` on a free loopback port, once /health answers 200 (`cache`: its own
    KBQ_CACHE_DIR instead of the session's; `root`: serve the kbq of another checkout; `env`: more
    variables, e.g. KBQ_DATA_DIR)."""
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="kbq-serve-")) / "serve.log"
    env = {**kbq_env(), **(env or {})}
    if cache is not None:
        env["KBQ_CACHE_DIR"] = os.fspath(cache)
    if root != ROOT:
        env["PYTHONPATH"] = str(root)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kbq", "serve", "--host", "127.0.0.1", "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=root,
        )
    server = ServerProcess(proc, f"http://127.0.0.1:{port}", log)
    return _wait(server, server.url + "/health", timeout)


def shared_kbq(*args: str) -> ServerProcess:
    """One server per argument list for the whole session (stopped at exit)."""
    server = _SERVERS.get(args)
    if server is None or server.proc.poll() is not None:
        server = _SERVERS[args] = start_kbq(*args)
        atexit.register(server.stop)
    return server


def oxigraph_binary() -> str | None:
    beside = Path(sys.executable).parent / "oxigraph"
    return str(beside) if beside.exists() else shutil.which("oxigraph")


def start_oxigraph(data: Path, workdir: Path, timeout: float = 60.0) -> ServerProcess:
    """Load `data` (N-Triples) into a fresh Oxigraph store and serve it read-only on loopback."""
    binary = oxigraph_binary()
    if binary is None:
        raise RuntimeError("the oxigraph binary is missing (pip install oxigraph)")
    location = workdir / "oxigraph-store"
    subprocess.run(
        [binary, "load", "--location", str(location), "--file", str(data)], check=True, capture_output=True, timeout=120
    )
    port = free_port()
    log = workdir / "oxigraph.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = ServerProcess(proc, f"http://127.0.0.1:{port}", log)
    return _wait(server, server.url + "/query?query=ASK%7B%7D", timeout)


def children(pid: int) -> set[int]:
    """Direct child processes of `pid` (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(entry.name))
    return found
