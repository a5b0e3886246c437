"""The sentence reader's rules for the classes of sentence it missed (issue 18): a question that needs a
model and names none, a time question with no card, cue words (fit, supports), a memory beside a card,
Chinese counts and gigabytes, a reported rate. The sentences are written as people write them (not
taken from the sets of tests/data/); each reading is checked against its canonical question's answer."""

from __future__ import annotations

import pytest

from kbq.errors import QueryError
from kbq.lang.sentence import MissingModelError, UnanswerableSentenceError


def _same_answer(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(sentence)
    assert answer.read_as == canonical, sentence
    same = kb.answer(canonical)
    assert same.kind == answer.kind and same.rows == answer.rows


@pytest.mark.parametrize(
    ("sentence", "canonical", "published_days"),
    [
        # Phi-4 model card (as Modular summarises it): 1,920 H100-80G for 21 days
        ("how long would it take to train phi-4?", "time to train Phi-4 training on 9.8t tokens on 1920 x NVIDIA H100 SXM5", 21),
        # DeepSeek-V3: 2.788M H800 GPU-hours (README) on 2,048 H800s (technical report) = about 57 days
        (
            "how long does it take to train deepseek v3",
            "time to train DeepSeek-V3 training on 14.8t tokens on 2048 x NVIDIA H800 SXM5",
            2788000 / 2048 / 24,
        ),
    ],
)
def test_a_time_question_with_no_card_reads_the_published_run_on_its_count(  # type: ignore[no-untyped-def]
    kb, sentence: str, canonical: str, published_days: float
) -> None:
    """No card named and the run states its GPU count: read on that many of its cards, so the wall-clock time
    is comparable with the published one (within a factor of two), not a one-card time in years."""
    answer = kb.answer(sentence)
    assert answer.kind == "time" and answer.read_as == canonical
    days = next(float(row[1]) for row in answer.rows if row[0] == "wall-clock")
    assert published_days / 2 < days < published_days * 2
    assert any("as published (kb/training_runs.ttl)" in line for line in answer.explanation)
    assert kb.answer(canonical.split(" training on")[0]).read_as == canonical  # the canonical form without a card too


def test_a_token_count_named_keeps_the_published_setup_but_not_its_tokens(kb) -> None:  # type: ignore[no-untyped-def]
    """'how long to train phi-4 on 1t tokens': the run's setup (1,920 x H100) with the sentence's tokens, not
    the run's 9.8T beside them; 1T of 9.8T tokens takes about a tenth of the time."""
    named = kb.answer("how long would it take to train phi 4 on 1t tokens?")
    assert named.read_as == "time to train Phi-4 training with 1t tokens on 1920 x NVIDIA H100 SXM5"
    full = kb.answer("how long would it take to train phi-4?")
    days = [next(float(row[1]) for row in a.rows if row[0] == "wall-clock") for a in (named, full)]
    assert days[0] == pytest.approx(days[1] / 9.8, rel=0.05)


@pytest.mark.parametrize(
    ("sentence", "form"),
    [
        ("How much GPU memory do I need to run this model?", "memory for MODEL"),
        ("what are the hardware requirements for running it locally?", "memory for MODEL"),
        ("how long would training this model take on a 1080 ti?", "time to train MODEL on GeForce GTX 1080 Ti"),
    ],
)
def test_a_sentence_needing_a_model_it_does_not_name_says_what_is_missing(kb, sentence: str, form: str) -> None:  # type: ignore[no-untyped-def]
    """Refused saying a model is missing and how to ask (never the grammar's token list), with the form
    filled with example models (kbq:exampleWorkload), each answering on this KB."""
    with pytest.raises(MissingModelError) as caught:
        kb.answer(sentence)
    assert f"ask '{form}'" in caught.value.message and "column" not in caught.value.message
    head = form.split(" MODEL")[0]
    examples = [q for q in caught.value.suggestions if q.startswith(head) and "MODEL" not in q]
    assert examples, caught.value.suggestions
    for question in caught.value.suggestions:
        assert kb.answer(question).read_as is None  # each a canonical question that answers


def test_a_time_question_with_no_card_stays_a_time_question(kb) -> None:  # type: ignore[no-untyped-def]
    """No card named: the card of the model's published training run (Llama 3 8B: H100), else the first of
    its GPU ranking (BERT-base, trained on TPUs), said; never a ranking ('fastest gpu for ...')."""
    llama = kb.answer("how long would it take to train llama 3 8b?")
    assert llama.kind == "time" and llama.read_as == "time to train Llama 3 8B training on 15t tokens on NVIDIA H100 SXM5"
    assert any("the card of Llama 3 8B pretraining: the run states no GPU count" in line for line in llama.explanation)
    assert kb.answer("time to train llama 3 8b").read_as == llama.read_as  # the canonical question without a card too
    bert = kb.answer("how long does it take to train bert base?")
    first = kb.answer("best gpu for BERT-base training").rows[0][1]
    assert bert.kind == "time" and bert.read_as is not None and bert.read_as.startswith("time to train BERT-base")
    assert " on 128b tokens " in bert.read_as  # BERT-Base's pretraining: 1,000,000 steps of 128,000 tokens (paper)
    assert any(
        line.startswith(f"no card named: read with {first}") or "the first of 'best gpu for" in line for line in bert.explanation
    )
    with pytest.raises(UnanswerableSentenceError, match="needs the tokens"):
        kb.answer("how long to fine-tune mistral 7b?")  # no run in the KB: the time form's own error, as a time question


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("could llama 3 8b go on an rtx 4060 ti 16gb?", "does Llama 3 8B fit on GeForce RTX 4060 Ti 16GB"),
        ("has anyone tried llama 3 8b on a 3060 12gb?", "does Llama 3 8B fit on GeForce RTX 3060 12GB"),
        ("请问两张A100是否能部署llama 3 70b", "does Llama 3 70B fit on 2 x A100"),
        ("can a 3090 support llama 3 70b at q4", "does Llama 3 70B at Q4_K_M fit on GeForce RTX 3090"),
        ("does the 3090 support bf16?", "describe GeForce RTX 3090"),
        ("is the rtx 4090 compatible with fp8?", "describe GeForce RTX 4090"),
    ],
)
def test_fit_and_supports_cues(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'could', 'has anyone tried', 是否能 cue a fit; 'support'/'compatible' a card's description (its native
    precisions and supporting software), or a fit when a model is named."""
    _same_answer(kb, sentence, canonical)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("部署deepseek v3需要几张A100的80G的卡", "how many NVIDIA A100 SXM4 80GB for DeepSeek-V3"),
        ("how many pieces of 80g a100 for deepseek v3", "how many NVIDIA A100 SXM4 80GB for DeepSeek-V3"),
        ("how many 40g a100 for llama 3 70b", "how many NVIDIA A100 PCIe 40GB for Llama 3 70B"),
        ("用2张4090跑llama 3 70b可以吗", "does Llama 3 70B fit on 2 x GeForce RTX 4090"),
        ("can 3 x rtx 3090 (72gb) run llama 3 70b at q4", "does Llama 3 70B at Q4_K_M fit on 3 x GeForce RTX 3090"),
        ("can I run llama 3 70b at q4 on a 3090 with 64gb system ram", "does Llama 3 70B at Q4_K_M fit on GeForce RTX 3090"),
    ],
)
def test_a_memory_beside_a_card_picks_its_variant(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'80g' is gigabytes; beside a card it picks the variant with that memory; the memory of several
    counted cards (3 x 24 = 72) is theirs; a computer's memory ('64gb system ram') is not hardware."""
    _same_answer(kb, sentence, canonical)


