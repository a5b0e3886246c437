"""Fit the images/s constants (kb/calibrated.ttl: image_compute_efficiency, image_activation_passes per
model class, image_training_factor) on the calibration set's image-speed rows that are not held out.

Run: python bench/fit_images.py

Seconds per image t = k x (c / eta + m x p), where the answer gives c (forward arithmetic at the full
rate) and m (one pass over the activations at the full bandwidth). Per model class, inference rows fit
(1/eta, p) by least squares on t (numpy.linalg.lstsq); training rows then give k = t / (c/eta + m p), the
median of the fitted rows. Held-out rows are printed with their ratios, never used to fit.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import point_rows

from kbq import KnowledgeBase


def components(kb: KnowledgeBase, question: str) -> tuple[float, float, str]:
    answer = kb.answer(question)
    got = {str(r[0]): float(r[1]) for r in answer.rows if isinstance(r[1], (int, float))}  # type: ignore[arg-type]
    formula = next(str(r[3]) for r in answer.rows if str(r[0]).endswith("throughput"))
    cls = formula.split("constants: image compute efficiency, ")[1].split(" (")[0]
    return got["forward arithmetic at the full rate"] * 1e-6, got["one pass over the activations"] * 1e-6, cls


def main() -> None:
    kb = KnowledgeBase.default()
    rows = [r for r in point_rows(kb) if r.kind == "CalImageSpeed"]
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
        k = statistics.median(ks) if ks else float("nan")
        print(f"{cls}: eta {eta:.3f}, passes {passes:.2f} ({len(infer)} inference rows); training factor {k:.2f}"
              f" (median of {len(ks)}: {', '.join(f'{x:.2f}' for x in ks)})")  # fmt: skip
        for c, m, t, held, train, what in items:
            est = (k if train else 1.0) * (c / eta + m * passes)
            print(f"  {'held' if held else 'fit '} {t / est:5.2f}  {what}")


if __name__ == "__main__":
    main()
