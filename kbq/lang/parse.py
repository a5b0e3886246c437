"""Lark parse of a kbq question into the AST, with errors that show the column."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from kbq.errors import KbqSyntaxError
from kbq.lang import ast
from kbq.store import resources

MAX_QUESTION = 2000

# Friendly names for terminals in "expected ..." lists.
_TERMINAL_WORDS = {
    "GPU_WORD": "gpu",
    "FOR": "for",
    "OF": "of",
    "ON": "on",
    "IN": "in",
    "WHERE": "where",
    "AS": "as",
    "ORDER": "order",
    "BY": "by",
    "LIMIT": "limit",
    "USING": "using",
    "AT": "at",
    "AND": "and",
    "OR": "or",
    "NOT": "not",
    "WORD": "a name",
    "NUMBER": "a number",
    "DATE": "a date (YYYY-MM)",
    "COMPARATOR": "a comparison (= != < <= > >=)",
    "CHASSIS": "chassis",
    "CARDS": "a card count (9-card)",
    "DENSE": "dense",
    "LPAR": "(",
    "RPAR": ")",
    "COMMA": ",",
    "ASC": "asc",
    "DESC": "desc",
    "VS": "vs",
    "$END": "end of question",
    "LIST_WORD": "frameworks",
    "BEST": "best",
    "TOP": "top",
    "A": "a",
    "AN": "an",
}


@lru_cache(maxsize=1)
def parser() -> Lark:
    return Lark.open(str(resources.grammar_file()), parser="lalr", lexer="contextual", cache=True, propagate_positions=True)


class _Clause(NamedTuple):
    """One clause of a GPU question (placement, where, order ...), before it is placed."""

    field: str
    value: Any


def _whole(token: Token) -> int:
    if not str(token).isdigit():
        raise KbqSyntaxError(f"'{token}' is not a whole number", column=token.column)
    return int(str(token))


def _name(tokens: list[Token]) -> ast.Name:
    return ast.Name(" ".join(str(t) for t in tokens), tokens[0].column or 1)


@v_args(inline=False)
class _ToAst(Transformer[Token, Any]):
    def start(self, items: list[Any]) -> Any:
        return items[0]

    def name(self, items: list[Token]) -> ast.Name:
        return _name(items)

    def key(self, items: list[Token]) -> ast.Name:
        return _name(items)

    def value(self, items: list[Token]) -> ast.Name:
        return _name(items)

    def workload(self, items: list[Any]) -> ast.Workload:
        names = [i for i in items if isinstance(i, ast.Name)]
        return ast.Workload(names[0], names[1] if len(names) > 1 else None)

    def best(self, _items: list[Any]) -> _Clause:
        return _Clause("best", True)

    def top(self, items: list[Token]) -> _Clause:
        return _Clause("top", _whole(items[1]))

    def placement(self, items: list[Token]) -> _Clause:
        types = {t.type: t for t in items}
        cards = int(re.match(r"\d+", str(types["CARDS"])).group()) if "CARDS" in types else None  # type: ignore[union-attr]
        return _Clause("placement", ast.Placement("DENSE" in types, cards, str(types["CHASSIS"]).lower(), items[0].column or 1))

    def where(self, items: list[Any]) -> _Clause:
        return _Clause("where", items[1])

    def as_of(self, items: list[Token]) -> _Clause:
        return _Clause("as_of", _name([items[2]]))

    def order(self, items: list[Any]) -> _Clause:
        direction = None
        if len(items) > 3:
            direction = items[3].type == "DESC"
        return _Clause("order", ast.Order(items[2], direction))

    def limit(self, items: list[Token]) -> _Clause:
        return _Clause("limit", _whole(items[1]))

    def using(self, items: list[Any]) -> _Clause:
        return _Clause("using", items[1])

    def precision(self, items: list[Any]) -> _Clause:
        return _Clause("precision", items[1])

    def negation(self, items: list[Any]) -> ast.Not:
        return ast.Not(items[1])

    def and_expr(self, items: list[Any]) -> ast.And:
        return ast.And(tuple(i for i in items if not isinstance(i, Token)))

    def or_expr(self, items: list[Any]) -> ast.Or:
        return ast.Or(tuple(i for i in items if not isinstance(i, Token)))

    def comparison(self, items: list[Any]) -> ast.Comparison:
        return ast.Comparison(items[0], str(items[1]), items[2])

    def membership(self, items: list[Any]) -> ast.Membership:
        negated = any(isinstance(i, Token) and i.type == "NOT" for i in items)
        values = tuple(i for i in items[1:] if isinstance(i, ast.Name))
        return ast.Membership(items[0], negated, values)

    def gpu_question(self, items: list[Any]) -> ast.GpuQuestion:
        question = ast.GpuQuestion()
        for item in items:
            if isinstance(item, _Clause):
                field, value = item
                if getattr(question, field) not in (None, False):
                    raise KbqSyntaxError(f"'{field.replace('_', ' ')}' given twice")
                question = question._replace(**{field: value})
            elif isinstance(item, ast.Workload):
                question = question._replace(workload=item)
        return question

    def list_question(self, items: list[Any]) -> ast.ListQuestion:
        target = items[-1] if isinstance(items[-1], ast.Name) else None
        return ast.ListQuestion(str(items[0]).lower(), target)

    def requirements_question(self, items: list[Any]) -> ast.RequirementsQuestion:
        using = next((i.value for i in items if isinstance(i, _Clause)), None)
        return ast.RequirementsQuestion(items[2], using)

    def describe_question(self, items: list[Any]) -> ast.DescribeQuestion:
        return ast.DescribeQuestion(items[1])

    def compare_question(self, items: list[Any]) -> ast.CompareQuestion:
        return ast.CompareQuestion(tuple(i for i in items if isinstance(i, ast.Name)))

    def why_question(self, items: list[Any]) -> ast.WhyQuestion:
        gpu = items[1]
        question = self.gpu_question([i for i in items[3:] if not isinstance(i, Token)])
        return ast.WhyQuestion(gpu, question)


def _expected(exc: UnexpectedInput) -> list[str]:
    names = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
    return sorted({_TERMINAL_WORDS.get(n, n.lower()) for n in names})


def parse(text: str) -> ast.Question:
    """Parse a question; raise KbqSyntaxError with the column and what was expected."""
    if len(text) > MAX_QUESTION:
        raise KbqSyntaxError(f"question is longer than {MAX_QUESTION} characters", query=text[:80] + "...")
    if not text.strip():
        raise KbqSyntaxError("empty question", query=text, column=1, expected=["gpu", "describe", "compare"])
    try:
        tree = parser().parse(text)
        return _ToAst().transform(tree)
    except UnexpectedToken as exc:
        found = "end of question" if exc.token.type == "$END" else f"'{exc.token}'"
        column = exc.column if isinstance(exc.column, int) and exc.column > 0 else len(text) + 1
        if exc.token.type == "$END":
            column = len(text.rstrip()) + 1
        raise KbqSyntaxError(f"unexpected {found}", query=text, column=column, expected=_expected(exc)) from None
    except UnexpectedCharacters as exc:
        raise KbqSyntaxError(
            # lark declares pos_in_stream as None on UnexpectedInput; UnexpectedCharacters always sets an int
            f"unexpected character '{text[exc.pos_in_stream]}'",  # type: ignore[index]
            query=text,
            column=exc.column,
            expected=_expected(exc),
        ) from None
    except UnexpectedEOF as exc:
        raise KbqSyntaxError("the question ends too early", query=text, column=len(text) + 1, expected=_expected(exc)) from None
    except VisitError as exc:  # a check inside the transformer failed
        inner = exc.orig_exc
        if isinstance(inner, KbqSyntaxError):
            raise KbqSyntaxError(inner.message, query=text, column=inner.column or 1) from None
        raise
