"""kbq's workload estimates against published measurements (all read from the KB, each cited there).

Run: python bench/compare_estimates.py   (writes bench/results/estimates.md)

- memory: llama.cpp's Q4_K_M file sizes vs kbq's weights; vLLM's KV-cache budget per 8,192-token
  request vs kbq's KV cache; the BERT authors' largest batch on a 12 GB GPU vs the largest batch
  kbq's training estimate fits in 12 GB (target: within 10 %);
- decode speed: llama.cpp llama-bench tg128 vs kbq's decode estimate, each measurement held out
  of the bandwidth-efficiency calibration it is compared with (target: within 30 %);
- serving: TensorRT-LLM's maximum-load output tokens/s at fixed input/output lengths vs kbq's
  continuous-batching estimate (largest batch whose KV fits; roofline decode steps plus prefills);
  the ratio calibrates the 40 % MFU and 71 % bandwidth efficiency at large batch (target: within 30 %);
- training time: model cards' GPU-hours vs 6 x N x D / (FLOPS x MFU) (target: within 1.5x).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import record

from kbq import KnowledgeBase
from kbq.lang.run import run_plan
from kbq.lang.workload.library import workload_plan

PREFIXES = (
    "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/> "
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
)


def rows(kb: KnowledgeBase, query: str) -> list[list[object]]:
    return kb.table(PREFIXES + query).rows


def total(kb: KnowledgeBase, model: str, **settings: object) -> float:
    process = settings.pop("process", None)
    precision = settings.pop("precision", None)
    text, plan = workload_plan(
        kb.catalog, kb.table, "memory", model, process=process, precision=precision, gpu=None, gpus=1, settings=settings
    )  # type: ignore[arg-type]
    result = run_plan(text, plan, kb.catalog, kb.table)
    return float(next(r[1] for r in result.rows if r[0] == "total"))  # type: ignore[arg-type]


def memory_rows(kb: KnowledgeBase) -> list[tuple[str, ...]]:
    out = []
    for model, value in rows(
        kb,
        "SELECT ?model ?v WHERE "
        "{ ?r kbq:suite kb:LlamaCppQuantizeReadme ; kbq:benchmarkModel/rdfs:label ?model ; kbq:resultValue ?v }",
    ):
        weights = kb.memory(str(model), precision="q4_k_m").lines[0].value
        out.append(
            (
                "memory",
                f"{model} Q4_K_M weights",
                "-",
                f"{float(value):g} GB",
                f"{float(weights):.1f} GB",
                float(weights) / float(value),
                0.10,
                "llama.cpp quantize README",
            )
        )  # type: ignore[arg-type]
    blocks = dict(
        (str(u), float(v))  # type: ignore[arg-type]
        for u, v in rows(kb, "SELECT ?u ?v WHERE { ?r kbq:suite kb:VLLMStartupLog ; kbq:resultUnit ?u ; kbq:resultValue ?v }")
    )
    if blocks:
        per_request = blocks["GiB reserved for the KV cache"] * 2**30 / blocks["concurrent 8192-token requests"] / 1e9
        kv = next(line.value for line in kb.memory("llama 3 8b", precision="fp16", context=8192).lines if line.part == "KV cache")
        out.append(
            (
                "memory",
                "Llama 3 8B KV cache, 8,192 tokens",
                "A100 40GB",
                f"{per_request:.3f} GB",
                f"{float(kv):.3f} GB",
                float(kv) / per_request,
                0.10,
                "vLLM issue #12330 start-up log",
            )
        )  # type: ignore[arg-type]
    for model, scenario, batch in rows(
        kb,
        "SELECT ?model ?s ?v WHERE { ?r kbq:suite kb:BERTMaxBatchTable ; kbq:benchmarkModel/rdfs:label ?model ;"
        " kbq:scenario ?s ; kbq:resultValue ?v } ORDER BY ?model ?s",
    ):
        seq = int(str(scenario).split()[1].rstrip(","))
        fits = 0
        for b in range(1, 129):
            if total(kb, str(model), process="training", precision="fp32", context=seq, batch=b, recompute_none=True) > 12.0:
                break
            fits = b
        published = int(batch)  # type: ignore[call-overload]
        ratio = (fits / published) if published else (1.0 if fits == 0 else float("inf"))
        out.append(
            (
                "max batch",
                f"{model} fine-tuning, seq {seq}",
                "12 GB (Titan X)",
                str(published),
                str(fits),
                ratio,
                0.10,
                "google-research/bert README",
            )
        )
    return out


def speed_rows(kb: KnowledgeBase) -> list[tuple[str, ...]]:
    runs = rows(
        kb,
        "SELECT ?model ?gpu ?s ?v WHERE { ?r kbq:suite kb:LlamaCppBench ; kbq:benchmarkModel/rdfs:label ?model ;"
        " kbq:accelerator/rdfs:label ?gpu ; kbq:scenario ?s ; kbq:resultValue ?v FILTER(CONTAINS(?s, 'tg128')) "
        "} ORDER BY ?gpu ?s",
    )
    roofs = []
    for model, gpu, scenario, value in runs:
        precision = str(scenario).split()[0].lower()
        roof = kb.speed(str(model), gpu=str(gpu), precision=precision, context=128, bandwidth_efficiency=1.0).lines[0].value
        roofs.append((model, gpu, precision, float(value), float(roof)))  # type: ignore[arg-type]
    out = []
    for i, (model, gpu, precision, measured, roof) in enumerate(roofs):
        others = [m / r for j, (_, _, _, m, r) in enumerate(roofs) if j != i]
        eff = sum(others) / len(others)
        estimate = roof * eff
        out.append(
            (
                "decode tokens/s",
                f"{model} {precision.upper()} tg128",
                str(gpu),
                f"{measured:g}",
                f"{estimate:.1f} (efficiency {eff:.2f}, held out)",
                estimate / measured,
                0.30,
                "llama.cpp PR #4766",
            )
        )
    return out


def serving_rows(kb: KnowledgeBase) -> list[tuple[str, ...]]:
    """Maximum-load serving results (TensorRT-LLM's ISL/OSL table) vs kbq's continuous-batching estimate,
    as the speed answer itself pairs them (the 'estimate / measured' row after each 'measured' row)."""
    out = []
    groups = rows(
        kb,
        "SELECT DISTINCT ?model ?gpu ?p ?tp WHERE { ?r kbq:measuredPhase kb:ServingPhase ; kbq:benchmarkModel/rdfs:label ?model ;"
        " kbq:accelerator/rdfs:label ?gpu ; kbq:measuredPrecision/rdfs:label ?p ; kbq:tensorParallel ?tp "
        "} ORDER BY ?model ?gpu ?tp",
    )
    for model, gpu, precision, tp in groups:
        answer = kb.answer(f"speed of {model} inference at {str(precision).lower()} on {tp} x {gpu}")
        for measured, compared in zip(answer.rows, answer.rows[1:], strict=False):
            if not (str(measured[0]).startswith("measured: ") and str(compared[0]).startswith("estimate / measured (serving")):
                continue
            what = str(measured[0]).removeprefix("measured: ").split(": ")[0]
            estimate = str(compared[3]).split(" / ")[0]
            out.append(
                (
                    "serving tokens/s per GPU",
                    what,
                    f"{tp} x {gpu}",
                    f"{float(measured[1]):g}",
                    estimate,
                    float(compared[1]),
                    0.30,
                    "TensorRT-LLM perf overview",
                )
            )  # type: ignore[arg-type]
    return out


def training_rows(kb: KnowledgeBase) -> list[tuple[str, ...]]:
    out = []
    for model, gpu, hours, tokens in rows(
        kb,
        "SELECT ?model ?gpu ?h ?t WHERE { ?r a kbq:TrainingRun ; kbq:trainedModel/rdfs:label ?model ; kbq:gpuHours ?h ;"
        " kbq:trainingTokens ?t ; kbq:trainingGpu/rdfs:label ?gpu } ORDER BY ?model",
    ):
        estimate = float(kb.train_time(str(model), tokens=float(tokens), gpu=str(gpu)).lines[0].value)  # type: ignore[arg-type]
        implied = 0.40 * estimate / float(hours)  # type: ignore[arg-type]
        what = f"{model}, {float(tokens):.3g} tokens (implied MFU {implied:.0%})"  # type: ignore[arg-type]
        out.append(
            (
                "GPU-hours",
                what,
                str(gpu),
                f"{float(hours):,.0f}",
                f"{estimate:,.0f}",
                estimate / float(hours),
                0.5,
                "model card / paper",
            )
        )  # type: ignore[arg-type]
    return out


def within(ratio: float, tolerance: float) -> bool:
    if tolerance == 0.5:  # a factor: within 1.5x either way
        return 1 / 1.5 <= ratio <= 1.5
    return abs(ratio - 1) <= tolerance


def main() -> None:
    kb = KnowledgeBase.default()
    table = memory_rows(kb) + speed_rows(kb) + serving_rows(kb) + training_rows(kb)
    lines = [
        "# kbq estimates vs published measurements",
        "",
        "Every published figure is a kbq:BenchmarkResult or kbq:TrainingRun in kb/ with its source; every estimate is",
        "kbq's own formula (`memory for ...`, `speed of ...`, `time to train ...`). Decode speeds use a bandwidth",
        "efficiency calibrated on the other llama.cpp measurements (each held out of its own calibration).",
        "",
        "| quantity | what | hardware | published | kbq | ratio | target | within |",
        "|---|---|---|---|---|---|---|---|",
    ]
    passed = 0
    for quantity, what, hardware, published, estimate, ratio, tolerance, _source in table:
        ok = within(float(ratio), float(tolerance))  # type: ignore[arg-type]
        passed += ok
        target = "1.5x" if tolerance == 0.5 else f"{float(tolerance):.0%}"  # type: ignore[arg-type]
        lines.append(
            f"| {quantity} | {what} | {hardware} | {published} | {estimate} | {float(ratio):.2f} | {target} |"  # type: ignore[arg-type]
            f" {'yes' if ok else 'no'} |"
        )
    lines += [
        "",
        f"{passed} of {len(table)} within target.",
        "",
        "Reading the misses: (1) the BERT authors' 2018 TensorFlow 1.11 scripts (FP32, unfused ops) held 2-4x the",
        "activations and temporaries of Korthikanti et al.'s model, so kbq's largest batch is 2-6x theirs: kbq's",
        "training memory is a lower bound for unfused FP32 code. (2) llama.cpp's Q4_0 decoding on the RTX 3090 reaches",
        "half the bandwidth efficiency of F16/Q8_0 (dequantisation costs compute). (3) Meta's GPU-hours for the",
        "smaller Llama 3.x models imply 5-26 % MFU (restarts, evaluation, long-context phases and small models'",
        "lower utilisation are in them); kbq's 40 % (Llama 3 paper, 405B) fits the A100-era Llama 1/2 runs and",
        "the 70B/405B runs within 1.5x, and underestimates the small H100 runs. (4) Serving at maximum load:",
        "on Hopper at FP8 kbq's roofline (40 % MFU, 71 % bandwidth efficiency, the largest batch whose KV fits) is",
        "within 30 % for most input/output lengths, high for long outputs on 8-GPU 405B (TP8 all-reduce is not",
        "modelled); on Blackwell at FP4 it is 1.4-2.4x high: the FP4 dense rate is not reached at 40 % MFU in",
        "TensorRT-LLM v1.0 (attention and the KV cache run at FP8/BF16), so read FP4 serving estimates as ceilings.",
    ]
    record(lines, "estimates.md")


if __name__ == "__main__":
    main()
