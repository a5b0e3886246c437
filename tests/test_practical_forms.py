"""The ways practitioners phrase the commonest questions: 'A vs B', 'compare A and B for X',
'can GPU run MODEL', 'does MODEL fit on GPU', 'how fast is MODEL on GPU'. Each is checked
against the longer form it means, so a change to either shows here."""

from __future__ import annotations

import re

import pytest

from kbq.errors import KbqError


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.kind == b.kind and a.columns == b.columns and a.rows == b.rows


def test_versus_without_compare_is_a_comparison(kb) -> None:  # type: ignore[no-untyped-def]
    _same(kb.answer("rtx 4090 vs rtx 3090"), kb.answer("compare rtx 4090 vs rtx 3090"))
    _same(kb.answer("a100 versus h100 sxm5"), kb.answer("compare a100 versus h100 sxm5"))


def test_compare_for_a_workload_is_its_ranking_kept_to_the_named_gpus(kb) -> None:  # type: ignore[no-untyped-def]
    compared = kb.answer("compare rtx 3090 and rtx 4090 for llama 3 8b inference")
    ranked = kb.answer("gpus for llama 3 8b inference where name in (rtx 3090, rtx 4090)")
    assert compared.rows == ranked.rows
    names = [row[compared.columns.index("name")] for row in compared.rows]
    assert sorted(names) == ["GeForce RTX 3090", "GeForce RTX 4090"]
    assert "needed_gb" in compared.columns  # memory fit is part of the comparison
    scores = [row[compared.columns.index("score")] for row in compared.rows]
    assert scores == sorted(scores, reverse=True)
    _same(kb.answer("rtx 3090 vs rtx 4090 for llama 3 8b inference"), compared)


def test_compare_for_a_workload_needs_two_names(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KbqError, match="compare needs two GPUs"):
        kb.answer("compare rtx 4090 for bert")


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("can rtx 3060 12gb run llama 3 8b", "memory for llama 3 8b on rtx 3060 12gb"),
        ("can an rtx 3060 12gb run llama 3 8b at q4_k_m", "memory for llama 3 8b at q4_k_m on rtx 3060 12gb"),
        ("does llama 3.1 70b fit on 2 x rtx 3090", "memory for llama 3.1 70b on 2 x rtx 3090"),
        ("will mixtral 8x7b fit in 2 x rtx 4090 at q4_k_m", "memory for mixtral 8x7b on 2 x rtx 4090 at q4_k_m"),
    ],
)
def test_fit_questions_are_memory_questions_on_that_hardware(kb, short: str, long: str) -> None:  # type: ignore[no-untyped-def]
    a, b = kb.answer(short), kb.answer(long)
    _same(a, b)
    assert a.explanation[0] == b.explanation[0] and a.explanation[0].startswith("verdict: ")


def test_how_fast_is_a_speed_question(kb) -> None:  # type: ignore[no-untyped-def]
    _same(kb.answer("how fast is llama 3 8b on rtx 4090"), kb.answer("speed of llama 3 8b on rtx 4090"))


def _verdict(kb, question: str) -> str:  # type: ignore[no-untyped-def]
    line = kb.answer(question).explanation[0]
    found = re.match(r"verdict: (fits|tight|does not fit) on", line)
    assert found, line
    return found.group(1)


def test_a_model_that_does_not_fit_names_the_largest_format_that_does(kb) -> None:  # type: ignore[no-untyped-def]
    fits_q8 = kb.answer("can rtx 3060 12gb run llama 3 8b").explanation[1]
    assert fits_q8.startswith("fits with weight-only quantisation: Q8_0 needs ")  # Q8_0: 8.5 bits x 8B = 8.5 GB + KV
    answer = kb.answer("does llama 3.1 70b fit on 2 x rtx 3090")
    assert answer.explanation[0].startswith("verdict: does not fit")
    line = answer.explanation[1]
    found = re.match(r"fits with weight-only quantisation: (\S+) needs ([\d.]+) GB per GPU", line)
    assert found, line
    label = found.group(1)
    # that format fits when asked for, and every weight-only format with more bits per weight does not
    assert _verdict(kb, f"memory for llama 3.1 70b at {label} on 2 x rtx 3090") == "fits"
    bits = {
        str(r[0]): float(r[1])  # type: ignore[arg-type]
        for r in kb.table(
            "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
            "SELECT ?l ?b WHERE { ?f kbq:bitsPerWeight ?b ; kbq:computePrecision <https://kbq.dev/kb/FP16> ; rdfs:label ?l }"
        ).rows
    }
    larger = [name for name, b in bits.items() if b > bits[label] and name != "FP16"]
    assert len(larger) >= 2  # so the loop below can fail
    for name in larger:
        assert _verdict(kb, f"memory for llama 3.1 70b at {name.lower()} on 2 x rtx 3090") != "fits", name


