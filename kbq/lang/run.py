"""Compile a question, run its SPARQL through the executor, and shape the answer: labels for
IRIs, pivots for describe/compare, the derivation for why, and which constraint removed what."""

from __future__ import annotations

from kbq.errors import NoResultError
from kbq.lang import terms
from kbq.lang.catalog import KBQ_NS, PREFIXES, Catalog, Run
from kbq.lang.compile import Compiler, Plan
from kbq.store.executor import Value

DCT_SOURCE = "http://purl.org/dc/terms/source"


class Result:
    """The answer's fields; kbq.models.Answer validates from these attributes."""

    FIELDS = ("question", "kind", "columns", "rows", "units", "sparql", "explanation", "removed")

    def __init__(
        self,
        *,
        question: str,
        kind: str,
        columns: list[str],
        rows: list[list[Value]],
        sparql: str,
        explanation: list[str] | None = None,
        removed: list[list[Value]] | None = None,
        units: dict[str, str] | None = None,
    ) -> None:
        self.question, self.kind, self.columns, self.rows, self.sparql = question, kind, columns, rows, sparql
        self.explanation = explanation or []
        self.removed = removed or []
        self.units = units or {}

    def to_dict(self) -> dict[str, object]:
        return {f: getattr(self, f) for f in self.FIELDS}


def compile_question(text: str, catalog: Catalog, run: Run) -> Plan:
    """Parse and compile; `run` answers the compiler's small look-ups (profiles, memory needs)."""
    from kbq.lang.parse import parse  # imports lark: only when a question is not in the plan cache

    return Compiler(catalog, run, text).compile(parse(text))


def _constraint_table(plan: Plan, run: Run) -> list[list[Value]]:
    """For every GPU: its name and whether it meets each constraint."""
    checks = " ".join(f"(EXISTS {{ FILTER({c.sparql}) }} AS ?c{i})" for i, c in enumerate(plan.constraints))
    return run(PREFIXES + f"SELECT ?gpu ?name {checks} WHERE {{ ?gpu a kbq:GPU ; rdfs:label ?name }} ORDER BY ?name").rows


def _removed(plan: Plan, run: Run) -> list[list[Value]]:
    removed = []
    for gpu, name, *ok in _constraint_table(plan, run):
        failed = [c.text for c, good in zip(plan.constraints, ok, strict=True) if good is not True]
        if failed:
            removed.append([gpu, name, "; ".join(failed)])
    return removed


def _emptied_by(plan: Plan, run: Run) -> str:
    table = _constraint_table(plan, run)
    alive = len(table)
    for i, c in enumerate(plan.constraints):
        still = sum(1 for row in table if all(v is True for v in row[2 : 3 + i]))
        if still == 0:
            alone = sum(1 for row in table if row[2 + i] is True)
            return (
                f"no GPU meets every constraint: '{c.text}' leaves none of the {alive} that met the ones before it"
                f" ({alone} GPU(s) meet it on its own)"
            )
        alive = still
    return "no GPU matches"


def _label_rows(rows: list[list[Value]], catalog: Catalog, skip: int = 1) -> list[list[Value]]:
    """IRIs the catalog knows become labels, except in the first `skip` columns."""
    return [
        row[:skip] + [catalog.label(v) if isinstance(v, str) and v in catalog.terms else v for v in row[skip:]] for row in rows
    ]


def _describe(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run) -> list[list[Value]]:
    out = []
    seen = set()
    for prop, value, label in rows:
        if str(prop).startswith("http://www.w3.org/") and str(prop) not in ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type",):
            continue
        shown = catalog.label(value) if isinstance(value, str) and value in catalog.terms else label
        if isinstance(value, str) and value.startswith("_:"):
            continue
        if (prop, shown) not in seen:
            seen.add((prop, shown))
            out.append([prop, shown])
    if plan.subject and "gpu" in catalog.terms[plan.subject].kinds:
        designs = run(
            PREFIXES
            + f"""SELECT ?label ?cooling ?cards ?note WHERE {{
  {terms.iri(plan.subject)} kbq:boardDesign ?d . ?d rdfs:label ?label ; kbq:cooling/rdfs:label ?cooling .
  OPTIONAL {{ ?d kbq:maxCardsPerChassis ?cards }} OPTIONAL {{ ?d kbq:note ?note }} }} ORDER BY ?label"""
        ).rows
        for label, cooling, cards, note in designs:
            text = f"{label}: {cooling}" + (f", up to {cards} per chassis" if cards else "") + (f" ({note})" if note else "")
            out.append(["board design (detail)", text])
    return out


