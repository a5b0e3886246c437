"""The kbq AST: small immutable records (NamedTuples: cheaper to create at import than frozen
dataclasses, which matters for a cold `kbq` call) that keep source columns (1-based) for errors."""

from __future__ import annotations

from typing import NamedTuple


class Name(NamedTuple):
    text: str
    column: int


class Workload(NamedTuple):
    name: Name
    of: Name | None = None  # 'inference of bert': name=inference, of=bert


class Placement(NamedTuple):
    dense: bool
    cards: int | None
    chassis: str
    column: int


class Comparison(NamedTuple):
    key: Name
    op: str
    value: Name


class Membership(NamedTuple):
    key: Name
    negated: bool
    values: tuple[Name, ...]


class Not(NamedTuple):
    expr: Expr


class And(NamedTuple):
    items: tuple[Expr, ...]


class Or(NamedTuple):
    items: tuple[Expr, ...]


Expr = Comparison | Membership | Not | And | Or


class Order(NamedTuple):
    key: Name
    descending: bool | None


class GpuQuestion(NamedTuple):
    best: bool = False
    top: int | None = None
    workload: Workload | None = None
    placement: Placement | None = None
    where: Expr | None = None
    as_of: Name | None = None
    order: Order | None = None
    limit: int | None = None
    using: Name | None = None
    precision: Name | None = None


class ListQuestion(NamedTuple):
    kind: str
    target: Name | None


class RequirementsQuestion(NamedTuple):
    workload: Workload
    using: Name | None = None


class DescribeQuestion(NamedTuple):
    name: Name


class CompareQuestion(NamedTuple):
    names: tuple[Name, ...]


class WhyQuestion(NamedTuple):
    gpu: Name
    question: GpuQuestion


Question = GpuQuestion | ListQuestion | RequirementsQuestion | DescribeQuestion | CompareQuestion | WhyQuestion
