"""A GPU question -> one SPARQL SELECT: candidates that meet every constraint, the figures to
show, a score from the workload's profile, and the order the ranking mode asks for."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kbq.errors import QueryError
from kbq.lang import ast, sparql, terms
from kbq.lang.catalog import Key, Term, k
from kbq.lang.context import Constraint, Context, Status
from kbq.lang.contract import STRATEGIES
from kbq.lang.evaluate.cost import PRICE_RULE, Tco
from kbq.lang.evaluate.hardware import WORK_MEMORY_VAR, work_memory_gb, work_memory_pattern
from kbq.lang.evaluate.power import power_limit_note
from kbq.lang.evaluate.split import cards_needed
from kbq.lang.gpu import columns, constraints, explain, ordering
from kbq.lang.gpu.constraints import double
from kbq.lang.gpu.ordering import Metric, Profile
from kbq.lang.plan import Plan
from kbq.lang.scenario import check_count, check_settings, default_process

if TYPE_CHECKING:
    from kbq.lang.workload.question import Estimate
from kbq.lang.words import (
    Ceiling,
    Chassis,
    Condition,
    Hardware,
    PrecisionChoice,
    SettingValue,
    Subject,
    Workload,
    Year,
)

CURRENT_PRICE_DATE = "https://kbq.dev/ontology#currentPriceDate"  # the date of the price the rule gives today


class Ask(NamedTuple):
    """A GPU question once its words are understood."""

    subject: Subject
    workload: Workload | None
    process: Term | None
    process_defaulted: bool
    precision: Term | None
    constraints: list[Constraint]
    statuses: list[Status]
    notes: list[str]
    settings: dict[str, object]
    cards: int | None  # cards in the machine (placement or hardware)
    as_of: str | None  # first day after the as-of period
    order: ast.Order | None
    limit: int | None
    authority: Term | None
    authority_column: int | None


def understand(ctx: Context, q: ast.SubjectQuestion, subject: Subject) -> Ask:
    workload = ctx.words.workload(q.target) if q.target is not None and q.link in ("for", "of") else None
    found: list[Constraint] = [constraints.qualifier(key, term) for key, term, _ in subject.qualifiers]
    if subject.relation is not None and q.target is not None:
        found.append(constraints.relation(ctx, subject.relation, q.target.phrase))
    statuses: list[Status] = []
    notes: list[str] = []
    settings: dict[str, object] = {}
    precision = workload.precision if workload else None
    cards: int | None = None
    as_of: str | None = None
    psu: float | None = None
    power_cap: float | None = None  # 'at 280 w per card'
    order = limit = authority = authority_column = None
    chassis: Chassis | None = None
    ceilings: list[Ceiling] = []
    for clause in q.clauses:  # a price in a filter is the price at the question's date, wherever 'as of' stands
        if isinstance(clause, ast.AsOf):
            ctx.as_of = constraints.date_bounds(ctx, clause.value.text, clause.value.column)[1]
    for clause in q.clauses:
        if isinstance(clause, ast.Where):
            found += constraints.where(ctx, clause.expr)
        elif isinstance(clause, ast.AsOf):
            c, as_of = constraints.as_of(ctx, clause.value.text, clause.value.column)
            found.append(c)
        elif isinstance(clause, ast.Order):
            order = clause
        elif isinstance(clause, ast.Limit):
            if clause.count < 1:
                raise ctx.error("limit must be at least 1", clause.column)
            limit = clause.count
        elif isinstance(clause, ast.Using):
            authority = ctx.words.name(clause.name, (k("ProfileAuthority"),), "profile authority")
            authority_column = clause.name.column
        else:
            for item in ctx.words.loose(clause):
                if isinstance(item, Condition):
                    found += constraints.where(ctx, item.expr)
                elif isinstance(item, Year):
                    c, as_of = constraints.as_of(ctx, item.text, item.column)
                    found.append(c)
                    notes.append(f"'in {item.text}' read as 'as of {item.text}' (GPUs released by then)")
                elif isinstance(item, Chassis):
                    chassis = item
                elif isinstance(item, Hardware):
                    if item.gpu is not None:
                        raise ctx.error(
                            f"'{item.count} x {item.gpu.label}' names hardware: ask 'memory for ...' or 'speed of ...' on it",
                            item.column,
                        )
                    cards = check_count(ctx, item.count, item.column)
                elif isinstance(item, PrecisionChoice):
                    precision = item.term
                elif isinstance(item, Ceiling):
                    ceilings.append(item)
                elif isinstance(item, SettingValue):
                    if item.setting.name == "psu":
                        psu = item.value
                    elif item.setting.name == "power_limit":
                        power_cap = item.value
                    else:
                        settings[item.setting.name] = item.given
                        settings["_column_" + item.setting.name] = item.column
    found += [constraints.ceiling(c, as_of) for c in ceilings]
    named = {"psu": psu, "power_limit": power_cap}
    check_settings(ctx, {**settings, **{k: v for k, v in named.items() if v is not None}})
    if power_cap is not None:
        notes.append(power_limit_note(ctx, float(power_cap)))
    if chassis is not None:
        cards = chassis.cards or cards
        placed, placed_status, placed_notes = constraints.placement(ctx, chassis._replace(cards=cards))
        found += placed
        statuses += placed_status
        notes += placed_notes
    if psu is not None:
        c, status, power_notes = constraints.power(ctx, psu, cards or 1, float(power_cap) if power_cap is not None else None)
        found.append(c)
        statuses.append(status)
        notes += power_notes
    process = workload.process if workload else None
    defaulted = False
    if workload is not None and process is None and workload.term is not None:
        process = default_process(ctx, workload.term)
        defaulted = process is not None
    return Ask(
        subject, workload, process, defaulted, precision, found, statuses, notes, settings, cards, as_of, order, limit,
        authority, authority_column,
    )  # fmt: skip


def memory_fit(ctx: Context, ask: Ask, workload: Term | None, notes: list[str]) -> Estimate | None:
    """The workload's scenario and memory (see `memory for ...`), when it is a model: what the
    ranking's candidates are evaluated with (kbq.lang.evaluate), once each, at run time."""
    from kbq.lang.words import MODEL
    from kbq.lang.workload.question import estimate

    if workload is None or not workload.is_a(MODEL) or ask.process is None:
        if ask.settings and workload is not None:
            notes.append(f"settings {', '.join(k for k in ask.settings if not k.startswith('_'))} apply to models;"
                         f" {workload.label} is not one")  # fmt: skip
        return None
    try:
        est = estimate(ctx, workload, ask.process, ask.precision, ask.settings, ask.cards)
    except QueryError as exc:
        if exc.column is not None:  # the question's own setting is wrong (e.g. a context beyond the model's)
            raise
        notes.append(f"memory fit not computed: {exc.message}")
        return None
    share = est.scenario.usable_share
    parts = ", ".join(f"{line.part} {line.gb:.2f}" for line in est.lines)
    notes.append(
        f"memory: {est.process.label} of {est.model.label} at {est.format.label} needs {est.total:.1f} GB ({parts} GB); "
        f"cards_needed = the smallest count whose per-GPU share fits memory x {share:g} with a valid split"
        " (tensor parallel when it divides the heads, else a layer split; sharded data parallel for training),"
        " as 'how many ...' says; 'memory for ...' shows every formula"
    )
    # the assumptions that apply on one card; those that apply only to several (a sharding default)
    # are added by the shaper when a shown candidate or tier needs more than one (multi_gpu_assumed)
    notes += [f"assumed: {a}" for a in est.scenario.assumed(ask.cards or 1)]
    notes += est.notes
    return est


