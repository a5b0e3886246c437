"""How GPUs are ranked: the workload's requirement profile (from the KB, inherited through the
algorithm families) turned into one score per GPU, computed in SPARQL.

score = sum over ranks r of w_r * s_r / sum over ranks r of w_r, where w_r = decay^(r-1) (decay
from the KB) and s_r is the mean of rank r's normalised figures (v / max over the candidates;
min / v for lower-is-better keys). A missing figure is unknown, neither zero nor best: it counts
as the candidates' mean for that figure (so a GPU with an unsourced first-rank figure gets no free
pass), and the answer lists which figures were unknown. A rank no candidate has a figure for is
left out.
Every number is cast to xsd:double first (some stores divide integers as integers).
"""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.gpu.constraints import double


class Profile(NamedTuple):
    iri: str
    label: str
    authority: str
    authority_label: str
    family: str
    summary: str
    reason: str
    multi_gpu: str
    source: str
    groups: tuple[tuple[str, ...], ...]  # key IRIs per rank


def profiles(ctx: Context, subject: Term | None) -> list[dict[str, object]]:
    """The nearest profiles of each authority that apply to a workload (or to all of deep learning);
    a generic model ('a 70b model') takes those of the model that lends it its architecture."""
    from kbq.lang.workload import generic, lending

    if subject is not None and generic.is_generic(subject.iri) and (lent := lending.lender(ctx, subject)) is not None:
        subject = subject._replace(iri=lent.iri)
    s = terms.iri(subject.iri) if subject else "kbq:Algorithm"
    rows = ctx.rows(
        f"""SELECT ?p ?label ?auth ?authLabel ?family ?summary ?reason ?multi ?source ?primary WHERE {{
  {s} kbq:hasProfile ?p .
  ?p rdfs:label ?label ; kbq:authority ?auth ; kbq:profileOf ?family .
  ?auth rdfs:label ?authLabel .
  OPTIONAL {{ ?p kbq:summary ?summary }}
  OPTIONAL {{ ?p kbq:reason ?reason }}
  OPTIONAL {{ ?p kbq:multiGpu/rdfs:label ?multi }}
  OPTIONAL {{ ?p dcterms:source ?source }}
  OPTIONAL {{ {s} kbq:primaryAlgorithm ?prim }}
  BIND(IF(COALESCE(?prim = ?family, false), 1, 0) AS ?primary)
  FILTER NOT EXISTS {{
    {s} kbq:hasProfile ?q . ?q kbq:authority ?auth ; kbq:profileOf ?qf .
    ?qf rdfs:subClassOf ?family . FILTER(?qf != ?family)
  }}
}} ORDER BY ?p"""
    )
    names = ["iri", "label", "authority", "authority_label", "family", "summary", "reason", "multi_gpu", "source", "primary"]
    seen: dict[str, dict[str, object]] = {}
    for row in rows:
        entry = seen.setdefault(str(row[0]), dict(zip(names, row, strict=True)))
        # ?primary is 1/0, not a boolean: Virtuoso 7 returns a projected comparison as an integer
        entry["primary"] = entry["primary"] is True or row[-1] == 1
    return list(seen.values())


def profile(ctx: Context, row: dict[str, object]) -> Profile:
    prio = ctx.rows(
        f"SELECT ?rank ?attr WHERE {{ {terms.iri(str(row['iri']))} kbq:priority ?s . ?s kbq:rank ?rank ; kbq:attribute ?attr }}"
        " ORDER BY ?rank ?attr"
    )
    groups: dict[int, list[str]] = {}
    for rank, attr in prio:
        if str(attr) in ctx.cat.keys_by_iri:
            groups.setdefault(int(str(rank)), []).append(str(attr))
    return Profile(
        iri=str(row["iri"]),
        label=str(row["label"]),
        authority=str(row["authority"]),
        authority_label=str(row["authority_label"]),
        family=str(row["family"]),
        summary=str(row["summary"] or ""),
        reason=str(row["reason"] or ""),
        multi_gpu=str(row["multi_gpu"] or ""),
        source=str(row["source"] or ""),
        groups=tuple(tuple(g) for _, g in sorted(groups.items())),
    )


