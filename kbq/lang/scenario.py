"""A question's workload, resolved once: the typed, complete scenario every form evaluates.

language (parse -> AST) -> scenario (this module: `resolve`) -> evaluate (kbq.lang.evaluate) ->
forms -> render. `resolve` turns what a question asked (model, process, precision, settings,
hardware) plus the KB's facts and named defaults (kb/defaults.ttl: each with its reason and
source) into a frozen `Scenario`. It is the only place a default is applied, and it records each
assumption it made, with the condition under which it applies, so an answer lists exactly the
assumptions its scenario used.

Settings are checked here against the bounds the KB gives each setting (kb/language.ttl:
kbq:minValue, kbq:maxValue, kbq:wholeNumber): a zero, negative, absurd or non-finite value is a
QueryError naming the limit, never silently replaced."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.evaluate import calibrated
from kbq.lang.evaluate.hardware import Accelerator
from kbq.lang.workload import facts, generic, lending
from kbq.lang.workload.formulas import Facts, Format

FP16 = "https://kbq.dev/kb/FP16"
RECOMPUTE_SETTINGS = ("recompute_full", "recompute_selective", "recompute_none")  # kb/language.ttl settingName values
SHARDING_SETTINGS = ("zero_stage", "fsdp", "offload")


class Assumption(NamedTuple):
    """A default the scenario took: its text, and when it applies ('always' or 'multi-gpu')."""

    text: str
    when: str = "always"


class Default(NamedTuple):
    """A named default from the KB (kbq:ScenarioDefault): value or term, reason, source."""

    name: str
    value: float | None
    term: str | None
    label: str
    reason: str
    source: str


@dataclass(frozen=True)
class Scenario:
    """Everything an evaluation needs, resolved: no field is looked up again later."""

    model_iri: str
    model: Facts
    process: facts.Process
    weights: Format  # the weights' storage format
    weights_iri: str
    compute: Term  # the format the matrix multiplications run in
    kv: Format | None  # the KV cache's format; None: no KV cache (training, encoder-only models)
    context: int | None  # None: the model has no sequence length (a CNN)
    batch: int
    zero_stage: int
    offload: bool
    recompute: str | None  # the recomputation setting in effect (kb/language.ttl settingName)
    activation: facts.ActivationModel | None
    lora_rank: int | None
    chunked_loss: bool
    constants: dict[str, facts.Constant] = field(hash=False, compare=False)
    settings: dict[str, object] = field(hash=False, compare=False)  # every setting, checked
    assumptions: tuple[Assumption, ...] = ()
    notes: tuple[str, ...] = ()
    generates_tokens: bool = False  # a decoder language model: its speed is in tokens/s
    gate: Term | None = None  # the precision every form checks the hardware runs: the asked one, or the published one
    hardware: Accelerator | None = None
    count: int | None = None  # GPUs the question names ('on 3 x a100'); None: not named

    @property
    def memory_factor(self) -> float:
        """GB per datasheet 'GB' of GPU memory (binary chips: 24 GB = 24 GiB)."""
        factor = self.constants.get("gpu_memory_factor")
        return factor.value if factor else 1.0

    @property
    def usable_share(self) -> float:
        usable = self.constants.get("usable_share")
        return usable.value if usable else 1.0

    def assumed(self, count: int | None = None) -> list[str]:
        """The assumptions that apply on `count` GPUs (a sharding default needs more than one)."""
        n = count if count is not None else (self.count or 1)
        return [a.text for a in self.assumptions if a.when == "always" or (a.when == "multi-gpu" and n > 1)]


class Bounds(NamedTuple):
    low: float | None
    high: float | None
    whole: bool


def setting_bounds(ctx: Context) -> dict[str, Bounds]:
    rows = ctx.rows(
        "SELECT ?name ?low ?high ?whole WHERE { ?s a kbq:Setting ; kbq:settingName ?name ."
        " OPTIONAL { ?s kbq:minValue ?low } OPTIONAL { ?s kbq:maxValue ?high } OPTIONAL { ?s kbq:wholeNumber ?whole } }"
    )
    return {
        str(name): Bounds(float(low) if low is not None else None, float(high) if high is not None else None, whole is True)
        for name, low, high, whole in rows
    }


def _shown(name: str, value: float, dimension_fraction: bool) -> str:
    if dimension_fraction:
        return f"{value:.0%}"
    return f"{value:,.0f}" if value == int(value) and abs(value) < 1e15 else f"{value:g}"


def check_settings(ctx: Context, settings: dict[str, object]) -> dict[str, object]:
    """Every numeric setting within the KB's bounds for it (else a QueryError naming the limit)."""
    bounds = setting_bounds(ctx)
    fractions = {s.name for s in ctx.cat.settings.values() if s.dimension and s.dimension.endswith("Fraction")}
    for name, value in settings.items():
        if name.startswith("_column_") or isinstance(value, (bool, Term)) or value is None:
            continue
        column = settings.get("_column_" + name)
        col = column if isinstance(column, int) else None
        number = float(value)  # type: ignore[arg-type]
        words = name.replace("_", " ")
        b = bounds.get(name)
        if not math.isfinite(number):
            raise ctx.error(f"{words} must be a finite number (got {value})", col)
        if b is None:
            continue
        frac = name in fractions
        if b.whole and number != int(number):
            raise ctx.error(f"{words} must be a whole number (got {number:g})", col)
        if (b.low is not None and number < b.low) or (b.high is not None and number > b.high):
            low = _shown(name, b.low, frac) if b.low is not None else "-inf"
            high = _shown(name, b.high, frac) if b.high is not None else "inf"
            raise ctx.error(f"{words} must be from {low} to {high} (got {_shown(name, number, frac)})", col)
    return settings


