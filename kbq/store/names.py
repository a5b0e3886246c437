"""How names are matched: one normal form, shared by the build (which writes a name index into
the snapshot) and the compiler (which looks names up in it), so a lookup is one indexed SPARQL
pattern on any store instead of a catalog loaded whole on every call."""

from __future__ import annotations

import re

NAME_INDEX = "https://kbq.dev/ontology#normalisedName"  # subject kbq:normalisedName "rtx4090"
NAMES_GRAPH = "https://kbq.dev/graph/names"
NAMING_PREDICATES = (
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#altLabel",
    "https://kbq.dev/ontology#symbol",
    "https://kbq.dev/ontology#huggingFaceId",  # the Hub id people paste (meta-llama/Llama-3.2-3B-Instruct)
)
_STRIP = re.compile(r"[\s\-_™®()]+")


def normalise(text: str) -> str:
    """Case, spaces, hyphens, underscores and parentheses do not matter in names ('RTX 2080-Ti' = 'rtx2080ti')."""
    return _STRIP.sub("", text.casefold())
