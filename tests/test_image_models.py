"""Workloads that are not language models: images/s, image training memory, training time in epochs,
and EXL2's bits per weight. Expected figures are worked by hand from the KB's sourced inputs (written
out in each test), not copied from kbq's output."""

from __future__ import annotations

import pytest

from kbq.errors import KbqError
from kbq.lang.evaluate.images import epochs_time, images_per_second


def _row(result, name: str) -> float:  # type: ignore[no-untyped-def]
    return float(next(r[1] for r in result.rows if str(r[0]) == name))


def test_the_two_term_roofline_by_hand() -> None:
    # 1 / (8.18e9 / (71e12 x 1.05) + 11.11e6 x 8.7 x 2 / 936.2e9) = 1 / (1.0973e-4 + 2.0649e-4) = 3,163 images/s
    s = images_per_second(
        forward_flops=8.18e9, activations=11.11e6, activation_bytes=2.0, training=False, tflops=71.0, rate_name="tensor",
        bandwidth_gbps=936.2, gpus=1, eta=1.05, passes=8.7, factor=3.9, constants="",
    )  # fmt: skip
    assert s.speed.unit == "images/s"
    assert s.speed.value == pytest.approx(3163, rel=2e-3)
    trained = images_per_second(
        forward_flops=8.18e9, activations=11.11e6, activation_bytes=2.0, training=True, tflops=71.0, rate_name="tensor",
        bandwidth_gbps=936.2, gpus=8, eta=1.05, passes=8.7, factor=3.9, constants="",
    )  # fmt: skip
    assert trained.speed.value == pytest.approx(8 * 3163 / 3.9, rel=2e-3)  # 8 GPUs, a step costs 3.9 forward passes


def test_a_cnn_speed_is_in_images_per_second_and_near_timms_table(kb) -> None:  # type: ignore[no-untyped-def]
    result = kb.answer("speed of resnet-50 inference on 1 x rtx 3090")
    units = {str(r[2]) for r in result.rows}
    assert "images/s" in units and not any("tokens" in u for u in units)
    # timm's RTX 3090 inference table (AMP, batch 1,024): resnet50 at 224 px, 3,219.06 images/s
    assert _row(result, "inference throughput") == pytest.approx(3219.06, rel=0.3)
    assert "images/s" in result.headline and "tokens" not in result.headline


def test_a_model_without_the_figures_is_said_plainly_not_estimated(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KbqError, match=r"kbq cannot estimate the .* speed of YOLOv8n in images/s"):
        kb.answer("speed of yolov8n inference on 1 x rtx 4090")


def test_image_training_memory_counts_activations(kb) -> None:  # type: ignore[no-untyped-def]
    result = kb.answer("memory for resnet-101 training with batch 256 with sgd")
    # 16.23M activations (timm's fvcore count) x 2.42 kept (fitted) x 2 B x 256 images = 20.11 GB
    assert _row(result, "activations") == pytest.approx(16.23e6 * 2.42 * 2 * 256 / 1e9, rel=1e-3)
    assert not any("lower bound" in str(e) for e in result.explanation)
    vit = kb.answer("memory for vit-b/16 training with batch 64 with sgd")
    assert not any("context" in str(e) and "assumed" in str(e) for e in vit.explanation)  # sized per image, not 4,096 tokens
    assert _row(vit, "activations") == pytest.approx(23.9e6 * 2.15 * 2 * 64 / 1e9, rel=1e-3)


def test_a_measured_per_image_figure_and_an_honest_lower_bound(kb) -> None:  # type: ignore[no-untyped-def]
    yolo = kb.answer("memory for yolov5s training with batch 16")
    # Ultralytics' autobatch profile: (3.280 - 1.797) GB / 8 images = 0.185 GB per image
    assert _row(yolo, "activations") == pytest.approx(0.185 * 16, rel=1e-3)
    sd = kb.answer("memory for stable diffusion training")
    assert any("lower bound" in str(e) for e in sd.explanation)  # no sourced figure: it says so


