"""Inference as a pure step: infer(asserted) -> inferred triples, never in place.

OWL-RL closure (the Rust engine `reasonable` by default, `owlrl` as the reference) and the
SPARQL CONSTRUCT rules of ontology/rules/ are applied in turn until nothing new appears.
Build-time only.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pyoxigraph as ox
import rdflib
from rdflib import OWL, RDF, RDFS, XSD, BNode, Literal, URIRef

from kbq.errors import InconsistencyError, KnowledgeFileError

Triple = tuple[rdflib.term.Node, rdflib.term.Node, rdflib.term.Node]
MAX_ROUNDS = 20
_BUILTIN = (
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.w3.org/2002/07/owl#",
    "http://www.w3.org/2001/XMLSchema#",
)
_REFLEXIVE_SCHEMA = {RDFS.subClassOf, RDFS.subPropertyOf, OWL.equivalentClass, OWL.equivalentProperty, OWL.sameAs}
_TOP_SCHEMA = {RDFS.subClassOf, RDFS.domain, RDFS.range}


class Engine(StrEnum):
    REASONABLE = "reasonable"
    OWLRL = "owlrl"


@dataclass(frozen=True)
class Inference:
    inferred: set[Triple]
    rounds: int
    seconds: float


def normalise(triple: Triple) -> Triple | None:
    """Canonical form of a closure triple, or None for triples the snapshot drops.

    Dropped, as axiomatic noise that owlrl emits and `reasonable` does not: triples with a
    literal subject (N-Triples cannot hold them), triples about owl:Nothing or the built-in
    RDF/RDFS/OWL/XSD vocabulary, reflexive subClassOf/subPropertyOf/equivalence/sameAs, and
    `x a owl:Thing`, `subClassOf owl:Thing`, `domain/range owl:Thing`. xsd:string literals
    become plain literals, which RDF 1.1 says are the same term (`reasonable` types them all).
    """
    s, p, o = triple
    if isinstance(s, Literal) or s == OWL.Nothing:
        return None
    if isinstance(s, URIRef) and str(s).startswith(_BUILTIN):
        return None
    if s == o and p in _REFLEXIVE_SCHEMA:
        return None
    if o == OWL.Thing and (p == RDF.type or p in _TOP_SCHEMA):
        return None
    if isinstance(o, Literal) and o.datatype == XSD.string:
        o = Literal(str(o))
    return (s, p, o)


def _closure(triples: set[Triple], engine: Engine) -> set[Triple]:
    if engine is Engine.REASONABLE:
        import reasonable

        reasoner = reasonable.PyReasoner()
        reasoner.from_graph(list(triples))
        produced: Iterable[Triple] = reasoner.reason()
    else:
        import owlrl

        graph = rdflib.Graph()
        for t in triples:
            graph.add(t)
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
        produced = graph
    out = {n for t in produced if (n := normalise(t)) is not None}
    return out | triples


def to_ox(term: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(term, URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    assert isinstance(term, Literal)
    if term.language:
        return ox.Literal(str(term), language=term.language)
    if term.datatype:
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
    return ox.Literal(str(term))


def _from_ox(term: object) -> rdflib.term.Node:
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    assert isinstance(term, ox.Literal)
    if term.language:
        return Literal(term.value, lang=term.language)
    dt = term.datatype.value
    return Literal(term.value) if dt == str(XSD.string) else Literal(term.value, datatype=URIRef(dt))


def load_rules(paths: list[Path]) -> list[tuple[Path, str]]:
    rules = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            ox.Store().query(text)  # parse check against an empty store
        except SyntaxError as exc:
            raise KnowledgeFileError(str(path), None, f"rule does not parse: {exc}") from None
        rules.append((path, text))
    return rules


def _store(triples: set[Triple]) -> ox.Store:
    store = ox.Store()
    store.bulk_extend(ox.Quad(to_ox(s), to_ox(p), to_ox(o)) for s, p, o in triples)
    return store


def _apply_rules(triples: set[Triple], rules: list[tuple[Path, str]]) -> set[Triple]:
    store = _store(triples)
    derived: set[Triple] = set()
    for _path, text in rules:
        for t in store.query(text):
            triple = (_from_ox(t.subject), _from_ox(t.predicate), _from_ox(t.object))
            if (n := normalise(triple)) is not None:
                derived.add(n)
    return derived - triples


def check_consistency(triples: set[Triple], checks: list[tuple[Path, str]]) -> None:
    """Run the inconsistency checks (SELECT ?subject ?message); raise listing every finding."""
    if not checks:
        return
    store = _store(triples)
    found = []
    for path, text in checks:
        for row in store.query(text):
            found.append(f"{row['subject'].value}: {row['message'].value} (check {path.name})")
    if found:
        raise InconsistencyError("inconsistent knowledge:\n  " + "\n  ".join(sorted(set(found))))


def infer(
    asserted: rdflib.Graph,
    rule_paths: list[Path],
    *,
    engine: Engine = Engine.REASONABLE,
    checks: list[Path] | None = None,
) -> Inference:
    """The triples entailed by `asserted` beyond itself (OWL-RL + rules, to a fixpoint)."""
    start = time.perf_counter()
    base = {n for t in asserted if (n := normalise(t)) is not None}
    rules = load_rules(rule_paths)
    current = set(base)
    rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        current = _closure(current, engine)
        new = _apply_rules(current, rules)
        if not new:
            break
        current |= new
    check_consistency(current, load_rules(checks or []))
    return Inference(inferred=current - base, rounds=rounds, seconds=time.perf_counter() - start)
