"""The power-limit setting (issue 21, gap 2): 'at 280 w per card' lowers each card's draw in the
power-supply check; speed at a limit rests only on a sourced measurement of that card over the
limits it covers (else kbq says it is not estimated); a limit above a card's board power is an error."""

from __future__ import annotations

import pytest

from kbq.errors import KbqError

RTX3090 = "gpus where name = rtx 3090 with a 1600 w psu in a 4-card machine"


def test_a_limit_lowers_the_draw_in_the_psu_check(kb) -> None:  # type: ignore[no-untyped-def]
    # 1600 W x 0.8 - 300 W host = 980 W for 4 cards: 245 W each, under the RTX 3090's 350 W board power
    with pytest.raises(KbqError, match="power supply"):
        kb.ask(RTX3090)
    limited = kb.ask(RTX3090 + " at 240 w per card")
    assert [r[limited.columns.index("name")] for r in limited.rows] == ["GeForce RTX 3090"]
    assert any("at 240 W per card" in line for line in limited.explanation)
    with pytest.raises(KbqError, match="power supply"):
        kb.ask(RTX3090 + " at 250 w per card")  # 250 W > 245 W: still over


def test_speed_at_a_limit_is_the_measurement_or_not_estimated(kb) -> None:  # type: ignore[no-untyped-def]
    covered = kb.ask("how fast is llama 3.1 8b on rtx 3090 at 280 w per card")
    line = next(e for e in covered.explanation if e.startswith("power limit:"))
    assert "at least 95%" in line and "Puget" in line
    stock = kb.ask("how fast is llama 3.1 8b on rtx 3090")
    assert covered.numbers == stock.numbers  # the figures stay at stock power; the line says what is known
    below = kb.ask("how fast is llama 3.1 8b on rtx 3090 at 200 w per card")  # below the measured range
    assert any("not estimated" in e for e in below.explanation if e.startswith("power limit:"))
    other = kb.ask("how fast is llama 3.1 8b on rtx 4090 at 300 w per card")  # no measurement of the 4090
    assert any("not estimated" in e for e in other.explanation if e.startswith("power limit:"))


def test_a_limit_outside_the_cards_range_is_an_error(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KbqError, match="above GeForce RTX 3090's board power of 350 W"):
        kb.ask("how fast is llama 3.1 8b on rtx 3090 at 400 w per card")
    with pytest.raises(KbqError, match="power limit must be from 1"):
        kb.ask("gpus where name = rtx 3090 at 0 w per card")
