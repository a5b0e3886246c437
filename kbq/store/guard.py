"""Decide, before the engine sees it, whether a SPARQL query may run, by the engine's own reading.

pyoxigraph (spargebra 0.5) reads a query with a PEG parser whose keywords need no word boundary
(`SERVICE:x` is SERVICE + `:x`, `trueSERVICE` is `true` + SERVICE), whose prefixed names fall
back to the bare prefix when `prefix + local` is not a valid IRI (`e:SERVICE` with
`PREFIX e: <http://a:>` is `e:` + SERVICE), whose local names end after one dotted group
(`e:a.b.SERVICE` is `e:a.b` + `.` + SERVICE) and whose `<` is an IRI or a less-than depending on
the grammar position. A tokenizer that guesses token boundaries can be out-guessed; this guard
does not guess. It finds the only regions the engine can never read as keywords -- comments,
string literals, IRIs, variable names, and local names it can prove the engine keeps whole --
and treats every other character as code in which a keyword may start anywhere:

* `SERVICE` anywhere in code (any case, glued to anything) is refused, unless allowed;
* `FROM` anywhere in code must be followed, as the engine reads it, by a served graph;
* `<...>` that is both a possible IRI and a possible less-than is read both ways (the second
  reading ends at the first `#`, a comment to the end of the line, and may not hide a quote);
* nesting (`{ ( [ <<`) and chains of operators are bounded, because the engine's parser and
  optimiser recurse on them and overflow the stack (a segfault) well inside 100 KB of text.

One left-to-right pass with anchored, possessive regular expressions: linear time, no
backtracking between tokens. tests/test_hardening_guard.py checks it against pyoxigraph itself.
Nothing here imports more than `re` (urllib.parse only for a relative IRI), so the library can
check every raw query cheaply.
"""

from __future__ import annotations

import re
from typing import Any

from kbq.errors import QueryTooComplex, RefusedQuery

MAX_DEPTH = 64
"""Nesting of `{ ( [ <<` the engine may see. pyoxigraph 0.5 overflows an 8 MiB stack at ~185
nested blank-node property lists, ~310 nested collections, ~2190 nested groups."""
MAX_OPERATIONS = 1000
"""Joins, unions, filters, path steps and binary operators in one query. pyoxigraph 0.5
overflows an 8 MiB stack at ~2600 MINUS, ~6500 UNION, ~6900 `+` or ~9300 `&&` in a row."""

MAX_TERMS = 1000
"""Terms (names, variables, literals, numbers, keywords) directly inside one `{ }`, `( )`, `[ ]`, or
outside every bracket. The engine recurses over flat lists too: pyoxigraph 0.5 segfaults on a
DESCRIBE of ~3,000 IRIs and on an RDF collection of 5,000 items (issue 22, M-4); ORDER BY,
VALUES, projection and GROUP BY lists are bounded by the same rule."""

MAX_PATTERNS = 64
"""Triple patterns one group may join: each `.` `;` `,` in it, and each item of a `( )` list in it
that follows no function or keyword (an RDF collection of n items is 2n patterns). pyoxigraph 0.5
orders a group's joins in time growing with about the fourth power of its patterns: on one core,
50 take ~0.06 s, 100 ~1 s, 200 ~13 s, 300 minutes (and 120 took 10 s on a loaded machine)."""

MAX_FROM = 64
"""FROM / FROM NAMED clauses (each is read to its graph IRI; the bound keeps the pass linear)."""

FORMS = ("SELECT", "CONSTRUCT", "DESCRIBE", "ASK")
UPDATES = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH")

# The engine's name characters (spargebra 0.5 parser.rs), with every non-ASCII character let in:
# a superset is safe (a non-ASCII character the engine does not take into a name is a syntax
# error anywhere else), and negated classes compile in microseconds where the exact Unicode
# ranges cost ~70 ms at import, on the query path.
_BASE = r"[^\x00-\x40\x5b-\x60\x7b-\x7f]"  # letters
_U = r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7f]"  # letters, _
_CHARS = r"[^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"  # letters, _, -, digits
_LOCAL_FIRST = r"[^\x00-\x2f\x3b-\x40\x5b-\x5e\x60\x7b-\x7f]"  # letters, _, digits, :
_LOCAL_CHARS = r"[^\x00-\x2c\x2e\x2f\x3b-\x40\x5b-\x5e\x60\x7b-\x7f]"  # letters, _, -, digits, :
_VAR_CHARS = r"[^\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"  # letters, _, digits
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_ESC = r"\\[tbnrf\"'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"

