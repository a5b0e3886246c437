"""Workload arithmetic against hand-computed cases (each comment shows the hand computation from
the model's published config), the question forms, and bad input. The KB's own facts are read
back so a changed config changes the expectation, not the test."""

from __future__ import annotations

import math

import pytest

from kbq.errors import QueryError
from kbq.lang.workload import formulas
from kbq.lang.workload.formulas import Facts, Format

FP16 = Format("FP16", 16.0)
FP8 = Format("FP8", 8.0)


def line(answer, part: str) -> list:  # type: ignore[no-untyped-def, type-arg]
    return next(r for r in answer.rows if r[0] == part)


# --- pure formulas, hand-computed ------------------------------------------------------------------


def test_gqa_kv_cache_per_token() -> None:
    # Llama 3.1 70B (config.json): 80 layers, 8 KV heads, head dim 128, FP16:
    # 2 x 80 x 8 x 128 x 2 B = 327,680 B per token
    f = Facts("llama", 70e9, layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128)
    per, _ = formulas.kv_bytes_per_token(f, 2.0, 4096)  # type: ignore[misc]
    assert per == 327_680
    kv = formulas.kv_cache(f, context=8192, batch=4, kv_bytes=2.0, source="")
    assert kv is not None and kv.gb == pytest.approx(327_680 * 8192 * 4 / 1e9)


def test_mha_uses_attention_heads_when_kv_heads_absent() -> None:
    # BERT-large-like MHA: 24 layers, 16 heads of 64: 2 x 24 x 16 x 64 x 2 B = 98,304 B per token
    f = Facts("mha", 340e6, layers=24, hidden=1024, heads=16)
    assert formulas.kv_bytes_per_token(f, 2.0, 512)[0] == 98_304  # type: ignore[index]


def test_mla_latent_cache() -> None:
    # DeepSeek-V3 (config_671B.json): kv_lora_rank 512 + qk_rope_head_dim 64, 61 layers, FP8 cache 1 B:
    # (512 + 64) x 61 x 1 = 35,136 B per token
    f = Facts(
        "dsv3", 671e9, active_params=37e9, layers=61, hidden=7168, heads=128, attention="MLA", kv_lora_rank=512, rope_dim=64
    )
    assert formulas.kv_bytes_per_token(f, 1.0, 4096)[0] == 35_136  # type: ignore[index]


def test_sliding_window_caps_the_cache() -> None:
    # Mistral 7B v0.1: all 32 layers slide with a 4096-token window; 8 KV heads x 128; FP16.
    # At 32,768 tokens only 4,096 are kept: 2 x 8 x 128 x 2 x 32 layers x 4,096 = 536,870,912 B
    f = Facts("mistral", 7.3e9, layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, window=4096, window_layers=32)
    kv = formulas.kv_cache(f, context=32768, batch=1, kv_bytes=2.0, source="")
    assert kv is not None and kv.gb * 1e9 == pytest.approx(536_870_912)
    # Gemma-2-like mix: 21 of 42 layers slide (window 4096), 8 KV heads x 256, 8,192 tokens:
    # full 21 x 8192 + sliding 21 x 4096 tokens, 2 x 8 x 256 x 2 B each
    g = Facts("gemma", 9e9, layers=42, hidden=3584, heads=16, kv_heads=8, head_dim=256, window=4096, window_layers=21)
    kv = formulas.kv_cache(g, context=8192, batch=1, kv_bytes=2.0, source="")
    assert kv is not None and kv.gb * 1e9 == pytest.approx(2 * 8 * 256 * 2 * (21 * 8192 + 21 * 4096))


def test_lora_parameter_count() -> None:
    # Llama 2 7B, LoRA r = 8 on q and v (LoRA paper): 32 layers x 8 x ((4096 + 4096) + (4096 + 4096)) = 4,194,304
    f = Facts("llama2", 7e9, layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128, ffn=11008)
    count, _ = formulas.lora_parameters(f, targets="q,v", rank=8)  # type: ignore[misc]
    assert count == 4_194_304
    # QLoRA's all-linear r = 64: + 3 FFN matrices per layer: 64 x 3 x (4096 + 11008)
    all_linear, _ = formulas.lora_parameters(f, targets="all-linear", rank=64)  # type: ignore[misc]
    per_layer = 64 * (4 * (4096 + 4096)) + 64 * 3 * (4096 + 11008)
    assert all_linear == 32 * per_layer


