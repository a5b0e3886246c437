"""Reading what the arithmetic needs from the KB: a model's architecture, a number format, a
training process, the activation model, named constants and a GPU's figures. SPARQL through
the executor, so it works on the embedded snapshot and on a remote store alike."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.contract import MODEL_PROPERTIES
from kbq.lang.workload.formulas import Facts, Format

_MODEL_PROPS = MODEL_PROPERTIES
_FLOATS = {"params", "active_params"}


def model(ctx: Context, term: Term) -> Facts:
    optional = " ".join(f"OPTIONAL {{ ?m kbq:{p} ?{name} }}" for name, p in _MODEL_PROPS.items())
    rows = ctx.rows(
        f"SELECT {' '.join('?' + n for n in _MODEL_PROPS)} ?attention WHERE {{ BIND({terms.iri(term.iri)} AS ?m) {optional}"
        " OPTIONAL { ?m kbq:attentionKind/rdfs:label ?attention } } LIMIT 1"
    )
    values = dict(zip([*_MODEL_PROPS, "attention"], rows[0], strict=True)) if rows else {}
    sources = ctx.rows(f"SELECT DISTINCT ?s WHERE {{ {terms.iri(term.iri)} dcterms:source ?s }} ORDER BY ?s")
    kwargs: dict[str, object] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name == "attention":
            kwargs[name] = str(value)
        elif name in _FLOATS:
            kwargs[name] = float(value)
        else:
            kwargs[name] = int(value)
    return Facts(label=term.label, sources=tuple(ctx.cat.label(s) for (s,) in sources), **kwargs)  # type: ignore[arg-type]


def source_labels(ctx: Context, subject: str) -> str:
    rows = ctx.rows(f"SELECT DISTINCT ?s WHERE {{ {terms.iri(subject)} dcterms:source ?s }} ORDER BY ?s")
    return "; ".join(ctx.cat.label(s) for (s,) in rows)


def number_format(ctx: Context, term: Term) -> Format:
    rows = ctx.rows(
        f"""SELECT ?bits ?bytes ?group ?overhead ?compute WHERE {{
  BIND({terms.iri(term.iri)} AS ?f)
  OPTIONAL {{ ?f kbq:bitsPerWeight ?bits }} OPTIONAL {{ ?f kbq:bytesPerValue ?bytes }}
  OPTIONAL {{ ?f kbq:groupSize ?group }} OPTIONAL {{ ?f kbq:groupOverheadBits ?overhead }}
}} LIMIT 1"""
    )
    bits, per_byte, group, overhead, _ = rows[0] if rows else (None, None, None, None, None)
    if bits is None and per_byte is None:
        raise ctx.error(f"{term.label} has no sourced storage size (bits per weight) in the KB", None)
    value = float(bits) if bits is not None else float(per_byte) * 8  # type: ignore[arg-type]
    return Format(
        term.label,
        value,
        int(group) if group is not None else None,
        float(overhead) if overhead is not None else None,
        source_labels(ctx, term.iri),
    )


def compute_precision(ctx: Context, term: Term) -> Term:
    rows = ctx.rows(f"SELECT ?c ?l WHERE {{ {terms.iri(term.iri)} kbq:computePrecision ?c . ?c rdfs:label ?l }} LIMIT 1")
    return Term(str(rows[0][0]), str(rows[0][1]), frozenset()) if rows else term


class Process(NamedTuple):
    iri: str
    label: str
    training: bool
    all_weights: bool
    targets: str | None
    rank: int | None
    base: Term | None
    optimizer: str | None
    optimizer_bytes: float
    gradient_bytes: float
    optimizer_source: str
    source: str


def process(ctx: Context, term: Term) -> Process:
    rows = ctx.rows(
        f"""SELECT ?label ?training ?all ?targets ?rank ?base ?baseLabel ?opt ?optLabel ?optBytes ?gradBytes WHERE {{
  BIND({terms.iri(term.iri)} AS ?p) ?p rdfs:label ?label .
  OPTIONAL {{ ?p kbq:isTraining ?training }} OPTIONAL {{ ?p kbq:trainsAllWeights ?all }}
  OPTIONAL {{ ?p kbq:adapterTargets ?targets }} OPTIONAL {{ ?p kbq:defaultLoraRank ?rank }}
  OPTIONAL {{ ?p kbq:baseFormat ?base . ?base rdfs:label ?baseLabel }}
  OPTIONAL {{ ?p kbq:optimizer ?opt . ?opt rdfs:label ?optLabel ; kbq:optimizerBytes ?optBytes ; kbq:gradientBytes ?gradBytes }}
}} LIMIT 1"""
    )
    label, training, all_weights, targets, rank, base, base_label, opt, opt_label, opt_bytes, grad_bytes = rows[0]
    return Process(
        term.iri,
        str(label),
        training is True,
        all_weights is not False,
        str(targets) if targets else None,
        int(rank) if rank is not None else None,
        Term(str(base), str(base_label), frozenset()) if base else None,
        str(opt_label) if opt else None,
        float(opt_bytes) if opt_bytes is not None else 0.0,
        float(grad_bytes) if grad_bytes is not None else 0.0,
        source_labels(ctx, str(opt)) if opt else "",
        source_labels(ctx, term.iri),
    )


class ActivationModel(NamedTuple):
    label: str
    linear: float
    quadratic: float
    source: str


def activation_model(ctx: Context, setting: str | None, process: str) -> ActivationModel | None:
    """The model the question's setting names, else the process's default, else the KB's default."""
    if setting:
        test = f"?a kbq:settingNameOf {terms.string(setting)} ."
    else:
        test = (
            f"{{ {terms.iri(process)} kbq:defaultActivationModel ?a }} UNION {{ ?a kbq:isDefaultActivationModel true ."
            f" FILTER NOT EXISTS {{ {terms.iri(process)} kbq:defaultActivationModel ?x }} }}"
        )
    rows = ctx.rows(
        f"SELECT ?a ?l ?lin ?quad WHERE {{ {test} ?a a kbq:ActivationModel ; rdfs:label ?l ;"
        " kbq:linearCoefficient ?lin ; kbq:quadraticCoefficient ?quad } LIMIT 1"
    )
    if not rows:
        return None
    a, label, lin, quad = rows[0]
    return ActivationModel(str(label), float(lin), float(quad), source_labels(ctx, str(a)))  # type: ignore[arg-type]


