"""The cloud option among a ranking's tiers (issue 21, gap 3): the cheapest cloud instance that
holds the workload, by the same plan and evaluation as 'cheapest instance for ...', with its hourly
rate, provider and the rate's date."""

from __future__ import annotations

import pytest

RANKING = "gpu for llama 3.1 8b inference"
INSTANCES = "cheapest instance for llama 3.1 8b inference"


def _cloud(answer):  # type: ignore[no-untyped-def]
    found = [t for t in answer.tiers if t.tier.startswith("cloud")]
    assert len(found) == 1, [t.tier for t in answer.tiers]
    return found[0]


def test_the_cloud_tier_is_the_instances_forms_first_answer(kb) -> None:  # type: ignore[no-untyped-def]
    tier = _cloud(kb.ask(RANKING))
    inst = kb.ask(INSTANCES)
    col = {c: i for i, c in enumerate(inst.columns)}
    first = inst.rows[0]
    assert tier.instance == first[col["name"]] and tier.provider == first[col["provider"]]
    assert tier.gpu == first[col["gpu_model"]] and tier.count == first[col["gpus"]]
    assert tier.price is not None and tier.price.per == "hour" and tier.price.kind == "on-demand rate"
    assert tier.price.usd == pytest.approx(first[col["price"]])
    assert tier.price.date and tier.price.date[:4].isdigit()
    # it is the lowest rate among the instances the evaluation kept (those that hold the model)
    rates = [r[col["price"]] for r in inst.rows if r[col["price"]] is not None]
    assert tier.price.usd == min(rates)


def test_a_bigger_model_rents_a_bigger_instance(kb) -> None:  # type: ignore[no-untyped-def]
    small = _cloud(kb.ask(RANKING))
    big = _cloud(kb.ask("gpu for llama 3.1 70b inference"))
    assert big.price is not None and small.price is not None and big.price.usd > small.price.usd
    inst = kb.ask("cheapest instance for llama 3.1 70b inference")
    assert big.instance == inst.rows[0][inst.columns.index("name")]


def test_the_terminal_shows_the_hourly_rate_with_cents(kb) -> None:  # type: ignore[no-untyped-def]
    from kbq import render

    text = render.answer(kb.answer(RANKING), "table", width=80, color=False, explain=False)
    line = next(x for x in text.splitlines() if x.startswith("cloud"))
    assert "/h on-demand rate" in line
