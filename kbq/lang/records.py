"""Records for the library API: a GPU with its specs, any entity with its properties, and GPU
questions built as structure (an AST) rather than text."""

from __future__ import annotations

from collections import defaultdict

from kbq.lang import ast, terms
from kbq.lang.catalog import KBQ_NS, OWL_CLASS, PREFIXES, Catalog, Run, Term
from kbq.lang.parse import parse
from kbq.lang.plan import Plan
from kbq.lang.words import GPU, Subject
from kbq.store.executor import Value

DCT_SOURCE = "http://purl.org/dc/terms/source"


def _phrase(text: str, column: int = 1) -> ast.Phrase:
    words, col = [], column
    for word in text.split():
        words.append(ast.Word(word, col, "number" if word[:1].isdigit() or word.startswith("$") else "word"))
        col += len(word) + 1
    return ast.Phrase(tuple(words))


def gpu_plan(
    catalog: Catalog,
    run: Run,
    *,
    where: str | None,
    order_by: str | None,
    descending: bool,
    limit: int | None,
    workload: str | None,
) -> tuple[str, Plan]:
    """A GPU question from keyword arguments. `workload` is one name (never re-parsed as a
    question), `where` one condition, `order_by` one key."""
    clauses: list[ast.Clause] = []
    shown = ["gpus"]
    if workload:
        shown.append(f"for {workload}")
    if where:
        clauses.append(ast.Where(parse(where, start="expr_start"), 1))
        shown.append(f"where {where}")
    if order_by:
        clauses.append(ast.Order(ast.Ratio(ast.Word(order_by, 1)), descending))
        shown.append(f"order by {order_by} {'desc' if descending else 'asc'}")
    if limit is not None:
        clauses.append(ast.Limit(int(limit), 1))
        shown.append(f"limit {int(limit)}")
    question = ast.SubjectQuestion(
        subject=ast.Phrase(()),
        link="for" if workload else None,
        target=ast.Target(_phrase(workload)) if workload else None,
        clauses=tuple(clauses),
    )
    text = " ".join(shown)
    from kbq.lang.context import Context
    from kbq.lang.gpu.question import compile_gpus

    ctx = Context(catalog, run, text)
    subject = Subject(Term(GPU, catalog.label(GPU), frozenset({OWL_CLASS})))
    return text, compile_gpus(ctx, question, subject)


def gpu_record(catalog: Catalog, run: Run, iri: str) -> dict[str, object]:
    rows = run(PREFIXES + f"SELECT ?p ?v WHERE {{ {terms.iri(iri)} ?p ?v }}").rows
    labels = catalog.labels(v for _p, v in rows)
    specs: dict[str, Value] = {}
    multi: dict[str, list[str]] = defaultdict(list)
    sources = []
    for p, v in rows:
        if p == DCT_SOURCE:
            sources.append(str(v))
        elif (k := catalog.keys_by_iri.get(str(p))) is not None:
            if k.is_object:
                multi[k.key].append(labels.get(str(v), str(v)))
            else:
                specs[k.key] = v
    for key, values in multi.items():
        specs[key] = ", ".join(sorted(set(values)))
    units = {k.key: k.unit_symbol for k in catalog.gpu_keys() if k.unit_symbol and k.key in specs}
    cooling = sorted(set(multi.get("cooling", [])))
    return {
        "iri": iri,
        "name": catalog.label(iri),
        "specs": specs,
        "units": units,
        "cooling": cooling,
        "sources": sorted(sources),
    }


def entity_record(catalog: Catalog, run: Run, iri: str) -> dict[str, object]:
    rows = run(PREFIXES + f"SELECT ?p ?v WHERE {{ {terms.iri(iri)} ?p ?v }} ORDER BY ?p ?v").rows
    types = run(PREFIXES + f"SELECT ?t WHERE {{ {terms.iri(iri)} a ?t }}").rows
    labels = catalog.labels([v for _p, v in rows] + [t for (t,) in types])
    props: dict[str, list[Value]] = defaultdict(list)
    comment, sources = None, []
    for p, v in rows:
        p = str(p)
        if p.endswith("#comment"):
            comment = comment or str(v)
        elif p == DCT_SOURCE:
            sources.append(str(v))
        elif p != KBQ_NS + "normalisedName":
            name = p.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
            value = labels.get(str(v), v) if isinstance(v, str) and v.startswith("http") else v
            if value not in props[name]:
                props[name].append(value)
    return {
        "iri": iri,
        "name": catalog.label(iri),
        "types": sorted({labels.get(str(t), str(t)) for (t,) in types}),
        "comment": comment,
        "properties": dict(props),
        "sources": sorted(set(sources)),
    }
