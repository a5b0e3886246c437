"""Inference as a pure step: infer(asserted) -> inferred triples, never in place.

OWL-RL closure (the Rust engine `reasonable` by default, `owlrl` as the reference) and the
SPARQL CONSTRUCT rules of ontology/rules/ are applied in turn until nothing new appears;
then the SELECT checks of ontology/checks/ look for contradictions. Build-time only.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pyoxigraph as ox
import rdflib
from rdflib import OWL, RDF, RDFS, XSD, Literal, URIRef

from kbq.build.loader import Triple, from_ox, to_ox_quad
from kbq.build.rules import check_consistency, is_monotonic, load_rules
from kbq.errors import KnowledgeFileError

__all__ = ["Engine", "Inference", "check_consistency", "infer", "is_monotonic", "load_rules", "normalise"]

MAX_ROUNDS = 20
_BUILTIN = (
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.w3.org/2002/07/owl#",
    "http://www.w3.org/2001/XMLSchema#",
)
_REFLEXIVE_SCHEMA = {RDFS.subClassOf, RDFS.subPropertyOf, OWL.equivalentClass, OWL.equivalentProperty, OWL.sameAs}
_TOP_SCHEMA = {RDFS.subClassOf, RDFS.domain, RDFS.range}
_TYPE, _THING, _NOTHING, _XSD_STRING = RDF.type, OWL.Thing, OWL.Nothing, XSD.string


class Engine(StrEnum):
    SPARQL = "sparql"  # the OWL-RL subset as SPARQL rules in the store (kbq.build.closure); the default
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
    if isinstance(s, Literal) or s == _NOTHING:
        return None
    if isinstance(s, URIRef) and str(s).startswith(_BUILTIN):
        return None
    if s == o and p in _REFLEXIVE_SCHEMA:
        return None
    if o == _THING and (p == _TYPE or p in _TOP_SCHEMA):
        return None
    if isinstance(o, Literal) and o.datatype == _XSD_STRING:
        o = Literal(str(o))
    return (s, p, o)


class _Closure:
    """An OWL-RL engine fed triples in batches; each call returns the whole closure so far."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        if engine is Engine.REASONABLE:
            import reasonable

            self._reasoner = reasonable.PyReasoner()
        else:
            self._graph = rdflib.Graph()

    def add(self, triples: Iterable[Triple]) -> Iterable[Triple]:
        if self.engine is Engine.REASONABLE:
            self._reasoner.from_graph(list(triples))  # appends; the next reason() is incremental
            return self._reasoner.reason()
        import owlrl

        for t in triples:
            self._graph.add(t)
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(self._graph)
        return self._graph


def _add(store: ox.Store, triples: Iterable[Triple]) -> None:
    store.bulk_extend(to_ox_quad(s, p, o) for s, p, o in triples)


def _apply_rules(store: ox.Store, rules: list[tuple[Path, str]], known: set[Triple]) -> tuple[set[Triple], list[Path]]:
    """The new triples the rules derive, and which rules derived them."""
    derived: set[Triple] = set()
    deriving: list[Path] = []
    for path, text in rules:
        result = store.query(text)
        if not isinstance(result, ox.QueryTriples):  # load_rules checked the form
            raise KnowledgeFileError(str(path), None, "a rule must be a CONSTRUCT query")
        before = len(derived)
        for t in result:
            triple = (from_ox(t.subject), from_ox(t.predicate), from_ox(t.object))
            if triple not in known and (n := normalise(triple)) is not None and n not in known:
                derived.add(n)
        if len(derived) > before:
            deriving.append(path)
    return derived, deriving


def infer(
    asserted: Iterable[Triple],
    rule_paths: list[Path],
    *,
    engine: Engine = Engine.REASONABLE,
    checks: list[Path] | None = None,
) -> Inference:
    """The triples entailed by `asserted` beyond itself (OWL-RL + rules, to a fixpoint), with
    owlrl or `reasonable` (the rdflib-based reference engines; the build's default engine is
    kbq.build.closure). The rules that only add (monotonic) go first, to a fixpoint; then all."""
    if engine is Engine.SPARQL:
        raise ValueError("the sparql engine reasons in a store: kbq.build.closure.infer_in_store")
    start = time.perf_counter()
    base = {n for t in asserted if (n := normalise(t)) is not None}
    rules = load_rules(rule_paths)
    closure = _Closure(engine)
    known = set(base)
    store = ox.Store()
    _add(store, base)
    pending: set[Triple] = base
    seen: set[Triple] = set()  # closure triples already normalised (each round returns the whole closure again)
    rounds = 0
    deriving: list[Path] = []
    for stage in ([r for r in rules if is_monotonic(r[1])], rules):
        if rounds and not stage:
            continue
        while rounds < MAX_ROUNDS:
            rounds += 1
            # nothing pending (the second stage's first round): the closure is the last round's, unchanged
            fresh = [t for t in closure.add(pending) if t not in seen] if pending or not seen else []
            seen.update(fresh)
            new = {n for t in fresh if t not in known and (n := normalise(t)) is not None and n not in known}
            known |= new
            _add(store, new)
            pending, deriving = _apply_rules(store, stage, known)
            if not pending:
                break
            known |= pending
            _add(store, pending)
        else:
            raise KnowledgeFileError(
                ", ".join(str(p) for p in deriving),
                None,
                f"the rules still derive new triples after {MAX_ROUNDS} rounds ({len(pending)} in the last one): "
                "a rule that makes new terms each round never reaches a fixpoint",
            )
    check_consistency(store, load_rules(checks or [], form="SELECT"))
    return Inference(inferred=known - base, rounds=rounds, seconds=time.perf_counter() - start)
