"""Run a plan through the executor and shape its answer: labels for IRIs, pivots for describe
and compare, the derivation for why, runners-up in other segments, and which constraint removed
what. Needs no parser and no compiler, so a cached plan answers without them."""

from __future__ import annotations

from kbq.errors import NoResultError
from kbq.lang import chartspec, sparql, terms
from kbq.lang.catalog import KBQ_NS, PREFIXES, Catalog, Key, Run
from kbq.lang.decision import Decision, decide
from kbq.lang.forms import Shaped, shaper
from kbq.lang.plan import Plan
from kbq.store.executor import Value

DCT_SOURCE = "http://purl.org/dc/terms/source"
LIST_COLUMNS = ("cooling", "precision", "interconnect", "supported_by", "vendor", "architecture", "segment", "form_factor")


class Result:
    """An answer: the table, its units, the SPARQL that produced it, and why.

    The one answer type of every door: the CLI prints it, /ask and `--format json` serialise
    `to_dict()`, and the library's pydantic `Answer` validates from its attributes."""

    FIELDS = (
        "question", "read_as", "headline", "kind", "columns", "rows", "units", "sparql", "explanation", "removed",
        "verdict", "recommended", "tiers", "numbers", "extra",
    )  # fmt: skip

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
        extra: dict[str, object] | None = None,
        decision: Decision | None = None,
        read_as: str | None = None,
    ) -> None:
        self.question, self.kind, self.columns, self.rows, self.sparql = question, kind, columns, rows, sparql
        self.read_as = read_as  # the canonical question a sentence was read as (None: asked as written)
        self.explanation = explanation or []
        self.removed = removed or []
        self.units = units or {}
        self.extra = extra or {}
        d = decision or Decision()
        self.headline, self.verdict, self.recommended, self.tiers, self.numbers = (
            d.headline,
            d.verdict,
            d.recommended,
            d.tiers,
            d.numbers,
        )

    def to_dict(self) -> dict[str, object]:
        return {f: getattr(self, f) for f in self.FIELDS}


def _constraint_table(plan: Plan, run: Run) -> list[list[Value]]:
    """For every GPU: its name and whether it meets each constraint (1: it does, 0: not).

    One plain query per constraint (the GPUs that meet it), not IF(EXISTS ...) flags in one
    SELECT: Virtuoso 7 cannot compile those (stack overflow) and returns a projected boolean as
    an integer, and it mixes up several OPTIONAL subqueries that each project a constant; a flag
    named in the SELECT could also capture a constraint's own variable (?c0 ...)."""
    gpus = run(PREFIXES + "SELECT ?gpu ?name WHERE { ?gpu a kbq:GPU ; rdfs:label ?name } ORDER BY ?name").rows
    meets = [
        {row[0] for row in run(PREFIXES + f"SELECT DISTINCT ?gpu WHERE {{ ?gpu a kbq:GPU FILTER({c[1]}) }}").rows}
        for c in plan.constraints
    ]
    return [[gpu, name, *[1 if gpu in ok else 0 for ok in meets]] for gpu, name in gpus]


def removed_by(plan: Plan, run: Run) -> list[list[Value]]:
    removed = []
    for gpu, name, *ok in _constraint_table(plan, run):
        failed = [c[0] for c, good in zip(plan.constraints, ok, strict=True) if good != 1]
        if failed:
            removed.append([gpu, name, "; ".join(failed)])
    return removed


def emptied_by(plan: Plan, run: Run) -> str:
    table = _constraint_table(plan, run)
    alive = len(table)
    for i, c in enumerate(plan.constraints):
        still = sum(1 for row in table if all(v == 1 for v in row[2 : 3 + i]))
        if still == 0:
            alone = sum(1 for row in table if row[2 + i] == 1)
            return (
                f"no GPU meets every constraint: '{c[0]}' leaves none of the {alive} that met the ones before it"
                f" ({alone} GPU(s) meet it on its own)"
            )
        alive = still
    return "no GPU matches"


