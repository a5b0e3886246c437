"""A ranking's candidates, evaluated: SPARQL fetched their facts; here each is evaluated once
(kbq.lang.evaluate: cards needed, per-GPU share, TCO) and the rows are ordered where the order
depends on the evaluation (fewest cards first; cards x price; TCO). Runs from a cached plan: it
needs no parser, compiler or catalog, only the plan's plain-data `evaluation` spec."""

from __future__ import annotations

from kbq.lang.evaluate import Accelerator, evaluate
from kbq.lang.evaluate.cost import Tco, cards_cost, tco, usd_per_mtok
from kbq.lang.evaluate.hardware import work_memory_gb
from kbq.lang.evaluate.split import Footprint
from kbq.lang.plan import Plan
from kbq.store.executor import Value

NO_CARDS = 1_000_000  # sorts a candidate that holds the workload on no count last


def _number(value: Value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def full_rows(plan: Plan, rows: list[list[Value]]) -> list[list[Value]]:
    """SPARQL rows widened to the plan's columns: the evaluated columns start empty."""
    spec = plan.extra.get("evaluation")
    if not spec:
        return rows
    computed = set(spec["computed"])
    out = []
    for row in rows:
        values = iter(row)
        out.append([None if name in computed else next(values) for name in plan.columns])
    return out


def work_memory(plan: Plan, row: list[Value]) -> float | None:
    """The datasheet GB a candidate's work may use (kbq.lang.evaluate.hardware.work_memory_pattern):
    the value after the SPARQL row's shown columns; a plan compiled without it reads the memory column."""
    spec = plan.extra.get("evaluation") or {}
    if spec.get("work_memory"):
        return _number(row[len(plan.columns) - len(spec["computed"])])
    fetched = [c for c in plan.columns if c not in spec.get("computed", [])]
    return _number(row[fetched.index("memory")]) if "memory" in fetched else None


def evaluate_rows(plan: Plan, rows: list[list[Value]]) -> list[list[Value]]:
    """Evaluate every candidate, drop those that do not fit the asked card count, and order."""
    spec = plan.extra.get("evaluation")
    if not spec:
        return rows
    works = [work_memory(plan, row) for row in rows]
    rows = full_rows(plan, rows)
    col = {c: i for i, c in enumerate(plan.columns)}
    fp = Footprint.from_data(spec["footprint"]) if spec["footprint"] is not None else None
    share = float(spec["usable_share"])
    t = Tco(*spec["tco"]) if spec["tco"] is not None else None
    for row, work in zip(rows, works, strict=True):
        cards: int | None = 1
        if fp is not None:
            memory = work_memory_gb(work, float(spec.get("memory_factor", 1.0)))
            ev = evaluate(fp, Accelerator(str(row[1]), str(row[0]), memory), usable_share=share)
            cards = ev.cards_needed
            row[col["needed_gb"]] = round(fp.total, 3)
            row[col["cards_needed"]] = cards
        if t is not None:
            price = _number(row[col["price"]]) if "price" in col else None
            tdp = _number(row[col["tdp"]]) if "tdp" in col else None
            cost = tco(t, price, tdp, cards)
            row[col["tco_usd"]] = round(cost, 2) if cost is not None else None
    limit = spec.get("cards_limit")
    if limit:
        at = col["cards_needed"]
        rows = [r for r in rows if isinstance(c := r[at], int) and c <= limit]
    return _order(spec, rows, col)


def _order(spec: dict, rows: list[list[Value]], col: dict[str, int]) -> list[list[Value]]:
    """Stable sorts over the SPARQL order, so ties keep the facts' order (score, then name)."""
    cost_key = spec.get("cost_key")
    if cost_key is not None and (spec["footprint"] is not None or spec["tco"] is not None):
        strategy = spec["strategy"]
        use_tco = spec["tco"] is not None and strategy != "efficiency"

        def key(row: list[Value]) -> tuple[float, ...]:
            cards = row[col["cards_needed"]] if "cards_needed" in col else 1
            cost = (
                _number(row[col["tco_usd"]])
                if use_tco
                else cards_cost(_number(row[col[cost_key]]) if cost_key in col else None, cards)  # type: ignore[arg-type]
            )
            unverified = float(bool(row[col["status"]])) if spec["statused"] and "status" in col else 0.0
            score = _number(row[col["score"]]) if "score" in col else None
            parts = [unverified, 1.0 if cost is None else 0.0]
            if strategy != "price" and spec["first_rank"]:
                unknown = any(all(row[col[c]] is None for c in alts if c in col) for alts in spec["first_rank"])
                parts.append(1.0 if unknown else 0.0)
            if strategy == "price":
                parts.append(cost if cost is not None else 0.0)
            else:
                parts.append(-(score or 0.0) / cost if cost and cost > 0 else 0.0)
            parts.append(-(score or 0.0))
            return tuple(parts)

        rows = sorted(rows, key=key)
    if spec["cards_first"]:
        at = col["cards_needed"]
        rows = sorted(rows, key=lambda r: float(c) if isinstance(c := r[at], int) else float(NO_CARDS))
    return rows


def evaluate_instances(plan: Plan, rows: list[list[Value]]) -> tuple[list[list[Value]], list[str]]:
    """Cloud instances for a workload: each evaluated on its own GPUs at its GPU count (the split
    the cards-needed rule uses at that count), those that do not hold it dropped, the decode
    estimate and its cost per million tokens computed; returns the rows and their columns."""
    spec = plan.extra.get("evaluation")
    if not spec:
        return [list(r) for r in rows], plan.columns
    from kbq.lang.evaluate import speed

    rows = full_rows(plan, rows)
    col = {c: i for i, c in enumerate(plan.columns)}
    fp = Footprint.from_data(spec["footprint"])
    share = float(spec["usable_share"])
    kept = []
    for row in rows:
        memory, gpus = _number(row[col["fit_gpu_memory"]]), _number(row[col["gpus"]])
        count = int(gpus) if gpus else 1
        memory = work_memory_gb(memory, float(spec.get("memory_factor", 1.0)))  # the datasheet's binary 'GB' in bytes
        if memory is not None:
            ev = evaluate(fp, Accelerator(str(row[col["gpu_model"]] or ""), None, memory), count, usable_share=share)
            if not ev.fits:
                continue
            row[col["fits"]] = True
        decode = spec.get("decode")
        bandwidth = _number(row[col["fit_gpu_bandwidth"]])
        if decode is not None and bandwidth is not None:
            efficiency, weight_bytes, kv_bytes, batch, active, mfu, compute = decode
            rates = {
                name.removeprefix("fit_rate_"): value
                for name, i in col.items()
                if name.startswith("fit_rate_") and (value := _number(row[i])) is not None
            }
            tokens, _prefill = speed.decode(
                weight_bytes=weight_bytes, kv_bytes_per_seq=kv_bytes, batch=int(batch), bandwidth_gbps=bandwidth,
                gpus=count, efficiency=efficiency, efficiency_text="", active_params=active,
                rate=speed.dense_rate(rates, compute), mfu=mfu,
            )  # fmt: skip
            row[col["tokens_per_s"]] = tokens.value
            row[col["usd_per_mtok"]] = usd_per_mtok(_number(row[col["price"]]) if "price" in col else None, tokens.value)
        kept.append(row)
    if spec.get("by_cost"):
        at = col["usd_per_mtok"]
        kept.sort(key=lambda r: (r[at] is None, r[at] if isinstance(r[at], float) else 0.0))
    if spec.get("limit"):
        kept = kept[: int(spec["limit"])]
    hidden = [col[h] for h in spec.get("hidden", [])]
    columns = [c for i, c in enumerate(plan.columns) if i not in hidden]
    return [[v for i, v in enumerate(r) if i not in hidden] for r in kept], columns
