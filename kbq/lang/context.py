"""What every part of the compiler shares for one question: the catalog, the word interpreter,
the executor for small look-ups, and the question text (for errors with a column)."""

from __future__ import annotations

from typing import NamedTuple

from kbq.errors import QueryError
from kbq.lang.catalog import Catalog, Run
from kbq.lang.words import Words
from kbq.store.executor import Value


class Constraint(NamedTuple):
    """A condition on ?gpu (a self-contained SPARQL expression) and its words."""

    text: str
    sparql: str


class Status(NamedTuple):
    """A condition that holds when a row's figures are verified; its note says what is not."""

    note: str
    sparql: str


class Context:
    def __init__(self, catalog: Catalog, run: Run, text: str) -> None:
        self.cat = catalog
        self.run = run
        self.text = text
        self.words = Words(catalog, text)
        self.lookups: list[str] = []  # the fact queries run while compiling (shown for computed answers)
        self.as_of: str | None = None  # first day after the question's 'as of' date: prices are read at it
        self._seen: dict[str, list[list[Value]]] = {}  # one question reads one KB: a fact query runs once

    def error(self, message: str, column: int | None, **extra: list[str]) -> QueryError:
        return QueryError(message, query=self.text, column=column, **extra)

    def rows(self, sparql: str) -> list[list[Value]]:
        from kbq.lang.catalog import PREFIXES

        seen = self._seen.get(sparql)
        if seen is None:  # a reverse question sizes hundreds of models with the same defaults and constants
            self.lookups.append(PREFIXES + sparql)
            seen = self._seen[sparql] = self.run(PREFIXES + sparql).rows
        return [list(row) for row in seen]
