"""The one small SPARQL builder of the question compilers, and every store's quirk in one place.

Queries are assembled from parts (projected variables, patterns, order keys), never by renaming
variables inside finished text; values reach SPARQL only through kbq.lang.terms. The quirks are
those of the stores kbq is tested on (tests/test_stores.py: the embedded Oxigraph, an Oxigraph
server, Virtuoso 7 and rdflib), each with the expression that works on all of them."""

from __future__ import annotations


def select(
    variables: list[str], body: list[str], order: list[str] | None = None, limit: int | None = None, prefixes: str = ""
) -> str:
    """SELECT variables WHERE { body } [ORDER BY order] [LIMIT limit]."""
    text = prefixes + "SELECT " + " ".join(variables) + "\nWHERE {\n  " + "\n  ".join(body) + "\n}"
    if order:
        text += "\nORDER BY " + " ".join(order)
    if limit:
        text += f"\nLIMIT {int(limit)}"
    return text


# --- engine workarounds ---------------------------------------------------------------------------


def double(var: str) -> str:
    """An engine-neutral numeric cast: integers divide as integers on some stores (Virtuoso)."""
    return f"xsd:double({var})"


def unknown(var: str) -> str:
    """1 when `var` is unbound, else 0, as a sort key. Not IF(BOUND(var), 0, 1): Virtuoso 7 calls
    every variable a subquery projects bound, even where the subquery left it unbound."""
    return f"COALESCE(STRLEN(STR({var})) * 0, 1)"
