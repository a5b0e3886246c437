"""Shape a workload answer: its rows were computed at compile time and live in the plan."""

from __future__ import annotations

from kbq.lang.plan import Plan
from kbq.store.executor import Value


def shape(plan: Plan, _rows: list[list[Value]]) -> tuple[list[list[Value]], list[str], list[str], dict[str, object]]:
    rows = [list(r) for r in plan.extra.get("rows", [])]
    extra = {"chart": plan.extra["chart"]} if "chart" in plan.extra else {}
    return rows, plan.columns, list(plan.explanation), extra
