"""The answer as a decision in a terminal and for programs (issue 21).

Every README and reference example, rendered as the command renders it at COLUMNS=80, has no line
wider than 80 and starts with its headline; the JSON of each form carries the fields programs read
(headline, verdict, recommended, numbers); `--check` exits 4 on 'does not fit' or no candidate;
NO_COLOR / FORCE_COLOR decide colour in a pipe.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_in_process
from test_cli import readme_commands

from kbq import render
from kbq.errors import KbqError
from kbq.lang import reference

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")
QUESTIONS = list(
    dict.fromkeys(
        [a[0] for a in readme_commands()] + [e for s in reference.sections() for e in s.examples if not e.startswith("kbq ")]
    )
)
FIT = "does llama 3.1 70b fit on rtx 4090"
FITS = "does llama 3.1 8b fit on rtx 4090"
RANKING = "gpu for llama 3.1 8b inference"
SPEED = "how fast is llama 3.1 8b on rtx 4090"
VERDICT_FIELDS = {"status", "fits", "gpu", "gpus", "per_gpu_gb", "capacity_gb", "usable_gb", "headroom_gb"}


def kbq(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command in this process, its output a pipe (cli_helpers), without the caller's COLUMNS,
    NO_COLOR and FORCE_COLOR; `env` sets them."""
    return run_in_process(*args, cwd=ROOT, env={"COLUMNS": None, "NO_COLOR": None, "FORCE_COLOR": None, **env})


