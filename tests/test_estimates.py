"""Issue 17's estimate rules, each checked against the arithmetic it should do (not against kbq's own output)."""

from __future__ import annotations

import pytest


def row(answer, name: str) -> list[object]:  # type: ignore[no-untyped-def]
    return next(r for r in answer.rows if r[0] == name)


def test_a_card_without_tensor_cores_decodes_at_its_vector_rate(kb) -> None:
    answer = kb.answer("speed of llama 2 7b inference at q4_0 on tesla p40 with 128 context")
    assert row(answer, "decode")[1] > 0 and row(answer, "prefill")[1] > 0
    assert "fp32 vector rate" in str(row(answer, "prefill")[3])


def test_llama_cpp_layer_split_is_the_multi_gpu_headline_and_vllm_is_tensor_parallel(kb) -> None:
    cpp = kb.answer("speed of llama 3.1 70b inference at q4_k_m on 2 x rtx 3090 with 128 context")
    vllm = kb.answer("speed of llama 3.1 70b inference at q4_k_m on 2 x rtx 3090 with 128 context using vllm")
    assert "layers split over 2 GPUs" in str(row(cpp, "decode")[3])
    assert row(cpp, "decode, tensor parallel (upper bound)")[1] > row(cpp, "decode")[1]
    assert "layer split" in str(row(vllm, "decode, layer split")[0])
    assert any("backend: llama.cpp" in e for e in cpp.explanation)


def test_the_calibrated_constant_is_named_with_what_it_was_fitted_on(kb) -> None:
    answer = kb.answer("speed of llama 3 8b inference at f16 on rtx 4090")
    formula = str(row(answer, "decode")[3])
    assert "efficiency: llama.cpp decode efficiency, 16-bit weights (fitted on" in formula
    assert "llama.cpp pull request #4766" in str(row(answer, "decode")[4])


def test_eight_bit_adam_and_adafactor_change_the_optimizer_states(kb) -> None:
    params = 8_030_261_248  # Llama 3 8B from its configuration
    adam8 = kb.answer("memory for llama 3 8b training with 8-bit adam with 1024 context")
    ada = kb.answer("memory for llama 3 8b training with adafactor with 1024 context")
    assert row(adam8, "optimizer states")[1] == pytest.approx(params * 6 / 1e9, rel=1e-3)
    assert row(ada, "optimizer states")[1] == pytest.approx(params * 4 / 1e9, rel=1e-3)


def test_zero_offload_moves_gradients_and_zero_3_offload_moves_weights(kb) -> None:
    two = kb.answer("memory for llama 3 8b training with zero 2 offload with 1024 context on 4 x a100 sxm4 80gb")
    three = kb.answer("memory for llama 3 8b training with zero 3 offload with 1024 context on 4 x a100 sxm4 80gb")
    assert row(two, "gradients")[2] == 0 and row(two, "optimizer states")[2] == 0 and row(two, "weights")[2] > 0
    assert row(three, "weights")[2] == 0


def test_the_kv_cache_stays_16_bit_unless_asked(kb) -> None:
    fp8 = kb.answer("memory for llama 3.1 8b inference at fp8 with 8192 context")
    asked = kb.answer("memory for llama 3.1 8b inference at fp8 with 8192 context with fp8 kv cache")
    assert row(fp8, "KV cache")[1] == pytest.approx(2 * row(asked, "KV cache")[1], rel=1e-6)


def test_nf4_keeps_embeddings_and_head_at_16_bits(kb) -> None:
    answer = kb.answer("memory for llama 3.1 8b qlora training with 1024 context")
    embed = 2 * 128_256 * 4_096
    expected = ((8_030_261_248 - embed) * 4.127 + embed * 16) / 8 / 1e9
    assert row(answer, "frozen base weights")[1] == pytest.approx(expected, rel=1e-3)


def test_unsloth_keeps_one_layer_of_activations_and_no_logits(kb) -> None:
    uns = kb.answer("memory for llama 3.1 8b qlora training with 8192 context using unsloth")
    hf = kb.answer("memory for llama 3.1 8b qlora training with 8192 context using hf trainer")
    assert row(uns, "activations")[1] == pytest.approx(8192 * 4096 * 55 / 1e9, rel=1e-3)
    assert not any(r[0] == "logits (loss)" for r in uns.rows)
    assert row(hf, "logits (loss)")[1] == pytest.approx(8192 * 128_256 * 15.6 / 1e9, rel=1e-3)


