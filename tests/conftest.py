"""Shared fixtures: one snapshot per test session in a private cache folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite examples/answers/*.json from current answers")


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test (and every subprocess it starts) uses a private snapshot cache."""
    path = tmp_path_factory.mktemp("kbq-cache")
    old = os.environ.get("KBQ_CACHE_DIR")
    os.environ["KBQ_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("KBQ_CACHE_DIR", None)
    else:
        os.environ["KBQ_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def kb(cache_dir: Path):  # type: ignore[no-untyped-def]
    from kbq import KnowledgeBase

    return KnowledgeBase.default()


@pytest.fixture(scope="session")
def ask_true(kb):  # type: ignore[no-untyped-def]
    """ASK a SPARQL pattern (prefixes kbq:, kb:, rdfs: ... predeclared) over the snapshot."""
    from kbq.lang.catalog import PREFIXES

    def ask(pattern: str) -> bool:
        return kb.table(PREFIXES + f"ASK {{ {pattern} }}").rows[0][0] is True

    return ask
