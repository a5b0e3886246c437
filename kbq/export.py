"""Serialise the inferred graph (asserted + inferred, one default graph) for external stores."""

from __future__ import annotations

import pyoxigraph as ox

FORMATS = {"nt": ox.RdfFormat.N_TRIPLES, "ttl": ox.RdfFormat.TURTLE, "nq": ox.RdfFormat.N_QUADS}


def export(store: ox.Store, fmt: str = "nt") -> bytes:
    """Every triple once, graphs merged (the union the kbq language queries)."""
    seen = set()
    triples = []
    for quad in store.quads_for_pattern(None, None, None, None):
        triple = ox.Triple(quad.subject, quad.predicate, quad.object)
        if triple not in seen:
            seen.add(triple)
            triples.append(triple)
    if fmt == "nq":
        return ox.serialize(store.quads_for_pattern(None, None, None, None), format=ox.RdfFormat.N_QUADS) or b""
    return ox.serialize(triples, format=FORMATS[fmt], prefixes={"kbq": "https://kbq.dev/ontology#", "kb": "https://kbq.dev/kb/"} if fmt == "ttl" else None) or b""
