"""Money: the one price rule and what is computed from a price (cards x price, TCO, $/Mtok).

PRICE_RULE (what 'the price' of a card is, in every form): of its new-card price observations
(every kind but used prices), the ones observed before the question's 'as of' date (today when none),
the latest date, and on that date the lowest. The KB applies it for 'today' in
ontology/rules/current-price.rq; kbq.lang.gpu.columns.dated_pattern applies it at a date. A price is
used only when a question asks for money (a price column, a ceiling, cheapest, value, TCO)."""

from __future__ import annotations

from typing import NamedTuple

PRICE_RULE = "price: the lowest new-card price (used prices excluded) on the latest date observed before the question's date"
HOURS_PER_YEAR = 24 * 365


class Tco(NamedTuple):
    """Total cost of ownership inputs: electricity $/kWh, years, utilisation, PUE."""

    usd_per_kwh: float
    years: float
    duty: float
    pue: float

    @property
    def hours(self) -> float:
        return HOURS_PER_YEAR * self.years * self.duty

    def formula(self) -> str:
        return (
            f"tco_usd = cards x (price + TDP/1000 kW x {self.hours:,.0f} h ({self.years:g} years x {HOURS_PER_YEAR} h x"
            f" {self.duty:.0%}) x PUE {self.pue:g} x ${self.usd_per_kwh:g}/kWh)"
        )


def tco(t: Tco, price: float | None, tdp_w: float | None, cards: int | None) -> float | None:
    """cards x (price + board power x hours x PUE x $/kWh); None when a figure is unknown."""
    if price is None or tdp_w is None or cards is None:
        return None
    return cards * (price + tdp_w / 1000.0 * t.hours * t.pue * t.usd_per_kwh)


def cards_cost(price: float | None, cards: int | None) -> float | None:
    """What the cards a workload needs cost: cards x price."""
    if price is None or cards is None:
        return None
    return price * cards


def usd_per_mtok(usd_per_hour: float | None, tokens_per_s: float | None) -> float | None:
    """Dollars per million output tokens at an hourly rate."""
    if usd_per_hour is None or not tokens_per_s:
        return None
    return usd_per_hour / (tokens_per_s * 3600.0) * 1_000_000.0
