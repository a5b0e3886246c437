"""The one executor: SPARQL over the snapshot store (or a remote endpoint), returning plain
columns and rows. Every door (CLI, endpoint, library) goes through here."""

from __future__ import annotations

import math

import pyoxigraph as ox

from kbq.errors import CacheError, QueryTimeoutError, ResourceLimitError, SparqlError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER_TYPES = {XSD + t for t in ("integer", "int", "long", "short", "nonNegativeInteger", "positiveInteger")}
_DECIMAL_TYPES = {XSD + t for t in ("decimal", "double", "float")}

Value = str | int | float | bool | None
MAX_NUMBER_CHARS = 400  # a longer numeric literal is no number kbq can use (and int() of it is quadratic)


class Table:
    """A SELECT answer as Python values: IRIs as strings, numbers as int/float.

    A plain class rather than a dataclass: dataclasses and typing cost a cold start.
    """

    __slots__ = ("columns", "rows")

    def __init__(self, columns: list[str], rows: list[list[Value]]) -> None:
        self.columns = columns
        self.rows = rows

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and (self.columns, self.rows) == (other.columns, other.rows)

    def __repr__(self) -> str:
        return f"Table(columns={self.columns!r}, rows={self.rows!r})"


def literal_value(lexical: str, datatype: str) -> Value:
    """A literal's Python value; anything unknown stays text. A number no float can hold (a
    400-digit integer, `INF`, `NaN`: a hostile endpoint or overlay may send them) is None, an
    unknown value, never an infinity that breaks arithmetic or JSON further on."""
    try:
        if datatype in _INTEGER_TYPES:
            if len(lexical) > MAX_NUMBER_CHARS:
                return None
            whole = int(lexical)
            return whole if abs(whole) < 1e300 else None
        if datatype in _DECIMAL_TYPES:
            if len(lexical) > MAX_NUMBER_CHARS:
                return None
            number = float(lexical)
            if not math.isfinite(number) or abs(number) >= 1e300:
                return None
            return int(number) if number.is_integer() and "." not in lexical and "e" not in lexical.lower() else number
        if datatype == XSD + "boolean":
            return lexical in ("true", "1")
    except ValueError:
        return None if datatype != XSD + "boolean" else lexical
    return lexical


_TEXT_TYPES = frozenset((XSD + "string", "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"))


def term_value(term: object) -> Value:
    """A term's Python value, commonest kinds first: every cell of every answer comes through here
    (a 479-row table: about 1,000 calls); text needs no conversion."""
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        return term.value if datatype in _TEXT_TYPES else literal_value(term.value, datatype)
    if isinstance(term, ox.NamedNode):
        return term.value
    if term is None:
        return None
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    return str(term)


def engine_error(store: ox.Store, exc: BaseException) -> SparqlError | CacheError | ResourceLimitError:
    """A typed error for what pyoxigraph raised: a corrupt snapshot is marked for rebuilding."""
    text = str(exc)
    if isinstance(exc, MemoryError):
        return ResourceLimitError("the query needed more memory than is available and was stopped")
    if "Corruption" in text or "checksum mismatch" in text:
        from kbq.store import snapshot

        folder = snapshot.mark_damaged(store, text)
        where = f" at {folder}" if folder else ""
        return CacheError(
            f"the snapshot{where} is damaged ({text[:200]}); kbq rebuilds it the next time it opens it (or run `kbq build`)"
        )
    if isinstance(exc, SyntaxError):
        return SparqlError(f"SPARQL syntax error: {text}")
    return SparqlError(f"SPARQL evaluation failed: {text[:1000]}")


def select(store: ox.Store, sparql: str) -> Table:
    """Run a SELECT (or ASK) over the union of the asserted and inferred graphs."""
    try:
        result = store.query(sparql, use_default_graph_as_union=True)
        if isinstance(result, ox.QueryBoolean):
            return Table(columns=["answer"], rows=[[bool(result)]])
        if isinstance(result, ox.QuerySolutions):
            columns = [v.value for v in result.variables]
            rows = [[term_value(term) for term in solution] for solution in result]  # in the order of `columns`
            return Table(columns=columns, rows=rows)
        # CONSTRUCT / DESCRIBE: present triples as a three-column table
        rows = [[term_value(t.subject), term_value(t.predicate), term_value(t.object)] for t in result]
        return Table(columns=["subject", "predicate", "object"], rows=rows)
    except (SyntaxError, OSError, RuntimeError, ValueError, OverflowError, MemoryError) as exc:
        raise engine_error(store, exc) from None


QUERY_TIMEOUT = 30.0
"""Seconds a raw SPARQL query may take in the library and `kbq sparql` (`timeout=`, `--timeout`)."""


def within(seconds: float | None, run: Callable[[], Table]) -> Table:
    """`run()` with a time limit: past `seconds`, QueryTimeoutError.

    pyoxigraph cannot cancel a query, but it releases the GIL while it works, so the caller gets
    the error on time; the engine's thread finishes on its own in the background (a command
    exits at once: `kbq sparql` ends the process)."""
    if seconds is None:
        return run()
    import threading
    import traceback

    box: list[Table | BaseException] = []

    def work() -> None:
        try:
            box.append(run())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            # The engine's objects may only be dropped on this thread: free the frames that hold them here.
            link: BaseException | None = exc
            while link is not None:
                traceback.clear_frames(link.__traceback__)
                link = link.__context__
            box.append(exc.with_traceback(None))

    thread = threading.Thread(target=work, name="kbq-query", daemon=True)
    thread.start()
    thread.join(seconds)
    if not box:
        raise QueryTimeoutError(f"the query ran past the {seconds:g} s time limit and was abandoned (timeout=, --timeout)")
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
