"""The workload arithmetic: memory, speed and training time from a model's published
architecture and sourced constants. Pure functions over plain records; every result is a Line
that carries its formula (with the numbers put in) and the sources of its constants, so an
answer never shows an estimate without them.

Units: GB = 10^9 bytes (as GPU datasheets state memory); rates in the KB's TFLOPS and GB/s.

Memory (per the sources named in kb/arithmetic.ttl):
- weights = parameters x bits per weight / 8 (group-quantised formats add their group overhead:
  bits + overhead bits / group size);
- KV cache = 2 x layers x KV heads x head dim x bytes x tokens (PagedAttention, section 3), with
  sliding-window layers capped at their window; MLA caches (kv_lora_rank + qk_rope_head_dim) x
  layers x bytes per token (DeepSeek-V2, section 2.1);
- training: 16-bit weights (2 B) + gradients (2 B) + optimizer (AdamW 12 B: ZeRO section 3.1)
  per trainable parameter; activations s·b·h·(34 + 5·a·s/h) bytes per layer (Korthikanti et al.
  2022), 34·s·b·h with selective and 2·s·b·h with full recomputation;
- LoRA: r·(d_in + d_out) trainable parameters per adapted matrix (Hu et al. 2021);
- ZeRO stage 1 shards optimizer states, 2 adds gradients, 3 adds weights, over N GPUs; offload
  moves optimizer states (and with stage 3 the weights) to CPU memory;
- runtime: the CUDA context per GPU; the verdict keeps the usable share of memory free.
Speed: decode tokens/s = efficiency x bandwidth x GPUs / bytes read per step x batch; prefill
tokens/s = MFU x dense FLOPS x GPUs / (2 x active parameters); training time = 6 x N x D /
(GPUs x dense FLOPS x MFU).
"""

from __future__ import annotations

from typing import NamedTuple

GB = 1e9


class Part(NamedTuple):
    """One network of a pipeline model (kbq:component): its label, parameter count (None: no source
    gives one) and the labels of its sources."""

    label: str
    params: float | None
    source: str = ""


class Facts(NamedTuple):
    """A model's architecture as its config.json / paper states it (None: not in the KB)."""

    label: str
    params: float | None = None
    active_params: float | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn: int | None = None
    vocab: int | None = None
    max_context: int | None = None
    attention: str | None = None  # MHA | GQA | MQA | MLA
    kv_lora_rank: int | None = None
    rope_dim: int | None = None
    window: int | None = None
    window_layers: int | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    tied_embeddings: bool | None = None  # one matrix serves as input embedding and output head
    forward_gflops: float | None = None  # one sample's forward pass as its source counts it (kbq:forwardGflops)
    forward_counts_macs: bool | None = None  # the source counts a multiply-add once (FLOPs = 2 x the figure)
    activations_m: float | None = None  # millions of activation elements one sample's forward pass writes (fvcore)
    activation_gb_image: float | None = None  # measured training activations per image (GB, mixed precision)
    sources: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()  # a pipeline's parts on the GPU (params is then their sum); () for one network

    @property
    def counted_parts(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.params is not None)

    @property
    def forward_flops(self) -> float | None:
        """FLOPs of one sample's forward pass, a multiply-add counted as two."""
        if self.forward_gflops is None:
            return None
        return self.forward_gflops * 1e9 * (2.0 if self.forward_counts_macs else 1.0)

    @property
    def dim(self) -> int | None:
        """Per-head dimension: config head_dim, else hidden / heads."""
        if self.head_dim:
            return self.head_dim
        if self.hidden and self.heads:
            return self.hidden // self.heads
        return None

    @property
    def active(self) -> float | None:
        return self.active_params or self.params


class Format(NamedTuple):
    label: str
    bits: float
    group_size: int | None = None
    group_bits: float | None = None
    source: str = ""
    embedding_bits: float | None = None  # the format quantises linear layers only: embeddings/head stay at these bits
    head_bits: float | None = None  # the output head's own bits where the format quantises it apart (EXL2's -hb)

    @property
    def bits_per_weight(self) -> float:
        if self.group_size and self.group_bits:
            return self.bits + self.group_bits / self.group_size
        return self.bits

    def describe(self) -> str:
        if self.group_size and self.group_bits:
            return f"{self.bits:g} + {self.group_bits:g}/{self.group_size} = {self.bits_per_weight:.4g} bits"
        return f"{self.bits:g} bits"


