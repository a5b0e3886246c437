"""Store parity (engine-neutral SPARQL): every golden question gives the embedded store's answer on
Virtuoso 7 loaded from `kbq export`, asked through KnowledgeBase.remote (the whole compiler and
answer shaping run against the store; the Oxigraph server case, every field exactly, is
test_remote.py's); rdflib's
SPARQL engine answers them from the same export too (the embedded store's plans, every query of
the answer run by rdflib; without --explain, and not the questions with placement constraints,
which rdflib takes 10-30 s each to answer: the other two stores cover those).

What the comparison forgives, because stores legitimately differ there, and nothing else:
- a number: an int equals a float of the same value (Virtuoso returns CEIL of a double as 1.0
  where pyoxigraph writes 1), and floats are equal within a relative tolerance of 1e-9 (decimal
  versus double arithmetic, summation order); against Virtuoso within 1e-5, because Virtuoso 7
  writes every xsd:double with 6 significant digits (16.879561047587295 comes back as 16.8796, in
  JSON, XML and STR() alike);
- a blank node's label (each store names its own).
Row order, columns, units, every explanation line, the GPUs each constraint removed (--explain)
and error types and messages must be the same.

Virtuoso is installed by tests/stores/virtuoso.sh (Debian's virtuoso-opensource-7-bin, as root)
and skipped, with the reason, only where it cannot be installed; under CI it must run.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from server_helpers import ROOT, golden_questions, kbq_env

from kbq.api import KnowledgeBase
from kbq.errors import KbqError

STORES = ROOT / "tests" / "stores"
FIELDS = ("kind", "columns", "rows", "units", "explanation", "removed", "extra")
QUESTIONS = golden_questions()
EXPORT_GRAPH = "https://kbq.dev/graph/export"  # the graph virtuoso.sh loads the export into
RDFLIB_TOO_SLOW = "kbq:acceptsFormFactor"  # in the SPARQL of a question with placement constraints
RDFLIB_KNOWN: dict[str, str] = {}  # rdflib's own limits, not kbq's (none now: kbq.lang.sparql works around them)
TIED: dict[str, str] = {}  # answers whose row order the KB leaves to the store (none now: keys orders by key, name, IRI)


# --- comparison ---------------------------------------------------------------------------------


def normal(value: object) -> object:
    """JSON-shaped (tuples as lists), blank node labels dropped; numbers stay numbers."""
    if isinstance(value, dict):
        return {str(k): normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normal(v) for v in value]
    if isinstance(value, str) and value.startswith("_:"):
        return "_:"
    return value


def same(a: object, b: object, rel_tol: float = 1e-9) -> bool:
    """Equal after `normal`, numbers within the tolerance the module's docstring states."""
    a, b = normal(a), normal(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=rel_tol)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], rel_tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, rel_tol) for x, y in zip(a, b, strict=True))
    return a == b


VIRTUOSO_DIGITS = 1e-5  # Virtuoso 7 writes doubles with 6 significant digits (module docstring)


def outcome(kb: KnowledgeBase, question: str) -> object:
    """What a user sees: the answer's fields, or the error's type and text."""
    try:
        result = kb.answer(question, explain=True)
    except KbqError as exc:
        return [type(exc).__name__, str(exc)]
    return {name: getattr(result, name) for name in FIELDS}


def differences(got: object, expected: object, rel_tol: float = 1e-9) -> str:
    if isinstance(got, dict) and isinstance(expected, dict):
        lines = [
            f"{k}:\n  store:    {got.get(k)!r:.1500}\n  embedded: {expected.get(k)!r:.1500}"
            for k in expected
            if not same(got.get(k), expected[k])
        ]
        return "\n".join(lines)
    return f"store: {got!r:.1500}\nembedded: {expected!r:.1500}"


# --- the stores ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def embedded(kb: KnowledgeBase) -> KnowledgeBase:
    return kb


@pytest.fixture(scope="session")
def expected(embedded: KnowledgeBase) -> dict[str, object]:
    """The embedded store's outcomes, computed once for all the stores."""
    return {}


def embedded_outcome(expected: dict[str, object], embedded: KnowledgeBase, question: str) -> object:
    if question not in expected:
        expected[question] = outcome(embedded, question)
    return expected[question]