def test_a_memory_no_variant_of_the_card_has_is_a_budget_said(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("will llama 3 8b run on a 3080 16gb?")
    assert answer.read_as == "does Llama 3 8B fit on 16gb"
    note = next(line for line in answer.explanation if line.startswith("the KB has no 3080 with 16GB"))
    assert "GeForce RTX 3080 10GB" in note and "GeForce RTX 3080 12GB" in note


def test_a_reported_rate_is_left_out_and_said(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("Llama 3 8B on a 3090 gets 7 tokens/s, is this normal?")
    assert answer.kind == "speed" and answer.read_as == "speed of Llama 3 8B on GeForce RTX 3090"
    assert (
        "'7 tokens/s' is what the sentence reports: left out of the reading; compare it with kbq's estimate" in answer.explanation
    )


def test_chinese_or_between_two_cards_compares_them(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("3090或4090 单卡跑qwen2.5 32b吗")
    assert answer.read_as == "GeForce RTX 3090 vs GeForce RTX 4090 for Qwen2.5-32B"
    assert any(line.startswith("compare:") for line in answer.explanation)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("What is the memory bandwidth of the 4090?", "bandwidth of GeForce RTX 4090"),
        ("how many cuda cores does the 3090 have", "cuda_cores of GeForce RTX 3090"),
        ("how much vram does the 3090 have", "memory of GeForce RTX 3090"),
        ("4090的显存带宽是多少", "bandwidth of GeForce RTX 4090"),
    ],
)
def test_a_figure_of_a_card_reads_as_key_of_gpu(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """A card and one of the language's query keys, and no model: KEY of GPU (the figure intent's
    no-model template); with a model named the other intents read it."""
    _same_answer(kb, sentence, canonical)
    assert kb.answer("how much vram does llama 3 8b need on a 3090").read_as == "memory for Llama 3 8B on GeForce RTX 3090"


def test_a_fine_tuning_time_does_not_take_the_pretraining_tokens(kb) -> None:  # type: ignore[no-untyped-def]
    """The KB's training runs are pretraining runs: their tokens are no fine-tuning's (kbq:refines)."""
    assert (
        kb.answer("how long to train llama 2 7b on 8 a100").read_as
        == "time to train Llama 2 7B training on 2t tokens on 8 x A100"
    )
    with pytest.raises(UnanswerableSentenceError, match="needs the tokens"):
        kb.answer("How long to fine-tune Llama 2 7B on a single A100?")


def test_a_card_number_with_its_variant_letters_glued_on(kb) -> None:  # type: ignore[no-untyped-def]
    """'4090d': the KB's one card whose name ends so (GeForce RTX 4090 D), said; a number no card's
    name ends with is left alone."""
    answer = kb.answer("can a 4090d run qwen2.5 14b")
    assert answer.read_as == "does Qwen2.5-14B fit on GeForce RTX 4090 D"
    assert "read '4090d' as GeForce RTX 4090 D, the KB's one card whose name ends so" in answer.explanation
    from kbq.lang.sentence import near

    assert near.card_tail("4090d", kb.catalog) == "GeForce RTX 4090 D"
    assert near.card_tail("128k", kb.catalog) is None and near.card_tail("4090", kb.catalog) is None


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        (
            "how long to pretrain a 1b model on 100b tokens on 8 h100",
            "time to train 1b dense decoder training with 100b tokens on 8 x H100",
        ),
        ("how many GPU hours to train llama 2 7b?", "time to train Llama 2 7B training on 2t tokens on NVIDIA A100 SXM4 80GB"),
        ("What context length can I fit with llama 3.1 8b on 16gb?", "max context for Llama 3.1 8B on 16gb"),
    ],
)
def test_time_and_context_phrasings(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'100b tokens' is a count of tokens (not a model's size); 'how many gpu hours' asks a time, not a
    count of cards; 'what context length can I fit' the longest context."""
    _same_answer(kb, sentence, canonical)


def test_a_time_question_whose_reading_cannot_answer_says_why(kb) -> None:  # type: ignore[no-untyped-def]
    """'training time of X on Y' (the figure intent's 'of' cued first, but it reads only sentences naming no
    model): the time reading's own error, not a list of other readings."""
    with pytest.raises(UnanswerableSentenceError, match="read as 'time to train GPT-2 Small training on 8 x V100'"):
        kb.answer("training time of gpt-2 on 8 v100")


def test_a_supports_reading_says_which_rows_answer(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("does the a100 support fp8?")
    assert answer.read_as == "describe A100" and any("'native precision'" in line for line in answer.explanation)
    natives = [str(row[1]) for row in answer.rows if str(row[0]).startswith("native precision")]
    assert "BF16" in natives and "FP8" not in natives  # Ampere has no FP8: the rows answer the question
    fit = kb.answer("can a 3090 support llama 3 70b at q4")
    assert not any("'native precision'" in line for line in fit.explanation)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("what's the difference between the 4090 and the 4090 D", "compare GeForce RTX 4090 vs GeForce RTX 4090 D"),
        ("Is the H20 slower than the H100?", "compare NVIDIA H20 vs H100"),
        ("Is the L40S any good?", "describe NVIDIA L40S"),
        ("does llama 3 8b fit on a 3090 ti", "does Llama 3 8B fit on GeForce RTX 3090 Ti"),
    ],
)
def test_cards_and_their_variant_words(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'4090 D': a card's number and a variant word apart name another card; the end of a card's name
    ('ti') is never dropped as a sentence's wrapping; 'slower than' compares, 'any good' describes."""
    _same_answer(kb, sentence, canonical)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("what's the best llm I can run on a 4090?", "models that fit on GeForce RTX 4090"),
        ("Which LLM should I use with my 3060 12GB?", "models that fit on GeForce RTX 3060 12GB"),
        ("which is the best model for a 3090 at q4", "models that fit on GeForce RTX 3090 at Q4_K_M"),
    ],
)
def test_the_best_model_for_a_card_is_the_reverse_question(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'the best llm for my card': the models that fit on it (largest first), not the best GPU."""
    _same_answer(kb, sentence, canonical)
    assert kb.answer("what's the best gpu for llama 3 70b").kind == "gpus"


def test_a_model_on_hardware_asks_whether_it_fits(kb) -> None:  # type: ignore[no-untyped-def]
    """'MODEL on HARDWARE?' with no other cue asks whether it runs there (the fit cue 'on'); a model and a
    card side by side with no word between them still get their readings."""
    from kbq.lang.sentence import AmbiguousSentenceError

    _same_answer(kb, "Mixtral 8x7B on 2x RTX 4090?", "does Mixtral 8x7B fit on 2 x GeForce RTX 4090")
    with pytest.raises(AmbiguousSentenceError):
        kb.answer("rtx 4090 llama 3 70b")


def test_a_weak_cue_counts_only_alone(kb) -> None:  # type: ignore[no-untyped-def]
    """'on' cues a fit only when nothing else is cued: a time question whose reading cannot answer keeps
    its own error rather than being answered as a fit (kbq:weakCue)."""
    with pytest.raises(UnanswerableSentenceError, match="read as 'time to train Llama 2 7B full fine-tuning on A100'"):
        kb.answer("How long to fine-tune Llama 2 7B on a single A100?")


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("两张4090能微调llama3 8b吗", "does Llama 3 8B full fine-tuning fit on 2 x GeForce RTX 4090"),
        ("H100训练速度比A100快多少", "H100 vs A100 for training"),
        ("4090 24G 和 A100 40G 哪个好", "compare GeForce RTX 4090 vs NVIDIA A100 PCIe 40GB"),
    ],
)
def test_chinese_yes_no_questions_comparatives_and_two_cards_with_memory(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'能…吗' (can … ?) cues a fit when nothing else does (weak cues); 'A比B快多少' compares; each card's
    memory beside it picks its variant ('A100 40G': the 40 GB A100)."""
    _same_answer(kb, sentence, canonical)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("How many nodes of 8xH100 to train llama 3 405b?", "how many H100 for Llama 3.1 405B training"),
        (
            "What's the minimum number of A100 80GB needed for DeepSeek-R1 at fp8?",
            "how many NVIDIA A100 SXM4 80GB for DeepSeek-R1 at FP8",
        ),
    ],
)
def test_a_generation_number_before_a_size_and_counts_asked(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'llama 3 405b': the line and generation before the size narrow the KB's models of that size (Llama
    3.1 405B, said), not a generic decoder; 'minimum number of GPU' asks how many."""
    _same_answer(kb, sentence, canonical)


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("rtx 4090 vram", "memory of GeForce RTX 4090"),
        ("4090 memory bandwidth", "bandwidth of GeForce RTX 4090"),
        ("h100 tdp?", "tdp of H100"),
        ("llama 3 8b vram", "memory for Llama 3 8B"),
    ],
)
def test_a_card_and_a_key_alone_read_as_the_figure(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """A card and a query key and nothing else: the key cues its figure (kbq:cueRole), and a cue that is
    only the key's word ('vram') counts as weak; with a model named, the model's memory."""
    _same_answer(kb, sentence, canonical)
    assert kb.answer("VRAM Usage: Is a 4090 sufficient?").read_as == "models that fit on GeForce RTX 4090"  # 'sufficient' asks


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("which models can I fine-tune on a 4090", "models that fit on GeForce RTX 4090 for full fine-tuning"),
        ("can I pretrain from scratch on 4 x a100?", "models that fit on 4 x A100 for training"),
        ("what llms can i train with qlora on my 3090?", "models that fit on GeForce RTX 3090 for QLoRA fine-tuning"),
        ("is 24gb enough to fine-tune?", "models that fit on 24gb for full fine-tuning"),
        ("what's the biggest model I could fine-tune on a 4090?", "models that fit on GeForce RTX 4090 for full fine-tuning"),
    ],
)
def test_a_process_named_without_a_model_is_kept_in_the_reverse_question(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'which models can I fine-tune on X': the models that fit for that process, never the inference list."""
    _same_answer(kb, sentence, canonical)
    assert kb.answer(sentence).explanation[0].endswith(canonical.split(" for ")[-1].split()[-1])  # said in the head


