"""memory / speed / time-to-train / how-many questions (filled in with the workload arithmetic)."""

from __future__ import annotations

from kbq.lang import ast
from kbq.lang.context import Context
from kbq.lang.plan import Plan


def compile_workload(ctx: Context, q: ast.WorkloadQuestion) -> Plan:
    raise ctx.error(f"'{q.form}' questions are not available yet", q.target.phrase.column)
