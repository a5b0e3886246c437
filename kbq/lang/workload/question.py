"""memory / speed / time-to-train / how-many questions, and the memory estimate GPU rankings use.

The answer is computed at compile time from KB facts (the plan holds the rows, so a cached plan
answers without recomputing): every row names its formula and the sources of its constants."""

from __future__ import annotations

from typing import NamedTuple

from kbq.errors import QueryError
from kbq.lang import ast, terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.plan import Plan
from kbq.lang.words import (
    GPU,
    GPU_FAMILY,
    MODEL,
    PRECISION,
    Ceiling,
    Chassis,
    Condition,
    Hardware,
    PrecisionChoice,
    SettingValue,
    Year,
)
from kbq.lang.workload import facts, formulas
from kbq.lang.workload.formulas import GB, Line

FP16 = "https://kbq.dev/kb/FP16"
TRAINING = "https://kbq.dev/kb/Training"  # what 'time to train' means when no training process is named
DECODE, PREFILL, SERVING = (f"https://kbq.dev/kb/{p}Phase" for p in ("Decode", "Prefill", "Serving"))
RECOMPUTE_SETTINGS = ("recompute_full", "recompute_selective", "recompute_none")  # kb/language.ttl settingName values
DEFAULT_CONTEXT = 4096  # tokens, when a question names none: shown in every answer (see `assumed`)


class Estimate(NamedTuple):
    model: formulas.Facts
    process: facts.Process
    format: formulas.Format
    lines: list[Line]  # whole model (one GPU's view before splitting)
    settings: dict[str, object]
    notes: list[str]
    assumed: list[str]
    kv_line: Line | None
    weight_bytes_active: float  # bytes of weights read per decoded token
    kv_bytes_per_seq: float
    compute: Term  # the format the matrix multiplications run in

    @property
    def total(self) -> float:
        return sum(line.gb for line in self.lines)


class Asked(NamedTuple):
    model: Term
    process: Term
    precision: Term | None
    settings: dict[str, object]
    hardware: Hardware | None
    column: int


def understand(ctx: Context, q: ast.WorkloadQuestion) -> Asked:
    from kbq.lang.gpu.question import default_process

    workload = ctx.words.workload(q.target)
    if workload.term is None or not workload.term.is_a(MODEL):
        what = workload.term.label if workload.term else workload.phrase.text
        raise ctx.error(
            f"'{what}' is not a model: {q.form} questions need one (e.g. llama 3.1 70b, bert-large)", q.target.phrase.column
        )
    precision = workload.precision
    settings: dict[str, object] = {}
    hardware: Hardware | None = None
    for clause in q.clauses:
        if not isinstance(clause, ast.Loose):
            raise ctx.error(f"'{q.form}' questions take with / on / at clauses", getattr(clause, "column", None))
        for item in ctx.words.loose(clause):
            if isinstance(item, Hardware):
                hardware = item
            elif isinstance(item, PrecisionChoice):
                precision = item.term
            elif isinstance(item, SettingValue):
                settings[item.setting.name] = item.term if item.term is not None else (True if item.value is None else item.value)
                settings["_column_" + item.setting.name] = item.column
            elif isinstance(item, (Chassis, Year, Ceiling, Condition)):
                raise ctx.error(f"'{clause.keyword} {clause.words.text}' does not apply to a {q.form} question", clause.column)
    if q.hardware is not None:
        gpu = ctx.words.name(q.hardware, (GPU, GPU_FAMILY), "GPU")
        hardware = Hardware(0, gpu, q.hardware.column)
    process = workload.process or (
        Term(TRAINING, "training", frozenset()) if q.form == "time" else default_process(ctx, workload.term)
    )
    if process is None:
        raise ctx.error(
            f"say which process for {workload.term.label} (inference, training, lora training ...)", q.target.phrase.column
        )
    return Asked(workload.term, process, precision, settings, hardware, q.target.phrase.column)


def _column(settings: dict[str, object], name: str) -> int | None:
    column = settings.get("_column_" + name)
    return column if isinstance(column, int) else None


def _int_setting(ctx: Context, settings: dict[str, object], name: str, default: int | None) -> int | None:
    value = settings.get(name, default)
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    if number < 1 or number != int(number) or number > 1e9:
        raise ctx.error(
            f"{name.replace('_', ' ')} must be a whole number from 1 to 10^9 (got {number:g})", _column(settings, name)
        )
    return int(number)


