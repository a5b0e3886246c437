"""Load Turtle files (pyoxigraph's parser: fast, and its errors give the line), remembering
which file states each subject. Build-time only: the query path never imports this module."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import cast

import pyoxigraph as ox
import rdflib
from rdflib import BNode, Literal, URIRef

from kbq.errors import KnowledgeFileError

_LINE = re.compile(r"line (\d+)")
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
Triple = tuple[rdflib.term.Node, rdflib.term.Node, rdflib.term.Node]


def from_ox(term: object) -> rdflib.term.Node:
    """A pyoxigraph term as the rdflib term the reasoners and pyshacl take."""
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


@dataclass
class LoadedKnowledge:
    """The asserted triples and where each subject is stated (for error messages)."""

    triples: list[Triple]
    files: list[Path]
    subject_files: dict[str, set[str]] = field(default_factory=dict)
    ox_triples: list[ox.Triple] = field(default_factory=list)

    @cached_property
    def graph(self) -> rdflib.Graph:
        graph = rdflib.Graph()
        for t in self.triples:
            graph.add(t)
        return graph

    def files_of(self, subject: rdflib.term.Node) -> tuple[str, ...]:
        return tuple(sorted(self.subject_files.get(str(subject), ())))


def parse_file(path: Path) -> list[ox.Triple]:
    """Every triple of a Turtle file; a syntax error names the file and line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KnowledgeFileError(str(path), None, f"cannot read: {exc.strerror}") from None
    try:
        return list(ox.parse(data, format=ox.RdfFormat.TURTLE, base_iri=path.resolve().as_uri()))
    except SyntaxError as exc:
        match = _LINE.search(str(exc))
        raise KnowledgeFileError(str(path), int(match.group(1)) if match else None, str(exc)) from None


def load(files: list[Path]) -> LoadedKnowledge:
    triples: list[Triple] = []
    subject_files: dict[str, set[str]] = defaultdict(set)
    cache: dict[object, rdflib.term.Node] = {}
    parsed: list[ox.Triple] = []
    for path in files:
        part = parse_file(path)
        parsed += part
        for t in part:
            s = cache.get(t.subject) or cache.setdefault(t.subject, from_ox(t.subject))
            p = cache.get(t.predicate) or cache.setdefault(t.predicate, from_ox(t.predicate))
            o = cache.get(t.object) or cache.setdefault(t.object, from_ox(t.object))
            triples.append((s, p, o))
            subject_files[str(s)].add(path.name)
    return LoadedKnowledge(triples=triples, files=files, subject_files=dict(subject_files), ox_triples=parsed)
