"""The sentence reader (kbq/lang/sentence/): sentences as people type them become the canonical
question they mean, the answer says which ('read as: ...'), an ambiguous sentence gets its
readings and an unreadable one the nearest questions that answer. Each sentence is checked
against the canonical question it should read as, and that question against its own answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from kbq.errors import KbqError, QueryError

DATA = Path(__file__).parent / "data" / "sentences.jsonl"
FLOOR = 0.76  # the development share (58/76) this branch reaches (see test_real_sentences_get_an_answer_of_the_right_kind)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("can I run llama 3 70b on two 3090s?", "does Llama 3 70B fit on 2 x GeForce RTX 3090"),
        ("will llama 3 8b run on my 3060?", "does Llama 3 8B fit on RTX 3060"),
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
    assert answer.read_as == "memory for Qwen2.5-14B at GPTQ 4-bit"
    assert any("'awq' names a fine-tune or packaging" in line for line in answer.explanation)


def test_a_packaging_suffix_sets_the_weight_format(kb) -> None:  # type: ignore[no-untyped-def]
    """(b) '-AWQ', '-GPTQ', '-FP8', '-bnb-4bit' say how the weights are stored (kb/sentences.ttl,
    kbq:suffixFormat); a format the question names wins; '-GGUF' names none (the file's does)."""
    awq = kb.answer("memory for Qwen/Qwen2.5-14B-Instruct-AWQ")
    assert awq.rows == kb.answer("memory for qwen2.5-14b at awq").rows
    assert awq.rows != kb.answer("memory for qwen2.5-14b").rows  # not FP16
    assert any("'-awq' suffix" in line for line in awq.explanation)
    assert kb.answer("memory for Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4").read_as == "memory for Qwen2.5-14B at GPTQ 4-bit"
    assert kb.answer("memory for Qwen/Qwen2.5-14B-Instruct-FP8").read_as == "memory for Qwen2.5-14B at FP8"
    bnb = kb.answer("can a 4090 run unsloth/Qwen2.5-14B-Instruct-bnb-4bit")
    assert bnb.read_as == "does Qwen2.5-14B at NF4 fit on GeForce RTX 4090"
    assert kb.answer("memory for Qwen/Qwen2.5-14B-Instruct-AWQ at fp16").read_as == "memory for Qwen2.5-14B at FP16"
    gguf = kb.answer("does Qwen/Qwen2.5-14B-Instruct-GGUF q4_k_m fit on a 4090")
    assert gguf.read_as == "does Qwen2.5-14B at Q4_K_M fit on GeForce RTX 4090"


def test_a_bare_size_reads_as_a_generic_dense_decoder(kb) -> None:  # type: ignore[no-untyped-def]
    """(a) 'a 70b model': the size asked, the rest of the architecture from the KB's closest dense
    decoder, both said; the weights are the size at the format (70e9 x 2 bytes at FP16)."""
    import re

    answer = kb.answer("how much vram do I need for a 70b model")
    assert answer.kind == "memory" and answer.read_as == "memory for 70b dense decoder"
    weights = next(row for row in answer.rows if row[0] == "weights")
    assert weights[1] == pytest.approx(70e9 * 2 / 1e9, rel=1e-3)
    assumed = next(line for line in answer.explanation if "dense decoder:" in line)
    assert "70,000,000,000 parameters as asked" in assumed
    lender = re.search(r"that of (.+?) \(([\d.]+)B\), the KB's dense decoder closest in size", assumed)
    assert lender is not None and abs(float(lender.group(2)) - 70) / 70 < 0.1
    own = kb.answer(f"memory for {lender.group(1)}")  # the KV cache is the lender's (its layers and KV heads)
    kv = [row[1] for row in answer.rows if row[0] == "KV cache"]
    assert kv and kv == [row[1] for row in own.rows if row[0] == "KV cache"]
    # at a format, on a card: the same generic model; a mixture size is not a dense one
    quantised = kb.answer("can a 4090 run a 13b model at 4 bit")
    assert quantised.kind == "memory" and any("13B dense decoder (INT4 weights" in line for line in quantised.explanation)
    assert kb.answer("does 120b fit on 2 x h100").explanation[0].startswith("verdict: does not fit")  # 240 GB of weights
    try:  # a size with an active size after it names a mixture of experts: never a dense decoder
        mixture = kb.answer("how much memory is required to run Qwen9-30B-A3B").read_as or ""
    except KbqError:
        mixture = ""
    assert "dense decoder" not in mixture
    ranked = kb.answer("best gpu for 70b model")  # ranked by the lender's profile, not listed by name
    assert ranked.kind == "gpus" and not any("no requirement profile" in line for line in ranked.explanation)
    from kbq.lang.workload import generic

    assert generic.params_of("8x7b") is None and generic.params_of("1.5b") == 1.5e9  # a mixture's size is not a dense one


def test_a_card_named_by_its_number_is_not_a_year(kb) -> None:  # type: ignore[no-untyped-def]
    """(c) 'can a 4090 run X' and 'on 4090' name the card (they were read as the year 4090)."""
    card = kb.answer("does llama 3 8b fit on rtx 4090")
    for question in ("can a 4090 run llama 3 8b", "does llama 3 8b fit on 4090", "does llama 3 8b fit on a 4090"):
        answer = kb.answer(question)
        assert answer.kind == "memory" and answer.rows == card.rows, question
    assert kb.answer("gpu for bert in 2019 limit 2").kind == "gpus"  # a year is still a year


def test_speed_without_hardware_is_a_ranking_by_that_speed(kb) -> None:  # type: ignore[no-untyped-def]
    """(d) a speed question that names no hardware reads as the GPUs ranked for it, echoed and said; one
    that names hardware kbq cannot use keeps its error. (A time question stays a time question: below.)"""
    ranking = kb.answer("fastest gpu for llama 3 8b")
    for question in ("how fast is llama 3 8b", "how many tokens per second does llama 3 8b get"):
        answer = kb.answer(question)
        assert answer.read_as == "fastest gpu for Llama 3 8B" and answer.kind == "gpus", question
        assert answer.rows == ranking.rows
        assert any(line.startswith("no hardware named") for line in answer.explanation)
    assert kb.answer("speed of llama 3 8b on rtx 4090").read_as is None  # with a card: the speed itself


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


class Outcome(NamedTuple):
    kind: str | None  # the answer's kind; None when the sentence was refused
    read_as: str | None
    lines: tuple[str, ...]  # the answer's explanation, or the refusal's message
    refusal: str | None  # the KbqError's class name when refused


def _rows() -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def answer_all(kb, rows: list[dict]) -> dict[str, Outcome]:  # type: ignore[no-untyped-def,type-arg]
    """Each row's sentence answered once, in this process through the library (also for
    test_sentences_fresh). Anything but a KbqError (a traceback) fails here."""
    found: dict[str, Outcome] = {}
    for row in rows:
        try:
            answer = kb.answer(row["text"])
        except KbqError as exc:
            found[row["text"]] = Outcome(None, None, (str(exc),), type(exc).__name__)
            continue
        found[row["text"]] = Outcome(answer.kind, answer.read_as, tuple(answer.explanation), None)
    return found


@pytest.fixture(scope="module")
def outcomes(kb) -> dict[str, Outcome]:  # type: ignore[no-untyped-def]
    """Every real sentence answered once; the share, the target and the per-sentence checks below all read these."""
    return answer_all(kb, _rows())


def _right_kind(outcome: Outcome, row: dict) -> bool:  # type: ignore[type-arg]
    if outcome.kind is None:
        return False
    if row["kind"] == "compare" and outcome.kind == "gpus":  # 'A vs B for W': the ranking kept to A and B
        return any(line.startswith("compare:") for line in outcome.lines)
    return outcome.kind in KINDS[row["kind"]]


NO_MODEL_NOTE = "no model named"  # the note of the reverse question read for a sentence that names no model


def _right_kind_extended(outcome: Outcome, row: dict) -> bool:  # type: ignore[type-arg]
    """As _right_kind, and also: a fit or memory sentence that names hardware but no model ('is 24 gb
    enough?', 'can I run this on my rtx 4090?') answered by the reverse question ('models that fit on
    ...'), which says that no model was named. No memory verdict can be given without a model; the
    models that fit are the answer such a sentence can get (llmfit answers it so). Reported beside the
    strict share, never instead of it."""
    if _right_kind(outcome, row):
        return True
    return (
        row["kind"] in ("fit", "memory")
        and outcome.kind == "models"
        and any(line.startswith(NO_MODEL_NOTE) for line in outcome.lines)
    )


def _share(outcomes: dict[str, Outcome], held_out: bool, extended: bool = False) -> tuple[int, int]:
    chosen = [r for r in _rows() if r["held_out"] is held_out]
    right = _right_kind_extended if extended else _right_kind
    return sum(right(outcomes[r["text"]], r) for r in chosen), len(chosen)


def test_the_sentence_set_is_real_and_large_enough() -> None:
    rows = _rows()
    assert len(rows) >= 100
    assert all(r["source"].startswith("https://") and r["kind"] in KINDS for r in rows)
    assert sum(r["held_out"] for r in rows) >= len(rows) // 3
    assert len({r["text"] for r in rows}) == len(rows)  # the answers are keyed by text


@pytest.mark.slow  # the sweep (the fixture answers 114 sentences): the full lane runs it, as CI does
@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["text"][:40])
def test_each_real_sentence_is_answered_or_refused_clearly(outcomes, row: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    """An answer to a sentence starts by echoing the canonical question it answered; a refusal is
    one of kbq's errors with a message (never a traceback: that fails the fixture)."""
    outcome = outcomes[row["text"]]
    if outcome.kind is None:
        assert outcome.refusal and outcome.lines[0]
    elif outcome.read_as is not None:
        assert outcome.lines[0] == f"read as: {outcome.read_as}"


@pytest.mark.slow
def test_real_sentences_get_an_answer_of_the_right_kind(outcomes) -> None:  # type: ignore[no-untyped-def]
    """The floor measured on this branch: development 58/76 = 76% strict (55/76 before the rules of
    tests/test_sentence_rules.py: a time question with no card stays a time question, cue words for fit,
    supports and a card's figure, a memory beside a card picks its variant; 53/76 before main's issue-18
    models; 47/76 before sentences naming hardware but no model read as the reverse question, 'llama 70b'
    as the newest declared generation, '35b-a3b' as the KB's mixture of that total and active size, counts
    the Chinese way ('四卡', '2台 H100*8'), typos of name words ('llamma', 'rthx'), reported rates left
    out; 41/76 before a family without a size read as its smallest, 'how many gpus' with no card read with
    the first-ranked card; 32/76 before a size alone read as a generic dense decoder); held out 20/38 =
    53% strict (19/38 before; reported, not asserted: it is kept out of development). Counting the
    reverse answer to a fit or memory sentence that names no model (_right_kind_extended): development
    64/76 = 84%, held out 24/38 = 63%. Still missed: sentences that name no model (a memory, time or speed
    question is refused saying a model is missing, with the form filled with example models: no answer of
    the right kind can be given without one), speed questions with no hardware (read as a ranking), and
    sentences reporting figures rather than asking ('whisper.cpp needs only 3.3 GB, is it true'). A
    reading that would drop a number, a setting or a condition the text names is refused. The issue's
    target is 90% (not reached)."""
    right, total = _share(outcomes, held_out=False)
    right_h, total_h = _share(outcomes, held_out=True)
    print(f"strict: development {right}/{total} = {right / total:.0%}; held out {right_h}/{total_h} = {right_h / total_h:.0%}")
    ext, ext_h = _share(outcomes, False, extended=True)[0], _share(outcomes, True, extended=True)[0]
    print(f"with the no-model reverse: development {ext}/{total} = {ext / total:.0%}; ", end="")
    print(f"held out {ext_h}/{total_h} = {ext_h / total_h:.0%}")
    assert right / total >= FLOOR, f"development set: {right}/{total}"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the issue's 90% target is not reached (see the floor test above)")
def test_real_sentences_reach_the_target(outcomes) -> None:  # type: ignore[no-untyped-def]
    right, total = _share(outcomes, held_out=False)
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
        canonical = kb.plan(example).extra.get("read_as") or example  # a sentence itself: what it reads as (not run)
        answer = kb.answer(f"Hi! Quick question: {example}? Thanks")
        if answer.read_as != canonical:
            wrong.append((example, answer.read_as))
    assert wrong == []


def test_a_family_named_without_a_size_reads_as_its_smallest_size(kb) -> None:  # type: ignore[no-untyped-def]
    """'run llama 3 on a 4060 ti': the family's smallest size in the KB (by parameter count), its
    other sizes named in the answer; the grammar itself still refuses 'memory for llama 3'."""
    answer = kb.answer("could I run Llama 3 on an RTX 4060 Ti 16GB?")
    assert answer.read_as == "does Llama 3 8B fit on GeForce RTX 4060 Ti 16GB"
    assert any("smallest, Llama 3 8B" in line and "Llama 3 70B" in line for line in answer.explanation)


def test_how_many_with_no_card_reads_with_the_first_ranked_gpu(kb) -> None:  # type: ignore[no-untyped-def]
    first = kb.answer("best gpu for DeepSeek-V3").rows[0][1]
    answer = kb.answer("how many gpus do I need to deploy deepseek-v3?")
    assert answer.kind == "how_many" and answer.read_as is not None
    assert answer.read_as.startswith("how many ") and answer.read_as.endswith(" for DeepSeek-V3")
    assert any("the first of 'best gpu for DeepSeek-V3'" in line for line in answer.explanation)
    assert answer.explanation[2].startswith(f"{answer.rows[0][1]} x {first}:")  # that card, counted


def test_bits_inside_a_size_token_set_the_weight_format(kb) -> None:  # type: ignore[no-untyped-def]
    assert kb.answer("how much vram for a 72b-4bit model").read_as == "memory for 72b dense decoder at INT4"
    assert kb.answer("how much vram for qwen2-72b-4bit").rows == kb.answer("memory for qwen2-72b at int4").rows
    assert kb.answer("how much vram for qwen2-72b-int8 at fp16").read_as == "memory for Qwen2-72B at FP16"  # named wins


def test_a_year_is_kept_where_the_reading_takes_it_else_left_out_and_said(kb) -> None:  # type: ignore[no-untyped-def]
    compared = kb.answer("rtx 4090 vs rtx 3090: which one should I buy in 2026?")
    assert compared.read_as == "compare GeForce RTX 4090 vs GeForce RTX 3090 in 2026"
    memory = kb.answer("how much vram do I need for llama 3 8b in 2026?")
    assert memory.read_as == "memory for Llama 3 8B" and memory.rows == kb.answer("memory for llama 3 8b").rows
    assert any(line.startswith("'in 2026' left out") for line in memory.explanation)
    with pytest.raises(QueryError):
        kb.answer("gpu for lstm on 0 gpus")  # a number that is not a year is never left out


def test_a_plus_between_two_names_separates_them(kb) -> None:  # type: ignore[no-untyped-def]
    from kbq.lang.sentence import _tokens

    assert _tokens("4bit lora+flashattention2 for mixtral") == ["4bit", "lora", "flashattention2", "for", "mixtral"]
    assert _tokens("a 16gb+ card") == ["a", "16gb", "card"]
    answer = kb.answer("how much vram does lora+flashattention2 on mixtral 8x7b need")
    assert answer.read_as.startswith("memory for Mixtral 8x7B LoRA")


def test_hardware_with_no_model_named_reads_as_the_reverse_question(kb) -> None:  # type: ignore[no-untyped-def]
    """'is 24 gb enough?', 'can I run this on my rtx 4090?': no model is named ('this' stands for one),
    so the answer is the models that fit on that hardware, and it says no model was named. A name kbq
    does not know is not read so (the sentence names a model: its error stays)."""
    fitting = kb.answer("models that fit on 24gb")
    for sentence in ("Is 24 GB of GPU memory enough?", "Can it run on 24 GB VRAM?", "is it possible to run on 24gb vram"):
        answer = kb.answer(sentence)
        assert answer.read_as == "models that fit on 24gb" and answer.rows == fitting.rows, sentence
        assert any(line.startswith(NO_MODEL_NOTE) for line in answer.explanation)
    assert kb.answer("Can an RTX 4060 Ti 16GB run local AI?").read_as == "models that fit on GeForce RTX 4060 Ti 16GB"
    with pytest.raises(QueryError):
        kb.answer("can I run frobnicator on a 24gb card?")
    assert kb.answer("can I run llama 3 8b on a 24gb card?").read_as == "does Llama 3 8B fit on 24gb"  # a model named


def test_a_size_several_generations_share_reads_as_the_newest_declared(kb) -> None:  # type: ignore[no-untyped-def]
    """'llama 70b': Llama 2, 3, 3.1 and 3.3 all have a 70B; the line's order (kbq:ModelLine in
    kb/sentences.ttl) takes the newest, the answer says so and names the others."""
    answer = kb.answer("how much vram does llama 70b need at q4?")
    assert answer.read_as == "memory for Llama 3.3 70B at Q4_K_M"
    note = next(line for line in answer.explanation if "names several models" in line)
    assert "Llama 3 70B" in note and "Llama 2 70B" in note
    assert not any("family named without a size" in line for line in answer.explanation)  # the size named it
    qwen = kb.answer("how much vram for qwen 72b at q4")  # Qwen1.5, 2 and 2.5 have a 72B; Qwen2's models are listed
    assert qwen.read_as == "memory for Qwen2.5-72B at Q4_K_M"


def test_a_mixture_size_reads_as_the_kb_model_of_that_total_and_active_size(kb) -> None:  # type: ignore[no-untyped-def]
    """A mixture the KB lacks ('Qwen3.7-35B-A3B'): the KB's mixtures of 35B total and 3B active are
    Qwen3.5-35B-A3B and Qwen3.6-35B-A3B, whose kbq:baseModel is the former (the same architecture)."""
    answer = kb.answer("How much memory is required to run Qwen3.7-35B-A3B?")
    assert answer.read_as == "memory for Qwen3.5-35B-A3B"
    assert any(line.startswith("'35b-a3b' read as Qwen3.5-35B-A3B") for line in answer.explanation)


def test_a_question_needing_a_model_it_does_not_name_says_so(kb) -> None:  # type: ignore[no-untyped-def]
    from kbq.lang.sentence import MissingModelError

    for sentence, ask in (
        ("how long would training this model take on a 1080 ti?", "time to train MODEL on GeForce GTX 1080 Ti"),
        ("how many 4090s do I need?", "how many GeForce RTX 4090 for MODEL"),
    ):
        with pytest.raises(MissingModelError, match="names no model") as caught:
            kb.answer(sentence)
        assert f"ask '{ask}'" in caught.value.message
        for question in caught.value.suggestions:
            kb.answer(question)
    assert kb.answer("A100 - RTX4090 same speed (or even slower)").kind in ("compare", "versus")  # another intent reads it


def test_counts_written_the_chinese_way(kb) -> None:  # type: ignore[no-untyped-def]
    """A numeral and a classifier before a card count it (even inside a word jieba leaves whole: '有四卡');
    '台' counts machines, so a count after the card ('H100*8') is per machine and they multiply."""
    assert kb.answer("我现在手上有四卡H800够吗 qwen3 32b").read_as == "does Qwen3-32B fit on 4 x H800"
    answer = kb.answer("用 2台 H100*8 部署 deepseek-R1 671 B，context length 可以一直支持到 128k吗")
    assert answer.read_as == "does DeepSeek-R1 with 128k context fit on 16 x H100"
    assert "2 machines of 8 x H100: read as 16 x H100" in answer.explanation


def test_a_typo_of_a_name_word_is_corrected_only_when_it_then_names_something(kb) -> None:  # type: ignore[no-untyped-def]
    """'llamma 3', 'rthx 3060': one close word of the KB's names, used when the corrected words name a
    card or a model, and said; 'large-v3' is the tail of one model's name. Nothing else is guessed."""
    answer = kb.answer("can I run Llamma 3 8b on an RTHX 3060?")
    assert answer.read_as == "does Llama 3 8B fit on RTX 3060"
    assert "read 'llamma' as 'llama' (a close word of the KB's names)" in answer.explanation
    assert "read 'rthx' as 'rtx' (a close word of the KB's names)" in answer.explanation
    tail = kb.answer("如果想要正常使用large-v3，大概需要多少显存？")
    assert tail.read_as == "memory for Whisper large-v3"
    from kbq.lang.sentence import near

    catalog = kb.catalog
    assert near.typo("pancakes", catalog, set()) is None and near.typo("llama", catalog, set()) is None
    assert near.tail("v3", catalog) is None  # too short to name one model


def test_reported_numbers_and_counts_of_cards_before_their_memory(kb) -> None:  # type: ignore[no-untyped-def]
    """A number before a rate ('18-22 tokens per second') is what the writer measured: the reading may
    leave it out. 'two graphics cards with 24gb' counts the budget. 'using' + an ignored word names no backend."""
    answer = kb.answer("Llama 3 8B at Q4 on a 3090 running at 18-22 tokens per second")
    assert answer.read_as == "speed of Llama 3 8B at Q4_K_M on GeForce RTX 3090"
    assert kb.answer("can llama 3 70b run on two graphics cards with 24gb").read_as == "does Llama 3 70B fit on 2 x 24gb"
    with pytest.raises(QueryError, match="frobnicator"):
        kb.answer("how fast is llama 3 8b on a 4090 using frobnicator")


def test_a_time_question_takes_the_tokens_of_the_kb_training_run_or_says_what_is_missing(kb) -> None:  # type: ignore[no-untyped-def]
    """'how long to train llama 3 8b on 64 h100s' names no token count: the KB's published run of that
    model gives it (said); with no run in the KB, the answer says the time question needs the tokens."""
    from kbq.lang.sentence import UnanswerableSentenceError

    answer = kb.answer("how long would it take to train llama 3 8b on 64 h100s")
    assert answer.kind == "time" and answer.read_as is not None and " on 15t tokens " in answer.read_as
    assert any(line.startswith("no token count named: read with 15t tokens, those of Llama 3 8B") for line in answer.explanation)
    with pytest.raises(UnanswerableSentenceError, match="needs the tokens"):
        kb.answer("how long to train mistral 7b on 8 v100")  # no run of Mistral 7B in the KB


def test_a_reverse_question_naming_no_hardware_says_so(kb) -> None:  # type: ignore[no-untyped-def]
    from kbq.lang.sentence import MissingHardwareError

    with pytest.raises(MissingHardwareError, match="ask 'models that fit on HARDWARE'"):
        kb.answer("What LLMs Can I Run? Complete VRAM Guide")


def test_boundary_questions_and_a_card_with_its_memory(kb) -> None:  # type: ignore[no-untyped-def]
    """'max context' and 'largest batch' sentences read as the boundary forms; a card and its memory side
    by side ('a 12gb 3060') are one card when the KB names that variant. A memory budget in a boundary
    question answers (it raised a ValueError before)."""
    assert kb.answer("what's the max context I can get with llama 3 8b on a 4090?").read_as == (
        "max context for Llama 3 8B on GeForce RTX 4090"
    )
    assert kb.answer("largest batch size for llama 3 8b on an a100").read_as == "max batch for Llama 3 8B on A100"
    assert kb.answer("can i run llama 3 8b on my 3060 (12gb)?").read_as == "does Llama 3 8B fit on GeForce RTX 3060 12GB"
    assert kb.answer("max context for llama 3 8b on 24gb").kind == "capacity"


def test_a_process_that_refines_another_named_is_the_one_read(kb) -> None:  # type: ignore[no-untyped-def]
    """'fine-tune ... with qlora': QLoRA fine-tuning refines full fine-tuning (kbq:refines in
    kb/sentences.ttl), so the adapter method is sized, not full fine-tuning."""
    answer = kb.answer("can I fine-tune llama 3.1 8b on a 16gb card with qlora")
    assert answer.read_as == "does Llama 3.1 8B QLoRA fine-tuning fit on 16gb"
    assert kb.answer("how much vram do I need to fine-tune llama 3 8b?").read_as == "memory for Llama 3 8B full fine-tuning"
