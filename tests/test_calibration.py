"""The calibration set (kb/calibration.ttl): kbq's answers against published measurements.

Every kind's share of rows within target must stay at or above the floor recorded in the KB
(kbq:shareFloor), so a change that makes estimates worse fails here; bench/compare_estimates.py
writes the full table (bench/results/estimates.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from calibration import Kind, Row, kinds, rows, summary


@pytest.fixture(scope="module")
def calibration(kb):  # type: ignore[no-untyped-def]
    return kinds(kb), rows(kb)


def test_every_kind_stays_at_or_above_its_recorded_floor(calibration) -> None:  # type: ignore[no-untyped-def]
    all_kinds, table = calibration
    assert set(all_kinds) == {"CalMemory", "CalDecode", "CalPrefill", "CalFineTuneMemory", "CalServing", "CalTraining"}
    per_kind = summary(table, all_kinds)
    low = {
        name: f"{every.share:.0%} < floor {all_kinds[name].floor:.0%}"
        for name, (every, _fitted, _held) in per_kind.items()
        if every.share + 1e-9 < all_kinds[name].floor
    }
    assert not low, low


def test_the_set_is_large_and_keeps_a_third_out_of_the_fitting(calibration) -> None:  # type: ignore[no-untyped-def]
    _kinds, table = calibration
    assert len(table) >= 120
    held = sum(r.held_out for r in table)
    assert 0.25 <= held / len(table) <= 0.4
    assert all(r.source for r in table), [r.what for r in table if not r.source]


def test_a_target_can_be_missed() -> None:
    relative = Kind("CalDecode", "decode speed", 0.30, False, 0.0)
    factor = Kind("CalTraining", "training time", 1.5, True, 0.0)
    assert relative.within(1.29) and not relative.within(1.31) and not relative.within(0.69)
    assert factor.within(0.67) and not factor.within(0.66) and factor.within(1.5) and not factor.within(1.51)
    assert not relative.within(None)  # a question kbq cannot answer is a miss
    unanswered = Row("CalDecode", "x", "q", 10.0, "tokens/s", None, False, "s")
    assert unanswered.ratio is None