_WS = re.compile(r"(?:[ \t\r\n]++|#[^\r\n]*+)*+")
_PN_PREFIX = re.compile(rf"{_BASE}{_CHARS}*+(?:\.++{_CHARS}++)*+")
# PN_LOCAL exactly as the engine has it: ONE optional dotted group at the end (`e:a.b.c` is `e:a.b`).
_PN_LOCAL = re.compile(rf"(?:{_LOCAL_FIRST}|{_PLX})(?:{_LOCAL_CHARS}|{_PLX})*+(?:\.++(?:{_LOCAL_CHARS}|{_PLX})++)?+")
_VARNAME = re.compile(rf"{_VAR_CHARS}++")
_IRIREF = re.compile(r"<([^>]*+)>")  # the engine's raw IRIREF; the IRI parser checks the rest
_IRI_SPAN = re.compile(r"<((?:[^\x00-\x20<>\"{}|^`\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*+)>")
_STRINGS = {
    "'''": re.compile(rf"'''(?:(?>''|')?+(?:[^'\\]|{_ESC}))*+'''"),
    '"""': re.compile(rf'"""(?:(?>""|")?+(?:[^"\\]|{_ESC}))*+"""'),
    "'": re.compile(rf"'(?:[^'\\\n\r]|{_ESC})*+'"),
    '"': re.compile(rf'"(?:[^"\\\n\r]|{_ESC})*+"'),
}
_UCHAR = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_SPECIAL = re.compile(r"[#'\"<>?$:{}()\[\]\x00-\x08\x0b\x0c\x0e-\x1f\x7f`]")
_KEYWORD = re.compile(r"(?i)service|from")
# What makes the engine's algebra one level deeper: joins (`.` `;` `,`), paths (`/` `|`), binary
# operators, and the group keywords. A decimal point (`1.5`) and an exponent's sign are not.
_OPERATION = re.compile(
    r"(?i)&&|(?<![0-9])\.|\.(?![0-9])|[;,|/*]|(?<![eE])[+\-]|union|minus|optional|filter|bind|graph|lateral|exists|service"
)
_NAMED = re.compile(r"(?i)named")
# Terms in code: a run of word characters that starts no prefixed name (`ex:` counts at its `:`).
_WORDS = re.compile(r"(?<![\w\-.])\w[\w\-.]*+(?!:)")
_WORD_CHAR = re.compile(r"[\w\-.]")
_VALUES = re.compile(r"(?i)values")
_SEPARATOR = re.compile(r"(?<![0-9])\.|\.(?![0-9])|[;,]")
_PLAIN_LOCAL = re.compile(r"(?:[A-Za-z0-9_\-.:]|%[0-9A-Fa-f]{2})++")
# Prefix IRIs after which any plain local name stays in the path (`.../`) or the fragment (`...#`).
_OPEN_PATH = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*+://[^/?#\s]*+/[^?#\s]*+")
_OPEN_FRAGMENT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*+:[^#\s]*+#")
_OPENERS, _CLOSERS = "{([", "})]"


class Checked:
    """What the guard learned about a query it accepts."""

    __slots__ = ("default_graphs", "depth", "form", "named_graphs", "operations")

    def __init__(
        self, form: str, default_graphs: tuple[str, ...], named_graphs: tuple[str, ...], depth: int, operations: int
    ) -> None:
        self.form, self.default_graphs, self.named_graphs = form, default_graphs, named_graphs
        self.depth, self.operations = depth, operations

    @property
    def has_dataset(self) -> bool:
        return bool(self.default_graphs or self.named_graphs)

    def __repr__(self) -> str:
        return f"Checked(form={self.form!r}, default_graphs={self.default_graphs!r}, named_graphs={self.named_graphs!r})"


def where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _unescape_iri(raw: str) -> str | None:
    """The engine's unescape_iriref: \\u and \\U escapes only (None when another backslash is there)."""
    if "\\" not in raw:
        return raw
    out, i = [], 0
    for m in _UCHAR.finditer(raw):
        if "\\" in raw[i : m.start()]:
            return None
        out.append(raw[i : m.start()])
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None
        out.append(chr(code))
        i = m.end()
    if "\\" in raw[i:]:
        return None
    return "".join(out) + raw[i:]


def _valid_escapes(literal: str) -> bool:
    for m in _UCHAR.finditer(literal):
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return False
    return True


class _Prologue:
    """BASE, PREFIX and VERSION declarations, read as the engine reads them; then the query form."""

    def __init__(self, text: str) -> None:
        self.base: str | None = None
        self.prefixes: dict[str, str] = {}
        self.uncertain: set[str] = set()  # prefixes whose IRI this module did not resolve itself
        i = _WS.match(text).end()  # type: ignore[union-attr]
        while True:
            head = text[i : i + 7].upper()
            if head.startswith("BASE"):
                j = _WS.match(text, i + 4).end()  # type: ignore[union-attr]
                m = _IRIREF.match(text, j)
                if m is None:
                    break
                self.base = self._resolve(m.group(1)) or m.group(1)
            elif head.startswith("PREFIX"):
                j = _WS.match(text, i + 6).end()  # type: ignore[union-attr]
                label = _PN_PREFIX.match(text, j)
                k = label.end() if label else j
                if not text.startswith(":", k):
                    break
                m = _IRIREF.match(text, _WS.match(text, k + 1).end())  # type: ignore[union-attr]
                if m is None:
                    break
                name = label.group() if label else ""
                resolved = self._resolve(m.group(1))
                self.prefixes[name] = resolved if resolved is not None else m.group(1)
                if resolved is None:
                    self.uncertain.add(name)
            elif head.startswith("VERSION"):
                j = _WS.match(text, i + 7).end()  # type: ignore[union-attr]
                m = _STRINGS['"'].match(text, j) or _STRINGS["'"].match(text, j)
                if m is None:
                    break
            else:
                break
            i = _WS.match(text, m.end()).end()  # type: ignore[union-attr]
        self.end = i

    def _resolve(self, raw: str) -> str | None:
        """The absolute IRI, or None when it is relative to a BASE or has escapes (not certain)."""
        iri = _unescape_iri(raw)
        if iri is None:
            return None
        if re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", iri):
            return iri
        if self.base is None:
            return None
        from urllib.parse import urljoin

        return urljoin(self.base, iri)


class _Scan:
    def __init__(self, text: str, prologue: _Prologue, served: frozenset[str] | None, allow_service: bool) -> None:
        self.text, self.prologue, self.served, self.allow_service = text, prologue, served, allow_service
        self.depth = self.max_depth = self.operations = 0
        self.default_graphs: list[str] = []
        self.named_graphs: list[str] = []
        self.fork_eol = -1  # end of the line on which a second reading of `<...#` is in a comment
        self.fork_depth = 0  # that second reading's nesting
        self.open_prefixes: bool | None = None  # every declared prefix IRI ends in an open path or fragment
        self.froms = 0
        # One frame per open bracket (and one outside them all): [opener, terms, patterns, expression].
        self.frames: list[list[Any]] = [["", 0, 0, False]]
        self.values_next = False  # `VALUES` seen: its `(vars)` and `{rows}` are data, not patterns

    # --- refusals ----------------------------------------------------------------------

    def refuse(self, offset: int, message: str) -> RefusedQuery:
        return RefusedQuery(f"{message} (at {where(self.text, offset)})")

    def service(self, offset: int) -> RefusedQuery:
        how = (
            "; this endpoint never does"
            if self.served is not None
            else " unless asked (allow_service=True, or `kbq sparql --allow-service`)"
        )
        return RefusedQuery(f"SERVICE is refused (at {where(self.text, offset)}): kbq never sends queries to other services{how}")

    # --- the pass ----------------------------------------------------------------------

    def run(self) -> None:
        text, n, i = self.text, len(self.text), 0
        while i < n:
            m = _SPECIAL.search(text, i)
            end = m.start() if m else n
            if end > i:
                self.code(i, end)
            if m is None:
                break
            i = end
            if self.fork_eol >= 0 and i > self.fork_eol:
                self.join_fork()
            c = text[i]
            if c == "#":
                eol = text.find("\n", i)
                cr = text.find("\r", i, eol if eol >= 0 else n)
                i = cr if cr >= 0 else eol if eol >= 0 else n
            elif c == "'" or c == '"':
                self.term(i, 1)
                i = self.string(i)
            elif c == "<":
                i = self.angle(i)
            elif c == ">":
                if text.startswith(">>", i):
                    self.close(1, i)
                i += 1
            elif c == "?" or c == "$":
                v = _VARNAME.match(text, i + 1)
                self.term(i, 1)
                i = v.end() if v else i + 1
            elif c == ":":
                if not (i > 0 and _WORD_CHAR.match(text, i - 1)):
                    self.term(i, 1)  # `:x` (a prefixed name with a word before it was counted as that word)
                i = self.local(i + 1)
            elif c in _OPENERS:
                self.open(i, 1, c)
                i += 1
            elif c in _CLOSERS:
                self.close(1, i)
                i += 1
            else:
                raise self.refuse(i, f"cannot read the query: unexpected {c!r}")
        self.join_fork()

    def code(self, start: int, end: int) -> None:
        """Text the engine reads as code: a keyword may start at any character."""
        for m in _KEYWORD.finditer(self.text, start, end):
            if m.group()[0] in "sS":
                if not self.allow_service:
                    raise self.service(m.start())
            else:
                self.dataset(m.start())
        operations = len(_OPERATION.findall(self.text, start, end))
        self.operations += operations
        if self.operations > MAX_OPERATIONS:
            raise QueryTooComplex(
                f"the query chains more than {MAX_OPERATIONS} joins, unions, filters, path steps or operators: "
                "kbq refuses it before the engine (whose parser would overflow its stack); split it"
            )
        frame = self.frames[self.depth_index()]
        separators = len(_SEPARATOR.findall(self.text, start, end))
        if frame[0] == "(":
            frame[3] = frame[3] or bool(operations)  # an expression or argument list, not an RDF collection
        elif separators:
            self.pattern(start, separators)
        words = _WORDS.findall(self.text, start, end)
        if words:
            if _VALUES.fullmatch(words[-1]):
                self.values_next = True
            self.term(start, len(words))

    # --- sizes ------------------------------------------------------------------------

    def depth_index(self) -> int:
        """The frame of the current depth (the `<` fork can deepen without an opener: add frames)."""
        while len(self.frames) <= self.depth:
            self.frames.append(["", 0, 0, False])
        del self.frames[self.depth + 1 :]
        return self.depth

    def term(self, offset: int, count: int) -> None:
        frame = self.frames[self.depth_index()]
        frame[1] += count
        if frame[1] > MAX_TERMS:
            where_ = "outside any bracket" if self.depth == 0 else f"in one {frame[0] or '<'} ... group"
            raise QueryTooComplex(
                f"more than {MAX_TERMS} terms {where_} (at {where(self.text, offset)}): kbq refuses it before the "
                "engine (which crashes on long flat lists); split the query or the list"
            )

    def called(self, offset: int) -> bool:
        """`(` right after a bare word (a function, BIND, FILTER, IN, COUNT...): arguments, not an
        RDF collection. After a variable, an IRI, a prefixed name or `a`, it is a collection."""
        text, j = self.text, offset
        while j > 0 and text[j - 1] in " \t\r\n":
            j -= 1
        end = j
        while j > 0 and _WORD_CHAR.match(text, j - 1):
            j -= 1
        word = text[j:end]
        return bool(word) and word != "a" and not (j > 0 and text[j - 1] in "?$:") and ":" not in word

    def pattern(self, offset: int, count: int) -> None:
        """`count` triple patterns (or list items) joined by the nearest enclosing `{ }` group."""
        for frame in reversed(self.frames[: self.depth_index() + 1]):
            if frame[0] == "data":
                return
            if frame[0] == "{" or frame is self.frames[0]:
                frame[2] += count
                if frame[2] > MAX_PATTERNS:
                    raise QueryTooComplex(
                        f"one group joins more than {MAX_PATTERNS} triple patterns or list items (at "
                        f"{where(self.text, offset)}): the engine's time to plan it grows as a high power of their number; "
                        "split it into smaller groups or queries"
                    )
                return

    def open(self, offset: int, count: int, opener: str = "") -> None:
        if count == 1 and opener:
            self.term(offset, 1)  # a bracketed item (a VALUES row, a group) is one item of its parent
            data = self.values_next or self.frames[-1][0] == "data"
            if opener == "{":
                self.values_next = False
            self.frames.append(["data" if data else opener, 0, 0, opener == "(" and self.called(offset)])
        self.depth += count
        if self.depth > self.max_depth:
            self.max_depth = self.depth
            if self.depth > MAX_DEPTH:
                raise QueryTooComplex(
                    f"the query nests {{ ( [ or << deeper than {MAX_DEPTH} levels (at {where(self.text, offset)}): "
                    "kbq refuses it before the engine (whose parser would overflow its stack)"
                )

    def close(self, count: int, offset: int = 0) -> None:
        """Leave `count` brackets; the items of a `( )` list that held no operator (an RDF
        collection: 2 triple patterns per item) are patterns of the group around it."""
        for _ in range(count):
            if self.depth == 0:
                return
            self.depth_index()
            frame = self.frames.pop()
            self.depth -= 1
            if frame[0] == "(" and not frame[3] and frame[1] > 1:
                self.pattern(offset, frame[1])

    def string(self, i: int) -> int:
        text = self.text
        quote = text[i]
        m = _STRINGS[quote * 3].match(text, i) if text.startswith(quote * 3, i) else None
        m = m or _STRINGS[quote].match(text, i)
        if m is None or not _valid_escapes(m.group()):
            raise self.refuse(i, "cannot read the query: a string literal is not closed or has an invalid escape")
        if self.fork_eol >= 0 and m.end() > self.fork_eol + 1 and m.start() < self.fork_eol:
            raise self.refuse(i, "cannot read the query one way: a long string starts after `<...#` on the same line")
        return m.end()

    def angle(self, i: int) -> int:
        """`<`: an IRI, or a less-than (then `<...#` starts a comment): both readings are checked."""
        text = self.text
        if text.startswith("<<", i):
            self.open(i, 1)
        m = _IRI_SPAN.match(text, i)
        if m is None:
            return i + 1  # not an IRI: the engine reads an operator (or `<<`)
        self.term(i, 1)
        content = m.group(1)
        hash_at = content.find("#")
        code = content if hash_at < 0 else content[:hash_at]
        if "//" in code:
            return m.end()  # `<` then `//` is no expression: only the IRI reading parses
        # The less-than reading: `code` is code, then (if there is a `#`) a comment to the end of line.
        if "'" in code:
            raise self.refuse(i, "cannot read the query one way: `<` may start an IRI or a comparison with a quote")
        depth, peak = 0, 0
        for ch in code:
            if ch in _OPENERS:
                depth += 1
                peak = max(peak, depth)
            elif ch in _CLOSERS and depth:
                depth -= 1
        if peak:  # keep the deeper of the two readings
            self.open(i, peak)
            self.close(peak - depth, i)
        self.operations += len(_OPERATION.findall(code))
        if hash_at >= 0:
            k = _KEYWORD.search(code)
            if k is not None and not (k.group()[0] in "sS" and self.allow_service):
                if k.group()[0] in "sS":
                    raise self.service(i + 1 + k.start())
                if self.served is not None:
                    raise self.refuse(i, f"cannot read the query one way: {k.group()!r} inside `<...#...>`")
            eol = min((p for p in (text.find("\n", i), text.find("\r", i)) if p >= 0), default=len(text))
            if eol != self.fork_eol:
                self.join_fork()
                self.fork_eol, self.fork_depth = eol, self.depth
            else:
                self.fork_depth = max(self.fork_depth, self.depth)
        return m.end()  # the IRI reading, which this pass follows: the engine ends it at the first `>`

    def join_fork(self) -> None:
        """At the end of the line, the comparison reading rejoins: keep the deeper nesting."""
        if self.fork_eol >= 0:
            self.depth = max(self.depth, self.fork_depth)
            self.fork_eol = -1

    def local(self, i: int) -> int:
        """After `:`, a local name: the engine keeps it whole when `prefix + local` is a valid IRI."""
        m = _PN_LOCAL.match(self.text, i)
        if m is None:
            return i
        local = m.group()
        for k in _KEYWORD.finditer(local):
            service = k.group()[0] in "sS"
            if (service and self.allow_service) or (not service and self.served is None):
                continue
            if not self.certain_local(local):
                if service:
                    raise self.service(i + k.start())
                raise self.refuse(i + k.start(), f"cannot read the query one way: {k.group()!r} in the local name {local!r}")
            break
        return m.end()

    def certain_local(self, local: str) -> bool:
        """True when every declared prefix + this local (and its tails after `:`) is surely a valid
        IRI, so the engine keeps the local name whole whichever prefix it reads before it."""
        if self.open_prefixes is None:
            prologue = self.prologue
            self.open_prefixes = not prologue.uncertain and all(
                (_OPEN_PATH.fullmatch(iri) is not None and iri.endswith("/")) or _OPEN_FRAGMENT.fullmatch(iri) is not None
                for iri in prologue.prefixes.values()
            )
        return self.open_prefixes and _PLAIN_LOCAL.fullmatch(local) is not None

    # --- FROM --------------------------------------------------------------------------

    def dataset(self, offset: int) -> None:
        """`FROM` in code: what follows, as the engine may read it, must be a served graph."""
        if self.served is None:
            return
        self.froms += 1
        if self.froms > MAX_FROM:
            raise self.refuse(offset, f"more than {MAX_FROM} FROM clauses")
        text = self.text
        j = _WS.match(text, offset + 4).end()  # type: ignore[union-attr]
        readings: list[tuple[bool, str]] = []  # (named, IRI)
        default = self.graph_iris(j)
        if default is not None:
            readings += [(False, iri) for iri in default]
        if _NAMED.match(text, j):
            iris = self.graph_iris(_WS.match(text, j + 5).end())  # type: ignore[union-attr]
            if iris is not None:
                readings += [(True, iri) for iri in iris]
        if not readings:
            raise self.refuse(offset, "FROM must be followed by an IRI or a prefixed name with a declared prefix")
        for is_named, iri in readings:
            if iri not in self.served:
                served = ", ".join(f"<{g}>" for g in sorted(self.served))
                raise RefusedQuery(
                    f"FROM{' NAMED' if is_named else ''} <{iri}> is refused (at {where(text, offset)}): "
                    f"this endpoint reads no other graph, only {served}"
                )
        first_named, first = readings[0]
        (self.named_graphs if first_named else self.default_graphs).append(first)

    def graph_iris(self, j: int) -> list[str] | None:
        """The IRIs the engine may read at `j` (IRIREF, or a prefixed name with its fallback)."""
        text, prologue = self.text, self.prologue
        m = _IRIREF.match(text, j)
        if m is not None:
            iri = prologue._resolve(m.group(1))
            return [iri if iri is not None else "<unresolved " + m.group(1) + ">"]
        label = _PN_PREFIX.match(text, j)
        k = label.end() if label else j
        if not text.startswith(":", k):
            return None
        name = label.group() if label else ""
        if name not in prologue.prefixes:
            return None
        base = prologue.prefixes[name]
        if name in prologue.uncertain:
            base = "<unresolved " + base + ">"
        local = _PN_LOCAL.match(text, k + 1)
        if local is None:
            return [base]
        full = base + re.sub(r"\\(.)", r"\1", local.group())
        return [full] if self.certain_local(local.group()) else [full, base]


def check_query(text: str, served_graphs: frozenset[str] | None = None, *, allow_service: bool = False) -> Checked:
    """Accept a read-only query, or raise RefusedQuery saying why.

    `served_graphs`: the graphs FROM / FROM NAMED may name (None: any). SERVICE is refused
    unless `allow_service`. Nesting and operator chains are always bounded (QueryTooComplex)."""
    prologue = _Prologue(text)
    head = text[prologue.end : prologue.end + 9].upper()
    form = next((f for f in FORMS if head.startswith(f)), None)
    if form is None:
        update = next((u for u in UPDATES if head.startswith(u)), None)
        if update is not None:
            raise RefusedQuery(
                f"{update} is refused (at {where(text, prologue.end)}): this endpoint is read-only, SPARQL Update is not accepted"
            )
        found = "the end" if prologue.end >= len(text) else where(text, prologue.end)
        raise RefusedQuery(f"expected SELECT, ASK, CONSTRUCT or DESCRIBE at {found}")
    scan = _Scan(text, prologue, served_graphs, allow_service)
    scan.run()
    return Checked(form, tuple(scan.default_graphs), tuple(scan.named_graphs), scan.max_depth, scan.operations)
