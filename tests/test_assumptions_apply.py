"""Explanations list only the assumptions that apply (issue 21, gap 6): the scenario's resolver
(kbq.lang.scenario) says when each applies; a several-GPU assumption (the sharding default) shows in
a ranking only when a shown candidate or tier needs more than one card."""

from __future__ import annotations

SHARDING = "ZeRO stage 3 / FSDP full sharding"


def _assumed(answer) -> list[str]:  # type: ignore[no-untyped-def]
    return [line for line in answer.explanation if line.startswith("assumed")]


def test_a_ranking_whose_candidates_all_need_one_card_does_not_assume_sharding(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.ask("gpu for resnet-18 training")
    at = answer.columns.index("cards_needed")
    assert all(r[at] in (1, None) for r in answer.rows)
    assumed = _assumed(answer)
    assert assumed, "the precision default applies and must be listed"
    assert not any(SHARDING in line for line in assumed), assumed


def test_a_ranking_with_multi_card_candidates_lists_the_sharding_default(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.ask("gpu for llama 3.1 70b training")
    at = answer.columns.index("cards_needed")
    assert any(isinstance(r[at], int) and r[at] > 1 for r in answer.rows)
    assert any(SHARDING in line for line in _assumed(answer))


def test_a_named_sharding_is_not_assumed_and_inference_never_shards(kb) -> None:  # type: ignore[no-untyped-def]
    named = kb.ask("how many h100 sxm5 for llama 3.1 8b training with zero 3")
    assert not any("ZeRO stage" in line for line in _assumed(named))
    inference = kb.ask("how many rtx 4090 for llama 3.1 70b inference")
    assert not any("ZeRO" in line or "recomputation" in line for line in _assumed(inference))
    # a CNN has no context or batch-of-sequences assumption
    cnn = kb.ask("memory for resnet-50 inference")
    assert not any("context" in line or "batch" in line for line in _assumed(cnn))
