"""Shared fixtures and the lanes' markers: one snapshot for the whole run (all xdist workers) in a
cache folder of the run's own; what `slow` (left out of the fast lane), `serial` and the scheduling
order mean."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The tests' tiny knowledge base (scripts/gen_tiny_kb.py): 7 GPUs and 7 models of the shipped KB and
# what concerns them, the shipped ontology, shapes and rules. Tests that need a snapshot but not the
# shipped knowledge (builds in private caches, damage and healing, bad input) point kbq at it with
# KBQ_DATA_DIR (kbq/store/resources.py): builds in a fraction of the shipped KB's time.
TINY_KB = ROOT / "tests" / "data" / "tiny_kb"


# Modules whose tests start real servers, a browser or external stores, or compare stores: the full
# lane runs them, the fast lane (`bash tests/run.sh --fast`, `-m "not slow"`) leaves them out. (The
# cache hardening and snapshot tests build the tiny KB, in a second a build: the fast lane runs them.)
SLOW_MODULES = {
    "test_hardening_server",
    "test_hardening_library",
    "test_server",
    "test_server_guard",
    "test_browser",
    "test_stores",
    "test_remote",
    "test_reference",
}


# Single tests the fast lane leaves out (the full lane runs them): those that build snapshots with
# overlays or whole new ones (a child build process each), the reference comparison that runs
# pySHACL over the whole KB (the fast lane keeps pySHACL against the build's validators on the tiny
# KB with bad data) and owlrl, the reference reasoner (the build's engine runs in every build).
SLOW_TESTS = {
    "test_plan_cache::test_cached_plans_answer_every_golden_question_the_same",  # test_golden asks them all once
    "test_model_import::test_the_overlay_answers_with_kb",
    "test_hardening_outputs::test_a_hostile_overlay_reaches_no_output_raw",
    "test_examples::test_example_file_commands_run",
    "test_examples::test_overlay_example_answers_with_the_new_key",  # the fast lane's overlay build: test_api's
    "test_language::test_a_chassis_synonym_added_in_an_overlay_is_understood",
    "test_validation::test_validators_agree_that_the_shipped_knowledge_conforms",
    "test_tiny_kb::test_the_three_engines_give_the_same_entailments_on_the_tiny_kb",  # owlrl: 30 s of a core
    "test_cli::test_overlay_flag",
    "test_language::test_ambiguous_name_lists_candidates",
}


# Modules that time a real server (a 2 s answer limit, slow readers, /health under attack): the full
# lane runs them after the parallel run, alone on the machine (`serial`), where their time limits mean
# what they say; another worker beside them made them flaky on 2 cores.
SERIAL_MODULES = {"test_server", "test_hardening_server", "test_hardening_server2"}


# The longest modules first (measured with --durations), so the workers of a parallel run
# (`--dist loadfile`: one module, one worker) start them early and finish together instead of
# one worker starting a long module last while the other one idles.
LONGEST_FIRST = [
    "test_stores",  # rdflib answering every golden question beside Virtuoso's cases: a third of a worker
    "test_sentences",
    "test_tiny_kb",
    "test_sentences_fresh",
    "test_reasoning",
    "test_hardening_cache",
    "test_remote",
    "test_catalog",
    "test_plan_cache",
    "test_validation",
    "test_language",
    "test_browser",
]


def _module(item: pytest.Item) -> str:
    return item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) else ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_module(item), len(rank)))  # stable: in-module order kept
    for item in items:
        module = _module(item)
        name = f"{module}::{getattr(item, 'originalname', item.name)}"
        if (
            module in SLOW_MODULES
            or name in SLOW_TESTS
            or item.get_closest_marker("server")
            or item.get_closest_marker("browser")
        ):
            item.add_marker(pytest.mark.slow)
        if module in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite examples/answers/*.json from current answers")


def _shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the whole run: KBQ_TEST_CACHE_DIR when set (tests/run.sh: one for both
    of the full lane's pytest runs), else beside the workers' base folders, which pytest-xdist
    gives one parent (one snapshot built for all workers, not one per worker)."""
    if os.environ.get("KBQ_TEST_CACHE_DIR"):
        path = Path(os.environ["KBQ_TEST_CACHE_DIR"])
        path.mkdir(parents=True, exist_ok=True)
        return path
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / "kbq-cache"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test (and every subprocess it starts) uses the run's snapshot cache, not the user's.

    The shipped snapshot is built once for the run, by the first worker to get here, under a file
    lock; the other workers wait for it and open it (kbq's own locks make concurrent readers and
    a rebuild safe, and tests that damage or rebuild a cache use a private one)."""
    import fcntl

    path = _shared_cache(tmp_path_factory)
    old = os.environ.get("KBQ_CACHE_DIR")
    os.environ["KBQ_CACHE_DIR"] = str(path)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            from kbq.build import pipeline

            pipeline.ensure()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
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


@pytest.fixture
def tiny_kb(monkeypatch: pytest.MonkeyPatch) -> Path:
    """KBQ_DATA_DIR names the tiny knowledge base for this test and every process it starts."""
    monkeypatch.setenv("KBQ_DATA_DIR", str(TINY_KB))
    return TINY_KB


@pytest.fixture(scope="module")
def tiny_kb_module() -> Iterator[Path]:
    """As `tiny_kb`, for a whole module (its module-scoped fixtures too); restored after it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KBQ_DATA_DIR", str(TINY_KB))
        yield TINY_KB