def test_time_to_train_for_epochs_on_a_dataset(kb) -> None:  # type: ignore[no-untyped-def]
    question = "time to train resnet-50 for 90 epochs on imagenet on 8 x a100 sxm4 80gb"
    result = kb.answer(question)
    speed = _row(result, "training throughput")
    # each epoch: the training split at the training images/s, then 42 s between epochs (kb:ImageEpochOverhead)
    assert _row(result, "training passes") == pytest.approx(90 * 1_281_167 / speed / 3600, abs=0.006)  # shown to 0.01 h
    assert _row(result, "between epochs") == pytest.approx(90 * 42 / 3600, abs=0.006)
    assert _row(result, "wall-clock hours") == pytest.approx(90 * (1_281_167 / speed + 42) / 3600, abs=0.006)
    assert any("target accuracy" in str(e) for e in result.explanation)  # MLPerf is not 90 epochs: said
    assert "hours" in result.headline and "None" not in result.headline
    # NVIDIA DeepLearningExamples: ~3 hours on 8 x A100 80GB with mixed precision, evaluation included
    assert 2.0 <= _row(result, "wall-clock hours") <= 4.5
    with pytest.raises(KbqError, match="name the epochs and the dataset"):
        kb.answer("time to train resnet-50 for 90 epochs on 8 x a100 sxm4 80gb")


def test_the_time_between_epochs_by_hand() -> None:
    # DeepLearningExamples' own figures: 90 epochs at 16,621 images/s plus 42 s per epoch is about their ~3 hours
    timed = epochs_time(
        epochs=90, examples=1_281_167, dataset="ImageNet-1k", images_per_s=16_621, epoch_overhead_s=42, constant=""
    )
    assert timed.passes_hours == pytest.approx(90 * 1_281_167 / 16_621 / 3600, rel=1e-6)  # 1.93 h
    assert timed.overhead_hours == pytest.approx(1.05, rel=1e-6)
    assert timed.hours == pytest.approx(2.98, abs=0.01)
    assert "42 s between epochs" in timed.formula


def test_fp32_training_runs_at_the_fp32_vector_rate_not_the_tensor_rate(kb) -> None:  # type: ignore[no-untyped-def]
    fp32 = kb.answer("speed of resnet-50 training at fp32 on 1 x v100 sxm2 16gb")
    amp = kb.answer("speed of resnet-50 training on 1 x v100 sxm2 16gb")
    # ResNet-50: 8.18 GFLOPs per image; V100 SXM2: 15.7 TFLOPS FP32, 125 TFLOPS tensor
    assert _row(fp32, "forward arithmetic at the full rate") == pytest.approx(8.18e9 / 15.7e12 * 1e6, rel=1e-3)
    assert _row(amp, "forward arithmetic at the full rate") == pytest.approx(8.18e9 / 125e12 * 1e6, rel=1e-3)


def test_exl2_takes_its_bits_per_weight_from_the_question(kb) -> None:  # type: ignore[no-untyped-def]
    glued = kb.answer("memory for llama 2 7b inference at exl2 4.65bpw")
    bare = kb.answer("memory for llama 2 7b inference at 4.65 bpw")
    # Llama 2 7B: 6,738,415,616 parameters; embeddings and head 32,000 x 4,096 each
    expected = ((6_738_415_616 - 262_144_000) * 4.65 + 131_072_000 * 16 + 131_072_000 * 6.3) / 8 / 1e9
    assert _row(glued, "weights") == pytest.approx(expected, rel=1e-3)
    assert _row(bare, "weights") == pytest.approx(expected, rel=1e-3)
    with pytest.raises(KbqError, match="fixed size"):
        kb.answer("memory for llama 2 7b inference at q4_k_m with 4.65 bpw")
    with pytest.raises(KbqError, match="takes its bits per weight"):
        kb.answer("memory for llama 2 7b inference at exl2")


def test_a_diffusion_model_keeps_no_kv_cache(kb, ask_true) -> None:  # type: ignore[no-untyped-def]
    """A diffusion denoiser reads the whole latent each step (ontology/rules/diffusion-no-kv-cache.rq):
    FLUX.1 [dev] has layer and head counts, yet its memory is weights + runtime only. By hand: 12e9
    parameters x 2 bytes = 24 GB of transformer weights at FP16 (plus its T5 and CLIP text encoders), and no
    line that grows with a context."""
    assert ask_true("kb:FLUX1Dev kbq:numLayers ?l ; kbq:attentionHeads ?h ; kbq:encoderOnly true")
    result = kb.answer("memory for flux.1 dev")
    parts = {str(r[0]) for r in result.rows}
    assert not any("KV" in p for p in parts), parts
    # its pipeline parts (kb/pipelines_diffusion.ttl): 12e9 transformer + 4,762,310,656 T5-XXL encoder
    # + 123,060,480 CLIP text encoder, x 2 B
    assert _row(result, "weights") == pytest.approx((12e9 + 4_762_310_656 + 123_060_480) * 2 / 1e9, abs=5e-4)
    assert not any("context" in line for line in result.explanation if line.startswith("assumed"))
