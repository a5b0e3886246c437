"""The catalog people ask about (issue 19): generated models and accelerators, every figure sourced,
names that resolve without clashes, and software support that answers."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from pathlib import Path

import pytest
import rdflib

from kbq.store.names import NAMING_PREDICATES, normalise

ROOT = Path(__file__).resolve().parent.parent
KBQ = rdflib.Namespace("https://kbq.dev/ontology#")
DCT = rdflib.Namespace("http://purl.org/dc/terms/")
GENERATED_MODELS = ROOT / "kb" / "models_generated.ttl"
GENERATED_GPUS = ROOT / "kb" / "gpus_generated.ttl"


def _rows(kb, query: str) -> list[list[object]]:  # type: ignore[no-untyped-def]
    from kbq.lang.catalog import PREFIXES

    return kb.table(PREFIXES + query).rows


def _count(kb, query: str) -> int:  # type: ignore[no-untyped-def]
    return int(_rows(kb, query)[0][0])


def test_at_least_1000_models_with_architecture_each_sourced_and_tiered(kb) -> None:  # type: ignore[no-untyped-def]
    with_architecture = """SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE {
      ?m a kbq:Model ; kbq:parameterCount ?p .
      { ?m kbq:numLayers ?l } UNION { ?m kbq:imageSize ?s } }"""
    assert _count(kb, with_architecture) >= 1000
    unsourced = """SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE {
      ?m a kbq:Model ; kbq:parameterCount ?p .
      FILTER NOT EXISTS { ?m dcterms:source ?s . ?s kbq:tier ?t } }"""
    assert _count(kb, unsourced) == 0


def test_at_least_300_accelerators_with_memory_and_bandwidth_each_sourced_and_tiered(kb) -> None:  # type: ignore[no-untyped-def]
    complete = "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { ?g a kbq:GPU ; kbq:memory ?m ; kbq:memoryBandwidth ?b }"
    assert _count(kb, complete) >= 300
    unsourced = """SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { ?g a kbq:GPU .
      FILTER NOT EXISTS { ?g dcterms:source ?s . ?s kbq:tier ?t } }"""
    assert _count(kb, unsourced) == 0


def test_the_catalog_spans_the_families_the_issue_names(kb) -> None:  # type: ignore[no-untyped-def]
    def gpus(where: str) -> int:
        return _count(kb, f"SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE {{ ?g a kbq:GPU ; {where} }}")

    assert gpus("kbq:architecture kb:Kepler") >= 20
    assert gpus("kbq:architecture kb:Maxwell") >= 15
    assert gpus("kbq:architecture kb:GCN4") >= 10  # Polaris
    assert gpus("kbq:architecture kb:RDNA2") >= 10
    assert gpus("kbq:vendor kb:Apple ; kbq:unifiedMemory true") >= 10
    assert gpus('rdfs:label ?l FILTER(STRSTARTS(?l, "Jetson"))') >= 10
    assert gpus('rdfs:label ?l FILTER(CONTAINS(?l, "Arc "))') >= 8


def _graph(*paths: Path) -> rdflib.Graph:
    g = rdflib.Graph()
    for path in paths:
        g.parse(path)
    return g


def test_no_generated_name_clashes_with_another_subject() -> None:
    """A normalised name (label, alt label) of a generated model or GPU names nothing else in the KB."""
    owners: dict[str, set[str]] = defaultdict(set)
    for path in sorted((ROOT / "kb").glob("*.ttl")) + sorted((ROOT / "ontology").glob("*.ttl")):
        g = rdflib.Graph().parse(path)
        for pred in NAMING_PREDICATES:
            for s, o in g.subject_objects(rdflib.URIRef(pred)):
                owners[normalise(str(o))].add(str(s))
    generated = _graph(GENERATED_MODELS, GENERATED_GPUS)
    clashes = []
    for pred in NAMING_PREDICATES:
        for s, o in generated.subject_objects(rdflib.URIRef(pred)):
            others = owners[normalise(str(o))] - {str(s)}
            if others:
                clashes.append((str(o), str(s), sorted(others)))
    assert not clashes, clashes[:10]


def test_generated_files_do_not_repeat_hand_written_models_or_gpus() -> None:
    generated = _graph(GENERATED_MODELS, GENERATED_GPUS)
    hand = rdflib.Graph()
    for path in sorted((ROOT / "kb").glob("*.ttl")):
        if path not in (GENERATED_MODELS, GENERATED_GPUS):
            hand.parse(path)
    hand_sources = {str(o) for o in hand.objects(None, DCT.source) if "techpowerup.com/gpu-specs/" in str(o)}
    for gpu in generated.subjects(rdflib.RDF.type, KBQ.GPU):
        assert not {str(o) for o in generated.objects(gpu, DCT.source)} & hand_sources, gpu
    hand_ids = {str(o) for o in hand.objects(None, KBQ.huggingFaceId)}
    assert not {str(o) for o in generated.objects(None, KBQ.huggingFaceId)} & hand_ids


# Parameter counts of public checkpoints, as their Hugging Face model pages / safetensors metadata
# state them (independent of gen_models.py's formula, which must reproduce them).
PUBLISHED_PARAMETERS = {
    "meta-llama/Llama-2-7b-hf": 6_738_415_616,
    "meta-llama/Llama-2-13b-hf": 13_015_864_320,
    "EleutherAI/pythia-70m": 70_426_624,
    "EleutherAI/pythia-160m": 162_322_944,
    "google/gemma-2b": 2_506_172_416,
    "google/gemma-7b": 8_537_680_896,
    "microsoft/phi-2": 2_779_683_840,
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": 1_100_048_384,
    "mistralai/Mistral-7B-v0.3": 7_248_023_552,
    "Qwen/Qwen2.5-0.5B": 494_032_768,
    "Qwen/Qwen2.5-1.5B": 1_543_714_304,
    "allenai/OLMo-7B-hf": 6_888_095_744,
    # mlc-llm presets, found by label
    "Qwen2-7B": 7_615_616_512,
    "SmolLM-135M": 134_515_008,
    "SmolLM-1.7B": 1_711_376_384,
    "snowflake-arctic-embed-m": 109_482_240,  # BERT-base shapes (bert-base-uncased has the same count)
    # candle presets and more mlc-llm presets (issue 19, second round)
    "01-ai/Yi-6B": 6_061_035_520,
    "01-ai/Yi-34B": 34_388_917_248,
    "THUDM/chatglm3-6b": 6_243_584_000,
    "bigcode/starcoder2-7b": 7_173_923_840,
    "Qwen/Qwen1.5-MoE-A2.7B": 14_315_784_192,
    "CohereForAI/aya-23-8B": 8_028_033_024,
    # Mistral Small 3.1's language model: KerasHub's magistral_small_2506_en preset (Magistral Small is built
    # on Mistral Small 3.1's text model) states 23,572,403,200 parameters (keras_hub/src/models/mistral/
    # mistral_presets.py @ 71453d0)
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": 23_572_403_200,
    "mistralai/Mistral-Small-24B-Instruct-2501": 23_572_403_200,  # the same language model (Megatron-Bridge)
    "Qwen/Qwen2-72B": 72_706_203_648,
    # Mistral NeMo: the shapes NVIDIA NeMo's MistralNeMoConfig12B states with the vocabulary of its verbatim config
    "mistralai/Mistral-Nemo-Base-2407": 12_247_782_400,
    # BLOOM-560M: KerasHub's bloom_560m_multi preset (keras_hub/src/models/bloom/bloom_presets.py @ 71453d0)
    "bigscience/bloom-560m": 559_214_592,
    # Qwen3.5-35B-A3B's language model: KerasHub's qwen_agent_world_35b_a3b preset (its text-only model of the same
    # shapes, keras_hub/src/models/qwen3_5_moe/qwen3_5_moe_presets.py @ 71453d0) states 34,660,610,688
    "Qwen/Qwen3.5-35B-A3B": 34_660_610_688,
}

# Published sizes rounded by their publishers (billions) and the relative tolerance the rounding allows:
# StarCoder 15.5B and StarCoderBase 1B / 3B / 7B (BigCode's model cards: '15.5B', '1B', '3B', '7B'),
# CodeGeeX4-ALL-9B ('9.4B', its model card), DeepSeekMoE 16B ('16.4B' total, '2.8B' activated, its
# README).
PUBLISHED_ROUNDED = {
    "bigcode/starcoder": (15.5, None, 0.01),
    "bigcode/starcoderbase-1b": (1.1, None, 0.05),
    "bigcode/starcoderbase-3b": (3.0, None, 0.05),
    "bigcode/starcoderbase-7b": (7.0, None, 0.06),
    "THUDM/codegeex4-all-9b": (9.4, None, 0.01),
    "deepseek-ai/deepseek-moe-16b-base": (16.4, 2.8, 0.02),
    # Ministral 3 3B: '3.4B Language Model + 0.4B Vision Encoder' (Megatron-Bridge's Ministral3ModelProvider3B)
    "mistralai/Ministral-3-3B-Base-2512": (3.4, None, 0.02),
}
# GenZ-LLM-Analyzer transcriptions, checked against the publishers' rounded sizes: Phi-3.5-MoE '42B total,
# 6.6B active' (its model card), Mistral Small 2409 '22B', Mistral Large 2 '123B', Ministral 8B '8B' (Mistral AI's
# announcements), GLM-4-9B '9B' (9.4B, the same shapes as CodeGeeX4-ALL-9B above), OPT '125M' .. '66B' (the OPT
# paper, Table 1), Qwen1.5 0.5B .. 72B (the Qwen1.5 release: the names' sizes; the 0.5B has 0.62B with its
# untied 152K-row head), Minitron 8B.
PUBLISHED_ROUNDED.update(
    {
        "microsoft/Phi-3.5-MoE-instruct": (41.9, 6.6, 0.01),
        "databricks/dbrx-base": (132.0, 36.0, 0.02),  # '132B total parameters of which 36B are active' (its card)
        "mistralai/Mistral-Small-Instruct-2409": (22.2, None, 0.01),
        "mistralai/Ministral-8B-Instruct-2410": (8.0, None, 0.01),
        "THUDM/glm-4-9b-chat": (9.4, None, 0.01),
        "nvidia/Mistral-NeMo-Minitron-8B-Base": (8.4, None, 0.01),
        "facebook/opt-125m": (0.125, None, 0.01),
        "facebook/opt-1.3b": (1.3, None, 0.02),
        "facebook/opt-6.7b": (6.7, None, 0.01),
        "facebook/opt-30b": (30.0, None, 0.01),
        "facebook/opt-66b": (66.0, None, 0.01),
        "Qwen/Qwen1.5-7B": (7.7, None, 0.01),
        "Qwen/Qwen1.5-72B": (72.3, None, 0.01),
        # BLOOM 7.1B and GPT-Neo 125M / 1.3B / 2.7B (BigScience's and EleutherAI's model names)
        "bigscience/bloom-7b1": (7.1, None, 0.01),
        "EleutherAI/gpt-neo-125m": (0.125, None, 0.01),
        "EleutherAI/gpt-neo-1.3B": (1.3, None, 0.02),
        "EleutherAI/gpt-neo-2.7B": (2.7, None, 0.02),
    }
)
# metaseq's launcher table (facebookresearch/metaseq metaseq/launcher/opt_job_constants.py @ 0580bd7, MIT):
# OPT size -> (layers, width, heads), independent of GenZ's transcription of the Hugging Face configs.
METASEQ_OPT = {
    "125m": (12, 768, 12),
    "1.3b": (24, 2048, 32),
    "6.7b": (32, 4096, 32),
    "30b": (48, 7168, 56),
    "66b": (64, 9216, 72),
}


def test_gemma4_layer_pattern_matches_the_yaml_layers() -> None:
    """Gemma 4: the sliding-window layer count comes from the transcribed layer_types (5 sliding : 1 global for
    31B / 26B, 4 : 1 for E2B), whose length gen_models checks against the YAML's layer count."""
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    expected = {"google/gemma-4-31b-it": (60, 50), "google/gemma-4-26b-a4b-it": (30, 25), "google/gemma-4-E2B-it": (35, 28)}
    for hf_id, (layers, sliding) in expected.items():
        m = by_id[hf_id]
        assert (int(g.value(m, KBQ.numLayers)), int(g.value(m, KBQ.slidingWindowLayers))) == (layers, sliding)


