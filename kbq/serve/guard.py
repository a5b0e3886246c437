"""The endpoint's query guard: kbq.store.guard, shared with the library (`KnowledgeBase.sparql`)."""

from __future__ import annotations

from kbq.store.guard import Checked, QueryTooComplex, RefusedQuery, check_query

__all__ = ["Checked", "QueryTooComplex", "RefusedQuery", "check_query"]