def test_zero_and_tensor_parallel_splits() -> None:
    f = Facts("llama", 70e9, layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128)
    optimizer = formulas.Line("optimizer states", 840.0, "x")
    assert formulas.shard(optimizer, 8, "ZeRO").gb == 105.0
    kv = formulas.Line("KV cache", 10.0, "x")
    assert formulas.tensor_parallel_kv(f, kv, 4).gb == pytest.approx(2.5)  # 8 KV heads over 4 GPUs
    assert formulas.tensor_parallel_kv(f, kv, 16).gb == pytest.approx(1.25)  # 1 of 8 heads, replicated
    # the one cards rule: tensor parallel where the count divides the heads, else a layer split
    from kbq.lang.evaluate.split import Footprint, Layout, cards_needed, per_gpu_gb

    fp = Footprint((formulas.Line("weights", 200.0, "w"),), Layout(training=False, heads=64, kv_heads=8, layers=80))
    assert per_gpu_gb(fp, 2) == pytest.approx(100.0)  # 64 % 2 == 0: tensor parallel, 200 / 2
    assert per_gpu_gb(fp, 3) == pytest.approx(200.0 * 27 / 80)  # layer split: ceil(80 / 3) = 27 of 80 layers
    found = cards_needed(fp, 72.0)
    assert found is not None and found.cards == 3 and found.split == "layer split"  # 3 x 67.5 GB, not 4
    assert cards_needed(fp, 101.0) is not None and cards_needed(fp, 101.0).cards == 2  # type: ignore[union-attr]


def test_group_quantised_weights() -> None:
    # GPTQ 4-bit, groups of 128 with an FP16 scale and a 4-bit zero: 4 + 20/128 = 4.15625 bits
    gptq = Format("GPTQ", 4.0, 128, 20.0)
    f = Facts("m", 1e9)
    assert formulas.weights(f, gptq).gb == pytest.approx(1e9 * 4.15625 / 8 / 1e9)


def test_speed_and_time_formulas() -> None:
    # decode: 0.5 x 1000 GB/s x 2 GPUs / (10 GB + 2 x 1 GB) x 2 = 166.67 tokens/s
    decode = formulas.decode_speed(
        weight_bytes=10e9, kv_bytes_per_seq=1e9, batch=2, bandwidth_gbps=1000, gpus=2, efficiency=0.5, efficiency_text="50%"
    )
    assert decode.value == pytest.approx(166.6667, rel=1e-4)
    # prefill: 0.4 x 100 TFLOPS / (2 x 1e9) = 20,000 tokens/s
    assert formulas.prefill_speed(active_params=1e9, tflops=100, gpus=1, mfu=0.4, rate_name="t").value == pytest.approx(20_000)
    # 6 x 8e9 x 1e12 / (64 x 989.4e12 x 0.4) s = 33,690 GPU-hours
    hours, days = formulas.train_time(params=8e9, tokens=1e12, tflops=989.4, gpus=64, mfu=0.4, rate_name="t")
    assert hours.value == pytest.approx(6 * 8e9 * 1e12 / (64 * 989.4e12 * 0.4) / 3600 * 64)
    assert days.value == pytest.approx(hours.value / 64 / 24)


# --- the KB's models through the language -----------------------------------------------------------


def test_memory_question_uses_the_models_config(kb) -> None:
    facts = dict(
        kb.table(
            "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/> SELECT ?p ?v WHERE {"
            " VALUES ?p { kbq:numLayers kbq:kvHeads kbq:headDim kbq:parameterCount kbq:vocabSize kbq:hiddenSize }"
            " kb:Llama3.1-70B ?p ?v }"
        ).rows
    )
    layers, kv, hd, vocab, hidden = (
        facts[f"https://kbq.dev/ontology#{k}"] for k in ("numLayers", "kvHeads", "headDim", "vocabSize", "hiddenSize")
    )
    params = facts["https://kbq.dev/ontology#parameterCount"]
    answer = kb.answer("memory for llama 3.1 70b inference at fp8 with 8192 context batch 2")
    # FP8 checkpoints quantise the linear layers: the embeddings and the (untied) output head stay at 2 bytes
    embed = 2 * vocab * hidden
    assert line(answer, "weights")[1] == pytest.approx(((params - embed) * 1 + embed * 2) / 1e9, rel=1e-3)
    # the KV cache stays in the model's 16-bit dtype (2 bytes) unless the question quantises it
    assert line(answer, "KV cache")[1] == pytest.approx(2 * layers * kv * hd * 2 * 8192 * 2 / 1e9, rel=1e-3)
    total = line(answer, "total")[1]
    assert total == pytest.approx(sum(r[1] for r in answer.rows if r[0] != "total"), rel=1e-3)


def test_per_gpu_split_and_verdict(kb) -> None:
    one = kb.answer("memory for llama 3.1 70b inference at fp16 on 1 x h100 sxm5")
    four = kb.answer("memory for llama 3.1 70b inference at fp16 on 4 x h100 sxm5")
    assert one.explanation[0].startswith("verdict: does not fit")
    assert four.explanation[0].startswith("verdict: fits")
    assert line(four, "weights")[2] == pytest.approx(line(four, "weights")[1] / 4, rel=1e-3)