def estimate(ctx: Context, model_term: Term, process_term: Term, precision: Term | None, settings: dict[str, object]) -> Estimate:
    """The memory lines for a model and process at a precision with the question's settings."""
    model = facts.model(ctx, model_term)
    if model.params is None:
        sizes = ctx.rows(
            f"SELECT ?l WHERE {{ ?v kbq:variantOf {terms.iri(model_term.iri)} ; rdfs:label ?l ; kbq:parameterCount ?p }}"
            " ORDER BY ?p"
        )
        if sizes:
            raise ctx.error(f"{model.label} is a family: name a size ({', '.join(str(r[0]) for r in sizes)})", None)
        raise ctx.error(f"no parameter count is sourced for {model.label}: kbq cannot size it", None)
    process = facts.process(ctx, process_term)
    consts = facts.constants(ctx)
    notes: list[str] = []
    assumed: list[str] = []
    fmt_term = precision
    if process.base is not None:
        if precision is not None and precision.iri != process.base.iri:
            notes.append(f"{process.label} keeps the base in {process.base.label}; '{precision.label}' applies to compute")
        fmt_term = process.base
    if fmt_term is None:
        fmt_term = Term(FP16, ctx.cat.label(FP16), frozenset({PRECISION}))
        assumed.append("weights in FP16/BF16 (16-bit): no precision named")
    fmt = facts.number_format(ctx, fmt_term)
    compute = facts.compute_precision(ctx, fmt_term)
    if process.training and process.all_weights and compute.iri != fmt_term.iri:
        raise ctx.error(
            f"{fmt_term.label} is an inference format (weights are dequantised): {process.label} needs FP16, BF16, FP32 or FP8",
            None,
        )
    context = _int_setting(ctx, settings, "context", None)
    if context is None:
        context = min(DEFAULT_CONTEXT, model.max_context or DEFAULT_CONTEXT)
        assumed.append(f"context {context:,} tokens (kbq's default; set 'with 32k context')")
    if model.max_context and context > model.max_context:
        raise ctx.error(
            f"context {context:,} is beyond {model.label}'s maximum of {model.max_context:,} tokens", _column(settings, "context")
        )
    batch = _int_setting(ctx, settings, "batch", 1) or 1
    if "batch" not in settings:
        assumed.append("batch 1")
    lines: list[Line] = []
    kv_line = None
    kv_bytes_per_seq = 0.0
    if process.training:
        lora = None
        if not process.all_weights:
            rank = _int_setting(ctx, settings, "lora_rank", process.rank or 8) or 8
            lora = formulas.lora_parameters(model, targets=process.targets or "q,v", rank=rank)
            if lora is None:
                raise ctx.error(f"{model.label}'s layer sizes are not in the KB: kbq cannot count its LoRA parameters", None)
        full_precision = fmt.bits_per_weight >= 32 and not process.base
        optimizer_bytes = process.optimizer_bytes - 4 if full_precision else process.optimizer_bytes
        gradient_bytes = 4.0 if full_precision else process.gradient_bytes
        if full_precision:
            notes.append("FP32 training: no FP32 master copy (the weights are FP32), 4-byte gradients, 32-bit activations (x2)")
        opt = formulas.training(
            model,
            base=fmt,
            optimizer_bytes=optimizer_bytes,
            gradient_bytes=gradient_bytes,
            optimizer_label=process.optimizer or "optimizer",
            optimizer_source=process.optimizer_source,
            lora=lora,
        )
        lines.append(opt.weight_line)
        if opt.trainable_line:
            lines.append(opt.trainable_line)
        lines += [opt.gradient_line, opt.optimizer_line]
        recompute = next((r for r in RECOMPUTE_SETTINGS if settings.get(r)), None)
        act_model = facts.activation_model(ctx, recompute, process.iri)
        act = None
        if act_model is not None:
            scale = 2.0 if full_precision else 1.0  # the coefficients count 16-bit activations
            act = formulas.activations(
                model, context=context, batch=batch, linear=act_model.linear * scale, quadratic=act_model.quadratic * scale,
                model=act_model.label + (" at 32 bits" if full_precision else ""), source=act_model.source,
            )  # fmt: skip
        if act is not None:
            lines.append(act)
        else:
            notes.append(f"activations not counted: {model.label}'s layers, hidden size and heads are not all in the KB")
        logit = consts.get("logit_bytes")
        if logit is not None and not settings.get("chunked_loss"):
            line = formulas.logits(model, context=context, batch=batch, bytes_per_logit=logit.value, source=logit.source)
            if line is not None:
                lines.append(line)
                notes.append(
                    "logits: the loss keeps every token's logits in FP32; a fused or chunked loss avoids it ('with chunked loss')"
                )
    else:
        lines.append(formulas.weights(model, fmt))
        kv_term = settings.get("kv_precision")
        kv_fmt = (
            facts.number_format(ctx, kv_term)
            if isinstance(kv_term, Term)
            else (fmt if compute.iri == fmt_term.iri else facts.number_format(ctx, compute))
        )
        kv_bytes = kv_fmt.bits_per_weight / 8
        kv_line = formulas.kv_cache(
            model,
            context=context,
            batch=batch,
            kv_bytes=kv_bytes,
            source="PagedAttention (Kwon et al. 2023); " + "; ".join(model.sources),
        )
        if kv_line is not None:
            lines.append(kv_line)
            kv_bytes_per_seq = kv_line.gb * GB / batch
        else:
            notes.append(f"KV cache not counted: {model.label}'s layers, KV heads and head size are not in the KB")
        notes.append("activations: transient at inference (one layer at a time), covered by the runtime reserve, not counted")
    context_gb = consts.get("cuda_context_gb")
    if context_gb is not None:
        lines.append(
            Line(
                "runtime (CUDA context)",
                context_gb.value,
                f"{context_gb.value:g} GB per GPU ({context_gb.label})",
                context_gb.source,
            )
        )
    settings = {k: v for k, v in settings.items() if not k.startswith("_column_")} | {"context": context, "batch": batch}
    active = model.active or model.params
    return Estimate(
        model, process, fmt, lines, settings, notes, assumed, kv_line, active * fmt.bits_per_weight / 8, kv_bytes_per_seq, compute
    )


