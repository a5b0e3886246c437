"""Charts of answers: the chart spec (Result.extra["chart"]) against the answer it draws, and the
terminal rendering (`--format chart`) in a real pseudo-terminal and in a pipe.

Expected numbers come from the answers themselves (rows, explanation, `requirements`, `describe`),
never from constants here."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from kbq import charts
from kbq.lang.chartspec import pareto

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")
MEMORY = "memory for llama 3.1 70b inference at fp8 with 128k context batch 4 on 4 x h100 sxm5"
RANKING = "gpu for lstm where cooling=blower"
VALUE = "best value gpu for resnet-50 training under $2000"
RATIO = "gpus order by tensor / price desc limit 10"
COMPARE = "compare rtx 4090 vs rtx 3090"


def _col(answer, name: str) -> list[object]:  # type: ignore[no-untyped-def]
    at = answer.columns.index(name)
    return [row[at] for row in answer.rows]


# --- the spec ----------------------------------------------------------------------------------


def test_memory_breakdown_is_the_per_gpu_column_against_the_gpu(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(MEMORY)
    chart = answer.extra["chart"]
    assert chart["type"] == "breakdown" and chart["unit"] == "GB" and chart["per_gpu"] == 4
    parts = [r for r in answer.rows if r[0] != "total"]
    per_gpu = answer.columns.index("GB per GPU")
    assert chart["lines"] == [[r[0], r[per_gpu]] for r in parts]
    assert [p for p, _s in chart["sources"]] == [r[0] for r in parts]
    assert [s for _p, s in chart["sources"]] == [r[answer.columns.index("source")] for r in parts]
    (gpu,) = kb.gpus(where=f"name in ({chart['gpu']})")
    binary = dict(kb.table(
        "PREFIX kbq: <https://kbq.dev/ontology#> SELECT ?n ?v WHERE { ?c kbq:constantName ?n ; kbq:value ?v }"
    ).rows)["gpu_memory_factor"]  # fmt: skip
    assert chart["capacity"] == pytest.approx(gpu.specs["memory"] * binary)  # the datasheet's GB are GiB
    need = sum(v for _p, v in chart["lines"])
    usable = chart["capacity"] * chart["usable_share"]
    assert chart["verdict"] == ("fits" if need <= usable else "tight" if need <= chart["capacity"] else "does not fit")
    assert chart["verdict"] in answer.explanation[0]


def test_ranking_bars_are_the_profile_figures_in_rank_order(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(RANKING)
    chart = answer.extra["chart"]
    assert chart["type"] == "bars" and chart["names"] == _col(answer, "name")
    profile = next(line for line in answer.explanation if line.startswith("profile: "))
    assert chart["profile"] == profile
    name = profile.removeprefix("profile: ").split(" (")[0]
    required = [(r[2], r[3]) for r in kb.answer("requirements for lstm").rows if r[0] == name]
    ranked = [(s["rank"], s["column"]) for s in chart["series"] if s["rank"] is not None]
    assert sorted(ranked) == sorted(required) and [r for r, _c in ranked] == sorted(r for r, _c in ranked)
    for series in chart["series"]:
        assert series["values"] == [None if v is None else float(v) for v in _col(answer, series["column"])]
        assert series["unit"] == answer.units.get(series["column"], "")
    unknown = {
        f"{n} ({s['column']})" for s in chart["series"] for n, v in zip(chart["names"], s["values"], strict=True) if v is None
    }
    line = next(x for x in answer.explanation if x.startswith("unknown figures"))
    listed = {
        f"{gpu} ({key})" for gpu, keys in re.findall(r"([^;:]+?) \(([^)]+)\)", line.split(": ", 1)[1]) for key in keys.split(", ")
    }
    assert unknown and unknown == {x.strip() for x in listed}


def test_a_one_row_answer_is_drawn_among_its_candidates(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("cheapest gpu for llama 3.1 8b inference at int4")
    chart = answer.extra["chart"]
    assert len(answer.rows) == 1 and chart["shown"] == 1 and chart["names"][0] == answer.rows[0][1]
    assert 1 < len(chart["names"]) <= 10 < chart["candidates"]
    (cost,) = chart["series"]
    assert cost["better"] == "lower" and cost["values"] == sorted(cost["values"])  # cheapest first


def _dominated(p: tuple[float, float], q: tuple[float, float]) -> bool:
    """q beats p: cheaper or equal and at least as good, better on one."""
    return q[0] <= p[0] and q[1] >= p[1] and q != p


def test_value_scatter_has_every_priced_candidate_and_its_pareto_front(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(VALUE)
    chart = answer.extra["chart"]
    assert chart["type"] == "scatter" and chart["recommended"] == answer.rows[0][1]
    assert chart["x"]["column"] == "price" and chart["y"]["column"] == "score" and chart["x"]["unit"] == answer.units["price"]
    points = {p["name"]: (p["x"], p["y"]) for p in chart["points"]}
    assert len(points) == chart["candidates"] - len(chart["unknown"]) > 10
    first = answer.rows[0]
    cols = answer.columns
    assert points[first[1]] == (first[cols.index("price")] * first[cols.index("cards_needed")], first[cols.index("score")])
    front = set(chart["front"])
    assert chart["recommended"] in front
    imputed = set(chart["imputed"])  # scores resting on an imputed first-rank figure: drawn, not on the front
    for name, p in points.items():
        beaten = name in imputed or any(_dominated(p, q) for n, q in points.items() if n not in imputed)
        assert beaten == (name not in front), name
    # score per dollar decides, among cards whose first-rank figure (the CNN profile's tensor rate) is known:
    # an imputed figure on a cheap card does not win a value ranking
    rated = {
        str(r[0])
        for r in kb.table(
            "SELECT ?l WHERE { ?g <https://kbq.dev/ontology#tensorTflops> ?t ; <http://www.w3.org/2000/01/rdf-schema#label> ?l }"
        ).rows
    }
    assert set(points) - rated  # a priced card without a tensor rate is among the points (so this can fail)
    best = max((n for n in points if n in rated), key=lambda n: points[n][1] / points[n][0])
    assert best == chart["recommended"]


def test_ratio_order_is_a_scatter_of_its_two_keys(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(RATIO)
    chart = answer.extra["chart"]
    assert (chart["y"]["column"], chart["x"]["column"]) == ("tensor", "price")
    rows = {r[1]: (r[answer.columns.index("price")], r[answer.columns.index("tensor")]) for r in answer.rows}
    assert {p["name"]: (p["x"], p["y"]) for p in chart["points"]} == rows
    assert chart["recommended"] == answer.rows[0][1] == max(rows, key=lambda n: rows[n][1] / rows[n][0])
    assert chart["x"]["log"] is (max(x for x, _y in rows.values()) / min(x for x, _y in rows.values()) > 20)


def test_an_ascending_ratio_recommends_the_lowest_defined_ratio(kb) -> None:  # type: ignore[no-untyped-def]
    """'price / tensor asc': a GPU with no tensor rate (0) has no ratio and comes last, never first."""
    answer = kb.answer("gpus order by price / tensor asc")
    chart = answer.extra["chart"]
    assert (chart["x"]["better"], chart["y"]["better"]) == ("higher", "lower")
    ratios = {p["name"]: p["y"] / p["x"] for p in chart["points"] if p["x"]}
    assert any(p["x"] == 0 for p in chart["points"])  # the KB has GPUs without tensor cores: the case is exercised
    assert chart["recommended"] == answer.rows[0][1] == min(ratios, key=lambda n: ratios[n])


def test_compare_pairs_every_numeric_attribute(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(COMPARE)
    chart = answer.extra["chart"]
    n = len(chart["names"])
    assert chart["type"] == "paired" and chart["names"] == answer.columns[1 : 1 + n]
    assert answer.columns[1 + n :] == ["ratio"]  # two GPUs: first / second after their values
    table = {r[0]: r[1 : 1 + n] for r in answer.rows}
    skip = {"sources", "measured results"}  # counts, not attributes of the cards
    drawn = {a["column"] for a in chart["attributes"]}
    for label, values in table.items():
        numeric = [v for v in values if v is not None]
        key = label.split(" (")[0]
        if numeric and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numeric) and label not in skip:
            assert key in drawn, label
    for attribute in chart["attributes"]:
        label = attribute["column"] + (f" ({attribute['unit']})" if attribute["unit"] else "")
        assert attribute["values"] == [None if v is None else float(v) for v in table[label]]
    for name in chart["names"]:
        line = next(x for x in answer.explanation if x.startswith(f"sources for {name}: "))
        assert ", ".join(chart["sources"][name]) == line.split(": ", 1)[1]


def test_lists_have_no_chart(kb) -> None:  # type: ignore[no-untyped-def]
    assert "chart" not in kb.answer("frameworks for rnn").extra


def test_pareto_front_by_hand() -> None:
    points = [(1.0, 1.0), (2.0, 3.0), (2.0, 2.0), (3.0, 3.0), (4.0, 5.0), (0.5, 0.2)]
    assert pareto(points, lower_x=True, higher_y=True) == [5, 0, 1, 4]
    assert pareto(points, lower_x=False, higher_y=False) == [5, 0, 2, 3, 4]
    assert pareto([(1.0, 1.0), (2.0, 2.0), (1.0, 1.0)], lower_x=True, higher_y=True) == [0, 2, 1]  # equal cards both on it


# --- the terminal ------------------------------------------------------------------------------


def test_bars_are_eighths_of_a_cell() -> None:
    assert charts.bar(1.0, 10) == "█" * 10
    assert charts.bar(0.5, 10) == "█" * 5
    assert charts.bar(1 / 80, 10) == "▏" and charts.bar(7 / 80, 10) == "▉"
    assert charts.bar(0.0, 10) == "" and charts.bar(2.0, 4) == "████"


def test_unknown_is_written_never_drawn() -> None:
    series = {"column": "x", "label": "x", "unit": "GB", "rank": 1, "better": "higher", "values": [4.0, None]}
    chart = {"type": "bars", "title": "t", "names": ["a", "b"], "shown": 2, "candidates": 2, "recommended": 0, "series": [series]}
    lines = charts.render(chart, width=80).splitlines()
    (b_line,) = [x for x in lines if x.strip().startswith("b ")]
    assert "unknown" in b_line and not set(charts.EIGHTHS[1:] + charts.FULL) & set(b_line)
    (a_line,) = [x for x in lines if "a  " in x and "█" in x]
    assert a_line.rstrip().endswith("4 GB")


def _kbq_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    return {**env, "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1", **extra}


def run_in_pty(args: list[str], *, columns: int = 100, **env: str) -> tuple[int, str]:
    """`python -m kbq ARGS` with a pseudo-terminal as stdout (COLUMNS x 40): exit code and output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbq", *args], stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, cwd=ROOT, env=_kbq_env(**env)
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=30)
    return code, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def run_in_pipe(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kbq", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=_kbq_env(**env)
    )


