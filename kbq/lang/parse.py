"""Lark parse of a kbq question into the AST, with errors that show the column."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from kbq.errors import KbqSyntaxError
from kbq.lang import ast
from kbq.store import resources

MAX_QUESTION = 2000
MAX_DIGITS = 15
"""Digits a number in a question may have (before and after the point): a float holds 15 exactly,
and past it a 400-digit number became an infinity deep in the compiler (issue 22, L-3)."""
_DIGITS = re.compile(r"\d+")

# Friendly names for terminals in "expected ..." lists.
_TERMINAL_WORDS = {
    "LINK": "for",
    "FOR": "for",
    "OF": "of",
    "ON": "on",
    "IN": "in",
    "WITH": "with",
    "WHERE": "where",
    "AS": "as of",
    "ORDER": "order by",
    "BY": "by",
    "LIMIT": "limit",
    "USING": "using",
    "AT": "at",
    "UNDER": "under",
    "AND": "and",
    "OR": "or",
    "NOT": "not",
    "WORD": "a name",
    "NUMBER": "a number",
    "DATE": "a date (YYYY-MM)",
    "COMPARATOR": "a comparison (= != < <= > >=)",
    "LPAR": "(",
    "RPAR": ")",
    "COMMA": ",",
    "SLASH": "/",
    "ASC": "asc",
    "DESC": "desc",
    "VS": "vs",
    "$END": "end of question",
    "A": "a",
    "TO": "to",
    "TRAIN": "train",
    "RUN": "run",
    "MANY": "many",
}
_WORD_KINDS = {
    "WORD": "word",
    "NUMBER": "number",
    "DATE": "date",
    "COMPARATOR": "comparator",
    "AND": "and",
    "OR": "or",
    "NOT": "not",
    "A": "a",
    "AN": "a",
    "SLASH": "slash",
}


@lru_cache(maxsize=1)
def parser() -> Lark:
    return Lark.open(
        resources.grammar_path(),
        parser="lalr",
        lexer="contextual",
        cache=True,
        propagate_positions=True,
        start=["start", "expr_start"],
    )


def _checked(token: Token) -> Token:
    if token.type == "NUMBER" and any(len(run) > MAX_DIGITS for run in _DIGITS.findall(str(token))):
        raise KbqSyntaxError(f"'{str(token)[:20]}...' has more than {MAX_DIGITS} digits: too large a number", column=token.column)
    return token


def _word(token: Token) -> ast.Word:
    _checked(token)
    return ast.Word(str(token), token.column or 1, _WORD_KINDS.get(token.type, "punct"))


def _phrase(items: list[Any]) -> ast.Phrase:
    return ast.Phrase(tuple(_word(t) for t in items if isinstance(t, Token)))


def _clauses(items: list[Any]) -> tuple[ast.Clause, ...]:
    return tuple(i for i in items if isinstance(i, (ast.Where, ast.Loose, ast.AsOf, ast.Order, ast.Limit, ast.Using)))


class _Link(str):
    """The word joining a subject to its target (for / of / by)."""


@v_args(inline=False)
class _ToAst(Transformer[Token, Any]):
    def start(self, items: list[Any]) -> Any:
        return items[0]

    def expr_start(self, items: list[Any]) -> Any:
        return items[0]

    def phrase(self, items: list[Token]) -> ast.Phrase:
        return _phrase(items)

    def value(self, items: list[Token]) -> ast.Phrase:
        return _phrase(items)

    def key(self, items: list[Token]) -> ast.Word:
        return _word(items[0])

    def ratio(self, items: list[Any]) -> ast.Ratio:
        keys = [i for i in items if isinstance(i, ast.Word)]
        return ast.Ratio(keys[0], keys[1] if len(keys) > 1 else None)

    def target(self, items: list[Any]) -> ast.Target:
        phrases = [i for i in items if isinstance(i, ast.Phrase)]
        return ast.Target(phrases[0], phrases[1] if len(phrases) > 1 else None)

    # --- clauses -----------------------------------------------------------------------------

    def where(self, items: list[Any]) -> ast.Where:
        return ast.Where(items[1], items[0].column or 1)

    def _loose(self, items: list[Any]) -> ast.Loose:
        head = items[0]
        keyword = {"below": "under"}.get(str(head).lower(), str(head).lower())
        return ast.Loose(keyword, _phrase(items[1:]), head.column or 1)

    with_ = place = at = under = for_clause = _loose

    def as_of(self, items: list[Token]) -> ast.AsOf:
        return ast.AsOf(_word(items[2]))

    def direction(self, items: list[Token]) -> bool:
        return items[0].type.startswith("DESC")

    def link(self, items: list[Token]) -> _Link:
        word = str(items[0]).lower()
        return _Link("for" if word in ("to", "can") else word)  # 'to run X' and 'can run X' mean 'for X'

    def which(self, _items: list[Token]) -> None:
        return None

    def order(self, items: list[Any]) -> ast.Order:
        direction = next((i for i in items if isinstance(i, bool)), None)
        return ast.Order(items[2], direction)

    def limit(self, items: list[Token]) -> ast.Limit:
        token = items[1]
        if not str(token).isdigit():
            raise KbqSyntaxError(f"'{token}' is not a whole number", column=token.column)
        return ast.Limit(int(str(_checked(token))), token.column or 1)

    def using(self, items: list[Any]) -> ast.Using:
        return ast.Using(items[1])

    # --- conditions --------------------------------------------------------------------------

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
        values = tuple(i for i in items[1:] if isinstance(i, ast.Phrase))
        return ast.Membership(items[0], negated, values)

    # --- questions ---------------------------------------------------------------------------

    def subject_question(self, items: list[Any]) -> ast.SubjectQuestion:
        subject = next(i for i in items if isinstance(i, ast.Phrase))
        link = next((str(i) for i in items if isinstance(i, _Link)), None)
        target = next((i for i in items if isinstance(i, ast.Target)), None)
        return ast.SubjectQuestion(subject, link, target, _clauses(items))

    def describe_question(self, items: list[Any]) -> ast.DescribeQuestion:
        return ast.DescribeQuestion(items[1])

    def compare_question(self, items: list[Any]) -> ast.CompareQuestion:
        target = next((i for i in items if isinstance(i, ast.Target)), None)
        return ast.CompareQuestion(tuple(i for i in items if isinstance(i, ast.Phrase)), _clauses(items), target)

    versus_question = compare_question  # 'rtx 4090 vs rtx 3090': compare without the word

    def why_question(self, items: list[Any]) -> ast.WhyQuestion:
        target = next(i for i in items if isinstance(i, ast.Target))
        return ast.WhyQuestion(items[1], target, _clauses(items))

    def requirements_question(self, items: list[Any]) -> ast.RequirementsQuestion:
        target = next(i for i in items if isinstance(i, ast.Target))
        return ast.RequirementsQuestion(target, _clauses(items))

    def _workload(self, form: str, items: list[Any], hardware: ast.Phrase | None = None) -> ast.WorkloadQuestion:
        target = next(i for i in items if isinstance(i, ast.Target))
        return ast.WorkloadQuestion(form, target, _clauses(items), hardware)

    def memory_question(self, items: list[Any]) -> ast.WorkloadQuestion:
        return self._workload("memory", items)

    def speed_question(self, items: list[Any]) -> ast.WorkloadQuestion:
        return self._workload("speed", items)

    def time_question(self, items: list[Any]) -> ast.WorkloadQuestion:
        return self._workload("time", items)

    def fit_question(self, items: list[Any]) -> ast.WorkloadQuestion:
        return self._workload("memory", items)  # 'does MODEL fit on GPU': the memory answer with its verdict

    def run_question(self, items: list[Any]) -> ast.WorkloadQuestion:
        """'can GPU run MODEL': the memory answer for MODEL on GPU."""
        gpu = next(i for i in items if isinstance(i, ast.Phrase))
        question = self._workload("memory", items)
        return question._replace(clauses=(ast.Loose("on", gpu, gpu.column), *question.clauses))

    def reverse_question(self, items: list[Any]) -> ast.ReverseQuestion:
        return ast.ReverseQuestion(items[0], _clauses(items))

    def how_many_question(self, items: list[Any]) -> ast.WorkloadQuestion:
        hardware = next(i for i in items if isinstance(i, ast.Phrase))
        return self._workload("how_many", items, hardware)


setattr(_ToAst, "with", _ToAst._loose)


def _expected(exc: UnexpectedInput) -> list[str]:
    names = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or set()
    return sorted({_TERMINAL_WORDS.get(n, n.lower()) for n in names if not n.startswith("__")})


def parse(text: str, *, start: str = "start", offset: int = 0, whole: str | None = None) -> Any:
    """Parse a question (or, with start='expr_start', a condition found at column offset+1 of
    `whole`); raise KbqSyntaxError with the column and what was expected."""
    shown = whole if whole is not None else text
    if len(text) > MAX_QUESTION:
        raise KbqSyntaxError(f"question is longer than {MAX_QUESTION} characters", query=shown[:80] + "...")
    if not text.strip():
        raise KbqSyntaxError("empty question", query=shown, column=1, expected=["gpu", "describe", "compare", "memory"])
    try:
        tree = parser().parse(text, start=start)
        return _ToAst().transform(tree)
    except UnexpectedToken as exc:
        found = "end of question" if exc.token.type == "$END" else f"'{exc.token}'"
        column = exc.column if isinstance(exc.column, int) and exc.column > 0 else len(text) + 1
        if exc.token.type == "$END":
            column = len(text.rstrip()) + 1
        raise KbqSyntaxError(f"unexpected {found}", query=shown, column=column + offset, expected=_expected(exc)) from None
    except UnexpectedCharacters as exc:
        raise KbqSyntaxError(
            # lark declares pos_in_stream as None on UnexpectedInput; UnexpectedCharacters always sets an int
            f"unexpected character '{text[exc.pos_in_stream]}'",  # type: ignore[index]
            query=shown,
            column=exc.column + offset,
            expected=_expected(exc),
        ) from None
    except UnexpectedEOF as exc:
        raise KbqSyntaxError(
            "the question ends too early", query=shown, column=len(text) + 1 + offset, expected=_expected(exc)
        ) from None
    except VisitError as exc:  # a check inside the transformer failed
        inner = exc.orig_exc
        if isinstance(inner, KbqSyntaxError):
            raise KbqSyntaxError(inner.message, query=shown, column=(inner.column or 1) + offset) from None
        raise
