"""A scenario's memory lines on one GPU (before any split): weights, KV cache, adapters,
gradients, optimizer states, activations, logits, runtime. Pure: reads only the Scenario."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang.evaluate.split import Footprint, Layout
from kbq.lang.scenario import Scenario
from kbq.lang.workload import formulas
from kbq.lang.workload.formulas import GB, Line


class Memory(NamedTuple):
    footprint: Footprint
    notes: list[str]
    kv_line: Line | None
    weight_bytes_active: float  # bytes of weights read per decoded token
    kv_bytes_per_seq: float
    complete: bool = True  # False: a line the workload needs is not counted (the total is a lower bound)

    @property
    def lines(self) -> list[Line]:
        return list(self.footprint.lines)

    @property
    def total(self) -> float:
        return self.footprint.total


class LinesError(ValueError):
    """The KB lacks a figure a line needs (shown to the user as a QueryError)."""


def memory(s: Scenario) -> Memory:
    """The memory lines of a scenario, with what its speed estimates read."""
    model, process, fmt = s.model, s.process, s.weights
    notes: list[str] = []
    lines: list[Line] = []
    complete = True
    kv_line = None
    kv_bytes_per_seq = 0.0
    context, batch = s.context or 0, s.batch
    if process.training:
        lora = None
        if not process.all_weights:
            lora = formulas.lora_parameters(model, targets=process.targets or "q,v", rank=s.lora_rank or 8)
            if lora is None:
                raise LinesError(f"{model.label}'s layer sizes are not in the KB: kbq cannot count its LoRA parameters")
        full_precision = fmt.bits_per_weight >= 32 and not process.base
        optimizer_bytes = process.optimizer_bytes - 4 if full_precision else process.optimizer_bytes
        gradient_bytes = 4.0 if full_precision else process.gradient_bytes
        if full_precision:
            notes.append("FP32 training: no FP32 master copy (the weights are FP32), 4-byte gradients, 32-bit activations (x2)")
        opt = formulas.training(
            model, base=fmt, optimizer_bytes=optimizer_bytes, gradient_bytes=gradient_bytes,
            optimizer_label=process.optimizer or "optimizer", optimizer_source=process.optimizer_source, lora=lora,
        )  # fmt: skip
        lines.append(opt.weight_line)
        if opt.trainable_line:
            lines.append(opt.trainable_line)
        lines += [opt.gradient_line, opt.optimizer_line]
        extra = s.constants.get("stack_extra_bytes")
        if extra is not None:  # a backend's optimizer temporaries ('using tensorflow')
            lines.append(
                Line(f"optimizer temporaries ({extra.label})", opt.trainable * extra.value / GB,
                     f"{opt.trainable:,.0f} trainable parameters x {extra.value:g} B", extra.source)
            )  # fmt: skip
        act = None
        if s.activation is not None and s.context is not None:
            scale = 2.0 if full_precision else 1.0  # the coefficients count 16-bit activations
            a = s.activation
            act = formulas.activations(
                model, context=context, batch=batch, linear=a.linear * scale, quadratic=a.quadratic * scale,
                model=a.label + (" at 32 bits" if full_precision else ""), source=a.source, per_layer=a.per_layer,
            )  # fmt: skip
        kept = s.constants.get("image_activation_kept")
        if act is None and model.activations_m and kept is not None:
            act_bytes = 4.0 if full_precision else 2.0  # 16-bit activations under mixed precision, 32-bit in FP32 training
            act = Line(
                "activations", model.activations_m * 1e6 * kept.value * act_bytes * batch / GB,
                f"{model.activations_m:g}M activations per image (fvcore count) x {kept.value:g} kept for the backward pass"
                f" ({kept.label}) x {act_bytes:g} B x batch {batch}",
                kept.source,
            )  # fmt: skip
        measured = s.constants.get("image_activation_gb")
        if act is None and measured is not None and not full_precision:
            act = Line(
                "activations", measured.value * batch,
                f"{measured.value:g} GB per image ({measured.label}, mixed precision, at {model.label}'s published"
                f" resolution) x batch {batch}",
                measured.source,
            )  # fmt: skip
        if act is not None:
            lines.append(act)
        else:
            complete = False
            notes.append(
                f"activations not counted: neither a sourced per-sample figure nor {model.label}'s layers, hidden size and"
                " heads are in the KB, so every figure here is a lower bound (training keeps activations for the backward pass)"
            )
        logit = s.constants.get("logit_bytes")
        if logit is not None and not s.chunked_loss and s.context is not None:
            line = formulas.logits(model, context=context, batch=batch, bytes_per_logit=logit.value, source=logit.source)
            if line is not None:
                lines.append(line)
                notes.append(
                    "logits: the loss keeps every token's logits in FP32; a fused or chunked loss avoids it ('with chunked loss')"
                )
    else:
        lines.append(formulas.weights(model, fmt))
        if s.kv is not None and s.context is not None:
            kv_line = formulas.kv_cache(
                model, context=context, batch=batch, kv_bytes=s.kv.bits_per_weight / 8,
                source="PagedAttention (Kwon et al. 2023); " + "; ".join(model.sources),
            )  # fmt: skip
            if kv_line is not None:
                lines.append(kv_line)
                kv_bytes_per_seq = kv_line.gb * GB / batch
            else:
                notes.append(f"KV cache not counted: {model.label}'s layers, KV heads and head size are not in the KB")
        if s.context is not None:
            notes.append("activations: transient at inference (one layer at a time), covered by the runtime reserve, not counted")
    context_gb = s.constants.get("cuda_context_gb")
    if context_gb is not None:
        lines.append(
            Line(
                "runtime (CUDA context)",
                context_gb.value,
                f"{context_gb.value:g} GB per GPU ({context_gb.label})",
                context_gb.source,
            )
        )
    reserve = s.constants.get("stack_reserve_gb")
    if reserve is not None and process.training:
        lines.append(
            Line(f"runtime ({reserve.label})", reserve.value, f"{reserve.value:g} GB per GPU ({reserve.label})", reserve.source)
        )
    layout = Layout(
        training=process.training, heads=model.heads, kv_heads=model.kv_heads, layers=model.layers,
        mla=model.attention == "MLA", zero=s.zero_stage, offload=s.offload,
    )  # fmt: skip
    active = model.active or model.params or 0.0
    return Memory(Footprint(tuple(lines), layout), notes, kv_line, active * fmt.bits_per_weight / 8, kv_bytes_per_seq, complete)