def _cloud_plan(ctx: Context, q: ast.SubjectQuestion, subject: Subject) -> tuple[object, ...] | None:
    """The cloud tier's plan: the `instances` form for the same workload (its settings and 'as of'
    date; where-conditions on GPUs do not carry over to instances), evaluated at run time by the
    same kbq.lang.gpu.evaluated.evaluate_instances that answers 'cheapest instance for ...'."""
    from kbq.lang import forms  # through the registry: kbq.lang.instances imports this module

    compile_instances = forms.compiler("instances")
    kept = tuple(c for c in q.clauses if isinstance(c, (ast.Loose, ast.AsOf)))
    cls = Term(k("CloudInstance"), "cloud instance", frozenset())
    try:
        plan = compile_instances(ctx, q._replace(clauses=kept), Subject(cls))
    except QueryError:
        return None  # the ranking answers without its cloud tier; the instances form says why
    return plan.to_data()


def multi_gpu_assumed(fit: Estimate | None, cards: int | None) -> list[str]:
    """The scenario's assumptions that apply only on several GPUs and are not yet listed (a machine
    of `cards` lists them already): shown once a candidate needs more than one card."""
    if fit is None or (cards or 1) > 1:
        return []
    one = set(fit.scenario.assumed(1))
    return [a for a in fit.scenario.assumed(2) if a not in one]


TRAINING_MEASURE = "accelerator-minutes"


