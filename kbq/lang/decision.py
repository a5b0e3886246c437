"""The answer as a decision: one headline line, and the structured fields a program reads.

Every door shows the same: the CLI prints `headline` first, the page shows it above the chart,
and `--format json`, /ask and the library carry it with

* `verdict` (memory and fit answers): {status, fits, gpu, gpus, per_gpu_gb, capacity_gb,
  usable_gb, headroom_gb}; status is "fits", "tight" (within the card's raw capacity but over its
  usable share, so 'how many' asks one more card) or "does not fit" ("cannot run" when the GPU lacks
  the precision's compute path); `fits` is kbq.lang.evaluate's `Evaluation.fits`: true only for
  "fits", and `kbq --check` exits 4 exactly when it is false;
* `recommended` (rankings for a workload): the first candidate's name;
* `tiers` (rankings for a workload): the picks a buyer weighs, each {tier, gpu, count, price, why};
* `numbers` (speed, time, how many): the estimate's figures by name.

The verdict record is built by `verdict()` alone, from an Evaluation (never recomputed here);
the headline is written here for every kind, from the shaped answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kbq.store.executor import Value

if TYPE_CHECKING:
    from collections.abc import Callable

    from kbq.lang.evaluate import Evaluation
    from kbq.lang.plan import Plan


def verdict(ev: Evaluation, gpu: str, *, status: str | None = None) -> dict[str, Value]:
    """The structured verdict of a memory or fit answer (the one record every door shows), read
    from kbq.lang.evaluate's Evaluation: `fits` is `Evaluation.fits` (true only for "fits"; "tight"
    is within the raw capacity but not the usable share, which is why 'how many' asks one more
    card), so a fit question, `--check` and 'how many' never disagree. `status` overrides the
    evaluation's word only with "cannot run" (the GPU lacks the precision's compute path)."""
    if status is not None and status != "cannot run":
        raise ValueError(f"a verdict's status comes from the evaluation; only 'cannot run' overrides it, not {status!r}")
    if ev.capacity_gb is None or ev.usable_gb is None:
        raise ValueError("a verdict needs an evaluation of a card with a sourced memory size")
    need = ev.per_gpu_gb if ev.per_gpu_gb is not None else ev.total_gb  # no valid split: the whole need
    return {
        "status": status or ev.verdict,
        "fits": ev.fits and status is None,
        "gpu": gpu,
        "gpus": ev.count,
        "per_gpu_gb": round(need, 2),
        "capacity_gb": round(ev.capacity_gb, 2),
        "usable_gb": round(ev.usable_gb, 2),
        "headroom_gb": round(ev.capacity_gb - need, 2),
    }


def _name(text: str) -> str:
    """'decode, layer split' -> 'decode_layer_split'; 'per-GPU need (GB)' -> 'per_gpu_need_gb'."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def numbers(rows: list[list[Value]], unit_at: int | None) -> dict[str, Value]:
    """An estimate's figures by name: {'decode_tokens_per_s': 43.3, 'prefill_tokens_per_s': 4130, ...}.
    Measured rows keep their own names ('measured: ...' becomes 'measured_...')."""
    out: dict[str, Value] = {}
    for row in rows:
        value = row[1]
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        key = _name(str(row[0]))
        unit = _name(str(row[unit_at]).replace("/", " per ")) if unit_at is not None and row[unit_at] else ""
        if unit and unit != "x" and not key.startswith(unit):
            key += "_" + unit
        out.setdefault(key, value)
    return out


