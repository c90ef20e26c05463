"""A tiny cross-encoder for the reranking tests: a BERT graph with random weights, the default
model's real tokenizer, and a classification head (logits [batch, 1]), laid out in a folder as
sentence-transformers (`model.onnx`) or Xenova (`onnx/model.onnx`) export one. The encoder is
built by semantic/bert_graph.py from weights named as a BERT export names them, so its graph is
the one memvault runs for the default model: no second copy of BERT's layers here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from memvault.semantic.bert_graph import fused
from memvault.semantic.model import find_model

VOCABULARY = 30522  # the default model's tokenizer (all-MiniLM-L6-v2's, BERT's uncased)
_DENSE = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


def tiny_cross_encoder(
    folder: Path,
    *,
    xenova: bool = False,
    token_types: bool = True,
    positions: int = 128,
    hidden: int = 16,
    layers: int = 1,
    heads: int = 2,
    seed: int = 0,
) -> Path:
    """Write a cross-encoder with random weights into `folder` (made if missing): the graph at
    `onnx/model.onnx` when `xenova`, else `model.onnx`; with a `token_type_ids` input when
    `token_types` (BERT's), without (RoBERTa's); reading at most `positions` word-pieces (its
    config.json says so; a longer input is an error of the graph)."""
    rng = np.random.default_rng(seed)
    weights = _bert_weights(rng, positions, hidden, layers)
    encoder = fused(_export_like(weights), heads)
    model = _with_head(encoder, rng, hidden, weights if token_types else None)
    where = folder / "onnx" / "model.onnx" if xenova else folder / "model.onnx"
    where.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(where))
    shutil.copy(find_model(None).tokenizer, folder / "tokenizer.json")
    config = {"model_type": "bert", "max_position_embeddings": positions, "pad_token_id": 0}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _bert_weights(
    rng: np.random.Generator, positions: int, hidden: int, layers: int
) -> dict[str, Any]:
    """Random weights under a BERT export's names (matrices as x @ W takes them)."""

    def normal(*shape: int) -> Any:
        return rng.normal(0, 0.5, shape).astype(np.float32)

    weights = {
        "embeddings.word_embeddings.weight": normal(VOCABULARY, hidden),
        "embeddings.position_embeddings.weight": normal(positions, hidden),
        "embeddings.token_type_embeddings.weight": normal(2, hidden),
        "embeddings.LayerNorm.weight": np.ones(hidden, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(hidden, np.float32),
    }
    for layer in range(layers):
        name = f"encoder.layer.{layer}."
        for dense in _DENSE:
            rows = 4 * hidden if dense == "output.dense" else hidden
            columns = 4 * hidden if dense == "intermediate.dense" else hidden
            weights[f"{name}{dense}.weight"] = normal(rows, columns)
            weights[f"{name}{dense}.bias"] = normal(columns)
        for norm in ("attention.output.LayerNorm.", "output.LayerNorm."):
            weights[f"{name}{norm}weight"] = np.ones(hidden, np.float32)
            weights[f"{name}{norm}bias"] = np.zeros(hidden, np.float32)
    return weights


def _export_like(weights: dict[str, Any]) -> onnx.ModelProto:
    """The weights as a torch export holds them: each dense layer a MatMul then the Add of its
    bias, which is where bert_graph.fused finds them."""
    nodes = [
        node
        for name in weights
        if name.endswith(".bias") and not name.endswith("LayerNorm.bias")
        for node in (
            helper.make_node("MatMul", ["x", name[: -len("bias")] + "weight"], [name + "_mm"]),
            helper.make_node("Add", [name + "_mm", name], [name + "_out"]),
        )
    ]
    initializers = [numpy_helper.from_array(array, name) for name, array in weights.items()]
    return helper.make_model(helper.make_graph(nodes, "export", [], [], initializers))


def _with_head(
    encoder: onnx.ModelProto,
    rng: np.random.Generator,
    hidden: int,
    token_types: dict[str, Any] | None,
) -> onnx.ModelProto:
    """The encoder with BERT's pooler and a one-logit classifier over its first token, and,
    given the token type table, a `token_type_ids` input that reads it."""
    graph = encoder.graph

    def keep(name: str, *shape: int) -> str:
        array = rng.normal(0, 0.5, shape).astype(np.float32)
        graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    graph.initializer.append(numpy_helper.from_array(np.array(0, np.int64), "first"))
    graph.node.extend(
        [
            helper.make_node("Gather", ["last_hidden_state", "first"], ["cls"], axis=1),
            helper.make_node("MatMul", ["cls", keep("pooler", hidden, hidden)], ["pooled_"]),
            helper.make_node("Add", ["pooled_", keep("pooler_bias", hidden)], ["pooled_b"]),
            helper.make_node("Tanh", ["pooled_b"], ["pooled"]),
            helper.make_node("MatMul", ["pooled", keep("classifier", hidden, 1)], ["scored"]),
            helper.make_node("Add", ["scored", keep("classifier_bias", 1)], ["logits"]),
        ]
    )
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1]))
    if token_types is not None:
        table = token_types["embeddings.token_type_embeddings.weight"]
        graph.initializer.append(numpy_helper.from_array(table, "segments"))
        graph.input.append(
            helper.make_tensor_value_info(
                "token_type_ids", TensorProto.INT64, ["batch", "sequence"]
            )
        )
        graph.node.insert(
            0, helper.make_node("Cast", ["token_type_ids"], ["types32"], to=TensorProto.INT32)
        )
        embed = next(n for n in graph.node if n.op_type == "EmbedLayerNormalization")
        embed.input[1], embed.input[4] = "types32", "segments"
    return encoder
