"""Safe SPARQL terms: every IRI and literal the compiler emits goes through here, never raw
user text."""

from __future__ import annotations

import re

import pyoxigraph as ox

_IRI_OK = re.compile(r'^[^\s<>"{}|^`\\]+$')


def iri(value: str) -> str:
    if not _IRI_OK.match(value):
        raise ValueError(f"not a safe IRI: {value!r}")
    return f"<{value}>"


def string(value: str) -> str:
    return str(ox.Literal(value))


def decimal(value: float | int) -> str:
    text = format(float(value), ".10g")
    if "e" in text or "E" in text:
        text = format(float(value), "f")
    if "." not in text:
        text += ".0"
    return f'"{text}"^^<http://www.w3.org/2001/XMLSchema#decimal>'


def integer(value: int) -> str:
    return f'"{int(value)}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def date(value: str) -> str:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError(f"not a date: {value!r}")
    return f'"{value}"^^<http://www.w3.org/2001/XMLSchema#date>'


def boolean(value: bool) -> str:
    return "true" if value else "false"


def double(value: float | int) -> str:
    """An xsd:double literal (engine-neutral: no integer division, no 64-bit integer overflow)."""
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"not a finite number: {value!r}")
    return f'"{number!r}"^^<http://www.w3.org/2001/XMLSchema#double>'
