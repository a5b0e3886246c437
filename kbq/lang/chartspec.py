"""The chart of an answer as plain data, drawn by the page (SVG, kbq/serve/static/charts.js) and
the terminal (Unicode bars, kbq/charts.py) alike, so both show the same thing.

Four kinds, in `Result.extra["chart"]`:
- `breakdown`: a memory estimate's parts stacked against a GPU's capacity (built by the workload
  arithmetic, kbq.lang.workload.question);
- `bars`: a ranking, one series per figure that decides it (the order key, the cost, the profile's
  ranks and the score), one value per GPU;
- `scatter`: a value ranking (score per dollar or per watt, or an asked ratio 'tensor / price'):
  performance against cost with the Pareto front and the recommended card;
- `paired`: a comparison, one bar per GPU for every numeric attribute.

What decides comes from the plan (its profile, order keys, cost key); labels, units and
directions from the KB's query keys. An unknown figure stays None (drawn as unknown, never as
zero). Nothing here names a domain word.
"""

from __future__ import annotations

from kbq.lang.catalog import Catalog, Key
from kbq.lang.plan import Plan
from kbq.store.executor import Value
from kbq.store.names import normalise

MAX_ROWS = 20  # GPUs drawn in a ranking (the table keeps every row)
MIN_ROWS = 10  # a one-row answer ('best ...') is drawn among its nearest candidates
MAX_POINTS = 200  # GPUs drawn in a scatter

Series = dict[str, object]


