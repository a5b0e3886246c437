"""Diffusion pipelines sized by their parts (kb/pipelines_diffusion.ttl): the weights line is the
sum of the parts the GPU holds, each part listed with its source. Expected figures are worked by
hand from the sourced counts; the old code sized SD v1 and SDXL by their U-Net alone."""

from __future__ import annotations

import pytest

from kbq.lang.scenario import place_parts
from kbq.lang.workload.formulas import Facts, Format, Part, part_lines, weights


def _row(result, name: str) -> float:  # type: ignore[no-untyped-def]
    return float(next(r[1] for r in result.rows if r[0] == name))


FP16 = Format("FP16", 16)


def test_the_weights_of_a_pipeline_are_the_sum_of_its_parts_by_hand() -> None:
    sd = Facts("SD v1", params=860e6, parts=(Part("U-Net", 859_520_964), Part("text", 123_060_480), Part("VAE", 83_653_863)))
    placed, notes, assumed = place_parts(sd, training=False, offload=False, named={})
    # 859,520,964 + 123,060,480 + 83,653,863 = 1,066,235,307 (the fast.ai post's own total) x 2 B
    assert placed.params == 1_066_235_307
    line = weights(placed, FP16)
    assert line.gb == pytest.approx(1_066_235_307 * 2 / 1e9, abs=5e-4)  # 2.132 GB (the U-Net alone: 1.72)
    assert "U-Net 859,520,964 + text 123,060,480 + VAE 83,653,863" in line.formula
    assert sum(p.gb for p in part_lines(placed, FP16)) == pytest.approx(line.gb, rel=1e-12)
    assert assumed and not notes
    offloaded, notes, _ = place_parts(sd, training=False, offload=True, named={})
    assert offloaded.params == 859_520_964 and "one part on the GPU at a time" in notes[0]
    trained, notes, _ = place_parts(sd, training=True, offload=False, named={})
    assert trained.params == 860e6 and not trained.parts  # training sizes the denoiser's own count


def test_sdxl_memory_counts_its_text_encoders_and_vae(kb) -> None:  # type: ignore[no-untyped-def]
    result = kb.answer("memory for stable diffusion xl inference")
    # U-Net 2,600,000,000 (CSDN, quoting the paper) + OpenCLIP ViT-bigG text 694,660,000 (OpenCLIP
    # model_profile.csv 694.66M) + CLIP ViT-L text 123,060,480 + VAE 83,653,863 (fast.ai) = 3,501,374,343
    # parameters x 2 B = 7.0027 GB (the U-Net alone gave 5.2 GB; the CSDN article's FP16 files sum to 6.94 GB)
    assert _row(result, "weights") == pytest.approx(3_501_374_343 * 2 / 1e9, abs=5e-4)  # shown to 3 decimals
    parts = [line for line in result.explanation if str(line).startswith("weights: ")]
    assert len(parts) == 4 and all("(" in str(p) for p in parts)  # each part with its source
    assert any("OpenCLIP docs/model_profile.csv" in str(p) for p in parts)
    assert any(str(a).startswith("assumed: every part of Stable Diffusion XL 1.0 on the GPU") for a in result.explanation)


def test_sd15_memory_and_offload(kb) -> None:  # type: ignore[no-untyped-def]
    whole = kb.answer("memory for sd 1.5 inference")
    assert _row(whole, "weights") == pytest.approx(1_066_235_307 * 2 / 1e9, abs=5e-4)  # 2.132 GB
    offload = kb.answer("memory for sd 1.5 inference with offload")
    assert _row(offload, "weights") == pytest.approx(859_520_964 * 2 / 1e9, abs=5e-4)  # the U-Net alone: 1.719 GB


def test_flux_lists_the_parts_it_cannot_count(kb) -> None:  # type: ignore[no-untyped-def]
    result = kb.answer("memory for flux.1 dev inference")
    # 12e9 transformer (model card) + 4,762,310,656 T5-XXL encoder (aitune's count of SD3's text_encoder_3; by hand:
    # 32,128 x 4,096 embedding + 24 x (4 x 4,096^2 + 3 x 4,096 x 10,240 + 2 x 4,096) + 32 x 64 + 4,096)
    # + 123,060,480 CLIP text encoder = 16,885,371,136 x 2 B = 33.771 GB
    t5 = 32_128 * 4_096 + 24 * (4 * 4_096**2 + 3 * 4_096 * 10_240 + 2 * 4_096) + 32 * 64 + 4_096
    assert t5 == 4_762_310_656
    assert _row(result, "weights") == pytest.approx((12e9 + t5 + 123_060_480) * 2 / 1e9, abs=5e-4)
    lines = [str(e) for e in result.explanation]
    assert any(e.startswith("not counted: autoencoder") and "lower bound" in e for e in lines)


def test_sd3_medium_counts_its_three_text_encoders(kb) -> None:  # type: ignore[no-untyped-def]
    result = kb.answer("memory for sd3 medium")
    # aitune's inspection of stable-diffusion-3-medium-diffusers: 2,028,328,000 + 123,650,304 + 694,659,840
    # + 4,762,310,656 + 49,545,475 (VAE decoder) = 7,658,494,275 x 2 B = 15.317 GB (the KB's 2B alone: 4.0 GB)
    assert _row(result, "weights") == pytest.approx(7_658_494_275 * 2 / 1e9, abs=5e-4)
    assert any(str(e).startswith("not counted: VAE encoder") for e in result.explanation)


def test_models_that_fit_show_the_pipelines_size(kb) -> None:  # type: ignore[no-untyped-def]
    result = kb.answer("models that fit on rtx a6000")
    row = next(r for r in result.rows if r[0] == "FLUX.1 [dev]")
    assert row[1] == pytest.approx(16.89, abs=0.005)  # 16,885,371,136 parameters on the GPU, not the card's 12B
