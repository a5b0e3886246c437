"""Fit the calibrated constants (kb/calibrated.ttl) on the calibration set's rows that are not held out.

Run: python bench/fit_constants.py

For every decode, prefill and training-time row, the constant the answer used is read from its
formula ('efficiency: LABEL', 'MFU: LABEL') and the row's implied value is computed from the same
question at 100 % (the roofline): measured / roofline for speeds, roofline GPU-hours / published
GPU-hours for training. Per constant: the fitted rows' median (the value to record in
kb/calibrated.ttl), their spread, and the held-out rows' implied values (never used to fit).
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import point_rows, training_rows

from kbq import KnowledgeBase

SETTING = {"CalDecode": ("decode", "mbu 100%", "efficiency"), "CalPrefill": ("prefill", "mfu 100%", "MFU"),
           "CalTraining": ("GPU-hours", "mfu 100%", "MFU")}  # fmt: skip


def formula_of(kb: KnowledgeBase, question: str, quantity: str) -> tuple[float, str] | None:
    try:
        answer = kb.answer(question)
    except Exception:  # noqa: BLE001 - a question kbq cannot answer has nothing to fit
        return None
    for row in answer.rows:
        if str(row[0]) == quantity:
            return float(row[1]), str(row[3])  # type: ignore[arg-type]
    return None


def main() -> None:
    kb = KnowledgeBase.default()
    implied: dict[str, list[tuple[float, bool, str]]] = defaultdict(list)
    for r in point_rows(kb) + training_rows(kb):
        if r.kind not in SETTING:
            continue
        quantity, full, word = SETTING[r.kind]
        normal = formula_of(kb, r.question, quantity)
        roof = formula_of(kb, f"{r.question} with {full}", quantity)
        if normal is None or roof is None or not roof[0]:
            continue
        m = re.search(word + r": (.*?)(?: \(fitted on|$)", normal[1])
        name = m.group(1) if m else "(general constant)"
        value = r.published / roof[0] if r.kind != "CalTraining" else roof[0] / r.published
        implied[f"{r.kind}: {name}"].append((value, r.held_out, r.what))
    for name, values in sorted(implied.items()):
        fitted = [v for v, held, _ in values if not held]
        held = [v for v, h, _ in values if h]
        spread = f"({min(fitted):.3f}-{max(fitted):.3f})" if fitted else ""
        fit = f"median {statistics.median(fitted):.3f} of {len(fitted)} {spread}" if fitted else "none fitted"
        print(f"{name}\n  fitted: {fit}\n  held out: {', '.join(f'{v:.3f}' for v in held) or '-'}")


if __name__ == "__main__":
    main()
