"""Reading what the arithmetic needs from the KB: a model's architecture, a number format, a
training process, the activation model, named constants and a GPU's figures. SPARQL through
the executor, so it works on the embedded snapshot and on a remote store alike."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.contract import MODEL_PROPERTIES
from kbq.lang.evaluate.hardware import work_memory_gb
from kbq.lang.workload.formulas import Facts, Format, Part
from kbq.store.executor import Value
from kbq.store.resources import KBQ_NS

_MODEL_PROPS = MODEL_PROPERTIES
_FLOATS = {"params", "active_params", "forward_gflops", "activations_m", "activation_gb_image"}


def model(ctx: Context, term: Term) -> Facts:
    from kbq.lang.workload import generic, lending

    if generic.is_generic(term.iri):  # 'a 70b model': the size asked, the closest dense decoder's architecture
        lent = lending.lender(ctx, term)
        if lent is None:
            raise ctx.error(f"the KB has no dense decoder to lend {term.label} an architecture", None)
        found = model(ctx, Term(lent.iri, lent.label, term.types))
        return found._replace(label=term.label, params=float(term.iri.rsplit("/", 1)[1]), active_params=None)
    # one pattern over the model's own triples (a query with an OPTIONAL per property took ~35 ms a model)
    by_property = {f"{KBQ_NS}{p}": name for name, p in _MODEL_PROPS.items()}
    rows = ctx.rows(
        f"SELECT ?p ?o ?attention WHERE {{ {terms.iri(term.iri)} ?p ?o "
        "OPTIONAL { FILTER(?p = kbq:attentionKind) ?o rdfs:label ?attention } }"
    )
    values: dict[str, Value] = {}
    for prop, value, attention in rows:
        name = by_property.get(str(prop))
        if name is not None:
            values.setdefault(name, value)
        if attention is not None:
            values.setdefault("attention", attention)
    sources = ctx.rows(f"SELECT DISTINCT ?s WHERE {{ {terms.iri(term.iri)} dcterms:source ?s }} ORDER BY ?s")
    kwargs: dict[str, object] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name == "attention":
            kwargs[name] = str(value)
        elif name in ("tied_embeddings", "forward_counts_macs"):
            kwargs[name] = str(value).lower() in ("true", "1")
        elif name in _FLOATS:
            kwargs[name] = float(value)
        else:
            kwargs[name] = int(value)
    found = Facts(label=term.label, sources=tuple(ctx.cat.label(s) for (s,) in sources), **kwargs)  # type: ignore[arg-type]
    parts = pipeline_parts(ctx, term.iri)
    if not parts:
        return found
    return found._replace(parts=parts)  # the scenario decides which parts the GPU holds (scenario.place_parts)


def pipeline_parts(ctx: Context, iri: str) -> tuple[Part, ...]:
    """A pipeline model's parts (kbq:component), largest first, each with its sources; () for one network."""
    rows = ctx.rows(
        f"SELECT ?c ?l ?p ?s WHERE {{ {terms.iri(iri)} kbq:component ?c . ?c rdfs:label ?l ."
        " OPTIONAL { ?c kbq:componentParameters ?p } OPTIONAL { ?c dcterms:source ?s } } ORDER BY ?c ?s"
    )
    by_part: dict[str, tuple[str, float | None, list[str]]] = {}
    for c, label, params, source in rows:
        entry = by_part.setdefault(str(c), (str(label), float(params) if params is not None else None, []))
        if source is not None and ctx.cat.label(source) not in entry[2]:
            entry[2].append(ctx.cat.label(source))
    parts = [Part(label, params, "; ".join(srcs)) for label, params, srcs in by_part.values()]
    return tuple(sorted(parts, key=lambda p: (-(p.params or 0.0), p.label)))


def source_labels(ctx: Context, subject: str) -> str:
    rows = ctx.rows(f"SELECT DISTINCT ?s WHERE {{ {terms.iri(subject)} dcterms:source ?s }} ORDER BY ?s")
    return "; ".join(ctx.cat.label(s) for (s,) in rows)


