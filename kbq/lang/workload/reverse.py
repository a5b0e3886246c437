"""Reverse questions: which models fit this hardware ('models that fit on rtx 4090 at q4_k_m',
'models that fit on a 24gb gpu with 32k context'), and the largest of them ('largest model for
rtx 3090'). Each model is sized by the same estimate a memory question uses (inference, its
weights at the asked format, the KV cache at the asked context, the runtime reserve), and the
same verdict decides: a 'fits' keeps the usable share free."""

from __future__ import annotations

from kbq.bounded import BoundedDict
from kbq.errors import QueryError
from kbq.lang import ast
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.evaluate import Accelerator, evaluate
from kbq.lang.plan import Plan
from kbq.lang.words import PROCESS, Hardware, PrecisionChoice, SettingValue
from kbq.lang.workload.facts import constants
from kbq.lang.workload.question import _accelerator, _hardware, estimate
from kbq.store.resources import KB_NS

INFERENCE = KB_NS + "Inference"
FITTING = ("fits", "tight")
_SIZINGS_KEPT = 32  # hardware / format / settings whose model sizing a KB keeps (a bounded memo)


def fitting_models(ctx: Context, clauses: tuple[ast.Clause, ...], hardware: ast.Phrase | None, *, largest: bool) -> Plan:
    """The models of the KB that fit the hardware, largest first (or only the largest)."""
    settings: dict[str, object] = {}
    precision: Term | None = None
    found: Hardware | None = None
    named: Term | None = None  # 'for lora', 'for training': the process each model is sized for (else inference)
    loose = [c for c in clauses if isinstance(c, ast.Loose) and c.keyword != "for"]
    for clause in clauses:
        if isinstance(clause, ast.Loose) and clause.keyword == "for":
            if named is not None:
                raise ctx.error("models that fit take one process ('for lora')", clause.column)
            named = ctx.words.name(clause.words, (PROCESS,), "process")
    if hardware is not None:
        loose.insert(0, ast.Loose("on", hardware, hardware.column))
    for clause in clauses:
        if not isinstance(clause, ast.Loose):
            raise ctx.error("models that fit take on / at / with clauses", getattr(clause, "column", None))
    for clause in loose:
        for item in ctx.words.loose(clause):
            if isinstance(item, Hardware):
                found = item
            elif isinstance(item, PrecisionChoice):
                precision = item.term
            elif isinstance(item, SettingValue):
                settings[item.setting.name] = item.given
            else:
                raise ctx.error(f"'{clause.keyword} {clause.words.text}' does not apply to models that fit", clause.column)
    explanation: list[str] = []
    gpu, count = _hardware(
        ctx, found, "models that fit on WHAT? e.g. 'models that fit on rtx 4090' or 'on a 24gb gpu'", explanation
    )
    if gpu is None or gpu.memory is None:
        raise ctx.error("that GPU has no sourced memory size", None)
    usable = constants(ctx).get("usable_share")
    share = usable.value if usable else 1.0
    accelerator = _accelerator(gpu)
    process = named or Term(INFERENCE, ctx.cat.label(INFERENCE), frozenset())
    asked = tuple(sorted((k, str(v)) for k, v in settings.items()))
    key = (gpu.iri, gpu.memory, count, precision.iri if precision else None, asked, process.iri)
    cache: dict[object, tuple[tuple[list[list[object]], list[str], set[str]], list[str]]]
    cache = ctx.cat.__dict__.setdefault("_fitting_models", BoundedDict(_SIZINGS_KEPT))
    if key in cache:  # 'largest model' and 'models that fit' on the same hardware size the same models once per KB
        ctx.lookups += cache[key][1]  # the look-ups they read, shown as if run again
    else:
        start = len(ctx.lookups)
        cache[key] = (_size_all(ctx, accelerator, count, process, precision, settings), ctx.lookups[start:])
    found_rows, unsized, assumed = cache[key][0]
    rows = [list(row) for row in found_rows]
    hardware_text = f"{count} x {gpu.label}" if count > 1 else gpu.label
    if not rows:
        raise QueryError(f"no model in the KB fits on {hardware_text} ({gpu.memory:.1f} GB per card)")
    if largest:
        fits = [r for r in rows if r[4] == "fits"] or rows
        if fits[0] is not rows[0]:
            explanation.append(f"larger but tight (less than the usable share free): {rows[0][0]} ({rows[0][3]} GB)")
        rows = fits[:1]
    head = (
        f"largest model that fits on {hardware_text}: {rows[0][0]} ({rows[0][3]} GB per GPU of {gpu.memory:g} GB)"
        if largest
        else f"{len(rows)} models fit on {hardware_text} ({gpu.memory:.1f} GB per card), largest first"
    ) + (f", for {process.label}" if named is not None else "")
    explanation.insert(0, head)
    explanation += [
        f"each model sized as 'memory for MODEL {process.label}' on {hardware_text}: 'fits' keeps {1 - share:.0%} free, "
        "'tight' fits in the whole memory",
        *_assumptions(assumed),
    ]
    if precision is None:
        explanation.append("weights at each model's default format; ask 'at q4_k_m' (or another format) for a quantised fit")
    explanation.append(
        "covers the models whose layer count the KB holds (the transformers sized by layers, heads and context);"
        " a model without one (a CNN such as ResNet-50, a diffusion U-Net) is not listed: 'memory for MODEL inference"
        f" on {hardware_text}' sizes it"
    )
    if unsized:
        explanation.append(f"not sized (facts missing): {', '.join(sorted(unsized))}")
    columns = ["model", "parameters_b", "format", "needed_gb_per_gpu", "verdict"]
    return Plan(
        "models",
        "",
        columns,
        units={"parameters_b": "B", "needed_gb_per_gpu": "GB"},
        explanation=explanation,
        extra={"rows": rows},
    )


