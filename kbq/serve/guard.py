"""Decide, before anything runs, whether a SPARQL request is a safe read-only query.

A real SPARQL tokenizer (comments, strings, IRIs, prefixed names and variables are whole
tokens) finds the query form, the dataset clauses and any keyword that would make the engine
open a URL or write: `SERVICE`, `LOAD` and every other update operation. pyoxigraph follows
`SERVICE` and `LOAD <http...>` with no option to stop it, so these are refused here. Text the
tokenizer cannot read is refused too (fail closed); the engine's parser then checks the rest.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import urljoin

from kbq.errors import SparqlError

FORMS = frozenset({"SELECT", "ASK", "CONSTRUCT", "DESCRIBE"})
UPDATES = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"})

_PN_CHARS_BASE = (
    r"A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F"
    r"\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF"
)
_PN_CHARS_U = _PN_CHARS_BASE + "_"
_PN_CHARS = _PN_CHARS_U + r"\-0-9\u00B7\u0300-\u036F\u203F-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_PREFIX = rf"[{_PN_CHARS_BASE}](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"
_PN_LOCAL = rf"(?:[{_PN_CHARS_U}:0-9]|{_PLX})(?:(?:[{_PN_CHARS}.:]|{_PLX})*(?:[{_PN_CHARS}:]|{_PLX}))?"

# One alternative per terminal, tried in this order at each position (the longest SPARQL
# terminals first). Names: the token kind.
_TOKEN = re.compile(
    "|".join(
        f"(?P<{name}>{pattern})"
        for name, pattern in [
            ("ws", r"[\x20\t\r\n]+"),
            ("comment", r"#[^\r\n]*"),
            ("iri", r"<[^<>\"{}|^`\\\x00-\x20]*>"),
            (
                "string",
                r"'''(?:(?:'|'')?(?:[^'\\]|\\[\s\S]))*'''"
                r'|"""(?:(?:"|"")?(?:[^"\\]|\\[\s\S]))*"""'
                r"|'(?:[^'\\\n\r]|\\.)*'"
                r'|"(?:[^"\\\n\r]|\\.)*"',
            ),
            ("var", rf"[?$][{_PN_CHARS_U}0-9][{_PN_CHARS_U}0-9\u00B7\u0300-\u036F\u203F-\u2040]*"),
            ("bnode", rf"_:[{_PN_CHARS_U}0-9](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"),
            ("pname", rf"(?:{_PN_PREFIX})?:(?:{_PN_LOCAL})?"),
            ("name", r"[A-Za-z_][A-Za-z0-9_]*"),
            ("number", r"[0-9]+\.[0-9]*[eE][+-]?[0-9]+|\.?[0-9]+[eE][+-]?[0-9]+|[0-9]*\.[0-9]+|[0-9]+"),
            ("langtag", r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*(?:--[A-Za-z]+)?"),
            ("punct", r"\^\^|\|\||&&|!=|<=|>=|<<|>>|\{\||\|\}|[{}()\[\],;.*/|^!=<>+\-?~]"),
            ("unreadable", r"[\s\S]"),
        ]
    )
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    offset: int


@dataclass(frozen=True)
class Checked:
    """What the guard learned about a query it accepts."""

    form: str  # SELECT, ASK, CONSTRUCT or DESCRIBE
    default_graphs: tuple[str, ...] = ()  # FROM IRIs
    named_graphs: tuple[str, ...] = ()  # FROM NAMED IRIs

    @property
    def has_dataset(self) -> bool:
        return bool(self.default_graphs or self.named_graphs)


class RefusedQuery(SparqlError):
    """A query this endpoint will not run (it would write, or reach outside the served graphs)."""


def _where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def tokenize(text: str) -> list[Token]:
    """The significant tokens (no whitespace or comments); raises RefusedQuery on unreadable text."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "unreadable":
            raise RefusedQuery(f"cannot read the query at {_where(text, match.start())}: unexpected {match.group()!r}")
        if kind != "ws" and kind != "comment":
            tokens.append(Token(kind or "", match.group(), match.start()))
    return tokens


