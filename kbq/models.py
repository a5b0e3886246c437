"""Pydantic models of what the library returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Value = str | int | float | bool | None


class _Frozen(BaseModel):
    # defer_build: the validation schema is built on first validation, not at import, so a
    # cold `.sparql()` (which constructs already-typed data) does not pay for it.
    model_config = ConfigDict(frozen=True, defer_build=True)


class SparqlResult(_Frozen):
    """A SPARQL answer: column names and rows of plain values (IRIs as strings)."""

    columns: list[str]
    rows: list[list[Value]]


class GPU(_Frozen):
    """A GPU with its specs keyed by the ontology's query keys (units in `units`)."""

    iri: str
    name: str
    specs: dict[str, Value] = Field(default_factory=dict)
    units: dict[str, str] = Field(default_factory=dict)
    cooling: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)


class Entity(_Frozen):
    """Anything in the KB, by name: its types, description and property values."""

    iri: str
    name: str
    types: list[str]
    comment: str | None = None
    properties: dict[str, list[Value]] = Field(default_factory=dict)
    sources: list[str] = Field(default_factory=list)


class Verdict(_Frozen):
    """Whether a workload fits the GPUs asked: `fits` is kbq.lang.evaluate's Evaluation.fits, true
    only for 'fits'. 'tight' is within the card's raw memory but over its usable share (which is
    why 'how many' asks one more card); 'cannot run': the GPU lacks the precision's compute path.
    Memory in GB per GPU."""

    status: Literal["fits", "tight", "does not fit", "cannot run"]
    fits: bool
    gpu: str
    gpus: int
    per_gpu_gb: float
    capacity_gb: float
    usable_gb: float
    headroom_gb: float


class Price(_Frozen):
    """A price with its kind (launch MSRP, street, used, list, reported) and the date observed."""

    usd: float  # for a tier: the whole configuration (count x per_card_usd)
    kind: str
    date: str | None = None
    source: str | None = None
    per_card_usd: float | None = None
    per: str | None = None  # 'hour' for a cloud rate (usd per hour); None: a purchase price


class Tier(_Frozen):
    """One pick of a ranking for a workload: which tier, the GPU, how many, the price, and why."""

    tier: str
    gpu: str
    count: int | None = None
    price: Price | None = None  # the cloud tier: the instance's on-demand rate per hour (per_card_usd: per GPU-hour)
    why: str = ""
    instance: str | None = None  # the cloud tier only: the instance type and its provider
    provider: str | None = None


class Answer(_Frozen):
    """The answer to a kbq question: a headline, a table, the SPARQL that produced it, and why.

    `headline` is the one line that answers; `verdict` (fit answers), `recommended` and `tiers`
    (rankings for a workload) and `numbers` (estimates, by name) are the same answer for programs."""

    question: str
    headline: str = ""
    kind: str
    columns: list[str]
    rows: list[list[Value]]
    units: dict[str, str] = Field(default_factory=dict)
    sparql: str
    explanation: list[str] = Field(default_factory=list)
    removed: list[list[Value]] = Field(default_factory=list)
    verdict: Verdict | None = None
    recommended: str | None = None
    tiers: list[Tier] = Field(default_factory=list)
    numbers: dict[str, Value] = Field(default_factory=dict)
    extra: dict[str, object] = Field(default_factory=dict)


class EstimateLine(_Frozen):
    """One line of a workload estimate: its value, the formula with its numbers, its sources."""

    part: str
    value: Value
    unit: str = ""
    per_gpu: Value = None
    formula: str = ""
    source: str = ""


class Estimate(_Frozen):
    """A memory, speed or training-time estimate: every line with its formula and sources.

    Estimates, not measurements: `explanation` states the assumptions, the verdict and, where
    the KB has one, the published figure it compares with."""

    question: str
    headline: str = ""
    kind: str
    lines: list[EstimateLine]
    explanation: list[str] = Field(default_factory=list)
    verdict: Verdict | None = None
    numbers: dict[str, Value] = Field(default_factory=dict)
    chart: dict[str, object] = Field(default_factory=dict)