def measured_evidence(ctx: Context, ask: Ask, workload: Term | None, strategy: str, notes: list[str]) -> str | None:
    """The best published measurement per GPU for the workload (MLPerf, per accelerator), as a
    pattern binding ?measured, ?measured_unit, ?evidence and ?measured_rank (lower ranks first)."""
    if workload is None:
        return None
    process = ask.process.iri if ask.process else None
    wl = terms.iri(workload.iri)
    proc = f"?r kbq:forProcessOf {terms.iri(process)} ." if process else ""
    counts = ctx.rows(
        f"SELECT (COUNT(DISTINCT ?r) AS ?n) (COUNT(DISTINCT ?g) AS ?gpus) (SAMPLE(?unit) AS ?u) WHERE {{"
        f" {{ ?r kbq:benchmarkModel {wl} }} UNION {{ ?r kbq:benchmarkModel ?m . ?m kbq:variantOf {wl} }}"
        f" {proc} ?r kbq:accelerator ?g ; kbq:perAccelerator ?pa ; kbq:perAcceleratorUnit ?unit . }}"
    )
    n, gpus, unit = counts[0] if counts else (0, 0, None)
    if not n:
        if strategy == "evidence":
            notes.append(f"no published measurement for {workload.label} in the KB: ranked by the profile")
        return None
    lower = str(unit) == TRAINING_MEASURE
    best = "MIN" if lower else "MAX"
    notes.append(
        f"evidence: {n} published results ({unit}, normalised per accelerator by kbq; MLPerf does not endorse per-accelerator "
        f"figures) on {gpus} GPUs for {workload.label}; 'measured' is each GPU's best ({'lowest' if lower else 'highest'})"
    )

    def match(r: str, m: str, pa: str, unit: str) -> str:
        """A result ?r of the workload (or a variant ?m) on ?gpu: its figure and unit, in variables named by the caller."""
        for_process = f"{r} kbq:forProcessOf {terms.iri(process)} ." if process else ""
        return (
            f"{{ {r} kbq:benchmarkModel {wl} }} UNION {{ {r} kbq:benchmarkModel {m} . {m} kbq:variantOf {wl} }} {for_process}"
            f" {r} kbq:accelerator ?gpu ; kbq:perAccelerator {pa} ; kbq:perAcceleratorUnit {unit} ."
        )

    rank = "?measured" if lower else "(0.0 - ?measured)"
    best_of = match("?r", "?m", "?pa", "?unit")
    other = match("?r2", "?m2", "?pa2", "?unit2")
    # one OPTIONAL subquery (the best figure per GPU, then a result that reached it), not two and a
    # FILTER over both: Virtuoso 7 then loses ?measured on every row (once the row has a label)
    return (
        f"OPTIONAL {{ SELECT ?gpu ?measured ?measured_unit (SAMPLE(?r2) AS ?evidence) WHERE {{\n"
        f"    {{ SELECT ?gpu ({best}(?pa) AS ?measured) (SAMPLE(?unit) AS ?measured_unit)"
        f" WHERE {{ {best_of} }} GROUP BY ?gpu }}\n"
        f"    {other} FILTER(?pa2 = ?measured) }} GROUP BY ?gpu ?measured ?measured_unit }}\n"
        f"  BIND(IF(BOUND(?measured), {rank}, 0.0) AS ?measured_rank)"
    )


def total_cost(ask: Ask, notes: list[str]) -> Tco | None:
    """Total cost of ownership when the question gives an electricity price ('at $0.15/kwh'),
    computed per candidate by kbq.lang.evaluate.cost.tco (cards from the evaluation)."""
    rate = ask.settings.get("electricity")
    if rate is None:
        return None
    t = Tco(
        float(rate),  # type: ignore[arg-type]
        float(ask.settings.get("years") or 3),  # type: ignore[arg-type]
        float(ask.settings.get("duty") or 1.0),  # type: ignore[arg-type]
        float(ask.settings.get("pue") or 1.0),  # type: ignore[arg-type]
    )
    assumed = [
        w for w, key in (("3 years", "years"), ("utilisation 100%", "duty"), ("PUE 1.0", "pue")) if key not in ask.settings
    ]
    told = f"; assumed: {', '.join(assumed)} (set 'with 5 years', 'with pue 1.3')" if assumed else ""
    notes.append("total cost of ownership: " + t.formula() + told)
    return t


