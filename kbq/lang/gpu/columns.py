"""Which figures a GPU answer shows, and the SPARQL patterns that fetch them.

Columns: the profile's attributes (in rank order), then keys the question names, then the
defaults the KB states (kbq:Defaults), then cooling. A number is fetched with an OPTIONAL
pattern (a missing figure stays unknown); an object-valued key (cooling, precision, vendor)
with a GROUP_CONCAT of labels, sorted again when the answer is shaped (stores differ in order).
"""

from __future__ import annotations

from kbq.lang import terms
from kbq.lang.catalog import Key
from kbq.lang.context import Context


def add(shown: list[Key], *keys: Key | None) -> None:
    for key in keys:
        if key is not None and key not in shown:
            shown.append(key)


def defaults(ctx: Context, kind: str) -> list[Key]:
    """The KB's default ('default') or always-shown ('always') GPU columns."""
    iris: list[str] = ctx.cat.config.get(f"{kind}_columns") or []  # type: ignore[assignment]
    return [ctx.cat.keys_by_iri[i] for i in iris if i in ctx.cat.keys_by_iri]


def pattern(key: Key) -> str:
    """The pattern binding ?v_<key> on a row of ?gpu."""
    prop = terms.iri(key.iri)
    if key.is_object:
        return (
            f'OPTIONAL {{ SELECT ?gpu (GROUP_CONCAT(DISTINCT ?l_{key.var}; separator=", ") AS ?{key.var}) '
            f"WHERE {{ ?gpu {prop} ?o_{key.var} . ?o_{key.var} rdfs:label ?l_{key.var} }} GROUP BY ?gpu }}"
        )
    return f"OPTIONAL {{ ?gpu {prop} ?{key.var} }}"


def cooling_key(ctx: Context) -> Key | None:
    return ctx.cat.keys.get("cooling")


def segment_key(ctx: Context) -> Key | None:
    return ctx.cat.keys.get("segment")


CURRENT_PRICE = "https://kbq.dev/ontology#currentPrice"


def price_test(gpu: str, before: str, condition: str) -> str:
    """The price rule (kbq.lang.evaluate.cost.PRICE_RULE) as one self-contained test on `gpu`:
    a new-card price observed before `before`, on the latest such date, whose value ?x meets
    `condition` (the lowest on that date meets it when any does)."""
    day = terms.date(before)
    return (
        f"EXISTS {{ ?po kbq:priceOf {gpu} ; kbq:observedOn ?pd ; kbq:priceUsd ?x ; kbq:priceKind ?pk ."
        f" FILTER(?pk != kb:UsedPrice && ?pd < {day} && {condition})"
        f" FILTER NOT EXISTS {{ ?po2 kbq:priceOf {gpu} ; kbq:observedOn ?pd2 ; kbq:priceUsd ?px2 ; kbq:priceKind ?pk2 ."
        f" FILTER(?pk2 != kb:UsedPrice && ?pd2 > ?pd && ?pd2 < {day}) }} }}"
    )


def dated_pattern(key: Key, before: str) -> str:
    """The pattern of a key as of a date: a price is the one observed last before `before`
    (new-card kinds, the lowest on that date); other keys do not change with time."""
    if key.iri != CURRENT_PRICE:
        return pattern(key)
    day = terms.date(before)
    return (
        f"OPTIONAL {{ SELECT ?gpu (MIN(?px) AS ?{key.var}) WHERE {{\n"
        f"    {{ SELECT ?gpu (MAX(?pd0) AS ?pd) WHERE {{ ?po kbq:priceOf ?gpu ; kbq:observedOn ?pd0 ;"
        " kbq:priceKind ?pk0 ; kbq:priceUsd ?pv0 ."
        f" FILTER(?pk0 != kb:UsedPrice && ?pd0 < {day}) }} GROUP BY ?gpu }}\n"
        f"    ?po2 kbq:priceOf ?gpu ; kbq:observedOn ?pd ; kbq:priceUsd ?px ; kbq:priceKind ?pk . FILTER(?pk != kb:UsedPrice)\n"
        f"  }} GROUP BY ?gpu }}"
    )