class Constant(NamedTuple):
    value: float
    label: str
    source: str


def constants(ctx: Context) -> dict[str, Constant]:
    rows = ctx.rows(
        "SELECT ?c ?name ?value ?label WHERE "
        "{ ?c a kbq:Constant ; kbq:constantName ?name ; kbq:value ?value ; rdfs:label ?label }"
    )
    return {str(name): Constant(float(value), str(label), source_labels(ctx, str(c))) for c, name, value, label in rows}  # type: ignore[arg-type]


class Gpu(NamedTuple):
    iri: str
    label: str
    memory: float | None
    bandwidth: float | None
    rates: dict[str, float]  # key -> value (tensor, fp8 ...)
    interconnect: str | None
    link_bandwidth: float | None


def gpu(ctx: Context, term: Term) -> Gpu:
    keys = [k for k in ctx.cat.gpu_keys() if k.precision or k.key in ("tensor", "fp16", "fp32")]
    optional = " ".join(f"OPTIONAL {{ ?g {terms.iri(k.iri)} ?{k.var} }}" for k in keys)
    rows = ctx.rows(
        f"SELECT ?mem ?bw ?link ?ic {' '.join('?' + k.var for k in keys)} WHERE {{ BIND({terms.iri(term.iri)} AS ?g)"
        " OPTIONAL { ?g kbq:memory ?mem } OPTIONAL { ?g kbq:memoryBandwidth ?bw } OPTIONAL { ?g kbq:interconnectBandwidth ?link }"
        f" OPTIONAL {{ ?g kbq:interconnect/rdfs:label ?ic }} {optional} }} LIMIT 1"
    )
    mem, bw, link, ic, *rates = rows[0]
    return Gpu(
        term.iri,
        term.label,
        float(mem) if mem is not None else None,
        float(bw) if bw is not None else None,
        {k.key: float(v) for k, v in zip(keys, rates, strict=True) if v is not None},
        str(ic) if ic else None,
        float(link) if link is not None else None,
    )


class Measurement(NamedTuple):
    """A published token-throughput result for one model on one GPU, with what it measured."""

    label: str
    value: float
    unit: str
    phase: str | None  # kb:DecodePhase, kb:PrefillPhase, kb:ServingPhase
    precision: str | None
    batch: int | None
    parallel: int | None
    input_tokens: int | None
    output_tokens: int | None
    url: str
    source: str


def measurements(ctx: Context, model_iri: str, gpu_iri: str) -> list[Measurement]:
    """Token-throughput results of the model on the GPU (per accelerator, as kbq normalised them)."""
    rows = ctx.rows(
        f"""SELECT ?r ?label ?value ?unit ?phase ?precision ?batch ?tp ?in ?out ?url WHERE {{
  ?r kbq:benchmarkModel {terms.iri(model_iri)} ; kbq:accelerator {terms.iri(gpu_iri)} ;
     rdfs:label ?label ; kbq:perAccelerator ?value ; kbq:perAcceleratorUnit ?unit .
  FILTER (CONTAINS(STR(?unit), "tokens/s"))
  OPTIONAL {{ ?r kbq:measuredPhase ?phase }} OPTIONAL {{ ?r kbq:measuredPrecision ?precision }}
  OPTIONAL {{ ?r kbq:measuredBatch ?batch }} OPTIONAL {{ ?r kbq:tensorParallel ?tp }} OPTIONAL {{ ?r kbq:resultUrl ?url }}
  OPTIONAL {{ ?r kbq:inputTokens ?in }} OPTIONAL {{ ?r kbq:outputTokens ?out }}
}} ORDER BY ?label"""
    )
    return [
        Measurement(
            str(label),
            float(value),  # type: ignore[arg-type]
            str(unit),
            str(phase) if phase else None,
            str(precision) if precision else None,
            int(batch) if batch is not None else None,
            int(tp) if tp is not None else None,
            int(n_in) if n_in is not None else None,
            int(n_out) if n_out is not None else None,
            str(url or ""),
            source_labels(ctx, str(r)),
        )
        for r, label, value, unit, phase, precision, batch, tp, n_in, n_out, url in rows
    ]