def test_no_format_line_when_nothing_fits_or_a_precision_was_named(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("does llama 3.1 405b fit on rtx 4090")
    assert answer.explanation[1].startswith("no weight-only format in the KB makes it fit (the smallest: ")
    named = kb.answer("does llama 3.1 70b fit on rtx 4090 at fp16")
    assert not any("weight-only quantisation" in line for line in named.explanation)


def test_with_a_bare_size_is_a_memory_floor(kb) -> None:  # type: ignore[no-untyped-def]
    a, b = kb.answer("cheapest gpu with 24gb"), kb.answer("cheapest gpu where memory >= 24gb")
    assert a.rows == b.rows and a.rows
    with pytest.raises(KbqError, match="bandwidth or link_bandwidth"):
        kb.answer("gpus with 2tb/s")  # two keys share the unit: kbq asks which


def _how_many(kb, question: str) -> tuple[int, float, list[str]]:  # type: ignore[no-untyped-def]
    answer = kb.answer(question)
    values = {row[0]: row[1] for row in answer.rows}
    return int(values["GPUs needed"]), float(values["per-GPU need (GB)"]), answer.explanation  # type: ignore[arg-type]


def test_how_many_for_training_shards_and_recomputes_by_default(kb) -> None:  # type: ignore[no-untyped-def]
    n, need, explanation = _how_many(kb, "how many h100 sxm5 for llama 3.1 70b training")
    assert any(line.startswith("assumed: ZeRO stage 3 / FSDP full sharding") for line in explanation)
    assert any(line.startswith("assumed: activations with full recomputation: training's usual") for line in explanation)
    # the same count follows from the memory form with those settings named ...
    memory = kb.answer(f"memory for llama 3.1 70b training with zero 3 gradient checkpointing on {n} x h100 sxm5")
    assert memory.explanation[0].startswith("verdict: fits") and abs(memory.rows[-1][2] - need) < 0.01
    # ... and one GPU fewer does not fit
    fewer = kb.answer(f"memory for llama 3.1 70b training with zero 3 gradient checkpointing on {n - 1} x h100 sxm5")
    assert not fewer.explanation[0].startswith("verdict: fits")
    # named settings are kept: selective recomputation keeps 4k-token activations on every GPU, which 80 GB cannot hold
    with pytest.raises(KbqError, match="no number of NVIDIA H100 SXM5 holds it"):
        kb.answer("how many h100 sxm5 for llama 3.1 70b training with selective recompute")


def test_a_value_ranking_is_not_decided_by_an_imputed_figure(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("best value gpu for resnet-50 training under $2000 limit 50")
    tensor = answer.columns.index("tensor")
    known = [row[tensor] is not None for row in answer.rows]
    assert known[0] and False in known  # an unknown tensor figure is among the candidates (so this can fail)
    assert known == sorted(known, reverse=True)  # and every such card comes after the known ones


def _native(kb, precision: str) -> set[str]:  # type: ignore[no-untyped-def]
    rows = kb.table(
        "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
        f"SELECT ?l WHERE {{ ?g kbq:nativePrecision <https://kbq.dev/kb/{precision}> ; rdfs:label ?l }}"
    ).rows
    return {str(r[0]) for r in rows}


def test_instances_at_a_precision_keep_gpus_that_run_it_and_say_how(kb) -> None:  # type: ignore[no-untyped-def]
    fp8 = kb.answer("instances for llama 3.1 70b inference at fp8")
    gpu, path = fp8.columns.index("gpu_model"), fp8.columns.index("precision_path")
    native = _native(kb, "FP8")
    paths = {(row[gpu] in native, row[path]) for row in fp8.rows}
    assert (True, "native FP8") in paths and any(not is_native for is_native, _ in paths)  # both kinds present
    for is_native, text in paths:
        assert text.startswith("native") == is_native
    fp4 = kb.answer("instances for llama 3.1 70b inference at fp4")
    assert fp4.rows and {row[fp4.columns.index("gpu_model")] for row in fp4.rows} <= _native(kb, "FP4")


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("price of rtx 4090", "gpus where name in (rtx 4090) order by price"),
        ("memory of a100", "gpus where name in (a100) order by memory"),
        ("bandwidth of h100 sxm5", "gpus where name = h100 sxm5 order by bandwidth"),
    ],
)
def test_a_key_of_a_gpu_is_a_filter_on_its_name(kb, short: str, long: str) -> None:  # type: ignore[no-untyped-def]
    a, b = kb.answer(short), kb.answer(long)
    assert a.rows and a.rows == b.rows and a.columns == b.columns


def test_memory_of_a_model_is_still_the_memory_form(kb) -> None:  # type: ignore[no-untyped-def]
    assert kb.answer("memory of llama 3 8b").kind == "memory"


