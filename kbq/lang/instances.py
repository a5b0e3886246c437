"""Cloud-instance questions: 'instances with h100 sxm5 order by price', 'cheapest cloud instance
for llama 3.1 70b inference at int4'. Instances keep their GPUs, counts, memory and dated hourly
rates; a workload adds its memory fit (from its architecture) and an estimated cost per million
output tokens (the decode estimate of `speed of ...`), labelled as an estimate."""

from __future__ import annotations

from kbq.errors import QueryError
from kbq.lang import ast, sparql, terms
from kbq.lang.catalog import PREFIXES, Key, k
from kbq.lang.context import Constraint, Context
from kbq.lang.evaluate.hardware import work_memory_pattern
from kbq.lang.gpu import constraints as gpu_constraints
from kbq.lang.gpu.constraints import double
from kbq.lang.plan import Plan
from kbq.lang.words import GPU, GPU_FAMILY, Condition, Hardware, PrecisionChoice, SettingValue, Subject, Year

INSTANCE = k("CloudInstance")
SHOWN = ("provider", "gpu", "gpus", "gpu_memory", "vcpus", "ram", "price", "per_gpu_hour", "price_date")


def _key(ctx: Context, text: str, column: int | None = None) -> Key:
    return ctx.cat.key(text, query=ctx.text, column=column, domain=INSTANCE)


def _condition(ctx: Context, node: ast.Expr) -> tuple[str, str]:
    """A where-condition on ?inst: instance keys (price, gpus, ram ...), else the GPU's keys."""
    if isinstance(node, ast.Comparison) and node.left.per is None:
        key = _key(ctx, node.left.key.text, node.left.key.column)
        if key.domain == INSTANCE:
            expr = gpu_constraints.compare_key(ctx, key, node.op, node.value, "?inst")
            return expr, f"{node.left.text} {node.op} {node.value.text}"
    if isinstance(node, (ast.And, ast.Or)):
        items = [_condition(ctx, i) for i in node.items]
        glue, word = (" && ", " and ") if isinstance(node, ast.And) else (" || ", " or ")
        return "(" + glue.join(s for s, _ in items) + ")", word.join(w for _, w in items)
    if isinstance(node, ast.Not):
        inner, words = _condition(ctx, node.expr)
        return f"!({inner})", f"not ({words})"
    test, words = gpu_constraints.expr(ctx, node)  # a GPU key: the instance's GPU meets it
    return f"EXISTS {{ ?inst kbq:instanceGpu ?gpu . FILTER({test}) }}", words


