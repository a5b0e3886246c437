"""The kbq AST: small immutable records (NamedTuples: cheaper at import than frozen dataclasses,
which matters for a cold `kbq` call) that keep source columns (1-based) for errors.

The grammar knows structure only, so most of the AST is phrases: runs of words whose meaning
(a kind, a workload, a chassis, a precision, a setting) the compiler finds in the KB."""

from __future__ import annotations

from typing import NamedTuple


class Word(NamedTuple):
    text: str
    column: int
    kind: str = "word"  # word | number | date | comparator | and | or | not | a | slash | punct


class Phrase(NamedTuple):
    words: tuple[Word, ...]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def column(self) -> int:
        return self.words[0].column if self.words else 1

    @property
    def end(self) -> int:
        """Column just after the last word."""
        last = self.words[-1]
        return last.column + len(last.text)

    def slice(self, start: int, stop: int | None = None) -> Phrase:
        return Phrase(self.words[start:stop])


# Kept as aliases: a name and a value are phrases.
Name = Phrase


class Target(NamedTuple):
    phrase: Phrase
    of: Phrase | None = None  # 'inference of bert': phrase=inference, of=bert


class Ratio(NamedTuple):
    key: Word
    per: Word | None = None  # 'tensor / price'

    @property
    def text(self) -> str:
        return self.key.text + (f" / {self.per.text}" if self.per else "")

    @property
    def column(self) -> int:
        return self.key.column


class Comparison(NamedTuple):
    left: Ratio
    op: str
    value: Phrase


class Membership(NamedTuple):
    key: Word
    negated: bool
    values: tuple[Phrase, ...]


class Not(NamedTuple):
    expr: Expr


class And(NamedTuple):
    items: tuple[Expr, ...]


class Or(NamedTuple):
    items: tuple[Expr, ...]


Expr = Comparison | Membership | Not | And | Or


# --- clauses ---------------------------------------------------------------------------------


class Where(NamedTuple):
    expr: Expr
    column: int


class Loose(NamedTuple):
    """A `with`, `on`/`in`, `at`, `under` or (in a training time) `for` clause: its keyword and the words after it."""

    keyword: str  # with | on | in | at | under | for
    words: Phrase
    column: int


class AsOf(NamedTuple):
    value: Word


class Order(NamedTuple):
    ratio: Ratio
    descending: bool | None


class Limit(NamedTuple):
    count: int  # type: ignore[assignment]  # a field named like tuple.count
    column: int


class Using(NamedTuple):
    name: Phrase


Clause = Where | Loose | AsOf | Order | Limit | Using


# --- questions -------------------------------------------------------------------------------


class SubjectQuestion(NamedTuple):
    """'[which] SUBJECT [for|of|by TARGET] CLAUSES': GPUs, lists, instances."""

    subject: Phrase
    link: str | None = None
    target: Target | None = None
    clauses: tuple[Clause, ...] = ()


class DescribeQuestion(NamedTuple):
    name: Phrase


class CompareQuestion(NamedTuple):
    names: tuple[Phrase, ...]
    clauses: tuple[Clause, ...] = ()
    target: Target | None = None  # 'compare rtx 4090 and rtx 3090 for llama 3 8b inference'


class WhyQuestion(NamedTuple):
    gpu: Phrase
    target: Target
    clauses: tuple[Clause, ...] = ()


class RequirementsQuestion(NamedTuple):
    target: Target
    clauses: tuple[Clause, ...] = ()


class WorkloadQuestion(NamedTuple):
    """memory / speed / time-to-train / how-many questions about one workload."""

    form: str  # memory | speed | time | how_many
    target: Target
    clauses: tuple[Clause, ...] = ()
    hardware: Phrase | None = None  # how many HARDWARE for ...


class ReverseQuestion(NamedTuple):
    """'models that fit on HARDWARE [at FORMAT] [with SETTINGS]'; 'largest model for HARDWARE'."""

    subject: Phrase
    clauses: tuple[Clause, ...] = ()
    hardware: Phrase | None = None  # 'largest model for rtx 3090': the hardware after 'for'
    largest: bool = False


Question = (
    ReverseQuestion | SubjectQuestion | DescribeQuestion | CompareQuestion | WhyQuestion | RequirementsQuestion | WorkloadQuestion
)
