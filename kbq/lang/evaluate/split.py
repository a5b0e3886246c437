"""How a scenario's memory splits over N accelerators, and THE cards-needed rule.

Every form that says how many cards a workload needs (how many, a ranking's cards column,
compare, does-it-fit, cloud instances, why) calls `cards_needed` or `share` here; nothing else
divides memory by a GPU count.

Inference: tensor parallelism when the count divides the attention heads (weights split, KV heads
split and replicated once the count exceeds them, MLA's latent cache replicated); otherwise a
layer (pipeline) split, each GPU holding ceil(layers / N) layers' weights and KV cache, which needs
N <= layers. Training: sharded data parallelism at the scenario's ZeRO stage (1: optimizer states,
2: + gradients, 3 / FSDP: + weights), optimizer states in CPU memory with offload; activations,
logits and the runtime stay per GPU.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

from kbq.lang.workload.formulas import Line

MAX_CARDS = 1 << 20  # a search bound, far above any count the language accepts (see scenario.MAX_GPUS)
RUNTIME = "runtime"
WEIGHT_PARTS = ("weights", "frozen base weights", "adapter weights")


class Layout(NamedTuple):
    """What the split rule needs to know about a scenario (plain data: it lives in cached plans)."""

    training: bool
    heads: int | None = None
    kv_heads: int | None = None
    layers: int | None = None
    mla: bool = False
    zero: int = 0  # ZeRO stage 0-3 (FSDP full sharding = 3)
    offload: bool = False


class Footprint(NamedTuple):
    """A scenario's memory on one GPU (its lines) and how the lines split: what evaluation reads."""

    lines: tuple[Line, ...]
    layout: Layout

    @property
    def total(self) -> float:
        return sum(line.gb for line in self.lines)

    def to_data(self) -> list[object]:
        return [[list(line) for line in self.lines], list(self.layout)]

    @classmethod
    def from_data(cls, data: list[object]) -> Footprint:
        lines, layout = data
        return cls(tuple(Line(*line) for line in lines), Layout(*layout))  # type: ignore[attr-defined, misc]


class Split(NamedTuple):
    """One count's split: its name ('tensor parallel', 'layer split' ...), each line's share of
    the whole (a factor) and why, and a note when the count forced a fallback."""

    kind: str
    factors: tuple[tuple[float, str], ...]  # per line of the footprint: (factor, how)
    note: str = ""


def split_for(fp: Footprint, n: int) -> Split | None:
    """The split of `fp` over `n` GPUs, or None when no valid split exists at that count
    (a layer split over more GPUs than layers, when the heads do not divide the count either)."""
    lay = fp.layout
    if n < 1:
        return None
    if lay.training:
        return _training(fp, n)
    if n == 1:
        return Split("one GPU", tuple((1.0, "") for _ in fp.lines))
    if lay.heads and lay.heads % n == 0:
        return Split("tensor parallel", tuple(_tensor_parallel(line, lay, n) for line in fp.lines))
    if lay.layers:
        if n > lay.layers:
            return None
        held = math.ceil(lay.layers / n)
        factor = held / lay.layers
        how = f"x {held}/{lay.layers} layers (layer split over {n} GPUs)"
        note = (
            f"layer (pipeline) split: {n} GPUs do not divide the {lay.heads} attention heads (tensor parallelism needs"
            f" that), so each GPU holds up to {held} of the {lay.layers} layers"
            if lay.heads
            else f"layer (pipeline) split: each GPU holds up to {held} of the {lay.layers} layers"
        )
        return Split(
            "layer split",
            tuple((1.0, "") if line.part.startswith(RUNTIME) else (factor, how) for line in fp.lines),
            note,
        )
    return Split(
        "even split",
        tuple((1.0, "") if line.part.startswith(RUNTIME) else (1 / n, f"/ {n} GPUs (layers not in the KB: split evenly)")
              for line in fp.lines),
        "the model's layers and heads are not in the KB: its weights are assumed to split evenly",
    )  # fmt: skip


def _tensor_parallel(line: Line, lay: Layout, n: int) -> tuple[float, str]:
    if line.part.startswith(RUNTIME):
        return 1.0, ""
    if line.part == "KV cache":
        if lay.mla:
            return 1.0, "(MLA latent replicated on each GPU)"
        kv = lay.kv_heads or lay.heads or 1
        factor = max(kv / n, 1) / kv
        how = f"{kv} KV heads / {n} GPUs" if n <= kv else f"1 of {kv} KV heads replicated per GPU (TP {n} > KV heads)"
        return factor, f"x {factor:.4g} ({how})"
    return 1 / n, f"/ {n} GPUs (tensor parallel)"


