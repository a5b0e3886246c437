"""Generate kb/models_generated.ttl from public collections of model configurations.

Re-runnable: `python scripts/gen_models.py` reads pinned commits of two git snapshots and writes
the Turtle (the output is reviewed and committed; the snapshots are not):

* Lightning-AI/litgpt (Apache-2.0), litgpt/config.py: one Config per Hugging Face checkpoint
  (hf_config org/name), with the shapes litgpt loads those checkpoints into. Parameter counts are
  computed from those shapes (the formula is `litgpt_parameters` below, stated in every note).
* huggingface/pytorch-image-models (timm, Apache-2.0), results/results-imagenet.csv (architectures,
  evaluation resolution, parameter count in millions) and the RTX 4090 inference benchmark
  results/benchmark-infer-amp-nchw-pt291-cu128-4090.csv (GMACs per image at that resolution).

Models the hand-written kb/models*.ttl already hold are skipped (a generated name that normalises
to an existing name is dropped; a model whose label would clash is not generated), so the name index
stays unambiguous; tests/test_catalog.py checks it.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import subprocess
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import rdflib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kbq.store.names import normalise  # noqa: E402

LITGPT_GIT = Path("/work/.mirror/Lightning-AI+litgpt/repo")
LITGPT_COMMIT = "26857050fe3ff627cd714fe92f5838f51a3d5efa"
LITGPT_URL = f"https://github.com/Lightning-AI/litgpt/blob/{LITGPT_COMMIT}/litgpt/config.py"
TIMM_GIT = Path("/work/.mirror/huggingface+pytorch-image-models/repo")
TIMM_COMMIT = "aa4b5850c1543fa488abf260f18390eda46cf85d"
TIMM_RESULTS = "results/results-imagenet.csv"
TIMM_BENCH = "results/benchmark-infer-amp-nchw-pt291-cu128-4090.csv"
TIMM_RESULTS_URL = f"https://github.com/huggingface/pytorch-image-models/blob/{TIMM_COMMIT}/{TIMM_RESULTS}"
TIMM_BENCH_URL = f"https://github.com/huggingface/pytorch-image-models/blob/{TIMM_COMMIT}/{TIMM_BENCH}"
MLC_PRESETS_URL = (
    "https://github.com/mlc-ai/mlc-llm/blob/79d603f085f50500e9509fa01785ffa7ecfaaa93/python/mlc_llm/model/model_preset.py"
)
MLC_GIT = Path("/work/.mirror/mlc-ai+mlc-llm/repo")
MLC_COMMIT = "79d603f085f50500e9509fa01785ffa7ecfaaa93"
# mlc-llm presets (verbatim Hugging Face config.json files) of architectures litgpt lacks, with the
# model name each preset is the config of. Left out: 'qwen2' (Qwen1.5-1.8B-Chat: the preset says
# tie_word_embeddings true, which gives 1.53B against the model's published 1.84B) and 'minicpm_2b'
# (which MiniCPM-2B checkpoint it copies, and so its tying, could not be told).
MLC_PRESETS = {
    "qwen2_0_5b": "Qwen2-0.5B",
    "qwen2_1_5b": "Qwen2-1.5B",
    "qwen2_7b": "Qwen2-7B",
    "internlm2": "InternLM2-7B",
    "internlm2_5_7b": "InternLM2.5-7B",
    "smollm_135m": "SmolLM-135M",
    "smollm_360m": "SmolLM-360M",
    "smollm_1_7b": "SmolLM-1.7B",
    "olmo2_32b": "OLMo-2-32B",
    "snowflake-arctic-embed-m": "snowflake-arctic-embed-m",
}
MAXTEXT_GIT = Path("/work/.mirror/AI-Hypercomputer+maxtext/repo")
MAXTEXT_COMMIT = "e591f30cbbf217ed67ef71263ec0538239f9c3b8"
MAXTEXT_HF_CONFIGS = "src/maxtext/checkpoint_conversion/utils/hf_model_configs.py"
MAXTEXT_HF_CONFIGS_URL = f"https://github.com/AI-Hypercomputer/maxtext/blob/{MAXTEXT_COMMIT}/{MAXTEXT_HF_CONFIGS}"
MAXTEXT_IDS_URL = f"https://github.com/AI-Hypercomputer/maxtext/blob/{MAXTEXT_COMMIT}/src/maxtext/utils/globals.py"
# MaxText's transcribed configs of architectures the other collections lack -> the Hub id (MaxText's
# HF_IDS in utils/globals.py, or the URL in the comment above the transcription) and other Hub ids
# the same file names for the same configuration.
MAXTEXT_MODELS: dict[str, tuple[str, list[str]]] = {
    "deepseek2_16b_dict": ("deepseek-ai/DeepSeek-V2-Lite", []),
    "gpt_oss_20b_dict": ("openai/gpt-oss-20b", ["unsloth/gpt-oss-20b-BF16"]),
    "gpt_oss_120b_dict": ("openai/gpt-oss-120b", ["unsloth/gpt-oss-120b-BF16"]),
    "qwen3_coder_480b_a35b_config": ("Qwen/Qwen3-Coder-480B-A35B-Instruct", []),
    "qwen3_30b_a3b_base_config": ("Qwen/Qwen3-30B-A3B-Base", []),
    "olmo3_7b_dict": ("allenai/Olmo-3-7B-Instruct", ["allenai/Olmo-3-1025-7B"]),
    "olmo3_32b_dict": ("allenai/Olmo-3.1-32B-Instruct", ["allenai/Olmo-3-32B-Think"]),
    "deepseek32_671b_dict": ("deepseek-ai/DeepSeek-V3.2", []),
    "qwen3_next_80b_a3b_dict": ("Qwen/Qwen3-Next-80B-A3B-Instruct", []),
    # Qwen3.5 (vision-language): the language model of its text_config, Qwen3-Next's hybrid layout
    "qwen3_5_35b_a3b_dict": ("Qwen/Qwen3.5-35B-A3B", []),
    "qwen3_5_397b_a17b_dict": ("Qwen/Qwen3.5-397B-A17B", []),
    # Qwen3-VL dense (vision-language): the language model of its text_config, Qwen3's dense layout
    "qwen3_vl_2b_dict": ("Qwen/Qwen3-VL-2B-Instruct", []),
    "qwen3_vl_4b_dict": ("Qwen/Qwen3-VL-4B-Instruct", []),
    # Qwen3-VL mixture of experts: the language model of its text_config, Qwen3-MoE's layout (Qwen3-30B-A3B's
    # shapes); the output head is untied as the top-level config says (tie_word_embeddings False)
    "qwen3_vl_30b_a3b_dict": ("Qwen/Qwen3-VL-30B-A3B-Instruct", []),
}
# Checkpoints with the shapes of one of MaxText's configs, by another collection's word: MaxText variable ->
# (Hub id, the evidence, its file). KerasHub (Apache-2.0) builds Qwen3.6-35B-A3B's preset with the backbone
# class of Qwen3.5-35B-A3B's (path qwen3_5_moe) and publishes the same parameter count for both.
MAXTEXT_SAME_SHAPES: dict[str, list[tuple[str, str, str]]] = {
    "qwen3_5_35b_a3b_dict": [
        (
            "Qwen/Qwen3.6-35B-A3B",
            "KerasHub's preset qwen3_6_moe_35b_a3b has the backbone (path qwen3_5_moe) and the parameter count "
            "(35,107,181,936, its vision encoder included) of its Qwen3.5-35B-A3B preset qwen3_5_moe_35b_a3b",
            "keras_hub/src/models/qwen3_5_moe/qwen3_5_moe_presets.py",
        )
    ],
}
# A listing of the Hub checkpoint's parameter count (read from its safetensors), the check on Qwen3-VL-30B-A3B's tying
QWEN3_VL_30B_LISTING = "https://free2aitools.com/model/qwen/qwen3-vl-30b-a3b-instruct"
# MaxText model configs (its own YAML keys) of MLA models with no transcribed Hugging Face config:
# file -> (label, Hub id the file names or None); YAML_TO_HF renames the keys to the config.json ones.
MAXTEXT_YAML_MODELS: dict[str, tuple[str, str | None, list[str]]] = {
    # the file says 'DeepSeek V2 - 236B' and names no Hub id
    "deepseek2-236b": ("DeepSeek-V2", None, ["DeepSeek V2 236B"]),
    # 'model config for Kimi-k2 - 1T parameters', 'See https://huggingface.co/moonshotai/Kimi-K2-Instruct'
    "kimi-k2-1t": ("Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct", ["Kimi K2"]),
}
YAML_TO_HF = {
    "base_emb_dim": "hidden_size",
    "base_num_query_heads": "num_attention_heads",
    "base_num_kv_heads": "num_key_value_heads",
    "base_mlp_dim": "intermediate_size",
    "base_moe_mlp_dim": "moe_intermediate_size",
    "base_num_decoder_layers": "num_hidden_layers",
    "first_num_dense_layers": "first_k_dense_replace",
    "num_experts": "n_routed_experts",
    "shared_experts": "n_shared_experts",
    "num_experts_per_tok": "num_experts_per_tok",
    "vocab_size": "vocab_size",
    "q_lora_rank": "q_lora_rank",
    "kv_lora_rank": "kv_lora_rank",
    "qk_nope_head_dim": "qk_nope_head_dim",
    "qk_rope_head_dim": "qk_rope_head_dim",
    "v_head_dim": "v_head_dim",
    "max_position_embeddings": "max_position_embeddings",
    "logits_via_embedding": "tie_word_embeddings",
}
OUT = ROOT / "kb" / "models_generated.ttl"
KB = "https://kbq.dev/kb/"

# Checkpoints whose input embedding and output head are one tensor (tie_word_embeddings), counted
# once. Evidence: mlc-llm's model_preset.py copies the Hugging Face config.json verbatim, with
# tie_word_embeddings true for gemma_2b, gemma2_2b/9b/27b, gemma3_1b_it, llama3_2_1b/3b,
# qwen2_0_5b/1_5b, qwen2.5_3b, qwen3_0.6b/1.7b and smollm2_135m/360m; the same family's other sizes
# of the same generation (and their fine-tunes, which keep the shapes) share the setting. OLMo-1B-hf:
# its config.json (linked from litgpt's entry) has tie_word_embeddings true.
TIED = re.compile(
    r"^(google/(code)?gemma-.*|meta-llama/Llama-3\.2-[13]B.*|Qwen/Qwen2\.5-(Coder-|Math-)?(0\.5|1\.5|3)B.*"
    r"|Qwen/Qwen3-(0\.6|1\.7|4)B.*|HuggingFaceTB/SmolLM2-.*|allenai/OLMo-1B-hf)$"
)
# OLMo (1) uses LayerNorm without learnable weights (the Hugging Face checkpoints hold no norm
# tensors); litgpt builds ones-initialised norms, which are left out of the count.
PARAMETER_FREE_NORMS = re.compile(r"^allenai/OLMo-(1B|7B)")
# Name parts that mark a fine-tune of an unchanged architecture (the base has the name without them).
FINE_TUNE = re.compile(r"-(instruct|chat|it|sft|dpo|thinking|reasoning|reasoning-plus|function-calling-v2|python)(?=-|$)", re.I)
VIT_PREFIXES = (
    "vit",
    "deit",
    "eva",
    "beit",
    "cait",
    "xcit",
    "crossvit",
    "levit",
    "pit_",
    "volo",
    "flexivit",
    "swin",
    "twins",
    "tnt",
    "convit",
    "coat_",
    "visformer",
    "gcvit",
    "davit",
    "pvt",
    "mvit",
    "efficientformer",
    "fastvit",
    "tiny_vit",
    "hiera",
    "samvit",
    "sequencer",
    "maxvit",
    "maxxvit",
    "coatnet",
    "nest_",
    "jx_nest",
    "focalnet",
    "vitamin",
    "aimv2",
    "naflexvit",
)
CNN_PREFIXES = (
    "resnet",
    "resnext",
    "wide_resnet",
    "seresne",
    "ecaresne",
    "skresne",
    "gcresne",
    "regnet",
    "efficientnet",
    "tf_efficientnet",
    "mobilenet",
    "tf_mobilenet",
    "mnasnet",
    "convnext",
    "densenet",
    "dla",
    "dpn",
    "vgg",
    "inception",
    "adv_inception",
    "ens_adv",
    "xception",
    "legacy_",
    "hrnet",
    "res2n",
    "resnest",
    "rexnet",
    "ghostnet",
    "repvgg",
    "cspdark",
    "cspres",
    "darknet",
    "cs3",
    "nf_",
    "nfnet",
    "dm_nfnet",
    "eca_nfnet",
    "selecsls",
    "tresnet",
    "gernet",
    "hardcorenas",
    "fbnet",
    "lcnet",
    "spnasnet",
    "semnasnet",
    "mixnet",
    "tf_mixnet",
    "tinynet",
    "bat_resnext",
    "botnet",
    "halonet",
    "lambda_resnet",
    "sebotnet",
    "eca_botnext",
    "haloregnetz",
    "lamhalobotnet",
    "resnetaa",
    "resnetblur",
    "resnetrs",
    "resnetv2",
    "seresnext",
    "senet",
    "gluon",
    "ssl_",
    "swsl_",
    "ig_",
    "bit_",
    "edgenext",
    "repghostnet",
    "repvit",
    "hgnet",
    "inception_next",
    "mobileone",
    "rdnet",
    "fastvit_",
    "ghostnetv",
    "efficientvit",
    "convformer",
    "caformer",
    "poolformer",
    "mambaout",
    "starnet",
    "test_",
)
SKIP_TIMM = ("test_",)  # timm's unit-test stand-ins


@dataclass
class Model:
    iri: str
    classes: list[str]
    label: str
    comment: str
    modality: str
    facts: dict[str, object]
    note: str
    sources: list[str]
    names: list[str] = field(default_factory=list)
    hf_id: str | None = None
    base: str | None = None


def git_show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def existing_names(kb_dir: Path) -> tuple[dict[str, str], set[str]]:
    """Normalised names of every subject in the hand-written KB, and the models' IRIs."""
    g = rdflib.Graph()
    for path in sorted(kb_dir.glob("*.ttl")):
        if path.name != OUT.name:
            g.parse(path)
    for path in sorted((ROOT / "ontology").glob("*.ttl")):
        g.parse(path)
    names: dict[str, str] = {}
    for pred in (rdflib.RDFS.label, rdflib.SKOS.altLabel, rdflib.URIRef("https://kbq.dev/ontology#symbol")):
        for s, o in g.subject_objects(pred):
            names.setdefault(normalise(str(o)), str(s))
    models = {str(s) for s in g.subjects(rdflib.RDF.type, rdflib.URIRef("https://kbq.dev/ontology#Model"))}
    return names, models


# --- LLMs from litgpt ------------------------------------------------------------------------------


def load_litgpt() -> list[object]:
    """litgpt's Config objects, from config.py at the pinned commit (it imports only yaml and typing)."""
    module = types.ModuleType("litgpt_config")
    sys.modules["litgpt_config"] = module
    exec(compile(git_show(LITGPT_GIT, LITGPT_COMMIT, "litgpt/config.py"), "litgpt/config.py", "exec"), module.__dict__)
    return [module.Config(**c) for c in module.configs]


def litgpt_parameters(c: object, tied: bool, norm_weights: bool = True) -> tuple[int, int]:
    """(total, active per token) parameters of the model litgpt builds for config c.

    Embedding V*d, output head d*V (+V bias) unless tied; per layer: norms (RMSNorm d weights,
    LayerNorm 2d), attention qkv d*(h+2g)*k (+bias) and projection h*k*d (+d bias), optional q/k
    norms; MLP: GptNeoxMLP 2*d*f (+f+d bias), LLaMA/Gemma MLP 3*d*f (+2f+d bias), MoE router d*E plus
    E experts of 3*d*f_e (active: the top-k experts); final norm. V = padded vocabulary, d = width,
    h = heads, g = KV heads, k = head size, f = FFN size, E = experts.
    """
    d, v, hs = c.n_embd, c.padded_vocab_size, c.head_size

    def norm_of(n: int) -> int:
        if not norm_weights:
            return 0
        return n if c.norm_class_name == "RMSNorm" else 2 * n

    norm = norm_of(d)

    def mlp(f: int) -> int:
        if c.mlp_class_name == "GptNeoxMLP":
            return 2 * d * f + ((f + d) if c.bias else 0)
        return 3 * d * f + ((2 * f + d) if c.bias else 0)

    qkv = d * (c.n_head + 2 * c.n_query_groups) * hs + ((c.n_head + 2 * c.n_query_groups) * hs if (c.bias or c.attn_bias) else 0)
    proj = c.n_head * hs * d + (d if c.bias else 0)
    attn = qkv + proj
    if c.norm_qk:
        if c.norm_qk_type == "olmo2":
            attn += norm_of(c.n_head * hs) + norm_of(c.n_query_groups * hs)
        else:
            attn += 2 * norm_of(hs)
    norms = (norm if c.norm_1 else 0) + (norm if (c.norm_2 and not c.shared_attention_norm) else 0)
    norms += (norm if c.post_attention_norm else 0) + (norm if c.post_mlp_norm else 0)
    total = active = 0
    for _ in range(c.n_layer):
        if c.mlp_class_name == "LLaMAMoE":
            fe = c.moe_intermediate_size or c.intermediate_size
            expert = 3 * d * fe
            shared = 3 * d * fe * (c.n_shared_expert or 0)
            total += attn + norms + d * c.n_expert + c.n_expert * expert + shared
            active += attn + norms + d * c.n_expert + c.n_expert_per_token * expert + shared
        else:
            layer = attn + norms + mlp(c.intermediate_size)
            total += layer
            active += layer
    outer = v * d + norm + (0 if tied else d * v + (v if c.lm_head_bias else 0))
    return total + outer, active + outer


