"""Cold-process query speed, as ratios against a floor measured in the same run.

floor: a bare `python -c` that imports pyoxigraph, opens the same snapshot read-only and runs
the same SPARQL. Measured: `KnowledgeBase.default().sparql(Q)` (target <= 2x the floor) and the
`kbq "QUESTION"` command (target <= 3x the floor for the compiled SPARQL of QUESTION); also the
in-process parse and parse+compile time of one question (target < 1 ms).

Run: python bench/bench_query.py [--runs 21]   (writes bench/results/query.txt)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

Q = "SELECT ?g ?l WHERE { ?g a <https://kbq.dev/ontology#GPU> ; <http://www.w3.org/2000/01/rdf-schema#label> ?l } ORDER BY ?l"
QUESTION = "gpu for lstm where cooling=blower"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import record  # noqa: E402


def wall(cmd: list[str]) -> float:
    """Wall time of one process; a leading 'VAR=value' item sets an environment variable."""
    env = dict(os.environ)
    while cmd and "=" in cmd[0] and not cmd[0].startswith("/"):
        name, _, value = cmd[0].partition("=")
        env[name] = value
        cmd = cmd[1:]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def floor_cmd(path: str, sparql: str) -> list[str]:
    code = (
        f"import pyoxigraph; s = pyoxigraph.Store.read_only({path!r}); list(s.query({sparql!r}, use_default_graph_as_union=True))"
    )
    return [sys.executable, "-c", code]


def timed(cases: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for cmd in cases.values():  # warm the OS cache once
        wall(cmd)
    for _ in range(runs):  # interleaved, so drift hits every case alike
        for name, cmd in cases.items():
            times[name].append(wall(cmd))
    return times


def in_process(runs: int) -> tuple[float, float]:
    from kbq import KnowledgeBase
    from kbq.lang.parse import parse
    from kbq.lang.run import compile_question

    kb = KnowledgeBase.default()
    catalog = kb.catalog
    parse_times, compile_times = [], []
    for _ in range(runs):
        t = time.perf_counter()
        parse(QUESTION)
        parse_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        compile_question(QUESTION, catalog, kb.table)
        compile_times.append(time.perf_counter() - t)
    return statistics.median(parse_times), statistics.median(compile_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    import compileall

    import kbq
    from kbq import KnowledgeBase

    # An installed wheel has byte code; an editable checkout under PYTHONDONTWRITEBYTECODE has
    # none and would recompile every module on every run. Measure what users run.
    compileall.compile_dir(os.path.dirname(kbq.__file__), quiet=1)

    kb = KnowledgeBase.default()
    assert kb.info is not None
    path = kb.info.path
    compiled = kb.compile(QUESTION)
    kbq_exe = shutil.which("kbq")
    cli = [kbq_exe, QUESTION] if kbq_exe else [sys.executable, "-m", "kbq", QUESTION]
    cases = {
        "floor (pyoxigraph, Q)": floor_cmd(path, Q),
        "KnowledgeBase.default().sparql(Q)": [
            sys.executable,
            "-c",
            f"from kbq import KnowledgeBase; KnowledgeBase.default().sparql({Q!r})",
        ],
        "floor (pyoxigraph, compiled question)": floor_cmd(path, compiled),
        f'kbq "{QUESTION}"': cli,
        f'kbq "{QUESTION}" (plan cache off: parse + compile)': ["KBQ_NO_PLAN_CACHE=1", *cli],
        "KnowledgeBase.default().table(Q) (no pydantic)": [
            sys.executable,
            "-c",
            f"from kbq import KnowledgeBase; KnowledgeBase.default().table({Q!r})",
        ],
        "reference: python -c 'from pydantic import BaseModel'": [sys.executable, "-c", "from pydantic import BaseModel"],
        "reference: python -c 'import lark, argparse'": [sys.executable, "-c", "import lark, argparse"],
        "reference: python -c pass": [sys.executable, "-c", "pass"],
    }
    times = timed(cases, args.runs)
    med = {k: statistics.median(v) for k, v in times.items()}
    names = list(cases)
    parse_s, compile_s = in_process(500)
    lines = [
        f"kbq query benchmark ({args.runs} interleaved cold runs each, median wall time; snapshot {kb.info.asserted}"
        f" asserted + {kb.info.inferred} inferred triples)",
        *(f"  {name:45s} {med[name] * 1000:7.1f} ms" for name in names),
        f"  ratio library / floor: {med[names[1]] / med[names[0]]:.2f}x   (target <= 2x)",
        f"  ratio kbq command / floor: {med[names[3]] / med[names[2]]:.2f}x   (target <= 3x)",
        f"  ratio kbq command, plan cache off / floor: {med[names[4]] / med[names[2]]:.2f}x (a question never asked before)",
        f"  ratio library .table() / floor: {med[names[5]] / med[names[0]]:.2f}x (same query, no pydantic model)",
        f"  in-process parse of one question: median {parse_s * 1e6:.0f} us;"
        f" parse + compile (with KB look-ups): median {compile_s * 1e3:.2f} ms",
    ]
    record(lines, "query.txt")


if __name__ == "__main__":
    main()