def _tidy(plan: Plan, rows: list[list[Value]]) -> list[list[Value]]:
    """Sort concatenated labels (GROUP_CONCAT order is unspecified), empty status -> verified,
    round the score."""
    cols = {c: i for i, c in enumerate(plan.columns)}
    out = []
    for row in rows:
        row = list(row)
        for name in LIST_COLUMNS:
            i = cols.get(name)
            if i is not None and isinstance(row[i], str) and ", " in row[i]:  # type: ignore[operator]
                row[i] = ", ".join(sorted(str(row[i]).split(", ")))
        if (i := cols.get("status")) is not None:
            row[i] = "verified" if not row[i] else "unverified: " + str(row[i]).rstrip("; ")
        if (i := cols.get("score")) is not None and isinstance(score := row[i], float):
            row[i] = round(score, 4)
        out.append(row)
    return out


def _runners_up(plan: Plan, rows: list[list[Value]]) -> tuple[list[list[Value]], list[str]]:
    """Best of each other market segment, named after the answer (a hobby question does not end
    at a data-centre part)."""
    cols = {c: i for i, c in enumerate(plan.columns)}
    seg = cols.get("segment")
    status = cols.get("status")
    limit = plan.limit
    shown = rows[:limit] if limit else rows
    if seg is None or not rows:
        return shown, []
    first_segments = {r[seg] for r in shown}
    lines = []
    seen: set[Value] = set(first_segments)
    for row in rows[len(shown) :]:
        if row[seg] not in seen and row[seg]:
            seen.add(row[seg])
            note = f" ({row[status]})" if status is not None and row[status] != "verified" else ""
            lines.append(f"best {row[seg]} GPU: {row[1]}{note}")
    return shown, lines


def _describe(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run) -> list[list[Value]]:
    out = []
    seen = set()
    skip = ("http://www.w3.org/2002/07/owl#", "http://www.w3.org/2000/01/rdf-schema#subClassOf")
    for prop, value, label in rows:
        if str(prop).startswith(skip) or (isinstance(value, str) and value.startswith("_:")):
            continue
        shown = label
        if (prop, shown) not in seen:
            seen.add((prop, shown))
            out.append([prop, shown])
    if plan.subject:
        designs = run(
            PREFIXES
            + f"""SELECT ?label ?cooling ?cards ?note WHERE {{
  {terms.iri(plan.subject)} kbq:boardDesign ?d . ?d rdfs:label ?label .
  OPTIONAL {{ ?d kbq:cooling/rdfs:label ?cooling }}
  OPTIONAL {{ ?d kbq:maxCardsPerChassis ?cards }} OPTIONAL {{ ?d kbq:note ?note }} }} ORDER BY ?label"""
        ).rows
        for label, cooling, cards, note in designs:
            text = f"{label}: {cooling or 'cooling not sourced'}" + (f", up to {cards} per chassis" if cards else "")
            out.append(["board design (detail)", text + (f" ({note})" if note else "")])
        cited = run(
            PREFIXES
            + f"""SELECT ?property ?source ?tier WHERE {{
  {terms.iri(plan.subject)} kbq:citation ?c . ?c kbq:forProperty ?p ; dcterms:source ?s .
  OPTIONAL {{ ?p rdfs:label ?property }} OPTIONAL {{ ?s rdfs:label ?source }} OPTIONAL {{ ?s kbq:tier/rdfs:label ?tier }}
}} ORDER BY ?property ?source ?tier"""  # a full order: a property with two sources came in the store's order
        ).rows
        for prop, source, tier in cited:
            out.append([f"source of {prop}", f"{source or '?'}" + (f" [{tier}]" if tier else "")])
    return out


