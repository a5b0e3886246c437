"""Typed errors. The library raises these; only the CLI and the server turn them into exit
codes, messages and HTTP statuses."""

from __future__ import annotations

# The command's exit codes besides each error's own: `kbq --check` exits CHECK_FAILED when the answer
# is "does not fit" or no candidate remains, so a script can gate on it.
EXIT_CODES = {
    0: "answered (with --check: it fits, or candidates remain)",
    1: "no result: the question is well formed but nothing satisfies it (NoResultError)",
    2: "the question, a query or a file is wrong (the error says what and where)",
    3: "the snapshot cache cannot be read or written (CacheError)",
    4: "with --check only: the verdict's fits is false ('tight', 'does not fit', 'cannot run'), or no candidate remains",
    70: "internal error (a bug: set KBQ_DEBUG=1 for a traceback)",
    130: "interrupted (Ctrl-C)",
}
CHECK_FAILED = 4


class KbqError(Exception):
    """Base of every error kbq raises on purpose."""

    exit_code = 2
    http_status = 400

    def to_dict(self) -> dict[str, object]:
        """The error as JSON-ready data (`--format json` prints it on stdout, /ask returns it)."""
        return {"error": str(self), "type": type(self).__name__}


class KnowledgeFileError(KbqError):
    """A Turtle or rule file cannot be read or parsed; names the file and line."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


class Violation:
    """One SHACL violation, located by subject and the file that states it."""

    __slots__ = ("files", "message", "path", "subject")

    def __init__(self, subject: str, message: str, path: str | None = None, files: tuple[str, ...] = ()) -> None:
        self.subject, self.message, self.path, self.files = subject, message, path, files

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Violation) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[str, str, str | None, tuple[str, ...]]:
        return (self.subject, self.message, self.path, self.files)

    def __repr__(self) -> str:
        return f"Violation({self.subject!r}, {self.message!r}, {self.path!r}, {self.files!r})"

    def __str__(self) -> str:
        where = ", ".join(self.files) or "(no file)"
        prop = f" {self.path}" if self.path else ""
        return f"{where}: {self.subject}{prop}: {self.message}"


class ValidationError(KbqError):
    """The knowledge does not conform to the SHACL shapes."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        lines = "\n".join(f"  {v}" for v in violations)
        super().__init__(f"{len(violations)} SHACL violation(s):\n{lines}")


class InconsistencyError(KbqError):
    """Reasoning found a contradiction (e.g. owl:Nothing membership, disjoint classes)."""


class QueryError(KbqError):
    """A kbq question or SPARQL query is wrong; carries the text and the column (1-based)."""

    def __init__(
        self,
        message: str,
        *,
        query: str = "",
        column: int | None = None,
        expected: list[str] | None = None,
        suggestions: list[str] | None = None,
    ) -> None:
        self.message = message
        self.query = query
        self.column = column
        self.expected = expected or []
        self.suggestions = suggestions or []
        super().__init__(self.render())

    def to_dict(self) -> dict[str, object]:
        return {
            "error": self.message,
            "type": type(self).__name__,
            "column": self.column,
            "expected": self.expected,
            "suggestions": self.suggestions,
            "detail": self.render(),
        }

    def render(self) -> str:
        parts = []
        if self.query and self.column is not None:
            parts += [f"  {self.query}", "  " + " " * (self.column - 1) + "^"]
        where = f" at column {self.column}" if self.column is not None else ""
        parts.append(f"error{where}: {self.message}")
        if self.expected:
            parts.append("expected: " + ", ".join(self.expected))
        if self.suggestions:
            parts.append("did you mean " + " or ".join(self.suggestions) + "?")
        return "\n".join(parts)


class KbqSyntaxError(QueryError):
    """The question does not parse."""


class UnknownTermError(QueryError):
    """A name in the question matches nothing in the KB."""


class AmbiguousTermError(QueryError):
    """A name in the question matches several things; lists the candidates."""


class NoResultError(KbqError):
    """The question is well formed but nothing satisfies it; says which constraint emptied it."""

    exit_code = 1
    http_status = 200


class SparqlError(KbqError):
    """A raw SPARQL query is malformed or refused."""


class RefusedQuery(SparqlError):
    """A query kbq will not run: it would reach another service, read another graph, write, or
    nest deeper than the engine can parse (kbq.store.guard says which, and where)."""


class QueryTooComplex(RefusedQuery):
    """Nesting or a chain of operators past what the engine can parse without overflowing its stack."""


class ResourceLimitError(KbqError):
    """A query or a build went past a resource limit (size, memory, time): it was stopped."""

    http_status = 503


class CacheError(KbqError):
    """The snapshot cache cannot be read or written; says where and what to do."""

    exit_code = 3


class QueryTimeoutError(KbqError):
    """A query ran past its time limit and was stopped."""

    http_status = 503


class UsageError(KbqError):
    """The command line is wrong (an unknown option, a missing argument): argparse's message."""


class InternalError(KbqError):
    """A bug in kbq: something failed that no check foresaw. Reported, never a bare traceback."""

    exit_code = 70
    http_status = 500
