"""KBQ_DATA_DIR and the tests' tiny knowledge base (tests/data/tiny_kb, scripts/gen_tiny_kb.py).

The setting points the library, the command and the server at another kb/ folder: a question is
answered from it, in a snapshot of its own, and the shipped snapshot is not touched. The tiny KB is
shipped knowledge only (every triple is a shipped one, so every number keeps its source), and it
validates and reasons as the shipped KB does: the tests that use it instead of the shipped KB test
the same code paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from cli_helpers import run_in_process
from conftest import ROOT, TINY_KB

from kbq.build import loader
from kbq.build.validate import violations
from kbq.store import resources, snapshot

GPU = "https://kbq.dev/ontology#GPU"
LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def _triples(path: Path) -> set[ox.Triple]:
    return {q.triple for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)}


def _tiny_gpu_names() -> set[str]:
    """The labels of the GPUs the tiny KB's files declare (read from the files, not from kbq)."""
    triples = set().union(*(_triples(p) for p in (TINY_KB / "kb").glob("*.ttl")))
    gpus = {t.subject for t in triples if t.predicate == TYPE and t.object == ox.NamedNode(GPU)}
    return {t.object.value for t in triples if t.subject in gpus and t.predicate == LABEL}  # type: ignore[union-attr]


def _ground(triples: set[ox.Triple]) -> set[ox.Triple]:
    return {t for t in triples if not isinstance(t.subject, ox.BlankNode) and not isinstance(t.object, ox.BlankNode)}


def test_the_tiny_kb_is_shipped_knowledge_only() -> None:
    """Each tiny file is a subset of the shipped file of its name (blank nodes aside: they are
    relabelled), so every number in it has the shipped source; and it is much smaller."""
    shipped = ROOT / "kb"
    tiny_files = sorted((TINY_KB / "kb").glob("*.ttl"))
    assert len(tiny_files) > 20 and not (TINY_KB / "ontology").exists()  # the shipped ontology, shapes and rules
    total = 0
    for path in tiny_files:
        mine = _triples(path)
        total += len(mine)
        stale = _ground(mine) - _ground(_triples(shipped / path.name))
        assert not stale, f"{path.name} states what kb/{path.name} no longer does: run python scripts/gen_tiny_kb.py"
    assert 3000 < total < sum(len(_triples(p)) for p in shipped.glob("*.ttl")) // 4
    assert len(_tiny_gpu_names()) == 10


def test_the_tiny_kb_validates_as_the_shipped_one(tiny_kb: Path) -> None:
    files = resources.knowledge_files()
    assert files and all(TINY_KB in f.parents or f.parent.name == "ontology" for f in files)
    assert resources.shapes_path() == str(ROOT / "ontology" / "shapes.ttl") or "_data" in resources.shapes_path()
    loaded = loader.load(files)
    assert violations(loaded, validator="sparql") == violations(loaded, validator="rudof") == []
    assert violations(loaded, validator="pyshacl") == []


def test_the_three_engines_give_the_same_entailments_on_the_tiny_kb(tiny_kb: Path) -> None:
    """owlrl, the reference, over the shipped ontology and the tiny KB (seconds, where the
    hand-written KB takes minutes: tests/test_reasoning.py)."""
    from test_reasoning import _three_engines_agree

    _three_engines_agree(resources.knowledge_files(), at_least=500)


def _derived_by_each_rule(files: list[Path]) -> dict[str, int]:
    """Rule file -> how many of the closure's inferred triples it derives (the build's engine)."""
    from kbq.build import closure

    loaded = loader.load(files)
    closure.infer_in_store(loaded.store, resources.rule_files())
    graphs = {resources.ASSERTED_GRAPH, resources.INFERRED_GRAPH}
    inferred = {q.triple for q in loaded.store.quads_for_pattern(None, None, None, ox.NamedNode(resources.INFERRED_GRAPH))}
    union = ox.Store()
    union.bulk_extend(
        ox.Quad(q.subject, q.predicate, q.object)
        for q in loaded.store.quads_for_pattern(None, None, None, None)
        if isinstance(q.graph_name, ox.NamedNode) and q.graph_name.value in graphs
    )
    return {
        p.name: sum(t in inferred for t in union.query(p.read_text(encoding="utf-8")))  # type: ignore[union-attr]
        for p in [*resources.owlrl_rule_files(), *resources.rule_files()]
    }


