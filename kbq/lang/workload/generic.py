"""A size alone ('a 70b model', '120b', 'memory for 13b model at int4'): a generic dense decoder.

kb/sentences.ttl declares the profile (kb:GenericDenseDecoder): the words after a size that name
it, the class whose models lend it an architecture, and its default process. The parameter count
is the size asked; every other figure (layers, hidden size, heads, KV heads, vocabulary, maximum
context) is that of the KB's dense model of that class closest in size, and the answer says so.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Catalog, Term, k
from kbq.store.resources import KB_NS

PROFILE = KB_NS + "GenericDenseDecoder"
MODEL = k("Model")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)b$")


class Profile(NamedTuple):
    iri: str
    label: str
    nouns: frozenset[str]  # 'model', 'llm', 'dense model' ...: words after a size that name the profile
    lender: str  # the class whose models lend their architecture


def profile(catalog: Catalog) -> Profile | None:
    """The generic profile as the KB declares it (None when the KB declares none)."""
    cached = getattr(catalog, "_generic_profile", False)
    if cached is None or isinstance(cached, Profile):
        return cached
    found: Profile | None = None
    if catalog.run is not None:
        from kbq.lang.catalog import PREFIXES

        rows = catalog.run(
            PREFIXES + f"SELECT ?label ?noun ?class WHERE {{ {terms.iri(PROFILE)} rdfs:label ?label ; "
            "kbq:architectureFrom ?class OPTIONAL { " + terms.iri(PROFILE) + " kbq:sizeNoun ?noun } }"
        ).rows
        if rows:
            nouns = frozenset(" ".join(str(r[1]).lower().split()) for r in rows if r[1] is not None)
            found = Profile(PROFILE, str(rows[0][0]), nouns, str(rows[0][2]))
    catalog._generic_profile = found  # type: ignore[attr-defined]
    return found


def params_of(size: str) -> float | None:
    """'70b' -> 7e10; None for what is not a plain size ('8x7b' is a mixture, not a dense size)."""
    match = _SIZE.match(size.strip().lower())
    return float(match.group(1)) * 1e9 if match else None


def term(catalog: Catalog, size: str) -> Term | None:
    """The generic model of a size ('70b' -> '70B dense decoder'), None when the size is not one
    or the KB declares no profile."""
    found = profile(catalog)
    params = params_of(size)
    if found is None or params is None or params <= 0:
        return None
    return Term(f"{PROFILE}/{params:.0f}", f"{size.strip().upper()} {found.label}", frozenset({MODEL}))


def is_generic(iri: str) -> bool:
    return iri.startswith(PROFILE + "/")


def kb_iri(iri: str) -> str:
    """The KB resource that holds a model's declared defaults (the profile for a generic model)."""
    return PROFILE if is_generic(iri) else iri
