"""Issue 22: memory and disk bounded by construction (M-5 names and labels, L-8 plans, answers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbq.api import KnowledgeBase
from kbq.bounded import BoundedDict
from kbq.lang.catalog import MAX_REMEMBERED
from kbq.lang.plan import Plan, PlanCache
from kbq.serve.state import ResponseCache


def test_a_bounded_dict_evicts_the_least_recently_used() -> None:
    cache: BoundedDict[str, int] = BoundedDict(3)
    for i, key in enumerate("abc"):
        cache[key] = i
    assert cache["a"] == 0  # read: now the most recent
    cache["d"] = 3
    assert list(cache) == ["c", "a", "d"]
    assert cache.setdefault("e", 4) == 4 and len(cache) == 3 and "c" not in cache


def test_a_worker_asked_distinct_questions_keeps_a_bounded_number_of_names(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M-5: each distinct question added ~560 KB of remembered look-ups to a worker, forever."""
    catalog = kb.catalog
    for name in ("_lookups", "_labels"):
        remembered = getattr(catalog, name)
        assert isinstance(remembered, BoundedDict) and remembered.maxsize == MAX_REMEMBERED
        monkeypatch.setattr(catalog, name, BoundedDict(50))  # small, to see it bound (the session's kb is restored)
    for i in range(40):
        kb.plan(f"gpus where memory >= {i + 1}gb order by bandwidth desc limit {i + 1}")
        catalog.lookup([f"no such thing {i} {j}" for j in range(5)])
    assert len(catalog._lookups) <= 50 and len(catalog._labels) <= 50
    # still right after evictions: a name looked up again is found again
    assert [t.label for t in catalog.candidates("rtx 4090")] == [t.label for t in catalog.candidates("RTX 4090")] != []


def test_the_plan_cache_is_pruned(tmp_path: Path) -> None:
    """L-8: one plan file per distinct question, never removed."""
    plan = Plan(kind="table", sparql="ASK {}", columns=["answer"])
    for i in range(30):
        PlanCache(str(tmp_path), max_plans=20).put(f"question {i}", plan)  # one process per question, as the CLI
    files = sorted(tmp_path.glob("*.plan"))
    assert 0 < len(files) <= 20
    assert PlanCache(str(tmp_path), max_plans=20).get("question 29") is not None  # the newest are kept


def test_the_answer_cache_is_bounded_in_bytes() -> None:
    cache = ResponseCache(size=1000, max_body=1 << 20, max_total=3 << 20)
    for i in range(10):
        cache.put(i, b"x" * (1 << 20))
    assert cache.total <= 3 << 20 and cache.get(9) is not None and cache.get(0) is None


@pytest.mark.parametrize("size", [0, 1])
def test_no_cache_means_none_kept(size: int) -> None:
    cache = ResponseCache(size=size, max_total=10)
    cache.put("a", b"12345678901")
    assert cache.get("a") is None
