"""`kbq model import FILE`: a model's architecture from a local file, as a Turtle overlay for `--kb`.

Reads headers only, never weights, and fetches nothing:
- a Hugging Face config.json (layers, hidden size, heads, KV heads, head dim, FFN size, vocabulary,
  context, experts); the parameter count is computed from those shapes (a gated MLP, as Llama,
  Mistral, Qwen and Gemma use, and the note says so) unless a safetensors file beside it has them;
- a GGUF file's header (the `gguf` package, llama.cpp's reader): its metadata and tensor shapes,
  so the parameter count is the sum of the tensors' elements;
- a safetensors file's header or a sharded checkpoint's index (the `safetensors` package):
  tensor shapes (exact parameter count), layers, hidden size, FFN size and vocabulary from the
  tensor names; heads and KV heads from a config.json beside it.
The overlay's model is sourced to the file it was read from (kbq:tier datasheet: the model's own
published shape). A file that is not what it claims gets a KnowledgeFileError naming the file
and what is wrong."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from kbq.errors import KnowledgeFileError

KBQ = "https://kbq.dev/ontology#"
KB = "https://kbq.dev/kb/"

# config.json keys (several spellings across architectures) -> kbq property
_CONFIG_KEYS = {
    "numLayers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hiddenSize": ("hidden_size", "n_embd", "d_model"),
    "attentionHeads": ("num_attention_heads", "n_head", "num_heads"),
    "kvHeads": ("num_key_value_heads", "num_kv_heads", "multi_query_group_num"),
    "headDim": ("head_dim",),
    "ffnSize": ("intermediate_size", "n_inner", "ffn_hidden_size"),
    "vocabSize": ("vocab_size", "padded_vocab_size"),
    "maxContext": ("max_position_embeddings", "n_positions", "seq_length", "max_sequence_length"),
    "numExperts": ("num_local_experts", "num_experts", "n_routed_experts"),
    "expertsPerToken": ("num_experts_per_tok", "moe_top_k"),
}
# GGUF metadata suffixes ('llama.block_count') -> kbq property
_GGUF_KEYS = {
    "numLayers": "block_count",
    "hiddenSize": "embedding_length",
    "attentionHeads": "attention.head_count",
    "kvHeads": "attention.head_count_kv",
    "headDim": "attention.key_length",
    "ffnSize": "feed_forward_length",
    "maxContext": "context_length",
    "numExperts": "expert_count",
    "expertsPerToken": "expert_used_count",
    "vocabSize": "vocab_size",
}


def read_model(path: str | Path, name: str | None = None) -> dict[str, Any]:
    """The architecture facts a file states: {'label', 'facts': {property: number}, 'notes', 'hub_id'}."""
    file = Path(path)
    if not file.is_file():
        raise KnowledgeFileError(str(file), None, "no such file")
    if file.name.endswith(".gguf"):
        found = _from_gguf(file)
    elif file.name.endswith(".safetensors.index.json"):
        found = _from_index(file)
    elif file.name.endswith(".safetensors"):
        found = _from_safetensors(file)
    elif file.suffix == ".json":
        found = _from_config(file)
    else:
        raise KnowledgeFileError(
            str(file), None, "not a model file kbq reads (config.json, .gguf, .safetensors, .safetensors.index.json)"
        )
    if name:
        found["label"] = name
    facts = found["facts"]
    if not facts.get("parameterCount"):
        raise KnowledgeFileError(str(file), None, "no parameter count can be read or computed from this file")
    return found


def to_turtle(found: dict[str, Any], source: str | Path) -> str:
    """The overlay: one kbq:Model with the facts, its source (the file) with a tier."""
    from rdflib import RDF, RDFS, Graph, Literal, Namespace, URIRef
    from rdflib.namespace import DCTERMS, SKOS, XSD

    kbq, kb = Namespace(KBQ), Namespace(KB)
    g = Graph()
    g.bind("kbq", kbq)
    g.bind("kb", kb)
    g.bind("dcterms", DCTERMS)
    g.bind("skos", SKOS)
    label = str(found["label"])
    model = kb["Imported_" + (re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_") or "model")]
    src = URIRef(Path(source).resolve().as_uri())
    g.add((model, RDF.type, kbq.Model))
    if found.get("llm", True):
        g.add((model, RDF.type, kbq.LargeLanguageModel))
    g.add((model, RDFS.label, Literal(label)))
    g.add((model, RDFS.comment, Literal(f"Imported by 'kbq model import' from {Path(source).name}.")))
    if found.get("hub_id"):
        g.add((model, kbq.huggingFaceId, Literal(str(found["hub_id"]))))
    for prop, value in sorted(found["facts"].items()):
        if prop == "parameterCount":
            g.add((model, kbq[prop], Literal(Decimal(int(value)), datatype=XSD.decimal)))
        else:
            g.add((model, kbq[prop], Literal(int(value), datatype=XSD.integer)))
    kv, heads = found["facts"].get("kvHeads"), found["facts"].get("attentionHeads")
    if kv and heads:
        g.add((model, kbq.attentionKind, kb.MHA if kv == heads else kb.GQA))
    if found.get("notes"):
        g.add((model, kbq.note, Literal(" ".join(found["notes"]))))
    g.add((model, DCTERMS.source, src))
    g.add((src, RDF.type, kbq.Source))
    g.add((src, RDFS.label, Literal(f"model file {Path(source).name} (read by kbq model import)")))
    g.add((src, kbq.tier, kb.TierDatasheet))
    return str(g.serialize(format="turtle"))


# --- readers -------------------------------------------------------------------------------------


def _json(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise KnowledgeFileError(str(file), None, f"cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise KnowledgeFileError(str(file), exc.lineno, f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise KnowledgeFileError(str(file), None, "not a JSON object")
    return data


def _from_config(file: Path) -> dict[str, Any]:
    config = _json(file)
    config = {**config.get("text_config", {}), **config} if isinstance(config.get("text_config"), dict) else config
    facts: dict[str, float] = {}
    for prop, keys in _CONFIG_KEYS.items():
        for key in keys:
            value = config.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                facts[prop] = value
                break
    if "numLayers" not in facts or "hiddenSize" not in facts:
        raise KnowledgeFileError(
            str(file), None, "not a model config: no layer count or hidden size (num_hidden_layers, hidden_size)"
        )
    heads = facts.get("attentionHeads")
    if heads and "headDim" not in facts:
        facts["headDim"] = facts["hiddenSize"] // heads
    if heads and "kvHeads" not in facts:
        facts["kvHeads"] = heads
    notes = [
        f"Architecture from {file.name} ({', '.join(config.get('architectures', []) or [str(config.get('model_type', '?'))])})."
    ]
    beside = sorted(file.parent.glob("*.safetensors"))
    if beside:
        counted = _from_safetensors_files(beside)
        facts["parameterCount"] = counted["facts"]["parameterCount"]
        notes.append(f"Parameter count: the sum of the tensors in {len(beside)} safetensors file(s) beside it.")
    else:
        count = _dense_decoder_parameters(facts, bool(config.get("tie_word_embeddings", False)))
        if count:
            facts["parameterCount"] = count
            notes.append(
                "Parameter count computed from the shapes, assuming a gated MLP (three FFN matrices, as Llama, "
                "Mistral, Qwen and Gemma have) and no biases; tied embeddings counted once if the config says so."
            )
    name = str(config.get("_name_or_path") or file.parent.name or file.stem)
    return {"label": name.split("/")[-1] or file.stem, "facts": facts, "notes": notes, "hub_id": name if "/" in name else None}


def _dense_decoder_parameters(facts: dict[str, float], tied: bool) -> float | None:
    needed = ("numLayers", "hiddenSize", "attentionHeads", "kvHeads", "headDim", "ffnSize", "vocabSize")
    if not all(facts.get(k) for k in needed):
        return None
    layers, hidden, heads, kv, dim, ffn, vocab = (facts[k] for k in needed)
    experts = facts.get("numExperts", 1)
    attention = hidden * heads * dim * 2 + hidden * kv * dim * 2
    mlp = 3 * hidden * ffn * experts + (hidden * experts if experts > 1 else 0)  # + router
    per_layer = attention + mlp + 2 * hidden
    embeddings = vocab * hidden * (1 if tied else 2)
    return float(layers * per_layer + embeddings + hidden)


def _from_gguf(file: Path) -> dict[str, Any]:
    from gguf import GGUFReader

    try:
        reader = GGUFReader(str(file), "r")
    except (ValueError, OSError, KeyError, IndexError) as exc:
        raise KnowledgeFileError(str(file), None, f"not a readable GGUF file: {exc}") from None

    def field(key: str) -> Any:
        f = reader.fields.get(key)
        if f is None or not f.data:
            return None
        value = f.parts[f.data[0]]
        if f.types and f.types[0].name == "STRING":
            return bytes(value).decode("utf-8", errors="replace")
        return value[0].item() if hasattr(value, "__len__") and len(value) == 1 else None

    arch = field("general.architecture")
    if not arch:
        raise KnowledgeFileError(str(file), None, "GGUF header has no general.architecture")
    facts: dict[str, float] = {}
    for prop, suffix in _GGUF_KEYS.items():
        value = field(f"{arch}.{suffix}")
        if isinstance(value, int) and value > 0:
            facts[prop] = value
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    if "vocabSize" not in facts and tokens is not None and tokens.data:
        facts["vocabSize"] = len(tokens.data)
    heads = facts.get("attentionHeads")
    if heads and "headDim" not in facts and facts.get("hiddenSize"):
        facts["headDim"] = facts["hiddenSize"] // heads
    facts["parameterCount"] = float(sum(int(t.n_elements) for t in reader.tensors))
    name = field("general.name") or file.stem
    return {
        "label": str(name),
        "facts": facts,
        "notes": [
            f"Architecture from the GGUF header of {file.name} (architecture {arch}); "
            f"parameter count: the sum of its {len(reader.tensors)} tensors."
        ],
    }


def _from_safetensors(file: Path) -> dict[str, Any]:
    return _with_config_beside(_from_safetensors_files([file]), file.parent)


def _from_index(file: Path) -> dict[str, Any]:
    index = _json(file)
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise KnowledgeFileError(str(file), None, "not a safetensors index: no weight_map")
    shards = sorted({file.parent / str(s) for s in weight_map.values()})
    missing = [s.name for s in shards if not s.is_file()]
    if missing:
        raise KnowledgeFileError(
            str(file), None, f"shard(s) not beside the index: {', '.join(missing[:3])} (their headers hold the shapes)"
        )
    return _with_config_beside(_from_safetensors_files(shards), file.parent)


def _with_config_beside(found: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The headers' facts completed by a config.json in the same folder (the headers' shapes win)."""
    config = folder / "config.json"
    if config.is_file():
        from_config = _from_config(config)
        found["facts"] = {**from_config["facts"], **found["facts"]}
        found["label"], found["hub_id"] = from_config["label"], from_config.get("hub_id")
    return found


