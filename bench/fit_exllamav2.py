"""Fit ExLlamaV2's decode constants (kb/calibrated.ttl: bandwidth_efficiency and decode_step_overhead_s for
kb:ExLlamaV2) on the calibration set's ExLlamaV2 decode rows that are not held out.

Run: python bench/fit_exllamav2.py

Seconds per token t = x / eta + t0, where x is the step's bytes (weights + KV, read from kbq's answer) over
the GPU's memory bandwidth: (1/eta, t0) by least squares on t (numpy.linalg.lstsq). A fixed time per step
is what bounds small models (TinyLlama 1.1B reaches a third of the tokens/s its bytes allow). Held-out rows
are printed with their ratios, never used to fit.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import PREFIXES

from kbq import KnowledgeBase

STEP = re.compile(r"\(([\d.e+-]+) GB weights read per step \+ (\d+) x ([\d.e+-]+) GB KV\)")
BANDWIDTH = re.compile(r"x ([\d.]+) GB/s x (\d+) GPU\(s\)")


def _seconds_at_full_bandwidth(kb: KnowledgeBase, question: str) -> float:
    formula = next(str(r[3]) for r in kb.answer(question).rows if str(r[0]) == "decode")
    step, bw = STEP.search(formula), BANDWIDTH.search(formula)
    assert step and bw, formula
    step_gb = float(step.group(1)) + int(step.group(2)) * float(step.group(3))
    return step_gb / (float(bw.group(1)) * int(bw.group(2)))


def main() -> None:
    kb = KnowledgeBase.default()
    found = kb.table(
        PREFIXES + "SELECT ?l ?q ?v ?h WHERE { ?c a kbq:CalibrationPoint ; kbq:calibrationKind kb:CalDecode ;"
        " rdfs:label ?l ; kbq:calibrationQuestion ?q ; kbq:publishedValue ?v ; kbq:heldOut ?h"
        ' FILTER(CONTAINS(?q, "using exllamav2")) } ORDER BY ?c'
    ).rows
    data = [
        (str(lab), _seconds_at_full_bandwidth(kb, str(q)), 1 / float(v), str(h).lower() in ("true", "1"))  # type: ignore[arg-type]
        for lab, q, v, h in found
    ]
    fitted = [(x, t) for _, x, t, held in data if not held]
    (inv_eta, t0), *_ = np.linalg.lstsq(np.array([[x, 1.0] for x, _ in fitted]), np.array([t for _, t in fitted]), rcond=None)
    print(f"ExLlamaV2: bandwidth efficiency {1 / inv_eta:.3f}, time per step {t0 * 1e3:.3f} ms ({len(fitted)} rows fitted)")
    for label, x, t, held in data:
        print(f"  {'held' if held else 'fit '} {t / (x * inv_eta + t0):5.2f}  {label}")


if __name__ == "__main__":
    main()