def _fmt(value: Value) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}" if abs(value) >= 1 else f"{value:.2g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


class Decision:
    """What a question decides: the headline and the structured fields (see the module doc)."""

    __slots__ = ("headline", "numbers", "recommended", "tiers", "verdict")

    def __init__(self) -> None:
        self.headline = ""
        self.verdict: dict[str, Value] | None = None
        self.recommended: str | None = None
        self.tiers: list[dict[str, object]] = []
        self.numbers: dict[str, Value] = {}


def decide(
    plan: Plan,
    kind: str,
    columns: list[str],
    rows: list[list[Value]],
    explanation: list[str],
    label: Callable[[str], str],
    tiers: list[dict[str, object]] | None = None,
) -> Decision:
    """The decision of a shaped answer (rows as shown, explanation as shown); `label` names an IRI."""
    d = Decision()
    d.verdict = plan.extra.get("verdict")
    about = str(plan.extra.get("about", ""))
    col = {c: i for i, c in enumerate(columns)}
    v = d.verdict
    if kind == "memory":
        total = next((r for r in rows if r[0] == "total"), None)
        if v:
            d.headline = (
                f"{v['status']}: {_fmt(v['per_gpu_gb'])} GB per GPU needed; {v['gpus']} x {v['gpu']}"
                f" has {_fmt(v['capacity_gb'])} GB ({_fmt(v['usable_gb'])} usable)"
            )
        elif total is not None:
            d.headline = f"{about} needs {_fmt(total[1])} GB" + (
                f" ({_fmt(total[2])} GB per GPU)" if len(total) == 5 and total[2] is not None else ""
            )
        d.numbers = {_name(str(r[0])) + "_gb": r[1] for r in rows if isinstance(r[1], (int, float))}
    elif kind == "how_many":
        d.numbers = numbers(rows, None)
        if v:
            d.headline = (
                f"{v['gpus']} x {v['gpu']}: {v['status']}, {_fmt(v['per_gpu_gb'])} GB per GPU"
                f" of {_fmt(v['capacity_gb'])} GB, for {about}"
            )
    elif kind in ("speed", "time"):
        d.numbers = numbers(rows, col.get("unit"))
        hardware = str(plan.extra.get("hardware", ""))
        images = next((k for k in d.numbers if k.endswith("throughput_images_per_s")), None)  # an image model
        if kind == "speed" and images is not None:
            d.headline = f"about {_fmt(d.numbers[images])} images/s ({images.split('_')[0]}) on {hardware} (estimate)"
        elif kind == "time" and "wall_clock_hours_h" in d.numbers:
            d.headline = (
                f"about {_fmt(d.numbers['wall_clock_hours_h'])} hours"
                f" ({_fmt(d.numbers.get('gpu_hours'))} GPU-hours) on {hardware} (estimate)"
            )
        elif kind == "speed":
            decode, prefill = d.numbers.get("decode_tokens_per_s"), d.numbers.get("prefill_tokens_per_s")
            d.headline = f"about {_fmt(decode)} tokens/s decode, {_fmt(prefill)} prefill on {hardware} (estimate)"
            if v and not v["fits"]:
                d.headline = f"{v['status']} ({_fmt(v['per_gpu_gb'])} GB per GPU of {_fmt(v['capacity_gb'])}); " + d.headline
        if kind == "time" and "wall_clock_hours_h" not in d.numbers:
            hours, days = d.numbers.get("gpu_hours"), d.numbers.get("wall_clock_days")
            d.headline = f"about {_fmt(days)} days ({_fmt(hours)} GPU-hours) on {hardware} (estimate)"
    elif kind == "gpus":
        d.tiers = list(tiers or [])
        _ranking(d, plan, col, rows, label, d.tiers)
    elif kind == "why":
        d.headline = explanation[0] if explanation else ""
    elif kind == "compare":
        names = [c for c in columns[1:] if c != "ratio"]
        d.headline = " vs ".join(names)
        if "ratio" in col and len(names) == 2:
            by_key: dict[str, list[Value]] = {}
            for r in rows:
                by_key.setdefault(str(r[0]).split(" (")[0], r)  # 'price (USD)' before 'price (kind, date)'
            parts = [
                f"{by_key[k][col['ratio']]:g}x {k}"
                for k in ("memory", "bandwidth", "tensor")
                if k in by_key and by_key[k][col["ratio"]] is not None
            ]
            price = by_key.get("price")
            if price is not None and all(isinstance(v, (int, float)) for v in price[1:3]):
                parts.append(f"price ${_fmt(price[1])} vs ${_fmt(price[2])}")
            if parts:
                d.headline += ": " + ", ".join(parts)
    elif kind == "describe":
        d.headline = explanation[0] if explanation else ""
    elif kind == "instances":
        name_at, price_at = col.get("name"), col.get("price")
        if rows and name_at is not None:
            first = rows[0]
            rate = f" at ${_fmt(first[price_at])}/h" if price_at is not None and first[price_at] is not None else ""
            d.headline = f"{len(rows)} cloud instance(s); lowest rate: {first[name_at]}{rate}"
    elif kind == "list":
        names = [str(r[1]) for r in rows if len(r) > 1]
        head = explanation[0].split(" [plan")[0] if explanation else "answer"
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        d.headline = f"{head}: {shown}"
    if not d.headline and explanation:
        d.headline = explanation[0]
    return d


def _money(price: object) -> str:
    if not isinstance(price, dict):
        return "no price in the KB"
    return f"${price['usd']:,.0f}, {price['kind']} {str(price['date'])[:7]}"


def _ranking(
    d: Decision, plan: Plan, col: dict[str, int], rows: list[list[Value]], label: Callable[[str], str], plan_tiers: list
) -> None:
    name_at = col.get("name", 1)
    if not rows:
        d.headline = "no GPU matches"
        return
    first = str(rows[0][name_at])
    workload = plan.extra.get("workload")
    order = plan.extra.get("picture") or {}
    keys = order.get("order_keys", []) if isinstance(order, dict) else []
    if workload:
        d.recommended = first
        cards = rows[0][col["cards_needed"]] if "cards_needed" in col else None
        need = rows[0][col["needed_gb"]] if "needed_gb" in col else None
        d.headline = f"best for {label(str(workload))}: {first}" + (f" ({cards} card(s) for {_fmt(need)} GB)" if cards else "")
        tiers = {str(t["tier"]): t for t in plan_tiers}
        strategy = plan.extra.get("strategy")
        # the pick that answers: the cheapest or best-value configuration when that is asked, else
        # the best value (a right-sized card, not the fastest data-centre part for a 17 GB model)
        wanted = {"price": "cheapest (new)", "value": "best value"}.get(str(strategy), "best value")
        pick = tiers.get(wanted) or tiers.get("fastest")
        if pick is not None:
            d.recommended = str(pick["gpu"])
            what = {"cheapest (new)": "cheapest"}.get(wanted, wanted)
            count = f"{pick['count']} x " if pick.get("count") and pick["count"] != 1 else ""
            d.headline = f"{what} for {label(str(workload))}: {count}{pick['gpu']} ({_money(pick.get('price'))})"
            fastest = tiers.get("fastest")
            if fastest is not None and fastest["gpu"] != pick["gpu"] and strategy not in ("price", "value"):
                d.headline += f"; fastest: {fastest['gpu']}"
    elif plan.extra.get("best") and plan.extra.get("profile"):
        d.recommended = first
        d.headline = f"best for deep learning in general: {first}"
    elif len(rows) == 1 and keys:
        key = str(keys[0])
        at = col.get(key)
        value = rows[0][at] if at is not None else None
        unit = plan.units.get(key, "")
        d.headline = f"{key} of {first}: " + ("unknown" if value is None else f"{_fmt(value)}{' ' + unit if unit else ''}")
    elif keys:
        d.headline = f"{len(rows)} GPU(s) by {keys[0]}: first {first}"
    else:
        d.headline = f"{len(rows)} GPU(s) match: first {first}"
