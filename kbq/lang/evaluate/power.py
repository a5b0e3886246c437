"""Power: what a per-card power limit changes (the power-supply check's draw, and speed only where a
sourced measurement covers the card at that limit)."""

from __future__ import annotations

from kbq.lang import terms
from kbq.lang.context import Context


def power_limit_note(ctx: Context, limit: float, gpu: str | None = None) -> str:
    """What a power limit changes: each card's draw in the power-supply check, and speed only where
    a sourced measurement covers the card at that limit (kbq:PowerLimitMeasurement); elsewhere kbq
    says it does not estimate speed at that limit (no formula relates power to speed)."""
    where = f"kbq:limitedGpu {terms.iri(gpu)} ;" if gpu else "kbq:limitedGpu ?g ;"
    rows = ctx.rows(
        f"""SELECT ?label ?at ?share ?tdp WHERE {{ ?m a kbq:PowerLimitMeasurement ; {where} kbq:powerLimit ?at ;
  kbq:throughputShareAtLeast ?share ; rdfs:label ?label . ?m kbq:limitedGpu ?c . ?c kbq:tdp ?tdp .
  FILTER({terms.double(limit)} >= ?at && {terms.double(limit)} <= ?tdp) }} ORDER BY DESC(?at) LIMIT 1"""
    )
    text = f"power limit: {limit:g} W per card lowers each card's draw in the power-supply check"
    if rows:
        label, at, share, tdp = rows[0]
        return text + (
            f"; speed: at least {float(share):.0%} of stock-power throughput between {float(at):g} W and {float(tdp):g} W,"  # type: ignore[arg-type]
            f" measured for {label} (other cards: not estimated)"
        )
    return text + "; speed at that limit is not estimated (no measurement in the KB covers it)"