def compile_instances(ctx: Context, q: ast.SubjectQuestion, subject: Subject) -> Plan:
    from kbq.lang.gpu.question import default_process, memory_fit, understand

    found: list[Constraint] = [
        Constraint(f"{key.key} = {term.label}", f"EXISTS {{ ?inst {terms.iri(key.iri)} {terms.iri(term.iri)} }}")
        for key, term, _ in subject.qualifiers
    ]
    explanation: list[str] = []
    notes: list[str] = []
    as_of = None
    order: ast.Order | None = None
    limit = subject.count or (subject.mode.limit if subject.mode else None)
    clauses: list[ast.Clause] = []
    for clause in q.clauses:
        if isinstance(clause, ast.Where):
            expr, words = _condition(ctx, clause.expr)
            found.append(Constraint(words, expr))
        elif isinstance(clause, ast.Order):
            order = clause
        elif isinstance(clause, ast.Limit):
            limit = clause.count
        elif isinstance(clause, ast.AsOf):
            _first, as_of = gpu_constraints.date_bounds(ctx, clause.value.text, clause.value.column)
        elif isinstance(clause, ast.Loose) and clause.keyword == "with":
            gpus = _gpus_named(ctx, clause.words)
            if gpus is not None:
                values = " ".join(terms.iri(g) for g in gpus)
                found.append(
                    Constraint(f"with {clause.words.text}", f"EXISTS {{ ?inst kbq:instanceGpu ?g . VALUES ?g {{ {values} }} }}")
                )
                continue
            clauses.append(clause)
        else:
            clauses.append(clause)
    # a workload: reuse the GPU compiler's reading of the clauses (precision, context, batch ...)
    fit = None
    workload = None
    precision_path: str | None = None
    if q.target is not None:
        ask = understand(ctx, q._replace(clauses=tuple(c for c in clauses if isinstance(c, ast.Loose))), subject)
        workload = ask.workload.term if ask.workload else None
        if ask.workload is not None and ask.process is None and workload is not None:
            ask = ask._replace(process=default_process(ctx, workload))
        fit = memory_fit(ctx, ask, workload, notes)
        if ask.precision is not None:  # the GPU compiler's precision support, read on the instance's GPU
            test, precision_notes, precision_path = gpu_constraints.precision(ctx, ask.precision, "?pg")
            notes += precision_notes
            found.append(Constraint(test.text, f"EXISTS {{ ?inst kbq:instanceGpu ?pg FILTER({test.sparql}) }}"))
    else:
        for clause in clauses:
            if isinstance(clause, ast.Loose):
                for item in ctx.words.loose(clause):
                    if isinstance(item, Condition):
                        expr, words = _condition(ctx, item.expr)
                        found.append(Constraint(words, expr))
                    elif isinstance(item, Year):
                        _first, as_of = gpu_constraints.date_bounds(ctx, item.text, item.column)
                    elif isinstance(item, (Hardware, PrecisionChoice, SettingValue)):
                        raise ctx.error(
                            f"'{clause.keyword} {clause.words.text}' needs a workload: 'instances for MODEL ...'", clause.column
                        )
    keys = [_key(ctx, name) for name in SHOWN if not (as_of and name == "price_date")]
    select = ["?inst", "?name"] + [f"?{key.var}" for key in keys]
    names = ["instance", "name"] + [("gpu_model" if key.key == "gpu" else key.key) for key in keys]
    body = ["?inst a kbq:CloudInstance ; rdfs:label ?name ."]
    for key in keys:
        if key.iri == k("hourlyRate") and as_of:
            body.append(_dated_rate(key, as_of))
        elif key.iri == k("gpuHourRate") and as_of:
            body.append(
                f"OPTIONAL {{ ?inst kbq:gpuCount ?n_{key.var} }} BIND(IF(BOUND(?v_price), {double('?v_price')} "
                f"/ ?n_{key.var}, ?none) AS ?{key.var})"
            )
        else:
            body.append(_pattern(key))
    if as_of:
        found.append(Constraint(f"as of {as_of}: rates observed before it", "BOUND(?v_price)"))
    evaluation = None
    if fit is not None:
        # facts for the evaluation (kbq.lang.gpu.evaluated.evaluate_instances): the GPU's memory and bandwidth
        fg_memory = work_memory_pattern("?fg", "fm")  # the one work-memory rule (a unified pool's GPU share)
        body.append(f"OPTIONAL {{ ?inst kbq:instanceGpu ?fg . {fg_memory} OPTIONAL {{ ?fg kbq:memoryBandwidth ?fbw }} }}")
        select += ["?fm", "?fbw"]
        names += ["fit_gpu_memory", "fit_gpu_bandwidth"]
        names += ["fits"]
        evaluation = {
            "footprint": fit.footprint.to_data(),
            "usable_share": fit.scenario.usable_share,
            "memory_factor": fit.scenario.memory_factor,
            "computed": ["fits"],
            "hidden": ["fit_gpu_memory", "fit_gpu_bandwidth"],
            "decode": None,
            "by_cost": False,
            "limit": limit,
        }
        found.append(
            Constraint(f"{fit.model.label} fits the instance's GPUs (the cards-needed rule's split at its GPU count)", "true")
        )
        decode = _decode_spec(ctx, fit, notes)
        if decode is not None:
            rate_keys = _rate_keys(ctx, fit)
            for i, key in enumerate(rate_keys):
                body.append(f"OPTIONAL {{ ?inst kbq:instanceGpu ?rg{i} . ?rg{i} {terms.iri(key.iri)} ?frate{i} }}")
                select.append(f"?frate{i}")
                names.append(f"fit_rate_{key.key}")
                evaluation["hidden"].append(f"fit_rate_{key.key}")  # type: ignore[attr-defined]
            names += ["tokens_per_s", "usd_per_mtok"]
            evaluation["computed"] += ["tokens_per_s", "usd_per_mtok"]  # type: ignore[operator]
            evaluation["decode"] = decode
    if precision_path is not None:
        body.append(f"OPTIONAL {{ ?inst kbq:instanceGpu ?pg }} BIND({precision_path} AS ?path)")
        select.append("?path")
        names.append("precision_path")
    filters = [c.sparql for c in found]
    if filters:
        body.append("FILTER (" + "\n     && ".join(filters) + ")")
    by_cost = "usd_per_mtok" in names and bool(subject.mode and subject.mode.strategy in ("value", "efficiency"))
    if evaluation is not None:
        evaluation["by_cost"] = by_cost
    order_by = _order(ctx, order, keys, False)
    query = sparql.select(select, body, order_by, limit if evaluation is None else None, PREFIXES)
    explanation.append(
        "cloud instances: rates are on-demand list rates per hour for the whole instance, dated; 'as of DATE' picks the rate "
        "valid then; per_gpu_hour = rate / GPUs"
    )
    if order is None:
        explanation.append(
            "method: "
            + (
                "ranked by cost per million output tokens (estimate), then hourly rate"
                if by_cost
                else "ranked by hourly rate (lowest first)"
            )
        )
    explanation += notes + [f"constraint: {c.text}" for c in found]
    units = {key.key: key.unit_symbol for key in keys if key.unit_symbol}
    units["usd_per_mtok"] = "USD"
    return Plan(
        "instances",
        query,
        names,
        units=units,
        explanation=explanation,
        constraints=[[c.text, c.sparql] for c in found],
        limit=limit,
        extra={"evaluation": evaluation} if evaluation is not None else None,
    )