def number_format(ctx: Context, term: Term, bits: float | None = None) -> Format:
    """The storage of a number format; `bits` sets the bits per weight of a format that takes any
    (kbq:variableBits: EXL2's 'at exl2 4.65bpw')."""
    rows = ctx.rows(
        f"""SELECT ?bits ?bytes ?group ?overhead ?embed ?head ?variable WHERE {{
  BIND({terms.iri(term.iri)} AS ?f)
  OPTIONAL {{ ?f kbq:bitsPerWeight ?bits }} OPTIONAL {{ ?f kbq:bytesPerValue ?bytes }}
  OPTIONAL {{ ?f kbq:groupSize ?group }} OPTIONAL {{ ?f kbq:groupOverheadBits ?overhead }}
  OPTIONAL {{ ?f kbq:embeddingBits ?embed }} OPTIONAL {{ ?f kbq:headBits ?head }} OPTIONAL {{ ?f kbq:variableBits ?variable }}
}} LIMIT 1"""
    )
    found, per_byte, group, overhead, embed, head, variable = rows[0] if rows else (None,) * 7
    if bits is not None and variable is not True:
        raise ctx.error(f"{term.label} has a fixed size: bits per weight apply to a format that takes any (EXL2)", None)
    if variable is True and bits is None:
        raise ctx.error(f"{term.label} takes its bits per weight from the question: e.g. 'at {term.label.lower()} 4.65bpw'", None)
    if bits is not None:
        found = bits
    if found is None and per_byte is None:
        raise ctx.error(f"{term.label} has no sourced storage size (bits per weight) in the KB", None)
    value = float(found) if found is not None else float(per_byte) * 8  # type: ignore[arg-type]
    return Format(
        term.label,
        value,
        int(group) if group is not None else None,
        float(overhead) if overhead is not None else None,
        source_labels(ctx, term.iri),
        float(embed) if embed is not None else None,
        float(head) if head is not None else None,
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
    flops_per_token: float = 6.0  # training FLOPs per parameter and token (kbq:flopsPerParameterToken)


def process(ctx: Context, term: Term) -> Process:
    rows = ctx.rows(
        f"""SELECT ?label ?training ?all ?targets ?rank ?base ?baseLabel ?opt ?optLabel ?optBytes ?gradBytes ?fpt WHERE {{
  BIND({terms.iri(term.iri)} AS ?p) ?p rdfs:label ?label .
  OPTIONAL {{ ?p kbq:isTraining ?training }} OPTIONAL {{ ?p kbq:trainsAllWeights ?all }}
  OPTIONAL {{ ?p kbq:adapterTargets ?targets }} OPTIONAL {{ ?p kbq:defaultLoraRank ?rank }}
  OPTIONAL {{ ?p kbq:baseFormat ?base . ?base rdfs:label ?baseLabel }}
  OPTIONAL {{ ?p kbq:optimizer ?opt . ?opt rdfs:label ?optLabel ; kbq:optimizerBytes ?optBytes ; kbq:gradientBytes ?gradBytes }}
  OPTIONAL {{ ?p kbq:flopsPerParameterToken ?fpt }}
}} LIMIT 1"""
    )
    label, training, all_weights, targets, rank, base, base_label, opt, opt_label, opt_bytes, grad_bytes, fpt = rows[0]
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
        float(str(fpt)) if fpt is not None else 6.0,
    )


class ActivationModel(NamedTuple):
    label: str
    linear: float
    quadratic: float
    source: str
    per_layer: bool = True  # False: checkpoints offloaded to CPU memory, one layer's working set on the GPU


def activation_model(ctx: Context, setting: str | None, process: str, backend: str | None = None) -> ActivationModel | None:
    """The model the question's setting names, else the backend's ('using unsloth'), else the
    process's default, else the KB's default."""
    if setting:
        test = f"?a kbq:settingNameOf {terms.string(setting)} ."
    elif backend and ctx.rows(f"SELECT ?a WHERE {{ {terms.iri(backend)} kbq:stackActivationModel ?a }} LIMIT 1"):
        test = f"{terms.iri(backend)} kbq:stackActivationModel ?a ."
    else:
        test = (
            f"{{ {terms.iri(process)} kbq:defaultActivationModel ?a }} UNION {{ ?a kbq:isDefaultActivationModel true ."
            f" FILTER NOT EXISTS {{ {terms.iri(process)} kbq:defaultActivationModel ?x }} }}"
        )
    rows = ctx.rows(
        f"SELECT ?a ?l ?lin ?quad ?per WHERE {{ {test} ?a a kbq:ActivationModel ; rdfs:label ?l ;"
        " kbq:linearCoefficient ?lin ; kbq:quadraticCoefficient ?quad OPTIONAL { ?a kbq:perLayer ?per } } LIMIT 1"
    )
    if not rows:
        return None
    a, label, lin, quad, per = rows[0]
    per_layer = per is None or str(per).lower() in ("true", "1")
    return ActivationModel(str(label), float(lin), float(quad), source_labels(ctx, str(a)), per_layer)  # type: ignore[arg-type]


def optimizer(ctx: Context, process: Process, term: Term) -> Process:
    """The process with another optimizer ('with 8-bit adam'): its state and gradient bytes."""
    rows = ctx.rows(
        f"SELECT ?l ?ob ?gb WHERE {{ {terms.iri(term.iri)} rdfs:label ?l ; kbq:optimizerBytes ?ob ;"
        " kbq:gradientBytes ?gb } LIMIT 1"
    )
    if not rows:
        raise ctx.error(f"{term.label} has no sourced state size in the KB", None)
    label, ob, gb = rows[0]
    return process._replace(
        optimizer=str(label), optimizer_bytes=float(str(ob)), gradient_bytes=float(str(gb)),
        optimizer_source=source_labels(ctx, term.iri),
    )  # fmt: skip