@pytest.mark.parametrize("question", [MEMORY, RANKING])
def test_chart_in_a_terminal_is_coloured_and_in_a_pipe_the_same_text_plain(kb, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(question)
    code, tty = run_in_pty([question, "--format", "chart"])
    piped = run_in_pipe([question, "--format", "chart"], COLUMNS="100")  # the terminal's width
    assert code == 0 and piped.returncode == 0, piped.stderr
    assert "\x1b[" in tty and "\x1b[" not in piped.stdout
    assert ANSI.sub("", tty).rstrip("\n") == piped.stdout.rstrip("\n")  # the same picture, colour aside
    text = piped.stdout
    assert "█" in text and "Traceback" not in text
    chart = answer.extra["chart"]
    if chart["type"] == "breakdown":
        for part, value in chart["lines"]:
            (line,) = [x for x in text.splitlines() if x.strip().startswith(part)]
            assert line.rstrip().endswith(charts.number(value, "GB"))
        assert f"capacity {charts.number(chart['capacity'], 'GB')}" in text and chart["verdict"] in text
    else:
        for series in chart["series"]:
            assert charts._series_title(series) in text
        top = chart["series"][0]
        assert f"▶ {chart['names'][0]}" in text
        assert text.count("unknown") >= sum(v is None for s in chart["series"] for v in s["values"])
        assert charts.number(top["values"][0], top["unit"]) in text
    flat = " ".join(text.split())
    for explained in answer.explanation[:2]:
        assert " ".join(explained.split()) in flat  # the explanation follows the chart (wrapped to the width)


def test_no_color_in_a_terminal_when_asked() -> None:
    code, tty = run_in_pty([RANKING, "--format", "chart"], NO_COLOR="1")
    assert code == 0 and "\x1b[" not in tty and "█" in tty


def test_chart_format_on_an_answer_without_a_chart_prints_the_table() -> None:
    run = run_in_pipe(["frameworks for rnn", "--format", "chart"])
    assert run.returncode == 0 and "PyTorch" in run.stdout and "no chart" in run.stderr


@pytest.mark.parametrize("question", ["fastest gpu for bert training", "fastest gpu for llama 2 70b inference"])
def test_measured_evidence_is_drawn_with_its_direction(kb, question: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(question)
    (measured,) = [s for s in answer.extra["chart"]["series"] if s["column"] == "measured"]
    assert measured["unit"] == answer.rows[0][answer.columns.index("measured_unit")]
    known = [v for v in measured["values"] if v is not None]
    assert len(known) >= 2
    assert known == sorted(known, reverse=measured["better"] == "higher")  # measured results rank first, best first


def test_the_value_front_never_rests_on_an_imputed_figure(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("best value gpu for resnet-50 training under $2000")
    chart = answer.extra["chart"]
    at = {c: i for i, c in enumerate(answer.columns)}
    first_rank = [k for k in ("memory", "bandwidth", "fp16", "tensor") if k in at][:1]
    assert chart["imputed"], "the question has cards whose first-rank figure is unknown"
    assert not set(chart["imputed"]) & set(chart["front"])
    drawn = {p["name"] for p in chart["points"]}
    assert set(chart["imputed"]) <= drawn  # drawn, not hidden
    assert first_rank
