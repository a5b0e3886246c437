"""The query guard (kbq.serve.guard), content negotiation and the response cache: no server."""

from __future__ import annotations

import pytest

from kbq.serve.guard import RefusedQuery, check_query
from kbq.serve.sparql import GRAPH_TYPES, RESULT_TYPES, negotiate
from kbq.serve.state import ResponseCache
from kbq.store.resources import ASSERTED_GRAPH, INFERRED_GRAPH

SERVED = frozenset({ASSERTED_GRAPH, INFERRED_GRAPH})

REFUSED = {
    "service": "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
    "service lower case": "select * where { service <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
    "service silent": "SELECT * WHERE { SERVICE SILENT <http://127.0.0.1:9/> { ?s ?p ?o } }",
    "service variable": "SELECT * WHERE { BIND(<http://127.0.0.1:9/> AS ?u) SERVICE ?u { ?s ?p ?o } }",
    "service no spaces": "SELECT*{?a ?b ?c FILTER(?c<?a)SERVICE<http://127.0.0.1:9/>{?s ?p ?o}}",
    "service after CR comment": "SELECT * { ?s ?p ?o } # note\rSERVICE <http://127.0.0.1:9/> { }",
    "service after escaped # in a name": "PREFIX e: <http://e/> SELECT * { ?s e:a\\#b ?o . SERVICE <http://127.0.0.1:9/> {} }",
    "load": "LOAD <http://127.0.0.1:9/data.ttl>",
    "load into graph": "LOAD SILENT <file:///etc/passwd> INTO GRAPH <urn:x>",
    "insert data": "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
    "delete where": "PREFIX x: <urn:> DELETE WHERE { ?s ?p ?o }",
    "clear": "CLEAR ALL",
    "drop": "DROP DEFAULT",
    "from http": "SELECT * FROM <http://127.0.0.1:9/g.ttl> WHERE { ?s ?p ?o }",
    "from file": "SELECT * FROM <file:///etc/passwd> WHERE { ?s ?p ?o }",
    "from named": "SELECT * FROM NAMED <http://127.0.0.1:9/g> WHERE { GRAPH ?g { ?s ?p ?o } }",
    "from prefixed name": "PREFIX w: <http://127.0.0.1:9/> SELECT * FROM w:g WHERE { ?s ?p ?o }",
    "from relative iri resolved by BASE": "BASE <http://127.0.0.1:9/> SELECT * FROM <g> WHERE { ?s ?p ?o }",
    "from unknown prefix": "SELECT * FROM nope:g WHERE { ?s ?p ?o }",
    "unreadable character": "SELECT * WHERE { ?s ?p ?o } `",
    "unterminated string": 'SELECT * WHERE { ?s ?p "abc }',
    "no query form": "PREFIX x: <urn:x>",
}

ACCEPTED = {
    "service in a comment": "SELECT * WHERE { ?s ?p ?o } # SERVICE <http://127.0.0.1:9/>",
    "service in a string": 'SELECT ?x WHERE { BIND("SERVICE <http://127.0.0.1:9/> {}" AS ?x) }',
    "service in a long string": "SELECT ?x WHERE { BIND('''a\nSERVICE <http://127.0.0.1:9/> { }''' AS ?x) }",
    "service in an iri": "SELECT * WHERE { ?s <http://example.org/SERVICE> ?o }",
    "service as a variable and a name": "PREFIX e: <http://e/> SELECT ?SERVICE WHERE { ?SERVICE e:LOAD e:SERVICE }",
    "load in a string with an escaped quote": 'SELECT * WHERE { ?s ?p "say \\"LOAD <http://x>\\"" }',
    "less-than comparisons": "SELECT * WHERE { ?s ?p ?o FILTER(1<2&&3>2) FILTER(?o < 5 || ?o >= 1.5e3) }",
    "from the served graphs": f"SELECT * FROM <{ASSERTED_GRAPH}> FROM NAMED <{INFERRED_GRAPH}> WHERE {{ ?s ?p ?o }}",
    "from through a prefix": "PREFIX g: <https://kbq.dev/graph/> SELECT * FROM g:inferred WHERE { ?s ?p ?o }",
    "graph keyword": "SELECT * WHERE { GRAPH <http://anything/> { ?s ?p ?o } }",
    "describe": "DESCRIBE <https://kbq.dev/kb/TitanRTX>",
    "construct": "CONSTRUCT WHERE { ?s ?p ?o } LIMIT 1",
    "ask": "ask {}",
}