class Stack(NamedTuple):
    """What a training backend ('using unsloth') changes in the memory lines."""

    label: str
    fused_loss: bool  # the loss never holds the full logit matrix
    logit_bytes: Constant | None  # bytes per logit its loss keeps (replaces the general constant)
    reserve_gb: Constant | None  # memory it holds beyond the CUDA context
    extra_bytes: Constant | None = None  # bytes per trainable parameter beyond weights, gradients and states


def stack(ctx: Context, backend: str) -> Stack:
    rows = ctx.rows(
        f"SELECT ?l ?fused ?lb ?res ?extra WHERE {{ {terms.iri(backend)} rdfs:label ?l"
        f" OPTIONAL {{ {terms.iri(backend)} kbq:fusedLoss ?fused }} OPTIONAL {{ {terms.iri(backend)} kbq:logitBytes ?lb }}"
        f" OPTIONAL {{ {terms.iri(backend)} kbq:reserveGB ?res }}"
        f" OPTIONAL {{ {terms.iri(backend)} kbq:extraBytesPerParameter ?extra }} }} LIMIT 1"
    )
    label, fused, lb, res, extra = rows[0] if rows else ("", None, None, None, None)
    src = source_labels(ctx, backend)
    return Stack(
        str(label), str(fused).lower() in ("true", "1"),
        Constant(float(lb), f"{label} loss: bytes per logit", src) if lb is not None else None,
        Constant(float(res), f"{label} reserve", src) if res is not None else None,
        Constant(float(str(extra)), f"{label} temporaries", src) if extra is not None else None,
    )  # fmt: skip


class Constant(NamedTuple):
    value: float
    label: str
    source: str


def constants(ctx: Context) -> dict[str, Constant]:
    rows = ctx.rows(
        "SELECT ?c ?name ?value ?label WHERE "
        "{ ?c a kbq:Constant ; kbq:constantName ?name ; kbq:value ?value ; rdfs:label ?label"
        " FILTER NOT EXISTS { ?c a kbq:CalibratedConstant } }"  # those apply only where their conditions hold
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
    nominal_memory: float | None = None  # the datasheet's 'GB' figure, which counts binary GiB
    unified_memory: float | None = None  # a unified pool's whole size, when memory is the GPU-usable share

    @property
    def capacity(self) -> str:
        """The memory as the datasheet names it and in the GB the arithmetic uses."""
        if self.memory is None:
            return "unknown memory"
        if self.unified_memory is not None:
            return f"{self.nominal_memory:g} GiB = {self.memory:.1f} GB usable by the GPU of {self.unified_memory:g} GB unified"
        if self.nominal_memory is not None and self.nominal_memory != self.memory:
            return f"{self.nominal_memory:g} GiB = {self.memory:.1f} GB"
        return f"{self.memory:g} GB"


def memory_factor(ctx: Context) -> float:
    """GB per datasheet 'GB' of GPU memory: memory chips come in binary sizes (the gpu_memory_factor constant)."""
    factor = constants(ctx).get("gpu_memory_factor")
    return factor.value if factor else 1.0


def gpu(ctx: Context, term: Term) -> Gpu:
    keys = [k for k in ctx.cat.gpu_keys() if k.precision or k.key in ("tensor", "fp16", "fp32")]
    optional = " ".join(f"OPTIONAL {{ ?g {terms.iri(k.iri)} ?{k.var} }}" for k in keys)
    rows = ctx.rows(
        f"SELECT ?mem ?usable ?bw ?link ?ic {' '.join('?' + k.var for k in keys)} WHERE {{ BIND({terms.iri(term.iri)} AS ?g)"
        " OPTIONAL { ?g kbq:memory ?mem } OPTIONAL { ?g kbq:gpuUsableMemory ?usable }"
        " OPTIONAL { ?g kbq:memoryBandwidth ?bw } OPTIONAL { ?g kbq:interconnectBandwidth ?link }"
        f" OPTIONAL {{ ?g kbq:interconnect/rdfs:label ?ic }} {optional} }} LIMIT 1"
    )
    mem, usable, bw, link, ic, *rates = rows[0]
    # A unified pool (Apple Silicon, Jetson): the GPU may use only its derived kbq:gpuUsableMemory.
    whole = float(str(mem)) if mem is not None and usable is not None else None
    nominal = float(str(usable if usable is not None else mem)) if mem is not None else None
    return Gpu(
        term.iri,
        term.label,
        work_memory_gb(nominal, memory_factor(ctx)),  # the one work-memory rule (kbq.lang.evaluate.hardware)
        float(bw) if bw is not None else None,
        {k.key: float(v) for k, v in zip(keys, rates, strict=True) if v is not None},
        str(ic) if ic else None,
        float(link) if link is not None else None,
        nominal,
        whole,
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