def test_training_mfu_depends_on_model_size(kb) -> None:
    small = kb.answer("time to train llama 3 8b on 1t tokens with 64 x h100 sxm5")
    large = kb.answer("time to train llama 3.1 405b on 1t tokens with 64 x h100 sxm5")
    assert "15% MFU" in str(row(small, "GPU-hours")[3]) and "40% MFU" in str(row(large, "GPU-hours")[3])


def test_an_unknown_backend_is_a_clear_error(kb) -> None:
    from kbq.errors import QueryError

    with pytest.raises(QueryError, match="backend"):
        kb.answer("speed of llama 3 8b inference on rtx 4090 using frobnicator")


def test_lora_spends_two_thirds_of_full_training_flops(kb) -> None:
    full = kb.answer("time to train llama 3 8b on 1t tokens with 8 x h100 sxm5")
    lora = kb.answer("time to train llama 3 8b lora training on 1t tokens with 8 x h100 sxm5")
    assert row(lora, "GPU-hours")[1] == pytest.approx(row(full, "GPU-hours")[1] * 4 / 6, rel=1e-3)


def test_tensor_parallel_serving_waits_for_two_all_reduces_per_layer() -> None:
    from kbq.lang.workload.formulas import tensor_parallel_allreduce

    # Llama 3.1 405B: 126 layers, hidden 16384; 16-bit activations; 8 x H100 SXM5 with 900 GB/s NVLink (both ways)
    # 2 x 126 x 16384 x 2 B = 8,257,536 B per token; ring: x 2 x 7/8; at 450 GB/s one way = 32.1 us
    ar = tensor_parallel_allreduce(layers=126, hidden=16384, gpus=8, link_gbps=900, activation_bytes=2)
    assert ar.seconds_per_token == pytest.approx(8_257_536 * 1.75 / 450e9, rel=1e-9)
    assert tensor_parallel_allreduce(layers=126, hidden=16384, gpus=1, link_gbps=900, activation_bytes=2).seconds_per_token == 0


def test_serving_on_nvlinked_gpus_counts_the_all_reduce_and_one_gpu_does_not(kb) -> None:
    many = kb.answer("speed of Llama 3.1 405B inference at fp8 on 8 x NVIDIA H100 SXM5 with fp8 kv cache using tensorrt-llm")
    one = kb.answer("speed of Llama 3.1 8B inference at fp8 on 1 x NVIDIA H200 SXM with fp8 kv cache using tensorrt-llm")
    compared = [str(r[3]) for r in many.rows if str(r[0]).startswith("estimate / measured (serving")]
    assert compared and all("tensor-parallel all-reduces 32.1 us per token" in f for f in compared)
    assert not any("all-reduce" in str(r[3]) for r in one.rows)


def test_exllamav2_decode_adds_its_time_per_step_to_the_weight_reads(kb) -> None:
    import re

    answer = kb.answer("speed of TinyLlama-1.1B-Chat-v1.0 inference at exl2 4.0bpw on rtx 4090 with 128 context using exllamav2")
    decode = row(answer, "decode")
    shown = r"\(([\d.]+) GB weights read per step \+ 1 x ([\d.]+) GB KV\) / \(80% bandwidth efficiency x 1008 GB/s"
    m = re.search(shown, str(decode[3]))
    assert m and "0.92 ms per step" in str(decode[3])
    step_gb = float(m.group(1)) + float(m.group(2))
    assert decode[1] == pytest.approx(1 / (step_gb / (0.80 * 1008) + 0.00092), rel=5e-3)
    # the ExLlamaV2 README: TinyLlama 1.1B EXL2 4.0 bpw on an RTX 4090, 643 tokens/s (the bytes alone would allow ~1,300)
    assert decode[1] == pytest.approx(643, rel=0.3)
    other = kb.answer("speed of TinyLlama-1.1B-Chat-v1.0 inference at exl2 4.0bpw on rtx 4090 with 128 context using vllm")
    assert "ms per step" not in str(row(other, "decode")[3])
