"""Value and evidence: dated prices, derived value metrics, total cost of ownership, cloud
instances, MLPerf normalisation, measured-evidence rankings and area profiles. Expectations are
recomputed from the KB's own facts, so the tests check the rules, not fixed numbers."""

from __future__ import annotations

import pytest

PREFIXES = (
    "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/> "
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
)


def rows(kb, query: str) -> list[list[object]]:  # type: ignore[no-untyped-def]
    return kb.table(PREFIXES + query).rows


def col(answer, name: str) -> int:  # type: ignore[no-untyped-def]
    return answer.columns.index(name)


def new_card_prices(kb, gpu: str) -> list[tuple[str, float]]:  # type: ignore[no-untyped-def]
    found = rows(
        kb,
        f"SELECT ?d ?p WHERE {{ ?o kbq:priceOf <{gpu}> ; kbq:observedOn ?d ; kbq:priceUsd ?p ; kbq:priceKind ?k"
        " FILTER(?k != kb:UsedPrice) }",
    )
    return [(str(d), float(p)) for d, p in found]  # type: ignore[arg-type]


def price_as_of(prices: list[tuple[str, float]], before: str | None) -> float | None:
    valid = [(d, p) for d, p in prices if before is None or d < before]
    if not valid:
        return None
    latest = max(d for d, _ in valid)
    return min(p for d, p in valid if d == latest)


def test_current_price_is_the_lowest_new_card_price_on_the_latest_date(kb) -> None:
    answer = kb.answer("gpus where price > 0 order by price asc")
    checked = 0
    for row in answer.rows:
        prices = new_card_prices(kb, str(row[0]))
        assert row[col(answer, "price")] == pytest.approx(price_as_of(prices, None)), row[1]
        checked += 1
    assert checked >= 30


def test_as_of_picks_the_price_valid_then(kb) -> None:
    answer = kb.answer("gpus where price > 0 as of 2021 order by price asc")
    assert answer.rows
    for row in answer.rows:
        expected = price_as_of(new_card_prices(kb, str(row[0])), "2022-01-01")
        assert row[col(answer, "price")] == pytest.approx(expected), row[1]
    now = {r[1]: r[col(answer, "price")] for r in kb.answer("gpus where price > 0").rows}
    then = {r[1]: r[col(answer, "price")] for r in answer.rows}
    assert any(now.get(name) != value for name, value in then.items())  # some card's price changed since


def test_value_metrics_are_derived_from_price_power_and_rates(kb) -> None:
    answer = kb.answer("gpus where tensor_per_1000usd > 0 order by tensor_per_1000usd desc limit 10")
    for row in answer.rows:
        tensor, price = rows(kb, f"SELECT ?t ?p WHERE {{ <{row[0]}> kbq:tensorTflops ?t ; kbq:currentPrice ?p }}")[0]
        assert row[col(answer, "tensor_per_1000usd")] == pytest.approx(float(tensor) * 1000 / float(price), abs=1e-3)  # type: ignore[arg-type]
    ratio = kb.answer("gpus order by tensor / price desc limit 3")
    assert [r[1] for r in ratio.rows] == [r[1] for r in answer.rows[:3]]


def test_total_cost_of_ownership(kb) -> None:
    answer = kb.answer("cheapest gpu for resnet-50 training at $0.20/kwh with 4 years")
    row = answer.rows[0]
    price, tdp = row[col(answer, "price")], row[col(answer, "tdp")]
    cards = row[col(answer, "cards_needed")]
    expected = cards * (price + tdp / 1000 * 24 * 365 * 4 * 0.20)
    assert row[col(answer, "tco_usd")] == pytest.approx(expected, rel=1e-6)
    question = "gpu for resnet-50 training at $0.20/kwh with 4 years where price > 0"
    tcos = [r[col(answer, "tco_usd")] for r in kb.answer(question).rows]
    assert row[col(answer, "tco_usd")] == min(t for t in tcos if t is not None)