def rate_key(ctx: Context, precision: Term | None) -> Key | None:
    """The throughput key stating the rate of the asked precision (kbq:ratePrecision)."""
    if precision is None:
        return None
    compute = ctx.rows(f"SELECT ?c WHERE {{ {terms.iri(precision.iri)} kbq:computePrecision ?c }} LIMIT 1")
    wanted = str(compute[0][0]) if compute else precision.iri
    for key in ctx.cat.gpu_keys():
        if key.precision == wanted:
            return key
    return None


def compile_gpus(ctx: Context, q: ast.SubjectQuestion, subject: Subject) -> Plan:
    ask = understand(ctx, q, subject)
    workload_term = ask.workload.term if ask.workload else None
    explanation: list[str] = []
    profile: Profile | None = None
    profile_notes: list[str] = []
    if ask.workload is not None or ask.authority is not None:
        profile, profile_notes = ordering.choose(ctx, workload_term, ask.authority, ask.authority_column)
    mode = subject.mode
    strategy = mode.strategy if mode else "profile"
    if profile is None and mode is not None and strategy in ("profile", "value"):
        # 'best gpu' with no workload: deep learning in general (the profile that applies to any
        # algorithm, or the default authority's), not a list by name
        profile, profile_notes = ordering.choose(ctx, None, None, None)
        if profile is not None:
            profile_notes.insert(0, "no workload named: ranked for deep learning in general")
    if strategy not in STRATEGIES:
        raise ctx.error(
            f"'{mode.label if mode else strategy}' ranks by '{strategy}', which kbq does not implement"
            f" (one of {', '.join(sorted(STRATEGIES))}; kbq validate reports it)",
            None,
        )
    if profile is None and strategy == "profile":
        strategy = "name"
    found = list(ask.constraints)
    statuses = list(ask.statuses)
    notes = list(ask.notes) + profile_notes
    path_note = None
    tensor = ctx.cat.keys.get("tensor")
    rate = rate_key(ctx, ask.precision)
    fit = memory_fit(ctx, ask, workload_term, notes)
    gate = fit.scenario.gate if fit is not None else ask.precision  # a model's published precision gates too
    if gate is not None:
        rate = rate_key(ctx, gate)
        c, precision_notes, path_note = constraints.precision(ctx, gate)
        found.append(c)
        notes += precision_notes
    if fit is not None and ask.cards:
        found.append(_fits_in(ctx, fit, ask.cards))
    if profile is not None and fit is None and not any(c.text.split(" ")[0] == "memory" for c in found):
        found += _memory_guideline(ctx, profile, q)
    # --- columns ---------------------------------------------------------------------------
    shown: list[Key] = []
    metrics: list[list[Metric]] = []
    substitute = {}
    if rate is not None and tensor is not None and rate != tensor:
        substitute[tensor.iri] = rate
        notes.append(f"ranking uses {rate.key} ({rate.label}) where the profile names tensor throughput")
    for group in profile.groups if profile else ():
        ranked = []
        for iri in group:
            key = substitute.get(iri) or ctx.cat.keys_by_iri[iri]
            columns.add(shown, key)
            expr = f"?{key.var}"
            if key is rate and tensor is not None:
                columns.add(shown, tensor)
                expr = f"COALESCE(?{key.var}, ?{tensor.var})"
            ranked.append(Metric(key.var.removeprefix("v_"), expr, key.higher_is_better))
        metrics.append(ranked)
    for word in constraints.keys_in(_where_of(q)):
        if word.text.lower() != constraints.NAME_KEY:
            columns.add(shown, ctx.cat.key(word.text, query=ctx.text, column=word.column))
    order_keys = _order_keys(ctx, ask.order)
    columns.add(shown, *order_keys)
    if rate is not None:
        columns.add(shown, rate)
    if profile is None:
        columns.add(shown, *columns.defaults(ctx, "default"))
    if fit is not None:
        columns.add(shown, ctx.cat.keys.get("memory"))
    if ask.cards:
        columns.add(shown, ctx.cat.keys.get("cards"))
    if strategy in ("price", "value"):
        columns.add(shown, ctx.cat.keys.get("price"))
    if strategy == "efficiency":
        columns.add(shown, ctx.cat.keys.get("tdp"))
    if "electricity" in ask.settings:
        columns.add(shown, ctx.cat.keys.get("price"), ctx.cat.keys.get("tdp"))
    columns.add(shown, *columns.defaults(ctx, "always"))
    price_key = ctx.cat.keys.get("price")
    if price_key is not None and price_key in shown:
        kinds = ctx.rows(
            "SELECT DISTINCT ?l WHERE { ?o kbq:priceOf ?g ; kbq:priceKind ?k . ?g a kbq:GPU . ?k rdfs:label ?l"
            " FILTER(?k != kb:UsedPrice) } ORDER BY ?l"
        )
        notes.append(
            PRICE_RULE
            + (f" (before {ask.as_of}, the day after the asked date)" if ask.as_of else " (today)")
            + f"; kinds that count: {', '.join(str(r[0]) for r in kinds)} ('describe GPU' shows each observation)"
        )
        if not ask.as_of:
            columns.add(shown, ctx.cat.keys_by_iri.get(CURRENT_PRICE_DATE))
    cooling = columns.cooling_key(ctx)
    segment = columns.segment_key(ctx)
    shown = [k for k in shown if k not in (cooling, segment)]
    # --- SPARQL ------------------------------------------------------------------------------
    select = ["?gpu", "?name"] + [f"?{k.var}" for k in shown]
    names = ["gpu", "name"] + [k.key for k in shown]
    body = ["?gpu a kbq:GPU ; rdfs:label ?name ."]
    body += [columns.dated_pattern(k, ask.as_of) if ask.as_of else columns.pattern(k) for k in shown]
    for extra_key in (cooling, segment):
        if extra_key is not None:
            body.append(columns.pattern(extra_key))
            select.append(f"?{extra_key.var}")
            names.append(extra_key.key)
    filters = [c.sparql for c in found]
    if filters:
        body.append("FILTER (" + "\n     && ".join(filters) + ")")
    decay = float(ctx.cat.config.get("rank_decay", 0.5))  # type: ignore[arg-type]
    ranking: list[str] = []  # what ranks the candidate rows: score aggregates and BINDs over them
    if metrics:
        score = ordering.score(metrics, decay)
        patterns = sorted(
            {
                columns.dated_pattern(k, ask.as_of) if ask.as_of else columns.pattern(k)
                for g in metrics
                for k in _metric_keys(ctx, g, shown)
            }
        )
        where_filter = ["FILTER (" + " && ".join(filters) + ")"] if filters else []
        casts = list(dict.fromkeys(cast for _aggregate, cast in score.aggregates))
        inner = ["?gpu a kbq:GPU .", *patterns, *where_filter, *casts]
        aggregates = " ".join(aggregate for aggregate, _cast in score.aggregates)
        ranking.append("{ SELECT " + aggregates + " WHERE {\n    " + "\n    ".join(inner) + "\n  } }")
        ranking += score.binds
        select.append("?score")
        names.append("score")
    computed: list[str] = []  # columns the evaluation fills at run time (kbq.lang.gpu.evaluated)
    if fit is not None:
        names += ["needed_gb", "cards_needed"]
        computed += ["needed_gb", "cards_needed"]
    tco = total_cost(ask, notes)
    if tco is not None:
        names.append("tco_usd")
        computed.append("tco_usd")
    evidence = measured_evidence(ctx, ask, workload_term, strategy, notes) if strategy == "evidence" else None
    if evidence is not None:
        body.append(evidence)
        select += ["?measured", "?measured_unit", "?evidence"]
        names += ["measured", "measured_unit", "evidence"]
    if path_note is not None:
        body.append(f"BIND({path_note} AS ?path)")
        select.append("?path")
        names.append("precision_path")
    if statuses:
        # which GPUs meet each status: an OPTIONAL group, not IF(EXISTS ...) in a BIND, which Virtuoso 7
        # evaluates for minutes when the EXISTS holds OPTIONAL and BIND (placement); not an OPTIONAL
        # subquery either: Virtuoso 7 mixes up several that each project a constant
        for i, s in enumerate(statuses):
            body.append(f"OPTIONAL {{ ?gpu a kbq:GPU FILTER({s.sparql}) BIND(1 AS ?known{i}) }}")
        parts = [f'IF(BOUND(?known{i}), "", {terms.string(s.note + "; ")})' for i, s in enumerate(statuses)]
        body.append(f"BIND(CONCAT({', '.join(parts)}) AS ?status)")
        # the sort key is bound here, not computed in ORDER BY: Virtuoso 7 fails to compile an
        # ORDER BY expression over a variable bound with EXISTS (SQ156 "subq ot was supposed to be found")
        body.append('BIND(IF(?status = "", 0, 1) AS ?unverified)')
        select.append("?status")
        names.append("status")
    if fit is not None:
        # the memory the evaluation holds each candidate to (a unified pool's GPU share): the last
        # value of each row, read by kbq.lang.gpu.evaluated and not shown (the memory column is the datasheet's)
        memory_key = ctx.cat.keys.get("memory")  # shown with every workload (above): its variable holds kbq:memory
        pool = f"?{memory_key.var}" if memory_key is not None and memory_key in shown else None
        body.append(work_memory_pattern("?gpu", WORK_MEMORY_VAR, pool=pool))
        select.append("?" + WORK_MEMORY_VAR)
    if ranking:
        # the candidate rows in a DISTINCT subquery, ranked outside it: without it Virtuoso 7 joins the
        # status OPTIONALs with the score aggregates for a minute per question; DISTINCT keeps it from
        # being flattened (a row repeated exactly would be a duplicate in the answer anyway)
        rows = [v for v in select if v != "?score"]
        rows += ["?unverified"] if statuses else []
        rows += ["?measured_rank"] if evidence is not None else []
        body = ["{ SELECT DISTINCT " + " ".join(rows) + " WHERE {\n  " + "\n  ".join(body) + "\n  } }", *ranking]
    first_rank = metrics[0] if metrics else []
    order = _order_clause(
        ctx, ask, strategy, order_keys, bool(metrics), fit is not None, bool(statuses), tco is not None, first_rank
    )
    limit = ask.limit or (subject.count if subject.count else None) or (mode.limit if mode else None)
    runners_up = bool(mode and mode.runners_up and not any(k is segment for k, _t, _p in subject.qualifiers))
    # a mode's own limit ('cheapest': 1) is applied to the rows, so the chart can show the nearest candidates
    sparql_limit = None if runners_up or not (ask.limit or subject.count) or computed else limit
    query = sparql.select(select, body, order, sparql_limit)
    units = {k.key: k.unit_symbol for k in shown if k.unit_symbol}
    if tco is not None:
        units["tco_usd"] = "USD"
    if fit is not None:
        units["needed_gb"] = "GB"
    # --- explanation -------------------------------------------------------------------------
    line = explain.workload_line(workload_term, ask.process, ask.process_defaulted)
    if line:
        explanation.append(line)
    if profile is not None:
        explanation += explain.profile_lines(ctx, profile, workload_term)
    method = explain.method_line("order" if ask.order else strategy, decay, _order_words(ask.order))
    explanation.append(method)
    profile_line = explain.profile_lines(ctx, profile, workload_term)[0] if profile is not None and not ask.order else None
    if statuses:
        explanation.append(
            ("order: fewest cards needed first; then " if _cards_first(ask, strategy, fit is not None) else "order: ")
            + "rows whose placement figures are all sourced (verified) come first, then unverified ones"
        )
    explanation += notes
    explanation += explain.constraint_lines(found)
    return Plan(
        "gpus",
        _prefixes() + query,
        names,
        units=units,
        explanation=explanation,
        constraints=[[c.text, c.sparql] for c in found],
        limit=limit,
        extra={
            "profile": [list(g) for g in profile.groups] if profile else [],
            "profile_keys": [[(substitute.get(i) or ctx.cat.keys_by_iri[i]).key for i in g] for g in profile.groups]
            if profile
            else [],
            "runners_up": runners_up,
            "strategy": strategy,
            "workload": workload_term.iri if workload_term else None,
            "best": bool(mode and mode.limit == 1 and profile is not None),
            "picture": _picture(ctx, ask, strategy, order_keys, method, profile_line),
            "as_of": ask.as_of,  # the tiers' prices are the ones valid then (kbq.lang.tiers)
            "box_cards": ask.cards,  # the machine asked ('in an 8-card server'): the tiers' count limit
            "multi_gpu_assumed": multi_gpu_assumed(fit, ask.cards),
            "cloud": _cloud_plan(ctx, q, subject) if fit is not None else None,
            "evaluation": _evaluation_spec(ctx, ask, strategy, fit, tco, computed, profile, substitute, rate, bool(statuses)),
        },
    )


