"""Load Turtle files into an in-memory pyoxigraph store (its parser is fast, and its errors give
the line). Build-time only: the query path never imports this module.

The asserted triples live in the store's ASSERTED graph, nowhere else: no Python objects per
triple. Which file states a subject is only needed for an error message, so it is found then
(`subject_files` parses the files again). rdflib views (`triples`, `graph`) exist for the
reference engines (owlrl, reasonable) and the reference validator (pySHACL).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import cast

import pyoxigraph as ox

from kbq.errors import KnowledgeFileError
from kbq.store import resources

_LINE = re.compile(r"line (\d+)")
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
_REST = "http://www.w3.org/1999/02/22-rdf-syntax-ns#rest"
_LINKS = (
    _SAME_AS,
    _REST,
    "http://www.w3.org/2000/01/rdf-schema#subClassOf",
    "http://www.w3.org/2002/07/owl#equivalentClass",
)
ASSERTED = ox.NamedNode(resources.ASSERTED_GRAPH)
Triple = tuple["rdflib.term.Node", "rdflib.term.Node", "rdflib.term.Node"]
TYPE_CHECKING = False
if TYPE_CHECKING:
    import rdflib  # the reference engines and validator only: a build does not import it (0.2 s)


def from_ox(term: object) -> rdflib.term.Node:
    """A pyoxigraph term as the rdflib term the reference engines and pySHACL take."""
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    assert isinstance(term, ox.Literal)
    if term.language:
        return Literal(term.value, lang=term.language)
    dt = term.datatype.value
    return Literal(term.value) if dt == _XSD_STRING else Literal(term.value, datatype=URIRef(dt))


def to_ox(term: rdflib.term.Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    from rdflib import BNode, Literal, URIRef

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


def to_ox_quad(s: rdflib.term.Node, p: rdflib.term.Node, o: rdflib.term.Node, graph: ox.NamedNode | None = None) -> ox.Quad:
    """A reasoned triple as a pyoxigraph quad (in the default graph unless `graph` is given).

    reason.normalise drops triples with a literal subject and predicates are always IRIs, so
    the casts only state what rdflib's one Node type cannot."""
    return ox.Quad(cast(ox.NamedNode | ox.BlankNode, to_ox(s)), cast(ox.NamedNode, to_ox(p)), to_ox(o), graph)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KnowledgeFileError(str(path), None, f"cannot read: {exc.strerror}") from None


def _syntax_error(path: Path, exc: SyntaxError) -> KnowledgeFileError:
    match = _LINE.search(str(exc))
    return KnowledgeFileError(str(path), int(match.group(1)) if match else None, str(exc))


def parse_file(path: Path) -> list[ox.Triple]:
    """Every triple of a Turtle file; a syntax error names the file and line."""
    try:
        return list(ox.parse(_read(path), format=ox.RdfFormat.TURTLE, base_iri=path.resolve().as_uri()))
    except SyntaxError as exc:
        raise _syntax_error(path, exc) from None


def load_into(store: ox.Store, files: list[Path], graph: ox.NamedNode = ASSERTED) -> None:
    """Add the triples of Turtle files to `store`'s ASSERTED graph, or `graph` (blank nodes stay
    apart per file)."""
    for path in files:
        try:
            store.load(_read(path), format=ox.RdfFormat.TURTLE, base_iri=path.resolve().as_uri(), to_graph=graph)
        except SyntaxError as exc:
            raise _syntax_error(path, exc) from None


@dataclass
class LoadedKnowledge:
    """The asserted triples (in `store`'s ASSERTED graph) and the files they come from."""

    store: ox.Store
    files: list[Path]
    count: int  # distinct asserted triples (a triple stated in two files is stored once)

    @cached_property
    def subject_files(self) -> dict[str, set[str]]:
        """The files that state each IRI subject (parsed again: only error messages need it)."""
        found: dict[str, set[str]] = defaultdict(set)
        for path in self.files:
            for t in parse_file(path):
                if isinstance(t.subject, ox.NamedNode):
                    found[t.subject.value].add(path.name)
        return dict(found)

    def files_of(self, subject: rdflib.term.Node | ox.NamedNode | ox.BlankNode) -> tuple[str, ...]:
        """The files stating `subject`; for a blank node, those stating the IRI that refers to it."""
        node: object = subject if isinstance(subject, ox.NamedNode | ox.BlankNode) else to_ox(subject)
        for _ in range(8):  # nested blank nodes: climb to the IRI that owns them
            if isinstance(node, ox.NamedNode):
                return tuple(sorted(self.subject_files.get(node.value, ())))
            if not isinstance(node, ox.BlankNode):
                return ()
            owner = next(iter(self.store.quads_for_pattern(None, None, node, ASSERTED)), None)
            if owner is None:
                return ()
            node = owner.subject
        return ()

    def links(self) -> Iterator[tuple[str, str, str]]:
        """The owl:sameAs, rdf:rest, rdfs:subClassOf and owl:equivalentClass triples as strings
        (what the overlay limits look at)."""
        for predicate in _LINKS:
            for q in self.store.quads_for_pattern(None, ox.NamedNode(predicate), None, ASSERTED):
                if not isinstance(q.subject, ox.Triple) and not isinstance(q.object, ox.Triple):
                    yield (q.subject.value, predicate, q.object.value)

    @cached_property
    def triples(self) -> list[Triple]:
        """The asserted triples as rdflib terms (the reference engines only)."""
        cache: dict[object, rdflib.term.Node] = {}
        out: list[Triple] = []
        for q in self.store.quads_for_pattern(None, None, None, ASSERTED):
            s = cache.get(q.subject) or cache.setdefault(q.subject, from_ox(q.subject))
            p = cache.get(q.predicate) or cache.setdefault(q.predicate, from_ox(q.predicate))
            o = cache.get(q.object) or cache.setdefault(q.object, from_ox(q.object))
            out.append((s, p, o))
        return out

    @cached_property
    def graph(self) -> rdflib.Graph:
        """The asserted triples as an rdflib graph (pySHACL, the reference validator)."""
        import rdflib

        graph = rdflib.Graph()
        for t in self.triples:
            graph.add(t)
        return graph


def load(files: list[Path]) -> LoadedKnowledge:
    store = ox.Store()
    load_into(store, files)
    return LoadedKnowledge(store=store, files=list(files), count=len(store))