def test_instances_with_a_gpu_order_by_price(kb) -> None:
    answer = kb.answer("instances with h100 sxm5 order by price")
    assert answer.kind == "instances" and len(answer.rows) >= 3
    assert {r[col(answer, "gpu_model")] for r in answer.rows} == {"NVIDIA H100 SXM5"}
    prices = [r[col(answer, "price")] for r in answer.rows]
    assert prices == sorted(prices)
    family = kb.answer("instances with a100 order by price")
    assert {r[col(family, "gpu_model")] for r in family.rows} > {"NVIDIA A100 SXM4 40GB"}  # the family: 40 and 80 GB


def test_cheapest_instance_for_a_workload_fits_it(kb) -> None:
    answer = kb.answer("cheapest cloud instance for llama 3.1 70b inference at int4")
    row = answer.rows[0]
    assert row[col(answer, "fits")] is True
    everything = kb.answer("instances order by price")
    cheaper = [r for r in everything.rows if r[col(everything, "price")] < row[col(answer, "price")]]
    memory = {r[0]: r[col(everything, "gpu_memory")] for r in cheaper}
    assert all((memory[r[0]] or 0) < 40 for r in cheaper)  # every cheaper instance is too small for ~37 GB
    assert "usd_per_mtok" in answer.columns and any("estimate:" in e for e in answer.explanation)


def test_mlperf_results_are_normalised_per_accelerator(kb) -> None:
    found = rows(
        kb,
        "SELECT ?v ?n ?pa ?unit WHERE { ?r kbq:suite ?s ; kbq:resultValue ?v ; kbq:acceleratorCount ?n ; kbq:perAccelerator ?pa ;"
        " kbq:perAcceleratorUnit ?unit . ?s rdfs:label ?l FILTER(CONTAINS(?l, 'MLPerf')) }",
    )
    assert len(found) >= 40
    for value, count, per, unit in found:
        expected = float(value) * count if unit == "accelerator-minutes" else float(value) / count  # type: ignore[arg-type, operator]
        assert float(per) == pytest.approx(expected, rel=1e-3, abs=5e-4), (value, count, per, unit)  # type: ignore[arg-type]


def test_fastest_ranks_by_measured_evidence_and_names_it(kb) -> None:
    answer = kb.answer("fastest gpu for bert training limit 5")
    measured = [r[col(answer, "measured")] for r in answer.rows if r[col(answer, "measured")] is not None]
    assert measured == sorted(measured)  # accelerator-minutes: lower is faster
    assert any(e.startswith("decided by measured evidence") and "MLPerf" in e for e in answer.explanation)


@pytest.mark.parametrize(
    ("area", "profile"),
    [
        ("computer vision", "seed CNN profile"),
        ("time series forecasting", "seed RNN profile"),
        ("nlp", "seed Transformer profile"),
    ],
)
def test_an_area_ranks_by_its_primary_algorithms_profile(kb, area: str, profile: str) -> None:
    answer = kb.answer(f"gpu for {area} limit 3")
    assert any(line.startswith(f"profile: {profile}") for line in answer.explanation)
    assert not any("listed by name" in line for line in answer.explanation)


def test_requirements_lists_the_ranking_profile_first(kb) -> None:
    answer = kb.answer("requirements for image recognition")
    assert answer.rows[0][0] == "seed CNN profile" and "(ranks GPUs for it)" in answer.explanation[0]


def test_best_names_the_runner_up_in_other_segments(kb) -> None:
    answer = kb.answer("best gpu for gan")
    segments = [line for line in answer.explanation if line.startswith("best ") and " GPU: " in line]
    assert len(segments) >= 2  # a hobby question does not end at a data-centre part
    consumer = kb.answer("best consumer gpu for gan")
    assert consumer.rows[0][col(consumer, "segment")] == "consumer"