def split(est: Estimate, n: int, settings: dict[str, object]) -> tuple[list[Line], list[str]]:
    """Per-GPU lines over n GPUs: tensor parallel for inference; ZeRO / FSDP sharding for training."""
    notes: list[str] = []
    out: list[Line] = []
    zero = int(settings.get("zero_stage", 0) or 0)  # type: ignore[call-overload]
    if settings.get("fsdp"):
        zero = 3
    offload = bool(settings.get("offload"))
    if zero not in (0, 1, 2, 3):
        raise QueryError(f"ZeRO stage must be 0, 1, 2 or 3 (got {zero})")
    if not est.process.training:
        heads = est.model.heads
        if heads and n > 1 and heads % n:
            notes.append(f"tensor parallelism needs the GPU count to divide the {heads} attention heads: {n} does not")
        for line in est.lines:
            if line.part == "KV cache":
                out.append(formulas.tensor_parallel_kv(est.model, line, n))
            elif line.part.startswith("runtime"):
                out.append(line)
            else:
                out.append(formulas.shard(line, n, "tensor parallel"))
        return out, notes
    for line in est.lines:
        if line.part.startswith("runtime"):
            out.append(line)
        elif line.part == "optimizer states":
            if offload:
                out.append(line._replace(gb=0.0, formula=f"({line.formula}) offloaded to CPU memory"))
            elif zero >= 1 and n > 1:
                out.append(formulas.shard(line, n, f"ZeRO stage {zero}"))
            else:
                out.append(line)
        elif line.part == "gradients" and zero >= 2 and n > 1:
            out.append(formulas.shard(line, n, f"ZeRO stage {zero}"))
        elif line.part in ("weights", "frozen base weights", "adapter weights") and zero >= 3 and n > 1:
            out.append(formulas.shard(line, n, "ZeRO stage 3"))
        elif line.part == "activations" and n > 1:
            out.append(line._replace(formula=f"({line.formula}) per GPU (data parallel: each GPU runs its own batch)"))
        else:
            out.append(line)
    if n > 1 and zero == 0 and not offload:
        notes.append(
            "data parallel without ZeRO: every GPU holds the whole model, gradients and optimizer ('with zero 3' shards them)"
        )
    return out, notes


def _hardware(ctx: Context, hardware: Hardware | None, required: str | None, notes: list[str]) -> tuple[facts.Gpu | None, int]:
    if hardware is not None and hardware.memory is not None:
        return budget_gpu(hardware.memory, notes), max(hardware.count, 1)
    if hardware is None or hardware.gpu is None:
        if required:
            raise ctx.error(required, None)
        return None, max(hardware.count, 1) if hardware else 1
    gpu = hardware.gpu
    if gpu.is_a(GPU_FAMILY):
        rows = ctx.rows(f"SELECT ?v ?l WHERE {{ <{gpu.iri}> kbq:defaultVariant ?v . ?v rdfs:label ?l }} LIMIT 1")
        if not rows:
            raise ctx.error(f"'{gpu.label}' is a family with no default variant: name one variant", hardware.column)
        variant = Term(str(rows[0][0]), str(rows[0][1]), frozenset({GPU}))
        notes.append(f"'{gpu.label}' read as {variant.label}, the family's default variant (name another to change it)")
        gpu = variant
    return facts.gpu(ctx, gpu), max(hardware.count, 1)


