"""One meaning of 'fits' (issue 21, gap 1): `verdict.fits` in JSON, /ask and the library is
kbq.lang.evaluate's Evaluation.fits, true only for status 'fits'; 'tight' (within the raw memory,
over the usable share) is not a fit, so a fit question, `--check` and 'how many' never disagree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kbq.lang import decision
from kbq.lang.evaluate import Accelerator, Evaluation, evaluate
from kbq.lang.evaluate.split import Footprint, Layout
from kbq.lang.workload.formulas import Line

ROOT = Path(__file__).resolve().parent.parent
# Llama 3.1 8B at FP16 with a 48k context: 23.2 GB, within the RTX 4090's 24 GB but over its 21.6 usable
TIGHT = "does llama 3.1 8b fit on rtx 4090 with 48k context"
HOW_MANY = "how many rtx 4090 for llama 3.1 8b inference with 48k context"


def _evaluation(verdict: str, count: int = 1) -> Evaluation:
    card = Accelerator("card", "urn:card", 24.0, None, {}, None, None)
    return Evaluation(card, count, 2, 23.2, 23.2, 24.0, 21.6, 0.8, verdict, "one GPU", "")


@pytest.mark.parametrize("word", ["fits", "tight", "does not fit"])
def test_the_verdict_record_reads_fits_from_the_evaluation(word: str) -> None:
    ev = _evaluation(word)
    record = decision.verdict(ev, "card")
    assert record["status"] == word and record["fits"] is ev.fits is (word == "fits")
    assert record["gpus"] == 1 and record["usable_gb"] == 21.6 and record["headroom_gb"] == pytest.approx(0.8)
    cannot = decision.verdict(ev, "card", status="cannot run")
    assert cannot["status"] == "cannot run" and cannot["fits"] is False
    with pytest.raises(ValueError, match="only 'cannot run'"):
        decision.verdict(ev, "card", status="fits")  # a status is never written beside the evaluation


def test_tight_is_within_raw_memory_and_over_the_usable_share() -> None:
    from kbq.lang.evaluate import verdict

    assert verdict(23.2, 24.0, 0.9) == "tight"
    assert verdict(21.6, 24.0, 0.9) == "fits"
    assert verdict(24.1, 24.0, 0.9) == "does not fit"


def test_a_tight_fit_is_not_a_fit_for_json_library_check_and_how_many(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.ask(TIGHT)
    assert answer.verdict is not None
    assert answer.verdict.status == "tight" and answer.verdict.fits is False
    assert answer.verdict.per_gpu_gb > answer.verdict.usable_gb and answer.verdict.per_gpu_gb <= answer.verdict.capacity_gb
    many = kb.ask(HOW_MANY)
    assert many.verdict is not None and many.verdict.gpus > 1 and many.verdict.fits is True
    # the count 'how many' answers fits when asked as a fit question
    at_that = kb.ask(TIGHT.replace("on rtx 4090", f"on {many.verdict.gpus} x rtx 4090"))
    assert at_that.verdict is not None and at_that.verdict.fits is True and at_that.verdict.status == "fits"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    run = subprocess.run(
        [sys.executable, "-m", "kbq", TIGHT, "--check"], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    assert run.returncode == 4, run.stderr
    assert run.stdout.startswith("tight: ")


@pytest.mark.parametrize("need", [10.0, 21.6, 22.0, 24.0, 30.0])
def test_the_record_of_a_real_evaluation_has_its_fits(need: float) -> None:
    card = Accelerator("card", "urn:card", 24.0, None, {}, None, None)
    fp = Footprint((Line("weights", need, "", ""),), Layout(training=False, heads=32, kv_heads=8, layers=32))
    ev = evaluate(fp, card, 1, usable_share=0.9)
    assert decision.verdict(ev, "card")["fits"] is ev.fits is (ev.verdict == "fits")
    assert ev.verdict == ("fits" if need <= 21.6 else "tight" if need <= 24.0 else "does not fit")
