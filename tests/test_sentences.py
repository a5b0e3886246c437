"""The sentence reader (kbq/lang/sentence.py): sentences as people type them become the canonical
question they mean, the answer says which ('read as: ...'), an ambiguous sentence gets its
readings and an unreadable one the nearest questions that answer. Each sentence is checked
against the canonical question it should read as, and that question against its own answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbq.errors import KbqError, QueryError

DATA = Path(__file__).parent / "data" / "sentences.jsonl"


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("can I run llama 3 70b on two 3090s?", "does Llama 3 70B fit on 2 x GeForce RTX 3090"),
        ("will llama 3 8b fit on my 3060?", "does Llama 3 8B fit on RTX 3060"),
        ("how fast does llama 3 8b run on a 4090 in tokens per second", "speed of Llama 3 8B on GeForce RTX 4090"),
        ("what's the best gpu for running mixtral 8x7b under $2000", "best gpu for Mixtral 8x7B under $2000"),
        ("How many A800 80G GPUs to deploy DeepSeek-V3?", "how many A800 for DeepSeek-V3"),
        ("what models can I run on a 24gb gpu", "models that fit on 24gb"),
        ("what is the biggest model I can run on a 3090", "largest model for GeForce RTX 3090"),
        ("two 3090s or one 4090 for llama 3 70b at q4?", "2 x GeForce RTX 3090 vs GeForce RTX 4090 for Llama 3 70B at Q4_K_M"),
        ("specs of the h100", "describe H100"),
        ("4090显卡能跑llama 3 70b吗", "does Llama 3 70B fit on GeForce RTX 4090"),
        ("can a 4090 run mistralai/Mistral-7B-Instruct-v0.3-GGUF", "does Mistral-7B-Instruct-v0.3 fit on GeForce RTX 4090"),
    ],
)
def test_a_sentence_reads_as_its_canonical_question(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(sentence)
    assert answer.read_as == canonical
    assert answer.explanation[0] == f"read as: {canonical}"
    same = kb.answer(canonical)  # the sentence's answer is the canonical question's answer
    assert same.read_as is None and same.kind == answer.kind and same.rows == answer.rows


def test_a_canonical_question_is_never_read_as_a_sentence(kb) -> None:  # type: ignore[no-untyped-def]
    for question in ("gpu for lstm where cooling=blower", "memory for llama 3.1 70b inference at fp8", "rtx 4090 vs rtx 3090"):
        assert kb.answer(question).read_as is None


def test_read_as_is_a_field_of_json_and_the_library(kb) -> None:  # type: ignore[no-untyped-def]
    assert kb.answer("price of a 4090").to_dict()["read_as"] == "price of GeForce RTX 4090"
    assert kb.ask("price of a 4090").read_as == "price of GeForce RTX 4090"


def test_a_hub_id_names_its_base_model_and_says_so(kb) -> None:  # type: ignore[no-untyped-def]
    # an id the catalog holds is a name (no reading); a packaging suffix the KB does not hold comes off, said so
    assert kb.answer("memory for meta-llama/Llama-3.1-8B-Instruct").read_as is None
    answer = kb.answer("memory for Qwen/Qwen2.5-14B-Instruct-AWQ")
    assert answer.read_as == "memory for Qwen2.5-14B"
    assert any("'awq' names a fine-tune or packaging" in line for line in answer.explanation)


def test_an_ambiguous_sentence_gets_its_readings_each_answering(kb) -> None:  # type: ignore[no-untyped-def]
    from kbq.lang.sentence import AmbiguousSentenceError

    with pytest.raises(AmbiguousSentenceError) as caught:
        kb.answer("rtx 4090 llama 3 70b")
    readings = caught.value.suggestions
    assert len(readings) >= 2 and any(r.startswith("does Llama 3 70B fit") for r in readings)
    for reading in readings:
        assert kb.answer(reading).read_as is None  # each is a canonical question that answers


def test_a_refused_question_suggests_whole_questions_that_answer(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(QueryError) as caught:
        kb.answer("gpu for lstmm")
    assert caught.value.suggestions[0] == "gpu for LSTM" and caught.value.expected == []
    for question in caught.value.suggestions:
        kb.answer(question)


def test_an_unreadable_sentence_names_nothing_it_cannot_answer(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KbqError) as caught:
        kb.answer("how do I make pancakes fluffy")
    for question in getattr(caught.value, "suggestions", []):
        kb.answer(question)


def test_a_memory_budget_is_a_card_with_only_its_memory(kb) -> None:  # type: ignore[no-untyped-def]
    budget = kb.answer("does llama 3 8b fit on a 24gb gpu")
    card = kb.answer("does llama 3 8b fit on rtx 4090")  # a 24 GB card: the same memory verdict
    assert budget.rows == card.rows
    assert any("memory budget" in line for line in budget.explanation)
    two = kb.answer("does llama 3 70b fit on 2 x 24gb")
    assert two.explanation[0].startswith("verdict: does not fit on 2 x 24 GB card")
    with pytest.raises(QueryError, match="bandwidth"):
        kb.answer("speed of llama 3 8b on 24gb")  # no bandwidth: speed needs a named card


def test_models_that_fit_agree_with_the_memory_question(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("models that fit on rtx 4090 at q4_k_m")
    names = [row[0] for row in answer.rows]
    assert "Llama 3 8B" in names and "Llama 3 70B" not in names
    for name in ("Llama 3 8B", "Qwen3-32B"):
        if name in names:
            memory = kb.answer(f"does {name} fit on rtx 4090 at q4_k_m")
            assert memory.explanation[0].startswith(("verdict: fits", "verdict: tight"))
    params = [row[1] for row in answer.rows]
    assert params == sorted(params, reverse=True)


def test_largest_model_is_the_first_that_fits(kb) -> None:  # type: ignore[no-untyped-def]
    largest = kb.answer("largest model for rtx 3090 at q4_k_m")
    fitting = kb.answer("models that fit on rtx 3090 at q4_k_m")
    assert largest.rows[0][0] == next(row[0] for row in fitting.rows if row[4] == "fits")


def test_setups_side_by_side(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("2 x rtx 3090 vs rtx 4090 for llama 3 70b at q4_k_m")
    assert answer.kind == "versus"
    rows = {row[0]: row for row in answer.rows}
    assert rows["GeForce RTX 4090"][4] == "does not fit" and rows["GeForce RTX 4090"][5] is None
    assert rows["2 x GeForce RTX 3090"][4] in ("fits", "tight") and rows["2 x GeForce RTX 3090"][5] > 0
    assert kb.answer("rtx 3090 or rtx 4090 for llama 3 8b").rows == kb.answer("rtx 3090 vs rtx 4090 for llama 3 8b").rows


# --- real sentences from forums and issue trackers --------------------------------------------------

KINDS = {  # the expected kind of answer -> the answer kinds that are that kind
    "memory": {"memory"},
    "fit": {"memory"},
    "how_many": {"how_many"},
    "speed": {"speed"},
    "time": {"time"},
    "compare": {"compare", "versus"},
    "rank": {"gpus"},
    "price": {"gpus", "instances"},
    "specs": {"describe", "compare"},
    "cloud": {"instances"},
    "reverse": {"models"},
}


def _right_kind(kb, row: dict) -> bool:  # type: ignore[no-untyped-def,type-arg]
    try:
        answer = kb.answer(row["text"])
    except KbqError:
        return False
    if row["kind"] == "compare" and answer.kind == "gpus":  # 'A vs B for W': the ranking kept to A and B
        return any(line.startswith("compare:") for line in answer.explanation)
    return answer.kind in KINDS[row["kind"]]


def _share(kb, held_out: bool) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = [r for r in rows if r["held_out"] is held_out]
    return sum(_right_kind(kb, r) for r in chosen), len(chosen)


def test_the_sentence_set_is_real_and_large_enough() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 100
    assert all(r["source"].startswith("https://") and r["kind"] in KINDS for r in rows)
    assert sum(r["held_out"] for r in rows) >= len(rows) // 3


@pytest.mark.slow
def test_real_sentences_get_an_answer_of_the_right_kind(kb) -> None:  # type: ignore[no-untyped-def]
    """The floor measured after merging main (1,000+ catalog models): development 29/76 = 38%
    (33/76 before that merge; held out 13/38 = 34% before it, not re-measured after). Many sentences
    name a model the KB does not have, or no model at all, and a reading that would drop a number,
    a setting or a condition the text names is refused. The issue's target is 90% (not reached)."""
    right, total = _share(kb, held_out=False)
    assert right / total >= 0.38, f"development set: {right}/{total}"
    right_h, total_h = _share(kb, held_out=True)
    print(f"development {right}/{total} = {right / total:.0%}; held out {right_h}/{total_h} = {right_h / total_h:.0%}")


