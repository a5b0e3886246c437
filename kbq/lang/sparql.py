"""The one small SPARQL builder of the question compilers, and every store's quirk in one place.

Queries are assembled from parts (projected variables, patterns, order keys), never by renaming
variables inside finished text; values reach SPARQL only through kbq.lang.terms. The quirks are
those of the stores kbq is tested on (tests/test_stores.py: the embedded Oxigraph, an Oxigraph
server, Virtuoso 7 and rdflib), each with the expression that works on all of them. One more sits
where its meaning does: kbq.lang.gpu.constraints.as_of ('no release date on or after', for Virtuoso)."""

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


def known_first(expr: str) -> str:
    """`expr` as a sort key after an `unknown` key: 0 where it is unbound. Those rows are all apart
    already (the `unknown` key sorts them last), so the 0 never decides an order; but rdflib cannot
    ORDER BY an expression unbound on some rows (TypeError comparing None with a value), where SPARQL
    sorts unbound lowest."""
    return f"COALESCE({expr}, 0)"


def one_row_if(term: str, var: str, condition: str, bind: dict[str, str]) -> str:
    """A SELECT of one row, `bind`'s expressions about `term` (as `var`), when `condition` holds of
    it, else none. Not SELECT (IF(EXISTS ..., 1, 0) AS ?ok) ... WHERE { }: Virtuoso 7 refuses an
    EXISTS in an empty WHERE's projection (HTTP 500, SQ074); here the EXISTS sits in a FILTER and
    the expressions in BINDs of a group that binds the variable, which all the stores answer alike."""
    binds = " ".join(f"BIND({expr} AS {name})" for name, expr in bind.items())
    return f"SELECT {' '.join(bind)} WHERE {{ BIND({term} AS {var}) FILTER({condition}) {binds} }}"


def holds(pattern: str) -> str:
    """A SELECT with one row when `pattern` (no variables) matches, none when not. Not SELECT ?t WHERE
    { pattern } projecting a variable the pattern leaves unbound: rdflib then returns no row at all,
    where Oxigraph and Virtuoso return one row with ?t unbound."""
    return f"SELECT ?found WHERE {{ {pattern} BIND(1 AS ?found) }} LIMIT 1"


def none_with_fallback(base: str, optional: str, test: str, fallback: str) -> str:
    """No match of `base` fails: where `optional` matches, `test` must not hold; where it matches
    nothing, `fallback` must not hold. That is NOT EXISTS { base OPTIONAL { optional }
    FILTER(COALESCE(test, fallback)) }, which Virtuoso 7.2 gets wrong (its FILTER never holds inside the
    EXISTS, so the NOT EXISTS keeps every row); two NOT EXISTS without OPTIONAL mean the same on every
    store (given a numeric `optional` value, which is all COALESCE fell back over)."""
    return (
        f"(NOT EXISTS {{ {base} {optional} FILTER({test}) }}"
        f" && NOT EXISTS {{ {base} FILTER({fallback}) FILTER NOT EXISTS {{ {optional} }} }})"
    )
