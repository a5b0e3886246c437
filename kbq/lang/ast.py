"""The kbq AST: small frozen dataclasses that keep source columns (1-based) for errors."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Name:
    text: str
    column: int


@dataclass(frozen=True)
class Workload:
    name: Name
    of: Name | None = None  # 'inference of bert': name=inference, of=bert


@dataclass(frozen=True)
class Placement:
    dense: bool
    cards: int | None
    chassis: str
    column: int


@dataclass(frozen=True)
class Comparison:
    key: Name
    op: str
    value: Name


@dataclass(frozen=True)
class Membership:
    key: Name
    negated: bool
    values: tuple[Name, ...]


@dataclass(frozen=True)
class Not:
    expr: Expr


@dataclass(frozen=True)
class And:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Expr, ...]


Expr = Comparison | Membership | Not | And | Or


@dataclass(frozen=True)
class Order:
    key: Name
    descending: bool | None


@dataclass(frozen=True)
class GpuQuestion:
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


@dataclass(frozen=True)
class ListQuestion:
    kind: str
    target: Name | None


@dataclass(frozen=True)
class RequirementsQuestion:
    workload: Workload
    using: Name | None = None


@dataclass(frozen=True)
class DescribeQuestion:
    name: Name


@dataclass(frozen=True)
class CompareQuestion:
    names: tuple[Name, ...]


@dataclass(frozen=True)
class WhyQuestion:
    gpu: Name
    question: GpuQuestion


Question = GpuQuestion | ListQuestion | RequirementsQuestion | DescribeQuestion | CompareQuestion | WhyQuestion
