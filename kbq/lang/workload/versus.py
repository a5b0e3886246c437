"""'2 x rtx 3090 vs rtx 4090 for llama 3 70b': setups (a count of a GPU, or a memory budget) side
by side for one model, each evaluated as its own memory and speed questions would be: the memory
verdict per GPU and the decode rate (one function each, shared with those questions)."""

from __future__ import annotations

from kbq.errors import QueryError
from kbq.lang import ast
from kbq.lang.context import Context
from kbq.lang.plan import Plan
from kbq.lang.words import Hardware
from kbq.lang.workload.question import Asked, plan_for, understand


def compare_setups(ctx: Context, setups: list[Hardware], q: ast.CompareQuestion) -> Plan:
    assert q.target is not None
    base = understand(ctx, ast.WorkloadQuestion("memory", q.target, q.clauses))
    rows: list[list[object]] = []
    explanation: list[str] = []
    for setup in setups:
        asked = Asked(base.model, base.process, base.precision, base.settings, setup, base.column)
        memory = plan_for(ctx, "memory", asked)
        chart = memory.extra.get("chart", {})
        need = sum(float(v) for _, v in chart.get("lines", []))
        name = _name(setup, chart)
        decode: object = None
        try:
            speed = plan_for(ctx, "speed", asked)
            decode = next((r[1] for r in speed.extra.get("rows", []) if r[0] == "decode"), None)
        except QueryError as exc:
            explanation.append(f"{name}: no speed ({exc.message})")
        if chart.get("verdict") == "does not fit" and decode is not None:
            explanation.append(f"{name}: no decode rate (the model does not fit)")
            decode = None
        rows.append([name, setup.count, chart.get("capacity"), round(need, 2), chart.get("verdict"), decode])
        if not explanation or not explanation[0].startswith("workload:"):
            explanation[:0] = [line for line in memory.explanation if line.startswith(("workload:", "assumed:"))]
    explanation.insert(
        0, "compare: " + " vs ".join(str(r[0]) for r in rows) + " for the workload (memory verdict, then decode rate)"
    )
    columns = ["setup", "gpus", "memory_per_gpu_gb", "needed_per_gpu_gb", "verdict", "decode_tokens_s"]
    units = {"memory_per_gpu_gb": "GB", "needed_per_gpu_gb": "GB", "decode_tokens_s": "tokens/s"}
    return Plan("versus", "", columns, units=units, explanation=explanation, extra={"rows": rows, "lookups": ctx.lookups[:5]})


def _name(setup: Hardware, chart: dict) -> str:
    gpu = chart.get("gpu") or (setup.gpu.label if setup.gpu else "?")
    return f"{setup.count} x {gpu}" if setup.count > 1 else str(gpu)
