"""Shared fixtures: one snapshot per test session in a private cache folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# Modules whose tests start real processes that build their own snapshots (private caches,
# overlays, concurrent builds), real servers, a browser or external stores: the full lane runs
# them, the fast lane (`bash tests/run.sh --fast`, `-m "not slow"`) leaves them out.
SLOW_MODULES = {
    "test_hardening_cache",
    "test_hardening_server",
    "test_hardening_library",
    "test_server",
    "test_server_guard",
    "test_browser",
    "test_stores",
    "test_remote",
    "test_snapshot",
    "test_reference",
}


# Modules that time a real server (a 2 s answer limit, slow readers, /health under attack): the full
# lane runs them after the parallel run, alone on the machine (`serial`), where their time limits mean
# what they say; another worker beside them made them flaky on 2 cores.
SERIAL_MODULES = {"test_server", "test_hardening_server", "test_hardening_server2"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) else ""
        if module in SLOW_MODULES or item.get_closest_marker("server") or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
        if module in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)


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
