"""`kbq model import FILE`: tiny config.json, GGUF and safetensors files built with the packages
that read them; the overlay answers memory questions with `--kb`, and bad files get a clear error
naming the file and what is wrong (never a traceback)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kbq.build.model_import import read_model, to_turtle
from kbq.errors import KnowledgeFileError

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {
    "_name_or_path": "acme/Tiny-Llama-Test", "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
    "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512,
}  # fmt: skip


def _tensors() -> dict[str, np.ndarray]:
    out = {"model.embed_tokens.weight": np.zeros((100, 64), np.float16), "lm_head.weight": np.zeros((100, 64), np.float16)}
    for layer in range(2):
        p = f"model.layers.{layer}."
        out[p + "self_attn.q_proj.weight"] = np.zeros((64, 64), np.float16)
        out[p + "self_attn.k_proj.weight"] = np.zeros((32, 64), np.float16)
        out[p + "self_attn.v_proj.weight"] = np.zeros((32, 64), np.float16)
        out[p + "self_attn.o_proj.weight"] = np.zeros((64, 64), np.float16)
        for name in ("gate_proj", "up_proj"):
            out[p + f"mlp.{name}.weight"] = np.zeros((128, 64), np.float16)
        out[p + "mlp.down_proj.weight"] = np.zeros((64, 128), np.float16)
        out[p + "input_layernorm.weight"] = np.zeros((64,), np.float16)
        out[p + "post_attention_layernorm.weight"] = np.zeros((64,), np.float16)
    out["model.norm.weight"] = np.zeros((64,), np.float16)
    return out


EXACT = sum(math.prod(t.shape) for t in _tensors().values())


def test_config_json_gives_the_shape_and_a_computed_parameter_count(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    found = read_model(tmp_path / "config.json")
    facts = found["facts"]
    assert (facts["numLayers"], facts["hiddenSize"], facts["kvHeads"], facts["headDim"]) == (2, 64, 2, 16)
    assert facts["parameterCount"] == EXACT  # the gated-MLP count equals the tensors' sum for this shape
    assert found["hub_id"] == "acme/Tiny-Llama-Test"


def test_safetensors_header_gives_the_exact_parameter_count(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    save_file(_tensors(), str(tmp_path / "model.safetensors"))
    facts = read_model(tmp_path / "model.safetensors")["facts"]
    assert facts["parameterCount"] == EXACT
    assert (facts["numLayers"], facts["hiddenSize"], facts["vocabSize"], facts["ffnSize"]) == (2, 64, 100, 128)


def test_a_sharded_index_reads_its_shards_headers(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    tensors = _tensors()
    names = sorted(tensors)
    half = len(names) // 2
    save_file({k: tensors[k] for k in names[:half]}, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file({k: tensors[k] for k in names[half:]}, str(tmp_path / "model-00002-of-00002.safetensors"))
    weight_map = {
        k: ("model-00001-of-00002.safetensors" if i < half else "model-00002-of-00002.safetensors") for i, k in enumerate(names)
    }
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    found = read_model(tmp_path / "model.safetensors.index.json")
    assert found["facts"]["parameterCount"] == EXACT and found["facts"]["attentionHeads"] == 4


def test_gguf_header_gives_metadata_and_tensor_count(tmp_path: Path) -> None:
    from gguf import GGUFWriter

    path = tmp_path / "tiny.gguf"
    writer = GGUFWriter(str(path), "llama")
    writer.add_name("Tiny GGUF Test")
    writer.add_block_count(2)
    writer.add_embedding_length(64)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_feed_forward_length(128)
    writer.add_context_length(512)
    writer.add_vocab_size(100)
    for name, tensor in _tensors().items():
        writer.add_tensor(name, tensor.astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    found = read_model(path)
    assert found["label"] == "Tiny GGUF Test"
    assert found["facts"]["parameterCount"] == EXACT
    assert (found["facts"]["numLayers"], found["facts"]["kvHeads"], found["facts"]["headDim"]) == (2, 2, 16)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("config.json", "{not json", "not valid JSON"),
        ("config.json", '{"vocab_size": 5}', "no layer count or hidden size"),
        ("bad.gguf", "GGUF but not really", "not a readable GGUF file"),
        ("bad.safetensors", "\x00\x00", "not a readable safetensors header"),
        ("weights.bin", "x", "not a model file kbq reads"),
    ],
)
def test_bad_files_get_an_error_naming_the_file(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(KnowledgeFileError, match=message) as caught:
        read_model(path)
    assert str(path) in str(caught.value)


def test_the_overlay_answers_with_kb(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    overlay = tmp_path / "tiny.ttl"
    overlay.write_text(to_turtle(read_model(tmp_path / "config.json", "Tiny Import Test"), tmp_path / "config.json"))
    from kbq import KnowledgeBase

    kb = KnowledgeBase.load(overlay)
    answer = kb.answer("memory for tiny import test")
    weights = next(row for row in answer.rows if row[0] == "weights")
    assert weights[1] == pytest.approx(EXACT * 2 / 1e9, abs=1e-3)  # FP16: 2 bytes per parameter
    assert any(str(tmp_path / "config.json") in line for line in answer.explanation)
    by_id = kb.answer("memory for acme/Tiny-Llama-Test")  # the Hub id is a name (kbq:huggingFaceId in the name index)
    assert by_id.read_as is None and by_id.rows == answer.rows
    fine_tune = kb.answer("will acme/Tiny-Llama-Test-Instruct-GGUF fit on my 8gb card?")
    assert fine_tune.read_as == "does Tiny Import Test fit on 8gb"
    assert any("'instruct-gguf' names a fine-tune" in line for line in fine_tune.explanation)


def test_the_command_reports_a_bad_file_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("[1, 2]")
    done = subprocess.run([sys.executable, "-m", "kbq", "model", "import", str(bad)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert str(bad) in done.stderr and "not a JSON object" in done.stderr