def _compare(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run) -> tuple[list[list[Value]], list[tuple[Key, str]]]:
    from kbq.lang.cards import ordered_keys

    gpus = [str(g) for g in plan.extra.get("gpus", [])]
    by_gpu: dict[str, dict[str, list[Value]]] = {g: {} for g in gpus}
    for gpu, p, _value, label in rows:
        key = catalog.keys_by_iri.get(str(p))
        name = key.key if key else ("source" if p == DCT_SOURCE else None)
        if name is None:
            continue
        cell = by_gpu[str(gpu)].setdefault(name, [])
        if label not in cell:
            cell.append(label)
    out = []
    attributes: list[tuple[Key, str]] = []
    present = {k for g in gpus for k in by_gpu[g]}
    for key in ordered_keys(catalog, present, run):  # the essentials first (kbq:describeOrder)
        if any(key.key in by_gpu[g] for g in gpus):
            unit = f" ({key.unit_symbol})" if key.unit_symbol else ""
            cells: list[Value] = []
            for g in gpus:
                found = sorted(by_gpu[g].get(key.key, []), key=str)
                cells.append(found[0] if len(found) == 1 else (", ".join(map(str, found)) or None))
            out.append([key.key + unit, *cells])
            attributes.append((key, key.key + unit))
    out.append(["sources", *[len(by_gpu[g].get("source", [])) for g in gpus]])
    return out, attributes


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
    ranked = f"ranks #{position + 1} of {len(rows)} candidates by the profile"
    explanation.insert(0, f"{name} {ranked}")
    table: list[list[Value]] = []
    col = {c: i for i, c in enumerate(plan.columns)}
    if "cards_needed" in col and "needed_gb" in col:
        cards, need = rows[position][col["cards_needed"]], rows[position][col["needed_gb"]]
        workload = catalog.label(plan.extra["workload"]) if plan.extra.get("workload") else "the workload"
        if cards is None or not isinstance(need, (int, float)):
            fit = f"memory fit: unknown for {name} (no sourced memory size)"
        else:
            fit = f"memory fit: {need:.1f} GB needed; {name} needs {cards} card(s)"
            fewest = min((c for r in rows if isinstance(c := r[col["cards_needed"]], int)), default=None)
            if fewest is not None and fewest != cards:
                fit += f" (the best candidates need {fewest})"
            held = "holds it on one card" if cards == 1 else f"needs {cards} cards"
            # the adequacy judgement first: a rank among 119 cards says little about a card that does the job
            explanation[0] = f"{name} for {workload}: {held} ({need:.1f} GB needed); {ranked}"
        explanation.insert(1, fit)
    for rank, group in enumerate(plan.extra.get("profile_keys", []), start=1):
        for key in group:
            values = [v for v in (r[col[key]] for r in rows) if isinstance(v, (int, float)) and not isinstance(v, bool)]
            best = max(values) if values else None
            mine = rows[position][col[key]]
            unit = plan.units.get(key, "")
            table.append([rank, key, mine if mine is not None else "unknown", best, unit])
    sources = run(PREFIXES + f"SELECT ?s WHERE {{ {terms.iri(subject)} dcterms:source ?s }} ORDER BY ?s").rows
    explanation.append("figures from: " + ", ".join(catalog.label(s[0]) for s in sources))
    if position > 0:
        explanation.append(f"ranked above it: {', '.join(str(r[1]) for r in rows[:position])}")
    return table, explanation


