"""The PSU check reads the maker's recommended system power where the KB has it (issue 21, point 4):
NVIDIA recommends a 1000 W supply for an RTX 5090, which the fixed headroom formula alone rejected
(575 W board power > 1000 W x 0.8 - 300 W)."""

from __future__ import annotations

import pytest

from kbq.errors import NoResultError


def names(kb, question: str) -> set[str]:  # type: ignore[no-untyped-def]
    try:
        answer = kb.answer(question)
    except NoResultError:
        return set()
    return {str(r[answer.columns.index("name")]) for r in answer.rows}


@pytest.mark.parametrize(
    ("gpu", "psu", "cards", "kept"),
    [
        ("rtx 5090", 1000, 1, True),  # the maker's figure: 1000 W
        ("rtx 5090", 900, 1, False),
        ("rtx 5090", 1600, 2, True),  # 1000 + 1 x 575 = 1575 W
        ("rtx 5090", 1500, 2, False),
        ("rtx 4090", 850, 1, True),  # 850 W
        ("rtx 4090", 800, 1, False),
        ("rtx 3090", 1000, 1, True),  # no maker figure in the KB: 350 W <= 1000 x 0.8 - 300
        ("rtx 3090", 800, 1, False),  # 350 W > 800 x 0.8 - 300 = 340 W
    ],
)
def test_psu_check(kb, gpu: str, psu: int, cards: int, kept: bool) -> None:  # type: ignore[no-untyped-def]
    chassis = f" in a {cards}-card workstation" if cards > 1 else ""
    found = names(kb, f"gpus where name = {gpu}{chassis} with a {psu} w psu")
    assert bool(found) is kept, (gpu, psu, cards, found)


def test_the_maker_figure_is_sourced_and_described(kb) -> None:  # type: ignore[no-untyped-def]
    rows = {r[0]: r for r in kb.answer("describe rtx 5090").rows}
    assert rows["recommended system power"][1] == 1000
    assert str(rows["source of recommended system power"][1]).startswith("Tom's Hardware: ")
