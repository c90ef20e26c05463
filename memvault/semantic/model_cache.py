"""The default model quantised to int8 once per user, in memvault's cache folder.

The packaged all-MiniLM-L6-v2 stores int8 weights that onnxruntime casts back to float32 when it
loads them, so it computes in float32. Its constants folded, its graph rebuilt with fused operators
(semantic/bert_graph.py) and its matrix products but one quantised per channel (onnxruntime's
`quantize_dynamic`: QAttention and int8 products, which this CPU runs with VNNI), it embeds a chunk
about three times as fast as the packaged graph (191 chunks of npm's docs and LoCoMo a second of one
core's time, against 61-65), at a cosine of about 0.995 to the float32 vectors
(benchmarks/README.md). The copy is made the first time the model is needed, offline, written
atomically under a lock (two processes never build it at once), and checked against its recorded
sha256 whenever it is found: a missing, partial or corrupt copy is made again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from filelock import FileLock

# Names how the copy is made: a new recipe is a new model, and vectors made by another are
# re-embedded in the background.
RECIPE = "int8-fused-ln"
# The default model's attention heads (384 dimensions in heads of 32).
HEADS = 12
# The one product kept in float32: the first layer's feed-forward projection back down, whose
# input has the widest outliers. Kept, it lifts the mean cosine to the float32 vectors from 0.994
# to 0.995 for 12 % more time a chunk; every product in int8 also lost two of the 75 questions
# of `make bench-quality`'s manual pages (recall@5 0.907 -> 0.880, semantic search alone).
FLOAT_NODE = "Down0"
MODEL_FILE = "model.onnx"
DIGEST_FILE = "model.onnx.sha256"
# How long a process waits for another one building the same copy (a few seconds) before it
# gives up and runs the model unquantised.
LOCK_SECONDS = 300.0


def models_dir() -> Path:
    """Where quantised models are kept: `$XDG_CACHE_HOME/memvault/models` (~/.cache by default)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "memvault" / "models"


def quantised(source: Path, fingerprint: str) -> Path:
    """The int8 copy of the model at `source` (whose weights `fingerprint` names), made now if
    the cache holds no intact one."""
    folder = models_dir() / f"{fingerprint}-{RECIPE}"
    target = folder / MODEL_FILE
    if _intact(target):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / ".lock"), timeout=LOCK_SECONDS):
        if not _intact(target):
            _build(source, target)
    return target


def _intact(target: Path) -> bool:
    """Whether the copy is there whole: its content hashes to the digest recorded after it was
    written (sha256 of 22 MB: about 20 ms)."""
    try:
        expected = (target.parent / DIGEST_FILE).read_text(encoding="ascii").strip()
        return _sha256(target) == expected
    except OSError:
        return False


def _build(source: Path, target: Path) -> None:
    """Fold the model's constants (its int8-to-float casts) into float weights, rebuild its graph
    with fused operators, quantise its matrix products but FLOAT_NODE per channel, and put the
    result and its digest in place, each file whole or not at all."""
    import onnx
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from memvault.semantic.bert_graph import fused

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        folded, rebuilt = Path(scratch) / "folded.onnx", Path(scratch) / "fused.onnx"
        made = Path(scratch) / MODEL_FILE
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        onnx.save(fused(onnx.load(str(folded)), HEADS), str(rebuilt))
        # onnxruntime advises pre-processing on the root logger; memvault's own records pass.
        advice = logging.Filter("memvault")
        logging.getLogger().addFilter(advice)
        try:
            quantize_dynamic(
                rebuilt,
                made,
                per_channel=True,
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul", "Attention", "EmbedLayerNormalization"],
                nodes_to_exclude=[FLOAT_NODE],
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        finally:
            logging.getLogger().removeFilter(advice)
        _synced(made)
        os.replace(made, target)
        digest = Path(scratch) / DIGEST_FILE
        digest.write_text(_sha256(target) + "\n", encoding="ascii")
        _synced(digest)
        os.replace(digest, target.parent / DIGEST_FILE)


def _synced(path: Path) -> None:
    """Flush a file to disk before it is renamed into place."""
    with path.open("rb") as file:
        os.fsync(file.fileno())


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
