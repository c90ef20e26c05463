"""The reranking stage: a cross-encoder reorders the best notes of a hybrid search, or, past its
time budget, the fused order stands.

Off unless a folder is named (`MEMVAULT_RERANK_MODEL`, `--rerank-model`): then nothing of it is
looked up, imported or loaded. Named, the model is loaded in the stage's thread: a server's at
its start (searches say they were not reranked while it loads), a command's at its first
search. Each search's pairs are scored in that thread while the caller makes the page's
snippets, and the caller waits for the scores until the budget runs out from the moment they
were asked for; then the run under way is stopped and the fused order stands, which the search
says. Only the `top` best notes are reordered, each keeping the fused score of the place it
takes; none is added or dropped. A folder that will not load or run turns reranking off with
its reason, logged once and shown in the vault's status; searches go on unreranked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property

from memvault import workers
from memvault.semantic.cross_encoder import OFF, CrossEncoder, Deadline, RerankSpec, find_reranker
from memvault.semantic.model import Unavailable

log = logging.getLogger(__name__)

# A ranking: each note's rowid and its fused score, best first.
Ranking = list[tuple[int, float]]
LOADING = "not reranked: the reranker is still loading"


@dataclass
class Reordering:
    """A search's ranking, and the reranker's scoring of its best notes under way (none when
    no reranker takes part, with `why` when the caller should hear why not)."""

    ranked: Ranking
    top: list[int] = field(default_factory=list)
    scoring: Future[list[float] | None] | None = None
    deadline: Deadline | None = None
    budget_ms: float = 0.0
    why: str = ""

    def outcome(self) -> tuple[Ranking, int, str]:
        """The ranking with its best notes in the reranker's order and how many those are, or
        the fused ranking, 0, and why it stands (empty when no reranker took part or its run
        failed: that failure is logged once and shown in the vault's status)."""
        if self.scoring is None or self.deadline is None:
            return self.ranked, 0, self.why
        try:
            scores = self.scoring.result(timeout=max(self.deadline.at - time.monotonic(), 0.0))
        except TimeoutError:
            scores = None
        except Exception:  # the model's own error, logged by the stage that ran it
            return self.ranked, 0, ""
        if scores is None:
            self.deadline.stop()
            return self.ranked, 0, f"not reranked: past the reranker's {self.budget_ms:g} ms"
        order = sorted(range(len(self.top)), key=lambda i: -scores[i])
        places = [score for _note, score in self.ranked[: len(self.top)]]
        reordered = [(self.top[i], places[place]) for place, i in enumerate(order)]
        return reordered + self.ranked[len(self.top) :], len(self.top), ""


class Reranker:
    """One vault's reranking stage: the cross-encoder a setting names, loaded once in the
    stage's thread, and why reranking is off when it is."""

    def __init__(self, setting: str | None) -> None:
        self._setting = setting
        self._lock = threading.Lock()
        self._encoder: CrossEncoder | None = None
        self._broken = ""
        self._said = False
        self._serving = False
        self._thread: ThreadPoolExecutor | None = None

    @cached_property
    def _found(self) -> tuple[RerankSpec | None, str]:
        """The cross-encoder's files and settings, or why there are none, looked up at the
        first need."""
        try:
            return find_reranker(self._setting or ""), ""
        except Unavailable as exc:
            return None, str(exc)

    @property
    def spec(self) -> RerankSpec | None:
        """The cross-encoder's files and settings; None when none is set or it is off."""
        return None if not self._setting or self._broken else self._found[0]

    @property
    def reason(self) -> str:
        """Why reranking is off although a folder is set; empty otherwise."""
        return "" if not self._setting else self._broken or self._found[1]

    def describe(self) -> str:
        """The reranker in a line for the vault's status, or why it is off; empty when no
        folder is set."""
        spec = self.spec
        if spec is None:
            return self.reason
        return f"reranking: {spec.name}, the best {spec.top} within {spec.budget_ms:g} ms"

    def serve(self) -> None:
        """Load the cross-encoder in the stage's thread now (a server's start), logging why
        reranking is off if it is; searches meanwhile are not reranked and say so."""
        if self._setting:
            self._serving = True
            self._pool().submit(self._load)

    def start(
        self,
        question: str,
        ranked: Ranking,
        offset: int,
        passages: Callable[[list[int]], list[str]],
    ) -> Reordering:
        """Score the best notes of `ranked` for `question` in the stage's thread (`passages`
        gives their texts, read there), for a page starting at `offset`; nothing to do when no
        reranker is set or on, or the page starts past the notes it would reorder."""
        spec = self.spec
        if spec is None:
            if self._setting:
                self._say()
            return Reordering(ranked)
        if offset >= spec.top or len(ranked) < 2:
            return Reordering(ranked)
        if self._encoder is None:
            if self._serving:
                return Reordering(ranked, why=LOADING)
            if self._pool().submit(self._load).result() is None:
                return Reordering(ranked)
        top = [note for note, _score in ranked[: spec.top]]
        deadline = Deadline(time.monotonic() + spec.budget_ms / 1000)
        scoring = self._pool().submit(self._score, question, top, passages, deadline)
        return Reordering(ranked, top, scoring, deadline, spec.budget_ms)

    def close(self) -> None:
        """Stop the stage's thread, leaving any scoring under way to its deadline."""
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)

    def _pool(self) -> ThreadPoolExecutor:
        """The stage's one thread, made at its first need."""
        with self._lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, "memvault-rerank")
            return self._thread

    def _score(
        self,
        question: str,
        top: list[int],
        passages: Callable[[list[int]], list[str]],
        deadline: Deadline,
    ) -> list[float] | None:
        """The scores of the notes `top` for the question, in the stage's thread; None when
        the deadline passed first."""
        if deadline.passed or self._encoder is None:
            return None
        try:
            return self._encoder.scores(question, passages(top), deadline)
        except Exception as exc:
            self._fail(exc)
            raise

    def _load(self) -> CrossEncoder | None:
        """The cross-encoder, loaded and run on a pair once (in the stage's thread); None
        when reranking is off, its reason logged once."""
        spec = self.spec
        if self._encoder is None and spec is not None:
            try:
                encoder = CrossEncoder(spec, threads=workers.parallelism() or 1)
                encoder.scores("memvault", ["memvault"])
                self._encoder = encoder
            except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
                self._fail(exc)
        if self._encoder is None:
            self._say()
        return self._encoder

    def _fail(self, exc: Exception) -> None:
        """Turn reranking off for this process with the reason, said once."""
        where = self._found[0].onnx if self._found[0] else self._setting
        self._broken = (
            f"{OFF}: the model {where} will not load or run ({type(exc).__name__}: {exc}); "
            "set MEMVAULT_RERANK_MODEL to a cross-encoder folder that works, or unset it"
        )
        self._encoder = None
        self._say()

    def _say(self) -> None:
        """Log why reranking is off, once a process."""
        with self._lock:
            said, self._said = self._said, True
        if not said:
            log.warning(self.reason)