def _size_all(
    ctx: Context, accelerator: Accelerator, count: int, process: Term, precision: Term | None, settings: dict[str, object]
) -> tuple[list[list[object]], list[str], set[str]]:
    """Every model of the KB with an architecture, sized as 'memory for MODEL inference' on the hardware:
    the rows of those that fit (largest first), those that could not be sized, the assumptions made."""
    models = ctx.rows(
        "SELECT ?m ?l ?p WHERE { ?m a kbq:Model ; rdfs:label ?l ; kbq:parameterCount ?p ; kbq:numLayers ?n } ORDER BY DESC(?p) ?l"
    )
    rows: list[list[object]] = []
    unsized: list[str] = []
    assumed: set[str] = set()
    for iri, label, params in models:
        try:
            est = estimate(ctx, Term(str(iri), str(label), frozenset()), process, precision, settings, count)
        except QueryError:
            unsized.append(str(label))
            continue
        ev = evaluate(est.footprint, accelerator, count, usable_share=est.scenario.usable_share)  # the one evaluation
        need, word = ev.per_gpu_gb, ev.verdict
        assumed.update(est.scenario.assumed(count))
        if word in FITTING:
            size = est.model.params or float(str(params))  # a pipeline: the parts it keeps on the GPU
            rows.append([str(label), round(size / 1e9, 2), est.format.label, round(need or 0.0, 2), word])
    rows.sort(key=lambda row: -float(str(row[1])))  # largest first by the size shown (a pipeline counts its parts)
    return rows, unsized, assumed


def _assumptions(assumed: set[str]) -> list[str]:
    """One line per assumption; the per-model default contexts as one line."""
    contexts = sorted(a for a in assumed if a.startswith("context "))
    lines = [f"assumed: {a}" for a in sorted(assumed) if a not in contexts]
    if len(contexts) == 1:
        lines.append(f"assumed: {contexts[0]}")
    elif contexts:
        sizes = ", ".join(a.split(" tokens")[0].removeprefix("context ") for a in contexts)
        lines.append(f"assumed: each model at kbq's default context for it ({sizes} tokens; set 'with 32k context')")
    return lines