class Line(NamedTuple):
    part: str
    gb: float
    formula: str
    source: str = ""


class Speed(NamedTuple):
    name: str
    value: float
    unit: str
    formula: str
    source: str = ""


def embedding_parameters(f: Facts) -> float | None:
    """Parameters of the token embeddings and the output head (one matrix when tied)."""
    if f.vocab is None or f.hidden is None:
        return None
    return f.vocab * f.hidden * (1 if f.tied_embeddings else 2)


def weights(f: Facts, fmt: Format, *, params: float | None = None, what: str = "weights") -> Line:
    """Weights at the format's bits; a format that quantises only the linear layers (bitsandbytes,
    GPTQ/AWQ, FP8 and INT8 checkpoints) keeps the embeddings and the output head at their stored 16 bits."""
    n = params if params is not None else f.params
    if n is None:
        raise ValueError(f"no parameter count for {f.label}")
    if params is None and f.counted_parts:  # a pipeline: the sum of its parts on the GPU
        each = " + ".join(f"{p.label} {p.params:,.0f}" for p in f.counted_parts)
        gb = n * fmt.bits_per_weight / 8 / GB
        return Line(what, gb, f"({each}) = {n:,.0f} parameters x {fmt.describe()} ({fmt.label}) / 8", fmt.source)
    embed = embedding_parameters(f) if fmt.embedding_bits and fmt.embedding_bits > fmt.bits_per_weight else None
    if embed and embed < n and fmt.head_bits and not f.tied_embeddings:
        table = embed / 2  # the input embeddings; the output head is the other vocab x hidden matrix
        gb = ((n - embed) * fmt.bits_per_weight + table * (fmt.embedding_bits or 16) + table * fmt.head_bits) / 8 / GB
        return Line(
            what, gb,
            f"({n:,.0f} - {embed:,.0f} embeddings and output head) parameters x {fmt.describe()} ({fmt.label}) / 8"
            f" + {table:,.0f} embeddings x {fmt.embedding_bits:g} bits / 8 + {table:,.0f} output head x {fmt.head_bits:g}"
            " bits / 8",
            fmt.source,
        )  # fmt: skip
    if embed and embed < n:
        gb = ((n - embed) * fmt.bits_per_weight + embed * (fmt.embedding_bits or 16)) / 8 / GB
        head = "embeddings" if f.tied_embeddings else "embeddings and output head"
        return Line(
            what, gb,
            f"({n:,.0f} - {embed:,.0f} {head}) parameters x {fmt.describe()} ({fmt.label}) / 8"
            f" + {embed:,.0f} x {fmt.embedding_bits:g} bits / 8 ({fmt.label} quantises the linear layers only)",
            fmt.source,
        )  # fmt: skip
    gb = n * fmt.bits_per_weight / 8 / GB
    return Line(what, gb, f"{n:,.0f} parameters x {fmt.describe()} ({fmt.label}) / 8", fmt.source)


def part_lines(f: Facts, fmt: Format) -> list[Line]:
    """Each counted part of a pipeline at the weights' format: the lines the weights line sums."""
    return [
        Line(f"weights: {p.label}", (p.params or 0.0) * fmt.bits_per_weight / 8 / GB,
             f"{p.params:,.0f} parameters x {fmt.describe()} ({fmt.label}) / 8", p.source)
        for p in f.counted_parts
    ]  # fmt: skip


def kv_bytes_per_token(f: Facts, kv_bytes: float, context: int) -> tuple[float, str] | None:
    """Bytes of KV cache one token adds, averaged over a sequence of `context` tokens (sliding
    layers hold at most their window), and the formula."""
    if f.layers is None:
        return None
    if f.attention == "MLA" and f.kv_lora_rank:
        per = (f.kv_lora_rank + (f.rope_dim or 0)) * f.layers * kv_bytes
        return per, f"({f.kv_lora_rank} latent + {f.rope_dim or 0} rope) x {f.layers} layers x {kv_bytes:g} B"
    if f.kv_heads is None and f.heads is None:
        return None
    kv_heads = f.kv_heads or f.heads
    dim = f.dim
    if dim is None or kv_heads is None:
        return None
    sliding = f.window_layers or 0 if f.window else 0
    full = f.layers - sliding
    per_layer = 2 * kv_heads * dim * kv_bytes
    text = f"2 x {kv_heads} KV heads x {dim} head dim x {kv_bytes:g} B"
    if sliding and f.window and context > f.window:
        avg = (full * per_layer) + sliding * per_layer * f.window / context
        return avg, f"{text} x ({full} full layers + {sliding} sliding layers x {f.window}/{context} of the tokens)"
    return per_layer * f.layers, f"{text} x {f.layers} layers"


