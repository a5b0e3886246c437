"""The hardware a scenario runs on: an accelerator record whose figures may be unknown.

A named GPU fills every figure the KB sources; a memory budget ('on a 24 gb gpu') is an
Accelerator with only `memory_gb` (iri None): evaluation reads what is there and says what is not.
Plain data (a NamedTuple of numbers and strings), so a cached plan can hold one."""

from __future__ import annotations

from typing import NamedTuple


class Price(NamedTuple):
    """The one price of a card at a date (see evaluate.cost.PRICE_RULE): value, kind and date."""

    usd: float
    kind: str  # the observation's kind label (e.g. 'launch MSRP', 'street price')
    date: str  # ISO date it was observed


class Accelerator(NamedTuple):
    label: str
    iri: str | None = None  # None: a memory budget, not a card in the KB
    memory_gb: float | None = None
    bandwidth_gbps: float | None = None
    rates: dict[str, float] = {}  # noqa: RUF012  # query key -> dense TFLOPS (tensor, fp8 ...)
    interconnect: str | None = None
    link_gbps: float | None = None
    tdp_w: float | None = None
    price: Price | None = None

    @property
    def is_budget(self) -> bool:
        return self.iri is None


def budget(memory_gb: float, label: str | None = None) -> Accelerator:
    """A memory budget as hardware: 'a 24 GB GPU', every other figure unknown."""
    return Accelerator(label or f"a {memory_gb:g} GB GPU", None, memory_gb)
