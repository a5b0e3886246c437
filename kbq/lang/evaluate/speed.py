"""Speed of a scenario on an accelerator, in the workload's own unit (tokens/s for a language
model that generates tokens; kbq gives no speed for other models). One function per estimate, so
the speed form and cloud instances show the same decode figure for the same hardware."""

from __future__ import annotations

from kbq.lang.workload import formulas


def dense_rate(rates: dict[str, float], compute_key: str | None) -> tuple[float, str] | None:
    """The dense TFLOPS the matrix multiplications run at: the compute precision's own rate, else
    tensor FP16/BF16 (weight-only formats dequantise to it), else FP32; None when none is sourced."""
    if compute_key is not None and rates.get(compute_key):
        return rates[compute_key], compute_key
    if rates.get("tensor"):  # a card without tensor cores has a tensor rate of 0: it runs on its vector units
        return rates["tensor"], "tensor (FP16/BF16 dense, FP32 accumulate)"
    if rates.get("fp32"):
        return rates["fp32"], "fp32 vector rate (no tensor cores)"
    return None


def decode(
    *,
    weight_bytes: float,
    kv_bytes_per_seq: float,
    batch: int,
    bandwidth_gbps: float,
    gpus: int,
    efficiency: float,
    efficiency_text: str,
    active_params: float,
    rate: tuple[float, str] | None,
    mfu: float,
    step_overhead_s: float = 0.0,
) -> tuple[formulas.Speed, formulas.Speed | None]:
    """(decode, prefill): decode tokens/s from memory bandwidth, bounded by the prefill (compute)
    rate at large batches; prefill from dense FLOPS x MFU (None without a sourced rate)."""
    prefill = (
        formulas.prefill_speed(active_params=active_params, tflops=rate[0], gpus=gpus, mfu=mfu, rate_name=rate[1])
        if rate is not None and active_params
        else None
    )
    speed = formulas.decode_speed(
        weight_bytes=weight_bytes, kv_bytes_per_seq=kv_bytes_per_seq, batch=batch, bandwidth_gbps=bandwidth_gbps,
        gpus=gpus, efficiency=efficiency, efficiency_text=efficiency_text, compute_bound=prefill,
        step_overhead_s=step_overhead_s,
    )  # fmt: skip
    return speed, prefill