@pytest.mark.parametrize(
    ("pattern", "least"),
    [
        ("^Qwen/Qwen1.5-", 7),  # six dense sizes and the MoE
        ("^facebook/opt-", 5),
        ("^bigscience/bloom", 4),
        ("^01-ai/Yi-", 2),
        ("^bigcode/starcoder", 7),
        ("^mistralai/(Mistral-Nemo|Mistral-Small|Ministral|Mistral-Large)", 8),
        ("^(THUDM/glm-4|THUDM/codegeex4|zai-org/GLM-4.5)", 4),
        ("^CohereForAI/", 2),
        ("^google/gemma-4-", 4),
        ("^Helsinki-NLP/opus-mt-", 7),
    ],
)
def test_the_second_round_families_are_there(kb, pattern: str, least: int) -> None:  # type: ignore[no-untyped-def]
    query = (
        "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?m a kbq:Model ; kbq:parameterCount ?p ; kbq:numLayers ?l ; "
        f'kbq:huggingFaceId ?id FILTER(REGEX(?id, "{pattern}")) }}'
    )
    assert _count(kb, query) >= least


def test_embedding_and_segmentation_models_are_there(kb) -> None:  # type: ignore[no-untyped-def]
    labels = {str(row[0]) for row in _rows(kb, "SELECT ?l WHERE { ?m a kbq:Model ; kbq:parameterCount ?p ; rdfs:label ?l }")}
    for name in ("all-MiniLM-L6-v2", "bge-large-en-v1.5", "multilingual-e5-large", "bge-m3", "SAM ViT-B", "SAM ViT-H"):
        assert name in labels, name


