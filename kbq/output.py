"""Render answers as an aligned table, JSON or CSV. Plain text only (no colours), so a pipe
gets exactly what a terminal shows. Every string from data passes kbq.sanitize on its way out:
a control character in a KB label, an overlay or an endpoint's answer is shown, never obeyed.
JSON is strict: a NaN or an infinity is written null (json.dumps would write `NaN`, which no
JSON reader accepts)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from kbq.sanitize import clean, clean_line, escape_json
from kbq.store.executor import Value

IRI_COLUMNS = {"gpu", "item", "instance"}


def _cell(value: Value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return f"{value:g}" if abs(value) < 1e7 else f"{value:,.0f}"
    if isinstance(value, int) and abs(value) >= 10_000_000:
        return f"{value:,}"
    return clean_line(str(value))


def table(columns: Sequence[str], rows: Sequence[Sequence[Value]], units: dict[str, str] | None = None) -> str:
    """Aligned columns; IRI columns are left out (the name column says the same)."""
    units = units or {}
    keep = [i for i, c in enumerate(columns) if c not in IRI_COLUMNS] or list(range(len(columns)))
    head = [clean_line(columns[i] + (f" ({units[columns[i]]})" if units.get(columns[i]) else "")) for i in keep]
    body = [[_cell(row[i]) for i in keep] for row in rows]
    widths = [max(len(h), *(len(r[j]) for r in body)) if body else len(h) for j, h in enumerate(head)]
    numeric = [
        all((isinstance(row[i], (int, float)) and not isinstance(row[i], bool)) or row[i] is None for row in rows) for i in keep
    ]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)).rstrip()

    out = [line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in body]
    return "\n".join(out)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinite float (at any depth) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def to_json(payload: dict[str, Any]) -> str:
    """Strict JSON (no NaN/Infinity), with control characters in strings as \\u escapes."""
    return escape_json(json.dumps(finite(payload), indent=2, ensure_ascii=False, allow_nan=False))


def to_csv(columns: Sequence[str], rows: Sequence[Sequence[Value]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([clean(c) for c in columns])
    for row in rows:
        writer.writerow(["" if v is None else clean(v) if isinstance(v, str) else v for v in row])
    return buffer.getvalue().rstrip("\n")
