"""Semantic search for one vault: its parts, and the searches by meaning that read them.

Full-text search never waits for it. The parts each own a job: `model` (which model, loaded at
its first need, or why semantic search is off: `Unavailable`), `vectors` (the chunk vectors in
memory, loaded from the index once), `embedding` (what embeds the notes whose vectors are
missing: a server's background thread, or `memvault embed`) and `reranker` (the optional
cross-encoder that reorders a hybrid search's best notes, by the passages read here). The
searches run in threads of their own, so that a caller reads its filter's notes or compares
texts meanwhile.
"""

from __future__ import annotations

from collections.abc import Collection
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from memvault import workers
from memvault.core.document import split_document
from memvault.core.markdown import plain_snippet
from memvault.core.records import SemanticStatus
from memvault.errors import MemvaultError
from memvault.index.database import Index
from memvault.semantic.chunks import chunk_text, chunks
from memvault.semantic.embedding_worker import EmbeddingWorker
from memvault.semantic.loaded_vectors import LoadedVectors
from memvault.semantic.model import Model, Unavailable
from memvault.semantic.reranker import Reranker
from memvault.semantic.throttle import embed_cores
from memvault.storage.files import VaultStore

if TYPE_CHECKING:
    from memvault.semantic.vectors import Near, Vectors

# The share of a vault's notes meaning must cover before a server's search without `mode` runs
# by words and meaning (and below which a search by meaning says how little it covered).
COVERED = 0.95


