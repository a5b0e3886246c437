"""Knowledge questions: lists ('frameworks for rnn'), describe, compare, requirements.

List questions are query plans in query/lists/*.rq: each file says which kind it lists
(`# list:`) and for which kinds of target (`# for:`), and uses ?target and ?class. A new list
question is a new file there, not code."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import NamedTuple

from kbq.lang import ast, terms
from kbq.lang.catalog import FAMILY, PREFIXES, Term, k
from kbq.lang.context import Context
from kbq.lang.gpu import ordering
from kbq.lang.gpu.constraints import gpu_names
from kbq.lang.plan import Plan
from kbq.lang.words import Subject, Workload
from kbq.store import resources


class ListPlan(NamedTuple):
    name: str
    lists: str  # a class IRI, or "any"
    targets: tuple[str, ...]  # class IRIs, "family", "none" or "any"
    sparql: str
    columns: list[str]


@lru_cache(maxsize=1)
def list_plans() -> tuple[ListPlan, ...]:
    folder = os.path.join(os.path.dirname(resources.grammar_path()), "lists")
    plans = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".rq"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            text = handle.read()
        header = dict(re.findall(r"^#\s*(list|for):\s*(.+)$", text, re.M))
        expand = {"kbq:": k("")}
        lists = header.get("list", "any").strip()
        lists = expand["kbq:"] + lists[4:] if lists.startswith("kbq:") else lists
        targets = tuple(expand["kbq:"] + t[4:] if t.startswith("kbq:") else t for t in header.get("for", "none").split())
        select = re.search(r"SELECT\s+(DISTINCT\s+)?(.*?)\s+WHERE", text, re.S)
        cols = re.findall(r"\?(\w+)", select.group(2)) if select else []
        plans.append(ListPlan(name, lists, targets, text, cols))
    return tuple(plans)


def _bind(sparql: str, target: Term | None, cls: Term | None) -> str:
    values = []
    if target is not None and "?target" in sparql:
        values.append(f"VALUES ?target {{ {terms.iri(target.iri)} }}")
    if cls is not None and "?class" in sparql:
        values.append(f"VALUES ?class {{ {terms.iri(cls.iri)} }}")
    body = re.sub(r"^#.*\n", "", sparql, flags=re.M)
    return PREFIXES + re.sub(r"WHERE\s*\{", "WHERE {\n  " + " ".join(values) + "\n ", body, count=1)


def _kind_of(term: Term) -> set[str]:
    return set(term.types) | ({FAMILY} if FAMILY in term.types else set())


def list_question(ctx: Context, subject: Subject, target: Term | None, column: int) -> Plan:
    cls = subject.cls
    kinds = _kind_of(target) if target else {"none"}
    chosen = None
    for plan in list_plans():
        if plan.lists not in (cls.iri, "any"):
            continue
        if plan.lists == "any" and any(p.lists == cls.iri and ("none" in p.targets) == (target is None) for p in list_plans()):
            continue
        if target is None and "none" in plan.targets:
            chosen = plan
            break
        if target is not None and (kinds & set(plan.targets) or "any" in plan.targets):
            chosen = plan
            break
    if chosen is None:
        raise ctx.error(f"'{cls.label} for {target.label if target else ''}' is not a question kbq can answer", column)
    what = f"{cls.label} " + (f"for {target.label} ({target.kinds})" if target else "(all)")
    return Plan(
        "list",
        _bind(chosen.sparql, target, cls),
        chosen.columns,
        explanation=[what + f" [plan {chosen.name}]"],
        subject=target.iri if target else None,
    )


def describe(ctx: Context, q: ast.DescribeQuestion) -> Plan:
    """Everything the KB states about a name; a GPU family also shows its default variant's figures."""
    term = ctx.words.name(q.name, None, "name")
    sparql = (
        PREFIXES
        + f"""SELECT ?property ?value ?valueLabel WHERE {{
  {{ {terms.iri(term.iri)} ?p ?value .
     OPTIONAL {{ ?p rdfs:label ?pl }} BIND (COALESCE(?pl, STR(?p)) AS ?property) }}
  UNION
  {{ ?value ?p {terms.iri(term.iri)} . ?value rdfs:label ?any . ?p rdfs:label ?pl0 .
     FILTER (?p NOT IN (rdf:type, rdfs:subClassOf, kbq:involvesFamily, kbq:hasProfile))
     FILTER NOT EXISTS {{ {{ ?p owl:inverseOf ?back }} UNION {{ ?back owl:inverseOf ?p }} }}
     BIND (CONCAT("(is ", STR(?pl0), " of)") AS ?property) }}
  UNION
  {{ {terms.iri(term.iri)} kbq:defaultVariant ?variant . ?variant ?p ?value . ?p kbq:queryKey ?key ; rdfs:label ?pl1 .
     BIND (CONCAT(STR(?pl1), " (default variant)") AS ?property) }}
  OPTIONAL {{ ?value rdfs:label ?vl }}
  BIND (COALESCE(?vl, ?value) AS ?valueLabel)
  FILTER (?p NOT IN (owl:sameAs, kbq:normalisedName))
}} ORDER BY ?property ?valueLabel"""
    )
    return Plan(
        "describe", sparql, ["property", "value", "valueLabel"], subject=term.iri, explanation=[f"{term.label}: {term.kinds}"]
    )