def budget_gpu(memory: float, notes: list[str]) -> facts.Gpu:
    """A memory budget ('on a 24gb gpu') as a card with that memory and no other figure: the memory
    verdict holds; speed, compute and price need a named card (and the answer says so)."""
    label = f"{memory:g} GB card"
    notes.append(
        f"'{memory:g} GB' is a memory budget, evaluated as a card with {memory:g} GB and no other figure "
        "(bandwidth, compute, price unknown: name a card for speed or cost)"
    )
    return facts.Gpu("", label, memory, None, {}, None, None)


def _rows(lines: list[Line], per_gpu: list[Line] | None) -> list[list[object]]:
    rows: list[list[object]] = []
    for i, line in enumerate(lines):
        row: list[object] = [line.part, round(line.gb, 3)]
        if per_gpu is not None:
            row.append(round(per_gpu[i].gb, 3))
        row += [per_gpu[i].formula if per_gpu is not None else line.formula, line.source]
        rows.append(row)
    return rows


def compile_workload(ctx: Context, q: ast.WorkloadQuestion) -> Plan:
    return plan_for(ctx, q.form, understand(ctx, q))


def plan_for(ctx: Context, form: str, asked: Asked) -> Plan:
    """The plan of a memory / how_many / speed / time question already understood (the library
    builds `asked` from keyword arguments, the language from a question)."""
    est = estimate(ctx, asked.model, asked.process, asked.precision, asked.settings)
    consts = facts.constants(ctx)
    usable = consts.get("usable_share")
    usable_share = usable.value if usable else 1.0
    explanation = [
        f"workload: {est.process.label} of {est.model.label} ({est.format.label} weights,"
        f" context {est.settings['context']:,}, batch {est.settings['batch']})",
        f"model facts from: {'; '.join(est.model.sources) or 'no source'}",
    ]
    explanation += [f"assumed: {a}" for a in est.assumed]
    if form == "memory":
        return _memory_plan(ctx, asked, est, usable_share, usable, explanation)
    if form == "how_many":
        return _how_many_plan(ctx, asked, est, usable_share, usable, explanation)
    if form == "speed":
        return _speed_plan(ctx, asked, est, consts, explanation)
    return _time_plan(ctx, asked, est, consts, explanation)


def _memory_plan(ctx, asked, est, usable_share, usable, explanation) -> Plan:
    gpu, count = _hardware(ctx, asked.hardware, None, explanation)
    per_gpu = None
    notes = list(est.notes)
    columns = ["part", "GB"]
    if gpu is not None or count > 1:
        per_gpu, split_notes = split(est, count, asked.settings)
        notes += split_notes
        columns.append("GB per GPU")
    columns += ["formula", "source"]
    rows = _rows(est.lines, per_gpu)
    total = est.total
    total_row: list[object] = ["total", round(total, 3)]
    per_total = sum(line.gb for line in per_gpu) if per_gpu is not None else None
    if per_gpu is not None:
        total_row.append(round(per_total or 0.0, 3))
    total_row += ["sum of the lines above", ""]
    rows.append(total_row)
    chart: dict[str, object] = {
        "type": "breakdown",
        "unit": "GB",
        "per_gpu": count if per_gpu is not None else None,
        "lines": [[line.part, round(line.gb, 3)] for line in (per_gpu or est.lines)],
        "sources": [[line.part, line.source] for line in est.lines],
    }
    if gpu is not None and gpu.memory is not None:
        need = per_total if per_total is not None else total
        word = formulas.verdict(need, gpu.memory, usable_share)
        headroom = gpu.memory - need
        explanation.insert(
            0,
            f"verdict: {word} on {count} x {gpu.label} ({need:.1f} GB needed per GPU of {gpu.memory:g} GB; "
            f"headroom {headroom:+.1f} GB; 'fits' keeps {1 - usable_share:.0%} free"
            + (f", per {usable.label}: {usable.source}" if usable else "")
            + ")",
        )
        chart.update(capacity=gpu.memory, verdict=word, gpu=gpu.label, usable_share=usable_share)
        if word != "fits" and asked.precision is None and not est.process.training:
            explanation.insert(1, _smaller_format(ctx, asked, est, gpu, count, usable_share))
    else:
        explanation.insert(
            0, f"total: {total:.1f} GB" + (f" ({per_total:.1f} GB per GPU over {count})" if per_total is not None else "")
        )
    explanation += notes
    return Plan("memory", "", columns, explanation=explanation, extra={"rows": rows, "chart": chart})


