"""Grid-fit the FP4 serving MFUs (kb/calibrated.ttl: kb:ServingMfuFp4 prefill, kb:ServingDecodeMfuFp4 decode
steps) on the calibration set's FP4 serving rows that are not held out.

Run: python bench/fit_fp4.py

Both constants enter one estimate (serving throughput at a load), so they are fitted together: for each
pair of the grid the KB is rebuilt with those values and the FP4 rows are asked again; the pair with the
most fitted rows within the kind's target wins (ties: the smaller median distance from 1). Held-out rows
are printed, never counted. kb/calibrated.ttl is restored afterwards.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import kinds, point_rows, serving_rows

from kbq import KnowledgeBase

CALIBRATED = Path(__file__).resolve().parents[1] / "kb" / "calibrated.ttl"
PREFILL = (0.2, 0.3, 0.4)
DECODE = (0.10, 0.14, 0.20)


class _Fp4Only:
    """The KB, answering only the FP4 questions (the rest are not asked: they do not read these constants)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def answer(self, question: str):  # type: ignore[no-untyped-def]
        if " at fp4 " not in question:
            return SimpleNamespace(rows=[], explanation=[])
        return self.kb.answer(question)

    def table(self, query: str):  # type: ignore[no-untyped-def]
        return self.kb.table(query)


def _with_values(text: str, prefill: float, decode: float) -> str:
    text = re.sub(r"(kb:ServingMfuFp4 .*?kbq:value )[0-9.]+", rf"\g<1>{prefill}", text, count=1, flags=re.S)
    return re.sub(r"(kb:ServingDecodeMfuFp4 .*?kbq:value )[0-9.]+", rf"\g<1>{decode}", text, count=1, flags=re.S)


def main() -> None:
    original = CALIBRATED.read_text()
    results = []
    try:
        for prefill in PREFILL:
            for decode in DECODE:
                CALIBRATED.write_text(_with_values(original, prefill, decode))
                kb = KnowledgeBase.default()
                target = kinds(kb)["CalServing"]
                only = _Fp4Only(kb)
                asked = point_rows(only) + serving_rows(only)  # type: ignore[arg-type]
                rows = [r for r in asked if r.kind == "CalServing" and " at fp4 " in r.question]
                fitted = [r for r in rows if not r.held_out]
                within = sum(target.within(r.ratio) for r in fitted)
                held = [r for r in rows if r.held_out]
                spread = statistics.median(abs((r.ratio or 0) - 1) for r in fitted)
                results.append((within, -spread, prefill, decode))
                print(f"prefill {prefill:.2f}, decode {decode:.2f}: {within} of {len(fitted)} fitted rows within"
                      f" {target.target} (median |ratio - 1| {spread:.2f}); held out"
                      f" {sum(target.within(r.ratio) for r in held)} of {len(held)}")  # fmt: skip
    finally:
        CALIBRATED.write_text(original)
    best = max(results)
    print(f"best: prefill_mfu {best[2]}, decode_mfu {best[3]} ({best[0]} fitted rows within)")


if __name__ == "__main__":
    main()
