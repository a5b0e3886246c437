"""The on-disk snapshot: keyed by inputs, rebuilt on change or corruption, safe to race."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kbq.build import pipeline
from kbq.store import snapshot

OVERLAY = """@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
kb:NVIDIA rdfs:comment "{text}" .
"""


@pytest.fixture()
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_kb: Path) -> Path:
    """A cache of the test's own, for the tests' tiny KB (KBQ_DATA_DIR): the shipped KB's build
    code, a fraction of its build time."""
    monkeypatch.setenv("KBQ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_key_changes_only_when_an_input_changes(tmp_path: Path) -> None:
    overlay = tmp_path / "o.ttl"
    overlay.write_text(OVERLAY.format(text="one"))
    first = snapshot.input_key(snapshot.input_files([overlay]), "reasonable")
    assert snapshot.input_key(snapshot.input_files([overlay]), "reasonable") == first
    assert snapshot.input_key(snapshot.input_files([overlay]), "owlrl") != first
    overlay.write_text(OVERLAY.format(text="two"))
    assert snapshot.input_key(snapshot.input_files([overlay]), "reasonable") != first


def test_built_once_then_reused(private_cache: Path) -> None:
    messages: list[str] = []
    _store, info = pipeline.ensure(progress=messages.append)
    assert messages and info.asserted > 3000 and info.inferred > 500
    messages.clear()
    _store2, again = pipeline.ensure(progress=messages.append)
    assert messages == [] and again.key == info.key


def test_a_corrupt_snapshot_is_rebuilt(private_cache: Path) -> None:
    _store, info = pipeline.ensure()
    del _store
    path = Path(info.path)
    (path / snapshot.MANIFEST).write_text("{not json")
    for f in path.iterdir():
        if f.is_file() and f.name != snapshot.MANIFEST:
            f.write_bytes(b"\0" * 10)
    store, rebuilt = pipeline.ensure()
    assert rebuilt.key == info.key and rebuilt.path != info.path  # a new version; the damaged one is gone
    assert len(store) > 3000
    assert json.loads((Path(rebuilt.path) / snapshot.MANIFEST).read_text())["key"] == info.key
    assert snapshot.problem(str(path)) is not None  # kept only while this process still holds it


def test_a_truncated_snapshot_without_manifest_is_rebuilt(private_cache: Path) -> None:
    _store, info = pipeline.ensure()
    del _store
    (Path(info.path) / snapshot.MANIFEST).unlink()
    store, _ = pipeline.ensure()
    assert len(store) > 3000


def test_two_processes_building_at_once(private_cache: Path) -> None:
    code = "from kbq.build import pipeline; s, i = pipeline.ensure(); print(len(s))"
    env = {**os.environ, "KBQ_CACHE_DIR": str(private_cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    counts = {int(o.strip()) for o, _ in outs}
    assert len(counts) == 1
    leftovers = [p.name for p in private_cache.iterdir() if ".tmp-" in p.name]
    assert leftovers == []


def test_query_path_imports_neither_rdflib_nor_owlrl(kb) -> None:
    code = (
        "import sys; from kbq import KnowledgeBase; kb = KnowledgeBase.default();"
        "kb.table('SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }');"
        "kb.answer('gpu for lstm where cooling=blower');"
        "print(sorted(m for m in ('rdflib', 'owlrl', 'pyshacl', 'reasonable') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_cached_catalog_equals_a_fresh_read(kb) -> None:
    from kbq.lang.catalog import Catalog

    fresh = Catalog.read(kb.table)
    assert kb.catalog is not None  # written beside the snapshot on first use
    cached = Catalog.cached(kb.info.path, kb.table)
    assert cached._data() == fresh._data() and len(fresh.keys) > 40 and fresh.modes and fresh.settings


def test_a_tampered_catalog_cache_is_read_again(kb) -> None:
    """One flipped byte in the cached catalog: the checksum refuses it and the store is read again."""
    from kbq.lang.catalog import CATALOG, Catalog

    assert kb.catalog is not None
    path = os.path.join(kb.info.path, CATALOG)
    blob = bytearray(open(path, "rb").read())
    blob[-3] ^= 0x01
    with open(path, "wb") as handle:
        handle.write(bytes(blob))
    assert Catalog.cached(kb.info.path, kb.table)._data() == Catalog.read(kb.table)._data()
    assert open(path, "rb").read() != bytes(blob)  # rewritten whole


def _graph_sizes(store) -> dict[str, int]:  # type: ignore[no-untyped-def]
    rows = store.query("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g")
    return {row["g"].value: int(row["n"].value) for row in rows}


def test_the_snapshot_keeps_each_graph_apart(kb) -> None:  # type: ignore[no-untyped-def]
    """The store is written by another process from dumps (kbq/build/snapshot_writer.py): each
    graph arrives whole and under its own name, and nothing lands in the default graph."""
    import pyoxigraph as ox

    from kbq.store import names, resources

    store, info = pipeline.ensure()
    sizes = _graph_sizes(store)
    assert sizes[resources.ASSERTED_GRAPH] == info.asserted
    assert sizes[resources.INFERRED_GRAPH] == info.inferred
    assert sizes[names.NAMES_GRAPH] > 1000
    assert next(iter(store.quads_for_pattern(None, None, None, ox.DefaultGraph())), None) is None
    assert not {"asserted.nt", "rest.nq"} & {p.name for p in Path(info.path).iterdir()}  # the writer's files are gone


def test_inferred_statements_about_blank_nodes_keep_their_nodes(private_cache: Path, tmp_path: Path) -> None:
    """The two parts of the store (asserted, then inferred) name the same blank nodes."""
    from kbq.store import resources

    overlay = tmp_path / "blank.ttl"
    overlay.write_text("@prefix kbq: <https://kbq.dev/ontology#> .\n[] a kbq:LSTM .\n")
    store, _info = pipeline.ensure([overlay])
    query = f"""SELECT (COUNT(*) AS ?n) WHERE {{
      GRAPH <{resources.INFERRED_GRAPH}> {{ ?b a <https://kbq.dev/ontology#RNN> }} FILTER isBlank(?b)
      GRAPH <{resources.ASSERTED_GRAPH}> {{ ?b a <https://kbq.dev/ontology#LSTM> }} }}"""
    assert int(next(iter(store.query(query)))["n"].value) == 1


def test_a_failed_build_stops_its_writer(private_cache: Path, tmp_path: Path) -> None:
    """A build that fails validation leaves no snapshot writer running and no work folder."""
    from kbq.errors import ValidationError

    bad = tmp_path / "bad.ttl"
    bad.write_text(
        "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        'kb:MyCard a kbq:GPU ; rdfs:label "My Card" ; kbq:memory -4.0 .\n'
    )
    with pytest.raises(ValidationError):
        pipeline.ensure([bad])

    def writers() -> list[str]:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "snapshot_writer.py" in command and str(private_cache) in command:
                found.append(command)
        return found

    assert writers() == []
    assert not [p for p in private_cache.iterdir() if ".tmp-" in p.name]


def test_without_an_interpreter_to_start_the_build_writes_the_store_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedded Python (no sys.executable) cannot start the writer process: same snapshot."""
    import pyoxigraph as ox

    from kbq.store import resources

    monkeypatch.setattr(sys, "executable", "")
    info = pipeline.build(tmp_path / "snapshot-embedded")
    store = ox.Store.read_only(info.path)
    sizes = _graph_sizes(store)
    assert sizes[resources.ASSERTED_GRAPH] == info.asserted and sizes[resources.INFERRED_GRAPH] == info.inferred
    assert not {"asserted.nt", "rest.nq"} & {p.name for p in Path(info.path).iterdir()}