def _smaller_format(ctx: Context, asked: Asked, est: Estimate, gpu: facts.Gpu, count: int, usable_share: float) -> str:
    """The largest weight-only format (dequantised to FP16 for compute, so any GPU runs it) with
    which the model fits this hardware: what people ask next when a model does not fit."""
    rows = ctx.rows(
        f"""SELECT ?f ?l ?bits WHERE {{
  ?f kbq:bitsPerWeight ?bits ; kbq:computePrecision {terms.iri(FP16)} ; rdfs:label ?l .
  FILTER (?f != {terms.iri(FP16)} && ?bits < {est.format.bits_per_weight})
}} ORDER BY DESC(?bits) ?l"""
    )
    smallest = ""
    for iri, label, _bits in rows:
        other = estimate(ctx, asked.model, asked.process, Term(str(iri), str(label), frozenset()), asked.settings)
        lines = split(other, count, asked.settings)[0] if count > 1 else other.lines
        need = sum(line.gb for line in lines)
        if formulas.verdict(need, gpu.memory or 0.0, usable_share) == "fits":
            return (
                f"fits with weight-only quantisation: {label} needs {need:.1f} GB per GPU (the largest format in the KB"
                f" that fits; ask 'at {str(label).lower()}' for its breakdown)"
            )
        smallest = f"{label} needs {need:.1f} GB per GPU"
    return "no weight-only format in the KB makes it fit" + (f" (the smallest: {smallest})" if smallest else "")


def _how_many_plan(ctx, asked, est, usable_share, usable, explanation) -> Plan:
    gpu, _ = _hardware(
        ctx, asked.hardware, "how many WHICH GPU? e.g. 'how many h100 sxm5 for llama 3.1 405b inference'", explanation
    )
    if gpu is None or gpu.memory is None:
        raise ctx.error("that GPU has no sourced memory size", None)
    settings = asked.settings
    heads = est.model.heads if not est.process.training else None  # tensor parallel divides heads; ZeRO does not
    if est.process.training and not any(settings.get(k) for k in ("zero_stage", "fsdp", "offload")):
        settings = {**settings, "zero_stage": 3}
        explanation.append(
            "assumed: ZeRO stage 3 / FSDP full sharding (weights, gradients and optimizer states split over the GPUs):"
            " no sharding named; without it every GPU holds the whole model ('with zero 1' or 'with zero 2' for less)"
        )
    counted = _count(est, gpu.memory * usable_share, settings, heads)
    if est.process.training and not any(settings.get(r) for r in RECOMPUTE_SETTINGS):
        # Gradient checkpointing is what people do when activations crowd the GPUs: take it when it needs fewer.
        full = {**settings, "recompute_full": True}
        est_full = estimate(ctx, asked.model, asked.process, asked.precision, full)
        with_full = _count(est_full, gpu.memory * usable_share, full, heads)
        if with_full is not None and (counted is None or with_full[0] < counted[0]):
            explanation.append(
                "assumed: full activation recomputation (gradient checkpointing): it needs fewer GPUs than keeping the"
                + (f" activations ({counted[0]} GPUs)" if counted else " activations (no count holds them: they are per GPU)")
                + "; 'with selective recompute' to keep them"
            )
            est, settings, counted = est_full, full, with_full
    if counted is None:
        raise ctx.error(
            f"no number of {gpu.label} holds it: {_per_gpu_floor(est, settings):.1f} GB per GPU is not divided by more GPUs"
            " (activations, logits and the runtime under data parallelism); lower the batch or context",
            None,
        )
    n, need, split_notes = counted
    word = formulas.verdict(need, gpu.memory, usable_share)
    rule = f"smallest count whose per-GPU share fits {usable_share:.0%} of {gpu.memory:g} GB" + (
        " and divides the attention heads (tensor parallel)" if heads else " (sharded data parallel)"
    )
    rows = [["GPUs needed", n, rule, usable.source if usable else ""],
            ["per-GPU need (GB)", round(need, 2), "sum of the per-GPU lines of 'memory for ...'", ""],
            ["whole model (GB)", round(est.total, 2), "weights + KV cache/activations + optimizer + runtime", ""]]  # fmt: skip
    explanation.insert(0, f"{n} x {gpu.label}: {word} ({need:.1f} GB per GPU of {gpu.memory:g} GB)")
    link = gpu.interconnect or "an unknown link"
    if n > 1 and est.process.training:
        explanation.append(
            f"splitting: sharded data parallel over {n} GPUs gathers each layer's weights and reduces its gradients"
            f" every step: {gpu.label} has {link}" + (f" ({gpu.link_bandwidth:g} GB/s)" if gpu.link_bandwidth else "")
        )
    elif n > 1:
        explanation.append(
            f"splitting: tensor parallel over {n} GPUs all-reduces activations every layer: {gpu.label} has {link}"
            + (f" ({gpu.link_bandwidth:g} GB/s)" if gpu.link_bandwidth else "")
            + (
                "; without NVLink/Infinity Fabric, prefer pipeline parallel across PCIe"
                if link in ("PCIe only", "an unknown link")
                else ""
            )
        )
    explanation += est.notes + split_notes
    return Plan("how_many", "", ["quantity", "value", "formula", "source"], explanation=explanation, extra={"rows": rows})


