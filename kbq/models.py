"""Pydantic models of what the library returns."""

from __future__ import annotations

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


class Answer(_Frozen):
    """The answer to a kbq question: a table, the SPARQL that produced it, and why."""

    question: str
    kind: str
    columns: list[str]
    rows: list[list[Value]]
    units: dict[str, str] = Field(default_factory=dict)
    sparql: str
    explanation: list[str] = Field(default_factory=list)
    removed: list[list[Value]] = Field(default_factory=list)
    extra: dict[str, object] = Field(default_factory=dict)
    read_as: str | None = None  # the canonical question a sentence was read as; None when asked as written


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
    kind: str
    lines: list[EstimateLine]
    explanation: list[str] = Field(default_factory=list)
    chart: dict[str, object] = Field(default_factory=dict)