def choose(ctx: Context, subject: Term | None, authority: Term | None, column: int | None) -> tuple[Profile | None, list[str]]:
    """The profile that ranks the workload: the asked (else default) authority's nearest one; the
    primary algorithm's when several families apply."""
    notes: list[str] = []
    found = profiles(ctx, subject)
    wanted = authority.iri if authority else ctx.cat.config.get("default_authority")
    pick = [p for p in found if p["authority"] == wanted]
    what = subject.label if subject else "deep learning in general"
    if not pick:
        if authority is not None:
            others = sorted({str(p["authority_label"]) for p in found})
            raise ctx.error(
                f"{authority.label} has no requirement profile for {what}"
                + (f" (available: {', '.join(others)})" if others else ""),
                column,
            )
        if found:
            using = found[0]["authority_label"]
            notes.append(f"the {ctx.cat.label(str(wanted))} source has no profile for {what}; using {using}")
            pick = [p for p in found if p["authority"] == found[0]["authority"]]
        else:
            return None, [f"no requirement profile applies to {what}"]
    if len(pick) > 1:
        primary = [p for p in pick if p["primary"] is True]
        chosen = primary[0] if primary else pick[0]
        also = ", ".join(str(p["label"]) for p in pick if p is not chosen)
        notes.append(f"{what} uses several families; ranked by {chosen['label']} (also applies: {also})")
    else:
        chosen = pick[0]
    return profile(ctx, chosen), notes


class Metric(NamedTuple):
    """One ranked figure: a name, its SPARQL expression on a row, and its direction."""

    name: str
    expr: str
    higher_is_better: bool


class Score(NamedTuple):
    """The SPARQL pieces that compute ?score: aggregates over the candidates, then BINDs."""

    aggregates: list[tuple[str, str]]  # per metric: ("(MAX(?d_x) AS ?max_x)", "BIND(xsd:double(...) AS ?d_x)")
    binds: list[str]  # BIND lines on each row


def score(groups: list[list[Metric]], decay: float) -> Score:
    """One ?score from the ranked groups of metrics (see the module's docstring).

    All aggregates come from one pass over the candidates: an unknown figure is kept out of
    MAX / MIN by a sentinel and out of the mean by counting only known figures (some stores,
    pyoxigraph among them, make an aggregate unbound when any input is unbound)."""
    aggregates: list[tuple[str, str]] = []
    binds: list[str] = []
    weights, weighted = [], []
    for r, group in enumerate(groups):
        weight = terms.double(decay**r)
        parts, known = [], []
        for m in group:
            value = double(m.expr)
            cast = f"BIND({value} AS ?d_{m.name})"
            d = f"?d_{m.name}"
            total = f"(SUM(COALESCE({d}, 0.0)) AS ?sum_{m.name}) (SUM(IF(BOUND({d}), 1.0, 0.0)) AS ?cnt_{m.name})"
            aggregates.append((total, cast))
            if m.higher_is_better:
                aggregates.append((f"(MAX(COALESCE({d}, -1.0e300)) AS ?max_{m.name})", cast))
            else:
                aggregates.append((f"(MIN(COALESCE({d}, 1.0e300)) AS ?min_{m.name})", cast))
            avg = f"(?sum_{m.name} / ?cnt_{m.name})"
            if m.higher_is_better:
                norm = f"IF(?cnt_{m.name} > 0 && ?max_{m.name} > 0, COALESCE({value}, {avg}) / ?max_{m.name}, ?none)"
            else:
                norm = f"IF(?cnt_{m.name} > 0 && COALESCE({value}, {avg}) > 0, ?min_{m.name} / COALESCE({value}, {avg}), ?none)"
            binds.append(f"BIND({norm} AS ?n_{m.name})")
            parts.append(f"COALESCE(?n_{m.name}, 0.0)")
            known.append(f"IF(BOUND(?n_{m.name}), 1.0, 0.0)")
        count = " + ".join(known)
        binds.append(f"BIND(IF({count} > 0, ({' + '.join(parts)}) / ({count}), 0.0) AS ?s{r})")
        binds.append(f"BIND(IF({count} > 0, {weight}, 0.0) AS ?w{r})")
        weighted.append(f"{weight} * ?s{r}")
        weights.append(f"?w{r}")
    total = " + ".join(weights)
    binds.append(f"BIND(IF({total} > 0, ({' + '.join(weighted)}) / ({total}), 0.0) AS ?score)")
    return Score(aggregates, binds)