def _per_gpu_floor(est: Estimate, settings: dict[str, object]) -> float:
    """GB per GPU that no GPU count divides (activations, logits and runtime under data parallelism)."""
    return sum(line.gb for line in split(est, 1 << 20, settings)[0])


def _count(
    est: Estimate, usable_gb: float, settings: dict[str, object], heads: int | None
) -> tuple[int, float, list[str]] | None:
    """The smallest GPU count whose per-GPU share fits `usable_gb` (and divides the heads for
    tensor parallelism), with that share's GB; None when no count does (what is per GPU is too big)."""
    if _per_gpu_floor(est, settings) > usable_gb:
        return None
    n = formulas.cards_for(est.total, usable_gb, 1.0, heads)
    while True:  # the runtime reserve is per GPU: check the split
        per_gpu, notes = split(est, n, settings)
        need = sum(line.gb for line in per_gpu)
        if need <= usable_gb or n >= 1 << 20:
            return n, need, notes
        n += 1
        while heads and heads % n and n < heads:
            n += 1


def _rate(gpu: facts.Gpu, est: Estimate, ctx: Context) -> tuple[float, str]:
    """The dense rate of the compute precision (tensor FP16 for weight-only formats)."""
    compute_key = next((k for k in ctx.cat.gpu_keys() if k.precision == est.compute.iri), None)
    if compute_key is not None and compute_key.key in gpu.rates:
        return gpu.rates[compute_key.key], compute_key.key
    if "tensor" in gpu.rates:
        return gpu.rates["tensor"], "tensor (FP16/BF16 dense, FP32 accumulate)"
    if "fp32" in gpu.rates:
        return gpu.rates["fp32"], "fp32 (no tensor figure)"
    raise QueryError(f"{gpu.label} has no sourced throughput figure")