def kv_cache(f: Facts, *, context: int, batch: int, kv_bytes: float, source: str) -> Line | None:
    per = kv_bytes_per_token(f, kv_bytes, context)
    if per is None:
        return None
    bytes_per_token, text = per
    gb = bytes_per_token * context * batch / GB
    return Line("KV cache", gb, f"{text} x {context:,} tokens x batch {batch}", source)


def activations(
    f: Facts, *, context: int, batch: int, linear: float, quadratic: float, model: str, source: str, per_layer: bool = True
) -> Line | None:
    """Activations kept for the backward pass: s·b·h·(linear + quadratic·a·s/h) bytes per layer
    (Korthikanti et al.), or once for the whole model when the checkpoints live in CPU memory
    (per_layer False: the GPU holds one layer's working set)."""
    if f.layers is None or f.hidden is None or f.heads is None:
        return None
    s, b, h, a = context, batch, f.hidden, f.heads
    one = s * b * h * (linear + quadratic * a * s / h)
    layers = f.layers if per_layer else 1
    gb = one * layers / GB
    quad = f" + {quadratic:g} x {a} x {s}/{h}" if quadratic else ""
    where = f"B per layer x {f.layers} layers" if per_layer else "B (one layer's working set on the GPU)"
    return Line("activations", gb, f"{s} x {b} x {h} x ({linear:g}{quad}) {where} ({model})", source)


def logits(f: Facts, *, context: int, batch: int, bytes_per_logit: float, source: str) -> Line | None:
    """The loss's logit matrix in training: every token against every vocabulary entry."""
    if f.vocab is None:
        return None
    gb = context * batch * f.vocab * bytes_per_logit / GB
    return Line("logits (loss)", gb, f"{context} tokens x {batch} x {f.vocab:,} vocabulary x {bytes_per_logit:g} B", source)


