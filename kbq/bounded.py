"""A dict with a size bound: past `maxsize` entries, the least recently set or read goes first.

Every cache kbq keeps in memory for the life of a process (names looked up, labels, answers)
is one of these, so a stream of distinct questions to a long-running server cannot grow a
worker without end (issue 22, M-5)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(OrderedDict[K, V]):
    """An OrderedDict holding at most `maxsize` entries (least recently used out first)."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = max(1, maxsize)

    def __getitem__(self, key: K) -> V:
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        return self[key] if key in self else default

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)

    def setdefault(self, key: K, default: V) -> V:
        if key not in self:
            self[key] = default
        return self[key]