class Semantic:
    """The semantic side of one vault's search: its parts, each owning a job, and the
    searches by meaning that read them, in threads of their own."""

    def __init__(
        self, index: Index, store: VaultStore, setting: str | None, rerank: str | None = None
    ) -> None:
        self._index = index
        self._store = store
        self.model = Model(setting)
        self.reranker = Reranker(rerank)
        self.vectors = LoadedVectors(index, self.model)
        self.embedding = EmbeddingWorker(index, store, self.model, self.vectors)
        self._asker = ThreadPoolExecutor(workers.parallelism() or 1, "memvault-meaning")

    def has_vectors(self) -> bool:
        """Whether the index holds vectors of this model (without loading it or numpy)."""
        spec = self.model.spec
        return spec is not None and bool(
            self._index.pool.query("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", [spec.key])
        )

    def loading(self) -> bool:
        """Whether a server's background thread is still loading the vectors: until it is
        done, a search is full-text unless its caller asks for meaning (and waits)."""
        return self.embedding.serving and not self.vectors.loaded

    def ready(self) -> bool:
        """Whether a search without `mode` runs by meaning too: this model's vectors exist, a
        server has loaded them and they cover COVERED of the notes, and the model runs (in a
        process without a background thread, loaded now: the search needs it next). While a
        server's first embedding is under way its searches stay by words: meaning would cost
        each one its question's embedding (as much CPU again as a search by words of three
        common words at 10k notes) for a sliver of the vault."""
        if not self.has_vectors() or self.loading():
            return False
        if self.embedding.serving:
            embedded, total = self.coverage()
            return embedded >= total * COVERED
        return self.model.runs()

    def coverage(self) -> tuple[int, int]:
        """How many notes have vectors, and of how many, as a server that holds the vectors
        knows them (no count of the index's notes)."""
        embedded = self.vectors.embedded()
        return embedded, embedded + self.embedding.waiting()

    def close(self) -> None:
        """Stop the background embedding after its current batch (already saved ones stay),
        and the threads of the searches."""
        self.embedding.close()
        self.reranker.close()
        self._asker.shutdown()

    def question_soon(self, text: str) -> Future[Vectors]:
        """A question's vector, made in a thread of its own (once the vectors are loaded), so
        that the caller reads its filter's notes meanwhile."""
        return self._asker.submit(self._question, text)

    def _question(self, text: str) -> Vectors:
        """`question_soon`'s vector, made in its thread."""
        # The vectors first: the model is made once, as they load, under their lock.
        self.vectors.table()
        return self.model.embedder.query(text)

    def nearest_soon(
        self,
        question: Future[Vectors],
        limit: int,
        among: Collection[int] | None,
        leaving_out: Collection[int],
    ) -> Future[list[Near]]:
        """The notes closest to a question (`question_soon`'s) by their best chunk, among the
        admitted ones, found in a thread of its own, so that a hybrid search's full-text side
        runs meanwhile: the model, the product and SQLite each let go of the GIL, so on two
        cores a search waits for the slower side, not for both one after the other. The
        question was submitted first, so it is being made or is done when this waits for it
        (the threads take their work in order)."""
        return self._asker.submit(self._nearest, question, limit, among, leaving_out)

    def _nearest(
        self,
        question: Future[Vectors],
        limit: int,
        among: Collection[int] | None,
        leaving_out: Collection[int],
    ) -> list[Near]:
        """`nearest_soon`'s notes, found in its thread."""
        return self.vectors.table().nearest(question.result(), limit, among, leaving_out)

    def within_soon(self, title: str, body: str, at_least: float) -> Future[list[Near]]:
        """Every note whose first chunk is at least `at_least` close to a memory not yet
        written (`_passage`), best first, found in a thread of its own, so that the writer
        compares the memory's text with the notes' meanwhile: the model lets go of the GIL,
        and a short write waits for the slower of the two, not for both."""
        return self._asker.submit(self._within_new, title, body, at_least)

    def _within_new(self, title: str, body: str, at_least: float) -> list[Near]:
        """`within_soon`'s notes; none when the model will not run (the write is then compared
        by its text alone)."""
        try:
            table = self.vectors.table()
            return table.within(self._passage(title, body), at_least)
        except Unavailable:
            return []

    def related(
        self, rowid: int, limit: int, among: Collection[int] | None, leaving_out: Collection[int]
    ) -> list[Near] | None:
        """The notes closest in meaning to a note, by the cosine of their mean chunk vectors
        (which found npm's "See Also" pages better than a best-chunk match: benchmarks/
        service/related.py); None when the note has no vectors yet."""
        return self.vectors.table().related(rowid, limit, among, leaving_out)

    def _passage(self, title: str, body: str) -> Vectors:
        """A memory not yet written, by its first chunk embedded as the notes' chunks are (one
        short text, one run of the model); the vector is kept for the memory's own embedding
        once it is written (`EmbeddingWorker.keep`)."""
        embedder = self.model.embedder
        first = chunks(title, body, embedder.measure, limit=1)[0]
        vector: Vectors = embedder.passages([first.text])[0]
        self.embedding.keep(first.text, vector)
        return vector

    def excerpt(self, rowid: int, chunk: int) -> str:
        """The text of a note's chunk in plain text, to show as a search hit's snippet, from
        the index's copy of the body (its file when the index holds it otherwise); empty
        when the note changed or went since (its vectors are about to follow)."""
        store = self.vectors.store
        found = store.note_path(rowid)
        rows = store.chunks(found[1]) if found else []
        if found is None or chunk >= len(rows):
            return ""
        start, end = rows[chunk].start, rows[chunk].end
        text = self._index.bodies.span(rowid, start, end)
        if text is None:
            try:
                text = split_document(self._store.read_text(found[0])).body[start:end]
            except MemvaultError:
                return ""
        return plain_snippet(text)

    def passages(self, question: Vectors, best: dict[int, int], notes: list[int]) -> list[str]:
        """Each note's passage for the reranker: its chunk closest to the question (`best` has
        the chunks the search found; the other notes' are looked up), as the model read it; a
        note not embedded yet gives its title and body, one that went gives nothing."""
        missing = [note for note in notes if note not in best]
        if missing:
            found = self.vectors.table().nearest(question, len(missing), among=missing)
            best = best | {near.note: near.chunk for near in found}
        return [self._chunk_passage(note, best.get(note)) for note in notes]

    def _chunk_passage(self, rowid: int, chunk: int | None) -> str:
        """A note's chunk `chunk` (None: its whole body) with its title as chunks.py puts it."""
        store = self.vectors.store
        found = store.note_path(rowid)
        if found is None:
            return ""
        try:
            memory, _doc = self._store.read(found[0])
        except MemvaultError:
            return ""
        rows = store.chunks(found[1]) if chunk is not None else []
        if chunk is None or chunk >= len(rows):
            return chunk_text(memory.title, memory.body, 0)
        return chunk_text(memory.title, memory.body[rows[chunk].start : rows[chunk].end], chunk)

    def status(self, load: bool = True) -> SemanticStatus:
        """Whether semantic search is on, with which model, and how far its embedding is
        (counted in the index, unless this process holds the vectors already), on how many
        cores a server embeds and whether it waits for its requests to stop. Outside a
        server the model is loaded and run to tell, unless not to `load` it."""
        spec = self.model.spec
        reranking = self.reranker.describe()
        if spec is None or (load and not self.embedding.serving and not self.model.runs()):
            return SemanticStatus(False, None, self.model.reason, 0, 0, reranking)
        embedded = self.vectors.embedded()
        waiting = len(self.vectors.store.notes()) - embedded
        cores, paused = embed_cores(), self.embedding.paused
        return SemanticStatus(True, spec.key, "", embedded, waiting, reranking, cores, paused)
