"""kbq on an external SPARQL store: `kbq export` loaded into a real Oxigraph server, then every
golden question through KnowledgeBase.remote(url) must give the embedded engine's answer, every
field exactly (the Oxigraph case of the store parity: test_stores.py compares Virtuoso and rdflib)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from server_helpers import ROOT, ServerProcess, cli_json, golden_questions, kbq_env, oxigraph_binary, shared_kbq, start_oxigraph

from kbq.api import KnowledgeBase
from kbq.errors import KbqError, QueryTimeoutError, SparqlError
from kbq.store.remote import EndpointError, binding_value, parse_json_results, remote_select

FIELDS = ("question", "kind", "columns", "rows", "units", "sparql", "explanation", "removed", "extra")
XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.fixture(scope="module")
def embedded() -> KnowledgeBase:
    kbq_env()
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`kbq export` (the command) as N-Triples."""
    out = tmp_path_factory.mktemp("export") / "kbq.nt"
    subprocess.run(
        [sys.executable, "-m", "kbq", "export", "--format", "nt", "-o", str(out)],
        check=True,
        env=kbq_env(),
        cwd=ROOT,
        capture_output=True,
        timeout=300,
    )
    return out


@pytest.fixture(scope="module")
def oxigraph(exported: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    if oxigraph_binary() is None:
        pytest.fail("the oxigraph binary is missing: pip install 'kbq[test]' (it brings the oxigraph package)")
    server = start_oxigraph(exported, tmp_path_factory.mktemp("oxigraph"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def remote(oxigraph: ServerProcess) -> KnowledgeBase:
    return KnowledgeBase.remote(oxigraph.url + "/query", timeout=30)


def outcome(kb: KnowledgeBase, question: str) -> object:
    """The answer's fields, or the error's type and text: what a user of either engine sees."""
    try:
        result = kb.answer(question, explain=True)
    except KbqError as exc:
        return (type(exc).__name__, str(exc))
    return {name: getattr(result, name) for name in FIELDS}


@pytest.mark.server
@pytest.mark.parametrize("question", golden_questions())
def test_golden_question_same_on_oxigraph(question: str, remote: KnowledgeBase, embedded: KnowledgeBase) -> None:
    assert outcome(remote, question) == outcome(embedded, question)


@pytest.mark.server
def test_export_formats_hold_the_same_triples(exported: Path, embedded: KnowledgeBase) -> None:
    from kbq.store.export import export

    assert embedded.store is not None
    nt = set(ox.parse(exported.read_bytes(), format=ox.RdfFormat.N_TRIPLES))
    ttl = set(ox.parse(export(embedded.store, "ttl"), format=ox.RdfFormat.TURTLE))
    assert len(nt) == len(ttl) > 1000
    assert {str(t) for t in nt if not isinstance(t.subject, ox.BlankNode) and not isinstance(t.object, ox.BlankNode)} == {
        str(t) for t in ttl if not isinstance(t.subject, ox.BlankNode) and not isinstance(t.object, ox.BlankNode)
    }
    quads = list(ox.parse(export(embedded.store, "nq"), format=ox.RdfFormat.N_QUADS))
    # the name index travels with the export, so a remote store answers name look-ups the same way
    assert {q.graph_name.value for q in quads} == {
        "https://kbq.dev/graph/asserted",
        "https://kbq.dev/graph/inferred",
        "https://kbq.dev/graph/names",
    }


@pytest.mark.server
def test_endpoint_option_of_the_command(oxigraph: ServerProcess) -> None:
    question = "gpu for lstm where cooling=blower"

    assert cli_json(question, "--endpoint", oxigraph.url + "/query") == cli_json(question)


@pytest.mark.server
def test_remote_kbq_serve(embedded: KnowledgeBase) -> None:
    """A `kbq serve` endpoint is an external store too (every compiled query passes its guard)."""
    served = KnowledgeBase.remote(shared_kbq().url + "/sparql")
    question = "why quadro rtx 8000 for bert"
    assert outcome(served, question) == outcome(embedded, question)


def test_binding_values() -> None:
    assert binding_value({"type": "uri", "value": "https://kbq.dev/kb/X"}) == "https://kbq.dev/kb/X"
    assert binding_value({"type": "bnode", "value": "b0"}) == "_:b0"
    assert binding_value({"type": "literal", "value": "48", "datatype": XSD + "integer"}) == 48
    assert binding_value({"type": "literal", "value": "32.6", "datatype": XSD + "decimal"}) == 32.6
    assert binding_value({"type": "literal", "value": "true", "datatype": XSD + "boolean"}) is True
    assert binding_value({"type": "literal", "value": "GPU", "xml:lang": "en"}) == "GPU"
    assert binding_value({"type": "typed-literal", "value": "7", "datatype": XSD + "int"}) == 7
    assert binding_value(None) is None


def test_parse_json_results() -> None:
    table = parse_json_results(b'{"head":{"vars":["a","b"]},"results":{"bindings":[{"a":{"type":"literal","value":"x"}}]}}')
    assert (table.columns, table.rows) == (["a", "b"], [["x", None]])
    assert parse_json_results(b'{"head":{},"boolean":false}').rows == [[False]]
    with pytest.raises(EndpointError):
        parse_json_results(b"<html>")


def test_remote_errors(oxigraph: ServerProcess) -> None:
    with pytest.raises(SparqlError, match="refused the query"):
        remote_select(oxigraph.url + "/query", "SELECT * WHERE { ?s ?p }")
    with pytest.raises(EndpointError, match="cannot reach"):
        remote_select("http://127.0.0.1:9/sparql", "ASK {}", timeout=2)
    with pytest.raises(EndpointError, match="not an http"):
        remote_select("file:///etc/passwd", "ASK {}")
    assert issubclass(QueryTimeoutError, KbqError)