def _gpus_named(ctx: Context, phrase: ast.Phrase) -> list[str] | None:
    """'with h100 sxm5' / 'with a100': the GPUs a with-phrase names, or None."""
    text = ctx.words.content(phrase).text or phrase.text
    found = ctx.cat.candidates(text, [GPU, GPU_FAMILY])
    if len(found) != 1:
        return None
    term = found[0]
    if term.is_a(GPU):
        return [term.iri]
    return [str(g) for (g,) in ctx.rows(f"SELECT ?g WHERE {{ ?g kbq:gpuFamily {terms.iri(term.iri)} }}")]


def _pattern(key: Key) -> str:
    prop = terms.iri(key.iri)
    if key.is_object:
        return f"OPTIONAL {{ ?inst {prop} ?o_{key.var} . ?o_{key.var} rdfs:label ?{key.var} }}"
    return f"OPTIONAL {{ ?inst {prop} ?{key.var} }}"


def _dated_rate(key: Key, before: str) -> str:
    day = terms.date(before)
    return (
        f"OPTIONAL {{ SELECT ?inst (MIN(?rx) AS ?{key.var}) WHERE {{\n"
        f"    {{ SELECT ?inst (MAX(?rd0) AS ?rd) WHERE {{ ?ro kbq:priceOf ?inst ; kbq:observedOn ?rd0 ; kbq:usdPerHour ?rv0 ;"
        f" kbq:priceKind kb:OnDemandRate . FILTER(?rd0 < {day}) }} GROUP BY ?inst }}\n"
        f"    ?ro2 kbq:priceOf ?inst ; kbq:observedOn ?rd ; kbq:usdPerHour ?rx ; kbq:priceKind kb:OnDemandRate .\n"
        f"  }} GROUP BY ?inst }}"
    )


def _rate_keys(ctx: Context, fit) -> list[Key]:
    """The rate keys kbq.lang.evaluate.speed.dense_rate chooses among: the compute precision's, tensor, fp32."""
    from kbq.lang.workload.question import compute_key

    wanted = [compute_key(ctx, fit), "tensor", "fp32"]
    return [ctx.cat.keys[k] for k in dict.fromkeys(w for w in wanted if w) if k in ctx.cat.keys]


def _decode_spec(ctx: Context, fit, notes: list[str]) -> list[object] | None:
    """What the run-time decode estimate of each instance reads: the formula of 'speed of ...'
    (kbq.lang.workload.formulas.decode_speed) on the instance's GPUs; USD per million tokens from its rate."""
    if fit.process.training:
        return None
    eff = fit.scenario.constants.get("bandwidth_efficiency")
    efficiency = eff.value if eff else 1.0
    batch = fit.scenario.batch
    notes.append(
        f"estimate: tokens_per_s = {efficiency:g} x GPU bandwidth x GPUs / ({fit.weight_bytes_active / 1e9:.3g} GB weights + "
        f"{batch} x {fit.kv_bytes_per_seq / 1e9:.3g} GB KV per step) x batch {batch};"
        " usd_per_mtok = rate / (tokens_per_s x 3600) x 10^6"
        + (f" (efficiency: {eff.source})" if eff else " (no sourced efficiency: roofline)")
    )
    mfu = fit.scenario.constants.get("prefill_mfu")
    from kbq.lang.workload.question import compute_key

    return [
        efficiency, fit.weight_bytes_active, fit.kv_bytes_per_seq, float(batch), fit.model.active or 0.0,
        mfu.value if mfu else 1.0, compute_key(ctx, fit),
    ]  # fmt: skip


def _order(ctx: Context, order: ast.Order | None, keys: list[Key], by_cost: bool) -> list[str]:
    out = []
    if order is not None:
        key = _key(ctx, order.ratio.key.text, order.ratio.key.column)
        if key not in keys:
            raise QueryError(f"order by {key.key}: not a figure of cloud instances", query=ctx.text, column=order.ratio.column)
        descending = order.descending if order.descending is not None else key.higher_is_better
        out += [f"ASC(IF(BOUND(?{key.var}), 0, 1))", f"DESC(?{key.var})" if descending else f"ASC(?{key.var})"]
    else:
        if by_cost:
            out += ["ASC(IF(BOUND(?usd_per_mtok), 0, 1))", "ASC(?usd_per_mtok)"]
        out += ["ASC(IF(BOUND(?v_price), 0, 1))", "ASC(?v_price)"]
    out.append("ASC(?name)")
    return out
