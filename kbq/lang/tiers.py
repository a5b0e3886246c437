"""Tiers: a ranking for a workload as the picks a buyer weighs, a view on its candidates.

For each market segment (consumer, workstation, data center) and over all: the cheapest
configuration that holds the workload new and used (count x the card's price, up to the
chassis asked or the stated default named tier_max_cards in kb/defaults.ttl), the best value (profile score per
dollar of that configuration; a card whose first-rank figure is unknown is left out, as the
value ranking does), and the fastest (the profile's first). Every price says its kind and date
(the latest observation of that kind, the lowest on that day: the rule of kbq:currentPrice).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kbq.lang import terms
from kbq.lang.cards import prices as card_prices
from kbq.lang.catalog import PREFIXES, Run
from kbq.store.executor import Value

DEFAULT_CARDS = "tier_max_cards"


class Stack(NamedTuple):
    """One SDK's support of a card: the newest release in the KB that lists it, and the SDK's
    newest release in the KB (when the versions differ, the card was dropped since)."""

    sdk: str
    release: str
    version: int  # major x 1000 + minor
    newest: str
    newest_version: int

    @property
    def current(self) -> bool:
        return self.version == self.newest_version


def stacks(run: Run, gpus: list[str]) -> dict[str, list[Stack]]:
    """GPU -> per SDK (CUDA Toolkit, PyTorch's CUDA wheels, ROCm ...) the newest release the KB
    lists as supporting it (CUDA and PyTorch: the release's compute-capability range,
    rules/cuda-support.rq; ROCm: AMD's official Linux support list per release), with the SDK's
    newest release in the KB to grade it by."""
    if not gpus:
        return {}
    # plain patterns joined here: the engine took 2-4 s to join them on the 479-GPU catalog
    releases: dict[str, tuple[str, str, str, int]] = {}  # release -> SDK IRI, SDK label, its label, version
    for r, s, sdk, rel, v in run(
        PREFIXES
        + """SELECT ?r ?s ?sdk ?rel ?v WHERE { ?r kbq:releaseOf ?s ; kbq:versionMajor ?maj ; kbq:versionMinor ?min ;
  rdfs:label ?rel . ?s rdfs:label ?sdk . BIND(?maj * 1000 + ?min AS ?v) } ORDER BY DESC(?rel) DESC(?sdk)"""
    ).rows:
        releases[str(r)] = (str(s), str(sdk), str(rel), int(v))  # type: ignore[arg-type]  # the first labels win
    newest: dict[str, tuple[int, str]] = {}  # SDK -> its newest release in the KB (version, label)
    for s, _sdk, rel, v in releases.values():
        known = newest.get(s)
        if known is None or v > known[0] or (v == known[0] and rel < known[1]):  # ties: the first label
            newest[s] = (v, rel)
    values = " ".join(terms.iri(g) for g in gpus)
    rows = sorted(
        (str(gpu), sdk, -v, rel, s)
        for r, gpu in run(PREFIXES + f"SELECT ?r ?gpu WHERE {{ VALUES ?gpu {{ {values} }} ?r kbq:supportsGpu ?gpu }}").rows
        if str(r) in releases
        for s, sdk, rel, v in [releases[str(r)]]
    )
    out: dict[str, list[Stack]] = {}
    for gpu, sdk, minus_version, release, sdk_iri in rows:
        found = out.setdefault(gpu, [])
        if not any(x.sdk == sdk for x in found):  # the newest supporting release comes first
            top, label = newest[sdk_iri]
            found.append(Stack(sdk, release, -minus_version, label, top))
    return out


def software(found: list[Stack] | None) -> str:
    """The card's software stack, graded: supported by its SDK's newest release in the KB; only by
    older releases (dropped since); or on no official support list in the KB."""
    if not found:
        return (
            "software (caveat): on no official support list in the KB"
            " (no CUDA Toolkit, PyTorch, ROCm or Intel Extension for PyTorch release lists it)"
        )
    current = [x for x in found if x.current]
    dropped = "; ".join(f"dropped by {x.newest} (supported up to {x.release})" for x in found if not x.current)
    if current:
        text = "software: " + ", ".join(f"{x.release} supports it" for x in current) + " (the newest releases in the KB)"
        return text + (f"; caveat: {dropped}" if dropped else "")
    return "software (caveat): " + dropped


def weaker(found: list[Stack] | None) -> bool:
    """A stack to caveat: on no official support list, or only on releases older than the newest."""
    return not found or not any(x.current for x in found)


def _thermal(cooling: Value, box: int | None) -> str:
    """A caveat for open-air cards where several share a box (the sourced placement guidance)."""
    kinds = {c.strip() for c in str(cooling or "").split(",") if c.strip()}
    if box and box >= 4 and kinds and kinds <= {"open-air"}:
        return f"open-air cooler in a {box}-card box: Lambda recommends blower cards for multi-GPU workstations"
    return ""


def max_cards(run: Run) -> tuple[int, str]:
    """The stated default count limit for tiers, and why (kb/defaults.ttl)."""
    rows = run(
        PREFIXES
        + f"""SELECT ?value ?reason WHERE {{ ?d a kbq:ScenarioDefault ; kbq:defaultName {terms.string(DEFAULT_CARDS)} ;
  kbq:defaultValue ?value ; kbq:reason ?reason }} LIMIT 1"""
    ).rows
    if not rows:
        return 1, "one card (no default count in the KB)"
    value = rows[0][0]
    return (int(value) if isinstance(value, (int, float)) else 1), str(rows[0][1])


def _config(count: int, price: dict[str, Any]) -> dict[str, Any]:
    """A configuration's price: count x the card's (kbq.lang.evaluate.cost.cards_cost)."""
    from kbq.lang.evaluate.cost import cards_cost

    return {**price, "usd": round(cards_cost(price["usd"], count) or 0.0, 2), "per_card_usd": price["usd"]}


def _money(price: dict[str, Any] | None) -> str:
    if not price:
        return "no price in the KB"
    each = f" ({price['per_card_usd']:,.0f} each)" if price["usd"] != price["per_card_usd"] else ""
    return f"${price['usd']:,.0f}{each}, {price['kind']} {price['date'][:7]}"


def tiers(
    columns: list[str],
    rows: list[list[Value]],
    run: Run,
    *,
    limit_cards: int | None,
    first_rank: list[str],
    as_of: str | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The tiers of a ranking for a workload (rows in profile order, every candidate), and notes."""
    col = {c: i for i, c in enumerate(columns)}
    if "cards_needed" not in col or "gpu" not in col:
        return [], []
    default, why_default = max_cards(run)
    cap = limit_cards or default
    prices = card_prices(run, [str(r[col["gpu"]]) for r in rows], as_of)
    segment_at, score_at = col.get("segment"), col.get("score")

    def cards(row: list[Value]) -> int | None:
        n = row[col["cards_needed"]]
        return n if isinstance(n, int) and n <= cap else None

    def known_first(row: list[Value]) -> bool:
        return all(row[col[k]] is not None for k in first_rank if k in col)

    out: list[dict[str, Any]] = []

    supported = stacks(run, [str(r[col["gpu"]]) for r in rows])
    cooling_at = col.get("cooling")

    def add(tier: str, row: list[Value] | None, price: dict[str, Any] | None, why: str) -> None:
        if row is None:
            return
        n = cards(row)
        notes = [why, software(supported.get(str(row[col["gpu"]])))]
        if cooling_at is not None:
            notes.append(_thermal(row[cooling_at], limit_cards))
        why_all = "; ".join(x for x in notes if x)
        out.append({"tier": tier, "gpu": str(row[col["name"]]), "count": n, "price": price, "why": why_all})

    groups: list[tuple[str, list[list[Value]]]] = [("", rows)]
    if segment_at is not None:
        for segment in dict.fromkeys(str(r[segment_at]) for r in rows if r[segment_at]):
            groups.append((f" {segment}", [r for r in rows if r[segment_at] == segment]))
    for suffix, group in groups:
        fitting = [r for r in group if cards(r) is not None]
        for used in (False, True):
            priced = [
                (_config(cards(r) or 1, p), r) for r in fitting if (p := prices.get((str(r[col["gpu"]]), used))) is not None
            ]
            if priced:
                price, row = min(priced, key=lambda pr: pr[0]["usd"])
                n = cards(row)
                add(
                    f"cheapest{suffix}" + (" (used)" if used else " (new)"),
                    row,
                    price,
                    f"{n} card(s) hold it; " + _money(price),
                )
        if score_at is not None:
            valued = [
                (float(r[score_at] or 0) / _config(cards(r) or 1, p)["usd"], _config(cards(r) or 1, p), r)
                for r in fitting
                if known_first(r) and (p := prices.get((str(r[col["gpu"]]), False))) is not None and p["usd"] > 0
            ]
            if valued:
                _v, price, row = max(valued, key=lambda v: v[0])
                add(f"best value{suffix}", row, price, f"highest profile score per dollar; {_money(price)}")
        if fitting:
            row = fitting[0]
            new = prices.get((str(row[col["gpu"]]), False))
            config = _config(cards(row) or 1, new) if new else None
            add(f"fastest{suffix}", row, config, f"first by the profile; {_money(config)}")
    notes = [f"tiers: configurations of up to {cap} card(s)" + ("" if limit_cards else f" ({why_default})")]
    return out, notes


CLOUD_TIER = "cloud (cheapest)"


def cloud(plan_data: object, run: Run) -> dict[str, Any] | None:
    """The cloud tier: the lowest-rate instance that holds the workload, by the `instances` form's
    own plan and evaluation (kbq.lang.gpu.evaluated.evaluate_instances), with its hourly rate,
    provider and the rate's date; None when no instance in the KB holds it."""
    if not isinstance(plan_data, (list, tuple)):
        return None
    from kbq.lang.gpu.evaluated import evaluate_instances
    from kbq.lang.plan import Plan

    plan = Plan.from_data(tuple(plan_data))
    rows, columns = evaluate_instances(plan, run(plan.sparql).rows)
    if not rows:
        return None
    col = {c: i for i, c in enumerate(columns)}
    first = rows[0]  # the plan orders by hourly rate, lowest first; evaluation kept those that fit

    def at(name: str) -> Value:
        return first[col[name]] if name in col else None

    rate, per_gpu = at("price"), at("per_gpu_hour")
    price = (
        {"usd": float(rate), "kind": "on-demand rate", "per": "hour", "date": str(at("price_date") or ""),
         "per_card_usd": float(per_gpu) if isinstance(per_gpu, (int, float)) else None}
        if isinstance(rate, (int, float))
        else None
    )  # fmt: skip
    tokens = at("tokens_per_s")
    speed = f"; about {tokens:,.0f} tokens/s decode (estimate)" if isinstance(tokens, (int, float)) else ""
    rate_text = f"${rate:,.2f}/h on demand, {str(at('price_date') or '')[:7]}" if isinstance(rate, (int, float)) else "no rate"
    return {
        "tier": CLOUD_TIER,
        "gpu": str(at("gpu_model") or ""),
        "count": at("gpus") if isinstance(at("gpus"), int) else None,
        "price": price,
        "why": f"{at('name')} on {at('provider')}: the lowest hourly rate in the KB among instances that hold it;"
        f" {rate_text}{speed}",
        "instance": str(at("name") or ""),
        "provider": str(at("provider") or ""),
    }