def lora_parameters(f: Facts, *, targets: str, rank: int) -> tuple[float, str] | None:
    """Trainable LoRA parameters: r x (d_in + d_out) per adapted matrix per layer."""
    if f.layers is None or f.hidden is None or f.heads is None:
        return None
    h, dim = f.hidden, f.dim or (f.hidden // f.heads)
    q = f.heads * dim
    kv = (f.kv_heads or f.heads) * dim
    mats = {"q": (h, q), "k": (h, kv), "v": (h, kv), "o": (q, h)}
    chosen = ["q", "v"] if targets == "q,v" else ["q", "k", "v", "o"]
    per_layer = sum(rank * (mats[m][0] + mats[m][1]) for m in chosen)
    text = " + ".join(f"{rank} x ({mats[m][0]} + {mats[m][1]})" for m in chosen)
    if targets == "all-linear" and f.ffn:
        ffn_mats = rank * (3 * h + 3 * f.ffn)  # gate and up (h -> ffn), down (ffn -> h)
        experts = f.experts or 1
        per_layer += ffn_mats * experts
        text += f" + {rank} x 3 x ({h} + {f.ffn})" + (f" x {experts} experts" if experts > 1 else "")
    return per_layer * f.layers, f"[{text}] x {f.layers} layers"


class Training(NamedTuple):
    trainable: float  # trainable parameters
    weight_line: Line
    trainable_line: Line | None
    gradient_line: Line
    optimizer_line: Line


def training(
    f: Facts,
    *,
    base: Format,
    optimizer_bytes: float,
    gradient_bytes: float,
    optimizer_label: str,
    optimizer_source: str,
    lora: tuple[float, str] | None,
) -> Training:
    """Weights, gradients and optimizer states for full training (lora None) or adapters."""
    if lora is None:
        trainable = f.params or 0.0
        weight_line = weights(f, base)
        trainable_line = None
        what = f"{trainable:,.0f} parameters"
    else:
        trainable, text = lora
        weight_line = weights(f, base, what="frozen base weights")
        trainable_line = Line("adapter weights", trainable * 2 / GB, f"{text} = {trainable:,.0f} parameters x 2 B (16-bit)", "")
        what = f"{trainable:,.0f} trainable parameters"
    grads = Line("gradients", trainable * gradient_bytes / GB, f"{what} x {gradient_bytes:g} B", optimizer_source)
    optim = Line(
        "optimizer states",
        trainable * optimizer_bytes / GB,
        f"{what} x {optimizer_bytes:g} B ({optimizer_label})",
        optimizer_source,
    )
    return Training(trainable, weight_line, trainable_line, grads, optim)


def shard(line: Line, n: int, why: str) -> Line:
    return line._replace(gb=line.gb / n, formula=f"({line.formula}) / {n} GPUs ({why})")


def tensor_parallel_kv(f: Facts, line: Line, tp: int) -> Line:
    """KV cache per GPU under tensor parallelism: KV heads split over the GPUs, replicated
    once TP exceeds them (each GPU keeps at least one KV head)."""
    kv_heads = f.kv_heads or f.heads or 1
    if f.attention == "MLA":
        return line._replace(formula=f"({line.formula}) (MLA latent replicated on each GPU)")
    share = max(kv_heads / tp, 1) / kv_heads
    note = (
        f"{kv_heads} KV heads / {tp} GPUs"
        if tp <= kv_heads
        else f"1 of {kv_heads} KV heads replicated per GPU (TP {tp} > KV heads)"
    )
    return line._replace(gb=line.gb * share, formula=f"({line.formula}) x {share:.4g} ({note})")


def decode_speed(
    *,
    weight_bytes: float,
    kv_bytes_per_seq: float,
    batch: int,
    bandwidth_gbps: float,
    gpus: int,
    efficiency: float,
    efficiency_text: str,
    compute_bound: Speed | None = None,
    step_overhead_s: float = 0.0,
) -> Speed:
    """Roofline decode: each step reads the weights once and every sequence's KV cache; at a large
    batch the step is limited by arithmetic instead (the prefill rate), whichever is lower. A backend
    with a calibrated fixed time per step (kernel launches, sampling: what bounds small models) adds it
    to the step's read time."""
    step_bytes = weight_bytes + kv_bytes_per_seq * batch
    tokens = efficiency * bandwidth_gbps * GB * gpus / step_bytes * batch
    if step_overhead_s:
        tokens = batch / (batch / tokens + step_overhead_s)
    overhead = f" + {step_overhead_s * 1e3:.2f} ms per step" if step_overhead_s else ""
    formula = (
        f"{efficiency_text} x {bandwidth_gbps:g} GB/s x {gpus} GPU(s) / ({weight_bytes / GB:.3g} GB weights read per step"
        f" + {batch} x {kv_bytes_per_seq / GB:.3g} GB KV) x batch {batch}"
        if not step_overhead_s
        else f"batch {batch} / (({weight_bytes / GB:.3g} GB weights read per step + {batch} x {kv_bytes_per_seq / GB:.3g} GB KV)"
        f" / ({efficiency_text} x {bandwidth_gbps:g} GB/s x {gpus} GPU(s)){overhead})"
    )
    if compute_bound is not None and compute_bound.value < tokens:
        return Speed(
            "decode",
            compute_bound.value,
            "tokens/s",
            f"compute-bound at batch {batch}: {compute_bound.formula} (memory bound {tokens:,.0f})",
        )
    return Speed("decode", tokens, "tokens/s", formula)


def serving_throughput(
    *,
    weight_bytes: float,
    kv_bytes_per_token: float,
    free_bytes: float,
    input_tokens: int,
    output_tokens: int,
    bandwidth_gbps: float,
    efficiency: float,
    tflops: float,
    mfu: float,
    decode_mfu: float | None = None,
    active_params: float,
    gpus: int,
    allreduce: AllReduce | None = None,
) -> Speed | None:
    """Output tokens/s of continuous batching at the largest batch whose KV caches fit (each request
    reserves input + output tokens). A decode step reads the weights and every request's cache at its
    mean length, or is compute-bound, whichever is slower; each request's prompt is prefilled once.
    Split by tensor parallelism, every token also waits for its all-reduces (`allreduce`)."""
    per_request = kv_bytes_per_token * (input_tokens + output_tokens)
    if per_request <= 0 or free_bytes < per_request:
        return None
    batch = int(free_bytes // per_request)
    mean = input_tokens + output_tokens / 2
    flops = mfu * tflops * 1e12 * gpus
    decode_flops = (decode_mfu if decode_mfu is not None else mfu) * tflops * 1e12 * gpus
    memory_step = (weight_bytes + batch * kv_bytes_per_token * mean) / (efficiency * bandwidth_gbps * GB * gpus)
    compute_step = 2 * active_params * batch / decode_flops
    per_token = allreduce.seconds_per_token if allreduce else 0.0
    step = max(memory_step, compute_step) + batch * per_token
    prefill = 2 * active_params * input_tokens / flops + input_tokens * per_token
    tokens = batch * output_tokens / (output_tokens * step + batch * prefill)
    bound = "memory" if memory_step >= compute_step else "compute"
    comm = f" + {batch} tokens' all-reduces" if allreduce else ""
    return Speed(
        "serving",
        tokens,
        "output tokens/s",
        f"batch {batch} (KV of {input_tokens}+{output_tokens} tokens each in {free_bytes / GB:.0f} GB free) x "
        f"{output_tokens} tokens"
        f" / ({output_tokens} decode steps of {step * 1e3:.1f} ms ({bound}-bound{comm})"
        f" + {batch} prefills of {prefill * 1e3:.1f} ms)" + (f"; {allreduce.formula}" if allreduce else ""),
    )


class AllReduce(NamedTuple):
    seconds_per_token: float
    formula: str


def tensor_parallel_allreduce(*, layers: int, hidden: int, gpus: int, link_gbps: float, activation_bytes: float) -> AllReduce:
    """Tensor parallelism's communication per token (Megatron-LM, Shoeybi et al. 2019, section 3: two
    all-reduces per transformer layer in the forward pass, of the attention and the MLP outputs). A ring
    all-reduce moves 2 (n-1)/n of the data through each GPU's link in each direction, so at the link's
    one-way bandwidth (half the two-way figure the vendor states) it takes 2 (n-1)/n x data / (link / 2):
    the link's peak, an upper bound on what NCCL reaches."""
    data = 2 * layers * hidden * activation_bytes
    seconds = data * 2 * (gpus - 1) / gpus / (link_gbps / 2 * GB)
    return AllReduce(
        seconds,
        f"tensor-parallel all-reduces {seconds * 1e6:.1f} us per token = 2 x {layers} layers x {hidden} hidden x"
        f" {activation_bytes:g} B x 2 x ({gpus}-1)/{gpus} / ({link_gbps:g} GB/s link / 2 per direction)",
    )


def prefill_speed(*, active_params: float, tflops: float, gpus: int, mfu: float, rate_name: str) -> Speed:
    tokens = mfu * tflops * 1e12 * gpus / (2 * active_params)
    return Speed(
        "prefill",
        tokens,
        "tokens/s",
        f"{mfu:.0%} MFU x {tflops:g} TFLOPS ({rate_name}) x {gpus} GPU(s) / (2 x {active_params:,.0f} active parameters)",
    )


def train_time(
    *, params: float, tokens: float, tflops: float, gpus: int, mfu: float, rate_name: str, flops_per_token: float = 6.0
) -> tuple[Speed, Speed]:
    """FLOPs = flops_per_token x N x D: 6 for full training (forward 2N, backward 4N: Kaplan et al.
    2020), 4 for adapters on a frozen base (the backward still passes through the frozen weights, 2N,
    but computes no gradients for them)."""
    flops = flops_per_token * params * tokens
    seconds = flops / (gpus * tflops * 1e12 * mfu)
    hours = seconds / 3600
    formula = (
        f"{flops_per_token:g} x {params:,.0f} parameters x {tokens:,.0f} tokens"
        f" / ({gpus} GPUs x {tflops:g} TFLOPS ({rate_name}) x {mfu:.0%} MFU)"
    )
    return (
        Speed("GPU-hours", hours * gpus, "GPU-h", formula),
        Speed("wall-clock", hours / 24, "days", formula),
    )