def _picture(
    ctx: Context, ask: Ask, strategy: str, order_keys: list[Key], method: str, profile_line: str | None
) -> dict[str, object]:
    """What decides the order, for the answer's chart (kbq.lang.chartspec): the order keys and
    their direction, the cost a value ranking divides by, and the line that names the profile."""
    cost = None
    if strategy in ("price", "value", "efficiency"):
        cost_key = ctx.cat.keys.get("tdp" if strategy == "efficiency" else "price")
        cost = cost_key.key if cost_key else None
    descending = None
    if ask.order is not None and order_keys:
        descending = ask.order.descending if ask.order.descending is not None else order_keys[0].higher_is_better
    return {
        "order_keys": [key.key for key in order_keys],
        "descending": descending,
        "cost": cost,
        "method": method,
        "profile": profile_line,
        "lower_is_better_measures": [TRAINING_MEASURE],
    }


def _memory_guideline(ctx: Context, profile: Profile, q: ast.SubjectQuestion) -> list[Constraint]:
    """Where memory decides and no model gives a need to compute: the profile's sourced minimum
    memory for its use (kbq:memoryGuideline, e.g. Dettmers's >= 10 GB for prototyping), unless the
    question sets its own memory condition ('where memory >= 8')."""
    memory = ctx.cat.keys.get("memory")
    if memory is None or any(
        ctx.cat.key(w.text, query=ctx.text, column=w.column) is memory
        for w in constraints.keys_in(_where_of(q))
        if w.text.lower() != constraints.NAME_KEY
    ):
        return []
    rows = ctx.rows(
        f"""SELECT ?label ?min ?src WHERE {{ {terms.iri(profile.iri)} kbq:memoryGuideline ?g .
  ?g rdfs:label ?label ; kbq:minimumMemory ?min ; dcterms:source ?src }} LIMIT 1"""
    )
    if not rows:
        return []
    label, least, _src = rows[0]
    gb = float(least)  # type: ignore[arg-type]
    return [
        Constraint(
            f"memory >= {gb:g} GB ({profile.authority_label}: {label}; 'where memory >= N' sets another)",
            f"EXISTS {{ ?gpu kbq:memory ?guide_mem FILTER({double('?guide_mem')} >= {gb}) }}",
        )
    ]