def test_models_that_fit_for_a_process_size_each_model_for_it(kb) -> None:  # type: ignore[no-untyped-def]
    """'models that fit on HW for PROCESS' sizes each model as 'memory for MODEL PROCESS on HW': full training
    with AdamW holds about 16 bytes a parameter (2 weights + 2 gradients + 12 optimizer, ZeRO paper), so on
    24 GB no model above 1.5B parameters fits, while inference lists 7B models."""
    training = kb.answer("models that fit on 24gb for training")
    inference = kb.answer("models that fit on 24gb")
    assert training.kind == "models" and training.rows and len(training.rows) < len(inference.rows)
    assert max(float(row[1]) for row in training.rows) <= 1.5
    assert max(float(row[1]) for row in inference.rows) >= 7
    model, needed = training.rows[0][0], training.rows[0][3]
    memory = kb.answer(f"memory for {model} training on 24gb")
    assert next(row[1] for row in memory.rows if row[0] == "total") == pytest.approx(needed, abs=0.01)
    with pytest.raises(QueryError):
        kb.answer("models that fit on 24gb for lora for training")  # one process


@pytest.mark.parametrize(
    ("sentence", "canonical"),
    [
        ("a100 40gb vs 80gb", "compare NVIDIA A100 PCIe 40GB vs NVIDIA A100 SXM4 80GB"),
        ("h100 pcie vs sxm?", "compare NVIDIA H100 PCIe vs NVIDIA H100 SXM5"),
        ("4060 ti 8gb or 16gb", "compare GeForce RTX 4060 Ti 8GB vs GeForce RTX 4060 Ti 16GB"),
        ("should I get the 3060 12gb or the 8gb?", "compare GeForce RTX 3060 12GB vs GeForce RTX 3060 8 GB"),
    ],
)
def test_a_side_naming_only_a_variant_takes_the_card_of_the_other(kb, sentence: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    """'a100 40gb vs 80gb': the second side names only a variant; it is that card's variant, said."""
    _same_answer(kb, sentence, canonical)
    assert any("the variant of the card before it" in line for line in kb.answer(sentence).explanation)


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        ("Can orpo run on a single H20?", "orpo"),
        ("can I do grpo on one h20?", "grpo"),
        ("which models can I distil on a 4090", "distil"),
        ("models that fit on rtx 4090 for frobnication", "frobnication"),
    ],
)
def test_an_unknown_name_in_a_workloads_place_is_said_not_dropped(kb, sentence: str, word: str) -> None:  # type: ignore[no-untyped-def]
    """An unknown word where the workload goes is refused by name; the reverse question (which would drop it)
    is only a suggestion, never the answer."""
    with pytest.raises(UnanswerableSentenceError) as caught:
        kb.answer(sentence)
    assert f"'{word}' is not a model or process kbq knows" in caught.value.message
    assert "close names: " in caught.value.message or "the processes kbq sizes: " in caught.value.message
    assert caught.value.suggestions and all(q.startswith("models that fit on ") for q in caught.value.suggestions)


def test_an_ordinary_word_elsewhere_still_reads_as_the_reverse_question(kb) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer("what decent models can I run on a 3060?")
    assert answer.read_as is not None and answer.read_as.startswith("models that fit on ")
