"""Throughput of models that read images (classifiers, vision transformers), in images/s.

One image costs the time of its arithmetic plus the time of its activation traffic (a two-term
roofline: convolution networks at large batch are partly bound by memory bandwidth, which is why an
RTX 4090 runs ResNet-50 only 1.3x faster than an RTX 3090 although its tensor rate is 2.3x):

  seconds per image = k x ( F / (R x eta)  +  A x p x s / BW )

F: forward FLOPs (kbq:forwardGflops, a multiply-add counted as two); R: the dense rate at the compute
precision; A: activation elements of one forward pass (kbq:forwardActivations, fvcore's count);
s: bytes per activation element (the compute precision's size); BW: memory bandwidth; eta (compute
efficiency), p (activation passes: bytes moved per activation byte) and k (1 at inference; the cost of
a training step over a forward pass at training) are calibrated constants per model class
(kb/calibrated.ttl), fitted on published images/s by bench/fit_images.py."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang.workload import formulas


class ImageSpeed(NamedTuple):
    speed: formulas.Speed
    compute_s: float  # F / R: seconds of one forward pass's arithmetic at the full dense rate
    traffic_s: float  # A x s / BW: seconds of one pass over the activations at the full bandwidth


def images_per_second(
    *, forward_flops: float, activations: float, activation_bytes: float, training: bool, tflops: float, rate_name: str,
    bandwidth_gbps: float, gpus: int, eta: float, passes: float, factor: float, constants: str,
) -> ImageSpeed:  # fmt: skip
    k = factor if training else 1.0
    compute = forward_flops / (tflops * 1e12)
    traffic = activations * activation_bytes / (bandwidth_gbps * 1e9)
    value = gpus / (k * (compute / eta + traffic * passes))
    step = f"{k:g} x " if training else ""
    formula = (
        f"{gpus} GPU(s) / ({step}({forward_flops / 1e9:,.2f} GFLOPs / ({tflops:g} TFLOPS {rate_name} x {eta:.0%})"
        f" + {activations / 1e6:,.2f}M activations x {passes:g} passes x {activation_bytes:g} B / {bandwidth_gbps:g} GB/s))"
        f" per image; constants: {constants}"
    )
    name = "training throughput" if training else "inference throughput"
    return ImageSpeed(formulas.Speed(name, value, "images/s", formula), compute, traffic)


class EpochsTime(NamedTuple):
    hours: float  # wall-clock hours: training passes plus the time between them
    passes_hours: float  # the training passes alone: images seen / training images/s
    overhead_hours: float  # epochs x the time between epochs
    formula: str


def epochs_time(
    *, epochs: float, examples: float, dataset: str, images_per_s: float, epoch_overhead_s: float, constant: str
) -> EpochsTime:
    """Wall-clock hours for a number of epochs: each epoch reads the training split at the training
    throughput, then spends a calibrated time outside the training step (evaluation on the validation
    split, checkpointing, restarting the data loader): published 90-epoch times exceed the images /
    the same table's throughput by about that much per epoch, on 1 GPU and on 8 alike."""
    passes = epochs * examples / images_per_s / 3600
    overhead = epochs * epoch_overhead_s / 3600
    formula = (
        f"{epochs:g} epochs x ({examples:,.0f} images ({dataset} training split) / {images_per_s:,.0f} images/s"
        f" + {epoch_overhead_s:g} s between epochs) / 3600; constant: {constant}"
    )
    return EpochsTime(passes + overhead, passes, overhead, formula)