def _compare(plan: Plan, rows: list[list[Value]], catalog: Catalog) -> list[list[Value]]:
    by_gpu: dict[str, dict[str, list[Value]]] = {g: {} for g in plan.compare}
    for gpu, p, _value, label in rows:
        key = catalog.keys_by_iri.get(str(p))
        name = key.key if key else ("source" if p == DCT_SOURCE else None)
        if name is None:
            continue
        cell = by_gpu[str(gpu)].setdefault(name, [])
        text = catalog.label(label) if isinstance(label, str) else label
        if text not in cell:
            cell.append(text)
    out = []
    for key in catalog.gpu_keys():
        if any(key.key in by_gpu[g] for g in plan.compare):
            unit = f" ({key.unit_symbol})" if key.unit_symbol else ""
            cells: list[Value] = []
            for g in plan.compare:
                found = sorted(by_gpu[g].get(key.key, []), key=str)
                cells.append(found[0] if len(found) == 1 else (", ".join(map(str, found)) or None))
            out.append([key.key + unit, *cells])
    out.append(["sources", *[len(by_gpu[g].get("source", [])) for g in plan.compare]])
    return out


def _why(
    plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, removed: list[list[Value]]
) -> tuple[list[list[Value]], list[str]]:
    subject = plan.subject or ""
    name = catalog.label(subject)
    position = next((i for i, r in enumerate(rows) if r[0] == subject), None)
    explanation = list(plan.explanation)
    if position is None:
        reasons = next((r[2] for r in removed if r[0] == subject), "it is not among the candidates")
        explanation.insert(0, f"{name} is not a candidate: removed by {reasons}")
        return [], explanation
    explanation.insert(0, f"{name} ranks #{position + 1} of {len(rows)} candidates")
    table: list[list[Value]] = []
    col = {c: i for i, c in enumerate(plan.columns)}
    for rank, group in enumerate(plan.profile.groups if plan.profile else (), start=1):
        for key in group:
            values = [v for v in (r[col[key.key]] for r in rows) if isinstance(v, (int, float))]
            best = max(values) if values else None
            mine = rows[position][col[key.key]]
            table.append([rank, key.key, mine, best, key.unit_symbol])
    sources = run(PREFIXES + f"SELECT ?s WHERE {{ {terms.iri(subject)} dcterms:source ?s }} ORDER BY ?s").rows
    explanation.append("figures from: " + ", ".join(catalog.label(s[0]) for s in sources))
    if position > 0:
        explanation.append(f"ranked above it: {', '.join(str(r[1]) for r in rows[:position])}")
    return table, explanation


def run_plan(text: str, plan: Plan, catalog: Catalog, run: Run, *, explain: bool = False) -> Result:
    """Execute a compiled question and shape its answer."""
    table = run(plan.sparql)
    rows = table.rows
    explanation = list(plan.explanation)
    removed: list[list[Value]] = []
    columns = plan.columns
    if plan.kind in ("gpus", "why") and not rows:
        raise NoResultError(_emptied_by(plan, run) if plan.constraints else "no GPU in the KB")
    if plan.kind in ("gpus", "why") and "cooling" in plan.columns:
        at = plan.columns.index("cooling")  # GROUP_CONCAT order is unspecified in SPARQL
        rows = [[*r[:at], ", ".join(sorted(str(r[at]).split(", "))) if r[at] else r[at], *r[at + 1 :]] for r in rows]
    if plan.kind == "gpus":
        rows = _label_rows(rows, catalog)
        if explain and plan.constraints:
            removed = _removed(plan, run)
        if rows and plan.limit == 1 and plan.profile is not None:
            explanation.insert(0, f"best: {rows[0][1]}")
    elif plan.kind == "why":
        candidate = any(r[0] == plan.subject for r in rows)
        everything_removed = _removed(plan, run) if plan.constraints and (explain or not candidate) else []
        rows, explanation = _why(plan, _label_rows(rows, catalog), catalog, run, everything_removed)
        columns = ["rank", "attribute", "value", "best_candidate", "unit"]
        removed = everything_removed if explain else []
    elif plan.kind == "describe":
        rows = _describe(plan, rows, catalog, run)
        columns = ["property", "value"]
    elif plan.kind == "compare":
        rows = _compare(plan, rows, catalog)
        for iri in plan.compare:
            cited = run(PREFIXES + f"SELECT ?s WHERE {{ {terms.iri(iri)} dcterms:source ?s }} ORDER BY ?s").rows
            explanation.append(f"sources for {catalog.label(iri)}: " + ", ".join(str(c[0]) for c in cited))
    elif plan.kind == "list":
        rows = _label_rows(rows, catalog, skip=2)
        if not rows:
            raise NoResultError(f"nothing found: {explanation[0]}")
    elif plan.kind == "requirements":
        rows = [list(r) for r in rows]
    return Result(
        question=text,
        kind=plan.kind,
        columns=columns,
        rows=rows,
        sparql=plan.sparql,
        explanation=explanation,
        removed=removed,
        units=plan.units,
    )


__all__ = ["KBQ_NS", "Result", "compile_question", "run_plan"]