def _fits_in(ctx: Context, fit: Estimate, cards: int) -> Constraint:
    """'in an 8-card server': the GPUs the cards-needed rule says hold the workload in that many
    cards, evaluated here (kbq.lang.evaluate) on each GPU's memory; SPARQL only receives the result
    (the least memory that holds it, or the list), so the ranking's candidates (and the best figures
    its score divides by) are those GPUs."""
    share, factor = fit.scenario.usable_share, fit.scenario.memory_factor
    rows = ctx.rows(
        f"SELECT ?gpu ?m WHERE {{ ?gpu a kbq:GPU . {work_memory_pattern('?gpu', 'm', required=True)} }} ORDER BY ?gpu"
    )
    held: list[str] = []
    memories: dict[str, float] = {}
    for gpu, memory in rows:
        memories[str(gpu)] = float(memory)  # type: ignore[arg-type]
        needed = cards_needed(fit.footprint, (work_memory_gb(memories[str(gpu)], factor) or 0.0) * share)
        if needed is not None and needed.cards <= cards:
            held.append(str(gpu))
    least = min((memories[g] for g in held), default=None)
    if least is None:
        test = "false"
    elif {g for g, m in memories.items() if m >= least} <= set(held):
        # the rule held on every GPU with at least this memory: one comparison, not a list of hundreds of IRIs
        # (a long IN list passes the guard's bound on operators as the catalog grows)
        test = f"EXISTS {{ {work_memory_pattern('?gpu', 'in_mem', required=True)} FILTER({double('?in_mem')} >= {least!r}) }}"
    else:
        test = f"?gpu IN ({', '.join(terms.iri(g) for g in held)})"
    return Constraint(f"{fit.model.label} fits in {cards} card(s) (the cards-needed rule on each GPU's memory)", test)


