"""Every item and relation in the seed article is queryable by SPARQL."""

from __future__ import annotations

import pytest

SEED_FAMILIES = ["CNN", "RNN", "LSTM", "GRU", "NTM", "BidirectionalRNN", "Transformer", "GAN", "Autoencoder"]
SEED_MODELS = ["AlexNet", "VGG", "GoogLeNet", "ResNet", "Inception", "BERT", "XLNet"]
SEED_APPLICATIONS = [
    "medical image analysis",
    "image recognition",
    "face detection",
    "full-motion video analysis",
    "autonomous driving",
    "drug discovery",
    "machine translation",
    "sentiment analysis",
    "language generation",
    "text classification",
    "sentence completion",
    "stock prediction",
    "financial engineering",
    "image captioning",
    "speech recognition",
    "question answering",
    "robot control",
    "image style transfer",
    "high-resolution image synthesis",
    "text-to-image synthesis",
    "image super-resolution",
    "anomaly detection",
    "3D object generation",
    "music generation",
    "image reconstruction",
    "clustering",
    "outlier detection",
    "data denoising",
    "image inpainting",
    "information retrieval",
]


@pytest.mark.parametrize("family", SEED_FAMILIES)
def test_algorithm_families_are_classes_under_algorithm(ask_true, family: str) -> None:
    assert ask_true(f"kbq:{family} rdfs:subClassOf kbq:Algorithm ; rdfs:label ?l ; rdfs:comment ?c")


def test_rnn_variants_are_rnn_subclasses(ask_true) -> None:
    for v in ["LSTM", "GRU", "NTM", "BidirectionalRNN"]:
        assert ask_true(f"kbq:{v} rdfs:subClassOf kbq:RNN")


@pytest.mark.parametrize("model", SEED_MODELS)
def test_seed_models(ask_true, model: str) -> None:
    assert ask_true(f"kb:{model} a kbq:Model ; rdfs:label ?l")


def test_seed_model_families(ask_true) -> None:
    for m in ["AlexNet", "VGG", "GoogLeNet", "ResNet", "Inception"]:
        assert ask_true(f"kb:{m} a kbq:CNN")
    for m in ["BERT", "XLNet"]:
        assert ask_true(f"kb:{m} a kbq:Transformer")


@pytest.mark.parametrize("label", SEED_APPLICATIONS)
def test_seed_applications_link_to_a_family(ask_true, label: str) -> None:
    assert ask_true(
        f"?a a kbq:Application ; kbq:usesAlgorithm ?f . {{ ?a rdfs:label ?l }} UNION {{ ?a skos:altLabel ?l }} "
        f'FILTER(LCASE(STR(?l)) = "{label.lower()}")'
    )


def test_frameworks_per_family(ask_true) -> None:
    for f in ["Theano", "Caffe", "MXNet", "TensorFlow", "Torch", "PyTorch"]:
        assert ask_true(f"kb:{f} a kbq:Framework ; kbq:supportsAlgorithm kbq:CNN")
    for f in ["CNTK", "Torch", "PyTorch", "Keras"]:
        assert ask_true(f"kb:{f} kbq:supportsAlgorithm kbq:RNN")


def test_sdks_and_roles(ask_true) -> None:
    assert ask_true("kb:CudaToolkit kbq:role kb:DevelopmentRole")
    for s in ["CuDNN", "NCCL", "CuBLAS", "CuSPARSE"]:
        assert ask_true(f"kb:{s} kbq:role kb:TrainingRole")
    for s in ["TensorRT", "DALI"]:
        assert ask_true(f"kb:{s} kbq:role kb:InferenceRole")
    assert ask_true("kb:CuDNN kbq:tensorCoresSinceMajor 7 ; kbq:tensorCoresSinceMinor 0")
    assert ask_true("kb:TensorRT kbq:tensorCoresSinceMajor 3 ; kbq:tensorCoresSinceMinor 0")


def test_cnn_acceleration_via_fft(ask_true) -> None:
    assert ask_true('kbq:CNN kbq:usesSdk kb:CuFFT , kb:CuBLAS ; kbq:accelerationTechnique ?t FILTER(CONTAINS(?t, "cublasCgemm"))')