def max_gpus(ctx: Context) -> int:
    rows = ctx.rows("SELECT ?n WHERE { ?d a kbq:Defaults ; kbq:maxGpuCount ?n } LIMIT 1")
    return int(rows[0][0]) if rows else 1_000_000  # type: ignore[arg-type]


def check_count(ctx: Context, count: int, column: int | None) -> int:
    """A GPU count the question names: from 1 to the KB's kbq:maxGpuCount."""
    limit = max_gpus(ctx)
    if count < 1 or count > limit:
        raise ctx.error(f"a GPU count must be from 1 to {limit:,} (got {count:,})", column)
    return count


def defaults(ctx: Context) -> dict[str, Default]:
    rows = ctx.rows(
        "SELECT ?d ?name ?value ?term ?label ?reason WHERE { ?d a kbq:ScenarioDefault ; kbq:defaultName ?name ;"
        " rdfs:label ?label ; kbq:reason ?reason ."
        " OPTIONAL { ?d kbq:defaultValue ?value } OPTIONAL { ?d kbq:defaultTerm ?term } }"
    )
    found = {}
    for d, name, value, term, label, reason in rows:
        number = float(value) if value is not None else None
        found[str(name)] = Default(
            str(name), number, str(term) if term else None, str(label), str(reason), facts.source_labels(ctx, str(d))
        )
    return found


def place_parts(model: Facts, training: bool, offload: bool, named: dict[str, Default]) -> tuple[Facts, list[str], list[str]]:
    """Which parts of a pipeline model the GPU holds, and the weights that follow: at inference every
    part by default (the pipeline_on_gpu default, kb/defaults.ttl), the largest alone with 'with offload' (diffusers'
    model CPU offload moves one whole part at a time); in training the model's own count (its
    denoiser: the encoders and VAE stay frozen). Returns the facts, notes and assumptions."""
    if not model.parts:
        return model, [], []
    counted = model.counted_parts
    missing = [p for p in model.parts if p.params is None]
    if training or not counted:
        why = (
            "training sizes the denoiser alone; the frozen encoders and VAE it also loads are not counted"
            if training
            else "no part has a sourced count"
        )
        note = f"pipeline parts not counted ({why}): {model.label}'s own parameter count is used"
        return model._replace(parts=()), [note], []
    notes = [f"not counted: {p.label} (no sourced parameter count in the KB), so the weights are a lower bound" for p in missing]
    if offload:
        largest = counted[0]
        notes.append(
            f"with offload: one part on the GPU at a time (diffusers' enable_model_cpu_offload), sized by the largest,"
            f" {largest.label}; the others wait in CPU memory"
        )
        return model._replace(parts=(largest,), params=largest.params, active_params=None), notes, []
    d = named.get("pipeline_on_gpu")
    assumed = [f"every part of {model.label} on the GPU ({', '.join(p.label for p in counted)})" + (f": {d.reason}" if d else "")]
    total = sum(p.params or 0.0 for p in counted)
    return model._replace(parts=counted, params=total, active_params=None), notes, assumed


