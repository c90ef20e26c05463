"""A cross-encoder: a question and a passage read together by one model, a score for each pair.

The reranking stage's model (semantic/reranker.py), named by a folder as sentence-transformers
and Xenova export one: `model.onnx` or `onnx/model.onnx`, `tokenizer.json`, `config.json`;
inputs `input_ids`, `attention_mask` and maybe `token_type_ids`, output logits of shape
[batch, 1] (ms-marco-MiniLM-L-6-v2, bge-reranker-base). A `memvault.json` there may set `top`
(how many of the best hits it reorders), `budget_ms` (how long a search waits for it),
`max_tokens` (the pieces of a pair it reads; else the folder's own config says), `question_tokens`
(the pieces of a question it keeps) and `file` (another ONNX file of the folder, such as a
quantised one). Pairs are cut to fit: the question kept whole up to `question_tokens`, the
passage cut to the rest; they run a few at a time, padded to the longest of their batch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.semantic.model import TOKEN_RANGE, Unavailable, model_file, read_json, session

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Encoding

OFF = "reranking is off"
# How many of a search's best hits are reordered, and how long a search waits for that.
TOP = 20
BUDGET_MS = 300
# The word-pieces of a pair read when the folder says nothing, and of a question kept at most
# (never more than half of the pair's).
MAX_TOKENS = 512
QUESTION_TOKENS = 64
# Pairs a run of the model reads: a deadline is looked at between runs.
BATCH = 4
# Characters of a passage tokenized at most for each piece a pair holds: more than any text
# but a run of one long word needs, so a huge note is not tokenized whole to be cut.
_PIECE_CHARS = 8
# Models whose position table has two rows more than they read (their padding's offset).
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert"}


@dataclass(frozen=True)
class RerankSpec:
    """Where a cross-encoder's files are, how much of a pair it reads, and how the stage uses
    it: the `top` hits reordered within `budget_ms`."""

    name: str
    onnx: Path
    tokenizer: Path
    max_tokens: int = MAX_TOKENS
    question_tokens: int = QUESTION_TOKENS
    top: int = TOP
    budget_ms: float = BUDGET_MS
    pad_id: int = 0


def find_reranker(setting: str) -> RerankSpec:
    """The cross-encoder in the folder `setting` names; Unavailable, saying why, when the
    folder holds none or a setting of it is not what it takes."""
    folder = Path(setting).expanduser()
    options = read_json(folder / "memvault.json", OFF)
    chosen = options.get("file")
    if chosen is not None and not isinstance(chosen, str):
        raise Unavailable(f"{OFF}: file must be a path in {folder}, not {chosen!r}")
    onnx = folder / chosen if chosen else model_file(folder)
    tokenizer = folder / "tokenizer.json"
    if onnx is None or not onnx.is_file() or not tokenizer.is_file():
        where = chosen or "model.onnx (or onnx/model.onnx)"
        raise Unavailable(f"{OFF}: {folder} holds no {where} with a tokenizer.json beside it")
    config = read_json(folder / "config.json", OFF)
    max_tokens = _whole(options, "max_tokens", _stated_length(folder, config), *TOKEN_RANGE)
    half = max_tokens // 2
    question = _whole(options, "question_tokens", min(QUESTION_TOKENS, half), 1, half)
    top = _whole(options, "top", TOP, 2, 100)
    budget = options.get("budget_ms", BUDGET_MS)
    if type(budget) not in (int, float) or not 0 <= budget <= 60_000:
        raise Unavailable(f"{OFF}: budget_ms must be a number from 0 to 60000, not {budget!r}")
    pad = config.get("pad_token_id")
    return RerankSpec(
        folder.name,
        onnx,
        tokenizer,
        max_tokens,
        question,
        top,
        float(budget),
        pad if type(pad) is int else 0,
    )


def _stated_length(folder: Path, config: dict[str, Any]) -> int:
    """The pieces a folder's model reads as its own files say (tokenizer_config.json's
    `model_max_length`, else config.json's position table), within TOKEN_RANGE; MAX_TOKENS
    when they say nothing that fits."""
    low, high = TOKEN_RANGE
    length = read_json(folder / "tokenizer_config.json", OFF).get("model_max_length")
    if type(length) is int and low <= length <= high:
        return length
    positions = config.get("max_position_embeddings")
    if type(positions) is int:
        positions -= 2 if config.get("model_type") in _OFFSET_POSITIONS else 0
        if low <= positions <= high:
            return min(positions, MAX_TOKENS)
    return MAX_TOKENS


def _whole(options: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    """A whole-number setting within low..high, `default` when not set."""
    value = options.get(name, default)
    if type(value) is not int or not low <= value <= high:
        raise Unavailable(
            f"{OFF}: {name} must be a whole number from {low} to {high}, not {value!r}"
        )
    return value


class Deadline:
    """When scoring gives up: at a time (time.monotonic), or at once when `stop` is called,
    which ends a run of the model under way too (onnxruntime's RunOptions.terminate)."""

    def __init__(self, at: float) -> None:
        import onnxruntime

        self.at = at
        self.options = onnxruntime.RunOptions()

    def stop(self) -> None:
        self.options.terminate = True

    @property
    def passed(self) -> bool:
        return self.options.terminate or time.monotonic() >= self.at


class CrossEncoder:
    """A loaded cross-encoder: a question and passages in, a score for each passage out
    (higher is more relevant), on `threads` cores."""

    def __init__(self, spec: RerankSpec, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        self.spec = spec
        self._session = session(spec.onnx, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        outputs = [o.name for o in self._session.get_outputs()]
        self._output = "logits" if "logits" in outputs else outputs[0]
        self._pairs = Tokenizer.from_file(str(spec.tokenizer))
        self._pairs.no_padding()
        self._pairs.enable_truncation(max_length=spec.max_tokens, strategy="only_second")
        self._pieces = Tokenizer.from_file(str(spec.tokenizer))
        self._pieces.no_padding()
        self._pieces.no_truncation()

    def scores(
        self, question: str, passages: Sequence[str], deadline: Deadline | None = None
    ) -> list[float] | None:
        """Each passage's score for the question, in runs of BATCH pairs of about one length;
        None once `deadline` has passed (looked at before each run)."""
        asked = self.question(question)
        room = self.spec.max_tokens * _PIECE_CHARS
        encoded = self._pairs.encode_batch([(asked, passage[:room]) for passage in passages])
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
        found = [0.0] * len(encoded)
        for start in range(0, len(order), BATCH):
            if deadline is not None and deadline.passed:
                return None
            batch = order[start : start + BATCH]
            try:
                made = self._run([encoded[i] for i in batch], deadline)
            except Exception:
                if deadline is not None and deadline.passed:
                    return None  # stopped in the middle of the run
                raise
            for i, score in zip(batch, made, strict=True):
                found[i] = score
        return found

    def question(self, text: str) -> str:
        """The question as a pair holds it: its first `question_tokens` word-pieces, cut at the
        start of the word the next piece belongs to."""
        pieces = self._pieces.encode(text, add_special_tokens=False)
        if len(pieces.ids) <= self.spec.question_tokens:
            return text
        keep = self.spec.question_tokens
        word = pieces.word_ids[keep]
        first = pieces.word_ids.index(word) if word is not None else keep
        return text[: pieces.offsets[first or keep][0]].rstrip()

    def _run(self, encoded: list[Encoding], deadline: Deadline | None) -> list[float]:
        """One run of the model over pairs padded to the longest of them."""
        import numpy as np

        width = max(len(e.ids) for e in encoded)
        ids = np.full((len(encoded), width), self.spec.pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, pair in enumerate(encoded):
            ids[row, : len(pair.ids)] = pair.ids
            mask[row, : len(pair.ids)] = 1
            types[row, : len(pair.ids)] = pair.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        options: onnxruntime.RunOptions | None = deadline.options if deadline else None
        logits = self._session.run(
            [self._output], {k: v for k, v in feed.items() if k in self._inputs}, options
        )[0]
        if logits.size != len(encoded):
            raise ValueError(
                f"the model gives {logits.shape} for {len(encoded)} pairs, not one score a "
                "pair: not a cross-encoder"
            )
        return [float(x) for x in logits.reshape(-1)]