def _evaluation_spec(
    ctx: Context,
    ask: Ask,
    strategy: str,
    fit: Estimate | None,
    tco: Tco | None,
    computed: list[str],
    profile: Profile | None,
    substitute: dict[str, Key],
    rate: Key | None,
    statused: bool,
) -> dict[str, object] | None:
    """What kbq.lang.gpu.evaluated needs at run time to evaluate each candidate (plain data)."""
    if not computed:
        return None
    tensor = ctx.cat.keys.get("tensor")
    first: list[list[str]] = []
    if profile is not None and profile.groups:
        for iri in profile.groups[0]:
            key = substitute.get(iri) or ctx.cat.keys_by_iri[iri]
            first.append([key.key] + ([tensor.key] if key is rate and tensor is not None else []))
    cost_key = None
    if ask.order is None and strategy in ("price", "value", "efficiency"):
        cost_key = ctx.cat.keys["tdp" if strategy == "efficiency" else "price"].key
    return {
        "computed": computed,
        "footprint": fit.footprint.to_data() if fit is not None else None,
        "usable_share": fit.scenario.usable_share if fit is not None else 1.0,
        "memory_factor": fit.scenario.memory_factor if fit is not None else 1.0,
        "work_memory": fit is not None,  # each SPARQL row ends with the GPU's work memory (evaluated.work_memory)
        "cards_limit": None,  # 'in N cards' is a constraint (_fits_in): the candidates already fit
        "cards_first": _cards_first(ask, strategy, fit is not None),
        "strategy": strategy,
        "cost_key": cost_key,
        "tco": list(tco) if tco is not None else None,
        "first_rank": first,
        "statused": statused,
    }


