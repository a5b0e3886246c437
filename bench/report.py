"""Print a benchmark report and record it under bench/results/."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def record(lines: list[str], name: str) -> None:
    report = "\n".join(lines)
    print(report)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / name).write_text(report + "\n", encoding="utf-8")
