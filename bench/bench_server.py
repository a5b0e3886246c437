"""Load test: `kbq serve` side by side with `oxigraph serve` on the same exported data.

wrk (Debian package) drives 32 connections for 20 s per server on loopback, POSTing three
golden questions' compiled SPARQL in turn (a Lua script). kbq runs twice: with its answer
cache off (every request runs in a worker) and on (the default). Reports requests/s,
p50/p99 latency, errors (socket errors and non-2xx), peak RSS after the load, and the
kbq / Oxigraph ratios.

    python bench/bench_server.py [--duration 20] [--connections 32] [--out bench/results/server.txt]

`--compare DIR` also serves the kbq of another checkout (e.g. `git worktree add /tmp/old main`)
in the same rounds, so a change is measured against the same Oxigraph under the same noise
(on a shared machine, runs minutes apart differ by more than most changes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from server_helpers import ServerProcess, children, kbq_env, start_kbq, start_oxigraph  # noqa: E402

QUESTIONS = [
    "gpu for lstm where cooling=blower",
    "best gpu for bert on dense 9-card chassis as of 2020-03",
    "gpus where memory >= 24gb and nvlink = yes order by bandwidth desc limit 5",
]
LUA = """
local bodies = { %s }
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/sparql-results+json"
request = function()
  i = i %% #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests": %%d, "seconds": %%f, "p50_us": %%d, "p99_us": %%d, '
    .. '"socket_errors": %%d, "non2xx": %%d, "timeouts": %%d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write, e.status, e.timeout))
end
"""


@dataclass
class Run:
    name: str
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    rss_mb: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def peak_rss_mb(pid: int) -> float:
    """VmHWM (peak resident set) of a process and its children, in MiB."""
    total = 0
    for p in {pid} | children(pid):
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1])
    return total / 1024


def golden_sparql() -> tuple[list[str], bytes]:
    from kbq.api import KnowledgeBase
    from kbq.store.export import export

    kb = KnowledgeBase.default()
    assert kb.store is not None
    return [kb.compile(q) for q in QUESTIONS], export(kb.store, "nt")


def _comparable(value: str) -> str:
    """A value as compared across servers: list items sorted, and numbers to 12 significant digits
    (a sum of floats may differ in its last bit with the engine's evaluation order)."""
    try:
        return f"{float(value):.12g}"
    except ValueError:
        return ", ".join(sorted(value.split(", ")))


def answers(url: str, queries: list[str]) -> list[list[dict[str, str]]]:
    """Each query's rows; GROUP_CONCAT order is unspecified in SPARQL, so list items are sorted."""
    out = []
    for query in queries:
        request = urllib.request.Request(
            url, data=urllib.parse.urlencode({"query": query}).encode(), headers={"Accept": "application/sparql-results+json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            rows = json.load(response)["results"]["bindings"]
        out.append([{k: _comparable(v["value"]) for k, v in row.items()} for row in rows])
    return out


def load(name: str, server: ServerProcess, path: str, script: Path, args: argparse.Namespace) -> Run:
    wrk = [
        shutil.which("wrk") or "wrk",
        "-t",
        str(args.threads),
        "-c",
        str(args.connections),
        "-d",
        f"{args.duration}s",
        "--timeout",
        "30s",
        "-s",
        str(script),
        server.url + path,
    ]
    done = subprocess.run(wrk, capture_output=True, text=True, timeout=args.duration + 120, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    data = json.loads(line[len("RESULT ") :])
    errors = data["socket_errors"] + data["non2xx"] + data["timeouts"]
    return Run(
        name,
        data["requests"],
        data["seconds"],
        data["p50_us"] / 1000,
        data["p99_us"] / 1000,
        errors,
        peak_rss_mb(server.proc.pid),
    )


def start_other(root: Path, *args: str) -> ServerProcess:
    """`kbq serve` from another checkout (its own cache folder), on a free loopback port."""
    return start_kbq(*args, timeout=300, cache=root / ".bench-cache", root=root)


def render(rounds: list[list[Run]], args: argparse.Namespace) -> str:
    lines = [
        f"kbq serve vs oxigraph serve: {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s per server per round, {len(rounds)} rounds "
        "(servers interleaved), 127.0.0.1, POST form, Accept SPARQL JSON, 3 golden queries in turn:",
        *[f"  - {q}" for q in QUESTIONS],
        "",
        f"{'round':5} {'server':30} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'x oxigraph':>11}",
    ]
    for number, runs in enumerate(rounds, start=1):
        for run in runs:
            lines.append(
                f"{number:<5} {run.name:30} {run.rps:9.1f} {run.p50_ms:8.2f} {run.p99_ms:8.2f} {run.errors:7d} "
                f"{run.rps / runs[0].rps:11.2f}"
            )
    lines += ["", f"{'all rounds':36} {'req/s':>9} {'errors':>7} {'peak RSS MiB':>13} {'x oxigraph':>11}"]
    totals = []
    for i, run in enumerate(rounds[0]):
        mine = [r[i] for r in rounds]
        totals.append(sum(r.requests for r in mine) / sum(r.seconds for r in mine))
        lines.append(
            f"{run.name:36} {totals[-1]:9.1f} {sum(r.errors for r in mine):7d} {max(r.rss_mb for r in mine):13.1f} "
            f"{totals[-1] / totals[0]:11.2f}"
        )
    lines += ["", "peak RSS: VmHWM of the server process and its children (kbq: front end + query workers) after the load."]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=int, default=20)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2, help="each server is loaded once per round (default 2)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "server.txt")
    p.add_argument("--compare", type=Path, metavar="DIR", help="also serve the kbq of this checkout, in the same rounds")
    args = p.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench_server: wrk is missing (apt-get install -y wrk)")
    kbq_env()
    work = Path(tempfile.mkdtemp(prefix="kbq-bench-"))
    queries, data = golden_sparql()
    (work / "kbq.nt").write_bytes(data)
    bodies = ", ".join("[==[" + urllib.parse.urlencode({"query": q}) + "]==]" for q in queries)
    script = work / "post.lua"
    script.write_text(LUA % bodies)

    servers: dict[str, tuple[ServerProcess, str]] = {}
    try:
        servers["oxigraph serve-read-only"] = (start_oxigraph(work / "kbq.nt", work), "/query")
        if args.compare:
            servers[f"{args.compare.name}: kbq serve (cache off)"] = (start_other(args.compare, "--cache-size", "0"), "/sparql")
        servers["kbq serve (cache off)"] = (start_kbq("--cache-size", "0"), "/sparql")
        if args.compare:
            servers[f"{args.compare.name}: kbq serve (cache on)"] = (start_other(args.compare), "/sparql")
        servers["kbq serve (default, cache on)"] = (start_kbq(), "/sparql")
        expected = answers(servers["oxigraph serve-read-only"][0].url + "/query", queries)
        for name, (server, path) in servers.items():
            if answers(server.url + path, queries) != expected:
                sys.exit(f"bench_server: {name} answers differ from Oxigraph's")
        # Rounds interleave the servers, so a noisy neighbour on a shared host hits them alike.
        rounds = [
            [load(name, server, path, script, args) for name, (server, path) in servers.items()] for _ in range(args.rounds)
        ]
    finally:
        for server, _ in servers.values():
            server.stop()
    report = render(rounds, args)
    print(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r.errors == 0 for runs in rounds for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