def _from_safetensors_files(files: list[Path]) -> dict[str, Any]:
    from safetensors import SafetensorError, safe_open

    shapes: dict[str, list[int]] = {}
    for file in files:
        try:
            with safe_open(str(file), framework="numpy") as handle:
                for key in handle.keys():
                    shapes[key] = list(handle.get_slice(key).get_shape())
        except (SafetensorError, OSError, ValueError) as exc:
            raise KnowledgeFileError(str(file), None, f"not a readable safetensors header: {exc}") from None
    if not shapes:
        raise KnowledgeFileError(str(files[0]), None, "safetensors file holds no tensors")
    facts: dict[str, float] = {"parameterCount": float(sum(math.prod(s) for s in shapes.values()))}
    layers = {int(m.group(1)) for k in shapes if (m := re.search(r"\.layers?\.(\d+)\.", k))}
    if layers:
        facts["numLayers"] = max(layers) + 1
    for key, shape in shapes.items():
        if key.endswith(("embed_tokens.weight", "wte.weight", "tok_embeddings.weight")) and len(shape) == 2:
            facts["vocabSize"], facts["hiddenSize"] = shape
        elif re.search(r"layers?\.0\.mlp\.(gate_proj|up_proj)\.weight$", key) and len(shape) == 2:
            facts["ffnSize"] = shape[0]
    return {
        "label": files[0].name.split(".")[0].split("-0000")[0],
        "facts": facts,
        "notes": [f"Parameter count: the sum of the tensor shapes in the header(s) of {', '.join(f.name for f in files[:3])}."],
    }
