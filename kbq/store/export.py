"""Serialise the inferred graph for external SPARQL stores (`kbq export`).

`nt` and `ttl` hold every triple once, asserted and inferred merged into one default graph:
the union the kbq language queries, so a store that loads the file answers like the
embedded engine. `nq` keeps the two named graphs apart.
"""

from __future__ import annotations

import pyoxigraph as ox

from kbq.store.resources import KB_NS, KBQ_NS

FORMATS = {"nt": ox.RdfFormat.N_TRIPLES, "ttl": ox.RdfFormat.TURTLE, "nq": ox.RdfFormat.N_QUADS}
PREFIXES = {
    "kbq": KBQ_NS,
    "kb": KB_NS,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dcterms": "http://purl.org/dc/terms/",
}


def triples(store: ox.Store) -> list[ox.Triple]:
    """Every triple of every graph, once, in a stable order."""
    unique = {ox.Triple(q.subject, q.predicate, q.object) for q in store.quads_for_pattern(None, None, None, None)}
    return sorted(unique, key=str)


def export(store: ox.Store, fmt: str = "nt") -> bytes:
    """The graph as N-Triples, Turtle (union, deduplicated) or N-Quads (graphs kept)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: use one of {', '.join(FORMATS)}")
    if fmt == "nq":
        quads = sorted(store.quads_for_pattern(None, None, None, None), key=str)
        return ox.serialize(quads, format=FORMATS[fmt]) or b""
    prefixes = PREFIXES if fmt == "ttl" else None
    return ox.serialize(triples(store), format=FORMATS[fmt], prefixes=prefixes) or b""