def test_moe_decodes_active_parameters(kb) -> None:
    answer = kb.answer("speed of mixtral 8x7b inference at fp16 on 2 x h100 sxm5")
    decode = line(answer, "decode")
    assert "12,900,000,000" not in decode[3]  # bytes read are shown in GB
    active = kb.table(
        "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/>"
        " SELECT ?a WHERE { kb:Mixtral8x7B kbq:activeParameterCount ?a }"
    ).rows[0][0]
    assert f"{active * 2 / 1e9:.3g} GB weights read per step" in decode[3]


def test_qlora_uses_nf4_and_adapters(kb) -> None:
    answer = kb.answer("memory for mistral 7b qlora training with 4k context batch 2")
    assert "4.127 bits (NF4)" in line(answer, "frozen base weights")[2]
    assert line(answer, "adapter weights")[1] > 0
    assert "full recomputation" in line(answer, "activations")[2]  # QLoRA trains with gradient checkpointing


def test_zero3_shards_over_gpus(kb) -> None:
    answer = kb.answer("memory for llama 3 70b training with zero 3 on 8 gpus")
    for part in ("weights", "gradients", "optimizer states"):
        row = line(answer, part)
        assert row[2] == pytest.approx(row[1] / 8, rel=1e-3)
    offload = kb.answer("memory for llama 3 70b training with zero 3 offload on 8 gpus")
    assert line(offload, "optimizer states")[2] == 0


def test_how_many_uses_a_valid_split(kb) -> None:
    """Tensor parallelism where the count divides the heads; otherwise a layer split, stated."""
    answer = kb.answer("how many h100 sxm5 for deepseek r1 inference at fp8")
    n = line(answer, "GPUs needed")[1]
    heads = kb.table(
        "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/>"
        " SELECT ?h WHERE { kb:DeepSeekR1 kbq:attentionHeads ?h }"
    ).rows[0][0]
    assert line(answer, "per-GPU need (GB)")[1] <= 80 * 0.9
    split = "tensor parallel" if heads % n == 0 else "layer split"
    assert split in answer.explanation[0]


