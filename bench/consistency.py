"""Cross-form agreement audit: the same workload asked every way must give one count and one verdict.

Run: python bench/consistency.py [--out bench/results/consistency.txt]

For each workload (drawn from the KB: LLM inference at INT4/FP8/FP16/Q4_K_M, LoRA, QLoRA, full
fine-tuning with ZeRO-3 and offload, MoE, a CNN, a diffusion model, a bare size) and each GPU
(consumer, workstation, data centre, Apple), one process through the library API asks:

  how many GPU for W                       -> N (rows, Result.numbers and Result.verdict)
  gpu for W where name in (GPU)            -> its cards_needed column
  compare GPU and OTHER for W              -> GPU's cards_needed column
  does W fit on N x GPU / on N-1 x GPU     -> fits / does not fit (text verdict and Result.verdict)
  gpu for W in N cards (and N-1)          -> GPU kept at N, dropped at N-1
  memory for W on GPU                      -> fits on one card iff N == 1
  models that fit on GPU                   -> (bare 'M inference' only) M listed iff the memory form fits it
                                              (a model without a layer count is outside the listing, which says so)

and lists every disagreement in a count or a verdict.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's kbq, not an installed one
from kbq import KnowledgeBase
from kbq.errors import KbqError
from kbq.lang.catalog import PREFIXES

WORKLOADS = [
    # LLM inference at several formats
    "llama 3.1 8b inference",
    "llama 3.1 8b inference at int4",
    "llama 3.1 8b inference at fp8",
    "llama 3.1 8b inference at q4_k_m",
    "llama 3.1 70b inference",
    "llama 3.1 70b inference at int4",
    "llama 3.1 70b inference at fp8",
    "llama 3.1 70b inference at q4_k_m",
    "llama 3.1 405b inference at int4",
    "llama 3.1 405b inference at fp8",
    "llama 2 7b inference",
    "llama 2 13b inference at fp16",
    "llama 2 70b inference at int4",
    "qwen2.5 32b inference at q4_k_m",
    "gemma 2 9b inference",
    "mistral 7b inference with 32k context",
    "llama 3.1 8b inference with batch 16",
    "bert-large inference",
    # MoE
    "mixtral 8x7b inference",
    "mixtral 8x7b inference at int4 with 32k context",
    "deepseek v3 inference",
    "qwen3 30b a3b inference",
    # fine-tuning
    "llama 3.1 8b lora training",
    "llama 2 70b lora training",
    "llama 3.1 8b qlora training",
    "llama 3.1 70b qlora training",
    "mixtral 8x7b qlora training",
    "llama 2 7b training",
    "llama 2 7b training with zero 3 offload",
    "llama 3.1 8b training with zero 3",
    "llama 3.1 70b training with zero 3 offload",
    "llama 3.1 8b training with zero 2",
    "bert-large training",
    # not LLMs
    "resnet-50 training",
    "resnet-50 training with batch 256",
    "resnet-50 inference",
    "stable diffusion 1.5 training",
    "stable diffusion 1.5 inference",
    # bare sizes
    "a 70b model",
    "a 7b model inference at int4",
]
GPUS = [
    ("rtx 4090", "rtx 3090"),  # consumer
    ("rtx 3060 12gb", "rtx 4060"),  # consumer, small
    ("rtx a6000", "rtx 6000 ada"),  # workstation
    ("a100 sxm4 80gb", "h100 sxm5"),  # data centre
    ("h100 sxm5", "h200 sxm"),  # data centre
    ("apple m2 ultra", "apple m3 max"),  # Apple
]
NO_COUNT = "no number of"


def _value(answer, quantity: str):  # type: ignore[no-untyped-def]
    return next((r[1] for r in answer.rows if r[0] == quantity), None)


def _cards(answer, name: str):  # type: ignore[no-untyped-def]
    if "cards_needed" not in answer.columns:
        return "no cards column"
    at = answer.columns.index("cards_needed")
    return next((r[at] for r in answer.rows if str(r[1]) == name), "not listed")


def _fits(answer) -> str:  # type: ignore[no-untyped-def]
    """The verdict of a fit answer as its text says it, checked against Result.verdict."""
    line = next((x for x in answer.explanation if x.startswith("verdict: ")), "")
    text = re.sub(r"^verdict: (fits|tight|does not fit|cannot run|unknown).*", r"\1", line) or "none"
    return text


def _label(answer) -> str | None:  # type: ignore[no-untyped-def]
    line = next((x for x in answer.explanation if x.startswith("workload: ")), "")
    m = re.search(r" of (.+?) \(", line)
    return m.group(1) if m else None


class Audit:
    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.problems: list[tuple[str, str, str, str]] = []  # (class, workload, gpu, detail)
        self.checks = Counter[str]()
        self.refused = 0
        self.refusals: list[str] = []
        self._listing: dict[str, dict[str, str]] = {}
        self._outside: set[str] | None = None

    def ask(self, q: str):  # type: ignore[no-untyped-def]
        return self.kb.ask(q)

    def check(self, kind: str, ok: bool, w: str, g: str, detail: str) -> None:
        self.checks[kind] += 1
        if not ok:
            self.problems.append((kind, w, g, detail))

    def outside_listing(self) -> set[str]:
        """Models 'models that fit' does not cover (it says so): those without a layer count."""
        if self._outside is None:
            rows = self.kb.table(
                PREFIXES + "SELECT ?l WHERE { ?m a kbq:Model ; rdfs:label ?l FILTER NOT EXISTS { ?m kbq:numLayers ?n } }"
            ).rows
            self._outside = {str(r[0]) for r in rows}
        return self._outside

    def listing(self, gpu: str) -> dict[str, str]:
        if gpu not in self._listing:
            a = self.ask(f"models that fit on {gpu}")
            col = a.columns.index("verdict")
            self._listing[gpu] = {str(r[0]): str(r[col]) for r in a.rows}
        return self._listing[gpu]

    def pair(self, w: str, gpu: str, other: str) -> None:
        try:
            hm = self.ask(f"how many {gpu} for {w}")
            # a lower bound (activations not counted) says 'GPUs needed (at least)'
            n = _value(hm, "GPUs needed")
            n = _value(hm, "GPUs needed (at least)") if n is None else n
            v, number = hm.verdict, hm.numbers.get("gpus_needed", hm.numbers.get("gpus_needed_at_least"))
            agree = number == n and v is not None and v.gpus == n and v.fits
            self.check("how many: rows vs Result", agree, w, gpu, f"rows {n}, numbers {number}, verdict {v}")
        except KbqError as exc:
            if NO_COUNT not in str(exc):
                self.refused += 1
                self.refusals.append(f"{w} | {gpu}: {str(exc)[:110]}")
                self.refused_elsewhere(w, gpu)
                return
            n = None
        try:
            ranking = self.ask(f"gpu for {w} where name in ({gpu})")
            name = str(ranking.rows[0][1]) if ranking.rows else None
            rc = _cards(ranking, name) if name else "not listed"
        except KbqError as exc:
            name, rc = None, f"error: {str(exc)[:60]}"
        self.check("ranking cards", rc == n, w, gpu, f"how many {n}, ranking {rc}")
        if name:
            try:
                cmp = self.ask(f"compare {gpu} and {other} for {w}")
                cc = _cards(cmp, name)
            except KbqError as exc:
                cc = f"error: {str(exc)[:60]}"
            self.check("compare cards", cc == n, w, gpu, f"how many {n}, compare {cc}")
        if n is not None and name:
            self.in_cards(w, gpu, name, n)
        mem = self.ask(f"memory for {w} on {gpu}")
        one = _fits(mem)
        self.check(
            "memory text vs Result",
            mem.verdict is not None and mem.verdict.status == one,
            w,
            gpu,
            f"text {one}, Result {mem.verdict and mem.verdict.status}",
        )
        self.check("memory on 1 vs how many", (one == "fits") == (n == 1), w, gpu, f"memory on 1: {one}, how many {n}")
        if n is not None:
            at = self.ask(f"does {w} fit on {n} x {gpu}")
            self.check(
                "fits at N", _fits(at) == "fits" and at.verdict is not None and at.verdict.fits, w, gpu, f"{n} x: {_fits(at)}"
            )
            if n > 1:
                try:
                    below = self.ask(f"does {w} fit on {n - 1} x {gpu}")
                    word, fits = _fits(below), bool(below.verdict and below.verdict.fits)
                except KbqError as exc:  # N-1 is no valid split (heads and layers): a clear error, not a fit
                    if "cannot be split over" not in str(exc):
                        raise
                    word, fits = "no valid split", False
                self.check("not at N-1", word != "fits" and not fits, w, gpu, f"{n - 1} x: {word}")
        if w.endswith(" inference") and not w.startswith("a "):
            label = _label(mem)
            if label in self.outside_listing():
                self.checks["outside the listing's scope (stated)"] += 1
                return
            listed = self.listing(gpu).get(label or "")
            expect = one if one in ("fits", "tight") else None
            self.check("models that fit", listed == expect, w, gpu, f"{label}: listed {listed}, memory form {one}")

    def refused_elsewhere(self, w: str, gpu: str) -> None:
        """A precision gate acts in every form: the ranking leaves the GPU out, the memory form says 'cannot run'."""
        try:
            listed = bool(self.ask(f"gpu for {w} where name in ({gpu})").rows)
        except KbqError:
            listed = False
        self.check("refused: ranking drops it", not listed, w, gpu, f"how many refuses; the ranking lists it: {listed}")
        word = _fits(self.ask(f"memory for {w} on {gpu}"))
        self.check("refused: memory cannot run", word == "cannot run", w, gpu, f"how many refuses; memory form: {word}")

    def in_cards(self, w: str, gpu: str, name: str, n: int) -> None:
        """'in N cards' keeps the GPU at the how-many count and drops it one card fewer."""
        for cards, expect in ((n, True), (n - 1, False)):
            if cards < 1 or cards > 64:
                continue
            try:
                rows = self.ask(f"gpu for {w} in {cards} cards where name in ({gpu})").rows
                listed = any(str(r[1]) == name for r in rows)
            except KbqError:
                listed = False
            self.check("in N cards", listed == expect, w, gpu, f"how many {n}; 'in {cards} cards' lists it: {listed}")

    def report(self, seconds: float) -> list[str]:
        pairs = len(WORKLOADS) * len(GPUS)
        out = [
            f"workloads {len(WORKLOADS)} x GPUs {len(GPUS)} = {pairs} pairs; {self.refused} refused by how many"
            " (a precision the GPU cannot run: checked in the ranking and the memory form);"
            f" {sum(self.checks.values())} checks in {seconds:.0f} s",
            f"disagreements: {len(self.problems)}",
        ]
        for kind, count in sorted(self.checks.items()):
            bad = sum(1 for p in self.problems if p[0] == kind)
            out.append(f"  {kind:28s} {count:4d} checked, {bad:3d} disagree")
        out.append("")
        for kind, w, g, detail in self.problems:
            out.append(f"- [{kind}] {w} | {g}: {detail}")
        out += [f"refused: {r}" for r in self.refusals]
        return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    kb = KnowledgeBase.default()
    audit = Audit(kb)
    start = time.perf_counter()
    for w in WORKLOADS:
        for gpu, other in GPUS:
            try:
                audit.pair(w, gpu, other)
            except KbqError as exc:
                audit.problems.append(("error", w, gpu, str(exc)[:120]))
    lines = audit.report(time.perf_counter() - start)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 1 if audit.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