@pytest.mark.xfail(strict=True, reason="the issue's 90% target is not reached (see the floor test above)")
def test_real_sentences_reach_the_target(kb) -> None:  # type: ignore[no-untyped-def]
    right, total = _share(kb, held_out=False)
    assert right / total >= 0.90


# --- the reference's sentences, and every documented example written as a sentence --------------------


def _reference_sentences() -> list[tuple[str, str]]:
    from kbq.lang import reference

    return [pair for section in reference.sections() for pair in section.sentences]


def _documented_examples() -> list[str]:
    """Every question of the README's table of forms and `kbq "..."` commands, and every example of
    the language reference (docs/language.md is generated from these)."""
    import re
    import shlex

    from kbq.lang import reference

    root = Path(__file__).resolve().parent.parent
    found: list[str] = []
    for line in (root / "README.md").read_text(encoding="utf-8").splitlines():
        found += [shlex.split(chunk)[1] for chunk in re.findall(r'kbq "[^"]+"', line)]
        if line.startswith("| ") and not line.startswith("| form"):
            found += re.findall(r"`([^`]+)`", line.split("|")[2])
    found += [e for section in reference.sections() for e in section.examples]
    return list(dict.fromkeys(found))


def test_the_reference_documents_sentences() -> None:
    assert len(_reference_sentences()) >= 10
    text = (Path(__file__).resolve().parent.parent / "docs" / "language.md").read_text(encoding="utf-8")
    for sentence, canonical in _reference_sentences():
        assert f"| {sentence} | `{canonical}` |" in text


@pytest.mark.parametrize(("sentence", "canonical"), _reference_sentences())
def test_every_reference_sentence_reads_as_documented(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    assert kb.answer(sentence).read_as == canonical


@pytest.mark.slow
def test_every_documented_example_works_written_as_a_sentence(kb) -> None:  # type: ignore[no-untyped-def]
    examples = _documented_examples()
    assert len(examples) >= 60
    wrong = []
    for example in examples:
        canonical = kb.answer(example).read_as or example  # an example that is itself a sentence: what it reads as
        answer = kb.answer(f"Hi! Quick question: {example}? Thanks")
        if answer.read_as != canonical:
            wrong.append((example, answer.read_as))
    assert wrong == []