def test_time_to_train_compares_with_the_model_card(kb) -> None:
    answer = kb.answer("time to train llama 3.1 405b on 15.6t tokens with 16384 x h100 sxm5")
    assert math.isclose(line(answer, "GPU-hours")[1], 6 * 405e9 * 15.6e12 / (989.4e12 * 0.4) / 3600, rel_tol=0.01)
    assert any(e.startswith("published: Llama 3.1 405B took 30,840,000 GPU-hours") for e in answer.explanation)


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("memory for llama 9000 inference", "unknown workload 'llama 9000'"),
        ("memory for llama 3.1 8b inference with 1m context", "beyond Llama 3.1 8B's maximum"),
        ("memory for llama 3.1 8b training at q4_k_m", "inference format"),
        ("memory for cnn training", "not a model"),
        ("time to train llama 3 8b with 8 x h100 sxm5", "needs the tokens"),
        ("memory for llama 3.1 8b inference with batch 0", r"batch must be from 1 to 1,000,000 \(got 0\)"),
        ("memory for llama 2 inference", r"Llama 2 is a family: name a size \(Llama 2 7B, Llama 2 13B, Llama 2 70B\)"),
    ],
)
def test_bad_workload_questions_name_the_problem(kb, question: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        kb.answer(question)


def test_speed_with_no_hardware_is_a_ranking_that_names_what_is_missing(kb) -> None:  # type: ignore[no-untyped-def]
    # issue 18 (d): no longer the error 'speed of ... on WHAT?', but the GPUs ranked for it, echoed, saying what to add
    answer = kb.answer("speed of llama 3.1 8b inference")
    assert answer.kind == "gpus" and answer.read_as == "fastest gpu for Llama 3.1 8B inference"
    assert any(line.startswith("no hardware named") and "'on rtx 4090'" in line for line in answer.explanation)


def test_library_keyword_api(kb) -> None:
    memory = kb.memory("llama 3.1 8b", precision="fp16", context=8192, gpu="rtx 4090")
    assert memory.kind == "memory" and memory.lines[-1].part == "total"
    assert memory.explanation[0].startswith("verdict:")
    speed = kb.speed("llama 3.1 8b", gpu="rtx 4090", precision="q4_k_m")
    assert speed.lines[0].part == "decode" and speed.lines[0].unit == "tokens/s"
    time = kb.train_time("llama 3 8b", tokens=1e12, gpu="h100 sxm5", gpus=64)
    assert time.lines[0].part == "GPU-hours"
    with pytest.raises(QueryError):
        kb.memory("llama 3.1 8b where vendor = amd")  # a name, never re-parsed as a question


def test_decode_is_compute_bound_at_a_large_batch() -> None:
    # 8e9 active parameters at 1000 TFLOPS x 40% MFU: 2 x 8e9 FLOP per token -> 25,000 tokens/s;
    # memory-bound at batch 4096 would be 0.71 x 3350e9 / (8e9 + 4096 x 1e6) x 4096 = 807,000 tokens/s
    prefill = formulas.prefill_speed(active_params=8e9, tflops=1000, gpus=1, mfu=0.4, rate_name="fp8")
    assert prefill.value == pytest.approx(25_000)
    decode = formulas.decode_speed(
        weight_bytes=8e9, kv_bytes_per_seq=1e6, batch=4096, bandwidth_gbps=3350, gpus=1,
        efficiency=0.71, efficiency_text="71%", compute_bound=prefill,
    )  # fmt: skip
    assert decode.value == pytest.approx(25_000) and decode.formula.startswith("compute-bound")
    small = formulas.decode_speed(
        weight_bytes=8e9, kv_bytes_per_seq=1e6, batch=1, bandwidth_gbps=3350, gpus=1,
        efficiency=0.71, efficiency_text="71%", compute_bound=prefill,
    )  # fmt: skip
    assert small.value == pytest.approx(0.71 * 3350e9 / (8e9 + 1e6))


def test_speed_shows_published_measurements_and_the_ratio_where_they_measure_the_question(kb) -> None:
    """llama-bench tg128 (Q4_0, batch 1, one RTX 3090) is compared at its own conditions; the
    F16 results are shown but not compared with a Q4_0 question."""
    answer = kb.answer("speed of llama 2 7b inference at q4_0 on an rtx 3090")
    measured = {r[0]: r[1] for r in answer.rows if str(r[0]).startswith("measured: ")}
    published = kb.sparql(
        "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/> SELECT ?v WHERE {"
        " ?r kbq:accelerator kb:RTX3090 ; kbq:benchmarkModel kb:Llama2-7B ; kbq:measuredPrecision kb:GGUF_Q4_0 ;"
        " kbq:measuredPhase kb:DecodePhase ; kbq:perAccelerator ?v }"
    ).rows[0][0]
    assert float(published) in measured.values() and len(measured) == 4  # type: ignore[arg-type]
    ratios = {r[0]: r for r in answer.rows if str(r[0]).startswith("estimate / measured")}
    assert set(ratios) == {"estimate / measured (decode)", "estimate / measured (prefill)"}
    decode = ratios["estimate / measured (decode)"]
    estimate = float(decode[3].split(" / ")[0].replace(",", ""))
    assert decode[1] == pytest.approx(estimate / float(published), abs=0.01)  # type: ignore[arg-type]
    assert "batch 1 and mean context 64" in decode[3]
    assert any(e.startswith("measured: 4 published result(s)") and "2 measure what was asked" in e for e in answer.explanation)


def test_a_bare_gpu_name_after_on_is_one_card(kb) -> None:
    one = kb.answer("speed of llama 3.1 8b inference at fp8 on an h100 sxm5")
    assert one.rows[:3] == kb.answer("speed of llama 3.1 8b inference at fp8 on 1 x h100 sxm5").rows[:3]


def test_serving_throughput_by_hand() -> None:
    # 10 GB free, KV 1e5 B/token, 1000+1000 tokens per request -> 2e8 B each -> batch 50.
    # decode step: memory (8e9 + 50 x 1e5 x 1500) / (0.5 x 1000e9) = 31 ms; compute 2 x 8e9 x 50 / (0.4 x 1000e12) = 2 ms
    # prefill per request: 2 x 8e9 x 1000 / 4e14 = 40 ms; output = 50 x 1000 / (1000 x 31 ms + 50 x 40 ms) = 1515.2 tokens/s
    got = formulas.serving_throughput(
        weight_bytes=8e9, kv_bytes_per_token=1e5, free_bytes=10e9, input_tokens=1000, output_tokens=1000,
        bandwidth_gbps=1000, efficiency=0.5, tflops=1000, mfu=0.4, active_params=8e9, gpus=1,
    )  # fmt: skip
    assert got is not None and got.value == pytest.approx(1515.15, abs=0.01)
    assert "batch 50" in got.formula and "memory-bound" in got.formula
    assert (
        formulas.serving_throughput(
            weight_bytes=8e9,
            kv_bytes_per_token=1e5,
            free_bytes=1e8,
            input_tokens=1000,
            output_tokens=1000,
            bandwidth_gbps=1000,
            efficiency=0.5,
            tflops=1000,
            mfu=0.4,
            active_params=8e9,
            gpus=1,
        )
        is None
    )  # not one request's KV fits