def test_qwen3_vl_language_models_equal_the_qwen3_checkpoints_of_their_shapes() -> None:
    """Qwen3-VL-2B / 4B's text_config has Qwen3-1.7B's / Qwen3-4B's shapes (tied): MaxText's qwen3 formula must
    give what litgpt's formula gives for those checkpoints."""
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    for vl, text in (("Qwen/Qwen3-VL-2B-Instruct", "Qwen/Qwen3-1.7B"), ("Qwen/Qwen3-VL-4B-Instruct", "Qwen/Qwen3-4B")):
        assert float(g.value(by_id[vl], KBQ.parameterCount)) == float(g.value(by_id[text], KBQ.parameterCount))


def test_issue_18_models_match_their_published_sizes_and_siblings() -> None:
    """Added for issue 18 (the models people name): Qwen3-VL-30B-A3B's language model has Qwen3-30B-A3B's
    shapes, untied (its count must equal that checkpoint's, computed by litgpt's formula); Qwen2-57B-A14B is
    '57B total, 14B activated' (its name; Qwen2's report: 57B / 14B); Qwen3.6-35B-A3B carries
    Qwen3.5-35B-A3B's facts and links to it as its base."""
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    vl, text = by_id["Qwen/Qwen3-VL-30B-A3B-Instruct"], by_id["Qwen/Qwen3-30B-A3B-Instruct-2507"]
    for fact in (KBQ.parameterCount, KBQ.activeParameterCount, KBQ.numLayers, KBQ.kvHeads, KBQ.numExperts):
        assert float(g.value(vl, fact)) == float(g.value(text, fact)), fact
    qwen2 = by_id["Qwen/Qwen2-57B-A14B"]
    assert float(g.value(qwen2, KBQ.parameterCount)) / 1e9 == pytest.approx(57.4, rel=0.005)
    assert float(g.value(qwen2, KBQ.activeParameterCount)) / 1e9 == pytest.approx(14.0, rel=0.03)
    q36, q35 = by_id["Qwen/Qwen3.6-35B-A3B"], by_id["Qwen/Qwen3.5-35B-A3B"]
    assert g.value(q36, KBQ.baseModel) == q35
    for fact in (KBQ.parameterCount, KBQ.numLayers, KBQ.hiddenSize, KBQ.kvHeads, KBQ.numExperts, KBQ.vocabSize):
        assert g.value(q36, fact) == g.value(q35, fact), fact