def _training(fp: Footprint, n: int) -> Split:
    lay = fp.layout
    out: list[tuple[float, str]] = []
    for line in fp.lines:
        # DeepSpeed: ZeRO-Offload moves the optimizer states and the gradients to CPU memory (ZeRO-2);
        # with ZeRO-3 (ZeRO-Infinity's offload_param) the parameters go too, one layer gathered at a time
        if line.part == "optimizer states" and lay.offload:
            out.append((0.0, "offloaded to CPU memory"))
        elif line.part == "gradients" and lay.offload:
            out.append((0.0, "offloaded to CPU memory (ZeRO-Offload)"))
        elif line.part in WEIGHT_PARTS and lay.offload and lay.zero >= 3:
            out.append((0.0, "offloaded to CPU memory (ZeRO-3 offload: each layer is gathered onto the GPU when used)"))
        elif n == 1:
            out.append((1.0, ""))
        elif line.part == "optimizer states" and lay.zero >= 1:
            out.append((1 / n, f"/ {n} GPUs (ZeRO stage {lay.zero})"))
        elif line.part == "gradients" and lay.zero >= 2:
            out.append((1 / n, f"/ {n} GPUs (ZeRO stage {lay.zero})"))
        elif line.part in WEIGHT_PARTS and lay.zero >= 3:
            out.append((1 / n, f"/ {n} GPUs (ZeRO stage 3)"))
        elif line.part == "activations":
            out.append((1.0, "per GPU (data parallel: each GPU runs its own batch)"))
        else:
            out.append((1.0, ""))
    kind = "one GPU" if n == 1 else (f"ZeRO stage {lay.zero} sharded data parallel" if lay.zero else "data parallel")
    note = (
        ""
        if lay.zero or lay.offload or n == 1
        else "data parallel without ZeRO: every GPU holds the whole model, gradients and optimizer ('with zero 3' shards them)"
    )
    return Split(kind, tuple(out), note)


@functools.lru_cache(maxsize=4096)
def per_gpu_gb(fp: Footprint, n: int) -> float | None:
    """GB each of `n` GPUs holds (the most loaded one), or None when `n` is not a valid split.
    Cached: a ranking asks it of one footprint for every candidate's counts."""
    s = split_for(fp, n)
    if s is None:
        return None
    return sum(line.gb * factor for line, (factor, _how) in zip(fp.lines, s.factors, strict=True))


def per_gpu_lines(fp: Footprint, n: int) -> tuple[list[Line], Split] | None:
    """The per-GPU lines with their formulas (what 'memory for ... on N x GPU' shows)."""
    s = split_for(fp, n)
    if s is None:
        return None
    out = []
    for line, (factor, how) in zip(fp.lines, s.factors, strict=True):
        if not how:
            out.append(line)
        elif factor == 0.0:
            out.append(line._replace(gb=0.0, formula=f"({line.formula}) {how}"))
        else:
            out.append(line._replace(gb=line.gb * factor, formula=f"({line.formula}) {how}"))
    return out, s


def _parts(fp: Footprint) -> tuple[float, float]:
    """(GB per GPU that no count divides, GB that divides over the GPUs); what is offloaded is neither."""
    if not fp.layout.training:
        floor = sum(line.gb for line in fp.lines if line.part.startswith(RUNTIME))
        return floor, fp.total - floor
    s = _training(fp, MAX_CARDS)
    pairs = list(zip(fp.lines, s.factors, strict=True))
    floor = sum(line.gb for line, (factor, _how) in pairs if factor == 1.0)
    return floor, sum(line.gb for line, (factor, _how) in pairs if 0.0 < factor < 1.0)


def floor_gb(fp: Footprint) -> float:
    """GB per GPU that no count divides (runtime; under data parallelism activations and logits)."""
    return _parts(fp)[0]


class Count(NamedTuple):
    """The answer of the cards-needed rule."""

    cards: int
    per_gpu_gb: float
    split: str


@functools.lru_cache(maxsize=1024)
def cards_needed(fp: Footprint, usable_gb: float) -> Count | None:
    """THE rule: the smallest GPU count whose split is valid and whose per-GPU share fits in
    `usable_gb` (the GPU's memory x the usable share). None when no count holds it."""
    if usable_gb <= 0:
        return None
    floor, splittable = _parts(fp)
    if floor > usable_gb:
        return None
    room = usable_gb - floor
    # every split gives each GPU at least 1/n of what splits: no count below this can fit
    start = max(1, math.ceil(splittable / room - 1e-9)) if room > 0 else 1
    limit = MAX_CARDS
    if not fp.layout.training and fp.layout.layers:
        limit = max(fp.layout.layers, fp.layout.heads or 0)
    n = start
    while n <= limit:
        need = per_gpu_gb(fp, n)
        if need is not None and need <= usable_gb:
            kind = split_for(fp, n)
            return Count(n, need, kind.kind if kind else "")
        n += 1
    return None