def short_names(org: str, name: str) -> list[str]:
    """Names people type for a Hub checkpoint: the name, org/name, and the name without 'Meta-' and '-hf'
    (spaces for hyphens need no name of their own: the name index ignores both)."""
    out = [name, f"{org}/{name}"]
    stripped = re.sub(r"^(Meta-)", "", name)
    stripped = re.sub(r"-hf$", "", stripped)
    out.append(stripped)
    if stripped != name:  # meta-llama/Meta-Llama-3.1-8B is now meta-llama/Llama-3.1-8B on the Hub
        out.append(f"{org}/{stripped}")
    return out


def attention_kind(heads: int, kv: int) -> str:
    return "MHA" if kv == heads else ("MQA" if kv == 1 else "GQA")


def llm_models() -> list[Model]:
    out = []
    for c in load_litgpt():
        org, name = c.hf_config["org"], c.hf_config["name"]
        hf = f"{org}/{name}"
        tied = bool(TIED.match(hf))
        norm_weights = not PARAMETER_FREE_NORMS.match(hf)
        total, active = litgpt_parameters(c, tied, norm_weights)
        moe = c.mlp_class_name == "LLaMAMoE"
        facts: dict[str, object] = {
            "parameterCount": total,
            "numLayers": c.n_layer,
            "hiddenSize": c.n_embd,
            "attentionHeads": c.n_head,
            "kvHeads": c.n_query_groups,
            "headDim": c.head_size,
            "ffnSize": (c.moe_intermediate_size or c.intermediate_size) if moe else c.intermediate_size,
            "vocabSize": c.padded_vocab_size,
            "maxContext": c.block_size,
            "attentionKind": attention_kind(c.n_head, c.n_query_groups),
        }
        if moe:
            facts.update(activeParameterCount=active, numExperts=c.n_expert, expertsPerToken=c.n_expert_per_token)
            if c.n_shared_expert:
                facts["sharedExperts"] = c.n_shared_expert
        if c.sliding_window_size:
            facts["slidingWindow"] = c.sliding_window_size
            facts["slidingWindowLayers"] = sum(c.sliding_window_indices[: c.n_layer])
        billions = total / 1e9
        size = f"{billions:.2f}B" if billions >= 1 else f"{total / 1e6:.0f}M"
        note = (
            f"Architecture from litgpt's Config '{c.name}' (hf_config {hf}); the parameter count ({total:,}) is computed from "
            "those shapes with scripts/gen_models.py's litgpt_parameters (embedding V*d; per layer the norms, "
            "attention d*(h+2g)*k + h*k*d and the MLP 2*d*f or 3*d*f, biases where the config has them; "
            + ("experts E*3*d*f_e plus the router d*E, active parameters with the top-k experts only; " if moe else "")
            + ("" if norm_weights else "no norm weights: OLMo's LayerNorm has none; ")
            + (
                "input embedding and output head tied, counted once (tie_word_embeddings true in the family's "
                "Hugging Face config, as mlc-llm's verbatim copies show)"
                if tied
                else "a separate output head d*V"
            )
            + "). Vocabulary is the embedding's row count (litgpt padded_vocab_size); maximum context is block_size."
        )
        out.append(
            Model(
                iri=f"{KB}hf/{org}/{name}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {size}-parameter {'mixture-of-experts ' if moe else ''}decoder-only language model "
                "published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=note,
                sources=[LITGPT_URL] + ([MLC_PRESETS_URL] if tied else []),
                names=short_names(org, name) + EXTRA_NAMES.get(hf, []),
                hf_id=hf,
            )
        )
    link_fine_tunes(out)
    return out


def arch_key(m: Model) -> tuple[object, ...]:
    return tuple(sorted((k, str(v)) for k, v in m.facts.items() if k != "maxContext"))


def link_fine_tunes(models: list[Model]) -> None:
    """kbq:baseModel: a checkpoint whose name, less its fine-tune marks, is another checkpoint of the
    same organisation with the same architecture (the same shapes and parameter count)."""
    by_stem: dict[tuple[str, str], list[Model]] = {}
    for m in models:
        org, name = (m.hf_id or "/").split("/", 1)
        stem = re.sub(r"-hf$", "", FINE_TUNE.sub("", name))
        by_stem.setdefault((org, stem.lower()), []).append(m)
    for group in by_stem.values():
        bases = [m for m in group if not FINE_TUNE.search((m.hf_id or "").split("/", 1)[1])]
        if len(bases) != 1:
            continue
        for m in group:
            if m is not bases[0] and arch_key(m) == arch_key(bases[0]):
                m.base = bases[0].iri


# --- vision models from timm -----------------------------------------------------------------------


# --- LLMs and an embedding model from mlc-llm's verbatim Hugging Face configs --------------------------


def load_mlc() -> dict[str, dict[str, object]]:
    import ast

    tree = ast.parse(git_show(MLC_GIT, MLC_COMMIT, "python/mlc_llm/model/model_preset.py"))
    node = next(n for n in tree.body if isinstance(n, ast.AnnAssign))
    return ast.literal_eval(node.value)  # type: ignore[no-any-return]


