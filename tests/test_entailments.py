"""Concrete entailments of OWL-RL + the rules in ontology/rules/, on the shipped KB."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("variant", ["LSTM", "GRU", "NTM", "BidirectionalRNN"])
def test_rnn_variants_inherit_the_rnn_profile(ask_true, variant: str) -> None:
    assert ask_true(f"kbq:{variant} kbq:hasProfile kb:SeedRNNProfile")
    assert not ask_true(f"kbq:{variant} kbq:hasProfile kb:SeedCNNProfile")


@pytest.mark.parametrize("model", ["BERTLarge", "BERTBase", "XLNetLarge", "Llama3.1-70B", "GPT3"])
def test_transformer_models_inherit_the_transformer_profile(ask_true, model: str) -> None:
    assert ask_true(f"kb:{model} kbq:hasProfile kb:SeedTransformerProfile")


def test_llm_subclass_is_a_transformer_subclass_of_algorithm(ask_true) -> None:
    assert ask_true("kbq:LargeLanguageModel rdfs:subClassOf kbq:Algorithm")
    assert ask_true("kb:GPT3 a kbq:Transformer")


def test_cnn_models_inherit_the_cnn_profile(ask_true) -> None:
    assert ask_true("kb:ResNet50 kbq:hasProfile kb:SeedCNNProfile")
    assert not ask_true("kb:ResNet50 kbq:hasProfile kb:SeedRNNProfile")


def test_an_application_inherits_the_needs_of_its_algorithms(ask_true) -> None:
    assert ask_true("kb:MachineTranslation kbq:hasProfile kb:SeedRNNProfile")
    assert ask_true("kb:MachineTranslation kbq:hasProfile kb:SeedTransformerProfile")
    assert ask_true("kb:ImageRecognition kbq:hasProfile kb:SeedCNNProfile")


def test_every_family_has_the_general_dettmers_profile(ask_true) -> None:
    assert ask_true("kbq:GAN kbq:hasProfile kb:DettmersProfile")
    assert ask_true("kbq:LSTM kbq:hasProfile kb:DettmersProfile")


@pytest.mark.parametrize(
    "gpu", ["QuadroRTX8000", "QuadroRTX6000", "RTX2080Ti", "RTX2070Super", "RTX2080Super", "H100SXM", "MI300X"]
)
def test_dense_chassis_gpus(ask_true, gpu: str) -> None:
    assert ask_true(f"kb:{gpu} a kbq:DenseChassisGPU ; kbq:denseChassisCapable true")


@pytest.mark.parametrize("gpu", ["TitanRTX", "RTX4090", "RTX5090"])
def test_open_air_cards_are_not_dense(ask_true, gpu: str) -> None:
    assert not ask_true(f"kb:{gpu} a kbq:DenseChassisGPU")


def test_dense_design_needs_dense_cooling_and_enough_cards(ask_true) -> None:
    assert ask_true("kb:TitanRTX kbq:maxCards 4")
    assert not ask_true("kb:TitanRTX kbq:denseCards ?n")
    assert ask_true("kb:QuadroRTX8000 kbq:denseCards 9")
    assert ask_true("kb:RTX2080Ti kbq:availableCooling kb:Blower , kb:OpenAir")


def test_tensor_core_gpus_are_classified(ask_true) -> None:
    assert ask_true("kb:RTX2080Ti a kbq:TensorCoreGPU ; kbq:hasTensorCores true")
    assert ask_true("kb:TeslaV100SXM2_32GB a kbq:TensorCoreGPU")
    assert not ask_true("kb:GTX1080Ti a kbq:TensorCoreGPU")
    assert ask_true("kb:GTX1080Ti kbq:hasTensorCores false")


@pytest.mark.parametrize(
    ("release", "uses"),
    [
        ("CuDNN-6.0", False),
        ("CuDNN-7.0", True),
        ("CuDNN-9.0", True),
        ("TensorRT-2.1", False),
        ("TensorRT-3.0", True),
        ("TensorRT-10.0", True),
    ],
)
def test_sdk_releases_use_tensor_cores_from_the_seed_versions(ask_true, release: str, uses: bool) -> None:
    assert ask_true(f"<https://kbq.dev/kb/{release}> kbq:usesTensorCores true") is uses


def test_sdks_serve_the_process_of_their_role(ask_true) -> None:
    assert ask_true("kb:TensorRT kbq:forProcess kb:Inference")
    assert ask_true("kb:CuDNN kbq:forProcess kb:Training")


def test_no_rule_derives_a_second_memory_formula(kb) -> None:
    """Memory is computed by the one evaluation (kbq.lang.evaluate.memory); the old rule that
    derived parameters x bytes per parameter (a second formula) is gone, its terms deprecated."""
    from kbq.lang.catalog import PREFIXES

    assert not kb.table(PREFIXES + "SELECT ?n WHERE { ?m kbq:memoryNeed ?n } LIMIT 1").rows
    assert kb.table(PREFIXES + "ASK { kbq:memoryNeed owl:deprecated true }").rows[0][0] is True
    answer = kb.ask("memory for resnet-50 training")
    weights = next(r for r in answer.rows if r[0] == "weights")
    params = kb.table(PREFIXES + "SELECT ?p WHERE { kb:ResNet50 kbq:parameterCount ?p }").rows[0][0]
    assert abs(weights[1] - round(params * 2 / 1e9, 3)) < 1e-9  # 16-bit weights