@pytest.mark.parametrize("query", REFUSED.values(), ids=REFUSED.keys())
def test_refused(query: str) -> None:
    with pytest.raises(RefusedQuery):
        check_query(query, SERVED)


@pytest.mark.parametrize("query", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted(query: str) -> None:
    check_query(query, SERVED)


def test_refusals_say_why() -> None:
    with pytest.raises(RefusedQuery, match=r"SERVICE is refused .*never sends queries.*this endpoint never does"):
        check_query(REFUSED["service"], SERVED)
    with pytest.raises(RefusedQuery, match="read-only"):
        check_query(REFUSED["load"], SERVED)
    with pytest.raises(RefusedQuery, match=r"FROM <http://127.0.0.1:9/g.ttl> is refused.*only <https://kbq.dev/graph"):
        check_query(REFUSED["from http"], SERVED)


def test_form_and_dataset() -> None:
    checked = check_query(ACCEPTED["from the served graphs"], SERVED)
    assert (checked.form, checked.default_graphs, checked.named_graphs) == ("SELECT", (ASSERTED_GRAPH,), (INFERRED_GRAPH,))
    assert check_query("PREFIX a: <urn:a> CONSTRUCT WHERE { ?s ?p ?o }", SERVED).form == "CONSTRUCT"
    assert not check_query("ASK {}", SERVED).has_dataset


def test_every_compiled_question_passes_the_guard(golden_sparql: list[str]) -> None:
    for query in golden_sparql:
        check_query(query, SERVED)


@pytest.fixture(scope="module")
def golden_sparql() -> list[str]:
    """Every SPARQL query the golden questions make the engine run (catalog reads included)."""
    from server_helpers import golden_questions, kbq_env

    from kbq.api import KnowledgeBase
    from kbq.errors import KbqError

    kbq_env()
    seen: list[str] = []
    base = KnowledgeBase.default()
    kb = KnowledgeBase(lambda q: seen.append(q) or base.table(q))  # type: ignore[func-returns-value]
    for question in golden_questions():
        try:
            kb.answer(question, explain=True)
        except KbqError:
            pass
    assert len(seen) > 10
    return seen


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, "application/sparql-results+json"),
        ("*/*", "application/sparql-results+json"),
        ("text/csv", "text/csv"),
        ("text/*", "text/csv"),
        ("application/sparql-results+xml;q=0.5, text/tab-separated-values", "text/tab-separated-values"),
        ("application/json", "application/json"),
        ("text/html, */*;q=0.1", "application/sparql-results+json"),
        ("text/html", None),
        ("text/csv;q=0", None),
    ],
)
def test_negotiate_results(accept: str | None, expected: str | None) -> None:
    assert negotiate(accept, list(RESULT_TYPES)) == expected


def test_negotiate_graphs() -> None:
    assert negotiate("application/ld+json", list(GRAPH_TYPES)) == "application/ld+json"
    assert negotiate("application/n-triples, text/turtle;q=0.9", list(GRAPH_TYPES)) == "application/n-triples"
    assert negotiate("*/*", list(GRAPH_TYPES)) == "text/turtle"


def test_cache_keeps_recent_and_small() -> None:
    cache = ResponseCache(2, max_body=4)
    cache.put("a", b"1")
    cache.put("b", b"2")
    assert cache.get("a") == b"1"
    cache.put("c", b"3")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (b"1", None, b"3")
    cache.put("big", b"12345")
    assert cache.get("big") is None
    off = ResponseCache(0)
    off.put("a", b"1")
    assert off.get("a") is None