def hf_parameters(c: dict[str, object]) -> int:
    """Parameters of a Hugging Face checkpoint from its config.json shapes.

    Decoder (llama, qwen2, internlm2, minicpm, olmo2): embedding V*d; per layer two norms (OLMo 2: its
    post-norms plus q/k norms of h*k and g*k), attention d*h*k + 2*d*g*k + h*k*d (+ (h+2g)*k biases for
    qwen2), MLP 3*d*f; final norm d; output head d*V unless tie_word_embeddings. BERT: word, position and
    type embeddings plus LayerNorm; per layer Q, K, V, O (d*d + d each), two LayerNorms (2d each), FFN
    d*f + f + f*d + d; pooler d*d + d.
    """
    v, d, n = int(c["vocab_size"]), int(c["hidden_size"]), int(c["num_hidden_layers"])
    f, h = int(c["intermediate_size"]), int(c["num_attention_heads"])
    if c["model_type"] == "bert":
        emb = (v + int(c["max_position_embeddings"]) + int(c["type_vocab_size"])) * d + 2 * d
        layer = 4 * (d * d + d) + 2 * (2 * d) + d * f + f + f * d + d
        return emb + n * layer + d * d + d
    g = int(c.get("num_key_value_heads") or h)
    k = int(c.get("head_dim") or d // h)
    attn = d * h * k + 2 * d * g * k + h * k * d
    if c["model_type"] == "qwen2":
        attn += (h + 2 * g) * k
    norms = 2 * d + ((h + g) * k if c["model_type"] == "olmo2" else 0)
    head = 0 if c.get("tie_word_embeddings") else d * v
    return v * d + n * (attn + norms + 3 * d * f) + d + head


def mlc_models() -> list[Model]:
    presets = load_mlc()
    out = []
    url = MLC_PRESETS_URL
    for key, name in MLC_PRESETS.items():
        c = presets[key]
        total = hf_parameters(c)
        bert = c["model_type"] == "bert"
        h = int(c["num_attention_heads"])
        g = int(c.get("num_key_value_heads") or h)
        facts: dict[str, object] = {
            "parameterCount": total,
            "numLayers": int(c["num_hidden_layers"]),
            "hiddenSize": int(c["hidden_size"]),
            "attentionHeads": h,
            "kvHeads": g,
            "headDim": int(c.get("head_dim") or int(c["hidden_size"]) // h),
            "ffnSize": int(c["intermediate_size"]),
            "vocabSize": int(c["vocab_size"]),
            "maxContext": int(c["max_position_embeddings"]),
            "attentionKind": attention_kind(h, g),
        }
        hf = None  # the presets do not say which Hub repository (base or chat) they copy
        kind = "BERT encoder (text embedding model)" if bert else "decoder-only language model"
        note = (
            f"Architecture from mlc-llm's preset '{key}', a verbatim copy of the model's Hugging Face config.json "
            f"(model_type {c['model_type']}); the parameter count ({total:,}) is computed from those shapes with "
            "scripts/gen_models.py's hf_parameters ("
            + (
                "word, position and type embeddings and LayerNorm; per layer Q, K, V, O with biases, two LayerNorms "
                "and the FFN with biases; the pooler"
                if bert
                else "embedding V*d; per layer the norms, attention d*h*k + 2*d*g*k + h*k*d (biases for Qwen2) and "
                "the MLP 3*d*f; final norm"
                + ("; output head tied to the embedding" if c.get("tie_word_embeddings") else "; output head d*V")
            )
            + "). Maximum context is max_position_embeddings."
        )
        out.append(
            Model(
                iri=f"{KB}mlc/{key}",
                classes=["kbq:Transformer", "kbq:Model"] if bert else ["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{name}: a {total / 1e9:.2f}B-parameter {kind}."
                if total >= 1e9
                else f"{name}: a {total / 1e6:.0f}M-parameter {kind}.",
                modality="kb:TextModality",
                facts=facts,
                note=note,
                sources=[url],
                names=[key] + ([hf] if hf else []),
                hf_id=hf,
            )
        )
    return out


def timm_models() -> list[Model]:
    results = list(csv.DictReader(io.StringIO(git_show(TIMM_GIT, TIMM_COMMIT, TIMM_RESULTS))))
    bench: dict[tuple[str, int], dict[str, str]] = {}
    for row in csv.DictReader(io.StringIO(git_show(TIMM_GIT, TIMM_COMMIT, TIMM_BENCH))):
        bench.setdefault((row["model"], int(row["infer_img_size"])), row)
    seen: dict[str, dict[str, str]] = {}
    for row in results:  # sorted by top-1; the first row of an architecture is its best weights
        arch = row["model"].split(".", 1)[0]
        if not arch.startswith(SKIP_TIMM):
            seen.setdefault(arch, row)
    out = []
    for arch, row in sorted(seen.items()):
        size = int(row["img_size"])
        millions = float(row["param_count"].replace(",", ""))
        params = round(millions * 1e6)
        if params <= 0:
            continue
        facts: dict[str, object] = {"parameterCount": params, "imageSize": size}
        sources = [TIMM_RESULTS_URL]
        b = bench.get((arch, size))
        note = (
            f"Parameter count and input resolution from timm's ImageNet results table (model {row['model']}, "
            f"img_size {size}, param_count {row['param_count']} million: rounded to 10,000 parameters)."
        )
        if b and float(b["infer_gmacs"].replace(",", "")) > 0:
            facts["forwardGflops"] = round(2 * float(b["infer_gmacs"].replace(",", "")), 3)
            sources.append(TIMM_BENCH_URL)
            note += (
                f" Forward cost: timm's RTX 4090 inference benchmark lists infer_gmacs {b['infer_gmacs']} "
                f"(multiply-accumulates, 10^9) at {size}x{size}; stored as FLOPs = 2 x MACs = {facts['forwardGflops']}."
            )
        if arch.startswith(VIT_PREFIXES):
            classes = ["kbq:VisionTransformer", "kbq:Model"]
        elif arch.startswith(CNN_PREFIXES):
            classes = ["kbq:CNN", "kbq:Model"]
        else:
            classes = ["kbq:Model"]
        out.append(
            Model(
                iri=f"{KB}timm/{arch}",
                classes=classes,
                label=arch,
                comment=f"timm image classifier {arch} ({millions:g}M parameters, {size}x{size} input).",
                modality="kb:VisionModality",
                facts=facts,
                note=note,
                sources=sources,
                names=[arch, f"timm {arch}"],
            )
        )
    return out


# --- LLMs from MaxText's transcribed Hugging Face configs -------------------------------------------


def load_maxtext() -> dict[str, dict[str, object]]:
    """The Hugging Face config.json transcriptions in MaxText's hf_model_configs.py, by variable name:
    dict literals (`x_dict = {...}`, `**other_dict` spreads resolved) and `transformers.XConfig(k=v, ...)`
    calls; values are read with ast.literal_eval, nothing is executed."""
    import ast

    tree = ast.parse(git_show(MAXTEXT_GIT, MAXTEXT_COMMIT, MAXTEXT_HF_CONFIGS))
    out: dict[str, dict[str, object]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        try:
            if isinstance(value, ast.Dict):
                d: dict[str, object] = {}
                for k, v in zip(value.keys, value.values, strict=True):
                    if k is None and isinstance(v, ast.Name) and v.id in out:
                        d.update(out[v.id])
                    elif k is not None:
                        d[ast.literal_eval(k)] = ast.literal_eval(v)
                out[name] = d
            elif isinstance(value, ast.Call) and not value.args and all(kw.arg for kw in value.keywords):
                out[name] = {str(kw.arg): ast.literal_eval(kw.value) for kw in value.keywords}
        except ValueError:
            continue
    return out


def maxtext_parameters(c: dict[str, object]) -> tuple[int, int]:
    """(total, active per token) parameters of a Hugging Face checkpoint from its config's shapes.

    Embedding V*d, final RMSNorm d, output head d*V unless tied; per layer two RMSNorms 2d and:
    deepseek_v2/v3 (MLA): q d*h*(n+r) without q_lora_rank, else d*q_l + q_l (norm) + q_l*h*(n+r);
    kv down-projection d*(kv_l+r), its norm kv_l, up-projection kv_l*h*(n+v); output h*v*d; the first
    first_k_dense_replace layers a dense MLP 3*d*f, the others a router d*E (+E correction bias for
    noaux_tc routing), E routed experts and n_shared shared experts of 3*d*f_e (active: top-k routed);
    gpt_oss: q/k/v/o with biases (d*h*k+h*k, 2*(d*g*k+g*k), h*k*d+d), attention sinks h, router d*E+E,
    E experts of gate-up d*2f+2f and down f*d+d; qwen3_moe: q/k/v/o d*h*k + 2*d*g*k + h*k*d, q/k norms
    2k, router d*E, E experts of 3*d*f_e; qwen3 (dense, Qwen3-VL's language model): the same attention and
    q/k norms, MLP 3*d*f; olmo3: q/k/v/o as qwen3_moe's, q/k norms h*k and g*k, two
    post-norms, MLP 3*d*f; deepseek_v32: deepseek_v3's layers plus the lightning indexer of each layer
    (MaxText's layers/attention_mla.py Indexer): wq_b q_l*(H_i*k_i), wk d*k_i, k_norm LayerNorm 2*k_i,
    weights_proj d*H_i (H_i = index_n_heads, k_i = index_head_dim); the multi-token-prediction module
    (num_nextn_predict_layers) is not counted, as DeepSeek's 671B for V3 leaves it out; qwen3_next
    (MaxText's models/qwen3.py): every full_attention_interval-th layer full attention with a gated query
    d*2*h*k, keys and values 2*d*g*k, output h*k*d and q/k norms 2k; the other layers a gated delta net:
    in_proj_qkvz d*(2*K + 2*Vd), in_proj_ba d*2*Hv, a depthwise causal conv (2*K + Vd)*kernel without
    bias, A_log and dt_bias Hv each, a gated RMSNorm of the value head size, out_proj Vd*d (K = key heads
    x key head size, Vd = value heads Hv x value head size); every layer two RMSNorms, a router d*E, E
    experts of 3*d*f_e and a shared expert 3*d*f_s with its gate d (active: top-k experts).
    """
    v, d, n = int(c["vocab_size"]), int(c["hidden_size"]), int(c["num_hidden_layers"])
    h = int(c["num_attention_heads"])
    g = int(c.get("num_key_value_heads") or h)
    kind = str(c["model_type"])
    norms = 2 * d
    total = active = 0
    if kind in ("deepseek_v2", "deepseek_v3", "deepseek_v32"):
        nope, rope, vd, kvl = (int(c[k]) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "kv_lora_rank"))
        ql = c.get("q_lora_rank")
        q = d * h * (nope + rope) if not ql else d * int(ql) + int(ql) + int(ql) * h * (nope + rope)
        attn = q + d * (kvl + rope) + kvl + kvl * h * (nope + vd) + h * vd * d
        if kind == "deepseek_v32":
            hi, ki = int(c["index_n_heads"]), int(c["index_head_dim"])
            attn += int(ql or 0) * hi * ki + d * ki + 2 * ki + d * hi  # type: ignore[call-overload]
        e, k, fe = int(c["n_routed_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        shared = int(c.get("n_shared_experts") or 0) * 3 * d * fe
        router = d * e + (e if c.get("topk_method") == "noaux_tc" else 0)
        dense = int(c.get("first_k_dense_replace") or 0)
        for i in range(n):
            if i < dense:
                layer = attn + norms + 3 * d * int(c["intermediate_size"])
                total, active = total + layer, active + layer
            else:
                base = attn + norms + router + shared
                total += base + e * 3 * d * fe
                active += base + k * 3 * d * fe
    elif kind == "gpt_oss":
        k_ = int(c["head_dim"])
        attn = d * h * k_ + h * k_ + 2 * (d * g * k_ + g * k_) + h * k_ * d + d + h
        e, k, f = int(c["num_local_experts"]), int(c["num_experts_per_tok"]), int(c["intermediate_size"])
        expert = d * 2 * f + 2 * f + f * d + d
        total = n * (attn + norms + d * e + e + e * expert)
        active = n * (attn + norms + d * e + e + k * expert)
    elif kind == "qwen3_moe":
        k_ = int(c["head_dim"])
        attn = d * h * k_ + 2 * d * g * k_ + h * k_ * d + 2 * k_
        e, k, fe = int(c["num_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        total = n * (attn + norms + d * e + e * 3 * d * fe)
        active = n * (attn + norms + d * e + k * 3 * d * fe)
    elif kind == "qwen3_next":
        k_ = int(c["head_dim"])
        full = 2 * d * h * k_ + 2 * d * g * k_ + h * k_ * d + 2 * k_
        kk = int(c["linear_num_key_heads"]) * int(c["linear_key_head_dim"])
        hv, vhd = int(c["linear_num_value_heads"]), int(c["linear_value_head_dim"])
        vv = hv * vhd
        linear = d * (2 * kk + 2 * vv) + d * 2 * hv + (2 * kk + vv) * int(c["linear_conv_kernel_dim"]) + 2 * hv + vhd + vv * d
        e, k, fe = int(c["num_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        shared = 3 * d * int(c["shared_expert_intermediate_size"]) + d
        interval = int(c["full_attention_interval"])
        for i in range(n):
            mixer = full if (i + 1) % interval == 0 else linear
            base = mixer + norms + d * e + shared
            total += base + e * 3 * d * fe
            active += base + k * 3 * d * fe
    elif kind == "qwen3":
        k_ = int(c["head_dim"])
        layer = d * h * k_ + 2 * d * g * k_ + h * k_ * d + 2 * k_ + norms + 3 * d * int(c["intermediate_size"])
        total = active = n * layer
    elif kind == "olmo3":
        k_ = d // h
        layer = d * h * k_ + 2 * d * g * k_ + h * k_ * d + (h + g) * k_ + norms + 3 * d * int(c["intermediate_size"])
        total = active = n * layer
    else:
        raise ValueError(f"no parameter formula for model_type {kind}")
    outer = v * d + d + (0 if c.get("tie_word_embeddings") else d * v)
    return total + outer, active + outer


def load_maxtext_yaml(stem: str) -> dict[str, object]:
    """A MaxText model YAML renamed to config.json keys; routed_bias (DeepSeek-V3's e_score_correction_bias)
    becomes topk_method noaux_tc, as in DeepSeek-V3's config.json."""
    import yaml

    raw = yaml.safe_load(git_show(MAXTEXT_GIT, MAXTEXT_COMMIT, f"src/maxtext/configs/models/{stem}.yml"))
    c: dict[str, object] = {hf: raw[key] for key, hf in YAML_TO_HF.items() if key in raw}
    c["model_type"] = "deepseek_v3" if raw.get("routed_bias") else "deepseek_v2"
    c["topk_method"] = "noaux_tc" if raw.get("routed_bias") else "greedy"
    return c


def maxtext_models() -> list[Model]:
    configs = load_maxtext()
    items: list[tuple[str, str, str | None, list[str], str]] = [
        (var, hf.split("/", 1)[1], hf, extra, MAXTEXT_HF_CONFIGS) for var, (hf, extra) in MAXTEXT_MODELS.items()
    ]
    alts: dict[str, list[str]] = {}
    for stem, (label, hf_id, alt) in MAXTEXT_YAML_MODELS.items():
        configs[stem] = load_maxtext_yaml(stem)
        alts[stem] = alt
        items.append((stem, label, hf_id, [], f"src/maxtext/configs/models/{stem}.yml"))
    out = []
    for var, label, hf, extra_ids, path in items:
        c = configs[var]
        vision = "text_config" in c
        if vision:  # a vision-language model: its language model (MaxText runs Qwen3.5's as Qwen3-Next's hybrid stack)
            top = c
            c = dict(c["text_config"])  # type: ignore[call-overload]
            if str(c["model_type"]).startswith("qwen3_5"):
                c["model_type"] = "qwen3_next"
            elif c["model_type"] == "qwen3_vl_text":
                c["model_type"] = "qwen3"
            elif c["model_type"] == "qwen3_vl_moe_text":  # Qwen3-MoE's layers; the experts named num_local_experts
                c["model_type"] = "qwen3_moe"
                c["num_experts"] = c["num_local_experts"]
                c["tie_word_embeddings"] = top["tie_word_embeddings"]  # the model's head: the top-level setting
        total, active = maxtext_parameters(c)
        kind = str(c["model_type"])
        moe = kind not in ("olmo3", "qwen3")
        h = int(c["num_attention_heads"])
        g = int(c.get("num_key_value_heads") or h)
        mla = kind.startswith("deepseek")
        facts: dict[str, object] = {
            "parameterCount": total,
            "numLayers": int(c["num_hidden_layers"]),
            "hiddenSize": int(c["hidden_size"]),
            "attentionHeads": h,
            "kvHeads": g,
        }
        if not mla:
            facts["headDim"] = int(c.get("head_dim") or int(c["hidden_size"]) // h)
        facts["ffnSize"] = int(c.get("moe_intermediate_size") or c["intermediate_size"])
        facts["vocabSize"] = int(c["vocab_size"])
        facts["maxContext"] = int(c["max_position_embeddings"])
        facts["attentionKind"] = "MLA" if mla else attention_kind(h, g)
        if mla:
            facts["kvLoraRank"] = int(c["kv_lora_rank"])
            facts["qkRopeHeadDim"] = int(c["qk_rope_head_dim"])
        if moe:
            facts["activeParameterCount"] = active
            facts["numExperts"] = int(c.get("n_routed_experts") or c.get("num_local_experts") or c["num_experts"])
            facts["expertsPerToken"] = int(c["num_experts_per_tok"])
            if c.get("n_shared_experts"):
                facts["sharedExperts"] = int(c["n_shared_experts"])
            elif c.get("shared_expert_intermediate_size"):  # Qwen3-Next: one shared expert of that size
                facts["sharedExperts"] = 1
        layer_types = c.get("layer_types")
        if c.get("sliding_window") and isinstance(layer_types, list):
            facts["slidingWindow"] = int(c["sliding_window"])  # type: ignore[call-overload]
            facts["slidingWindowLayers"] = sum(1 for t in layer_types if t == "sliding_attention")
        org, name = hf.split("/", 1) if hf else ("", label)
        size = f"{total / 1e9:.2f}B"
        yaml_file = path.endswith(".yml")
        what = f"MaxText's model config {path} (its keys renamed to config.json's)" if yaml_file else (
            f"MaxText's transcription of the Hugging Face config.json of {hf} ({var} in {path}, model_type {kind})"
        )
        url = f"https://github.com/AI-Hypercomputer/maxtext/blob/{MAXTEXT_COMMIT}/{path}"
        note = (
            f"Architecture from {what}; the parameter count ({total:,}"
            + (f", {active:,} active per token" if moe else "")
            + ") is computed from those shapes with scripts/gen_models.py's maxtext_parameters (its docstring states "
            "the formula per model type). Maximum context is max_position_embeddings."
            + (f" The same configuration serves {', '.join(extra_ids)}." if extra_ids else "")
            + (" The count is the language model's (text_config): the vision encoder is not counted." if vision else "")
            + (
                " The output head is counted untied, as the top-level config's tie_word_embeddings (False) says (its "
                "text_config says True); the result equals Qwen3-30B-A3B's count, whose shapes these are, and with the "
                "vision encoder (about 0.5B from its vision_config) it agrees with the 31.07B the checkpoint's listing "
                f"reports ({QWEN3_VL_30B_LISTING}), where a tied head would give about 30.8B."
                if var == "qwen3_vl_30b_a3b_dict"
                else ""
            )
            + (
                f" Only every {c['full_attention_interval']}th layer has full attention (and a KV cache that grows with the "
                "context); the others are gated-delta-net linear attention with a fixed-size state, so a KV-cache "
                "estimate from numLayers overstates this model's cache."
                if kind == "qwen3_next"
                else ""
            )
        )
        base = Model(
            iri=f"{KB}hf/{org}/{name}" if hf else f"{KB}maxtext/{var}",
            classes=["kbq:LargeLanguageModel", "kbq:Model"],
            label=name,
            comment=f"{hf or label}: a {size}-parameter {'mixture-of-experts ' if moe else ''}decoder-only language model "
            "published on the Hugging Face Hub.",
            modality="kb:TextModality",
            facts=facts,
            note=note,
            sources=([url] if yaml_file else [url, MAXTEXT_IDS_URL])
            + ([QWEN3_VL_30B_LISTING] if var == "qwen3_vl_30b_a3b_dict" else []),
            names=(short_names(org, name) if hf else [label]) + alts.get(var, []) + EXTRA_NAMES.get(hf or "", []),
            hf_id=hf,
        )
        out.append(base)
        out += [same_shapes(base, other, hf, size, note, base.sources, short_names(*other.split("/", 1))) for other in extra_ids]
        for other, evidence, keras_file in MAXTEXT_SAME_SHAPES.get(var, []):
            keras_url = f"https://github.com/keras-team/keras-hub/blob/{KERAS_COMMIT}/{keras_file}"
            out.append(
                same_shapes(
                    base, other, hf, size, f"The shapes of {hf}: {evidence} ({keras_url}). " + note, [*base.sources, keras_url],
                    short_names(*other.split("/", 1)) + EXTRA_NAMES.get(other, []),
                )
            )  # fmt: skip
    return out


def same_shapes(base: Model, other: str, hf: str | None, size: str, note: str, sources: list[str], names: list[str]) -> Model:
    """Another Hub checkpoint `other` with `base`'s architecture (and facts), pointing to it."""
    o_org, o_name = other.split("/", 1)
    return Model(
        iri=f"{KB}hf/{o_org}/{o_name}",
        classes=base.classes,
        label=o_name,
        comment=f"{other}: a checkpoint with the architecture of {hf} ({size} parameters).",
        modality=base.modality,
        facts=dict(base.facts),
        note=note,
        sources=sources,
        names=names,
        hf_id=other,
        base=base.iri,
    )


# --- LLMs from candle's presets and more of mlc-llm's verbatim configs ----------------------------------

CANDLE_GIT = Path("/work/.mirror/huggingface+candle/repo")
CANDLE_COMMIT = "2a13b0f3ff62f7e67013597f2996f764c5735e21"
# candle-transformers presets (Rust functions returning a model's configuration, transcribed from the
# checkpoint's config.json): (file, function) -> (Hub id the candle example loads with it, model_type).
# The Hub id is the one candle's example (candle-examples/examples/<name>/main.rs) names for the preset;
# bigcode.rs's starcoder_3b / starcoder_7b / starcoder are named by size only (bigcode's StarCoderBase
# 3B / 7B and StarCoder 15.5B are the checkpoints of those shapes).
CANDLE_PRESETS: dict[tuple[str, str], tuple[str, str]] = {
    ("yi.rs", "config_6b"): ("01-ai/Yi-6B", "yi"),
    ("yi.rs", "config_34b"): ("01-ai/Yi-34B", "yi"),
    ("bigcode.rs", "starcoder_1b"): ("bigcode/starcoderbase-1b", "gpt_bigcode"),
    ("bigcode.rs", "starcoder_3b"): ("bigcode/starcoderbase-3b", "gpt_bigcode"),
    ("bigcode.rs", "starcoder_7b"): ("bigcode/starcoderbase-7b", "gpt_bigcode"),
    ("bigcode.rs", "starcoder"): ("bigcode/starcoder", "gpt_bigcode"),
    ("chatglm.rs", "glm3_6b"): ("THUDM/chatglm3-6b", "chatglm"),
    ("codegeex4_9b.rs", "codegeex4"): ("THUDM/codegeex4-all-9b", "chatglm"),
}
# candle key -> config.json key
CANDLE_KEYS = {
    "num_layers": "num_hidden_layers",
    "padded_vocab_size": "vocab_size",
    "ffn_hidden_size": "intermediate_size",
    "kv_channels": "head_dim",
    "multi_query_group_num": "num_key_value_heads",
    "seq_length": "max_position_embeddings",
    "n_inner": "intermediate_size",
}
# More mlc-llm presets -> (label, Hub id or None: the presets do not name their checkpoint; the label is
# the model whose published config the preset's shapes are).
MLC_MORE = {
    "starcoder2": ("StarCoder2-7B", "bigcode/starcoder2-7b"),
    "qwen2moe": ("Qwen1.5-MoE-A2.7B", "Qwen/Qwen1.5-MoE-A2.7B"),
    "aya-23": ("Aya-23-8B", "CohereForAI/aya-23-8B"),
    "deepseek": ("DeepSeek-MoE-16B", "deepseek-ai/deepseek-moe-16b-base"),
    # the language model (text_config) of Ministral 3 3B; its Pixtral vision encoder is not counted
    "ministral3_3b_2512": ("Ministral-3-3B-Base-2512", "mistralai/Ministral-3-3B-Base-2512"),
}
# Names people type for these models (beyond the Hub id and its name part).
EXTRA_NAMES = {
    "01-ai/Yi-6B": ["yi 6b"],
    "01-ai/Yi-34B": ["yi 34b"],
    "bigcode/starcoder": ["StarCoder 15B", "StarCoder 15.5B", "starcoder 1"],
    "bigcode/starcoder2-7b": ["StarCoder2 7B"],
    "THUDM/chatglm3-6b": ["ChatGLM3 6B", "ChatGLM3"],
    "THUDM/codegeex4-all-9b": ["CodeGeeX4 9B", "CodeGeeX4"],
    "Qwen/Qwen1.5-MoE-A2.7B": ["Qwen1.5 MoE", "qwen1.5-moe-a2.7b"],
    "CohereForAI/aya-23-8B": ["Aya 23 8B", "aya-23-8b"],
    "deepseek-ai/deepseek-moe-16b-base": ["DeepSeekMoE 16B", "deepseek-moe-16b"],
    "mistralai/Ministral-3-3B-Base-2512": ["Ministral 3 3B", "ministral 3b"],
    "deepseek-ai/DeepSeek-V3.2": ["DeepSeek V3.2 671B", "deepseek-v3.2"],
    "Qwen/Qwen3-Next-80B-A3B-Instruct": ["Qwen3-Next", "Qwen3-Next-80B", "qwen3 next 80b a3b"],
    "Qwen/Qwen3.5-35B-A3B": ["qwen3.5 35b", "qwen3.5-35b-a3b"],
    "Qwen/Qwen3.5-397B-A17B": ["qwen3.5 397b", "qwen3.5-397b-a17b"],
    "Qwen/Qwen3.6-35B-A3B": ["qwen3.6 35b", "qwen3.6-35b-a3b", "Qwen 3.6 35B A3B"],
    "Qwen/Qwen3-VL-30B-A3B-Instruct": ["qwen3-vl 30b", "qwen3 vl 30b", "Qwen3-VL-30B-A3B"],
    "Qwen/Qwen2-57B-A14B": ["Qwen2 57B"],
    # instruct-only checkpoints: the family-and-size name people type is the only checkpoint of that shape here
    "google/gemma-3-1b-it": ["Gemma 3 1B", "gemma3:1b"],
    "google/gemma-3-4b-it": ["Gemma 3 4B", "gemma3:4b"],
    "microsoft/Phi-3.5-mini-instruct": ["Phi-3.5-mini", "Phi 3.5 mini"],
    "Qwen/Qwen3-VL-2B-Instruct": ["qwen3-vl 2b", "qwen3 vl 2b"],
    "Qwen/Qwen3-VL-4B-Instruct": ["qwen3-vl 4b", "qwen3 vl 4b"],
}


def load_candle(file: str, function: str) -> dict[str, object]:
    """The fields of `pub fn <function>() -> Self { Self { key: value, ... } }` in a candle model file,
    renamed to config.json keys (integers and booleans; Some(n) read as n)."""
    text = git_show(CANDLE_GIT, CANDLE_COMMIT, f"candle-transformers/src/models/{file}")
    m = re.search(rf"pub fn {function}\(\) -> Self \{{\s*Self \{{(.*?)\n\s*\}}\s*\n\s*\}}", text, re.S)
    if not m:
        raise ValueError(f"no preset {function} in {file}")
    c: dict[str, object] = {}
    for key, value in re.findall(r"(\w+):\s*([^,\n]+),", m.group(1)):
        value = value.strip()
        inner = re.fullmatch(r"Some\((\d+)\)", value)
        if inner:
            value = inner.group(1)
        if re.fullmatch(r"[\d_]+", value):
            c[CANDLE_KEYS.get(key, key)] = int(value.replace("_", ""))
        elif value in ("true", "false"):
            c[CANDLE_KEYS.get(key, key)] = value == "true"
    if c.get("multi_query"):  # gpt_bigcode: one key/value head
        c["num_key_value_heads"] = 1
    return c


def extra_parameters(c: dict[str, object]) -> tuple[int, int]:
    """(total, active per token) parameters of a checkpoint from its configuration's shapes.

    V = vocabulary, d = width, n = layers, h / g = query / key-value heads, k = head size, f = FFN size.
    yi and ministral3 (LLaMA layout): embedding V*d; per layer two RMSNorms 2d, q/k/v/o d*h*k + 2*d*g*k +
    h*k*d, MLP 3*d*f; final norm d; output head d*V unless tie_word_embeddings. gpt_bigcode (StarCoder):
    token V*d and position P*d embeddings; per layer two LayerNorms 2*2d, fused qkv d*(h*k + 2*k) + (h*k + 2*k) (one shared
    key/value head), projection d*d + d, MLP d*f + f + f*d + d; final LayerNorm 2d; head tied to the
    token embedding. chatglm (ChatGLM3, GLM-4): embedding V*d; per layer RMSNorm d, qkv d*(h*k + 2*g*k)
    with its bias, dense h*k*d, RMSNorm d, MLP d*2f + f*d; final RMSNorm d; output layer d*V.
    starcoder2: embedding V*d; per layer two LayerNorms 2*2d, q/k/v/o with biases, MLP d*f + f + f*d + d;
    final LayerNorm 2d; head tied unless tie_word_embeddings is false (the config class's default is
    true). qwen2_moe: embedding; per layer two RMSNorms, q/k/v with biases and o, router d*E, E experts
    of 3*d*f_e, a shared expert 3*d*f_s with its gate d; final norm; output head d*V (active: top-k
    experts). cohere: embedding; per layer one LayerNorm weight d (attention and MLP in parallel), q/k/v/o
    without bias, MLP 3*d*f; final norm d; head tied (the config class's default). deepseek (DeepSeekMoE):
    embedding; per layer two RMSNorms and q/k/v/o; the first first_k_dense_replace layers an MLP 3*d*f,
    the others a router d*E, E experts and n_shared shared experts of 3*d*f_e (active: top-k routed);
    final norm; output head d*V. qwen3 and qwen3_moe: maxtext_parameters' formulas (q/k norms of the head
    size; MoE without a shared expert). qwen2 (Qwen1.5) and llama (Mistral family, Minitron): the LLaMA layout
    (q/k/v biases for qwen2), output head d*V unless tie_word_embeddings. phimoe (Phi-3.5-MoE): per layer
    two LayerNorms 2*2d, q/k/v/o with biases, a router d*E and E experts of 3*d*f_e (active: top-k); final
    LayerNorm 2d; output head d*V with its bias V. dbrx: per layer two LayerNorms without bias 2d, q/k/v/o
    without bias, a router d*E and E experts of 3*d*f_e (active: top-k); final norm d; output head d*V.
    opt: token V*d and learned positions (max_position_embeddings + 2)*d (OPT's offset of 2); per layer
    q/k/v/o 4*(d*d + d), two LayerNorms 2*2d, FFN d*f + f + f*d + d; final LayerNorm 2d; head tied to
    the token embedding.
    """
    kind = str(c["model_type"])
    v, d, n = int(c["vocab_size"]), int(c["hidden_size"]), int(c["num_hidden_layers"])
    h = int(c["num_attention_heads"])
    g = int(c.get("num_key_value_heads") or h)
    k = int(c.get("head_dim") or d // h)
    f = int(c["intermediate_size"])
    q_kv = d * h * k + 2 * d * g * k
    total = active = 0
    if kind in ("yi", "ministral3"):
        head = d * v if not c.get("tie_word_embeddings") else 0
        total = active = v * d + n * (2 * d + q_kv + h * k * d + 3 * d * f) + d + head
    elif kind == "gpt_bigcode":
        qkv = d * (h * k + 2 * g * k) + (h * k + 2 * g * k)
        layer = 4 * d + qkv + d * d + d + d * f + f + f * d + d
        total = active = v * d + int(c["max_position_embeddings"]) * d + n * layer + 2 * d
    elif kind == "chatglm":
        layer = 2 * d + q_kv + (h * k + 2 * g * k) + h * k * d + d * 2 * f + f * d
        total = active = v * d + n * layer + d + d * v
    elif kind == "starcoder2":
        layer = 4 * d + q_kv + (h * k + 2 * g * k) + h * k * d + d + d * f + f + f * d + d
        head = 0 if c.get("tie_word_embeddings", True) else d * v
        total = active = v * d + n * layer + 2 * d + head
    elif kind == "qwen2_moe":
        e, top, fe = int(c["num_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        base = 2 * d + q_kv + (h * k + 2 * g * k) + h * k * d + d * e + 3 * d * int(c["shared_expert_intermediate_size"]) + d
        outer = v * d + d + d * v
        total = outer + n * (base + e * 3 * d * fe)
        active = outer + n * (base + top * 3 * d * fe)
    elif kind in ("qwen3", "qwen3_moe"):
        return maxtext_parameters(c)  # one formula for Qwen3's layouts (maxtext_parameters' docstring)
    elif kind in ("qwen2", "llama"):
        bias = (h * k + 2 * g * k) if kind == "qwen2" else 0
        head = 0 if c.get("tie_word_embeddings") else d * v
        total = active = v * d + n * (2 * d + q_kv + bias + h * k * d + 3 * d * f) + d + head
    elif kind == "phimoe":
        e, top, fe = int(c["num_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        base = 4 * d + q_kv + (h * k + 2 * g * k) + h * k * d + d + d * e
        outer = v * d + 2 * d + d * v + v
        total = outer + n * (base + e * 3 * d * fe)
        active = outer + n * (base + top * 3 * d * fe)
    elif kind == "dbrx":
        e, top, fe = int(c["num_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        base = 2 * d + q_kv + h * k * d + d * e
        outer = v * d + d + d * v
        total = outer + n * (base + e * 3 * d * fe)
        active = outer + n * (base + top * 3 * d * fe)
    elif kind == "opt":
        layer = 4 * (d * d + d) + 2 * d + 2 * d * f + f + d + 2 * d
        total = active = v * d + (int(c["max_position_embeddings"]) + 2) * d + n * layer + 2 * d
    elif kind == "cohere":
        head = 0 if c.get("tie_word_embeddings", True) else d * v
        total = active = v * d + n * (d + q_kv + h * k * d + 3 * d * f) + d + head
    elif kind == "deepseek":
        e, top, fe = int(c["n_routed_experts"]), int(c["num_experts_per_tok"]), int(c["moe_intermediate_size"])
        shared = int(c.get("n_shared_experts") or 0) * 3 * d * fe
        attn = 2 * d + q_kv + h * k * d
        dense = int(c.get("first_k_dense_replace") or 0)
        outer = v * d + d + d * v
        total = active = outer
        for i in range(n):
            if i < dense:
                total, active = total + attn + 3 * d * f, active + attn + 3 * d * f
            else:
                total += attn + d * e + shared + e * 3 * d * fe
                active += attn + d * e + shared + top * 3 * d * fe
    else:
        raise ValueError(f"no parameter formula for model_type {kind}")
    return total, active


def extra_model(c: dict[str, object], hf: str, label: str, iri: str, what: str, url: str) -> Model:
    total, active = extra_parameters(c)
    kind = str(c["model_type"])
    h = int(c["num_attention_heads"])
    g = int(c.get("num_key_value_heads") or h)
    moe = kind in ("qwen2_moe", "qwen3_moe", "deepseek", "phimoe", "dbrx")
    facts: dict[str, object] = {
        "parameterCount": total,
        "numLayers": int(c["num_hidden_layers"]),
        "hiddenSize": int(c["hidden_size"]),
        "attentionHeads": h,
        "kvHeads": g,
        "headDim": int(c.get("head_dim") or int(c["hidden_size"]) // h),
        "ffnSize": int(c.get("moe_intermediate_size") or c["intermediate_size"]) if moe else int(c["intermediate_size"]),
        "vocabSize": int(c["vocab_size"]),
        "maxContext": int(c["max_position_embeddings"]),
        "attentionKind": attention_kind(h, g),
    }
    if moe:
        facts["activeParameterCount"] = active
        facts["numExperts"] = int(c.get("num_experts") or c["n_routed_experts"])
        facts["expertsPerToken"] = int(c["num_experts_per_tok"])
        if c.get("n_shared_experts"):
            facts["sharedExperts"] = int(c["n_shared_experts"])
    if c.get("sliding_window") and kind == "starcoder2":
        facts["slidingWindow"] = int(c["sliding_window"])  # type: ignore[call-overload]
        facts["slidingWindowLayers"] = int(c["num_hidden_layers"])
    org, name = hf.split("/", 1)
    note = (
        f"Architecture from {what} (model_type {kind}); the parameter count ({total:,}"
        + (f", {active:,} active per token" if moe else "")
        + ") is computed from those shapes with scripts/gen_models.py's extra_parameters (its docstring states the "
        "formula per model type). Maximum context is max_position_embeddings (seq_length for ChatGLM)."
    )
    return Model(
        iri=iri,
        classes=["kbq:LargeLanguageModel", "kbq:Model"],
        label=label,
        comment=f"{hf}: a {total / 1e9:.2f}B-parameter {'mixture-of-experts ' if moe else ''}decoder-only language model "
        "published on the Hugging Face Hub.",
        modality="kb:TextModality",
        facts=facts,
        note=note,
        sources=[url],
        names=[*short_names(org, name), *EXTRA_NAMES.get(hf, [])],
        hf_id=hf,
    )


def candle_models() -> list[Model]:
    out = []
    for (file, function), (hf, kind) in CANDLE_PRESETS.items():
        c = load_candle(file, function)
        c["model_type"] = kind
        url = f"https://github.com/huggingface/candle/blob/{CANDLE_COMMIT}/candle-transformers/src/models/{file}"
        what = (
            f"candle's preset Config::{function}() in candle-transformers/src/models/{file}, "
            f"a transcription of {hf}'s config.json"
        )
        out.append(extra_model(c, hf, hf.split("/", 1)[1], f"{KB}hf/{hf}", what, url))
    presets = load_mlc()
    for key, (label, hf) in MLC_MORE.items():
        what = f"mlc-llm's preset '{key}', a verbatim copy of the Hugging Face config.json of {label}"
        c = presets[key]
        if "text_config" in c:  # a vision-language model: its language model
            c = dict(c["text_config"])  # type: ignore[call-overload]
            what += " (its text_config: the language model; the vision encoder is not counted)"
        out.append(extra_model(c, hf, label, f"{KB}hf/{hf}", what, MLC_PRESETS_URL))
    return out


def marian_parameters(c: dict[str, object]) -> int:
    """Parameters of a MarianMT checkpoint (Hugging Face MarianMTModel) from its config's shapes.

    One embedding V*d shared by the encoder, the decoder and the output head
    (share_encoder_decoder_embeddings); encoder layers: self-attention q/k/v/o 4*(d*d + d), LayerNorm 2d,
    FFN d*f + f + f*d + d, LayerNorm 2d; decoder layers add cross-attention 4*(d*d + d) and its LayerNorm
    2d. The sinusoidal position tables (2 x max_position_embeddings x d, fixed, not trained) and the
    final_logits_bias buffer are not counted.
    """
    v, d = int(c["vocab_size"]), int(c["d_model"])
    attn = 4 * (d * d + d)
    enc_ffn = 2 * d * int(c["encoder_ffn_dim"]) + int(c["encoder_ffn_dim"]) + d
    dec_ffn = 2 * d * int(c["decoder_ffn_dim"]) + int(c["decoder_ffn_dim"]) + d
    encoder = int(c["encoder_layers"]) * (attn + 2 * d + enc_ffn + 2 * d)
    decoder = int(c["decoder_layers"]) * (2 * attn + 3 * 2 * d + dec_ffn)
    return v * d + encoder + decoder


def marian_models() -> list[Model]:
    """MarianMT translation models: candle's marian.rs presets, each under a comment naming the Hugging
    Face config.json it transcribes."""
    file = "marian.rs"
    text = git_show(CANDLE_GIT, CANDLE_COMMIT, f"candle-transformers/src/models/{file}")
    url = f"https://github.com/huggingface/candle/blob/{CANDLE_COMMIT}/candle-transformers/src/models/{file}"
    out = []
    link = r"// https://huggingface\.co/([\w.-]+/[\w.-]+)/blob/main/config\.json\s*\n\s*pub fn (\w+)\(\)"
    linked = {function: hf for hf, function in re.findall(link, text)}
    for function in re.findall(r"pub fn (opus_mt_\w+)\(\)", text):
        # presets without a link are named for the checkpoint: opus_mt_en_zh is Helsinki-NLP/opus-mt-en-zh
        hf = linked.get(function) or "Helsinki-NLP/" + function.replace("_", "-")
        c = load_candle(file, function)
        total = marian_parameters(c)
        heads = int(c["encoder_attention_heads"])
        enc, dec = int(c["encoder_layers"]), int(c["decoder_layers"])
        org, name = hf.split("/", 1)
        pair = name.removeprefix("opus-mt-")
        pair = pair.replace("tc-big-", "big ")
        facts: dict[str, object] = {
            "parameterCount": total,
            "numLayers": enc + dec,
            "encoderLayers": enc,
            "decoderLayers": dec,
            "hiddenSize": int(c["d_model"]),
            "attentionHeads": heads,
            "kvHeads": heads,
            "headDim": int(c["d_model"]) // heads,
            "ffnSize": int(c["encoder_ffn_dim"]),
            "vocabSize": int(c["vocab_size"]),
            "maxContext": int(c["max_position_embeddings"]),
            "attentionKind": "MHA",
        }
        note = (
            f"Architecture from candle's preset Config::{function}() in candle-transformers/src/models/{file}, a "
            f"transcription of {hf}'s config.json ("
            + ("the comment above it links that file" if function in linked else "named for that checkpoint")
            + "); the parameter count "
            f"({total:,}) is computed from those shapes with scripts/gen_models.py's marian_parameters (shared "
            "embedding, encoder and decoder layers with biases and LayerNorms; the fixed sinusoidal position "
            "tables are not counted). Maximum context is max_position_embeddings."
        )
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:Transformer", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {total / 1e6:.0f}M-parameter MarianMT encoder-decoder translation model ({pair}) "
                "published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=note,
                sources=[url],
                names=[*short_names(org, name), f"marian {pair}", f"marianmt {pair}"],
                hf_id=hf,
            )
        )
    return out


# --- Configurations transcribed by hand from files read with the search tool (repositories too large to
# fetch); each entry names the file at a commit and keeps the config.json keys it states. ---------------

TRANSCRIBED: dict[str, dict[str, object]] = {
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": {
        "source": "https://github.com/NVIDIA/TensorRT-LLM/blob/0373e5a1d2d9e154bb878d6dce47f52194a4963e/"
        "tests/unittest/_torch/modeling/test_modeling_mistral.py",
        "licence": "Apache-2.0",
        "where": "the text_config of the mistral_small_3_1_24b_config fixture (a copy of the checkpoint's config.json; "
        "num_hidden_layers reduced to 4 for CI, 'from the original 40' as its comment says, so 40 is used)",
        "names": ["Mistral Small 3.1", "Mistral Small 3.1 24B", "mistral-small-3.1"],
        "config": {
            "model_type": "mistral",
            "head_dim": 128,
            "hidden_size": 5120,
            "intermediate_size": 32768,
            "max_position_embeddings": 131072,
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "vocab_size": 131072,
        },
        "comment": "the language model of Mistral Small 3.1 (a vision-language model): its Pixtral vision encoder "
        "and projector are not counted",
    },
    "mistralai/Mistral-Nemo-Base-2407": {
        "source": "https://github.com/kevinstephano/thunder_model_blocks/blob/7327d0fa4d917dd8614cc10ce8b176a54aee1773/"
        "hf_mistral-nemo/mistral-nemo_lora_model.py",
        "licence": "no licence stated: only the figures are cited",
        "where": "mistral_cfg_str, the checkpoint's config.json copied verbatim (_name_or_path "
        "mistralai/Mistral-Nemo-Base-2407, transformers_version 4.43.3)",
        "also": "https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/"
        "nemo/collections/llm/gpt/model/mistral.py",
        "also_where": "NVIDIA NeMo's MistralNeMoConfig12B (Apache-2.0) states the same layers, width, heads, "
        "key-value heads, head size and FFN size",
        "names": [
            "Mistral NeMo",
            "Mistral NeMo 12B",
            "nemo 12b",
            "mistral-nemo",
            "Mistral-Nemo-Instruct-2407",
            "mistralai/Mistral-Nemo-Instruct-2407",
        ],
        "config": {
            "model_type": "mistral",
            "head_dim": 128,
            "hidden_size": 5120,
            "intermediate_size": 14336,
            "max_position_embeddings": 128000,
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "vocab_size": 131072,
        },
        "comment": "also the count of the instruct fine-tune Mistral-Nemo-Instruct-2407, which keeps the shapes "
        "(an alias here)",
    },
    "Qwen/Qwen2-57B-A14B": {
        "source": "https://github.com/NVIDIA/TensorRT-LLM/blob/cb4c622cf5bb97009451f7f44609498a48a2b11d/"
        "tests/unittest/_torch/modeling/test_modeling_qwen_moe.py",
        "licence": "Apache-2.0",
        "where": "QWEN2_57B_A14B_CONFIG, the checkpoint's config.json copied in code (transformers_version 4.40.1; "
        "the tests cut num_hidden_layers to 1 on a copy, the constant keeps 28)",
        "names": [
            "Qwen2-57B-A14B-Instruct",
            "Qwen/Qwen2-57B-A14B-Instruct",
            "Qwen2 57B A14B",
            "Qwen2 MoE 57B",
        ],
        "config": {
            "model_type": "qwen2_moe",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "max_position_embeddings": 131072,
            "moe_intermediate_size": 2560,
            "num_attention_heads": 28,
            "num_experts": 64,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 28,
            "num_key_value_heads": 4,
            "shared_expert_intermediate_size": 20480,
            "tie_word_embeddings": False,
            "vocab_size": 151936,
        },
        "comment": "also the count of the instruct fine-tune Qwen2-57B-A14B-Instruct, which keeps the shapes (an alias "
        "here); the shared expert (20,480 wide, always active) is counted in both totals",
    },
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": {
        "source": "https://github.com/ztxz16/fastllm/blob/f8f04c33abb63f6cd4e45f9427a55949a8ebbb44/"
        "Qwen3-Coder-30B-A3B-Instruct/config.json",
        "licence": "the checkpoint's own files, Apache-2.0 (its LICENSE is copied beside them)",
        "where": "the checkpoint's config.json, copied verbatim with its README, LICENSE and model.safetensors.index.json "
        "(whose total_size 61,064,245,248 bytes of BF16 is 30,532,122,624 parameters: the count computed here)",
        "names": ["Qwen3-Coder 30B", "qwen3-coder-30b", "qwen3 coder 30b", "qwen3-coder:30b", "Qwen3 Coder 30B A3B"],
        "config": {
            "model_type": "qwen3_moe",
            "head_dim": 128,
            "hidden_size": 2048,
            "intermediate_size": 5472,
            "max_position_embeddings": 262144,
            "moe_intermediate_size": 768,
            "num_attention_heads": 32,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 48,
            "num_key_value_heads": 4,
            "tie_word_embeddings": False,
            "vocab_size": 151936,
        },
        "comment": "Qwen3-30B-A3B's shapes with a 262,144-token context",
    },
    "Qwen/Qwen3-VL-8B-Instruct": {
        "source": "https://github.com/NVIDIA/TensorRT-LLM/blob/04938813b3f573fda84cd28d499b2a539032d409/"
        "tests/unittest/_torch/modeling/test_modeling_qwen3vl.py",
        "licence": "Apache-2.0",
        "where": "the text_config of QWEN3_VL_8B_CONFIG, the checkpoint's config.json copied in code (_name_or_path "
        "Qwen3-VL-8B-Instruct; num_hidden_layers cut to 4 for the test, '36 layers for full model' as its comment says, "
        "so 36 is used)",
        "names": ["Qwen3-VL 8B", "qwen3-vl-8b", "qwen3 vl 8b", "qwen3vl 8b"],
        "config": {
            "model_type": "qwen3",
            "head_dim": 128,
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "max_position_embeddings": 262144,
            "num_attention_heads": 32,
            "num_hidden_layers": 36,
            "num_key_value_heads": 8,
            "tie_word_embeddings": False,
            "vocab_size": 151936,
        },
        "comment": "the language model of Qwen3-VL-8B (a vision-language model): its 27-layer vision encoder "
        "(hidden size 1152) and merger are not counted; it equals Qwen3-8B's count (the same text shapes)",
    },
    "Qwen/Qwen2.5-VL-7B-Instruct": {
        "source": "https://github.com/NVIDIA/TensorRT-LLM/blob/03dd9bb8387c5c3015f41124da0f338751a177c0/"
        "tests/unittest/_torch/modeling/test_modeling_qwen2_5vl.py",
        "licence": "Apache-2.0",
        "where": "QWEN2_5_VL_7B_CONFIG, the checkpoint's config.json copied in code (_name_or_path Qwen2.5-VL-7B-Instruct; "
        "num_hidden_layers cut to 2 for the test, '28 layers for full model' as its comment says, so 28 is used)",
        "names": ["Qwen2.5-VL 7B", "qwen2.5-vl-7b", "qwen2.5 vl 7b", "qwen2.5vl 7b"],
        "config": {
            "model_type": "qwen2",
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "max_position_embeddings": 128000,
            "num_attention_heads": 28,
            "num_hidden_layers": 28,
            "num_key_value_heads": 4,
            "tie_word_embeddings": False,
            "vocab_size": 152064,
        },
        "comment": "the language model of Qwen2.5-VL-7B (a vision-language model): its 32-layer vision encoder "
        "(hidden size 1280) and merger are not counted",
    },
}


def transcribed_models() -> list[Model]:
    out = []
    for hf, entry in TRANSCRIBED.items():
        c = dict(entry["config"])  # type: ignore[call-overload]
        if c["model_type"] == "mistral":
            c["model_type"] = "yi"  # the LLaMA layout: extra_parameters' 'yi' formula (untied head)
        what = f"{entry['where']} in {entry['source']} ({entry['licence']})"
        if entry.get("also"):
            what += f"; {entry['also_where']}, {entry['also']}"
        m = extra_model(c, hf, hf.split("/", 1)[1], f"{KB}hf/{hf}", what, str(entry["source"]))
        if entry.get("also"):
            m.sources.append(str(entry["also"]))
        m.note = m.note.replace("(model_type yi)", "(model_type mistral, counted as the LLaMA layout)") + (
            f" The count is {entry['comment']}." if entry.get("comment") else ""
        )
        m.names += list(entry.get("names", []))  # type: ignore[call-overload]
        out.append(m)
    return out


# --- Non-LLM workloads from KerasHub's presets (published parameter counts) ------------------------------

KERAS_GIT = Path("/work/.mirror/keras-team+keras-hub/repo")
KERAS_COMMIT = "71453d08f59edc90d276e999319fc51e61cbf82c"
VT, TR, CNN, DIFF = "kbq:VisionTransformer", "kbq:Transformer", "kbq:CNN", "kbq:DiffusionModel"
VISION, TEXT, AUDIO, GEN, MULTI = (
    "kb:VisionModality",
    "kb:TextModality",
    "kb:AudioModality",
    "kb:ImageGenerationModality",
    "kb:MultimodalModality",
)
# KerasHub presets (keras_hub/src/models/<family>/<family>_presets.py: metadata 'params' and 'description')
# of workloads the other collections lack: preset -> (label, class, modality, other names). Presets of
# models the hand-written KB holds (BERT-base/large uncased, RoBERTa, T5, Whisper, ViT-B/16, CLIP ViT-L/14,
# SD3 Medium) are left out.
KERAS_PRESETS: dict[str, dict[str, tuple[str, str, str, list[str]]]] = {
    "sam": {
        "sam_base_sa1b": ("SAM ViT-B", VT, VISION, ["sam vit-b", "sam_vit_b", "segment anything vit-b", "sam base"]),
        "sam_large_sa1b": ("SAM ViT-L", VT, VISION, ["sam vit-l", "sam_vit_l", "segment anything vit-l", "sam large"]),
        "sam_huge_sa1b": ("SAM ViT-H", VT, VISION, ["sam vit-h", "sam_vit_h", "segment anything vit-h", "sam huge", "sam 1"]),
    },
    "stable_diffusion_3": {
        "stable_diffusion_3.5_medium": ("Stable Diffusion 3.5 Medium", DIFF, GEN, ["sd3.5 medium", "sd 3.5 medium"]),
        "stable_diffusion_3.5_large": ("Stable Diffusion 3.5 Large", DIFF, GEN, ["sd3.5 large", "stable-diffusion-3.5-large"]),
        "stable_diffusion_3.5_large_turbo": (
            "Stable Diffusion 3.5 Large Turbo",
            DIFF,
            GEN,
            ["sd3.5 large turbo", "stable-diffusion-3.5-large-turbo"],
        ),
    },
    "d_fine": {
        **{
            f"dfine_{size}_coco": (f"D-FINE-{size[0].upper()} COCO", TR, VISION, [f"d-fine {size}", f"dfine {size}"])
            for size in ("nano", "small", "medium", "large", "xlarge")
        },
        **{
            f"dfine_{size}_obj365": (f"D-FINE-{size[0].upper()} Objects365", TR, VISION, [f"d-fine {size} objects365"])
            for size in ("small", "medium", "large", "xlarge")
        },
    },
    "retinanet": {
        "retinanet_resnet50_fpn_coco": ("RetinaNet ResNet-50 FPN", CNN, VISION, ["retinanet", "retinanet r50"]),
        "retinanet_resnet50_fpn_v2_coco": ("RetinaNet ResNet-50 FPN v2", CNN, VISION, ["retinanet v2"]),
    },
    "segformer": {
        **{
            f"segformer_b{i}_ade20k_{512 if i < 5 else 640}": (f"SegFormer-B{i} ADE20K", VT, VISION, [f"segformer b{i}"])
            for i in range(6)
        },
        **{
            f"segformer_b{i}_cityscapes_1024": (f"SegFormer-B{i} Cityscapes", VT, VISION, [f"segformer b{i} cityscapes"])
            for i in range(6)
        },
    },
    "deeplab_v3": {
        "deeplab_v3_plus_resnet50_pascalvoc": ("DeepLabV3 Plus ResNet-50", CNN, VISION, ["deeplabv3 plus", "deeplab v3 plus"]),
    },
    "depth_anything": {
        f"depth_anything_v2_{s}": (f"Depth Anything V2 {s.title()}", VT, VISION, [f"depth-anything-v2-{s}"])
        for s in ("small", "base", "large")
    },
    "dinov2": {
        **{f"dinov2_{s}": (f"DINOv2 {s.title()}", VT, VISION, [f"dinov2-{s}"]) for s in ("small", "base", "large", "giant")},
        **{
            f"dinov2_with_registers_{s}": (f"DINOv2 {s.title()} with registers", VT, VISION, [f"dinov2-with-registers-{s}"])
            for s in ("small", "base", "large", "giant")
        },
    },
    "dinov3": {
        **{
            f"dinov3_vit_{s}_lvd1689m": (f"DINOv3 ViT-{label}", VT, VISION, [f"dinov3-vit{tag}16-pretrain-lvd1689m"])
            for s, label, tag in (
                ("small", "S/16", "s"),
                ("small_plus", "S+/16", "splus"),
                ("base", "B/16", "b"),
                ("large", "L/16", "l"),
                ("huge_plus", "H+/16", "hplus"),
                ("7b", "7B/16", "7b"),
            )
        },
        "dinov3_vit_large_sat493m": ("DINOv3 ViT-L/16 satellite", VT, VISION, ["dinov3-vitl16-pretrain-sat493m"]),
        "dinov3_vit_7b_sat493m": ("DINOv3 ViT-7B/16 satellite", VT, VISION, ["dinov3-vit7b16-pretrain-sat493m"]),
    },
    "moonshine": {
        "moonshine_tiny_en": ("Moonshine Tiny", TR, AUDIO, ["moonshine-tiny", "moonshine tiny en"]),
        "moonshine_base_en": ("Moonshine Base", TR, AUDIO, ["moonshine-base", "moonshine base en"]),
    },
    "clip": {
        "clip_vit_base_patch16": ("CLIP ViT-B/16", VT, MULTI, ["clip-vit-base-patch16"]),
        "clip_vit_base_patch32": ("CLIP ViT-B/32", VT, MULTI, ["clip-vit-base-patch32"]),
        "clip_vit_large_patch14_336": ("CLIP ViT-L/14 336px", VT, MULTI, ["clip-vit-large-patch14-336"]),
        "clip_vit_b_32_laion2b_s34b_b79k": ("OpenCLIP ViT-B/32 LAION-2B", VT, MULTI, ["CLIP-ViT-B-32-laion2B-s34B-b79K"]),
        "clip_vit_h_14_laion2b_s32b_b79k": ("OpenCLIP ViT-H/14 LAION-2B", VT, MULTI, ["CLIP-ViT-H-14-laion2B-s32B-b79K"]),
        "clip_vit_g_14_laion2b_s12b_b42k": ("OpenCLIP ViT-g/14 LAION-2B", VT, MULTI, ["CLIP-ViT-g-14-laion2B-s12B-b42K"]),
        "clip_vit_bigg_14_laion2b_39b_b160k": (
            "OpenCLIP ViT-bigG/14 LAION-2B",
            VT,
            MULTI,
            ["CLIP-ViT-bigG-14-laion2B-39B-b160k", "clip bigg"],
        ),
    },
    "metaclip_2": {
        f"metaclip_2_vit_{s}_patch14_{r}": (f"MetaCLIP 2 ViT-{tag}/14 {r}", VT, MULTI, [f"metaclip-2-worldwide-{s}-{r}"])
        for s, tag in (("huge", "H"), ("giant", "bigG"))
        for r in (224, 378)
    },
    "siglip": {
        p: (p.replace("_", "-"), VT, MULTI, [])
        for p in (
            *(f"siglip_base_patch16_{r}" for r in (224, 256, 384, 512)),
            "siglip_large_patch16_256",
            "siglip_large_patch16_384",
            "siglip_so400m_patch14_224",
            "siglip_so400m_patch14_384",
            "siglip_so400m_patch16_256_i18n",
            "siglip_base_patch16_256_multilingual",
            "siglip2_base_patch16_224",
            "siglip2_base_patch16_256",
            "siglip2_base_patch32_256",
            "siglip2_base_patch16_384",
            "siglip2_large_patch16_256",
            "siglip2_large_patch16_384",
            "siglip2_large_patch16_512",
            "siglip2_giant_opt_patch16_256",
            "siglip2_giant_opt_patch16_384",
            "siglip2_so400m_patch14_224",
            "siglip2_so400m_patch16_256",
            "siglip2_so400m_patch16_384",
            "siglip2_so400m_patch16_512",
        )
    },
    "bert": {
        "bert_tiny_en_uncased": ("BERT-tiny", TR, TEXT, ["bert tiny"]),
        "bert_small_en_uncased": ("BERT-small", TR, TEXT, ["bert small"]),
        "bert_medium_en_uncased": ("BERT-medium", TR, TEXT, ["bert medium"]),
        "bert_base_en": ("BERT-base cased", TR, TEXT, ["bert-base-cased"]),
        "bert_base_zh": ("BERT-base Chinese", TR, TEXT, ["bert-base-chinese"]),
        "bert_base_multi": ("BERT-base multilingual cased", TR, TEXT, ["bert-base-multilingual-cased"]),
        "bert_large_en": ("BERT-large cased", TR, TEXT, ["bert-large-cased"]),
        "all_minilm_l6_v2_en": ("all-MiniLM-L6-v2", TR, TEXT, ["minilm l6 v2", "minilm"]),
        "all_minilm_l6_v1_en": ("all-MiniLM-L6-v1", TR, TEXT, []),
        "all_minilm_l12_v2_en": ("all-MiniLM-L12-v2", TR, TEXT, ["minilm l12 v2"]),
        "paraphrase_minilm_l3_v2_en": ("paraphrase-MiniLM-L3-v2", TR, TEXT, []),
        "paraphrase_minilm_l6_v2_en": ("paraphrase-MiniLM-L6-v2", TR, TEXT, []),
        "paraphrase_minilm_l12_v2_en": ("paraphrase-MiniLM-L12-v2", TR, TEXT, []),
        "multi_qa_minilm_l6_cos_v1_en": ("multi-qa-MiniLM-L6-cos-v1", TR, TEXT, []),
        "multi_qa_minilm_l6_dot_v1_en": ("multi-qa-MiniLM-L6-dot-v1", TR, TEXT, []),
        "msmarco_minilm_l6_cos_v5_en": ("msmarco-MiniLM-L6-cos-v5", TR, TEXT, []),
        "msmarco_minilm_l12_cos_v5_en": ("msmarco-MiniLM-L12-cos-v5", TR, TEXT, []),
        "bge_small_en": ("bge-small-en", TR, TEXT, []),
        "bge_base_en": ("bge-base-en", TR, TEXT, []),
        "bge_large_en": ("bge-large-en", TR, TEXT, []),
        "bge_small_v1.5_en": ("bge-small-en-v1.5", TR, TEXT, ["bge small"]),
        "bge_base_v1.5_en": ("bge-base-en-v1.5", TR, TEXT, ["bge base"]),
        "bge_large_v1.5_en": ("bge-large-en-v1.5", TR, TEXT, ["bge large"]),
        "bge_base_zh": ("bge-base-zh", TR, TEXT, []),
        "bge_large_zh": ("bge-large-zh", TR, TEXT, []),
        "bge_small_v1.5_zh": ("bge-small-zh-v1.5", TR, TEXT, []),
        "bge_base_v1.5_zh": ("bge-base-zh-v1.5", TR, TEXT, []),
        "bge_large_v1.5_zh": ("bge-large-zh-v1.5", TR, TEXT, []),
        "bge_llm_embedder": ("bge-llm-embedder", TR, TEXT, []),
        "multilingual_e5_small": ("multilingual-e5-small", TR, TEXT, ["e5 small"]),
        "mxbai_embed_large_v1_en": ("mxbai-embed-large-v1", TR, TEXT, ["mxbai embed large"]),
        "mxbai_embed_2d_large_v1_en": ("mxbai-embed-2d-large-v1", TR, TEXT, []),
        "mxbai_embed_xsmall_v1_en": ("mxbai-embed-xsmall-v1", TR, TEXT, []),
    },
    "xlm_roberta": {
        "xlm_roberta_base_multi": ("XLM-RoBERTa base", TR, TEXT, ["xlm-roberta-base"]),
        "xlm_roberta_large_multi": ("XLM-RoBERTa large", TR, TEXT, ["xlm-roberta-large"]),
        "bge_m3": ("bge-m3", TR, TEXT, ["bge m3"]),
        "multilingual_e5_base": ("multilingual-e5-base", TR, TEXT, ["e5 base"]),
        "multilingual_e5_large": ("multilingual-e5-large", TR, TEXT, ["e5 large"]),
    },
    "deberta_v3": {
        "deberta_v3_extra_small_en": ("DeBERTa-v3 xsmall", TR, TEXT, ["deberta-v3-xsmall"]),
        "deberta_v3_small_en": ("DeBERTa-v3 small", TR, TEXT, ["deberta-v3-small"]),
        "deberta_v3_base_en": ("DeBERTa-v3 base", TR, TEXT, ["deberta-v3-base"]),
        "deberta_v3_large_en": ("DeBERTa-v3 large", TR, TEXT, ["deberta-v3-large"]),
        "deberta_v3_base_multi": ("mDeBERTa-v3 base", TR, TEXT, ["mdeberta-v3-base"]),
    },
    "distil_bert": {
        "distil_bert_base_en_uncased": ("DistilBERT base uncased", TR, TEXT, ["distilbert-base-uncased", "distilbert"]),
        "distil_bert_base_en": ("DistilBERT base cased", TR, TEXT, ["distilbert-base-cased"]),
        "distil_bert_base_multi": ("DistilBERT base multilingual cased", TR, TEXT, ["distilbert-base-multilingual-cased"]),
    },
    # the generator presets are left out: KerasHub gives electra_small_generator the discriminator's count
    "electra": {
        f"electra_{s}_discriminator_uncased_en": (f"ELECTRA {s}", TR, TEXT, [f"electra-{s}-discriminator"])
        for s in ("small", "base", "large")
    },
    "albert": {
        f"albert_{s}_en_uncased": (f"ALBERT {label}", TR, TEXT, [f"albert-{label}-v2"])
        for s, label in (("base", "base"), ("large", "large"), ("extra_large", "xlarge"), ("extra_extra_large", "xxlarge"))
    },
    "bart": {
        "bart_base_en": ("BART base", TR, TEXT, ["bart-base"]),
        "bart_large_en": ("BART large", TR, TEXT, ["bart-large"]),
        "bart_large_en_cnn": ("BART large CNN", TR, TEXT, ["bart-large-cnn"]),
    },
    "f_net": {
        "f_net_base_en": ("FNet base", TR, TEXT, ["fnet-base"]),
        "f_net_large_en": ("FNet large", TR, TEXT, ["fnet-large"]),
    },
    "esm": {
        p: (f"ESM-2 {p.split('_')[-1]}", TR, TEXT, [p.replace("_", "-")])
        for p in ("esm2_t6_8M", "esm2_t12_35M", "esm2_t30_150M", "esm2_t33_650M")
    },
}
# KerasHub lists 641,090,864 parameters under sam_large_sa1b and 312,343,088 under sam_huge_sa1b: the
# labels are swapped (ViT-H is the larger encoder: ViT-L/16 has 304M parameters, kb:ViTL16, and SAM's
# ViT-H image encoder alone 632M, the SAM paper, arXiv 2304.02643), so each count goes to the other name.
KERAS_SWAPPED = {"sam_large_sa1b": "sam_huge_sa1b", "sam_huge_sa1b": "sam_large_sa1b"}
SAM_PAPER = "https://arxiv.org/abs/2304.02643"


def load_keras_presets(family: str) -> dict[str, dict[str, object]]:
    import ast

    path = f"keras_hub/src/models/{family}/{family}_presets.py"
    tree = ast.parse(git_show(KERAS_GIT, KERAS_COMMIT, path))
    presets: dict[str, dict[str, object]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            presets.update(ast.literal_eval(node.value))
    return presets


def keras_models() -> list[Model]:
    out = []
    for family, chosen in KERAS_PRESETS.items():
        presets = load_keras_presets(family)
        path = f"keras_hub/src/models/{family}/{family}_presets.py"
        url = f"https://github.com/keras-team/keras-hub/blob/{KERAS_COMMIT}/{path}"
        for preset, (label, cls, modality, names) in chosen.items():
            source_preset = KERAS_SWAPPED.get(preset, preset)
            meta = presets[source_preset]["metadata"]
            assert isinstance(meta, dict)
            params = int(meta["params"])
            description = " ".join(str(meta.get("description", "")).split())
            facts: dict[str, object] = {"parameterCount": params}
            layers = re.match(r"(\d+)-layer (?!.*\bfor vision\b)", description)
            if layers and family not in ("bart",):
                facts["numLayers"] = int(layers.group(1))
            stated = r"(?:image size|image size of|image resolution|in) (\d+)(?:x\d+)?(?: resolution|,|\.| CLIP| pre)"
            size = re.search(stated, description)
            if family == "siglip":  # the resolution ends the checkpoint's name (one description says 224 for a 384)
                size = re.search(r"_(\d{3})(?:_|$)", preset)
            if size and modality in (VISION, MULTI):
                facts["imageSize"] = int(size.group(1))
            note = (
                f"{params:,} parameters: the 'params' of KerasHub's preset {source_preset} in {path} (its description: "
                f"'{description[:200]}')."
                + (
                    f" KerasHub lists this count under {source_preset}; the large and huge labels are swapped there (ViT-H is "
                    "the larger encoder: SAM's ViT-H image encoder alone has 632M parameters, the SAM paper), so the count "
                    f"is stored for {label}."
                    if preset in KERAS_SWAPPED
                    else ""
                )
                + (
                    " The image size is the one in the checkpoint's name."
                    if family == "siglip"
                    else (" Layers and image size are the description's." if len(facts) > 1 else "")
                )
            )
            out.append(
                Model(
                    iri=f"{KB}keras/{preset}",
                    classes=[cls, "kbq:Model"],
                    label=label,
                    comment=f"{label}: a {params / 1e6:,.1f}M-parameter model (KerasHub preset {preset}).",
                    modality=modality,
                    facts=facts,
                    note=note,
                    sources=[url] + ([SAM_PAPER] if preset in KERAS_SWAPPED else []),
                    names=[preset, *names],
                )
            )
    return out


# --- LLMs from ollama's conversion test data (GGUF metadata of real checkpoints) ------------------------

OLLAMA_GIT = Path("/work/.mirror/ollama+ollama/repo")
OLLAMA_COMMIT = "fb30760996871fa9460115c753afd2c60d4ab0f7"
COHERE_DOC_URL = (
    "https://github.com/huggingface/transformers/blob/00fa1392c36d5a33897811b31beef692598dccdb/docs/source/en/model_doc/cohere.md"
)
# test file -> (Hub id, published parameter count, where it is published, other names). The GGUF metadata
# (written by ollama's converter from the checkpoint's config.json) gives the shapes but not the
# vocabulary, so the count is the publisher's, not computed.
OLLAMA_MODELS: dict[str, tuple[str, float, str, str, list[str]]] = {
    "convert/testdata/c4ai-command-r-v01.json": (
        "CohereForAI/c4ai-command-r-v01",
        35e9,
        COHERE_DOC_URL,
        "'a 35B parameter multilingual large language model', Transformers' Cohere model page",
        ["command-r", "command r", "command-r 35b", "command r v01", "CohereLabs/c4ai-command-r-v01"],
    ),
}


def ollama_models() -> list[Model]:
    import json

    out = []
    for path, (hf, params, count_url, count_where, names) in OLLAMA_MODELS.items():
        meta = json.loads(git_show(OLLAMA_GIT, OLLAMA_COMMIT, path))
        arch = meta["general.architecture"]

        def key(name: str, meta: dict[str, str] = meta, arch: str = arch) -> int:
            return int(float(meta[f"{arch}.{name}"]))

        heads, kv = key("attention.head_count"), key("attention.head_count_kv")
        facts: dict[str, object] = {
            "parameterCount": params,
            "numLayers": key("block_count"),
            "hiddenSize": key("embedding_length"),
            "attentionHeads": heads,
            "kvHeads": kv,
            "ffnSize": key("feed_forward_length"),
            "maxContext": key("context_length"),
            "attentionKind": attention_kind(heads, kv),
        }
        url = f"https://github.com/ollama/ollama/blob/{OLLAMA_COMMIT}/{path}"
        org, name = hf.split("/", 1)
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {params / 1e9:.0f}B-parameter decoder-only language model published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=(
                    f"Layers, width, heads, key-value heads, FFN size and context from ollama's {path}, the GGUF metadata "
                    f"its converter writes for {hf} ({arch}.block_count, embedding_length, attention.head_count(_kv), "
                    f"feed_forward_length, context_length); the head size is width / heads. The parameter count is "
                    f"the published one ({count_where}); the metadata does not give the vocabulary, so none is stored."
                ),
                sources=[url, count_url],
                names=[*short_names(org, name), *names],
                hf_id=hf,
            )
        )
    return out


# --- LLMs whose publisher's model card gives a parameter count but no config was read ------------------------
# Hub id -> (published count, context, the card's copy at a commit, where in it, other names). No layer, head or
# vocabulary facts: a memory answer counts the weights and says the KV cache is not counted.
MODEL_CARDS: dict[str, tuple[float, int, str, str, list[str]]] = {
    "CohereForAI/c4ai-command-r-plus": (
        104e9,
        131072,
        "https://github.com/lumenpearson/huggingface_c4ai-command-r-plus/blob/99272bd6962df46267ed247f997f5f5d92c9c9c3/"
        "README.md",
        "its 'Model Size: 104 billion parameters' and 'Context length: 128K' (a copy of the Hugging Face model card)",
        ["Command R+", "command r plus", "command-r-plus", "command-r+", "CohereLabs/c4ai-command-r-plus", "command r+ 104b"],
    ),
}


def model_card_models() -> list[Model]:
    out = []
    for hf, (params, context, url, where, names) in MODEL_CARDS.items():
        org, name = hf.split("/", 1)
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {params / 1e9:.0f}B-parameter decoder-only language model published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts={"parameterCount": int(params), "maxContext": context},
                note=(
                    f"The parameter count and context are the model card's ({where}); no config.json was read, so the "
                    "layers, heads and vocabulary are not stored and a memory answer does not count the KV cache."
                ),
                sources=[url],
                names=[*short_names(org, name), *names],
                hf_id=hf,
            )
        )
    return out


# --- LLMs from Megatron-Bridge's size-specific model providers (HF configs in Megatron terms) -----------

BRIDGE_GIT = Path("/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
# The size-specific provider classes were removed from Megatron-Bridge in 2026; each file is read at the
# last commit that has it. (commit, file, class) -> (Hub id the class docstring links, published count
# and where, or None to compute it, other names).
BRIDGE_MODELS: dict[tuple[str, str, str], tuple[str, tuple[float, str] | None, list[str]]] = {
    ("dc805f5cf9e0001c1f7c860ebb8e42c580ef45b3", "glm/glm45_provider.py", "GLM45ModelProvider355B"): (
        "zai-org/GLM-4.5",
        None,
        ["GLM 4.5", "glm-4.5 355b", "GLM-4.5-355B-A32B"],
    ),
    ("dc805f5cf9e0001c1f7c860ebb8e42c580ef45b3", "glm/glm45_provider.py", "GLM45AirModelProvider106B"): (
        "zai-org/GLM-4.5-Air",
        None,
        ["GLM 4.5 Air", "glm-4.5-air 106b", "GLM-4.5-Air-106B-A12B"],
    ),
    ("84ad9907274001ca6d7253bb4c39c1d8f4dae090", "mistral/mistral_provider.py", "MistralSmall3ModelProvider24B"): (
        "mistralai/Mistral-Small-24B-Instruct-2501",
        None,
        ["Mistral Small 3", "Mistral Small 24B", "mistral-small-24b", "mistral small 2501"],
    ),
    ("8c6c6534b9421228e14ddde4165686b536ca4f10", "qwen/qwen_provider.py", "Qwen2ModelProvider72B"): (
        "Qwen/Qwen2-72B",
        None,
        ["qwen2 72b"],
    ),
    ("84ad9907274001ca6d7253bb4c39c1d8f4dae090", "ministral3/ministral3_provider.py", "Ministral3ModelProvider8B"): (
        "mistralai/Ministral-3-8B-Base-2512",
        (8.4e9, "'8.4B Language Model + 0.4B Vision Encoder', the class docstring"),
        ["Ministral 3 8B", "ministral 8b"],
    ),
    ("84ad9907274001ca6d7253bb4c39c1d8f4dae090", "ministral3/ministral3_provider.py", "Ministral3ModelProvider14B"): (
        "mistralai/Ministral-3-14B-Base-2512",
        (13.5e9, "'13.5B Language Model + 0.4B Vision Encoder', the class docstring"),
        ["Ministral 3 14B", "ministral 14b"],
    ),
}
# Base classes defined in another provider file of the same commit.
BRIDGE_BASES = {"ministral3/ministral3_provider.py": "mistral/mistral_provider.py"}


def _bridge_value(node: object) -> object:
    """A provider field's default: a literal, a list expression inside field(default_factory=lambda: ...),
    or None for what is not a number (activation functions, dtypes, layer specs)."""
    import ast

    assert isinstance(node, ast.AST)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "field":
        for kw in node.keywords:
            if kw.arg == "default_factory" and isinstance(kw.value, ast.Lambda):
                return _bridge_value(kw.value.body)
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        left, right = _bridge_value(node.left), _bridge_value(node.right)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.op, ast.Add) else left * right  # type: ignore[operator]
    try:
        return ast.literal_eval(node)  # type: ignore[arg-type]
    except ValueError:
        return None


def load_bridge_class(commit: str, file: str, cls: str) -> dict[str, object]:
    """The dataclass defaults of a provider class, its bases' first (bases in the same file, or in
    BRIDGE_BASES's file)."""
    import ast

    classes: dict[str, tuple[list[str], dict[str, object]]] = {}
    for path in [BRIDGE_BASES[file]] if file in BRIDGE_BASES else []:
        for name, value in _bridge_classes(commit, path).items():
            classes[name] = value
    classes.update(_bridge_classes(commit, file))

    def resolve(name: str) -> dict[str, object]:
        if name not in classes:
            return {}
        bases, fields = classes[name]
        out: dict[str, object] = {}
        for base in bases:
            out.update(resolve(base))
        out.update(fields)
        return out

    del ast
    return resolve(cls)


def _bridge_classes(
    commit: str, file: str, repo: Path = BRIDGE_GIT, prefix: str = "src/megatron/bridge/models/"
) -> dict[str, tuple[list[str], dict[str, object]]]:
    import ast

    tree = ast.parse(git_show(repo, commit, f"{prefix}{file}"))
    out: dict[str, tuple[list[str], dict[str, object]]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            fields = {
                stmt.target.id: _bridge_value(stmt.value)
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None
            }
            out[node.name] = ([b.id for b in node.bases if isinstance(b, ast.Name)], fields)
    return out


def bridge_parameters(c: dict[str, object]) -> tuple[int, int]:
    """(total, active per token) parameters of a Megatron GPT model from its provider's fields.

    Embedding V*d and, unless share_embeddings_and_output_weights, an output layer d*V; per layer two
    norms (RMSNorm d, LayerNorm 2d); attention qkv d*(h*k + 2*g*k) with its bias when add_qkv_bias or
    add_bias_linear, projection h*k*d (+d with add_bias_linear), q/k norms of the head size with
    qk_layernorm; MLP (2 if gated_linear_unit else 1)*d*f + f*d (+ biases with add_bias_linear); MoE
    layers (moe_layer_freq 1 or a list of 0/1) a router d*E (+E expert bias with
    moe_router_enable_expert_bias), E experts and a shared expert of their FFN sizes (active: top-k
    experts); final norm. V = vocab_size, d = hidden_size, h = num_attention_heads, g = num_query_groups,
    k = kv_channels, f = ffn_hidden_size, E = num_moe_experts.
    """
    v, d, n = int(c["vocab_size"]), int(c["hidden_size"]), int(c["num_layers"])  # type: ignore[call-overload]
    h = int(c["num_attention_heads"])  # type: ignore[call-overload]
    g = int(c.get("num_query_groups") or h)  # type: ignore[call-overload]
    k = int(c.get("kv_channels") or d // h)  # type: ignore[call-overload]
    rms = c.get("normalization") == "RMSNorm"
    norm = d if rms else 2 * d
    bias = bool(c.get("add_bias_linear"))
    qkv = h * k + 2 * g * k
    attn = d * qkv + (qkv if (c.get("add_qkv_bias") or bias) else 0) + h * k * d + (d if bias else 0)
    if c.get("qk_layernorm"):
        attn += 2 * (k if rms else 2 * k)

    def mlp(f: int) -> int:
        gated = bool(c.get("gated_linear_unit"))
        return (2 if gated else 1) * d * f + f * d + (((2 if gated else 1) * f + d) if bias else 0)

    experts = c.get("num_moe_experts")
    freq = c.get("moe_layer_freq", 1)
    pattern = freq if isinstance(freq, list) else [1 if (experts and i % int(freq) == 0) else 0 for i in range(n)]  # type: ignore[call-overload]
    total = active = 0
    for i in range(n):
        if experts and pattern[i]:
            e, top, fe = int(experts), int(c["moe_router_topk"]), int(c["moe_ffn_hidden_size"])  # type: ignore[call-overload]
            base = 2 * norm + attn + d * e + (e if c.get("moe_router_enable_expert_bias") else 0)
            fs = c.get("moe_shared_expert_intermediate_size")
            base += mlp(int(fs)) if fs else 0  # type: ignore[call-overload]
            total += base + e * mlp(fe)
            active += base + top * mlp(fe)
        else:
            layer = 2 * norm + attn + mlp(int(c["ffn_hidden_size"]))  # type: ignore[call-overload]
            total, active = total + layer, active + layer
    outer = v * d + norm + (0 if c.get("share_embeddings_and_output_weights") else d * v)
    return total + outer, active + outer


def bridge_models() -> list[Model]:
    out = []
    for (commit, file, cls), (hf, published, names) in BRIDGE_MODELS.items():
        c = load_bridge_class(commit, file, cls)
        h = int(c["num_attention_heads"])  # type: ignore[call-overload]
        g = int(c.get("num_query_groups") or h)  # type: ignore[call-overload]
        moe = bool(c.get("num_moe_experts"))
        if published is None:
            total, active = bridge_parameters(c)
        else:
            total, active = int(published[0]), 0
        facts: dict[str, object] = {
            "parameterCount": total,
            "numLayers": int(c["num_layers"]),  # type: ignore[call-overload]
            "hiddenSize": int(c["hidden_size"]),  # type: ignore[call-overload]
            "attentionHeads": h,
            "kvHeads": g,
            "headDim": int(c.get("kv_channels") or int(c["hidden_size"]) // h),  # type: ignore[call-overload]
            "ffnSize": int(c["moe_ffn_hidden_size"] if moe else c["ffn_hidden_size"]),  # type: ignore[call-overload]
        }
        if published is None:
            facts["vocabSize"] = int(c["vocab_size"])  # type: ignore[call-overload]
        if published is None:  # the Ministral 3 classes keep a 32768 default that 'can be extended to 256k'
            facts["maxContext"] = int(c["seq_length"])  # type: ignore[call-overload]
        facts["attentionKind"] = attention_kind(h, g)
        if moe:
            facts.update(
                activeParameterCount=active,
                numExperts=int(c["num_moe_experts"]),  # type: ignore[call-overload]
                expertsPerToken=int(c["moe_router_topk"]),  # type: ignore[call-overload]
            )
            if c.get("moe_shared_expert_intermediate_size"):
                facts["sharedExperts"] = 1
        path = f"src/megatron/bridge/models/{file}"
        url = f"https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/{commit}/{path}"
        count = (
            f"the parameter count ({total:,}"
            + (f", {active:,} active per token" if moe else "")
            + ") is computed from those fields with scripts/gen_models.py's bridge_parameters (its docstring states "
            "the formula; a multi-token-prediction layer is not counted)"
            if published is None
            else f"the parameter count is the published one ({published[1]}: the language model, without the vision "
            "encoder); the provider's vocab_size is its base class's default, not this model's, so no vocabulary is stored"
        )
        note = (
            f"Architecture from Megatron-Bridge's provider class {cls} in {path} at {commit[:7]} (the Hugging Face "
            f"config of {hf}, which its docstring links, in Megatron terms); {count}."
            + (" Maximum context is seq_length." if published is None else "")
        )
        org, name = hf.split("/", 1)
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {total / 1e9:.2f}B-parameter {'mixture-of-experts ' if moe else ''}decoder-only language "
                "model published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=note,
                sources=[url],
                names=[*short_names(org, name), *names],
                hf_id=hf,
            )
        )
    return out


# --- LLMs from GenZ-LLM-Analyzer's model sets (Hugging Face configs transcribed by hand) ----------------

GENZ_GIT = Path("/work/.mirror/abhibambhaniya+GenZ-LLM-Analyzer/repo")
GENZ_COMMIT = "091bdd0a2777dfe4d405a8fcdd91c8f12b474bf3"
# GenZ (MIT) transcribes each model's config.json into a ModelConfig(...) under a comment linking it. Its
# transcriptions carry slips (OPT-13B's width is written 5140, Qwen1.5-MoE's layers 40), so only entries
# whose computed count matches the publisher's are used (tests/test_catalog.py checks them), and the
# formula's layout comes from the model type, named here: (file, variable) -> (Hub id, model type, names).
# The model types' layouts: qwen2 (LLaMA with q/k/v biases, separate output head: Qwen1.5), llama
# (Mistral family and Minitron: separate output head), chatglm (GLM-4), phimoe (Phi-3.5-MoE), opt.
GENZ_MODELS: dict[tuple[str, str], tuple[str, str, list[str]]] = {
    **{
        ("alibaba.py", f"qwen1_5_{size.replace('.', '_').lower()}_config"): (
            f"Qwen/Qwen1.5-{size}",
            "qwen2",
            [f"qwen1.5 {size.lower()}", f"qwen1.5-{size.lower()}-chat", f"Qwen/Qwen1.5-{size}-Chat"],
        )
        # 32B and 110B are left out: GenZ writes 64 heads (the checkpoint has 40) and 64 key-value heads (8),
        # and their counts miss the published 32.5B and 111B
        for size in ("0.5B", "1.8B", "4B", "7B", "14B", "72B")
    },
    ("mistral.py", "ministral_8b_config"): ("mistralai/Ministral-8B-Instruct-2410", "llama", ["Ministral 8B", "ministral-8b"]),
    ("mistral.py", "mistral_small_config"): (
        "mistralai/Mistral-Small-Instruct-2409",
        "llama",
        ["Mistral Small 22B", "mistral small 2409", "mistral-small-22b"],
    ),
    ("mistral.py", "mistral_large_config"): (
        "mistralai/Mistral-Large-Instruct-2407",
        "llama",
        ["Mistral Large 2", "Mistral Large 123B", "mistral large 2407"],
    ),
    ("nvidia.py", "minitron_8b_config"): ("nvidia/Mistral-NeMo-Minitron-8B-Base", "llama", ["Minitron 8B"]),
    ("misc.py", "glm_9b_config"): ("THUDM/glm-4-9b-chat", "chatglm", ["GLM-4 9B", "glm4 9b", "glm-4-9b"]),
    ("microsoft.py", "phi3moe_config"): ("microsoft/Phi-3.5-MoE-instruct", "phimoe", ["Phi-3.5-MoE", "phi 3.5 moe"]),
    ("misc.py", "dbrx_config"): ("databricks/dbrx-base", "dbrx", ["DBRX", "dbrx 132b"]),
    **{
        ("meta.py", var): (f"facebook/opt-{size}", "opt", [f"opt {size}", f"OPT-{size.upper()}"])
        for var, size in (
            ("opt_125m_config", "125m"),
            ("opt_1b_config", "1.3b"),
            ("opt_7b_config", "6.7b"),
            ("opt_30b_config", "30b"),
            ("opt_66b_config", "66b"),
        )
    },
}
GENZ_KEYS = {
    "num_decoder_layers": "num_hidden_layers",
    "max_model_len": "max_position_embeddings",
    "expert_top_k": "num_experts_per_tok",
}


def load_genz(file: str) -> dict[str, tuple[dict[str, object], str | None]]:
    """Each `name = ModelConfig(...)` of a GenZ model-set file: its literal keyword arguments (renamed to
    config.json keys) and the config.json URL in the comment line above it."""
    import ast

    text = git_show(GENZ_GIT, GENZ_COMMIT, f"GenZ/Models/Model_sets/{file}")
    lines = text.splitlines()
    out: dict[str, tuple[dict[str, object], str | None]] = {}
    for node in ast.parse(text).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        if getattr(node.value.func, "id", None) != "ModelConfig" or not isinstance(node.targets[0], ast.Name):
            continue
        c: dict[str, object] = {}
        for kw in node.value.keywords:
            value = _bridge_value(kw.value)  # literals and products such as 4*768 or 32*1024
            if value is not None:
                c[GENZ_KEYS.get(str(kw.arg), str(kw.arg))] = value
        above = lines[node.lineno - 2].strip()
        url = above[2:] if above.startswith("# https://") else None
        out[node.targets[0].id] = (c, url)
    return out


def genz_models() -> list[Model]:
    out = []
    files: dict[str, dict[str, tuple[dict[str, object], str | None]]] = {}
    for (file, var), (hf, kind, names) in GENZ_MODELS.items():
        if file not in files:
            files[file] = load_genz(file)
        c, config_url = files[file][var]
        c = dict(c)
        c["model_type"] = kind
        if "num_key_value_heads" not in c:  # GenZ leaves it out for multi-head attention models (OPT)
            c["num_key_value_heads"] = c["num_attention_heads"]
        if kind in ("phimoe", "dbrx"):  # GenZ writes the expert FFN size as intermediate_size
            c["moe_intermediate_size"] = c["intermediate_size"]
        path = f"GenZ/Models/Model_sets/{file}"
        url = f"https://github.com/abhibambhaniya/GenZ-LLM-Analyzer/blob/{GENZ_COMMIT}/{path}"
        what = f"GenZ-LLM-Analyzer's transcription {var} in {path} (MIT) of {config_url or 'the checkpoint config'}"
        m = extra_model(c, hf, hf.split("/", 1)[1], f"{KB}hf/{hf}", what, url)
        m.names += names
        out.append(m)
    return out


# --- BLOOM and GPT-Neo from llm-analysis's model configs ------------------------------------------------

LLMA_GIT = Path("/work/.mirror/cli99+llm-analysis/repo")
LLMA_COMMIT = "d841e40aec8c84b9e76ba9cfbce67418adb172bd"
# llm-analysis (Apache-2.0) keeps one JSON per Hugging Face checkpoint, named org_name, with the shapes
# its analysis needs (layers, heads, width, FFN size, vocabulary, context). Its 'bloom-175b.json' holds
# GPT-3's shapes, not BLOOM's, so only the files named for a checkpoint are read: file stem -> names.
LLMA_MODELS: dict[str, list[str]] = {
    "bigscience_bloom-560m": ["bloom 560m"],
    "bigscience_bloom-7b1": ["bloom 7b1", "bloom 7b"],
    "bigscience_bloomz-560m": ["bloomz 560m"],
    "bigscience_bloomz-7b1-mt": ["bloomz 7b1 mt"],
    "EleutherAI_gpt-neo-125m": ["gpt-neo 125m", "gpt neo 125m"],
    "EleutherAI_gpt-neo-1.3B": ["gpt-neo 1.3b", "gpt neo 1.3b"],
    "EleutherAI_gpt-neo-2.7B": ["gpt-neo 2.7b", "gpt neo 2.7b"],
}


def llma_parameters(c: dict[str, object]) -> int:
    """Parameters of a BLOOM or GPT-Neo checkpoint from its shapes (head tied to the token embedding in both).

    bloom: embedding V*d and its LayerNorm 2d; per layer two LayerNorms 2*2d, fused qkv d*3d + 3d, dense
    d*d + d, MLP d*f + f + f*d + d; final LayerNorm 2d (ALiBi: no position table). gpt_neo: token V*d and
    position P*d embeddings; per layer two LayerNorms 2*2d, q/k/v d*d each without bias, output d*d + d,
    MLP d*f + f + f*d + d; final LayerNorm 2d.
    """
    v, d, n, f = (int(c[k]) for k in ("vocab_size", "hidden_dim", "num_layers", "ffn_embed_dim"))  # type: ignore[call-overload]
    mlp = d * f + f + f * d + d
    if c["model_type"] == "bloom":
        return v * d + 2 * d + n * (4 * d + 3 * d * d + 3 * d + d * d + d + mlp) + 2 * d
    if c["model_type"] == "gpt_neo":
        return v * d + int(c["max_seq_len"]) * d + n * (4 * d + 3 * d * d + d * d + d + mlp) + 2 * d  # type: ignore[call-overload]
    raise ValueError(f"no parameter formula for model_type {c['model_type']}")


def llma_models() -> list[Model]:
    import json

    out = []
    for stem, names in LLMA_MODELS.items():
        path = f"llm_analysis/model_configs/{stem}.json"
        c = json.loads(git_show(LLMA_GIT, LLMA_COMMIT, path))
        total = llma_parameters(c)
        heads = int(c["n_head"])
        org, name = stem.split("_", 1)
        hf = f"{org}/{name}"
        facts: dict[str, object] = {
            "parameterCount": total,
            "numLayers": int(c["num_layers"]),
            "hiddenSize": int(c["hidden_dim"]),
            "attentionHeads": heads,
            "kvHeads": heads,
            "headDim": int(c["hidden_dim"]) // heads,
            "ffnSize": int(c["ffn_embed_dim"]),
            "vocabSize": int(c["vocab_size"]),
        }
        if c.get("max_seq_len"):
            facts["maxContext"] = int(c["max_seq_len"])
        facts["attentionKind"] = "MHA"
        url = f"https://github.com/cli99/llm-analysis/blob/{LLMA_COMMIT}/{path}"
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {total / 1e9:.2f}B-parameter decoder-only language model published on the Hugging Face Hub."
                if total >= 1e9
                else f"{hf}: a {total / 1e6:.0f}M-parameter decoder-only language model published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=(
                    f"Architecture from llm-analysis's {path} (Apache-2.0), its transcription of {hf}'s config; the "
                    f"parameter count ({total:,}) is computed from those shapes with scripts/gen_models.py's "
                    "llma_parameters (its docstring states the formula)."
                    + ("" if c.get("max_seq_len") else " The file gives no maximum context (BLOOM uses ALiBi).")
                ),
                sources=[url],
                names=[*short_names(org, name), *names],
                hf_id=hf,
            )
        )
    return out


# --- Gemma 4 from MaxText's model configs, with KerasHub's published counts ------------------------------

# MaxText model YAML -> (HF_IDS Hub id, the hf_model_configs.py variable holding its layer_types, KerasHub
# preset with the published count, active count or None, other names). The parameter counts are the
# published ones (KerasHub's preset metadata): the architecture (per-layer embeddings of the E models,
# shared key/value projections of the global layers, a dense MLP beside the experts) needs formulas not
# written here.
GEMMA4: dict[str, tuple[str, str, str, float | None, list[str]]] = {
    "gemma4-31b": ("google/gemma-4-31b-it", "gemma4_31b_dict", "gemma4_instruct_31b", None, ["Gemma 4 31B", "gemma4 31b"]),
    "gemma4-26b": ("google/gemma-4-26b-a4b-it", "gemma4_26b_dict", "gemma4_instruct_26b_a4b", 4e9, ["Gemma 4 26B"]),
    "gemma4-e4b": ("google/gemma-4-E4B-it", "gemma4_e4b_dict", "gemma4_instruct_4b", None, ["Gemma 4 E4B", "gemma4 e4b"]),
    "gemma4-e2b": ("google/gemma-4-E2B-it", "gemma4_e2b_dict", "gemma4_instruct_2b", None, ["Gemma 4 E2B", "gemma4 e2b"]),
}


def maxtext_gemma4_text_configs() -> dict[str, dict[str, object]]:
    """The text_config entries of MaxText's Gemma 4 transcriptions (layer_types, max_position_embeddings),
    following `b = a.copy()` and `b["text_config"].update({...})` statements; list products such as
    [...] * 5 are evaluated, nothing is executed."""
    import ast

    tree = ast.parse(git_show(MAXTEXT_GIT, MAXTEXT_COMMIT, MAXTEXT_HF_CONFIGS))
    text: dict[str, dict[str, object]] = {}

    def read(d: ast.Dict) -> dict[str, object]:
        return {
            str(ast.literal_eval(k)): _bridge_value(v)
            for k, v in zip(d.keys, d.values, strict=True)
            if k is not None and ast.literal_eval(k) in ("layer_types", "max_position_embeddings", "sliding_window")
        }

    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("gemma4"):
            name, value = node.targets[0].id, node.value
            if isinstance(value, ast.Dict):
                for k, v in zip(value.keys, value.values, strict=True):
                    if k is not None and ast.literal_eval(k) == "text_config" and isinstance(v, ast.Dict):
                        text[name] = read(v)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy":
                source = value.func.value
                if isinstance(source, ast.Name) and source.id in text:
                    text[name] = dict(text[source.id])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr == "update" and isinstance(func.value, ast.Subscript):
                target = func.value.value
                if isinstance(target, ast.Name) and target.id in text and node.value.args:
                    arg = node.value.args[0]
                    if isinstance(arg, ast.Dict):
                        text[target.id].update(read(arg))
    return text


def gemma4_models() -> list[Model]:
    import yaml

    text = maxtext_gemma4_text_configs()
    keras = load_keras_presets("gemma4")
    keras_url = f"https://github.com/keras-team/keras-hub/blob/{KERAS_COMMIT}/keras_hub/src/models/gemma4/gemma4_presets.py"
    out = []
    for stem, (hf, var, preset, active, names) in GEMMA4.items():
        path = f"src/maxtext/configs/models/{stem}.yml"
        raw = yaml.safe_load(git_show(MAXTEXT_GIT, MAXTEXT_COMMIT, path))
        meta = keras[preset]["metadata"]
        assert isinstance(meta, dict)
        params = float(meta["params"])
        layer_types = text[var]["layer_types"]
        assert isinstance(layer_types, list) and len(layer_types) == raw["base_num_decoder_layers"]
        heads, kv = int(raw["base_num_query_heads"]), int(raw["base_num_kv_heads"])
        facts: dict[str, object] = {
            "parameterCount": params,
            "numLayers": int(raw["base_num_decoder_layers"]),
            "hiddenSize": int(raw["base_emb_dim"]),
            "attentionHeads": heads,
            "kvHeads": kv,
            "headDim": int(raw["head_dim"]),
            "ffnSize": int(raw.get("base_moe_mlp_dim") or raw["base_mlp_dim"]),
            "vocabSize": int(raw["vocab_size"]),
            "maxContext": int(text[var]["max_position_embeddings"]),  # type: ignore[call-overload]
            "attentionKind": attention_kind(heads, kv),
            "slidingWindow": int(raw["sliding_window_size"]),
            "slidingWindowLayers": sum(1 for t in layer_types if t == "sliding_attention"),
        }
        if raw.get("num_experts"):
            facts.update(
                activeParameterCount=active,
                numExperts=int(raw["num_experts"]),
                expertsPerToken=int(raw["num_experts_per_tok"]),
                sharedExperts=int(raw.get("shared_experts") or 0),
            )
        description = " ".join(str(meta.get("description", "")).split())
        note = (
            f"Architecture from MaxText's model config {path} (layers, width, heads, sliding-window key-value heads "
            f"and head size, FFN size, vocabulary, window) and the layer_types and max_position_embeddings of its "
            f"Hugging Face config transcription {var} in {MAXTEXT_HF_CONFIGS}; the parameter count is KerasHub's "
            f"published one for preset {preset} ('{description[:160]}'). The global layers use "
            f"{raw.get('global_num_kv_heads') or kv} key-value heads of size {raw['global_head_dim']} with keys "
            "and values shared (share_kv_projections), so a KV-cache estimate from the sliding layers' heads "
            "overstates theirs"
            + (
                f"; {raw['num_kv_shared_layers']} layers reuse earlier layers' caches"
                if raw.get("num_kv_shared_layers")
                else ""
            )
            + "."
        )
        org, name = hf.split("/", 1)
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: Gemma 4, {params / 1e9:.1f}B parameters, a "
                + ("mixture-of-experts " if raw.get("num_experts") else "")
                + "decoder-only model with a vision encoder, published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=note,
                sources=[
                    f"https://github.com/AI-Hypercomputer/maxtext/blob/{MAXTEXT_COMMIT}/{path}",
                    MAXTEXT_HF_CONFIGS_URL,
                    MAXTEXT_IDS_URL,
                    keras_url,
                ],
                names=[*short_names(org, name), *names],
                hf_id=hf,
            )
        )
    return out


# --- StarCoder2 3B / 15B: NVIDIA NeMo's configs, the Transformers page's sizes ----------------------------

NEMO_GIT = Path("/work/.mirror/NVIDIA+NeMo/repo")
NEMO_COMMIT = "8cfedd7203462cb251a914e700e5605444277561"
STARCODER2_DOC_URL = (
    "https://github.com/huggingface/transformers/blob/056d8485949e05a9790d047a7a68793ebbf1d017/docs/source/en/model_doc/starcoder2.md"
)
# NeMo config class -> (Hub id, the published size in billions). NeMo's StarCoder2 configs give the shapes
# but not the vocabulary or the embedding tying, so the count is the publisher's rounded size (Transformers'
# StarCoder2 page: 'comes in 3 different sizes with 3B, 7B and 15B parameters', 'a context window of
# 16,384 tokens with a sliding window attention of 4,096 tokens').
NEMO_STARCODER2 = {"Starcoder2Config3B": ("bigcode/starcoder2-3b", 3.0), "Starcoder2Config15B": ("bigcode/starcoder2-15b", 15.0)}


def nemo_starcoder2_models() -> list[Model]:
    classes = _bridge_classes(NEMO_COMMIT, "starcoder2.py", NEMO_GIT, "nemo/collections/llm/gpt/model/")
    path = "nemo/collections/llm/gpt/model/starcoder2.py"
    url = f"https://github.com/NVIDIA/NeMo/blob/{NEMO_COMMIT}/{path}"
    out = []
    for cls, (hf, billions) in NEMO_STARCODER2.items():
        c: dict[str, object] = {}
        for name in (*classes[cls][0], cls):
            c.update(classes[name][1] if name in classes else {})
        h, g = int(c["num_attention_heads"]), int(c["num_query_groups"])  # type: ignore[call-overload]
        d = int(c["hidden_size"])  # type: ignore[call-overload]
        facts: dict[str, object] = {
            "parameterCount": billions * 1e9,
            "numLayers": int(c["num_layers"]),  # type: ignore[call-overload]
            "hiddenSize": d,
            "attentionHeads": h,
            "kvHeads": g,
            "headDim": d // h,
            "ffnSize": int(c["ffn_hidden_size"]),  # type: ignore[call-overload]
            "maxContext": 16384,
            "attentionKind": attention_kind(h, g),
            "slidingWindow": 4096,
            "slidingWindowLayers": int(c["num_layers"]),  # type: ignore[call-overload]
        }
        org, name = hf.split("/", 1)
        out.append(
            Model(
                iri=f"{KB}hf/{hf}",
                classes=["kbq:LargeLanguageModel", "kbq:Model"],
                label=name,
                comment=f"{hf}: a {billions:.0f}B-parameter code language model published on the Hugging Face Hub.",
                modality="kb:TextModality",
                facts=facts,
                note=(
                    f"Layers, width, heads, key-value groups and FFN size from NVIDIA NeMo's {cls} in {path} (Apache-2.0); "
                    "the head size is width / heads. The parameter count is the published rounded size, and the context "
                    "(16,384) and sliding window (4,096, every layer) are stated on Transformers' StarCoder2 page; NeMo "
                    "gives no vocabulary, so none is stored."
                ),
                sources=[url, STARCODER2_DOC_URL],
                names=[*short_names(org, name), f"StarCoder2 {billions:.0f}B"],
                hf_id=hf,
            )
        )
    return out


# --- Turtle ------------------------------------------------------------------------------------------


def literal(value: object) -> str:
    if isinstance(value, str) and value in ("MHA", "GQA", "MQA", "MLA"):
        return f"kb:{value}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value!r}"
    raise TypeError(value)


DECIMAL = {"parameterCount", "activeParameterCount", "forwardGflops"}


def fact(key: str, value: object) -> str:
    if key in DECIMAL:
        return f"kbq:{key} {float(value)!r}" if not isinstance(value, float) else f"kbq:{key} {value!r}"
    return f"kbq:{key} {literal(value)}"


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dedupe(models: Iterable[Model], taken: dict[str, str], kb_models: set[str]) -> tuple[list[Model], list[str]]:
    """Drop models whose label names something already in the KB; drop names already taken."""
    kept, skipped = [], []
    replaced: dict[str, str] = {}
    for m in models:
        owner = taken.get(normalise(m.label))
        if owner is not None:
            skipped.append(f"{m.label} (already {owner.removeprefix(KB)})")
            replaced[m.iri] = owner
            continue
        names, keys = [], set()
        for n in [m.label, *m.names]:
            key = normalise(n)
            if taken.get(key, m.iri) == m.iri and key not in keys:  # one name per normal form
                taken[key] = m.iri
                keys.add(key)
                names.append(n)
        m.names = [n for n in names if n != m.label]
        kept.append(m)
    kept_iris = {m.iri for m in kept}
    for m in kept:
        if m.base in replaced:  # the base is a hand-written model: link to it
            m.base = replaced[m.base]
        if m.base is not None and m.base not in kept_iris and m.base not in kb_models:
            m.base = None
    return kept, skipped


def render(models: list[Model], skipped: list[str]) -> str:
    lines = [
        "# GENERATED by scripts/gen_models.py - do not edit by hand; change the script and run it again.",
        "# Models from public collections of configurations (litgpt's config list; mlc-llm's presets; MaxText's",
        "# candle's model presets; KerasHub's preset parameter counts; ollama's GGUF test metadata;",
        "# Megatron-Bridge's size-specific providers; GenZ-LLM-Analyzer's and llm-analysis's transcribed configs;",
        "# transcribed Hugging Face configs and model YAMLs; timm's ImageNet results and",
        "# benchmark tables), one model per configuration, with the collection file at a commit as source.",
        "# Conventions: kb/README-models.md. Skipped because the hand-written KB already has them:",
        *(f"#   {s}" for s in skipped),
        "@prefix kbq:     <https://kbq.dev/ontology#> .",
        "@prefix kb:      <https://kbq.dev/kb/> .",
        "@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .",
        "@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .",
        "@prefix dcterms: <http://purl.org/dc/terms/> .",
        "",
    ]
    for m in models:
        body = [f"<{m.iri}> a {', '.join(m.classes)} ;", f"    rdfs:label {quote(m.label)} ;"]
        if m.names:
            body.append(f"    skos:altLabel {', '.join(quote(n) for n in m.names)} ;")
        body.append(f"    rdfs:comment {quote(m.comment)} ;")
        if m.hf_id:
            body.append(f"    kbq:huggingFaceId {quote(m.hf_id)} ;")
        if m.base:
            body.append(f"    kbq:baseModel <{m.base}> ;")
        body.append(f"    kbq:modality {m.modality} ;")
        body.append("    " + " ; ".join(fact(k, v) for k, v in m.facts.items()) + " ;")
        body.append(f"    kbq:note {quote(m.note)} ;")
        body.append("    dcterms:source " + " , ".join(f"<{s}>" for s in m.sources) + " .")
        lines += [*body, ""]
    lit = "litgpt litgpt/config.py: model configurations per Hugging Face checkpoint (Apache-2.0)"
    mlc = "mlc-llm model_preset.py: Hugging Face config.json files copied verbatim (Apache-2.0)"
    results = "timm results-imagenet.csv: ImageNet-1k results with parameter counts (Apache-2.0)"
    bench = "timm benchmark-infer-amp-nchw-pt291-cu128-4090.csv: inference benchmark with GMACs per image (Apache-2.0)"
    # MAXTEXT_HF_CONFIGS_URL is declared (label, tier) in the hand-written kb/models.ttl.
    mt_ids = "MaxText utils/globals.py: HF_IDS, the Hub checkpoint of each model config (Apache-2.0)"
    sources = [
        (LITGPT_URL, lit, "TierDatabase", "Lightning AI"),
        (MLC_PRESETS_URL, mlc, "TierDatabase", "MLC"),
        (MAXTEXT_IDS_URL, mt_ids, "TierDatabase", "Google (MaxText)"),
        *(
            (
                f"https://github.com/AI-Hypercomputer/maxtext/blob/{MAXTEXT_COMMIT}/src/maxtext/configs/models/{stem}.yml",
                f"MaxText model config {stem}.yml (Apache-2.0)",
                "TierDatabase",
                "Google (MaxText)",
            )
            for stem in MAXTEXT_YAML_MODELS
        ),
        *(
            (
                f"https://github.com/huggingface/candle/blob/{CANDLE_COMMIT}/candle-transformers/src/models/{file}",
                f"candle candle-transformers/src/models/{file}: model configurations transcribed from config.json "
                "(MIT / Apache-2.0)",
                "TierDatabase",
                "Hugging Face (candle)",
            )
            for file in sorted({file for file, _ in CANDLE_PRESETS} | {"marian.rs"})
        ),
        *(
            (
                str(e["source"]),
                f"{str(e['source']).split('/blob/')[0].removeprefix('https://github.com/')} "
                f"{str(e['source']).split('/', 7)[-1]}: a model's config.json copied in code ({e['licence']})",
                "TierDatabase",
                str(e["source"]).split("/")[3],
            )
            for e in TRANSCRIBED.values()
        ),
        *(
            (
                str(e["also"]),
                f"{str(e['also']).split('/blob/')[0].removeprefix('https://github.com/')} "
                f"{str(e['also']).split('/', 7)[-1]}: model configurations (Apache-2.0)",
                "TierDatabase",
                str(e["also"]).split("/")[3],
            )
            for e in TRANSCRIBED.values()
            if e.get("also")
        ),
        *(
            (
                f"https://github.com/keras-team/keras-hub/blob/{KERAS_COMMIT}/keras_hub/src/models/{family}/{family}_presets.py",
                f"KerasHub {family}_presets.py: preset metadata with each checkpoint's parameter count (Apache-2.0)",
                "TierDatabase",
                "Keras team (KerasHub)",
            )
            for family in KERAS_PRESETS
        ),
        (SAM_PAPER, "Kirillov et al., Segment Anything (arXiv 2304.02643)", "TierPaper", "Meta AI"),
        (
            QWEN3_VL_30B_LISTING,
            "free2aitools listing of Qwen/Qwen3-VL-30B-A3B-Instruct (parameters 31.07B and its config)",
            "TierReported",
            "free2aitools",
        ),
        (
            f"https://github.com/NVIDIA/NeMo/blob/{NEMO_COMMIT}/nemo/collections/llm/gpt/model/starcoder2.py",
            "NVIDIA/NeMo nemo/collections/llm/gpt/model/starcoder2.py: StarCoder2 model configurations (Apache-2.0)",
            "TierDatabase",
            "NVIDIA",
        ),
        (STARCODER2_DOC_URL, "Hugging Face Transformers model page: StarCoder2", "TierReported", "Hugging Face"),
        *(
            (
                f"https://github.com/AI-Hypercomputer/maxtext/blob/{MAXTEXT_COMMIT}/src/maxtext/configs/models/{stem}.yml",
                f"MaxText model config {stem}.yml (Apache-2.0)",
                "TierDatabase",
                "Google (MaxText)",
            )
            for stem in GEMMA4
        ),
        (
            f"https://github.com/keras-team/keras-hub/blob/{KERAS_COMMIT}/keras_hub/src/models/gemma4/gemma4_presets.py",
            "KerasHub gemma4_presets.py: preset metadata with each checkpoint's parameter count (Apache-2.0)",
            "TierDatabase",
            "Keras team (KerasHub)",
        ),
        *(
            (
                f"https://github.com/keras-team/keras-hub/blob/{KERAS_COMMIT}/{keras_file}",
                f"KerasHub {keras_file.rsplit('/', 1)[-1]}: preset metadata with each checkpoint's parameter count and "
                "backbone (Apache-2.0)",
                "TierDatabase",
                "Keras team (KerasHub)",
            )
            for same in MAXTEXT_SAME_SHAPES.values()
            for _, _, keras_file in same
        ),
        *(
            (
                f"https://github.com/cli99/llm-analysis/blob/{LLMA_COMMIT}/llm_analysis/model_configs/{stem}.json",
                f"llm-analysis model_configs/{stem}.json: a checkpoint's shapes (Apache-2.0)",
                "TierDatabase",
                "llm-analysis",
            )
            for stem in LLMA_MODELS
        ),
        *(
            (
                f"https://github.com/abhibambhaniya/GenZ-LLM-Analyzer/blob/{GENZ_COMMIT}/GenZ/Models/Model_sets/{file}",
                f"GenZ-LLM-Analyzer Model_sets/{file}: Hugging Face configs transcribed by hand (MIT)",
                "TierDatabase",
                "GenZ-LLM-Analyzer",
            )
            for file in sorted({file for file, _ in GENZ_MODELS})
        ),
        *(
            (
                f"https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/{commit}/src/megatron/bridge/models/{file}",
                f"Megatron-Bridge {file} at {commit[:7]}: model providers with Hugging Face configs in Megatron terms "
                "(Apache-2.0)",
                "TierDatabase",
                "NVIDIA (Megatron-Bridge)",
            )
            for commit, file in sorted({(commit, file) for commit, file, _ in BRIDGE_MODELS})
        ),
        *(
            (
                f"https://github.com/ollama/ollama/blob/{OLLAMA_COMMIT}/{path}",
                f"ollama {path}: GGUF metadata its converter writes for a checkpoint (MIT)",
                "TierDatabase",
                "Ollama",
            )
            for path in OLLAMA_MODELS
        ),
        (COHERE_DOC_URL, "Hugging Face Transformers model page: Cohere (Command-R)", "TierReported", "Hugging Face"),
        *(
            (
                url,
                f"{url.split('/blob/')[0].removeprefix('https://github.com/')} README.md: a copy of {hf}'s Hugging Face "
                "model card",
                "TierReported",
                hf.split("/")[0],
            )
            for hf, (_, _, url, _, _) in MODEL_CARDS.items()
        ),
        (TIMM_RESULTS_URL, results, "TierMeasured", "Hugging Face (timm)"),
        (TIMM_BENCH_URL, bench, "TierMeasured", "Hugging Face (timm)"),
    ]
    lines.append("# --- sources ---")
    for url, label, tier, publisher in sources:
        lines += [
            f"<{url}> a kbq:Source ; rdfs:label {quote(label)} ;",
            f'    kbq:tier kb:{tier} ; dcterms:publisher "{publisher}" .',
        ]
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    taken, kb_models = existing_names(ROOT / "kb")
    collected = [
        *llm_models(),
        *mlc_models(),
        *maxtext_models(),
        *candle_models(),
        *marian_models(),
        *transcribed_models(),
        *ollama_models(),
        *model_card_models(),
        *bridge_models(),
        *genz_models(),
        *llma_models(),
        *gemma4_models(),
        *nemo_starcoder2_models(),
        *keras_models(),
        *timm_models(),
    ]
    models, skipped = dedupe(collected, taken, kb_models)
    args.out.write_text(render(models, skipped))
    print(f"{len(models)} models written to {args.out} ({len(skipped)} skipped as already in the KB)")


if __name__ == "__main__":
    main()
