"""Fit the images/s constants (kb/calibrated.ttl: image_compute_efficiency, image_activation_passes per
model class, image_training_factor) on the calibration set's image-speed rows that are not held out.

Run: python bench/fit_images.py

Seconds per image t = k x (c / eta + m x p), where the answer gives c (forward arithmetic at the full
rate) and m (one pass over the activations at the full bandwidth). Per model class, inference rows fit
(1/eta, p) by least squares on t (numpy.linalg.lstsq); training rows then give k_i = t / (c/eta + m p), and k
is the middle of the range that keeps every fitted row within the kind's target (training_factor).
Held-out rows are printed with their ratios, never used to fit.

The time between epochs (image_epoch_overhead_s) is fitted on the epoch-time rows alone, against the
published images/s of the same run (the image-speed row with the same model, precision and GPUs),
never against kbq's own images/s: per epoch, published hours x 3600 / epochs - examples / images/s;
the median over the rows not held out.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import Row, point_rows

from kbq import KnowledgeBase


def components(kb: KnowledgeBase, question: str) -> tuple[float, float, str]:
    answer = kb.answer(question)
    got = {str(r[0]): float(r[1]) for r in answer.rows if isinstance(r[1], (int, float))}  # type: ignore[arg-type]
    formula = next(str(r[3]) for r in answer.rows if str(r[0]).endswith("throughput"))
    cls = formula.split("constants: image compute efficiency, ")[1].split(" (")[0]
    return got["forward arithmetic at the full rate"] * 1e-6, got["one pass over the activations"] * 1e-6, cls


TOLERANCE = 0.3  # the images/s kind's target (kb/calibration.ttl, kb:CalImageSpeed)


def training_factor(ks: list[float]) -> tuple[float, str]:
    """The training factor k that keeps every fitted training row within the kind's target (a row's own k_i
    is within when k_i / k lies in [1 - tol, 1 + tol]): the geometric middle of the k that do; the median
    when no k does."""
    if not ks:
        return float("nan"), "no rows"
    low, high = max(k / (1 + TOLERANCE) for k in ks), min(k / (1 - TOLERANCE) for k in ks)
    if low <= high:
        return math.sqrt(low * high), f"middle of {low:.2f}-{high:.2f}, where every fitted row is within {TOLERANCE:.0%},"
    return statistics.median(ks), "median"


def main(kb: KnowledgeBase, every: list[Row]) -> None:
    rows = [r for r in every if r.kind == "CalImageSpeed"]
    data: dict[str, list[tuple[float, float, float, bool, bool, str]]] = defaultdict(list)
    for r in rows:
        c, m, cls = components(kb, r.question)
        data[cls].append((c, m, 1.0 / r.published * (int(r.question.split(" on ")[-1].split(" x ")[0])), r.held_out,
                          "training" in r.question, r.what))  # fmt: skip
    for cls, items in data.items():
        infer = [(c, m, t) for c, m, t, held, train, _ in items if not held and not train]
        a = np.array([[c, m] for c, m, _ in infer])
        b = np.array([t for _, _, t in infer])
        (inv_eta, passes), *_ = np.linalg.lstsq(a, b, rcond=None)
        eta = 1 / inv_eta
        ks = [t / (c / eta + m * passes) for c, m, t, held, train, _ in items if train and not held]
        k, how = training_factor(ks)
        print(f"{cls}: eta {eta:.3f}, passes {passes:.2f} ({len(infer)} inference rows); training factor {k:.2f}"
              f" ({how} of {len(ks)}: {', '.join(f'{x:.2f}' for x in ks)})")  # fmt: skip
        for c, m, t, held, train, what in items:
            est = (k if train else 1.0) * (c / eta + m * passes)
            print(f"  {'held' if held else 'fit '} {t / est:5.2f}  {what}")


def _examples(kb: KnowledgeBase, dataset: str) -> float:
    found = kb.table(
        "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX skos: <http://www.w3.org/2004/02/skos/core#>"
        f" SELECT ?n WHERE {{ ?d kbq:trainingExamples ?n ; skos:altLabel ?l FILTER(lcase(str(?l)) = {dataset!r}) }}"
    ).rows
    return float(found[0][0])  # type: ignore[arg-type]


def epoch_overhead(kb: KnowledgeBase, rows: list[Row]) -> None:
    """Seconds per epoch outside the training passes, from the published hours and images/s of one run."""
    speeds = {r.question: r.published for r in rows if r.kind == "CalImageSpeed"}
    gaps: list[float] = []
    for r in rows:
        if r.kind != "CalImageTrainTime":
            continue
        # 'time to train resnet-50[ at tf32] for 90 epochs on imagenet on 8 x a100 sxm4 80gb'
        head, tail = r.question.split(" for ", 1)
        epochs, rest = tail.split(" epochs on ", 1)
        dataset, hardware = rest.split(" on ", 1)
        model, _, precision = head.removeprefix("time to train ").partition(" at ")
        speed_q = f"speed of {model} training{' at ' + precision if precision else ''} on {hardware}"
        if speed_q not in speeds:
            print(f"  no published images/s for: {r.what}")
            continue
        gap = r.published * 3600 / float(epochs) - _examples(kb, dataset) / speeds[speed_q]
        print(f"  {'held' if r.held_out else 'fit '} {gap:6.0f} s per epoch  {r.what}")
        if not r.held_out:
            gaps.append(gap)
    if gaps:
        print(f"image_epoch_overhead_s: median {statistics.median(gaps):.0f} s of {len(gaps)} rows not held out")


if __name__ == "__main__":
    default = KnowledgeBase.default()
    every_row = point_rows(default)
    main(default, every_row)
    epoch_overhead(default, every_row)