def _unescape_local(local: str) -> str:
    return re.sub(r"\\(.)", r"\1", local)


def _graph_iri(token: Token, base: str | None, prefixes: dict[str, str], text: str) -> str:
    if token.kind == "iri":
        iri = token.text[1:-1]
        return urljoin(base, iri) if base else iri
    if token.kind == "pname":
        prefix, _, local = token.text.partition(":")
        if prefix not in prefixes:
            raise RefusedQuery(f"unknown prefix '{prefix}:' at {_where(text, token.offset)}")
        return prefixes[prefix] + _unescape_local(local)
    raise RefusedQuery(f"FROM must be followed by an IRI at {_where(text, token.offset)}")


def check_query(text: str, served_graphs: frozenset[str]) -> Checked:
    """Accept a read-only query over the served graphs, or raise RefusedQuery saying why.

    Queries up to 8 KiB are cached by text: clients repeat them, and nothing else matters."""
    return _check_cached(text, served_graphs) if len(text) <= 8192 else _check(text, served_graphs)


def _check(text: str, served_graphs: frozenset[str]) -> Checked:
    tokens = tokenize(text)
    base: str | None = None
    prefixes: dict[str, str] = {}
    i = 0
    # Prologue: BASE <iri> and PREFIX p: <iri>, in any order.
    while i < len(tokens) and tokens[i].kind == "name" and tokens[i].text.upper() in ("BASE", "PREFIX"):
        word = tokens[i].text.upper()
        if word == "BASE" and i + 1 < len(tokens) and tokens[i + 1].kind == "iri":
            base = urljoin(base, tokens[i + 1].text[1:-1]) if base else tokens[i + 1].text[1:-1]
            i += 2
        elif word == "PREFIX" and i + 2 < len(tokens) and tokens[i + 1].kind == "pname" and tokens[i + 2].kind == "iri":
            iri = tokens[i + 2].text[1:-1]
            prefixes[tokens[i + 1].text.rstrip(":")] = urljoin(base, iri) if base else iri
            i += 3
        else:
            raise RefusedQuery(f"malformed {word} declaration at {_where(text, tokens[i].offset)}")
    for token in tokens:
        word = token.text.upper() if token.kind == "name" else ""
        if word == "SERVICE":
            raise RefusedQuery(
                f"SERVICE is refused (at {_where(text, token.offset)}): this endpoint never sends queries to other services"
            )
        if word in UPDATES:
            raise RefusedQuery(
                f"{word} is refused (at {_where(text, token.offset)}): this endpoint is read-only, SPARQL Update is not accepted"
            )
    if i >= len(tokens) or tokens[i].kind != "name" or tokens[i].text.upper() not in FORMS:
        where = _where(text, tokens[i].offset) if i < len(tokens) else "the end"
        raise RefusedQuery(f"expected SELECT, ASK, CONSTRUCT or DESCRIBE at {where}")
    form = tokens[i].text.upper()
    default_graphs: list[str] = []
    named_graphs: list[str] = []
    for j, token in enumerate(tokens):
        if token.kind != "name" or token.text.upper() != "FROM":
            continue
        named = j + 1 < len(tokens) and tokens[j + 1].kind == "name" and tokens[j + 1].text.upper() == "NAMED"
        target = j + 2 if named else j + 1
        if target >= len(tokens):
            raise RefusedQuery("FROM must be followed by an IRI")
        iri = _graph_iri(tokens[target], base, prefixes, text)
        if iri not in served_graphs:
            served = ", ".join(f"<{g}>" for g in sorted(served_graphs))
            raise RefusedQuery(
                f"FROM{' NAMED' if named else ''} <{iri}> is refused: this endpoint reads no other graph, only {served}"
            )
        (named_graphs if named else default_graphs).append(iri)
    return Checked(form=form, default_graphs=tuple(default_graphs), named_graphs=tuple(named_graphs))


_check_cached = functools.lru_cache(maxsize=1024)(_check)
