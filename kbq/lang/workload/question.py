"""memory / speed / time-to-train / how-many questions, and the memory estimate GPU rankings use.

The answer is computed at compile time from KB facts (the plan holds the rows, so a cached plan
answers without recomputing): every row names its formula and the sources of its constants."""

from __future__ import annotations

from typing import Any, NamedTuple

from kbq.errors import QueryError
from kbq.lang import ast, decision, terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.evaluate import Accelerator, calibrated, evaluate, images, speed, verdict
from kbq.lang.evaluate.memory import LinesError, Memory, memory
from kbq.lang.evaluate.split import Footprint, floor_gb, per_gpu_gb, per_gpu_lines
from kbq.lang.evaluate.support import support
from kbq.lang.plan import Plan
from kbq.lang.scenario import Scenario, check_count, default_process, resolve
from kbq.lang.words import (
    GPU,
    GPU_FAMILY,
    MODEL,
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


class Estimate(NamedTuple):
    """A scenario and its memory, as the memory / speed / time forms read them."""

    scenario: Scenario
    memory: Memory

    @property
    def model(self) -> formulas.Facts:
        return self.scenario.model

    @property
    def process(self) -> facts.Process:
        return self.scenario.process

    @property
    def format(self) -> formulas.Format:
        return self.scenario.weights

    @property
    def compute(self) -> Term:
        return self.scenario.compute

    @property
    def settings(self) -> dict[str, object]:
        return self.scenario.settings

    @property
    def footprint(self) -> Footprint:
        return self.memory.footprint

    @property
    def lines(self) -> list[Line]:
        return self.memory.lines

    @property
    def notes(self) -> list[str]:
        return [*self.scenario.notes, *self.memory.notes]

    @property
    def kv_line(self) -> Line | None:
        return self.memory.kv_line

    @property
    def weight_bytes_active(self) -> float:
        return self.memory.weight_bytes_active

    @property
    def kv_bytes_per_seq(self) -> float:
        return self.memory.kv_bytes_per_seq

    @property
    def total(self) -> float:
        return self.memory.total


class Asked(NamedTuple):
    model: Term
    process: Term
    precision: Term | None
    settings: dict[str, object]
    hardware: Hardware | None
    column: int


def understand(ctx: Context, q: ast.WorkloadQuestion) -> Asked:
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
        if isinstance(clause, ast.Using):  # 'using vllm': the backend whose measured constants apply
            settings["backend"] = ctx.words.name(clause.name, (calibrated.BACKEND,), "backend")
            continue
        if not isinstance(clause, ast.Loose):
            raise ctx.error(f"'{q.form}' questions take with / on / at / using clauses", getattr(clause, "column", None))
        for item in ctx.words.loose(clause):
            if isinstance(item, Hardware):
                hardware = item
            elif isinstance(item, PrecisionChoice):
                precision = item.term
            elif isinstance(item, SettingValue):
                settings[item.setting.name] = item.given
                settings["_column_" + item.setting.name] = item.column
            elif isinstance(item, (Chassis, Year, Ceiling, Condition)):
                raise ctx.error(f"'{clause.keyword} {clause.words.text}' does not apply to a {q.form} question", clause.column)
    if q.hardware is not None:
        gpu = ctx.words.name(q.hardware, (GPU, GPU_FAMILY), "GPU")
        hardware = Hardware(1, gpu, q.hardware.column)
    process = workload.process or (
        Term(TRAINING, "training", frozenset()) if q.form == "time" else default_process(ctx, workload.term)
    )
    if process is None:
        raise ctx.error(
            f"say which process for {workload.term.label} (inference, training, lora training ...)", q.target.phrase.column
        )
    return Asked(workload.term, process, precision, settings, hardware, q.target.phrase.column)


def estimate(
    ctx: Context,
    model_term: Term,
    process_term: Term,
    precision: Term | None,
    settings: dict[str, object],
    count: int | None = None,
) -> Estimate:
    """The scenario (resolved once, kbq.lang.scenario) and its memory lines (kbq.lang.evaluate.memory)."""
    s = resolve(ctx, model_term, process_term, precision, settings, count=count, count_column=_column(settings, "_count"))
    try:
        return Estimate(s, memory(s))
    except LinesError as exc:
        raise ctx.error(str(exc), None) from None


def _column(settings: dict[str, object], name: str) -> int | None:
    column = settings.get("_column_" + name)
    return column if isinstance(column, int) else None


def split(est: Estimate, n: int, _settings: dict[str, object] | None = None) -> tuple[list[Line], list[str]]:
    """Per-GPU lines over n GPUs, by the one split rule (kbq.lang.evaluate.split)."""
    found = per_gpu_lines(est.footprint, n)
    if found is None:
        raise QueryError(
            f"{est.model.label} cannot be split over {n} GPUs: {n} does not divide its {est.model.heads} attention heads"
            f" (tensor parallel) and exceeds its {est.model.layers} layers (layer split)"
        )
    lines, how = found
    return lines, [how.note] if how.note else []


def _hardware(ctx: Context, hardware: Hardware | None, required: str | None, notes: list[str]) -> tuple[facts.Gpu | None, int]:
    if hardware is not None:
        check_count(ctx, hardware.count, hardware.column)
    if hardware is not None and hardware.memory is not None:
        return budget_gpu(hardware.memory, notes), max(hardware.count, 1)
    if hardware is None or hardware.gpu is None:
        if required:
            raise ctx.error(required, None)
        return None, hardware.count if hardware else 1
    gpu = hardware.gpu
    if gpu.is_a(GPU_FAMILY):
        rows = ctx.rows(f"SELECT ?v ?l WHERE {{ <{gpu.iri}> kbq:defaultVariant ?v . ?v rdfs:label ?l }} LIMIT 1")
        if not rows:
            raise ctx.error(f"'{gpu.label}' is a family with no default variant: name one variant", hardware.column)
        variant = Term(str(rows[0][0]), str(rows[0][1]), frozenset({GPU}))
        notes.append(f"'{gpu.label}' read as {variant.label}, the family's default variant (name another to change it)")
        gpu = variant
    return facts.gpu(ctx, gpu), hardware.count


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
    count = asked.hardware.count if asked.hardware is not None and form != "how_many" else None
    if asked.hardware is not None:
        check_count(ctx, asked.hardware.count, asked.hardware.column)
    est = estimate(ctx, asked.model, asked.process, asked.precision, asked.settings, count)
    consts = est.scenario.constants
    usable = consts.get("usable_share")
    usable_share = usable.value if usable else 1.0
    shape = f", context {est.scenario.context:,}, batch {est.scenario.batch}" if est.scenario.context is not None else ""
    explanation = [
        f"workload: {est.process.label} of {est.model.label} ({est.format.label} weights{shape})",
        f"model facts from: {'; '.join(est.model.sources) or 'no source'}",
    ]
    if form != "how_many":  # how many lists them once it knows the count
        explanation += [f"assumed: {a}" for a in est.scenario.assumed(count or 1)]
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
    notes += [  # a pipeline's weights line is the sum of these parts
        f"{line.part}: {line.gb:.3f} GB = {line.formula} ({line.source})" for line in formulas.part_lines(est.model, est.format)
    ]
    total = est.total
    total_row: list[object] = ["total", round(total, 3)]
    per_total = sum(line.gb for line in per_gpu) if per_gpu is not None else None
    if per_gpu is not None:
        total_row.append(round(per_total or 0.0, 3))
    total_row += ["sum of the lines above", ""]
    rows.append(total_row)
    decided: dict[str, object] = {"about": _about(est)}
    chart: dict[str, object] = {
        "type": "breakdown",
        "unit": "GB",
        "per_gpu": count if per_gpu is not None else None,
        "lines": [[line.part, round(line.gb, 3)] for line in (per_gpu or est.lines)],
        "sources": [[line.part, line.source] for line in est.lines],
    }
    if gpu is not None and gpu.memory is not None:
        ev = evaluate(est.footprint, _accelerator(gpu), count, usable_share=usable_share)
        need = ev.per_gpu_gb if ev.per_gpu_gb is not None else total
        word = ev.verdict
        # a memory budget (no iri) has no card whose precision support could be asked
        supported = support(ctx, gpu.iri, est.compute) if est.scenario.gate is not None and gpu.iri else None
        if supported is not None and not supported.supported:
            word = "cannot run"
            explanation.insert(
                0, f"verdict: cannot run on {gpu.label}: it {supported.path} ({est.format.label} computes in {est.compute.label})"
            )
        else:
            explanation.insert(
                0,
                f"verdict: {word}{'' if est.memory.complete else ' at best (a lower bound: activations not counted)'}"
                f" on {count} x {gpu.label} ({need:.1f} GB needed per GPU of {gpu.capacity}; "
                f"headroom {gpu.memory - need:+.1f} GB; 'fits' keeps {1 - usable_share:.0%} free"
                + (f", per {usable.label}: {usable.source}" if usable else "")
                + ")",
            )
            if supported is not None:
                notes.append(f"precision: {gpu.label} runs {est.format.label}: {supported.path}")
            if ev.cards_needed is not None and ev.cards_needed != count:
                notes.append(f"cards needed: {ev.cards_needed} x {gpu.label} (the smallest count that fits; 'how many ...')")
        chart.update(capacity=gpu.memory, verdict=word, gpu=gpu.label, usable_share=usable_share)
        decided["verdict"] = decision.verdict(ev, gpu.label, status="cannot run" if word == "cannot run" else None)
        if word not in ("fits", "cannot run") and asked.precision is None and not est.process.training:
            explanation.insert(1, _smaller_format(ctx, asked, est, gpu, count, usable_share))
    else:
        explanation.insert(
            0, f"total: {total:.1f} GB" + (f" ({per_total:.1f} GB per GPU over {count})" if per_total is not None else "")
        )
    explanation += notes
    return Plan("memory", "", columns, explanation=explanation, extra={"rows": rows, "chart": chart, **decided})


def _about(est: Estimate) -> str:
    """'Llama 3.1 70B inference (FP16)': what the headline says the need is for."""
    return f"{est.model.label} {est.process.label} ({est.format.label})"


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
        need = per_gpu_gb(other.footprint, count)
        if need is not None and verdict(need, gpu.memory, usable_share) == "fits":
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
    notes: list[str] = []
    if est.scenario.weights_iri and gpu.iri:
        supported = support(ctx, gpu.iri, est.compute) if est.scenario.gate is not None else None
        if supported is not None and not supported.supported:
            raise ctx.error(f"{gpu.label} {supported.path}: it cannot run {est.format.label} ({supported.requirement})", None)
        if supported is not None:
            notes.append(f"precision: {gpu.label} runs {est.format.label}: {supported.path}")
    ev = evaluate(est.footprint, _accelerator(gpu), usable_share=usable_share)
    if ev.cards_needed is None:
        raise ctx.error(
            f"no number of {gpu.label} holds it: {floor_gb(est.footprint):.1f} GB per GPU is not divided by more GPUs"
            " (activations, logits and the runtime under data parallelism; one layer under a layer split);"
            " lower the batch or context",
            None,
        )
    n, need = ev.cards_needed, ev.per_gpu_gb or 0.0
    least = "" if est.memory.complete else "at least "
    explanation += [f"assumed: {a}" for a in est.scenario.assumed(n)]
    rule = (
        f"smallest count whose per-GPU share fits {usable_share:.0%} of {gpu.capacity} with a valid split"
        " (tensor parallel when it divides the attention heads, else a layer split)"
        if not est.process.training
        else f"smallest count whose per-GPU share fits {usable_share:.0%} of {gpu.capacity} ({ev.split})"
    )
    rows = [["GPUs needed" + (" (at least)" if least else ""), n, rule, usable.source if usable else ""],
            ["per-GPU need (GB)", round(need, 2), "sum of the per-GPU lines of 'memory for ...'", ""],
            ["whole model (GB)", round(est.total, 2), "weights + KV cache/activations + optimizer + runtime", ""]]  # fmt: skip
    explanation.insert(
        0,
        f"{least}{n} x {gpu.label}: {ev.verdict} ({need:.1f} GB per GPU of {gpu.capacity}; {ev.split})"
        + ("; a lower bound: activations are not counted" if least else ""),
    )
    link = gpu.interconnect or "an unknown link"
    if n > 1 and est.process.training:
        explanation.append(
            f"splitting: sharded data parallel over {n} GPUs gathers each layer's weights and reduces its gradients"
            f" every step: {gpu.label} has {link}" + (f" ({gpu.link_bandwidth:g} GB/s)" if gpu.link_bandwidth else "")
        )
    elif n > 1 and ev.split == "tensor parallel":
        explanation.append(
            f"splitting: tensor parallel over {n} GPUs all-reduces activations every layer: {gpu.label} has {link}"
            + (f" ({gpu.link_bandwidth:g} GB/s)" if gpu.link_bandwidth else "")
            + (
                "; without NVLink/Infinity Fabric, prefer pipeline parallel across PCIe"
                if link in ("PCIe only", "an unknown link")
                else ""
            )
        )
    elif n > 1:
        explanation.append(f"splitting: {ev.split_note}; activations pass from GPU to GPU over {link}")
    explanation += notes + est.notes
    decided = {"about": _about(est), "verdict": decision.verdict(ev, gpu.label)}
    return Plan(
        "how_many", "", ["quantity", "value", "formula", "source"], explanation=explanation, extra={"rows": rows, **decided}
    )


def _power_limit(ctx: Context, gpu: facts.Gpu, cap: float, column: int | None) -> str:
    """A power limit on a named card: above its sourced board power is an error (no card can be
    set above it); the speeds shown are at stock power, with what the KB measured at that limit."""
    from kbq.lang.evaluate.power import power_limit_note

    rows = ctx.rows(f"SELECT ?w WHERE {{ <{gpu.iri}> kbq:tdp ?w }} LIMIT 1")
    if rows and cap > float(rows[0][0]):  # type: ignore[arg-type]
        raise ctx.error(
            f"a power limit of {cap:g} W is above {gpu.label}'s board power of {float(rows[0][0]):g} W"  # type: ignore[arg-type]
            " (a limit can only lower it)",
            column,
        )
    return power_limit_note(ctx, cap, gpu.iri) + "; the speeds above are at stock power"


def _accelerator(gpu: facts.Gpu) -> Accelerator:
    return Accelerator(gpu.label, gpu.iri or None, gpu.memory, gpu.bandwidth, gpu.rates, gpu.interconnect, gpu.link_bandwidth)


def compute_key(ctx: Context, est: Estimate, compute: str | None = None) -> str | None:
    """The query key of the dense rate at the scenario's compute precision (kbq:ratePrecision), or at
    `compute` (a published run's own precision)."""
    wanted = compute or est.compute.iri
    return next((k.key for k in ctx.cat.gpu_keys() if k.precision == wanted), None)


def _rate(gpu: facts.Gpu, est: Estimate, ctx: Context, compute: str | None = None) -> tuple[float, str]:
    """The dense rate of the compute precision (tensor FP16 for weight-only formats)."""
    found = speed.dense_rate(gpu.rates, compute_key(ctx, est, compute))
    if found is None:
        raise QueryError(f"{gpu.label} has no sourced throughput figure")
    return found


def _situation(gpu: facts.Gpu, est: Estimate, backend: Term | None) -> calibrated.Situation:
    return calibrated.Situation(
        backend=backend.iri if backend else None, gpu=gpu.iri, tensor=bool(gpu.rates.get("tensor")),
        bits=est.format.bits_per_weight, compute=est.compute.iri, params=est.model.active or est.model.params,
        model=est.scenario.model_iri,
    )  # fmt: skip


def _constant(ctx: Context, name: str, asked_value: object, sit: calibrated.Situation) -> tuple[float, str, str]:
    """A speed constant: the question's own value ('with mfu 30%'), else the calibrated one for this
    situation; its value, how the formula names it and its source."""
    if asked_value:
        return float(asked_value), "as asked", ""  # type: ignore[arg-type]
    chosen = calibrated.choose(ctx, name, sit)
    if chosen is None:
        return 1.0, "no sourced value: roofline upper bound", ""
    return chosen.value, chosen.describe(), chosen.source


def _token_model(ctx: Context, est: Estimate, what: str, *, generates: bool) -> None:
    """Speeds in tokens/s are for language models that generate tokens, training times in tokens for
    models that read them; for any other model kbq says plainly that it cannot estimate them (never
    tokens/s for a CNN)."""
    if not (est.scenario.generates_tokens if generates else est.scenario.context is not None):
        raise ctx.error(
            f"kbq cannot estimate the {what} of {est.model.label}: its estimates count tokens, and {est.model.label}"
            + (" is not a language model that generates them" if generates else " does not read tokens")
            + " (no sourced images/s or iterations/s model is in the KB);"
            f" 'fastest gpu for {est.model.label.lower()}' ranks GPUs by published measurements",
            None,
        )


def _image_speed(ctx, asked, est, gpu, count) -> tuple[formulas.Speed, list[list[object]], str]:
    """Images/s for a model with a sourced forward cost and activation count (a CNN, a ViT): the two-term
    estimate of kbq.lang.evaluate.images with its calibrated constants, the answer's rows and what bounds
    it; without them kbq says plainly that it cannot estimate it."""
    training = est.process.training
    what = "training" if training else "inference"
    sit = _situation(gpu, est, _backend(asked))
    names = ["image_compute_efficiency", "image_activation_passes"] + (["image_training_factor"] if training else [])
    chosen = {n: calibrated.choose(ctx, n, sit) for n in names}
    missing = [n for n, c in chosen.items() if c is None]
    if missing or not est.model.activations_m or gpu.bandwidth is None:
        why = (
            f"no sourced activation count (kbq:forwardActivations) for {est.model.label}" if not est.model.activations_m
            else "no sourced memory bandwidth for " + gpu.label if gpu.bandwidth is None
            else "no calibrated " + ", ".join(missing) + f" for {est.model.label}'s class"
        )  # fmt: skip
        raise ctx.error(f"kbq cannot estimate the {what} speed of {est.model.label} in images/s: {why}", None)
    rate, rate_name = _rate(gpu, est, ctx)
    eta, passes = chosen["image_compute_efficiency"], chosen["image_activation_passes"]
    factor = chosen.get("image_training_factor")
    act_bytes = facts.number_format(ctx, est.compute).bits_per_weight / 8
    flops = est.model.forward_flops or 0.0
    result = images.images_per_second(
        forward_flops=flops, activations=est.model.activations_m * 1e6, activation_bytes=act_bytes, training=training,
        tflops=rate, rate_name=rate_name, bandwidth_gbps=gpu.bandwidth, gpus=count, eta=eta.value,  # type: ignore[union-attr]
        passes=passes.value, factor=factor.value if factor else 1.0,  # type: ignore[union-attr]
        constants="; ".join(c.describe() for c in chosen.values() if c is not None),
    )  # fmt: skip
    speed_ = result.speed
    sources = "; ".join(dict.fromkeys(c.source for c in chosen.values() if c is not None))
    counted = "multiply-adds x 2" if est.model.forward_counts_macs else "FLOPs, a multiply-add counted as two"
    bound = "memory traffic" if result.traffic_s * passes.value > result.compute_s / eta.value else "arithmetic"  # type: ignore[union-attr]
    rows: list[list[object]] = [
        [speed_.name, round(speed_.value, 1), speed_.unit, speed_.formula, sources],
        ["per GPU", round(speed_.value / count, 1), "images/s", f"{speed_.name} / {count}", ""],
        ["forward arithmetic at the full rate", round(result.compute_s * 1e6, 4), "us per image",
         f"{flops / 1e9:,.2f} GFLOPs ({counted}) / {rate:g} TFLOPS", ""],
        ["one pass over the activations", round(result.traffic_s * 1e6, 4), "us per image",
         f"{est.model.activations_m:g}M activations (fvcore count) x {act_bytes:g} B ({est.compute.label})"
         f" / {gpu.bandwidth:g} GB/s", ""],
    ]  # fmt: skip
    return speed_, rows, bound


def _memory_assumptions_out(explanation: list[str]) -> None:
    """Images/s reads neither the batch default nor the sharding default (they size memory): drop them."""
    explanation[:] = [e for e in explanation if not e.startswith(("assumed: batch", "assumed: ZeRO"))]


_IMAGE_NOTE = (
    "images/s, not tokens/s: the model reads images; a large batch is assumed (the constants were fitted at batches"
    " of 192-1,024 images); data loading, augmentation and multi-GPU communication are not counted"
)


def _image_speed_plan(ctx, asked, est, explanation) -> Plan:
    gpu, count = _hardware(ctx, asked.hardware, "speed of ... on WHAT? e.g. 'on 8 x a100 sxm4 80gb'", explanation)
    assert gpu is not None
    speed_, rows, bound = _image_speed(ctx, asked, est, gpu, count)
    _memory_assumptions_out(explanation)
    what = "training" if est.process.training else "inference"
    explanation.insert(
        0,
        f"estimate (not a measurement) on {count} x {gpu.label}: {speed_.value:,.0f} images/s ({what}, {est.compute.label}"
        f" compute; mostly bound by {bound})",
    )
    explanation.append(_IMAGE_NOTE)
    decided = {"about": _about(est), "hardware": f"{count} x {gpu.label}"}
    return Plan("speed", "", COLUMNS, explanation=explanation, extra={"rows": rows, **decided})


def _image_time_plan(ctx, asked, est, explanation) -> Plan:
    """'time to train resnet-50 for 90 epochs on imagenet on 8 x a100': epochs x the dataset's training
    examples / the training images/s; MLPerf's time to train beside it where the KB has it for the model."""
    gpu, count = _hardware(
        ctx, asked.hardware, "time to train ... on HOW MANY of WHICH GPU? e.g. 'on 8 x a100 sxm4 80gb'", explanation
    )
    assert gpu is not None
    epochs, dataset = asked.settings.get("epochs"), asked.settings.get("dataset")
    if epochs is None or not isinstance(dataset, Term):
        raise ctx.error(
            f"time to train {est.model.label} counts images: name the epochs and the dataset"
            f" (e.g. 'for 90 epochs on imagenet')", None,
        )  # fmt: skip
    found = ctx.rows(f"SELECT ?n WHERE {{ {terms.iri(dataset.iri)} kbq:trainingExamples ?n }} LIMIT 1")
    if not found:
        raise ctx.error(f"no training-split size is sourced for {dataset.label}", None)
    examples = float(found[0][0])
    speed_, speed_rows, bound = _image_speed(ctx, asked, est, gpu, count)
    _memory_assumptions_out(explanation)
    overhead = calibrated.choose(ctx, "image_epoch_overhead_s", _situation(gpu, est, _backend(asked)))
    timed = images.epochs_time(
        epochs=float(epochs), examples=examples, dataset=dataset.label, images_per_s=speed_.value,
        epoch_overhead_s=overhead.value if overhead else 0.0,
        constant=overhead.describe() if overhead else "no sourced time between epochs: training passes only",
    )  # fmt: skip
    hours = timed.hours
    sources = "; ".join(s for s in (facts.source_labels(ctx, dataset.iri), overhead.source if overhead else "") if s)
    rows: list[list[object]] = [
        ["wall-clock hours", round(hours, 2), "h", timed.formula, sources],
        ["training passes", round(timed.passes_hours, 2), "h", "epochs x images / training images/s / 3600", ""],
        ["between epochs", round(timed.overhead_hours, 2), "h", "epochs x time between epochs / 3600", ""],
        ["GPU-hours", round(hours * count, 1), "GPU-h", f"wall-clock hours x {count} GPUs", ""],
        *speed_rows,
    ]  # fmt: skip
    explanation.insert(
        0,
        f"estimate (not a measurement): {hours:,.1f} hours on {count} x {gpu.label} for {float(epochs):g} epochs of"
        f" {dataset.label} ({est.compute.label} compute; mostly bound by {bound})",
    )
    explanation.append(
        _IMAGE_NOTE + " in the images/s; the time between epochs (evaluation, checkpoints) is a calibrated constant per epoch"
    )
    published = ctx.rows(
        "SELECT ?l ?n ?accLabel WHERE { ?r kbq:suite kb:MLPerfTraining ; rdfs:label ?l ; kbq:resultValue ?v ;"
        f" kbq:benchmarkModel {terms.iri(asked.model.iri)} ; kbq:acceleratorCount ?n ; kbq:accelerator ?acc ."
        " ?acc rdfs:label ?accLabel } ORDER BY ?v"
    )
    for label, n, acc in published:
        explanation.append(f"published: {label} ({int(n)} x {acc})")
    if published:
        explanation.append(
            "MLPerf Training times a run to a target accuracy, not a fixed number of epochs (and allows other optimizers"
            " and schedules), so its minutes do not measure the run asked about"
        )
    decided = {"about": _about(est), "hardware": f"{count} x {gpu.label}"}
    return Plan("time", "", COLUMNS, explanation=explanation, extra={"rows": rows, **decided})


def _speed_plan(ctx, asked, est, consts, explanation) -> Plan:
    if not est.scenario.generates_tokens and est.model.forward_gflops:
        return _image_speed_plan(ctx, asked, est, explanation)
    _token_model(ctx, est, "speed", generates=True)
    gpu, count = _hardware(ctx, asked.hardware, "speed of ... on WHAT? e.g. 'on 2 x rtx 4090'", explanation)
    if gpu is None or gpu.bandwidth is None:
        raise ctx.error("that GPU has no sourced memory bandwidth", None)
    backend = calibrated.backend(ctx, _backend(asked), "speed")
    sit = _situation(gpu, est, backend)
    value, eff_name, eff_source = _constant(ctx, "bandwidth_efficiency", asked.settings.get("bandwidth_efficiency"), sit)
    eff_text = f"{value:.0%} bandwidth efficiency"
    batch = int(est.settings["batch"])
    rate, rate_name = _rate(gpu, est, ctx)
    mfu_value, mfu_name, mfu_source = _constant(ctx, "prefill_mfu", asked.settings.get("mfu"), sit)
    decode_chosen = None if asked.settings.get("mfu") else calibrated.choose(ctx, "decode_mfu", sit)
    decode_mfu = decode_chosen.value if decode_chosen else None
    overhead_chosen = calibrated.choose(ctx, "decode_step_overhead_s", sit)
    overhead = overhead_chosen.value if overhead_chosen else 0.0
    if overhead_chosen:
        eff_name += f"; time per step: {overhead_chosen.describe()}"
    prefill = formulas.prefill_speed(
        active_params=est.model.active or 0.0, tflops=rate, gpus=count, mfu=mfu_value, rate_name=rate_name
    )
    parallel = formulas.decode_speed(
        weight_bytes=est.weight_bytes_active, kv_bytes_per_seq=est.kv_bytes_per_seq, batch=batch,
        bandwidth_gbps=gpu.bandwidth, gpus=count, efficiency=value, efficiency_text=eff_text, compute_bound=prefill,
        step_overhead_s=overhead,
    )  # fmt: skip
    decode = parallel
    rows: list[list[object]] = []
    if count > 1:
        # layers split over the GPUs (llama.cpp's default): each token passes the GPUs in turn, each reading its share
        layered, _one = speed.decode(
            weight_bytes=est.weight_bytes_active, kv_bytes_per_seq=est.kv_bytes_per_seq, batch=batch,
            bandwidth_gbps=gpu.bandwidth, gpus=1, efficiency=value, efficiency_text=eff_text,
            active_params=est.model.active or 0.0, rate=(rate, rate_name), mfu=mfu_value, step_overhead_s=overhead,
        )  # fmt: skip
        layer_text = f"layers split over {count} GPUs, read one GPU after another: one GPU's rate ({layered.formula})"
        if calibrated.splits_layers(ctx, backend):
            decode = layered._replace(formula=layer_text)
            rows.append(["decode, tensor parallel (upper bound)", round(parallel.value, 1), parallel.unit, parallel.formula,
                         eff_source])  # fmt: skip
            explanation.append(
                f"multi-GPU: {backend.label if backend else 'this backend'} splits layers over the {count} GPUs, so 'decode'"
                " is one GPU's rate (each token passes the GPUs in turn); a tensor-parallel engine ('using vllm') reaches"
                " at most 'decode, tensor parallel (upper bound)' (no communication cost counted)"
            )
        else:
            rows.append(["decode, layer split", round(layered.value, 1), layered.unit, layer_text, eff_source])
            explanation.append(
                f"multi-GPU: 'decode' is tensor parallel over {count} GPUs with no communication cost (an upper bound);"
                " 'decode, layer split' is a layer (pipeline) split, one GPU's rate at batch 1"
            )
    rows[:0] = [
        [decode.name, round(decode.value, 1), decode.unit, f"{decode.formula}; efficiency: {eff_name}", eff_source],
        ["decode per sequence", round(decode.value / batch, 1), "tokens/s", "decode / batch", ""],
    ]
    rows.append([prefill.name, round(prefill.value, 0), prefill.unit, f"{prefill.formula}; MFU: {mfu_name}", mfu_source])
    if backend is not None:
        named = _backend(asked) is not None
        explanation.append(
            f"backend: {backend.label}"
            + ("" if named else " (kbq's default for speed questions; name another with 'using vllm')")
        )
    output = asked.settings.get("output_tokens")
    roof = Roof(value, rate, mfu_value, decode_mfu, overhead)
    if output is not None and est.scenario.context is not None:
        rows += _request_rows(est, gpu, count, int(output), decode, prefill, roof, consts)
    rows += _measured(ctx, asked, est, gpu, count, decode, roof, prefill, consts, explanation)
    per_gpu, split_notes = split(est, count, asked.settings)
    need = sum(line.gb for line in per_gpu)
    decided: dict[str, Any] = {"about": _about(est), "hardware": f"{count} x {gpu.label}"}
    if gpu.memory is not None:
        ev = evaluate(est.footprint, _accelerator(gpu), count, usable_share=est.scenario.usable_share)
        decided["verdict"] = decision.verdict(ev, gpu.label)
        word = ev.verdict
        explanation.insert(0, f"memory: {word} ({need:.1f} GB per GPU of {gpu.capacity} on {count} x {gpu.label})")
        if word == "does not fit":
            explanation.insert(0, "warning: the model does not fit this hardware; the speeds assume it did")
    cap = asked.settings.get("power_limit")
    if cap is not None:
        explanation.append(_power_limit(ctx, gpu, float(cap), asked.settings.get("_column_power_limit")))
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
    return Plan(
        "speed", "", ["quantity", "value", "unit", "formula", "source"], explanation=explanation,
        extra={"rows": rows, **decided},
    )  # fmt: skip


def _serving(est, gpu, count, n_in, n_out, roof, consts) -> formulas.Speed | None:
    """kbq's serving estimate at a run's input/output lengths on `count` GPUs (see formulas.serving_throughput)."""
    usable = consts.get("usable_share")
    runtime = consts.get("cuda_context_gb")
    weights = sum(line.gb for line in est.lines if line.part.startswith("weights")) * GB
    free = count * (gpu.memory * (usable.value if usable else 1.0) - (runtime.value if runtime else 0.0)) * GB - weights
    model, wire = est.model, consts.get("allreduce_activation_bytes")
    allreduce = None
    if count > 1 and gpu.link_bandwidth and model.layers and model.hidden and wire:
        allreduce = formulas.tensor_parallel_allreduce(
            layers=model.layers, hidden=model.hidden, gpus=count, link_gbps=gpu.link_bandwidth, activation_bytes=wire.value
        )
    return formulas.serving_throughput(
        weight_bytes=est.weight_bytes_active, kv_bytes_per_token=est.kv_bytes_per_seq / int(est.settings["context"]),
        free_bytes=free, input_tokens=n_in, output_tokens=n_out, bandwidth_gbps=gpu.bandwidth, efficiency=roof.efficiency,
        tflops=roof.rate, mfu=roof.mfu, decode_mfu=roof.decode_mfu, active_params=est.model.active or est.model.params,
        gpus=count, allreduce=allreduce,
    )  # fmt: skip


def _backend(asked: Asked) -> Term | None:
    named = asked.settings.get("backend")
    return named if isinstance(named, Term) else None


def _request_rows(est, gpu, count, output, decode, prefill, roof, consts) -> list[list[object]]:
    """'with 500 output tokens': one request's time (its prompt is the rest of the context) and
    the serving throughput of requests of that shape (formulas.serving_throughput)."""
    context = int(est.scenario.context)
    if output >= context:
        raise QueryError(f"output tokens ({output:,}) must be fewer than the context ({context:,} tokens: prompt + output)")
    prompt = context - output
    per_sequence = decode.value / int(est.settings["batch"])
    seconds = prompt / prefill.value + output / per_sequence
    rows: list[list[object]] = [[
        "request time", round(seconds, 2), "s",
        f"{prompt:,} prompt tokens / {prefill.value:,.0f} tokens/s + {output:,} output tokens / {per_sequence:,.1f} tokens/s"
        " (decode per sequence)", "",
    ]]  # fmt: skip
    if gpu.memory is not None:
        served = _serving(est, gpu, count, prompt, output, roof, consts)
        if served is not None:
            rows.append([served.name, round(served.value, 1), served.unit, served.formula, ""])
    return rows


COLUMNS = ["quantity", "value", "unit", "formula", "source"]


class Roof(NamedTuple):
    """The constants of the speed estimates: bandwidth efficiency, dense rate (TFLOPS) and MFU."""

    efficiency: float
    rate: float
    mfu: float
    decode_mfu: float | None = None  # compute-bound decode steps at a large batch, where it differs from prefill
    step_overhead: float = 0.0  # a backend's calibrated fixed time per decode step (s)


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
                step_overhead_s=roof.step_overhead,
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
    if not est.scenario.generates_tokens and est.model.forward_gflops:
        return _image_time_plan(ctx, asked, est, explanation)
    _token_model(ctx, est, "training time", generates=False)
    gpu, count = _hardware(
        ctx, asked.hardware, "time to train ... with HOW MANY of WHICH GPU? e.g. 'with 64 x h100 sxm5'", explanation
    )
    tokens = asked.settings.get("tokens")
    if tokens is None:
        raise ctx.error("time to train needs the tokens: e.g. 'on 1t tokens'", None)
    rate, rate_name = _rate(gpu, est, ctx) if gpu else (0.0, "")
    params = est.model.active or est.model.params or 0.0
    backend = _backend(asked)
    mfu_value, mfu_name, mfu_source = (
        _constant(ctx, "mfu", asked.settings.get("mfu"), _situation(gpu, est, backend)) if gpu else (1.0, "", "")
    )
    per_token = est.process.flops_per_token
    if per_token != 6.0:
        explanation.append(
            f"{est.process.label}: {per_token:g} x N x D training FLOPs per parameter and token (kb/processes.ttl)"
        )
    hours, days = formulas.train_time(
        params=params, tokens=float(tokens), tflops=rate, gpus=count, mfu=mfu_value, rate_name=rate_name,
        flops_per_token=per_token,
    )  # fmt: skip
    rows = [
        [hours.name, round(hours.value, 0), hours.unit, f"{hours.formula}; MFU: {mfu_name}", mfu_source],
        [days.name, round(days.value, 2), days.unit, "GPU-hours / GPUs / 24", ""],
    ]
    explanation.insert(
        0,
        f"estimate (not a measurement): {hours.value:,.0f} GPU-hours, {days.value:.1f} days"
        f" on {count} x {gpu.label if gpu else '?'}",
    )
    runs = ctx.rows(
        "SELECT ?gpu ?gpuLabel ?hours ?tokens ?prec WHERE { ?r a kbq:TrainingRun ; kbq:trainedModel ?m ; kbq:gpuHours ?hours ."
        " OPTIONAL { ?r kbq:trainingTokens ?tokens } OPTIONAL { ?r kbq:trainingGpu ?gpu . ?gpu rdfs:label ?gpuLabel }"
        " OPTIONAL { ?r kbq:trainingPrecision ?prec }"
        f" FILTER(?m = <{asked.model.iri}>) }}"
    )
    for run_gpu, gpu_label, gpu_hours, run_tokens, run_precision in runs:
        line = f"published: {asked.model.label} took {float(gpu_hours):,.0f} GPU-hours"
        line += (f" on {gpu_label}" if gpu_label else "") + (f" for {float(run_tokens):,.0f} tokens" if run_tokens else "")
        if run_gpu and run_tokens:
            run_card = facts.gpu(ctx, Term(str(run_gpu), str(gpu_label), frozenset()))
            run_rate, _name = _rate(run_card, est, ctx, str(run_precision) if run_precision else None)
            run_mfu, _mfu_name, _src = _constant(ctx, "mfu", asked.settings.get("mfu"), _situation(run_card, est, backend))
            same, _days = formulas.train_time(
                params=params, tokens=float(run_tokens), tflops=run_rate, gpus=1, mfu=run_mfu, rate_name=""
            )
            ratio = same.value / float(gpu_hours)
            line += f"; kbq's formula for that run gives {same.value:,.0f} GPU-hours (estimate / published = {ratio:.2f})"
        explanation.append(line)
    decided = {
        "about": f"training {est.model.label} on {float(tokens):,.0f} tokens",
        "hardware": f"{count} x {gpu.label if gpu else '?'}",
    }
    return Plan(
        "time", "", ["quantity", "value", "unit", "formula", "source"], explanation=explanation,
        extra={"rows": rows, **decided},
    )  # fmt: skip


def compile_capacity(ctx: Context, q: ast.SubjectQuestion, what: Term) -> Plan:
    """'max context for MODEL on GPU', 'max batch for ... with 8k context', 'concurrent users for ... with
    2k input and 512 output': the KV cache a serving engine fits. Budget = GPUs x (memory x the engine's
    memory share - runtime) - weights - the engine's profiled activation peak; tokens = budget / KV bytes
    per token; batch = tokens / (input + output)."""
    assert q.target is not None
    asked = understand(ctx, ast.WorkloadQuestion("speed", q.target, q.clauses))
    settings = dict(asked.settings)
    n_in, n_out = settings.get("input_tokens"), settings.get("output_tokens")
    if n_in is not None and n_out is not None:
        settings["context"] = int(n_in) + int(n_out)  # type: ignore[call-overload]
    asked = asked._replace(settings=settings)
    explanation: list[str] = []
    gpu, count = _hardware(ctx, asked.hardware, f"{what.label} for ... on WHAT? e.g. 'on an rtx 4090'", explanation)
    if gpu is None or gpu.memory is None:
        raise ctx.error("that GPU has no sourced memory size", None)
    est = estimate(ctx, asked.model, asked.process, asked.precision, settings, count)
    if est.process.training or not est.kv_bytes_per_seq or est.scenario.context is None:
        raise ctx.error(f"{what.label} is a serving question: {est.model.label} inference with a KV cache", None)
    kind_rows = ctx.rows(f"SELECT ?k WHERE {{ {terms.iri(what.iri)} kbq:capacityKind ?k }} LIMIT 1")
    kind = str(kind_rows[0][0]) if kind_rows else "context"
    backend = calibrated.backend(ctx, _backend(asked), "capacity")
    sit = _situation(gpu, est, backend)
    consts = est.scenario.constants
    share, runtime = consts.get("usable_share"), consts.get("cuda_context_gb")
    share_v, runtime_v = (share.value if share else 1.0), (runtime.value if runtime else 0.0)
    context = int(est.scenario.context)
    weights = sum(line.gb for line in est.lines if line.part.startswith("weights"))
    peak = calibrated.choose(ctx, "activation_peak_bytes", sit)
    peak_gb = (peak.value * context * (est.model.hidden or 0) / GB) if peak else 0.0
    budget = count * (gpu.memory * share_v - runtime_v) - weights - peak_gb
    per_token = est.kv_bytes_per_seq / context
    engine = backend.label if backend else "the engine"
    budget_formula = (
        f"{count} x ({gpu.capacity} x {share_v:.0%} ({share.label if share else 'memory share'}) - {runtime_v:g} GB runtime)"
        f" - {weights:.2f} GB weights - {peak_gb:.2f} GB activation peak"
        + (f" ({peak.value:g} B x {context:,} tokens x {est.model.hidden:,} hidden; {peak.describe()})" if peak else "")
    )
    rows: list[list[object]] = [["KV cache budget", round(budget, 3), "GB", budget_formula, peak.source if peak else ""]]
    if budget <= 0:
        explanation.insert(0, f"{est.model.label} leaves no room for a KV cache on {count} x {gpu.label} under {engine}")
        return Plan("capacity", "", COLUMNS, explanation=explanation, extra={"rows": rows})
    tokens = budget * GB / per_token
    rows.append(
        ["KV cache capacity", round(tokens), "tokens", f"{budget:.3f} GB / {per_token / 1e3:,.1f} KB of KV cache per token", ""]
    )
    if kind == "context":
        longest = min(tokens, est.model.max_context or tokens)
        capped = est.model.max_context is not None and tokens > est.model.max_context
        cap = f" (capped at {est.model.label}'s maximum {est.model.max_context:,})" if capped else ""
        rows.append(["max context", round(longest), "tokens", f"KV cache capacity{cap}", ""])
        head = f"max context {longest:,.0f} tokens"
    else:
        users = tokens / context
        label = "concurrent users" if what.label == "concurrent users" else "max batch"
        per = f"{tokens:,.0f} tokens / {context:,} tokens per request (vLLM's 'maximum concurrency')"
        rows.append([label, round(users, 2), "requests", per, ""])
        head = f"{label} {users:.2f} requests of {context:,} tokens"
    explanation.insert(0, f"estimate (not a measurement) on {count} x {gpu.label} with {engine}: {head}")
    explanation += [f"assumed: {a}" for a in est.scenario.assumed(count)]
    explanation.append(
        f"backend: {engine}"
        + ("" if _backend(asked) else " (kbq's default for capacity questions; name another with 'using ...')")
    )
    return Plan("capacity", "", COLUMNS, explanation=explanation, extra={"rows": rows})