def _prefixes() -> str:
    from kbq.lang.catalog import PREFIXES

    return PREFIXES


def _where_of(q: ast.SubjectQuestion) -> ast.Expr | None:
    items = [c.expr for c in q.clauses if isinstance(c, ast.Where)]
    return ast.And(tuple(items)) if items else None


def _metric_keys(ctx: Context, group: list[Metric], shown: list[Key]) -> list[Key]:
    names = {m.name for m in group}
    keys = [k for k in shown if k.var.removeprefix("v_") in names]
    tensor = ctx.cat.keys.get("tensor")
    if tensor is not None and any("COALESCE" in m.expr for m in group):
        keys.append(tensor)
    return keys


def _order_keys(ctx: Context, order: ast.Order | None) -> list[Key]:
    if order is None:
        return []
    keys = [ctx.cat.key(order.ratio.key.text, query=ctx.text, column=order.ratio.key.column)]
    if order.ratio.per is not None:
        keys.append(ctx.cat.key(order.ratio.per.text, query=ctx.text, column=order.ratio.per.column))
    for key in keys:
        if key.is_object:
            raise ctx.error(f"cannot order by {key.key}: it is not a number or date", order.ratio.column)
    return keys


def _order_words(order: ast.Order | None) -> str | None:
    if order is None:
        return None
    direction = "" if order.descending is None else (" desc" if order.descending else " asc")
    return order.ratio.text + direction


_unknown = sparql.unknown


def _cards_first(ask: Ask, strategy: str, fitted: bool) -> bool:
    """A model's ranking without an asked order sorts by cards needed first (then placement, then score)."""
    return fitted and ask.order is None and strategy not in ("price", "value", "efficiency", "evidence")


def _order_clause(
    ctx: Context,
    ask: Ask,
    strategy: str,
    order_keys: list[Key],
    scored: bool,
    fitted: bool = False,
    statused: bool = False,
    tco: bool = False,
    first_rank: list[Metric] | None = None,
) -> list[str]:
    # What depends on the evaluation (cards needed first; cards x price, TCO) is ordered at run time
    # by kbq.lang.gpu.evaluated, over this order: SPARQL orders by the facts alone.
    order: list[str] = []
    if statused:
        order.append("ASC(?unverified)")  # verified rows first
    cards = "1"
    if ask.order is not None:
        key = order_keys[0]
        expr, unknown = f"?{key.var}", _unknown(f"?{key.var}")
        if len(order_keys) == 2:
            per = order_keys[1]
            a, b = constraints.double("?" + key.var), constraints.double("?" + per.var)
            # a ratio over zero is undefined: it sorts last, as a missing figure does
            expr = f"IF({b} != 0, {a} / {b}, ?undefined)"
            unknown = f"IF({unknown} + {_unknown('?' + per.var)} > 0 || {b} = 0, 1, 0)"
        descending = ask.order.descending if ask.order.descending is not None else key.higher_is_better
        # a missing figure sorts last either way (SPARQL puts unbound values first in ASC)
        order.append(f"ASC({unknown})")
        expr = sparql.known_first(expr)
        order.append(f"DESC({expr})" if descending else f"ASC({expr})")
    elif strategy in ("price", "value", "efficiency"):
        price_or_power = ctx.cat.keys.get("tdp" if strategy == "efficiency" else "price")
        if price_or_power is not None:
            var = f"?{price_or_power.var}"
            cost = f"({constraints.double(var)} * {cards})"
            order.append(f"ASC({_unknown(var)})")
            if strategy != "price" and first_rank:
                # score per dollar magnifies an imputed figure on a cheap card: known first-rank figures first
                unknown = " + ".join(_unknown(m.expr) for m in first_rank)
                order.append(f"ASC(IF({unknown} > 0, 1, 0))")
            if strategy == "price":
                order.append(f"ASC({sparql.known_first(cost)})")
            else:
                order.append(f"DESC({sparql.known_first(f'IF({cost} > 0, ?score / {cost}, 0.0)')})")
    elif strategy == "evidence":
        order.append(f"ASC({_unknown('?measured')})")  # measured first, then the profile
        order.append("ASC(?measured_rank)")
    if scored:
        order.append("DESC(?score)")
    order.append("ASC(?name)")
    return order
