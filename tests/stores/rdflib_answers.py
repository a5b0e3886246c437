"""rdflib's SPARQL engine as a third implementation for the store parity test (tests/test_stores.py).

    python tests/stores/rdflib_answers.py EXPORT.nt OUT.json < questions.json

Loads `kbq export --format nt` into an rdflib Graph and answers each question (a JSON list on
stdin) with the plan the embedded KB compiles and every SPARQL query of the answer run by rdflib.
Writes {question: outcome} as JSON, an outcome being the answer's fields or [error type, text].
A separate process, so the test runs it beside the Oxigraph and Virtuoso cases (rdflib is slow).
"""

from __future__ import annotations

import json
import sys

import rdflib
from rdflib.term import BNode, Literal, URIRef

from kbq.api import KnowledgeBase
from kbq.errors import KbqError
from kbq.lang.run import run_plan
from kbq.store.executor import XSD, Table, Value, literal_value

FIELDS = ("kind", "columns", "rows", "units", "explanation", "extra")
LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


def value(term: object) -> Value:
    """An rdflib term as the executor gives it for the embedded store."""
    if term is None:
        return None
    if isinstance(term, URIRef):
        return str(term)
    if isinstance(term, BNode):
        return "_:" + str(term)
    if isinstance(term, Literal):
        datatype = str(term.datatype) if term.datatype else (LANG_STRING if term.language else XSD + "string")
        return literal_value(str(term), datatype)
    return str(term)


def runner(graph: rdflib.Graph):  # type: ignore[no-untyped-def]
    def run(query: str) -> Table:
        result = graph.query(query)
        if result.type == "ASK":
            return Table(columns=["answer"], rows=[[bool(result.askAnswer)]])
        names = list(result.vars or [])
        return Table(columns=[str(v) for v in names], rows=[[value(row[v]) for v in names] for row in result])

    return run


def outcome(question: str, embedded: KnowledgeBase, run) -> object:  # type: ignore[no-untyped-def]
    try:
        result = run_plan(question, embedded.plan(question), embedded.catalog, run)
    except KbqError as exc:
        return [type(exc).__name__, str(exc)]
    except Exception as exc:  # noqa: BLE001 - an rdflib failure is a result to compare, not a crash
        return [type(exc).__name__, str(exc)[:500]]
    return {name: getattr(result, name) for name in FIELDS}


def main() -> None:
    export, out = sys.argv[1], sys.argv[2]
    questions = json.load(sys.stdin)
    graph = rdflib.Graph()
    graph.parse(export, format="nt")
    embedded = KnowledgeBase.default()
    run = runner(graph)
    answers = {q: outcome(q, embedded, run) for q in questions}
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(answers, handle, ensure_ascii=False)


if __name__ == "__main__":
    main()