@pytest.fixture(scope="session")
def exported(embedded: KnowledgeBase, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped KB as `kbq export --format nt` writes it (the command itself: test_remote.py)."""
    from kbq.store.export import export

    assert embedded.store is not None
    path = tmp_path_factory.mktemp("stores") / "kbq.nt"
    path.write_bytes(export(embedded.store, "nt"))
    return path


@pytest.fixture(scope="session")
def rdflib_answers(
    exported: Path, embedded: KnowledgeBase, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[], dict[str, object]]]:
    """rdflib's answers, from a separate process started before the Virtuoso cases
    (their fixtures ask for this one first) and read when the first rdflib case runs."""
    asked = [q for q in QUESTIONS if rdflib_skip(embedded, q) is None]
    out = tmp_path_factory.mktemp("rdflib") / "answers.json"
    log = out.with_suffix(".log")
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, str(STORES / "rdflib_answers.py"), str(exported), str(out)],
            stdin=subprocess.PIPE,
            stdout=err,
            stderr=subprocess.STDOUT,
            # the repository's kbq, not an installed copy: a script's own folder heads sys.path, not the cwd
            env={**kbq_env(), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
            cwd=ROOT,
        )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(asked).encode())
    proc.stdin.close()
    answers: dict[str, object] = {}

    def read() -> dict[str, object]:
        if not answers:
            try:
                proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                pytest.fail("rdflib did not answer within 600 s")
            if proc.returncode != 0:
                pytest.fail(f"rdflib_answers.py exited {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
            answers.update(json.loads(out.read_text(encoding="utf-8")))
        return answers

    yield read
    if proc.poll() is None:
        proc.kill()
        proc.wait()


_SLOW: dict[str, bool] = {}


def rdflib_skip(embedded: KnowledgeBase, question: str) -> str | None:
    """Why rdflib does not answer this question here, or None: it answers every question but those
    with placement constraints, whose EXISTS it evaluates once per candidate row (10-30 s each)."""
    if question not in _SLOW:
        try:
            _SLOW[question] = RDFLIB_TOO_SLOW in embedded.plan(question).sparql
        except KbqError:
            _SLOW[question] = False
    return (
        "placement constraints: rdflib takes 10-30 s a question (test_remote's Oxigraph case and the Virtuoso case cover it)"
        if _SLOW[question]
        else None
    )


@pytest.fixture(scope="session")
def virtuoso(exported: Path, rdflib_answers: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    folder = tmp_path_factory.mktemp("virtuoso")
    script = str(STORES / "virtuoso.sh")
    done = subprocess.run(["bash", script, "start", str(folder), str(exported)], capture_output=True, text=True, timeout=300)
    if done.returncode == 3 and not os.environ.get("CI"):
        pytest.skip(f"Virtuoso 7 is not installed and cannot be installed on this machine: {done.stderr.strip()}")
    if done.returncode != 0:
        pytest.fail(f"tests/stores/virtuoso.sh start failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    url = done.stdout.strip().splitlines()[-1]
    try:
        yield KnowledgeBase.remote(url, timeout=60)
    finally:
        subprocess.run(["bash", script, "stop", str(folder)], capture_output=True, timeout=60)


# --- the cases ----------------------------------------------------------------------------------


def known(question: str, failures: dict[str, str]) -> object:
    """A case, marked as a known failure (strict: it fails once it passes) when listed."""
    reason = failures.get(question)
    return pytest.param(question, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason else question


@pytest.mark.server
def test_virtuoso_holds_the_whole_export(virtuoso: KnowledgeBase, exported: Path) -> None:
    """The bulk load lost nothing: as many triples in the graph as lines in the export."""
    lines = sum(1 for line in exported.read_text(encoding="utf-8").splitlines() if line.strip())
    count = virtuoso.table(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{EXPORT_GRAPH}> {{ ?s ?p ?o }} }}").rows[0][0]
    assert count == lines > 30000


@pytest.mark.server
@pytest.mark.parametrize("question", [known(q, TIED) for q in QUESTIONS])
def test_same_answer_on_virtuoso(
    question: str, virtuoso: KnowledgeBase, embedded: KnowledgeBase, expected: dict[str, object]
) -> None:
    got, want = outcome(virtuoso, question), embedded_outcome(expected, embedded, question)
    assert same(got, want, VIRTUOSO_DIGITS), differences(got, want, VIRTUOSO_DIGITS)


@pytest.mark.parametrize("question", [known(q, {**TIED, **RDFLIB_KNOWN}) for q in QUESTIONS])
def test_same_answer_on_rdflib(
    question: str, rdflib_answers: Callable[[], dict[str, object]], embedded: KnowledgeBase, expected: dict[str, object]
) -> None:
    reason = rdflib_skip(embedded, question)
    if reason is not None:
        pytest.skip(reason)
    got = rdflib_answers()[question]
    want = embedded_outcome(expected, embedded, question)
    if isinstance(want, dict):
        want = {k: v for k, v in want.items() if k != "removed"}  # rdflib answers without --explain (time)
    assert same(got, want), differences(got, want)


def test_the_comparison_can_fail() -> None:
    """`same` is not vacuous: each kind of difference the stores could show is caught."""
    answer = {
        "kind": "gpus",
        "rows": [["g1", "A", 48, 0.1234, "blower, passive"], ["g2", "B", None, 1.0, None]],
        "explanation": ["x"],
    }
    assert same(answer, json.loads(json.dumps(answer)))
    assert same([1, 2.0, "_:b0"], [1.0, 2, "_:x7"])  # int = float, blank node labels ignored
    assert same([0.1 + 0.2], [0.3])  # within 1e-9
    assert not same([0.1234], [0.1235])
    assert same([16.8796], [16.879561047587295], VIRTUOSO_DIGITS) and not same([16.8796], [16.879561047587295])
    assert not same([16.88], [16.8796], VIRTUOSO_DIGITS)
    assert not same([48], [47])
    assert not same([None], [0])
    assert not same([True], [1])  # a boolean is not the number 1 (Virtuoso returns projected booleans as 1)
    assert not same(answer, {**answer, "rows": answer["rows"][::-1]})  # order matters
    assert not same(answer, {**answer, "rows": answer["rows"][:1]})
    assert not same(answer, {**answer, "explanation": ["y"]})
    assert not same(["NoResultError", "a"], ["NoResultError", "b"])
