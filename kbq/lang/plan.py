"""A compiled question (a plan) and the cache of plans beside the snapshot.

A plan is plain data (strings, numbers, lists, dicts) so it can be cached with marshal and run
later without the parser, the compiler or the catalog: asking the same question again skips
lark (the largest cost of a cold `kbq` call). A plan is valid for one snapshot (the cache folder
is per snapshot) and one compiler: each entry records a fingerprint of the kbq version, the
grammar, the query plans and the compiler modules, and carries a checksum; an entry that is
stale, corrupt or tampered with is compiled again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from typing import Any

from kbq.store import resources
from kbq.version import __version__

_LANG = os.path.dirname(os.path.abspath(__file__))


class Plan:
    """The SPARQL of a question, what its columns mean, and how the answer was derived.

    `extra` holds what shaping the answer needs (plain data): e.g. the profile's ranks for
    `why`, runners-up, the memory breakdown of a workload question."""

    FIELDS = ("kind", "sparql", "columns", "units", "explanation", "constraints", "limit", "subject", "extra")
    __slots__ = FIELDS

    def __init__(
        self,
        kind: str,
        sparql: str,
        columns: list[str],
        *,
        units: dict[str, str] | None = None,
        explanation: list[str] | None = None,
        constraints: list[list[str]] | None = None,
        limit: int | None = None,
        subject: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.kind, self.sparql, self.columns = kind, sparql, columns
        self.units = units or {}
        self.explanation = explanation or []
        self.constraints = constraints or []  # [words, SPARQL condition on ?gpu]
        self.limit, self.subject = limit, subject
        self.extra: dict[str, Any] = extra or {}

    def shown_sparql(self) -> str:
        """The SPARQL behind the answer: the query itself, or for an answer computed from facts
        (memory, speed, time, how many) every look-up the arithmetic read, in order."""
        if self.sparql:
            return self.sparql
        lookups = [str(q) for q in self.extra.get("lookups", [])]
        return "\n\n".join(
            f"# look-up {n} of {len(lookups)} ({self.kind} is computed from these facts)\n{q}"
            for n, q in enumerate(lookups, start=1)
        )

    def to_data(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in self.FIELDS)

    @classmethod
    def from_data(cls, data: tuple[object, ...]) -> Plan:
        kind, sparql, columns, units, explanation, constraints, limit, subject, extra = data
        return cls(
            kind,  # type: ignore[arg-type]
            sparql,  # type: ignore[arg-type]
            columns,  # type: ignore[arg-type]
            units=units,  # type: ignore[arg-type]
            explanation=explanation,  # type: ignore[arg-type]
            constraints=constraints,  # type: ignore[arg-type]
            limit=limit,  # type: ignore[arg-type]
            subject=subject,  # type: ignore[arg-type]
            extra=extra,  # type: ignore[arg-type]
        )


def fingerprint() -> str:
    """kbq version + size and mtime of every compiler module, the grammar and the query plans."""
    parts = [__version__]
    paths = []
    for folder in (_LANG, os.path.dirname(resources.grammar_path())):
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            paths += [os.path.join(root, n) for n in sorted(files) if n.endswith((".py", ".lark", ".rq"))]
    for path in paths:
        try:
            st = os.stat(path)
            parts.append(f"{os.path.relpath(path, os.path.dirname(_LANG))}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{os.path.basename(path)}:missing")
    return ";".join(parts)


MAX_PLANS = 5000
"""Plans kept beside a snapshot; past it the least recently written go (issue 22, L-8: a stream
of distinct questions filled the disk)."""


class PlanCache:
    def __init__(self, folder: str, max_plans: int = MAX_PLANS) -> None:
        self.folder = folder
        self.max_plans = max_plans
        self._fingerprint: str | None = None
        self._puts = 0

    def prune(self) -> None:
        """Keep the newest `max_plans * 9 // 10` plans when there are more than `max_plans`."""
        try:
            entries = [e for e in os.scandir(self.folder) if e.name.endswith(".plan")]
        except OSError:
            return
        if len(entries) <= self.max_plans:
            return

        def mtime(entry: os.DirEntry[str]) -> float:
            try:
                return entry.stat().st_mtime
            except OSError:
                return 0.0

        entries.sort(key=mtime)
        for entry in entries[: len(entries) - self.max_plans * 9 // 10]:
            try:
                os.unlink(entry.path)
            except OSError:
                pass

    @property
    def stamp(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = fingerprint()
        return self._fingerprint

    def _path(self, text: str) -> str:
        return os.path.join(self.folder, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".plan")

    def get(self, text: str) -> Plan | None:
        try:
            with open(self._path(text), "rb") as handle:
                blob = handle.read()
            digest, payload = blob[:32], blob[32:]
            if hashlib.sha256(payload).digest() != digest:
                return None
            stamp, question, data = marshal.loads(payload)
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if stamp != self.stamp or question != text:
            return None
        try:
            return Plan.from_data(data)
        except (TypeError, ValueError):
            return None

    def put(self, text: str, plan: Plan) -> None:
        path = self._path(text)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            payload = marshal.dumps((self.stamp, text, plan.to_data()))  # type: ignore[arg-type]  # plain data only
            os.makedirs(self.folder, exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
            if self._puts % 64 == 0:  # the first plan a process writes, then every 64th
                self.prune()
            self._puts += 1
        except (OSError, ValueError):
            try:
                os.unlink(tmp)
            except OSError:
                pass
