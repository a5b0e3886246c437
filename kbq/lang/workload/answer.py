"""Shape a workload answer: its rows were computed at compile time and live in the plan."""

from __future__ import annotations

from kbq.lang.catalog import Catalog, Run
from kbq.lang.forms import Shaped
from kbq.lang.plan import Plan
from kbq.store.executor import Value


def shape(plan: Plan, _rows: list[list[Value]], _catalog: Catalog, _run: Run, _explain: bool) -> Shaped:
    rows = [list(r) for r in plan.extra.get("rows", [])]
    extra: dict[str, object] = {"chart": plan.extra["chart"]} if "chart" in plan.extra else {}
    return Shaped(rows, plan.columns, list(plan.explanation), [], extra)