def kbq_subprocess(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The same through a real process and a real pipe (a smoke test of the in-process runs)."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "kbq", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env={**base, **env}
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_example_fits_80_columns_and_starts_with_its_headline(kb, question: str) -> None:  # type: ignore[no-untyped-def]
    try:
        result = kb.answer(question)
    except KbqError:
        pytest.skip("an error example: its message is checked by test_reference")
    assert result.headline, f"no headline for {question!r}"
    for fmt in ("table", "chart"):
        text = render.answer(result, fmt, width=80, color=False, explain=False)
        too_wide = [line for line in text.splitlines() if len(line) > 80]
        assert not too_wide, f"{question!r} ({fmt}): {len(too_wide)} line(s) over 80 columns, e.g. {too_wide[0]!r}"
        first = text.split("\n\n", 1)[0]
        assert one_line(first) == one_line(result.headline), f"{question!r} ({fmt}) does not start with its headline"


def test_the_command_at_columns_80_and_60() -> None:
    for columns in (80, 60):
        run = kbq(RANKING, COLUMNS=str(columns))
        assert run.returncode == 0, run.stderr
        assert max(len(line) for line in run.stdout.splitlines()) <= columns
        assert run.stdout.startswith("best value for Llama 3.1 8B: ")
    default = kbq_subprocess(FIT)  # a real pipe without COLUMNS: 80
    assert max(len(line) for line in default.stdout.splitlines()) <= 80
    assert default.stdout == kbq(FIT).stdout  # the in-process runs are what the command prints


def test_formula_and_source_columns_are_folded_into_notes() -> None:
    text = kbq(FIT).stdout
    header = next(line for line in text.splitlines() if line.startswith("part"))
    assert "formula" not in header and "source" not in header
    assert "\nhow:\n" in text and "\nsources:\n" in text
    assert re.search(r"^  weights: \(?70,[0-9,]+ parameters[^[]*\[1\]$", text, re.M)
    assert re.search(r"^  \[1\] \S", text, re.M)


def test_colour_follows_no_color_and_force_color() -> None:
    assert "\x1b[" not in kbq(FIT).stdout  # a pipe: plain
    forced = kbq(FIT, FORCE_COLOR="1").stdout
    assert "\x1b[1m" in forced  # the headline in bold
    assert ANSI.sub("", forced) == kbq(FIT).stdout
    assert "\x1b[" not in kbq(FIT, FORCE_COLOR="1", NO_COLOR="1").stdout


def test_json_of_a_fit_answer_carries_the_verdict() -> None:
    data = json.loads(kbq(FIT, "--format", "json").stdout)
    verdict = data["verdict"]
    assert set(verdict) == VERDICT_FIELDS
    assert verdict["status"] == "does not fit" and verdict["fits"] is False
    assert verdict["gpu"] == "GeForce RTX 4090" and verdict["gpus"] == 1
    assert verdict["capacity_gb"] == pytest.approx(24 * 2**30 / 1e9, abs=0.01)  # 24 GiB (GDDR capacities are binary)
    # the verdict's numbers are the table's: the total per GPU and the card's memory
    total = next(r for r in data["rows"] if r[0] == "total")
    assert verdict["per_gpu_gb"] == pytest.approx(total[2], abs=0.01)
    assert verdict["headroom_gb"] == pytest.approx(verdict["capacity_gb"] - total[2], abs=0.01)
    assert verdict["usable_gb"] < verdict["capacity_gb"]
    assert data["headline"].startswith("does not fit: ")
    fits = json.loads(kbq(FITS, "--format", "json").stdout)["verdict"]
    assert fits["status"] == "fits" and fits["fits"] is True and fits["headroom_gb"] > 0


def test_json_of_a_ranking_names_the_recommendation_and_its_tiers() -> None:
    data = json.loads(kbq(RANKING, "--format", "json").stdout)
    at = {c: i for i, c in enumerate(data["columns"])}
    rows = {r[at["name"]]: r for r in data["rows"]}
    tiers = {t["tier"]: t for t in data["tiers"]}
    for tier in data["tiers"]:
        if tier["tier"].startswith("cloud"):  # an instance's hourly rate (tests/test_cloud_tier.py)
            continue
        assert set(tier) == {"tier", "gpu", "count", "price", "why"}
        assert tier["gpu"] in rows and rows[tier["gpu"]][at["cards_needed"]] == tier["count"] <= 4
        if tier["price"] is not None:
            assert {"usd", "kind", "date"} <= set(tier["price"])
            assert tier["price"]["usd"] == pytest.approx(tier["count"] * tier["price"]["per_card_usd"])
    # the answer is right-sized: the best value, not the fastest data-centre part
    assert data["recommended"] == tiers["best value"]["gpu"] != tiers["fastest"]["gpu"]
    assert tiers["fastest"]["gpu"] == data["rows"][0][at["name"]]
    assert data["headline"].startswith(f"best value for Llama 3.1 8B: {data['recommended']} ($")
    new = [t for t in data["tiers"] if t["tier"].endswith("(new)") and t["price"]]
    assert tiers["cheapest (new)"]["price"]["usd"] == min(t["price"]["usd"] for t in new)
    assert tiers["cheapest (used)"]["price"]["kind"] == "used price"
    assert {"cheapest consumer (new)", "fastest data center", "best value workstation"} <= set(tiers)
    cheapest = json.loads(kbq("cheapest gpu to run llama 3.1 8b", "--format", "json").stdout)
    assert cheapest["recommended"] == {t["tier"]: t for t in cheapest["tiers"]}["cheapest (new)"]["gpu"]


def test_json_of_a_speed_answer_names_its_numbers() -> None:
    data = json.loads(kbq(SPEED, "--format", "json").stdout)
    rows = {r[0]: r[1] for r in data["rows"]}
    assert data["numbers"]["decode_tokens_per_s"] == rows["decode"]
    assert data["numbers"]["prefill_tokens_per_s"] == rows["prefill"]
    assert data["verdict"]["fits"] is True  # 8B at FP16 on a 24 GB card


def test_library_answer_and_estimate_carry_the_decision(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.ask(FIT)
    assert answer.verdict is not None and answer.verdict.fits is False and answer.headline.startswith("does not fit")
    estimate = kb.memory("llama 3.1 70b", gpu="rtx 4090")
    assert estimate.verdict == answer.verdict and estimate.headline == answer.headline


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ([FIT, "--check"], 4),
        ([FITS, "--check"], 0),
        ([FIT], 0),  # without --check, 'does not fit' is an answer like any other
        (["gpus where memory > 1000gb", "--check"], 4),  # no candidate remains
        (["gpus where memory > 1000gb"], 1),
        ([RANKING, "--check"], 0),
    ],
)
def test_check_exit_codes(args: list[str], code: int) -> None:
    assert kbq(*args).returncode == code