def test_a_size_alone_names_the_models_of_that_size(kb) -> None:  # type: ignore[no-untyped-def]
    # a size alone is a generic dense decoder (issue 18), and the answer names the KB's models of that size
    answer = kb.answer("best gpu for 70b inference")
    assert answer.rows and any("70B dense decoder" in line for line in answer.explanation)
    line = next(line for line in answer.explanation if line.startswith("the KB's models of about this size: "))
    named = line.removeprefix("the KB's models of about this size: ").split(" (ask")[0].split(", ")
    assert "Llama 3.1 70B" in named
    assert all(("70B" in m or "72B" in m) and "8B" not in m and "405B" not in m for m in named)
    for model in named:
        assert kb.answer(f"best gpu for {model} inference").rows


@pytest.mark.parametrize(
    ("workload", "sdks"),
    [("lstm", {"cuDNN"}), ("gru", {"cuDNN"}), ("cnn", {"cuDNN", "cuFFT", "cuBLAS"}), ("bert", {"cuDNN"})],
)
def test_sdks_per_workload(kb, workload: str, sdks: set[str]) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(f"sdks for {workload}")
    assert sdks <= {row[answer.columns.index("name")] for row in answer.rows}


def test_fewest_cards_before_verified_placement(kb) -> None:  # type: ignore[no-untyped-def]
    # every card (no limit): the verified boards sit past the first 40 in the larger catalog
    answer = kb.answer("gpus for llama 3 8b lora with 1k context on a 4-gpu workstation with a 1600 w psu")
    cards, status = answer.columns.index("cards_needed"), answer.columns.index("status")
    needed = [row[cards] for row in answer.rows]
    assert needed == sorted(needed) and len(set(needed)) > 1
    verified = [row[status] == "verified" for row in answer.rows]
    assert True in verified and False in verified  # both kinds are present, so the order is tested
    for n in set(needed):  # within one card count, verified rows come first
        group = [v for c, v in zip(needed, verified, strict=True) if c == n]
        assert group == sorted(group, reverse=True)


def test_multi_gpu_decode_shows_the_layer_split_rate(kb) -> None:  # type: ignore[no-untyped-def]
    # llama.cpp (the default speed backend) splits layers: its headline is one GPU's rate, the tensor-parallel
    # figure an upper bound; a tensor-parallel engine ('using vllm') heads with both GPUs' bandwidth
    two = {row[0]: row[1] for row in kb.answer("speed of llama 3.1 70b at q4_k_m on 2 x rtx 3090").rows}
    one = {row[0]: row[1] for row in kb.answer("speed of llama 3.1 70b at q4_k_m on rtx 3090").rows}
    tp = {row[0]: row[1] for row in kb.answer("speed of llama 3.1 70b at q4_k_m on 2 x rtx 3090 using vllm").rows}
    assert two["decode"] == one["decode"]  # a layer split reads one GPU at a time
    assert abs(two["decode, tensor parallel (upper bound)"] - 2 * one["decode"]) < 0.2
    assert tp["decode, layer split"] < tp["decode"]
    assert "decode, layer split" not in one and "decode, tensor parallel (upper bound)" not in one


def test_nf4_names_one_format_and_whisper_asked_bare_means_running_it(kb) -> None:  # type: ignore[no-untyped-def]
    assert "(NF4 weights" in kb.answer("memory for llama 3.1 8b at nf4").explanation[1]
    assert "inference of Whisper large-v3" in kb.answer("memory for whisper large-v3").explanation[1]
    assert "training of ResNet-50" in kb.answer("memory for resnet-50").explanation[1]  # a CNN asked bare is still trained


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("cheapest gpu to run llama 3.1 8b", "cheapest gpu for llama 3.1 8b"),
        ("cheapest gpu that can run llama 3.1 70b at q4_k_m", "cheapest gpu for llama 3.1 70b at q4_k_m"),
    ],
)
def test_to_run_means_for(kb, short: str, long: str) -> None:  # type: ignore[no-untyped-def]
    _same(kb.answer(short), kb.answer(long))


def test_is_good_for_is_why_with_the_memory_fit(kb) -> None:  # type: ignore[no-untyped-def]
    a = kb.answer("is an rtx 4060 ti 16gb good for llama 3 8b inference")
    _same(a, kb.answer("why rtx 4060 ti 16gb for llama 3 8b inference"))
    fit = a.explanation[1]
    # Llama 3 8B: 8.03e9 parameters x 2 B + KV + runtime = 17.4 GB; 16 GiB (17.2 GB) x 0.9 < 17.4
    assert fit.startswith("memory fit: 17.4 GB needed; GeForce RTX 4060 Ti 16GB needs 2 card(s)"), fit
