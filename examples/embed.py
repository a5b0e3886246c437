"""Embedding kbq in another advisor: rank GPUs for a workload and explain the choice.

Run: python examples/embed.py [WORKLOAD]
"""

from __future__ import annotations

import sys

from kbq import KnowledgeBase
from kbq.errors import KbqError

_kb: KnowledgeBase | None = None


def recommend(workload: str, *, where: str | None = None, top: int = 3) -> list[str]:
    """Names of the best GPUs for a workload, best first."""
    global _kb
    _kb = _kb or KnowledgeBase.default()
    return [gpu.name for gpu in _kb.gpus(workload=workload, where=where, limit=top)]


if __name__ == "__main__":
    workload = " ".join(sys.argv[1:]) or "lstm"
    try:
        for name in recommend(workload, where="cooling = blower"):
            print(name)
    except KbqError as exc:
        print(exc, file=sys.stderr)
        sys.exit(exc.exit_code)
