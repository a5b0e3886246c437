"""The software stack per card, graded (issue 21, gap 5): the newest release of each SDK in the
KB that lists the card (CUDA Toolkit and PyTorch's CUDA wheels by compute capability, ROCm by AMD's
official list), against that SDK's newest release; cards on no list or dropped are caveated, in the
tiers and beside the card that leads a ranking."""

from __future__ import annotations

from kbq.lang.tiers import Stack, software, weaker

KB = "https://kbq.dev/kb/"


def test_grades_read_as_supported_dropped_or_none() -> None:
    cuda13 = Stack("CUDA Toolkit", "CUDA Toolkit 13.0", 13000, "CUDA Toolkit 13.0", 13000)
    cuda12 = Stack("CUDA Toolkit", "CUDA Toolkit 12.9", 12009, "CUDA Toolkit 13.0", 13000)
    assert software([cuda13]).startswith("software: CUDA Toolkit 13.0 supports it") and not weaker([cuda13])
    assert "caveat" in software([cuda12]) and "dropped by CUDA Toolkit 13.0" in software([cuda12]) and weaker([cuda12])
    assert "no official support list" in software(None) and weaker(None) and weaker([])


def test_stacks_from_the_kb(kb) -> None:  # type: ignore[no-untyped-def]
    from kbq.lang.tiers import stacks

    def run(q: str):  # type: ignore[no-untyped-def]
        return kb.table(q)

    found = stacks(run, [KB + "RX7900XTX", KB + "RTX4090", KB + "TeslaP40", KB + "ArcB580", KB + "ArcA77016GB"])
    assert {x.sdk for x in found[KB + "RX7900XTX"]} == {"ROCm"} and not weaker(found[KB + "RX7900XTX"])
    assert {x.sdk for x in found[KB + "RTX4090"]} >= {"CUDA Toolkit", "PyTorch"} and not weaker(found[KB + "RTX4090"])
    p40 = {x.sdk: x for x in found[KB + "TeslaP40"]}
    assert not p40["CUDA Toolkit"].current  # Pascal: CUDA 13.0 dropped it
    assert KB + "ArcB580" not in found  # no Intel Extension for PyTorch release in the KB lists B-series Arc
    assert [x.sdk for x in found[KB + "ArcA77016GB"]] == ["Intel Extension for PyTorch"]


def test_a_ranking_says_the_leaders_stack_and_tiers_theirs(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.ask("best gpu under $1000")
    lead = answer.rows[0][answer.columns.index("name")]
    assert lead == "AMD Radeon RX 7900 XTX"
    assert f"{lead} leads the ranking; software: ROCm 6.4 supports it" in " ".join(answer.explanation)
    trained = kb.ask("gpu for resnet-50 training")
    assert all("software" in t.why for t in trained.tiers if not t.tier.startswith("cloud"))
    line = next(e for e in trained.explanation if "leads the ranking" in e)
    assert "software" in line