def _speed_plan(ctx, asked, est, consts, explanation) -> Plan:
    gpu, count = _hardware(ctx, asked.hardware, "speed of ... on WHAT? e.g. 'on 2 x rtx 4090'", explanation)
    if gpu is None or gpu.bandwidth is None:
        raise ctx.error("that GPU has no sourced memory bandwidth", None)
    eff = consts.get("bandwidth_efficiency")
    value = float(asked.settings.get("bandwidth_efficiency") or (eff.value if eff else 1.0))
    eff_text = f"{value:.0%} bandwidth efficiency" + (
        "" if eff or asked.settings.get("bandwidth_efficiency") else " (no sourced efficiency: roofline upper bound)"
    )
    batch = int(est.settings["batch"])
    rate, rate_name = _rate(gpu, est, ctx)
    mfu = consts.get("prefill_mfu")
    mfu_value = float(asked.settings.get("mfu") or (mfu.value if mfu else 1.0))
    prefill = formulas.prefill_speed(
        active_params=est.model.active or 0.0, tflops=rate, gpus=count, mfu=mfu_value, rate_name=rate_name
    )
    decode = formulas.decode_speed(
        weight_bytes=est.weight_bytes_active, kv_bytes_per_seq=est.kv_bytes_per_seq, batch=batch,
        bandwidth_gbps=gpu.bandwidth, gpus=count, efficiency=value, efficiency_text=eff_text, compute_bound=prefill,
    )  # fmt: skip
    rows = [
        [decode.name, round(decode.value, 1), decode.unit, decode.formula, eff.source if eff else ""],
        ["decode per sequence", round(decode.value / batch, 1), "tokens/s", "decode / batch", ""],
    ]
    if count > 1:
        # layers split over the GPUs (llama.cpp's default): each token passes the GPUs in turn, each reading its share
        layered = formulas.decode_speed(
            weight_bytes=est.weight_bytes_active, kv_bytes_per_seq=est.kv_bytes_per_seq, batch=batch,
            bandwidth_gbps=gpu.bandwidth, gpus=1, efficiency=value, efficiency_text=eff_text,
            compute_bound=formulas.prefill_speed(
                active_params=est.model.active or 0.0, tflops=rate, gpus=1, mfu=mfu_value, rate_name=rate_name
            ),
        )  # fmt: skip
        rows.append([
            "decode, layer split", round(layered.value, 1), layered.unit,
            f"layers split over {count} GPUs, read one GPU after another: one GPU's rate ({layered.formula})",
            eff.source if eff else "",
        ])  # fmt: skip
        explanation.append(
            f"multi-GPU: 'decode' is tensor parallel over {count} GPUs with no communication cost (an upper bound);"
            " 'decode, layer split' is the layer (pipeline) split llama.cpp uses by default, one GPU's rate at batch 1"
        )
    rows.append([prefill.name, round(prefill.value, 0), prefill.unit, prefill.formula, mfu.source if mfu else ""])
    rows += _measured(ctx, asked, est, gpu, count, decode, Roof(value, rate, mfu_value), prefill, consts, explanation)
    per_gpu, split_notes = split(est, count, asked.settings)
    need = sum(line.gb for line in per_gpu)
    if gpu.memory is not None:
        word = formulas.verdict(need, gpu.memory, (consts.get("usable_share") or facts.Constant(1.0, "", "")).value)
        explanation.insert(0, f"memory: {word} ({need:.1f} GB per GPU of {gpu.memory:g} GB on {count} x {gpu.label})")
        if word == "does not fit":
            explanation.insert(0, "warning: the model does not fit this hardware; the speeds assume it did")
    explanation.insert(
        0,
        f"estimate (not a measurement) on {count} x {gpu.label}: decode {decode.value:.1f} tokens/s,"
        f" prefill {prefill.value:,.0f} tokens/s",
    )
    if est.model.experts:
        explanation.append(
            "mixture of experts: decode reads the active parameters per token (batch 1); larger batches touch more experts"
        )
    explanation += split_notes
    return Plan("speed", "", ["quantity", "value", "unit", "formula", "source"], explanation=explanation, extra={"rows": rows})


def _serving(est, gpu, count, n_in, n_out, roof, consts) -> formulas.Speed | None:
    """kbq's serving estimate at a run's input/output lengths on `count` GPUs (see formulas.serving_throughput)."""
    usable = consts.get("usable_share")
    runtime = consts.get("cuda_context_gb")
    weights = sum(line.gb for line in est.lines if line.part.startswith("weights")) * GB
    free = count * (gpu.memory * (usable.value if usable else 1.0) - (runtime.value if runtime else 0.0)) * GB - weights
    return formulas.serving_throughput(
        weight_bytes=est.weight_bytes_active, kv_bytes_per_token=est.kv_bytes_per_seq / int(est.settings["context"]),
        free_bytes=free, input_tokens=n_in, output_tokens=n_out, bandwidth_gbps=gpu.bandwidth, efficiency=roof.efficiency,
        tflops=roof.rate, mfu=roof.mfu, active_params=est.model.active or est.model.params, gpus=count,
    )  # fmt: skip


class Roof(NamedTuple):
    """The constants of the speed estimates: bandwidth efficiency, dense rate (TFLOPS) and MFU."""

    efficiency: float
    rate: float
    mfu: float


