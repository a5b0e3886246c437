"""kbq's estimates against the calibration set (bench/calibration.py): writes bench/results/estimates.md.

Run: python bench/compare_estimates.py

Per kind (memory, decode speed, prefill speed, fine-tuning memory, serving, training time): n, how many
kbq could answer, the median of estimate / measured and the share within target, for all rows, the
fitted rows and the held-out rows; then every row with its question, the published figure, kbq's
estimate and the source.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import kinds, rows, summary
from report import record

from kbq import KnowledgeBase

READING = [
    "Reading it: the constants that turn specs into estimates are fitted per range on the rows not held out",
    "(kb/calibrated.ttl: llama.cpp decode and prefill per weight-bit band, GDDR vs HBM, tensor cores or not;",
    "training MFU per GPU generation and model size from Meta's model cards; FP4 serving MFU; the Unsloth and",
    "Hugging Face training stacks; TensorFlow 1 for the BERT table), printed by bench/fit_constants.py. Known",
    "misses: vLLM's start-up log on an A100 40GB (issue 12330) holds a 9.37 GiB activation peak the one-row",
    "vLLM fit (issue 10517) does not explain; TensorRT-LLM on 8 x H100/H200 at TP8 is 1.3-1.7x high for 405B",
    "(the all-reduce is not modelled); BERT's small batches (1-2) miss by one; the Q3_K_S prefill on the P40",
    "reaches two thirds of the vector rate the Q4 rows reach. The TensorRT-LLM rows are asked with an FP8 KV",
    "cache, which the perf overview does not state (assumed for the ModelOpt checkpoints). DeepSeek-V3 (held out,",
    "FP8 on H800) comes out 0.65x: the MFUs are fitted on BF16 runs and no FP8 run is in the fitted rows.",
]


def _median(m: float | None) -> str:
    return "-" if m is None else f"{m:.2f}"


def main() -> None:
    kb = KnowledgeBase.default()
    all_kinds = kinds(kb)
    table = rows(kb)
    per_kind = summary(table, all_kinds)
    lines = [
        "# kbq estimates vs published measurements (the calibration set)",
        "",
        "Every row pairs a published measurement (kb/calibration.ttl, kb/measurements.ttl, kb/training_runs.ttl, each",
        "with its source) with kbq's answer to the question a person would ask. A question kbq cannot answer counts as a",
        "miss. Held-out rows (every third of each source, marked before any constant was fitted) are reported apart.",
        "",
        "| kind | target | n | answered | median ratio | within | share | fitted share | held-out share |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, kind in all_kinds.items():
        every, fitted, held = per_kind[name]
        lines.append(
            f"| {kind.label} | {kind.target} | {every.n} | {every.asked} | {_median(every.median)} | {every.within} |"
            f" {every.share:.0%} | {fitted.share:.0%} ({fitted.n}) | {held.share:.0%} ({held.n}) |"
        )
    total = sum(s[0].n for s in per_kind.values())
    within = sum(s[0].within for s in per_kind.values())
    lines += ["", f"{within} of {total} rows within target.", "", *READING, ""]
    for name, kind in all_kinds.items():
        lines += [
            f"## {kind.label} (target {kind.target})",
            "",
            "| what | question | published | kbq | ratio | within | held out |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in (r for r in table if r.kind == name):
            est = "-" if r.estimate is None else f"{r.estimate:,.4g}"
            ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
            why = f" ({r.note})" if r.note else ""
            lines.append(
                f"| {r.what} | `{r.question}` | {r.published:,.4g} {r.unit} | {est}{why} | {ratio} |"
                f" {'yes' if kind.within(r.ratio) else 'no'} | {'yes' if r.held_out else ''} |"
            )
        lines.append("")
    record(lines, "estimates.md")


if __name__ == "__main__":
    main()