def shape_gpus(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    """A GPU ranking: candidates evaluated and ordered, runners-up, the chart, unknown figures."""
    rows = candidates = _tidy(plan, _evaluated(plan, rows, run))
    explanation = list(plan.explanation)
    removed = removed_by(plan, run) if explain and plan.constraints else []
    lines: list[str] = []
    extra: dict[str, object] = {}
    if plan.extra.get("runners_up"):
        rows, lines = _runners_up(plan, rows)
    elif plan.limit:
        rows = rows[: plan.limit]
    chart = chartspec.gpu_chart(plan, candidates, rows, catalog)
    if chart is not None:
        extra["chart"] = chart
    if rows and plan.extra.get("best"):
        explanation.insert(0, f"best: {rows[0][1]}")
    explanation[1:1] = lines
    explanation[1:1] = _evidence(plan, rows, catalog, run)
    unknown = _unknowns(plan, rows)
    if unknown:
        explanation.append("unknown figures (no source in the KB; each counted as the candidates' mean): " + unknown)
    if plan.extra.get("workload") and "cards_needed" in plan.columns:  # a model's need: tiers of configurations
        from kbq.lang.tiers import tiers

        first_rank = (plan.extra.get("profile_keys") or [[]])[0]
        box = plan.extra.get("box_cards")
        found, tier_notes = tiers(
            plan.columns, candidates, run, limit_cards=box if isinstance(box, int) else None, first_rank=first_rank,
            as_of=plan.extra.get("as_of"),
        )  # fmt: skip
        from kbq.lang.tiers import cloud

        rented = cloud(plan.extra.get("cloud"), run)
        if rented is not None:
            found.append(rented)
        if found:
            extra["tiers"] = found
            explanation += tier_notes
    explanation += _multi_gpu_assumed(plan, rows, extra.get("tiers"))
    explanation[1:1] = _stack_caveat(plan, rows, run)
    return Shaped(rows, plan.columns, explanation, removed, extra)


def _stack_caveat(plan: Plan, rows: list[list[Value]], run: Run) -> list[str]:
    """The software stack of the card that leads a ranking, graded (kbq.lang.tiers.software): a
    weaker one (on no official support list in the KB, or dropped by its SDK's newest release) is
    marked as a caveat, so a consumer AMD card leading a training ranking comes with its stack."""
    if not rows or not plan.extra.get("profile") or "gpu" not in plan.columns:
        return []
    from kbq.lang.tiers import software, stacks

    lead = rows[0]
    iri = str(lead[plan.columns.index("gpu")])
    found = stacks(run, [iri]).get(iri)
    name = lead[plan.columns.index("name")] if "name" in plan.columns else iri
    return [f"{name} leads the ranking; {software(found)}"]


def _multi_gpu_assumed(plan: Plan, rows: list[list[Value]], found: object) -> list[str]:
    """The scenario's several-GPU assumptions (a sharding default), only when a shown candidate or
    a tier needs more than one card: an answer lists the assumptions that apply, no others."""
    texts = plan.extra.get("multi_gpu_assumed") or []
    at = plan.columns.index("cards_needed") if "cards_needed" in plan.columns else None
    if not texts or at is None:
        return []
    counts = [r[at] for r in rows] + [t.get("count") for t in (found if isinstance(found, list) else []) if isinstance(t, dict)]
    if not any(isinstance(n, int) and n > 1 for n in counts):
        return []
    return [f"assumed (where more than one card is needed): {a}" for a in texts if isinstance(a, str)]


def shape_why(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    """Why a GPU for a workload: its place in the ranking, rank by rank."""
    rows = _tidy(plan, _evaluated(plan, rows, run))
    candidate = any(r[0] == plan.subject for r in rows)
    everything_removed = removed_by(plan, run) if plan.constraints and (explain or not candidate) else []
    rows, explanation = _why(plan, rows, catalog, run, everything_removed)
    columns = ["rank", "attribute", "value", "best_candidate", "unit"]
    return Shaped(rows, columns, explanation, everything_removed if explain else [])


def shape_describe(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    """Anything by name; a GPU as a buyer reads it (kbq.lang.cards: units, essentials first)."""
    table = _describe(plan, rows, catalog, run)
    explanation = list(plan.explanation)
    if plan.subject and run(PREFIXES + sparql.holds(f"{terms.iri(plan.subject)} a kbq:GPU")).rows:
        from kbq.lang.cards import describe_gpu

        table, summary = describe_gpu(str(plan.subject), table, catalog, run)
        return Shaped(table, ["attribute", "value", "unit"], [summary, *explanation])
    return Shaped(table, ["property", "value"], explanation)


def shape_compare(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    """GPUs side by side (no workload): one row per attribute, sources, the comparison chart."""
    table, attributes = _compare(plan, rows, catalog, run)
    explanation = list(plan.explanation)
    sources: dict[str, list[str]] = {}
    for iri in plan.extra.get("gpus", []):
        cited = run(PREFIXES + f"SELECT ?s WHERE {{ {terms.iri(str(iri))} dcterms:source ?s }} ORDER BY ?s").rows
        sources[catalog.label(iri)] = [str(c[0]) for c in cited]
        explanation.append(f"sources for {catalog.label(iri)}: " + ", ".join(sources[catalog.label(iri)]))
    gpus = plan.extra.get("gpus")
    names = [catalog.label(g) for g in gpus] if isinstance(gpus, list) else []
    chart = chartspec.compare_chart(names, table, attributes, sources)
    from kbq.lang import cards

    gpu_iris = [str(g) for g in gpus] if isinstance(gpus, list) else []
    added = cards.compare_prices(gpu_iris, run) + cards.compare_measured(gpu_iris, run)
    table = cards.compare_ratios(table + added, len(names))
    columns = list(plan.columns)
    if len(names) == 2:
        columns.append("ratio")
        explanation.insert(1, f"ratio: {names[0]} / {names[1]}")
    return Shaped(table, columns, explanation, [], {"chart": chart} if chart is not None else {})


def shape_instances(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    """Cloud instances: for a workload, each evaluated on its own GPUs (kbq.lang.gpu.evaluated)."""
    from kbq.lang.gpu.evaluated import evaluate_instances

    table, columns = evaluate_instances(plan, rows)
    if not table:
        raise NoResultError("no cloud instance matches: " + "; ".join(c[0] for c in plan.constraints))
    return Shaped(table, columns, list(plan.explanation))


def shape_list(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    if not rows:
        raise NoResultError(f"nothing found: {plan.explanation[0]}")
    return Shaped([list(r) for r in rows], plan.columns, list(plan.explanation))


def shape_rows(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run, explain: bool) -> Shaped:
    return Shaped([list(r) for r in rows], plan.columns, list(plan.explanation))


def _evaluated(plan: Plan, rows: list[list[Value]], run: Run) -> list[list[Value]]:
    """A ranking's rows: none is no answer; a workload's candidates are evaluated and ordered."""
    if not rows:
        raise NoResultError(emptied_by(plan, run) if plan.constraints else "no GPU in the KB")
    if not plan.extra.get("evaluation"):
        return rows
    from kbq.lang.gpu.evaluated import evaluate_rows  # only a ranking whose rows are evaluated pays its import

    return evaluate_rows(plan, rows)


def run_plan(text: str, plan: Plan, catalog: Catalog, run: Run, *, explain: bool = False) -> Result:
    """Execute a compiled question and shape its answer with its form's shaper (kbq.lang.forms)."""
    rows = run(plan.sparql).rows if plan.sparql else []
    shaped = shaper(plan.kind)(plan, rows, catalog, run, explain)
    explanation = shaped.explanation
    read_as = plan.extra.get("read_as")
    if read_as:  # a sentence: the answer starts with the canonical question it answered
        explanation = [f"read as: {read_as}", *plan.extra.get("read_notes", []), *explanation]
    extra = dict(shaped.extra)
    chosen = extra.pop("tiers", None)
    decision = decide(
        plan, plan.kind, shaped.columns, shaped.rows, shaped.explanation, catalog.label,
        chosen if isinstance(chosen, list) else None,
    )  # fmt: skip
    return Result(
        question=text,
        kind=plan.kind,
        columns=shaped.columns,
        rows=shaped.rows,
        sparql=plan.shown_sparql(),
        explanation=explanation,
        removed=shaped.removed,
        units=plan.units,
        extra=extra or {k: v for k, v in plan.extra.items() if k in ("breakdown", "chart")},
        decision=decision,
        read_as=read_as,
    )


def _evidence(plan: Plan, rows: list[list[Value]], catalog: Catalog, run: Run) -> list[str]:
    """The measurement that decided the first row, and result labels instead of IRIs."""
    if "evidence" not in plan.columns or not rows:
        return []
    at = plan.columns.index("evidence")
    iris = [r[at] for r in rows if isinstance(r[at], str)]
    labels = catalog.labels(iris)
    first = rows[0][at]
    for row in rows:
        if isinstance(result := row[at], str):
            row[at] = labels.get(result, result)
    if not isinstance(first, str):
        return []
    found = run(
        PREFIXES
        + f"""SELECT ?system ?round ?division ?scenario ?value ?unit ?url WHERE {{ BIND({terms.iri(first)} AS ?r)
  OPTIONAL {{ ?r kbq:system ?system }} OPTIONAL {{ ?r kbq:round ?round }} OPTIONAL {{ ?r kbq:division ?division }}
  OPTIONAL {{ ?r kbq:scenario ?scenario }} OPTIONAL {{ ?r kbq:resultValue ?value }} OPTIONAL {{ ?r kbq:resultUnit ?unit }}
  OPTIONAL {{ ?r kbq:resultUrl ?url }} }} LIMIT 1"""
    ).rows
    if not found:
        return []
    system, round_, division, scenario, value, unit, url = found[0]
    return [
        f"decided by measured evidence [measured]: {labels.get(first, first)} - {system}, {round_}, {division}, {scenario}: "
        f"{value} {unit} as published ({url})"
    ]


def _unknowns(plan: Plan, rows: list[list[Value]]) -> str:
    cols = {c: i for i, c in enumerate(plan.columns)}
    keys = [k for g in plan.extra.get("profile_keys", []) for k in g]
    parts = []
    for row in rows:
        missing = [k for k in keys if k in cols and row[cols[k]] is None]
        if missing:
            parts.append(f"{row[1]} ({', '.join(missing)})")
    return "; ".join(parts)


__all__ = ["KBQ_NS", "Result", "run_plan"]