def _number(value: Value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _key(catalog: Catalog, column: str) -> Key | None:
    return catalog.keys.get(normalise(column))


def _label(catalog: Catalog, column: str) -> str:
    """A column's words: its query key's label, else the column name."""
    key = _key(catalog, column)
    return key.label if key is not None else column.replace("_", " ")


def _series(plan: Plan, catalog: Catalog, column: str, rows: list[list[Value]], *, rank: int | None = None) -> Series:
    """One figure of every drawn row, with its label, unit and direction."""
    at = plan.columns.index(column)
    key = _key(catalog, column)
    better = None if key is None else ("higher" if key.higher_is_better else "lower")
    return {
        "column": column,
        "label": _label(catalog, column),
        "unit": plan.units.get(column, key.unit_symbol if key is not None else ""),
        "rank": rank,
        "better": better,
        "values": [_number(row[at]) for row in rows],
    }


def _times(series: Series, factors: list[float | None], label: str) -> Series:
    """A cost multiplied by the cards a workload needs (None stays unknown)."""
    values = series["values"]
    assert isinstance(values, list)
    return {
        **series,
        "label": f"{series['label']} x {label}",
        "values": [None if v is None or f is None else round(v * f, 4) for v, f in zip(values, factors, strict=True)],
    }


def gpu_chart(plan: Plan, candidates: list[list[Value]], shown: list[list[Value]], catalog: Catalog) -> dict[str, object] | None:
    """The chart of a GPU ranking: a scatter for value questions and ratios, else bars."""
    picture = plan.extra.get("picture")
    if not isinstance(picture, dict) or not shown:
        return None
    columns = plan.columns
    order = [str(k) for k in picture.get("order_keys") or []]
    strategy = str(plan.extra.get("strategy", ""))
    if len(order) == 2 or (strategy in ("value", "efficiency") and not order):
        return _scatter(plan, candidates, shown, catalog, picture, order)
    drawn = candidates[: max(len(shown), MIN_ROWS)] if len(shown) < MIN_ROWS else shown
    drawn = drawn[:MAX_ROWS]
    series: list[Series] = []
    cards = "cards_needed" in columns
    if order:
        series.append(_series(plan, catalog, order[0], drawn))
    elif strategy == "price" and picture.get("cost") in columns:
        cost = _series(plan, catalog, str(picture["cost"]), drawn)
        if cards:
            at = columns.index("cards_needed")
            cost = _times(cost, [_number(r[at]) for r in drawn], _label(catalog, "cards_needed"))
        series.append(cost)
    else:
        if cards:
            series.append(_series(plan, catalog, "cards_needed", drawn))
        if "measured" in columns:
            measured = _series(plan, catalog, "measured", drawn)
            unit_at = columns.index("measured_unit")
            measured["unit"] = next((str(r[unit_at]) for r in drawn if r[unit_at]), "")
            lower = picture.get("lower_is_better_measures") or []
            measured["better"] = "lower" if measured["unit"] in lower else "higher"
            series.append(measured)
        if "score" in columns:
            series.append(_series(plan, catalog, "score", drawn))
        groups = plan.extra.get("profile_keys")
        for rank, group in enumerate(groups if isinstance(groups, list) else [], start=1):
            series += [_series(plan, catalog, str(key), drawn, rank=rank) for key in group if key in columns]
    if not series:
        return None
    return {
        "type": "bars",
        "title": str(picture.get("method") or ""),
        "profile": picture.get("profile"),
        "names": [str(r[1]) for r in drawn],
        "shown": len(shown),
        "candidates": len(candidates),
        "recommended": 0,
        "series": series,
    }


def pareto(points: list[tuple[float, float]], *, lower_x: bool, higher_y: bool) -> list[int]:
    """Indices of the points no other point beats on both axes, ordered along x.

    A point is dominated when another is at least as good on both and better on one."""
    sx = 1.0 if lower_x else -1.0
    sy = -1.0 if higher_y else 1.0  # minimise sx*x and sy*y
    keyed = [(sx * x, sy * y, i) for i, (x, y) in enumerate(points)]
    front: list[int] = []
    best_y, last = float("inf"), (float("nan"), float("nan"))
    for x, y, i in sorted(keyed):
        if y < best_y or (x, y) == last:  # a card equal to one on the front is on it too
            front.append(i)
            best_y, last = y, (x, y)
    return sorted(front, key=lambda i: points[i][0])


def _scatter(
    plan: Plan,
    candidates: list[list[Value]],
    shown: list[list[Value]],
    catalog: Catalog,
    picture: dict[str, object],
    order: list[str],
) -> dict[str, object] | None:
    rows = candidates[:MAX_POINTS]
    columns = plan.columns
    if order:
        y, x = _series(plan, catalog, order[0], rows), _series(plan, catalog, order[1], rows)
        descending = picture.get("descending") is not False
        lower_x, higher_y = descending, descending
    else:
        cost = str(picture.get("cost") or "")
        if "score" not in columns or cost not in columns:
            return None
        y = _series(plan, catalog, "score", rows)
        if "tco_usd" in columns and plan.extra.get("strategy") == "value":
            x = _series(plan, catalog, "tco_usd", rows)
        else:
            x = _series(plan, catalog, cost, rows)
            if "cards_needed" in columns:
                at = columns.index("cards_needed")
                x = _times(x, [_number(r[at]) for r in rows], _label(catalog, "cards_needed"))
        lower_x, higher_y = True, True
    xs, ys = x.pop("values"), y.pop("values")
    assert isinstance(xs, list) and isinstance(ys, list)
    named: list[tuple[str, float, float]] = []
    unknown: list[str] = []
    for row, vx, vy in zip(rows, xs, ys, strict=True):
        if vx is None or vy is None:
            unknown.append(str(row[1]))
        else:
            named.append((str(row[1]), float(vx), float(vy)))
    if not named:
        return None
    points = [{"name": n, "x": vx, "y": vy} for n, vx, vy in named]
    # a score resting on an imputed first-rank figure (the candidates' mean) is drawn, never on the front
    first_rank = [k for k in ((plan.extra.get("profile_keys") or [[]])[0] if not order else []) if k in columns]
    imputed = {str(r[1]) for r in rows if any(r[columns.index(k)] is None for k in first_rank)}
    eligible = [i for i, (n, _vx, _vy) in enumerate(named) if n not in imputed]
    front = [eligible[j] for j in pareto([named[i][1:] for i in eligible], lower_x=lower_x, higher_y=higher_y)]
    first = str(shown[0][1])
    return {
        "type": "scatter",
        "title": str(picture.get("method") or ""),
        "profile": picture.get("profile"),
        "x": {**x, "better": "lower" if lower_x else "higher", "log": _wide([vx for _n, vx, _vy in named])},
        "y": {**y, "better": "higher" if higher_y else "lower", "log": _wide([vy for _n, _vx, vy in named])},
        "points": points,
        "front": [points[i]["name"] for i in front],
        "recommended": first if any(p["name"] == first for p in points) else None,
        "unknown": unknown,
        "imputed": sorted(imputed & {n for n, _vx, _vy in named}),
        "shown": len(shown),
        "candidates": len(candidates),
    }


def _wide(values: list[float]) -> bool:
    """Draw an axis on a log scale when its positive values span more than 20x."""
    return bool(values) and min(values) > 0 and max(values) / min(values) > 20


def compare_chart(
    names: list[str], rows: list[list[Value]], attributes: list[tuple[Key, str]], sources: dict[str, list[str]]
) -> dict[str, object] | None:
    """Paired bars: every attribute row whose values are numbers, one bar per GPU.

    `attributes` pairs each query key with the label of its row in `rows` (first cell)."""
    by_label = {str(r[0]): r[1:] for r in rows}
    drawn = []
    for key, label in attributes:
        values = by_label.get(label)
        if values is None:
            continue
        numbers = [_number(v) for v in values]
        if any(n is not None for n in numbers) and all(n is not None or v is None for n, v in zip(numbers, values, strict=True)):
            drawn.append(
                {
                    "column": key.key,
                    "label": key.label,
                    "unit": key.unit_symbol,
                    "better": None if key.higher_is_better else "lower",  # only what the KB declares (kbq:higherIsBetter false)
                    "values": numbers,
                }
            )
    if not drawn or len(names) < 1:
        return None
    return {"type": "paired", "title": "compare: " + ", ".join(names), "names": names, "attributes": drawn, "sources": sources}