def _model_extras(ctx: Context, iri: str) -> tuple[bool, Term | None]:
    """Whether the model is encoder-only (no KV cache) and its published precision."""
    rows = ctx.rows(
        f"SELECT ?enc ?pub ?label WHERE {{ BIND({terms.iri(iri)} AS ?m) OPTIONAL {{ ?m kbq:encoderOnly ?enc }}"
        " OPTIONAL { ?m kbq:publishedPrecision ?pub . ?pub rdfs:label ?label } } LIMIT 1"
    )
    enc, pub, label = rows[0] if rows else (None, None, None)
    return enc is True, Term(str(pub), str(label), frozenset()) if pub else None


def _int(settings: dict[str, object], name: str) -> int | None:
    value = settings.get(name)
    return None if value is None or isinstance(value, (bool, Term)) else int(float(value))  # type: ignore[arg-type]


def resolve(
    ctx: Context,
    model_term: Term,
    process_term: Term,
    precision: Term | None,
    settings: dict[str, object],
    hardware: Accelerator | None = None,
    count: int | None = None,
    count_column: int | None = None,
) -> Scenario:
    """THE resolver: a question's model, process, precision, settings and hardware plus the KB's
    facts and named defaults -> a complete Scenario, with the assumptions it made."""
    settings = check_settings(ctx, dict(settings))
    if count is not None:
        check_count(ctx, count, count_column)
    model = facts.model(ctx, model_term)
    lent = lending.lender(ctx, model_term) if generic.is_generic(model_term.iri) else None
    if model.params is None:
        sizes = ctx.rows(
            f"SELECT ?l WHERE {{ ?v kbq:variantOf {terms.iri(model_term.iri)} ; rdfs:label ?l ; kbq:parameterCount ?p }}"
            " ORDER BY ?p"
        )
        if sizes:
            raise ctx.error(f"{model.label} is a family: name a size ({', '.join(str(r[0]) for r in sizes)})", None)
        raise ctx.error(f"no parameter count is sourced for {model.label}: kbq cannot size it", None)
    process = facts.process(ctx, process_term)
    named = defaults(ctx)
    model, placed_notes, placed = place_parts(model, process.training, bool(settings.get("offload")), named)
    optimizer = settings.get("optimizer")
    if isinstance(optimizer, Term) and process.training:  # 'with 8-bit adam'
        process = facts.optimizer(ctx, process, optimizer)
    consts = facts.constants(ctx)
    encoder_only, published = _model_extras(ctx, model_term.iri)
    notes: list[str] = list(placed_notes)
    assumed: list[Assumption] = [Assumption(a) for a in placed]
    if lent is not None:
        assumed.append(Assumption(lending.assumption(model_term, lent, model)))
        same = ctx.words.models_of_size(model_term.label.split()[0])
        if same:
            notes.append(f"the KB's models of about this size: {', '.join(same[:5])} (ask about one for its own figures)")

    # --- weights format: the question's, else the process's base, else the model's published, else the default
    fmt_term = precision
    if process.base is not None:
        if precision is not None and precision.iri != process.base.iri:
            notes.append(f"{process.label} keeps the base in {process.base.label}; '{precision.label}' applies to compute")
        fmt_term = process.base
    gate = precision
    if fmt_term is None and published is not None and not process.training:
        fmt_term = gate = published
        assumed.append(Assumption(f"weights in {published.label}: the precision {model.label} is published in"))
    if fmt_term is None:
        d = named.get("precision")
        iri = d.term if d and d.term else FP16
        fmt_term = Term(iri, ctx.cat.label(iri), frozenset())
        assumed.append(Assumption(f"weights in {fmt_term.label}: no precision named" + (f" ({d.reason})" if d else "")))
    bpw = settings.get("bits_per_weight")
    if bpw is not None and precision is None and process.base is None:  # 'at 4.65 bpw': the format that takes any
        rows = ctx.rows("SELECT ?f ?l WHERE { ?f kbq:variableBits true ; rdfs:label ?l } ORDER BY ?f LIMIT 1")
        if rows:
            fmt_term = gate = Term(str(rows[0][0]), str(rows[0][1]), frozenset())
            assumed[:] = [a for a in assumed if not a.text.startswith("weights in")]
            assumed.append(Assumption(f"weights in {fmt_term.label}: the format that stores any bits per weight"))
    fmt = facts.number_format(ctx, fmt_term, float(bpw) if bpw is not None else None)  # type: ignore[arg-type]
    compute = facts.compute_precision(ctx, fmt_term)
    if process.training and process.all_weights and compute.iri != fmt_term.iri:
        raise ctx.error(
            f"{fmt_term.label} is an inference format (weights are dequantised): {process.label} needs FP16, BF16, FP32 or FP8",
            None,
        )

    # --- sequence length and batch: only where a line uses them (a KV cache, training activations)
    sequence = model.layers is not None and (model.heads is not None or model.kv_lora_rank is not None)
    sequence = sequence and (process.training or not encoder_only)
    # a model that reads images and has the image figures (a ViT: forward cost and activation count) is sized per
    # image, not as a token sequence (kbq.lang.evaluate.images and the image activation line)
    sequence = sequence and not (model.activations_m and model.forward_gflops)
    context: int | None = _int(settings, "context")
    column = settings.get("_column_context")
    if context is not None and model.max_context and context > model.max_context:
        if not process.training:
            raise ctx.error(
                f"context {context:,} is beyond {model.label}'s maximum of {model.max_context:,} tokens",
                column if isinstance(column, int) else None,
            )
        # training past the published maximum is done (Unsloth trains Llama 3.1 8B at 342k tokens): say so, count it
        notes.append(
            f"context {context:,} is beyond {model.label}'s published maximum of {model.max_context:,} tokens"
            " (training there extends the position encoding, e.g. RoPE scaling); the memory is counted as asked"
        )
    if context is None and sequence:
        d = named.get("context")
        wanted = int(d.value) if d and d.value else 4096
        context = min(wanted, model.max_context or wanted)
        why = f"{model.label}'s maximum" if model.max_context and model.max_context < wanted else (d.reason if d else "")
        assumed.append(Assumption(f"context {context:,} tokens ({why}; set 'with 32k context')"))
    batch = _int(settings, "batch")
    if batch is None:
        d = named.get("batch")
        batch = int(d.value) if d and d.value else 1
        if sequence or (process.training and (model.activations_m or model.activation_gb_image)):
            assumed.append(
                Assumption(f"batch {batch}" + (f" ({d.reason})" if d else "") + ("" if sequence else "; set 'with batch 256'"))
            )

    # --- KV cache: inference of a model that decodes
    kv: Format | None = None
    if not process.training and not encoder_only:
        kv_term = settings.get("kv_precision")
        if isinstance(kv_term, Term):
            kv = facts.number_format(ctx, kv_term)
        else:  # the model's 16-bit dtype, whatever the weights' format: engines quantise the cache only when asked
            kv = facts.number_format(ctx, Term(FP16, ctx.cat.label(FP16), frozenset()))
            if fmt.bits_per_weight != kv.bits_per_weight and sequence:
                assumed.append(
                    Assumption(
                        f"KV cache in {kv.label}: the model's 16-bit dtype (vLLM's and SGLang's kv_cache_dtype 'auto',"
                        " llama.cpp's f16 cache), not the weights' format; 'with fp8 kv cache' quantises it"
                    )
                )
    elif not process.training and encoder_only:
        notes.append(f"no KV cache: {model.label} is encoder-only (each input is read in one pass, nothing is cached)")

    # --- training: sharding, offload, recomputation
    zero = _int(settings, "zero_stage") or 0
    if settings.get("fsdp"):
        zero = 3
    offload = bool(settings.get("offload"))
    if process.training and not any(settings.get(k) for k in SHARDING_SETTINGS):
        d = named.get("zero_stage")
        zero = int(d.value) if d and d.value is not None else 3
        assumed.append(
            Assumption(
                f"ZeRO stage {zero} / FSDP full sharding over the GPUs: no sharding named"
                + (f" ({d.reason})" if d else "")
                + "; 'with zero 1' or 'with zero 2' shards less",
                "multi-gpu",
            )
        )
    recompute = next((r for r in RECOMPUTE_SETTINGS if settings.get(r)), None)
    backend = settings.get("backend")
    backend_iri = backend.iri if isinstance(backend, Term) else None
    stack = facts.stack(ctx, backend_iri) if backend_iri and process.training else None
    activation = facts.activation_model(ctx, recompute, process.iri, backend_iri) if process.training else None
    if process.training and model.activations_m:  # an image model: activations from its fvcore count
        kept = calibrated.choose(ctx, "image_activation_kept", calibrated.Situation(model=model_term.iri))
        if kept is not None:
            consts = dict(consts)
            consts["image_activation_kept"] = facts.Constant(kept.value, kept.describe(), kept.source)
    if process.training and model.activation_gb_image:  # a measured per-image figure, with its own citation
        cited = ctx.rows(
            f"SELECT ?s WHERE {{ {terms.iri(model_term.iri)} kbq:citation ?c ."
            " ?c kbq:forProperty kbq:trainingActivationGbPerImage ; dcterms:source ?s }"
        )
        consts = dict(consts)
        consts["image_activation_gb"] = facts.Constant(
            model.activation_gb_image,
            "measured training activations per image",
            "; ".join(ctx.cat.label(str(c)) for (c,) in cited) or "; ".join(model.sources),
        )
    if stack is not None:  # the backend's loss and reserve replace the general constants
        consts = dict(consts)
        if stack.logit_bytes is not None:
            consts["logit_bytes"] = stack.logit_bytes
        if stack.reserve_gb is not None:
            consts["stack_reserve_gb"] = stack.reserve_gb
        if stack.extra_bytes is not None:
            consts["stack_extra_bytes"] = stack.extra_bytes
    if process.training and activation is not None and recompute is None and sequence:
        assumed.append(
            Assumption(
                f"activations with {activation.label}: {process.label}'s usual framework default"
                " ('with full recompute' to change it)"
            )
        )
    lora_rank = None
    if process.training and not process.all_weights:
        lora_rank = _int(settings, "lora_rank") or process.rank or 8
    clean = {k: v for k, v in settings.items() if not k.startswith("_column_")}
    if context is not None:
        clean["context"] = context
    clean["batch"] = batch
    return Scenario(
        model_iri=model_term.iri, model=model, process=process, weights=fmt, weights_iri=fmt_term.iri, compute=compute,
        kv=kv, context=context, batch=batch, zero_stage=zero, offload=offload, recompute=recompute, activation=activation,
        lora_rank=lora_rank, chunked_loss=bool(settings.get("chunked_loss")) or bool(stack and stack.fused_loss),
        constants=consts, settings=clean,
        assumptions=tuple(assumed), notes=tuple(notes), generates_tokens=sequence and not encoder_only, gate=gate,
        hardware=hardware, count=count,
    )  # fmt: skip


