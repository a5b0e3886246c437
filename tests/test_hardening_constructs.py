"""Issue 22, M-4 and L-2: the guard bounds the size of every construct, not only nesting.

Differential: queries generated long and deep around the guard's limits; whatever the guard
accepts, pyoxigraph must run to the end in a child process (a segfault is a failed test, not a
dead runner) within a few seconds; the long versions that crashed it or took minutes are refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from kbq.errors import QueryTooComplex
from kbq.store.guard import MAX_PATTERNS, MAX_TERMS, check_query

IRI = "<http://example.org/x{}>"

CONSTRUCTS = {
    "collection": lambda n: "SELECT * WHERE { ?s ?p (" + " ".join(str(i) for i in range(n)) + ") }",
    "object list": lambda n: "SELECT * WHERE { ?s ?p " + ", ".join(str(i) for i in range(n)) + " }",
    "basic graph pattern": lambda n: "SELECT * WHERE { " + " ".join(f"?s <http://e/p{i}> ?o{i} ." for i in range(n)) + " }",
    "blank-node property list": lambda n: "SELECT * WHERE { ?s ?p [ " + "; ".join(f"<http://e/{i}> {i}" for i in range(n)) + "]}",
    "describe": lambda n: "DESCRIBE " + " ".join(IRI.format(i) for i in range(n)),
    "order by": lambda n: "SELECT * WHERE { ?s ?p ?o } ORDER BY " + " ".join(f"?v{i}" for i in range(n)),
    "projection": lambda n: "SELECT " + " ".join(f"?v{i}" for i in range(n)) + " WHERE { ?s ?p ?o } LIMIT 1",
    "values": lambda n: "SELECT * WHERE { VALUES ?x { " + " ".join(str(i) for i in range(n)) + " } }",
    "values rows": lambda n: "SELECT * WHERE { VALUES (?x ?y) { " + " ".join(f"({i} {i})" for i in range(n)) + " } }",
    "group by": lambda n: "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY " + " ".join(f"?v{i}" for i in range(n)),
    "in list": lambda n: "SELECT * WHERE { ?s ?p ?o FILTER(?o IN (" + ", ".join(str(i) for i in range(n)) + ")) }",
}

# The findings (issue 22, M-4): each crashed pyoxigraph (SIGSEGV) or planned for minutes.
FOUND = [
    CONSTRUCTS["collection"](5000),
    CONSTRUCTS["describe"](3000),
    CONSTRUCTS["order by"](5000),
    CONSTRUCTS["projection"](5000),
    CONSTRUCTS["values"](5000),
    CONSTRUCTS["object list"](300),
    CONSTRUCTS["collection"](300),
    CONSTRUCTS["blank-node property list"](300),
]

_CHILD = r"""
import json, sys, time, pyoxigraph as ox
store = ox.Store()
for i in range(20):
    store.add(ox.Quad(ox.NamedNode(f"http://e/s{i}"), ox.NamedNode("http://e/p"), ox.Literal(str(i))))
for line in sys.stdin:
    start = time.perf_counter()
    result = store.query(json.loads(line))
    if not hasattr(result, "__bool__") or hasattr(result, "__iter__"):
        for _ in result:
            pass
    print(f"{time.perf_counter() - start:.3f}", flush=True)
"""


def _run_in_child(queries: list[str]) -> list[float]:
    """Seconds each query took in a child pyoxigraph; a crash fails naming the query."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input="".join(json.dumps(q) + "\n" for q in queries),
        capture_output=True,
        text=True,
        timeout=300,
    )
    times = [float(t) for t in done.stdout.split()]
    if done.returncode != 0:
        crashed = queries[len(times)] if len(times) < len(queries) else "?"
        pytest.fail(f"the engine died (status {done.returncode}) on an accepted query: {crashed[:120]}... {done.stderr[-300:]}")
    return times


@pytest.mark.parametrize("query", FOUND, ids=lambda q: q[:30])
def test_the_long_flat_constructs_that_crashed_the_engine_are_refused(query: str) -> None:
    with pytest.raises(QueryTooComplex):
        check_query(query)


def test_what_the_guard_accepts_at_its_size_limits_runs_in_the_engine() -> None:
    """Every construct at sizes up to the limits: the guard accepts the largest one it should
    (over-caution is bounded too), and pyoxigraph runs each accepted query without crashing
    and in a few seconds."""
    accepted: list[tuple[str, str]] = []
    for name, make in CONSTRUCTS.items():
        largest = 0
        for n in (10, 60, 120, 400, 900):
            query = make(n)
            try:
                check_query(query)
            except QueryTooComplex:
                continue
            largest = n
            accepted.append((f"{name} x{n}", query))
        assert largest >= 60, f"the guard refuses a {name} of 60 items"
    times = _run_in_child([q for _name, q in accepted])
    slow = [(name, t) for (name, _q), t in zip(accepted, times, strict=True) if t > 5.0]
    assert not slow, slow


def test_limits_are_what_the_guard_enforces() -> None:
    check_query(CONSTRUCTS["object list"](MAX_PATTERNS - 1))
    with pytest.raises(QueryTooComplex, match="triple patterns"):
        check_query(CONSTRUCTS["object list"](MAX_PATTERNS + 2))
    check_query(CONSTRUCTS["values"](MAX_TERMS - 10))  # VALUES data is no join: only its length counts
    with pytest.raises(QueryTooComplex, match="terms"):
        check_query(CONSTRUCTS["values"](MAX_TERMS + 1))


def test_the_guard_stays_linear_on_long_flat_lists() -> None:
    start = time.perf_counter()
    for make in CONSTRUCTS.values():
        with pytest.raises(QueryTooComplex):
            check_query(make(20_000))
    assert time.perf_counter() - start < 2.0
