"""A cache of compiled questions beside the snapshot, so asking the same question again skips
parsing and compiling (and importing lark, the largest cost of a cold `kbq` call).

A plan is valid for one snapshot (the folder is per snapshot) and one compiler: each entry
records a fingerprint of the kbq version, the grammar and the compiler modules (size and
mtime), and an entry whose fingerprint differs is recompiled. Writing is best effort and atomic;
a missing, unreadable or stale entry is simply compiled again.
"""

from __future__ import annotations

import hashlib
import marshal
import os

from kbq.lang.compile import Plan
from kbq.store import resources
from kbq.version import __version__

_LANG = os.path.dirname(os.path.abspath(__file__))
_SOURCES = ("ast.py", "catalog.py", "compile.py", "parse.py", "plans.py", "run.py", "terms.py")


def fingerprint() -> str:
    parts = [__version__]
    for path in [os.path.join(_LANG, name) for name in _SOURCES] + [resources.grammar_path()]:
        try:
            st = os.stat(path)
            parts.append(f"{os.path.basename(path)}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{os.path.basename(path)}:missing")
    return ";".join(parts)


class PlanCache:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._fingerprint: str | None = None

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
                stamp, question, data = marshal.load(handle)
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
            os.makedirs(self.folder, exist_ok=True)
            with open(tmp, "wb") as handle:
                marshal.dump((self.stamp, text, plan.to_data()), handle)
            os.replace(tmp, path)
        except (OSError, ValueError):
            try:
                os.unlink(tmp)
            except OSError:
                pass