def compare(ctx: Context, q: ast.CompareQuestion) -> Plan:
    gpus: list[Term] = []
    for phrase in q.names:
        for gpu in gpu_names(ctx, phrase):
            if gpu.iri not in {g.iri for g in gpus}:
                gpus.append(gpu)
    if len(gpus) < 2 and len(q.names) < 2:
        raise ctx.error("compare needs two GPUs (or a family with several variants)", q.names[0].column)
    values = " ".join(terms.iri(g.iri) for g in gpus)
    sparql = (
        PREFIXES
        + f"""SELECT ?gpu ?p ?value ?valueLabel WHERE {{
  VALUES ?gpu {{ {values} }}
  ?gpu ?p ?value .
  OPTIONAL {{ ?value rdfs:label ?vl }}
  BIND (COALESCE(?vl, ?value) AS ?valueLabel)
}}"""
    )
    return Plan(
        "compare",
        sparql,
        ["attribute", *[g.label for g in gpus]],
        explanation=[f"compare: {', '.join(g.label for g in gpus)}"],
        extra={"gpus": [g.iri for g in gpus]},
    )


def requirements(ctx: Context, workload: Workload, authority: Term | None, column: int) -> Plan:
    """Every profile that applies, the one that ranks the workload first."""
    term = workload.term
    found = ordering.profiles(ctx, term)
    chosen, _notes = ordering.choose(ctx, term, authority, column) if found else (None, [])
    if authority is not None:
        found = [p for p in found if p["authority"] == authority.iri]
    what = term or workload.process
    if not found:
        raise ctx.error(f"no requirement profile applies to {what.label if what else 'that'}", column)
    found.sort(key=lambda p: (chosen is None or p["iri"] != chosen.iri, str(p["authority_label"]), str(p["label"])))
    values = " ".join(terms.iri(str(p["iri"])) for p in found)
    order = " ".join(f"({terms.iri(str(p['iri']))} {i})" for i, p in enumerate(found))
    sparql = (
        PREFIXES
        + f"""SELECT ?profile ?authority ?rank ?key ?attribute WHERE {{
  VALUES ?p {{ {values} }}
  VALUES (?p ?position) {{ {order} }}
  ?p rdfs:label ?profile ; kbq:authority/rdfs:label ?authority ; kbq:priority ?s .
  ?s kbq:rank ?rank ; kbq:attribute ?a .
  ?a rdfs:label ?attribute . OPTIONAL {{ ?a kbq:queryKey ?key }}
}} ORDER BY ?position ?rank ?key"""
    )
    explanation = []
    for p in found:
        prof = ordering.profile(ctx, p)
        inherited = "" if term and prof.family == term.iri else f" (inherited from {ctx.cat.label(prof.family)})"
        ranks = " (ranks GPUs for it)" if chosen is not None and prof.iri == chosen.iri else ""
        explanation.append(f"{prof.label}{inherited}{ranks}: {prof.summary}")
        if prof.reason:
            explanation.append(f"  why: {prof.reason}")
        if prof.multi_gpu:
            explanation.append(f"  multi-GPU scaling: {prof.multi_gpu}")
        explanation.append(f"  source: {ctx.cat.label(prof.source)}")
    return Plan(
        "requirements",
        sparql,
        ["profile", "authority", "rank", "key", "attribute"],
        explanation=explanation,
        subject=what.iri if what else None,
    )


def list_target(ctx: Context, q: ast.SubjectQuestion, cls: Term) -> Term | None:
    """The target of a list question, among the kinds the list plans of `cls` accept."""
    if q.target is None:
        return None
    phrase = q.target.phrase if q.target.of is None else ast.Phrase(q.target.phrase.words + q.target.of.words)
    kinds: set[str] = set()
    for plan in list_plans():
        if plan.lists == cls.iri:
            kinds |= {t for t in plan.targets if t not in ("none", "any")}
    return ctx.words.name(phrase, tuple(sorted(kinds)) or None, f"target for {cls.label}")
