"""A BERT encoder's graph rebuilt from its weights with onnxruntime's fused operators.

The default model's graph is a torch export: attention spelled out in a dozen small operators,
with a NaN guard (IsNaN, Where) over every softmax that onnxruntime's transformer optimizer
cannot fuse. Rebuilt as EmbedLayerNormalization, Attention and BiasGelu (the `com.microsoft`
operators) with plain LayerNormalization, the same weights give the same vectors (cosine 1.0000)
and quantise to QAttention and int8 matrix products. Layer i's products are the nodes `Out{i}`,
`Up{i}` and `Down{i}`, for a quantiser to keep some in float32. A pure function of the graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

# BERT's layer normalisation epsilon (the export's LayerNormalization nodes carry the same).
EPSILON = 1e-12
_MS = "com.microsoft"


def fused(model: onnx.ModelProto, num_heads: int) -> onnx.ModelProto:
    """The encoder of `model` (a BERT export with its constants folded: inputs `input_ids` and
    `attention_mask`, output `last_hidden_state`) as one graph of fused operators; KeyError when
    a weight the rebuild needs is not there."""
    from onnx import TensorProto, helper

    graph = _Graph(model)
    embeddings = graph.prefix + "embeddings."
    # Token types are always 0 here: their first row is folded into the position table.
    positions = (
        graph.weight(embeddings + "position_embeddings.weight")
        + graph.weight(embeddings + "token_type_embeddings.weight")[0]
    )
    words = graph.weight(embeddings + "word_embeddings.weight")
    graph.nodes += [
        helper.make_node("Cast", ["input_ids"], ["ids32"], to=TensorProto.INT32),
        helper.make_node("Cast", ["attention_mask"], ["mask32"], to=TensorProto.INT32),
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "ids32",
                "",
                graph.keep("words", words),
                graph.keep("positions", positions),
                "",
                graph.named(embeddings + "LayerNorm.weight"),
                graph.named(embeddings + "LayerNorm.bias"),
                "mask32",
            ],
            ["hidden0", "mask_index"],
            domain=_MS,
            epsilon=EPSILON,
        ),
    ]
    hidden = "hidden0"
    for layer in range(graph.layers()):
        hidden = graph.layer(layer, hidden, num_heads)
    graph.nodes[-1].output[0] = "last_hidden_state"
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", int(words.shape[1])]
    )
    rebuilt = helper.make_graph(graph.nodes, "encoder", inputs, [output], graph.initializers)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)]
    return helper.make_model(rebuilt, opset_imports=opsets)


class _Graph:
    """The source graph's weights, read by name, and the new graph's nodes and weights."""

    def __init__(self, model: onnx.ModelProto) -> None:
        from onnx import numpy_helper

        source = model.graph
        self._weights = {w.name: numpy_helper.to_array(w) for w in source.initializer}
        self._made_by = {out: node for node in source.node for out in node.output}
        self._adds = [node for node in source.node if node.op_type == "Add"]
        self.prefix = next(
            k[: -len("embeddings.word_embeddings.weight")]
            for k in self._weights
            if k.endswith("embeddings.word_embeddings.weight")
        )
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def weight(self, name: str) -> Any:
        """A weight of the source graph as a numpy array."""
        return self._weights[name]

    def keep(self, name: str, array: Any) -> str:
        """Put `array` in the new graph as the weight `name`."""
        import numpy as np
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def named(self, name: str) -> str:
        """Put the source graph's weight `name` in the new graph under the same name."""
        return self.keep(name, self._weights[name])

    def dense(self, prefix: str) -> tuple[Any, Any]:
        """A linear layer's matrix (as x @ W takes it) and bias: the MatMul whose output the
        Add of `prefix.bias` takes."""
        bias = prefix + ".bias"
        add = next(node for node in self._adds if bias in node.input)
        product = self._made_by[next(i for i in add.input if i != bias)]
        if product.op_type != "MatMul":
            raise KeyError(f"{prefix}: no matrix product before its bias")
        return self._weights[product.input[1]], self._weights[bias]

    def layers(self) -> int:
        """How many encoder layers the weights hold."""
        start = self.prefix + "encoder.layer."
        return 1 + max(
            int(k[len(start) :].split(".")[0]) for k in self._weights if k.startswith(start)
        )

    def residual_norm(
        self, added: str, residual: str, prefix: str, bias: Any, out: str
    ) -> list[onnx.NodeProto]:
        """A dense layer's bias and residual added and normalised (its LayerNorm's weights are
        `prefix`LayerNorm.*) into `out`: the bias right after the product, which onnxruntime
        folds into it, then the residual and a LayerNormalization. Not SkipLayerNormalization,
        which does the same in one node four times slower (1.0 against 0.24 ms for 512 x 384 on
        onnxruntime 1.32): the session turns its fusion off (semantic/model.py)."""
        from onnx import helper

        norm = prefix + "LayerNorm."
        return [
            helper.make_node("Add", [added, self.keep(out + "_bias", bias)], [out + "_biased"]),
            helper.make_node("Add", [out + "_biased", residual], [out + "_summed"]),
            helper.make_node(
                "LayerNormalization",
                [out + "_summed", self.named(norm + "weight"), self.named(norm + "bias")],
                [out],
                axis=-1,
                epsilon=EPSILON,
            ),
        ]

    def layer(self, index: int, hidden: str, num_heads: int) -> str:
        """Add encoder layer `index` reading `hidden`; returns its output's name."""
        import numpy as np
        from onnx import helper

        name = f"{self.prefix}encoder.layer.{index}."
        query, key, value = (
            self.dense(name + "attention.self." + p) for p in ("query", "key", "value")
        )
        out_w, out_b = self.dense(name + "attention.output.dense")
        up_w, up_b = self.dense(name + "intermediate.dense")
        down_w, down_b = self.dense(name + "output.dense")
        i = index
        self.nodes += [
            helper.make_node(
                "Attention",
                [
                    hidden,
                    self.keep(f"qkv{i}", np.concatenate([query[0], key[0], value[0]], 1)),
                    self.keep(f"qkv_bias{i}", np.concatenate([query[1], key[1], value[1]])),
                    "mask32",
                ],
                [f"attention{i}"],
                f"Attention{i}",
                domain=_MS,
                num_heads=num_heads,
            ),
            helper.make_node(
                "MatMul", [f"attention{i}", self.keep(f"out{i}", out_w)], [f"out{i}_"], f"Out{i}"
            ),
            *self.residual_norm(
                f"out{i}_", hidden, name + "attention.output.", out_b, f"normed{i}"
            ),
            helper.make_node(
                "MatMul", [f"normed{i}", self.keep(f"up{i}", up_w)], [f"up{i}_"], f"Up{i}"
            ),
            helper.make_node(
                "BiasGelu", [f"up{i}_", self.keep(f"up_bias{i}", up_b)], [f"gelu{i}"], domain=_MS
            ),
            helper.make_node(
                "MatMul", [f"gelu{i}", self.keep(f"down{i}", down_w)], [f"down{i}_"], f"Down{i}"
            ),
            *self.residual_norm(
                f"down{i}_", f"normed{i}", name + "output.", down_b, f"hidden{i + 1}"
            ),
        ]
        return f"hidden{i + 1}"