def _measured(ctx, asked, est, gpu, count, decode, roof, prefill, consts, explanation) -> list[list[object]]:
    """Published results for this model on this GPU beside the estimate; where one measured what the
    question asks (same phase, weight format, batch and GPU count), the ratio estimate / measured."""
    rows: list[list[object]] = []
    found = facts.measurements(ctx, asked.model.iri, gpu.iri)
    compared = 0
    for m in found:
        rows.append([f"measured: {m.label}", m.value, m.unit, "as published / accelerators [measured]", m.url or m.source])
        same = m.precision is not None and ctx.cat.label(m.precision) == est.format.label and count == (m.parallel or 1)
        estimate, how = None, ""
        if same and m.phase == DECODE and m.batch:
            # the estimate at the run's own conditions: its batch, and its mean context while generating
            tokens = (m.input_tokens or 0) + (m.output_tokens or 0) / 2
            per_token = est.kv_bytes_per_seq / int(est.settings["context"])
            at_run = formulas.decode_speed(
                weight_bytes=est.weight_bytes_active, kv_bytes_per_seq=per_token * tokens, batch=m.batch,
                bandwidth_gbps=gpu.bandwidth, gpus=count, efficiency=roof.efficiency, efficiency_text="",
            )  # fmt: skip
            estimate, how = at_run.value / count, f"at the run's batch {m.batch} and mean context {tokens:g}"
        elif same and m.phase == PREFILL:
            estimate, how = prefill.value / count, "prefill"
        elif same and m.phase == SERVING and m.input_tokens and m.output_tokens and gpu.memory:
            served = _serving(est, gpu, count, m.input_tokens, m.output_tokens, roof, consts)
            if served is not None:
                estimate, how = served.value / count, "serving: " + served.formula
        if estimate is not None:
            compared += 1
            rows.append(
                [f"estimate / measured ({ctx.cat.label(m.phase)})", round(estimate / m.value, 2), "x",
                 f"{estimate:,.1f} / {m.value:g} tokens/s per GPU ({how})", ""]
            )  # fmt: skip
    if rows:
        explanation.append(
            f"measured: {len(found)} published result(s) for {asked.model.label} on {gpu.label};"
            f" {compared} measure what was asked (phase, weight format, batch, GPU count) and are compared with the estimate"
        )
    return rows


def _time_plan(ctx, asked, est, consts, explanation) -> Plan:
    gpu, count = _hardware(
        ctx, asked.hardware, "time to train ... with HOW MANY of WHICH GPU? e.g. 'with 64 x h100 sxm5'", explanation
    )
    tokens = asked.settings.get("tokens")
    if tokens is None:
        raise ctx.error("time to train needs the tokens: e.g. 'on 1t tokens'", None)
    mfu = consts.get("mfu")
    mfu_value = float(asked.settings.get("mfu") or (mfu.value if mfu else 1.0))
    rate, rate_name = _rate(gpu, est, ctx) if gpu else (0.0, "")
    params = est.model.active or est.model.params or 0.0
    hours, days = formulas.train_time(
        params=params, tokens=float(tokens), tflops=rate, gpus=count, mfu=mfu_value, rate_name=rate_name
    )
    rows = [
        [hours.name, round(hours.value, 0), hours.unit, hours.formula, mfu.source if mfu else ""],
        [days.name, round(days.value, 2), days.unit, "GPU-hours / GPUs / 24", ""],
    ]
    explanation.insert(
        0,
        f"estimate (not a measurement): {hours.value:,.0f} GPU-hours, {days.value:.1f} days"
        f" on {count} x {gpu.label if gpu else '?'}",
    )
    runs = ctx.rows(
        "SELECT ?gpu ?gpuLabel ?hours ?tokens WHERE { ?r a kbq:TrainingRun ; kbq:trainedModel ?m ; kbq:gpuHours ?hours ."
        " OPTIONAL { ?r kbq:trainingTokens ?tokens } OPTIONAL { ?r kbq:trainingGpu ?gpu . ?gpu rdfs:label ?gpuLabel }"
        f" FILTER(?m = <{asked.model.iri}>) }}"
    )
    for run_gpu, gpu_label, gpu_hours, run_tokens in runs:
        line = f"published: {asked.model.label} took {float(gpu_hours):,.0f} GPU-hours"
        line += (f" on {gpu_label}" if gpu_label else "") + (f" for {float(run_tokens):,.0f} tokens" if run_tokens else "")
        if run_gpu and run_tokens:
            run_rate, _name = _rate(facts.gpu(ctx, Term(str(run_gpu), str(gpu_label), frozenset())), est, ctx)
            same, _days = formulas.train_time(
                params=params, tokens=float(run_tokens), tflops=run_rate, gpus=1, mfu=mfu_value, rate_name=""
            )
            ratio = same.value / float(gpu_hours)
            line += f"; kbq's formula for that run gives {same.value:,.0f} GPU-hours (estimate / published = {ratio:.2f})"
        explanation.append(line)
    return Plan("time", "", ["quantity", "value", "unit", "formula", "source"], explanation=explanation, extra={"rows": rows})
