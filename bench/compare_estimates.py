"""kbq's estimates against the calibration set (bench/calibration.py): writes bench/results/estimates.md.

Run: python bench/compare_estimates.py

Per kind (memory, decode speed, prefill speed, fine-tuning memory, serving, training time, and for image
models images/s, training memory and time to train for epochs): n, how many
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
    "Hugging Face training stacks; TensorFlow 1 for the BERT table), printed by bench/fit_constants.py; ExLlamaV2's",
    "decode efficiency and fixed time per step (bench/fit_exllamav2.py, its README's EXL2 table). Serving",
    "on several GPUs adds tensor parallelism's all-reduces (two per layer of 16-bit activations, a ring at the",
    "GPU's stated link bandwidth: the link's peak, so an upper bound on NCCL): 405B at TP8 on 8 x H100/H200 went",
    "from 1.17-1.69x to 0.81-1.35x; the FP4 MFUs are grid-fitted with that term (bench/fit_fp4.py). Known misses:",
    "vLLM's start-up log on an A100 40GB (issue 12330) holds a 9.37 GiB activation peak the one-row vLLM fit",
    "(issue 10517) does not explain; TensorRT-LLM's 128/128 runs of 70B at FP4 on one B200/GB200 reach 1.7x",
    "kbq's estimate; Llama 3.1 8B at FP8 on one H200 at 128/2048 is 1.46x high; 405B at 128/2048 is 1.35x high",
    "on 8 x H100 and 0.70x on 4 x B200;",
    "BERT's small batches (1-2) miss by one; the Q3_K_S prefill on the P40 reaches two thirds of the vector rate",
    "the Q4 rows reach. The TensorRT-LLM rows are asked with an FP8 KV cache, which the perf overview does not",
    "state (assumed for the ModelOpt checkpoints). DeepSeek-V3 (held out, FP8 on H800) comes out 0.65x: the MFUs",
    "are fitted on BF16 runs and no FP8 run is in the fitted rows.",
    "",
    "Image models (issue 17b): images/s = GPUs / (k x (F / (R x eta) + A x p x s / BW)), a two-term roofline on",
    "forward FLOPs and fvcore's activation count, eta and p per model class (CNN, vision transformer) and the",
    "training factor k fitted by bench/fit_images.py on timm's benchmark tables (RTX 3090/4090/5090) and NVIDIA",
    "DeepLearningExamples' ResNet-50 tables (DGX A100, DGX-1 16GB and 32GB). R is the dense rate of the compute",
    "precision: FP32 runs at the FP32 vector rate (before, the FP16 tensor rate was used and FP32 training on the",
    "V100 came out 1.4x); k is the middle of the range that keeps every fitted training row within 30 %. Miss:",
    "EfficientNet-B0 training (held out, 1.31x). Training memory rows compare the largest",
    "batch kbq fits in 24 GiB with the largest batch timm's decay steps ran (the true limit lies below the next",
    "step, so about 1.2x is the expected ratio); EfficientNet-B0 keeps about 4.2 activations per counted one",
    "(SiLU, squeeze-excitation), not the ResNets' 2.4, and misses at 2x. Time for N epochs = N x (training split",
    "/ training images/s + t): t, the time between epochs (evaluation, checkpoints, data-loader restart), is 42 s,",
    "the median over the fitted rows of each DeepLearningExamples run's '~hours' minus its images / the same",
    "table's images/s (bench/fit_images.py), never kbq's own images/s. Not added: DeepLearningExamples'",
    "EfficientNet-B0 400-epoch table (its training images/s are 1.7-2x below kbq's timm-fitted estimate, and its",
    "README does not state the time unit) and TensorFlow ResNet-50's 90-epoch times (its README says they were",
    "estimated from throughput, not measured). The ViT rows of images/s are all fitted (none held out: the",
    "every-third rule fell on ResNet-152 and EfficientNet-B0).",
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