def test_every_rule_the_hand_written_kb_uses_derives_something_in_the_tiny_kb(monkeypatch: pytest.MonkeyPatch) -> None:
    """What lets the tiny KB stand in for the hand-written one in the owlrl comparison (the
    full lane's; the hand-written KB's is `scale`): the same OWL-RL rules and kbq rules fire."""
    from test_reasoning import _without_generated

    monkeypatch.delenv("KBQ_DATA_DIR", raising=False)
    hand = _derived_by_each_rule(_without_generated())
    monkeypatch.setenv("KBQ_DATA_DIR", str(TINY_KB))
    tiny = _derived_by_each_rule(resources.knowledge_files())
    assert sum(hand.values()) > 5000 and sum(tiny.values()) > 500
    assert [name for name, n in hand.items() if n and not tiny[name]] == []


def test_a_question_gets_the_tiny_kbs_answer_and_the_shipped_snapshot_is_untouched(cache_dir: Path) -> None:
    """The same command, with and without KBQ_DATA_DIR, in this process: each answers from its
    own snapshot, and building the tiny one leaves the shipped one's folder as it was."""
    shipped = snapshot.snapshot_path()

    def store_files() -> dict[str, tuple[int, int]]:
        """The shipped snapshot's store files and manifest (not the plans and catalog other workers add beside them)."""
        names = [*snapshot._read_manifest(shipped)["contents"], snapshot.MANIFEST_DATA]  # type: ignore[misc]
        return {n: (os.stat(os.path.join(shipped, n)).st_size, os.stat(os.path.join(shipped, n)).st_mtime_ns) for n in names}

    before = store_files()
    tiny = run_in_process("gpus", "--format", "json", env={"KBQ_DATA_DIR": str(TINY_KB)})
    assert tiny.returncode == 0, tiny.stderr
    answer = json.loads(tiny.stdout)
    names = {row[answer["columns"].index("name")] for row in answer["rows"]}
    assert names == _tiny_gpu_names()
    assert snapshot.snapshot_path() == shipped  # the shipped KB's key is unchanged
    assert store_files() == before and snapshot.problem(shipped) is None
    again = run_in_process("gpus", "--format", "json", env={"KBQ_DATA_DIR": None})
    assert len(json.loads(again.stdout)["rows"]) > 100
    question = "best gpu for bert on dense 9-card chassis as of 2020-03"
    best = json.loads(run_in_process(question, "--format", "json", env={"KBQ_DATA_DIR": str(TINY_KB)}).stdout)
    assert best["rows"][0][best["columns"].index("name")] in _tiny_gpu_names()


def test_a_real_process_reads_kbq_data_dir(cache_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kbq", "sparql", f"SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE {{ ?g a <{GPU}> }}", "--format", "csv"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KBQ_DATA_DIR": str(TINY_KB)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == str(len(_tiny_gpu_names()))


@pytest.mark.parametrize("what", ["missing", "no kb folder"])
def test_a_wrong_kbq_data_dir_is_named(tmp_path: Path, what: str) -> None:
    folder = tmp_path / "nowhere" if what == "missing" else tmp_path
    done = run_in_process("gpus", env={"KBQ_DATA_DIR": str(folder)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "KBQ_DATA_DIR" in done.stderr and str(folder) in done.stderr
    assert ("is not a folder" if what == "missing" else "holds no kb/ folder") in done.stderr


@pytest.mark.server
def test_the_server_serves_the_tiny_kb(cache_dir: Path) -> None:
    from server_helpers import start_kbq

    server = start_kbq(env={"KBQ_DATA_DIR": str(TINY_KB)})
    try:
        query = f"SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE {{ ?g a <{GPU}> }}"
        reply = httpx.get(server.url + "/sparql", params={"query": query}, headers={"Accept": "application/sparql-results+json"})
        assert reply.status_code == 200, reply.text
        assert int(reply.json()["results"]["bindings"][0]["n"]["value"]) == len(_tiny_gpu_names())
    finally:
        server.stop()
