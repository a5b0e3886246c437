"""The KB model a generic size borrows its architecture from (kbq.lang.workload.generic reads
the size; this module queries the KB through a question's Context, which generic.py may not
import: kbq.lang.words imports it)."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.workload.generic import profile


class Lender(NamedTuple):
    iri: str
    label: str
    params: float


def lender(ctx: Context, generic: Term) -> Lender | None:
    """The KB's dense model of the profile's class closest in size with a whole attention
    architecture (layers, hidden size, heads, KV heads): no experts, no latent or windowed attention."""
    found = profile(ctx.cat)
    if found is None:
        return None
    params = float(generic.iri.rsplit("/", 1)[1])
    rows = ctx.rows(
        f"""SELECT ?m ?l ?p (MIN(?r) AS ?rank) WHERE {{
  ?m a {terms.iri(found.lender)} ; rdfs:label ?l ; kbq:parameterCount ?p ; kbq:numLayers ?n ; kbq:hiddenSize ?h ;
     kbq:attentionHeads ?a ; kbq:kvHeads ?kv .
  FILTER NOT EXISTS {{ ?m kbq:numExperts ?e }} FILTER NOT EXISTS {{ ?m kbq:kvLoraRank ?k }}
  FILTER NOT EXISTS {{ ?m kbq:slidingWindow ?w }} FILTER NOT EXISTS {{ ?m kbq:encoderOnly true }}
  OPTIONAL {{ ?m dcterms:source/kbq:tier/kbq:trustRank ?r }}
}} GROUP BY ?m ?l ?p ORDER BY ABS(xsd:double(?p) - {params:.0f}e0) ?rank ?l LIMIT 1"""
    )
    if not rows:
        return None
    iri, label, count, _rank = rows[0]
    return Lender(str(iri), str(label), float(str(count)))


def assumption(generic: Term, lent: Lender, facts: object) -> str:
    """What the answer says it assumed for a generic model."""
    params = float(generic.iri.rsplit("/", 1)[1])
    shape = ", ".join(
        f"{name} {value:,}"
        for name, value in (
            ("layers", getattr(facts, "layers", None)),
            ("hidden size", getattr(facts, "hidden", None)),
            ("KV heads", getattr(facts, "kv_heads", None)),
            ("head dim", getattr(facts, "dim", None)),
            ("max context", getattr(facts, "max_context", None)),
        )
        if value
    )
    return (
        f"{generic.label}: {params:,.0f} parameters as asked, the rest of its architecture ({shape}) that of "
        f"{lent.label} ({lent.params / 1e9:g}B), the KB's dense decoder closest in size; name a model for its own"
    )