def test_platforms(ask_true) -> None:
    for p in ["Windows10Pro", "Ubuntu-18.04", "RHEL-7.5"]:
        assert ask_true(f"<https://kbq.dev/kb/{p}> a kbq:OperatingSystem")
    for c in ["Docker-18.06.1", "NvidiaDockerRuntime-2.0.3", "RapidsContainer"]:
        assert ask_true(f"<https://kbq.dev/kb/{c}> a kbq:Container")


def test_processes(ask_true) -> None:
    assert ask_true("kb:Training a kbq:Process ; kbq:computeStyle ?s")
    assert ask_true("kb:Inference a kbq:Process ; kbq:computeStyle ?s")


def test_profiles_follow_the_seed_order(kb) -> None:
    from kbq.lang.catalog import PREFIXES

    def order(profile: str) -> list[tuple[int, str]]:
        rows = kb.table(
            PREFIXES + f"SELECT ?r ?k WHERE {{ kb:{profile} kbq:priority ?s ."
            " ?s kbq:rank ?r ; kbq:attribute/kbq:queryKey ?k } ORDER BY ?r ?k"
        ).rows
        return [(r, k) for r, k in rows]

    assert order("SeedCNNProfile") == [(1, "tensor"), (2, "fp32"), (3, "bandwidth"), (3, "memory"), (4, "fp16")]
    assert order("SeedRNNProfile") == [(1, "bandwidth"), (1, "memory"), (2, "fp16"), (3, "tensor"), (4, "fp32")]
    assert order("SeedTransformerProfile")[:2] == [(1, "bandwidth"), (1, "memory")]


def test_multi_gpu_scaling(ask_true) -> None:
    assert ask_true("kb:SeedCNNProfile kbq:multiGpu kb:ScalesWell")
    assert ask_true("kb:SeedRNNProfile kbq:multiGpu kb:ScalingUnclear")


@pytest.mark.parametrize(
    ("gpu", "cards"), [("RTX2070Super", 8), ("RTX2080Super", 8), ("RTX2080Ti", 8), ("QuadroRTX6000", 9), ("QuadroRTX8000", 9)]
)
def test_seed_blower_designs(ask_true, gpu: str, cards: int) -> None:
    assert ask_true(
        f"kb:{gpu} kbq:boardDesign ?d . ?d kbq:cooling kb:Blower ; kbq:maxCardsPerChassis {cards} ; dcterms:source kb:SeedArticle"
    )


def test_titan_rtx_seed_notes(ask_true) -> None:
    assert ask_true(
        "kb:TitanRTX kbq:nvlink true ; kbq:boardDesign ?d . ?d kbq:maxCardsPerChassis 4 ; dcterms:source kb:SeedArticle"
    )
    assert ask_true("kb:QuadroRTX8000 kbq:memory ?m FILTER(?m = 48)")


def test_gpu_coverage_and_sources(kb) -> None:
    from kbq.lang.catalog import PREFIXES

    gpus = kb.table(
        PREFIXES + "SELECT ?g (COUNT(?s) AS ?n) WHERE { ?g a kbq:GPU . OPTIONAL { ?g dcterms:source ?s } } GROUP BY ?g"
    ).rows
    assert len(gpus) >= 30
    assert all(n >= 1 for _g, n in gpus)
    archs = {r[0] for r in kb.table(PREFIXES + "SELECT DISTINCT ?l WHERE { ?g a kbq:GPU ; kbq:architecture/rdfs:label ?l }").rows}
    assert {"Turing", "Volta", "Ampere", "Ada Lovelace", "Hopper", "Blackwell", "CDNA 3"} <= archs


def test_the_seeds_key_gpu_metrics(ask_true) -> None:
    for attr in ["tensorCores", "memoryBandwidth", "fp16Tflops", "fp32Tflops"]:
        assert ask_true(f"kb:SeedArticle kbq:keyAttribute kbq:{attr}")
