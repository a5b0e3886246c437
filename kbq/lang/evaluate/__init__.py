"""Evaluation: one scenario on one accelerator at one count, computed by one function.

Layout of the workload model (see kbq.lang.scenario for the first step):
  language (kbq.lang.parse -> kbq.lang.ast)
  -> scenario (kbq.lang.scenario.resolve: the question + the KB's named defaults -> Scenario)
  -> evaluate (this package, one module per concern: memory, split, speed, cost, support, hardware)
  -> forms (kbq.lang.forms: one registry of every plan kind with its compiler and shaper; how many,
     ranking, compare, fit, why, speed, time, instances, value are views on Evaluations; a ranking's
     candidates are evaluated at run time by kbq.lang.gpu.evaluated)
  -> render (kbq.lang.run, kbq.lang.chartspec, kbq.output).

Public API other work builds on:
  - `kbq.lang.scenario.resolve(ctx, model, process, precision, settings, hardware, count) -> Scenario`
  - `kbq.lang.evaluate.memory.memory(scenario) -> Memory` (its `.footprint`: lines + Layout, plain data)
  - `kbq.lang.evaluate.split.cards_needed(footprint, usable_gb) -> Count | None`: THE cards rule
  - `kbq.lang.evaluate.split.per_gpu_lines(footprint, n)`: the per-GPU lines and the split used
  - `evaluate(footprint, accelerator, count=None, usable_share=...) -> Evaluation`
  - `kbq.lang.evaluate.hardware.Accelerator` (a card, or `budget(24.0)`: a memory budget)
  - `kbq.lang.evaluate.cost`: the one price rule (PRICE_RULE; its SPARQL in kbq.lang.gpu.columns:
    dated_pattern for a column, price_test for a filter) and TCO, $/Mtok;
    `kbq.lang.evaluate.support.support(ctx, gpu_iri, precision)`: native / weight-only / not at all.
  - `kbq.lang.contract`: every KB name the code reads (tests/test_contract.py checks both ways).
An Evaluation is plain data, so a ranking evaluates its candidates at run time from a cached plan.
"""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang.evaluate.hardware import Accelerator
from kbq.lang.evaluate.split import Footprint, cards_needed, per_gpu_gb, split_for

VERDICTS = ("fits", "tight", "does not fit", "unknown")


class Evaluation(NamedTuple):
    """One scenario on `count` x `accelerator`: the memory verdict and what it rests on."""

    accelerator: Accelerator
    count: int  # type: ignore[assignment]  # a field named like tuple.count
    cards_needed: int | None  # THE rule's answer for this accelerator (None: no count holds it / unknown memory)
    per_gpu_gb: float | None  # need on each GPU at `count` (None: no valid split at that count)
    total_gb: float  # the whole scenario on one GPU
    capacity_gb: float | None  # the accelerator's memory
    usable_gb: float | None  # capacity x usable share
    headroom_gb: float | None  # capacity - per-GPU need
    verdict: str  # fits | tight | does not fit | unknown
    split: str  # 'tensor parallel', 'layer split', 'ZeRO stage 3 sharded data parallel', 'one GPU' ...
    split_note: str

    @property
    def fits(self) -> bool:
        return self.verdict == "fits"


def verdict(need_gb: float | None, capacity_gb: float | None, usable_share: float) -> str:
    if need_gb is None:
        return "does not fit"
    if capacity_gb is None:
        return "unknown"
    if need_gb <= capacity_gb * usable_share:
        return "fits"
    if need_gb <= capacity_gb:
        return "tight"
    return "does not fit"


def evaluate(fp: Footprint, accelerator: Accelerator, count: int | None = None, *, usable_share: float) -> Evaluation:
    """THE evaluation: `fp` (a scenario's footprint) on `count` x `accelerator`; with count None,
    on the number of cards the rule says it needs (or 1 when none holds it)."""
    capacity = accelerator.memory_gb
    usable = capacity * usable_share if capacity is not None else None
    needed = cards_needed(fp, usable) if usable is not None else None
    n = count if count is not None else (needed.cards if needed else 1)
    need = per_gpu_gb(fp, n)
    s = split_for(fp, n)
    if s is None:
        kind = "no valid split"
        note = f"no valid split over {n} GPUs: more GPUs than layers, and {n} does not divide the attention heads"
    else:
        kind, note = s.kind, s.note
    return Evaluation(
        accelerator, n, needed.cards if needed else None, need, fp.total, capacity, usable,
        (capacity - need) if capacity is not None and need is not None else None,
        verdict(need, capacity, usable_share), kind, note,
    )  # fmt: skip


__all__ = ["VERDICTS", "Accelerator", "Evaluation", "Footprint", "cards_needed", "evaluate", "verdict"]
