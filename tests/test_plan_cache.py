"""Compiled questions cached beside the snapshot give the same answers as fresh compiles,
and a stale, corrupt or foreign entry is never trusted."""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
from pathlib import Path

import pytest
from test_golden import QUESTIONS, answer_record

from kbq.errors import KbqError
from kbq.lang.compile import compile_question
from kbq.lang.plan import PlanCache
from kbq.lang.run import run_plan


@pytest.fixture()
def cache(kb, tmp_path: Path) -> PlanCache:  # type: ignore[no-untyped-def]
    return PlanCache(str(tmp_path / "plans"))


def test_cached_plans_answer_every_golden_question_the_same(kb, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBQ_NO_PLAN_CACHE", "1")
    fresh = [answer_record(kb, q) for q in QUESTIONS]
    monkeypatch.delenv("KBQ_NO_PLAN_CACHE")
    for question in QUESTIONS:  # fills the cache (a compile and a write each; a question that fails is not cached)
        with contextlib.suppress(KbqError):
            kb.plan(question)
    again = [answer_record(kb, q) for q in QUESTIONS]  # served from it
    assert fresh == again


def test_round_trip_keeps_every_field(kb, cache: PlanCache) -> None:
    for question in ["why quadro rtx 8000 for bert on dense 9-card chassis", "gpu for llama 2 70b inference at int4"]:
        plan = compile_question(question, kb.catalog, kb.table)
        cache.put(question, plan)
        loaded = cache.get(question)
        assert loaded is not None and loaded.to_data() == plan.to_data()
        assert run_plan(question, loaded, kb.catalog, kb.table).rows == run_plan(question, plan, kb.catalog, kb.table).rows


def test_stale_or_corrupt_entries_are_ignored(kb, cache: PlanCache) -> None:
    question = "frameworks for rnn"
    cache.put(question, compile_question(question, kb.catalog, kb.table))
    path = cache._path(question)
    blob = Path(path).read_bytes()
    assert cache.get(question) is not None
    stamp, text, data = marshal.loads(blob[32:])

    def write(payload: bytes) -> None:
        Path(path).write_bytes(hashlib.sha256(payload).digest() + payload)

    write(marshal.dumps(("kbq-0.0.0;other compiler", text, data)))
    assert cache.get(question) is None
    Path(path).write_bytes(b"\x00garbage")
    assert cache.get(question) is None
    write(marshal.dumps((stamp, "another question", data)))
    assert cache.get(question) is None
    flipped = bytearray(blob)
    flipped[-5] ^= 0x01  # one flipped byte in a valid entry: the checksum refuses it
    Path(path).write_bytes(bytes(flipped))
    assert cache.get(question) is None


def test_a_question_that_fails_is_not_cached(kb) -> None:
    from kbq.errors import UnknownTermError

    question = "gpu for no-such-workload-at-all"
    entry = PlanCache(os.path.join(kb.info.path, "plans"))._path(question)  # the file its plan would be
    assert not os.path.exists(entry)
    with pytest.raises(UnknownTermError):
        kb.answer(question)
    # this entry only: the test lanes share one snapshot, and other workers' questions add plans beside it
    assert not os.path.exists(entry)
    answered = "frameworks for rnn"  # the control: a question that compiles is cached at that path
    kb.answer(answered)
    assert os.path.exists(PlanCache(os.path.join(kb.info.path, "plans"))._path(answered))