def default_process(ctx: Context, workload: Term | None) -> Term | None:
    """The model's own (or its family model's) kbq:defaultProcess, else the nearest algorithm family's
    (a generative model asked bare means running it)."""
    if workload is None:
        return None
    workload = workload._replace(iri=generic.kb_iri(workload.iri))  # a generic model: its profile's default
    rows = ctx.rows(
        f"""SELECT ?p ?label (MAX(?own) AS ?mine) (COUNT(?mid) AS ?depth) WHERE {{
  {{ {terms.iri(workload.iri)} a ?f BIND(0 AS ?own) }} UNION {{ {terms.iri(workload.iri)} rdfs:subClassOf ?f BIND(0 AS ?own) }}
  UNION {{ BIND({terms.iri(workload.iri)} AS ?f) BIND(1 AS ?own) }}
  UNION {{ {terms.iri(workload.iri)} kbq:variantOf ?f BIND(1 AS ?own) }}
  UNION {{ {terms.iri(workload.iri)} kbq:primaryAlgorithm ?f BIND(0 AS ?own) }}
  ?f kbq:defaultProcess ?p . ?p rdfs:label ?label .
  OPTIONAL {{ ?f rdfs:subClassOf ?mid . ?mid rdfs:subClassOf kbq:Algorithm }}
}} GROUP BY ?p ?label ORDER BY DESC(?mine) DESC(?depth) ?label LIMIT 1"""
    )
    if not rows:
        return None
    return Term(str(rows[0][0]), str(rows[0][1]), frozenset())