def test_issue_18_second_round_models_equal_their_text_siblings() -> None:
    """Qwen3-VL-8B's text_config has Qwen3-8B's shapes, Qwen2.5-VL-7B's Qwen2.5-7B's, and Qwen3-Coder-30B-A3B's
    config.json Qwen3-30B-A3B's (its safetensors index: 61,064,245,248 bytes of BF16 = 30,532,122,624 parameters).
    The language-model counts worked by hand from the transcribed shapes (embedding and untied head V x d each):
    Qwen3-VL-8B: per layer 2 x 4096 norms + 4096 x 32 x 128 q + 2 x 4096 x 8 x 128 kv + 32 x 128 x 4096 o
    + 2 x 128 q/k norms + 3 x 4096 x 12288 MLP = 192,946,432; x 36 + 4096 + 2 x 151936 x 4096 = 8,190,735,360
    (Qwen3-8B's published 8.19B). Qwen2.5-VL-7B: 7168 + 12,845,056 + 3,670,016 + 4,608 biases + 12,845,056
    + 203,685,888 = 233,057,792; x 28 + 3584 + 2 x 152064 x 3584 = 7,615,616,512 (Qwen2.5-7B's 7.61B)."""
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    assert float(g.value(by_id["Qwen/Qwen3-VL-8B-Instruct"], KBQ.parameterCount)) == 8_190_735_360
    assert float(g.value(by_id["Qwen/Qwen2.5-VL-7B-Instruct"], KBQ.parameterCount)) == 7_615_616_512
    coder = by_id["Qwen/Qwen3-Coder-30B-A3B-Instruct"]
    assert float(g.value(coder, KBQ.parameterCount)) == 61_064_245_248 / 2
    assert float(g.value(coder, KBQ.activeParameterCount)) / 1e9 == pytest.approx(3.3, rel=0.02)  # '3.3B activated'
    assert int(g.value(coder, KBQ.maxContext)) == 262_144


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("memory for yairpatch/Qwen3-VL-30B-A3B-Instruct-GGUF", "Qwen3-VL-30B-A3B-Instruct"),  # a repackager's id
        ("memory for Qwen/Qwen2-57B-A14B-Instruct", "Qwen2-57B-A14B"),
        ("memory for qwen3.6-35b-a3b", "Qwen3.6-35B-A3B"),
        ("memory for gemma 3 4b", "gemma-3-4b-it"),
        ("memory for phi-3.5-mini", "Phi-3.5-mini-instruct"),
        ("memory for wan2.1 14b", "Wan2.1-T2V-14B"),
        ("memory for sdxl", "Stable Diffusion XL 1.0"),
        ("memory for qwen3-coder 30b", "Qwen3-Coder-30B-A3B-Instruct"),
        ("memory for Qwen/Qwen3-VL-8B-Instruct", "Qwen3-VL-8B-Instruct"),
        ("memory for qwen2.5-vl 7b", "Qwen2.5-VL-7B-Instruct"),
        ("memory for command-r-plus", "c4ai-command-r-plus"),  # the model card's 104B, no architecture
    ],
)
def test_issue_18_names_size_the_model_they_name(kb, question: str, label: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(question)
    assert any(line.startswith(f"workload: inference of {label} (") for line in answer.explanation), answer.explanation
    assert any(row[0] == "weights" and row[1] > 0 for row in answer.rows)


def test_opt_shapes_agree_with_metaseq() -> None:
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    for size, shape in METASEQ_OPT.items():
        m = by_id[f"facebook/opt-{size}"]
        assert (int(g.value(m, KBQ.numLayers)), int(g.value(m, KBQ.hiddenSize)), int(g.value(m, KBQ.attentionHeads))) == shape


# GLM-4.5 and GLM-4.5-Air: '355B total / 32B active' and '106B total / 12B active' (Z.ai's model cards); the
# active counts there leave out the embedding and output head (151552 x width, twice), added back here; the
# totals include a multi-token-prediction layer not counted here.
GLM_OUTER = {"zai-org/GLM-4.5": 2 * 151552 * 5120 / 1e9, "zai-org/GLM-4.5-Air": 2 * 151552 * 4096 / 1e9}
PUBLISHED_ROUNDED.update(
    {
        "zai-org/GLM-4.5": (355.0, 32.0 + GLM_OUTER["zai-org/GLM-4.5"], 0.02),
        "zai-org/GLM-4.5-Air": (106.0, 12.0 + GLM_OUTER["zai-org/GLM-4.5-Air"], 0.02),
    }
)


def test_marian_translation_models_have_both_stacks() -> None:
    g = _graph(GENERATED_MODELS)
    marian = [s for s, o in g.subject_objects(KBQ.huggingFaceId) if str(o).startswith("Helsinki-NLP/opus-mt-")]
    assert len(marian) == 7
    for s in marian:
        enc, dec = int(g.value(s, KBQ.encoderLayers)), int(g.value(s, KBQ.decoderLayers))
        assert (enc, dec) == (6, 6) and int(g.value(s, KBQ.numLayers)) == 12
        # 6+6-layer Transformer-base (d 512) models are about 75M; the tc-big one (d 1024) about 230M
        assert 70e6 < float(g.value(s, KBQ.parameterCount)) < 240e6


def _by_label(g: rdflib.Graph) -> dict[str, rdflib.term.Node]:
    return {str(o): s for s, o in g.subject_objects(rdflib.RDFS.label)}


def test_kerashub_counts_agree_with_the_shapes_and_the_sam_sizes_are_in_order() -> None:
    """KerasHub's all_minilm_l6_v2_en count equals BERT's formula (gen_models.hf_parameters) on the shapes of
    sentence-transformers/all-MiniLM-L6-v2 as cli99/llm-analysis's model_configs copy them (6 layers, width 384,
    12 heads, FFN 1536, vocabulary 30522, 512 positions); SAM's encoders grow B < L < H (the preset file has L
    and H swapped, which gen_models corrects)."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import gen_models

    minilm = {
        "model_type": "bert",
        "vocab_size": 30522,
        "hidden_size": 384,
        "num_hidden_layers": 6,
        "intermediate_size": 1536,
        "num_attention_heads": 12,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
    }
    g = _graph(GENERATED_MODELS)
    labels = _by_label(g)
    assert float(g.value(labels["all-MiniLM-L6-v2"], KBQ.parameterCount)) == gen_models.hf_parameters(minilm)
    sam = [float(g.value(labels[f"SAM ViT-{size}"], KBQ.parameterCount)) for size in "BLH"]
    assert sam == sorted(sam) and sam[2] > 632e6  # ViT-H's image encoder alone has 632M (the SAM paper)
    sd35 = float(g.value(labels["Stable Diffusion 3.5 Large"], KBQ.parameterCount))
    assert 8e9 < sd35 < 10e9  # MMDiT 8.1B plus the CLIP encoders and the VAE (T5-XXL not included)


def test_rounded_published_sizes_of_the_second_round_match() -> None:
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    for hf_id, (total, active, tolerance) in PUBLISHED_ROUNDED.items():
        model = by_id[hf_id]
        assert float(g.value(model, KBQ.parameterCount)) / 1e9 == pytest.approx(total, rel=tolerance), hf_id
        if active is not None:
            assert float(g.value(model, KBQ.activeParameterCount)) / 1e9 == pytest.approx(active, rel=tolerance), hf_id


def test_computed_parameter_counts_match_the_published_ones() -> None:
    g = _graph(GENERATED_MODELS)
    by_id = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    by_id.update({str(o): s for s, o in g.subject_objects(rdflib.RDFS.label) if str(s).startswith("https://kbq.dev/kb/mlc/")})
    for hf_id, published in PUBLISHED_PARAMETERS.items():
        assert int(float(g.value(by_id[hf_id], KBQ.parameterCount))) == published, hf_id


# MaxText-sourced models: (total, active per token) as the publishers state them, in billions, and the
# relative tolerance their rounding allows. gpt-oss (OpenAI's model card): 20.91B / 3.61B and
# 116.83B / 5.13B, active without the 201,088 x 2,880 embedding (added back here); DeepSeek-V2 and
# V2-Lite (DeepSeek-V2 paper / README): 236B / 21B and 15.7B / 2.4B; Qwen3-Coder-480B-A35B: 480B / 35B;
# Kimi K2: 1T / 32B; OLMo 3: 7B and 32B.
EMBEDDING_GPT_OSS = 201_088 * 2_880 / 1e9
PUBLISHED_MOE = {
    "openai/gpt-oss-20b": (20.91, 3.61 + EMBEDDING_GPT_OSS, 0.002),
    "openai/gpt-oss-120b": (116.83, 5.13 + EMBEDDING_GPT_OSS, 0.002),
    "deepseek-ai/DeepSeek-V2-Lite": (15.7, None, 0.01),
    "DeepSeek-V2": (236.0, 21.0, 0.02),
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": (480.0, 35.0, 0.02),
    "moonshotai/Kimi-K2-Instruct": (1000.0, 32.0, 0.05),
    "allenai/Olmo-3-1025-7B": (7.3, None, 0.01),
    "allenai/Olmo-3-32B-Think": (32.2, None, 0.01),
    # DeepSeek-V3.2: V3's 671B / 37B (DeepSeek-V3 README) plus the indexer (0.85B, on the active path too)
    "deepseek-ai/DeepSeek-V3.2": (671.0, 37.0, 0.04),
    # Qwen3-Next-80B-A3B: '80B total, 3B activated' (its model card; active here counts the embeddings)
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (80.0, None, 0.01),
    # Qwen3.5-397B-A17B: 397B total, 17B active (its name); the language model, so slightly under
    "Qwen/Qwen3.5-397B-A17B": (397.0, 17.0, 0.03),
}


def test_maxtext_counts_match_the_published_totals_and_active_parameters() -> None:
    g = _graph(GENERATED_MODELS)
    by_name = {str(o): s for s, o in g.subject_objects(KBQ.huggingFaceId)}
    by_name.update({str(o): s for s, o in g.subject_objects(rdflib.RDFS.label) if "/maxtext/" in str(s)})
    for name, (total, active, tolerance) in PUBLISHED_MOE.items():
        model = by_name[name]
        assert float(g.value(model, KBQ.parameterCount)) / 1e9 == pytest.approx(total, rel=tolerance), name
        if active is not None:
            assert float(g.value(model, KBQ.activeParameterCount)) / 1e9 == pytest.approx(active, rel=tolerance), name


def test_families_added_from_maxtext_are_there(kb) -> None:  # type: ignore[no-untyped-def]
    def count(pattern: str) -> int:
        return _count(
            kb,
            f"SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE {{ ?m a kbq:Model ; kbq:parameterCount ?p ; "
            f'kbq:huggingFaceId ?id FILTER(REGEX(?id, "{pattern}")) }}',
        )

    assert count("^openai/gpt-oss-") == 2
    assert count("^allenai/Olmo-3") == 4
    assert count("^deepseek-ai/DeepSeek-V2-Lite$") == 1
    assert count("^moonshotai/Kimi-K2") == 1
    mla = _count(kb, "SELECT (COUNT(DISTINCT ?m) AS ?n) WHERE { ?m kbq:attentionKind kb:MLA ; kbq:kvLoraRank 512 }")
    assert mla >= 5  # DeepSeek-V3, R1 (hand-written), V2, V2-Lite, Kimi K2


@pytest.mark.parametrize(
    "name",
    [
        "openai/gpt-oss-20b",
        "meta-llama/Llama-3.1-8B-Instruct",
        "DeepSeek-V2",
        "Whisper turbo",
        "whisper-large-v2",
        "Qwen/Qwen2.5-7B-Instruct",  # a Hub id of a hand-written model (kb/models_hub_ids.ttl)
        "google/gemma-3-27b-it",
        "deepseek-ai/DeepSeek-R1",
        "YOLO11n-seg",
        "sam2.1_hiera_large",
        "black-forest-labs/FLUX.1-schnell",
        "yi-34b",
        "starcoder2-7b",
        "StarCoder 15B",
        "qwen1.5-moe-a2.7b",
        "chatglm3-6b",
        "aya-23-8b",
        "qwen3-next",
        "deepseek-v3.2",
        "Mistral Small 3.1",
        "Helsinki-NLP/opus-mt-en-zh",
        "marian fr-en",
        "all-MiniLM-L6-v2",
        "command-r",
        "dbrx",
        "deeplabv3 plus",
        "qwen3-vl 4b",
        "qwen3.5 35b",
        "starcoder2-15b",
        "Gemma 4 31B",
        "google/gemma-4-26b-a4b-it",
        "bloom 7b1",
        "qwen1.5-7b-chat",
        "Phi-3.5-MoE",
        "opt 6.7b",
        "glm-4-9b",
        "Ministral 8B",
        "mistral nemo 12b",
        "nemo 12b",
        "glm-4.5-air",
        "Mistral Small 3",
        "qwen2 72b",
        "Ministral 3 8B",
        "bge-small-en-v1.5",
        "multilingual-e5-large",
        "SAM ViT-H",
        "sd3.5 large",
        "siglip-so400m-patch14-384",
        "d-fine large",
        "SegFormer-B2 ADE20K",
        "clip-vit-large-patch14-336",
    ],
)
def test_names_people_use_for_the_added_models_resolve(kb, name: str) -> None:  # type: ignore[no-untyped-def]
    memory = kb.answer(f"memory for {name} inference")
    assert any("weights" in str(row[0]) for row in memory.rows)
    assert any(row[0] == "parameters" for row in kb.answer(f"describe {name}").rows)


def test_every_generated_llm_count_is_near_the_size_in_its_name() -> None:
    """A '7b' / '135M' in the name is a rough size: the computed count is within [0.75, 1.75] of it (gross errors,
    a doubled stack or a missing one, fall outside; Falcon3-1B really has 1.67B and Gemma 2B 2.5B parameters)."""
    g = _graph(GENERATED_MODELS)
    checked = 0
    for s, hf_id in g.subject_objects(KBQ.huggingFaceId):
        m = re.search(r"[-_](\d+(?:\.\d+)?)([bBmM])(?:[-_]|$)", str(hf_id).split("/", 1)[1])
        if not m or g.value(s, KBQ.numExperts) is not None:
            continue
        size = float(m.group(1)) * (1e9 if m.group(2) in "bB" else 1e6)
        count = float(g.value(s, KBQ.parameterCount))
        assert 0.75 < count / size < 1.75, (str(hf_id), count)
        checked += 1
    assert checked > 100


def test_forward_flops_are_twice_the_multiply_adds_for_torchvision_models(kb) -> None:  # type: ignore[no-untyped-def]
    """One convention: torchvision's 'GFLOPS' (multiply-adds) are stored doubled, like YOLO's FLOPs."""
    rows = _rows(kb, "SELECT ?g WHERE { kb:ResNet50 kbq:forwardGflops ?g }")
    assert float(rows[0][0]) == pytest.approx(2 * 4.09)
    rows = _rows(kb, "SELECT ?g ?note WHERE { <https://kbq.dev/kb/timm/resnet18> kbq:forwardGflops ?g ; kbq:note ?note }")
    gmacs = re.search(r"infer_gmacs ([0-9.]+)", str(rows[0][1]))
    assert gmacs and float(rows[0][0]) == pytest.approx(2 * float(gmacs.group(1)))


def _sample(path: Path, kind: rdflib.URIRef, n: int, seed: int) -> list[str]:
    """n labels of the file's individuals of a kind, drawn with a fixed seed."""
    g = _graph(path)
    names = sorted(str(g.value(s, rdflib.RDFS.label)) for s in g.subjects(rdflib.RDF.type, kind))
    return random.Random(seed).sample(names, n)


@pytest.mark.parametrize("name", _sample(GENERATED_MODELS, KBQ.Model, 12, 19))
def test_memory_and_describe_work_for_sampled_generated_models(kb, name: str) -> None:  # type: ignore[no-untyped-def]
    memory = kb.answer(f"memory for {name} inference")
    assert memory.rows and any("weights" in str(row[0]) for row in memory.rows)
    described = kb.answer(f"describe {name}")
    assert any(row[0] == "parameters" for row in described.rows)


@pytest.mark.parametrize("name", _sample(GENERATED_GPUS, KBQ.GPU, 8, 19))
def test_describe_works_for_sampled_generated_gpus(kb, name: str) -> None:  # type: ignore[no-untyped-def]
    described = kb.answer(f"describe {name}")
    keys = {row[0] for row in described.rows}
    assert {"memory", "memory bandwidth", "source"} <= keys


def test_a_family_describes_its_default_variants_figures(kb) -> None:  # type: ignore[no-untyped-def]
    rows = kb.answer("describe jetson orin nano").rows
    keys = {row[0]: row[1] for row in rows}
    assert keys["default variant"] == "Jetson Orin Nano 8 GB"
    assert float(keys["memory (default variant)"]) == 8.0


def test_apple_silicon_gpu_usable_memory_follows_the_sourced_share(kb) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(kb, "SELECT ?m ?u WHERE { kb:AppleM3Max kbq:memory ?m ; kbq:gpuUsableMemory ?u }")
    memory, usable = (float(x) for x in rows[0])
    assert memory == 128.0 and usable == pytest.approx(0.75 * 128.0)


@pytest.mark.parametrize(("chip", "memory"), [("M1", 16.0), ("M2 Pro", 32.0), ("M2 Max", 96.0), ("M3", 24.0), ("M4", 32.0)])
def test_the_base_and_2023_apple_chips_are_there(kb, chip: str, memory: float) -> None:  # type: ignore[no-untyped-def]
    rows = {row[0]: row[1] for row in kb.answer(f"describe apple {chip}").rows}
    assert float(rows["memory"]) == memory


def test_memory_fit_on_a_mac_uses_the_gpu_usable_share(kb) -> None:  # type: ignore[no-untyped-def]
    """A 32 GB M4 lends its GPU 3/4 of the pool (24 GiB), not 32 GB: the headline and verdict say so."""
    answer = kb.answer("memory for llama 3 8b inference on apple m4")
    assert "has 25.8 GB" in answer.headline  # 24 GiB usable, not 32 GB (34.4 GB)
    assert any("usable by the GPU of 32 GB unified" in line for line in answer.explanation) or "usable by the GPU" in str(
        answer.verdict
    )


@pytest.mark.parametrize(
    ("release", "included", "excluded"),
    [
        ("tensorrt 10", "Tesla T4", "GeForce GTX 1080"),  # 7.0 to 9.0
        ("cudnn 9", "GeForce GTX 1080", "GeForce RTX 5090"),  # 5.0 to 9.0
        ("vllm 0.6", "NVIDIA H100 SXM5", "GeForce RTX 5090"),  # 7.0 to 9.0 (CUDA 12.1 binaries)
        ("pytorch 2.8 cu128", "GeForce RTX 5090", "GeForce GTX 1080"),  # 7.0 to 12.0
        ("flashattention-2", "GeForce RTX 4090", "Tesla T4"),  # Ampere to Hopper
        ("bitsandbytes 0.48", "GeForce GTX 1080", "GeForce GTX 980"),  # 6.0 and newer
        ("sglang 0.5", "Tesla T4", "Tesla V100 PCIe 16GB"),  # sm75 and newer
    ],
)
def test_gpus_supported_by_a_release(kb, release: str, included: str, excluded: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(f"gpus supported by {release}")
    names = {row[answer.columns.index("name")] for row in answer.rows}
    assert included in names and excluded not in names


def test_no_amd_or_apple_gpu_is_supported_by_a_cuda_range(kb) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(
        kb,
        """SELECT (COUNT(*) AS ?n) WHERE { ?r kbq:minComputeCapability ?min ; kbq:supportsGpu ?g .
           ?g kbq:vendor ?v FILTER (?v != kb:NVIDIA) FILTER NOT EXISTS { ?r kbq:releaseOf kb:FlashAttn } }""",
    )
    assert int(rows[0][0]) == 0