def test_exit_codes_are_documented_in_the_reference() -> None:
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    assert (
        "- `4`: with --check only: the verdict's fits is false ('tight', 'does not fit', 'cannot run'), or no candidate remains"
        in text
    )


def test_help_fits_80_columns_and_leads_with_todays_questions() -> None:
    text = kbq("--help").stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    examples = text.split("questions people ask:", 1)[1]
    first = re.findall(r'kbq "([^"]+)"', examples)[:4]
    assert first[0].startswith("does ") and any(q.startswith("how fast") for q in first)
    for question in re.findall(r'kbq "([^"]+)"', examples):
        assert kbq(question).returncode == 0, question  # every example runs


def test_describe_has_units_and_the_essentials_first(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("describe rtx 4090")
    assert answer.columns == ["attribute", "value", "unit"]
    first = [r[0] for r in answer.rows[:3]]
    assert first == ["memory", "memory bandwidth", "tensor throughput (FP16/BF16, FP32 accumulate)"]
    rows = {r[0]: r for r in answer.rows}
    assert rows["memory"][1:] == [24, "GB"] and rows["TDP"][2] == "W"
    price = str(rows["price"][1])
    assert re.fullmatch(r"\$[\d,]+ (street price|launch MSRP|list price|reported price) \d{4}-\d{2}-\d{2}", price)
    attributes = [r[0] for r in answer.rows]
    measured = [i for i, a in enumerate(attributes) if a == "measured"]
    assert measured and measured == list(range(measured[0], len(attributes)))  # grouped at the end
    assert attributes.index("TDP") < attributes.index("vendor")  # power among the essentials
    assert answer.headline.startswith("GeForce RTX 4090: 24 GB, 1008 GB/s, 165.2 TFLOPS tensor, $")


def test_compare_has_ratios_prices_power_and_measured_results(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("compare rtx 4090 vs rtx 3090")
    rows = {r[0]: r for r in answer.rows}
    assert rows["bandwidth (GB/s)"][3] == pytest.approx(round(1008 / rows["bandwidth (GB/s)"][2], 2))
    assert rows["tdp (W)"][3] == pytest.approx(round(450 / rows["tdp (W)"][2], 2))
    assert rows["compute_capability"][3] is None  # no ratio of versions
    assert str(rows["price (kind, date)"][1]).startswith("$")
    assert all(isinstance(v, int) for v in rows["measured results"][1:3])
    assert answer.headline.startswith("GeForce RTX 4090 vs GeForce RTX 3090: 1x memory, ")


def test_tiers_show_the_software_stack_and_the_thermal_caveat(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("gpu for llama 3.1 70b inference at int4 on a 4-gpu workstation")
    at = {c: i for i, c in enumerate(answer.columns)}
    cooling = {str(r[at["name"]]): str(r[at["cooling"]] or "") for r in answer.rows}
    for tier in answer.tiers:
        if tier["tier"].startswith("cloud"):  # a rented instance: tests/test_cloud_tier.py
            continue
        assert "software: " in tier["why"] or "software (caveat): " in tier["why"]
        open_air = cooling[tier["gpu"]] == "open-air"
        assert ("open-air cooler in a 4-card box" in tier["why"]) is open_air, tier
        assert tier["count"] <= 4
    amd = [t for t in answer.tiers if "Radeon" in t["gpu"]]
    assert amd and all("software: ROCm" in t["why"] for t in amd)


def test_best_without_a_workload_ranks_for_deep_learning_in_general(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("best gpu under $1000")
    assert "score" in answer.columns  # ranked by a profile, not listed by name
    assert any(line.startswith("profile: Dettmers deep-learning profile") for line in answer.explanation)
    assert answer.recommended == answer.rows[0][1]
    assert answer.headline == f"best for deep learning in general: {answer.recommended}"
    plain = kb.answer("gpus under $1000")  # without 'best': still the plain list
    assert "score" not in plain.columns
