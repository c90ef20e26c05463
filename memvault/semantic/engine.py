"""Semantic search for one vault: the model, the vectors in memory, and the embedding work.

Full-text search never waits for it. A server embeds in a background thread (`start`): new
and changed notes are found by comparing each note's content hash with the one its vectors
were made from, so writes, syncs and the watcher only need to `wake` it, and a crash or a
stop loses nothing but the batch in hand (each batch is saved as it is done). Without a
model (`Unavailable`), search is full-text only and `reason` says why.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Collection, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from memvault import workers
from memvault.core.document import split_document
from memvault.core.records import Progress, SemanticStatus
from memvault.errors import MemvaultError
from memvault.index.database import TOUCHED_KEPT, Index
from memvault.semantic import prune
from memvault.semantic.chunks import Chunk, chunks
from memvault.semantic.model import (
    BATCH,
    Embedder,
    ModelSpec,
    Unavailable,
    embed_passages,
    find_model,
)
from memvault.storage.files import VaultStore

if TYPE_CHECKING:
    import numpy as np

    from memvault.semantic.vector_store import ChunkRow, VectorStore
    from memvault.semantic.vectors import Near, Vectors, VectorTable

log = logging.getLogger(__name__)

# How long the background thread sleeps when nobody wakes it: a change the watcher missed is
# embedded within this.
IDLE_SECONDS = 30.0
# How often a server drops the vectors and chunk maps no note uses any more (notes edited or
# deleted since), after embedding what changed: at most this often, the first time this long
# after its start (not while a session's first requests come in).
PRUNE_SECONDS = 3600.0
PRUNE_FIRST_SECONDS = 600.0
# A pass over every note's content hash (140 ms at 100k notes, the GIL held for most of it) runs
# at most this often, and at a server's start; the passes a write wakes between two look only at
# the notes this process changed (Index.touched_notes) and those not yet settled. Another
# process's changes are taken in by the next full pass.
FULL_PASS_SECONDS = IDLE_SECONDS
# The duplicate guard's vectors of new memories' first chunks kept (the newest), for the pass
# that embeds those memories once written: a short memory's one chunk is not run through the
# model twice, and the background pass leaves the cores to the requests.
FRESH = 64
# Worker processes of `memvault embed` at most (one a core below that): each holds its own model
# and onnxruntime, about 120 MB (PSS), so two keep a first embedding under 400 MB in all.
SHELL_WORKERS = 2


@dataclass
class _Pending:
    """A note whose vectors are being made: its chunks, and the vectors found or made."""

    rowid: int
    note_hash: str
    rows: list[ChunkRow]
    texts: dict[bytes, str]
    vectors: dict[bytes, np.ndarray] = field(default_factory=dict)


class Semantic:
    """The semantic side of one vault's search."""

    def __init__(self, index: Index, store: VaultStore, setting: str | None) -> None:
        self._index = index
        self._store = store
        self._setting = setting
        # Why the model would not load or run, once it failed to: semantic search is then off.
        self._broken = ""
        self._loaded: tuple[Embedder, VectorStore, VectorTable] | None = None
        self._known: dict[int, str] = {}
        self._unsettled: set[int] = set()
        self._next_full = 0.0
        self._fresh: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._asker = ThreadPoolExecutor(workers.parallelism() or 1, "memvault-meaning")
        self._next_prune = time.monotonic() + PRUNE_FIRST_SECONDS

    @cached_property
    def _model(self) -> tuple[ModelSpec | None, str]:
        """The model and why there is none, looked up at the first need: a command that never
        searches (write, list) does not pay for finding and fingerprinting it."""
        try:
            return find_model(self._setting), ""
        except Unavailable as exc:
            return None, str(exc)

    @property
    def spec(self) -> ModelSpec | None:
        return None if self._broken else self._model[0]

    @property
    def reason(self) -> str:
        """Why semantic search is off; empty when it is on."""
        return self._broken or self._model[1]

    @property
    def enabled(self) -> bool:
        return self.spec is not None

    def has_vectors(self) -> bool:
        """Whether the index holds vectors of this model (without loading it or numpy)."""
        return self.spec is not None and bool(
            self._index.query("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", [self.spec.key])
        )

    def loading(self) -> bool:
        """Whether a server's background thread is still loading the vectors: until it is
        done, a search is full-text unless its caller asks for meaning (and waits)."""
        return self._thread is not None and self._loaded is None

    def ready(self) -> bool:
        """Whether a search by meaning can run now: this model's vectors exist, a server has
        loaded them, and the model runs (in a process without a background thread, loaded
        now: the search needs it next)."""
        return (
            self.has_vectors() and not self.loading() and (self._thread is not None or self._runs())
        )

    def start(self) -> None:
        """Embed from now on in the background (a server): a thread finds the work and a
        worker process at a lower priority runs the model, so requests keep the server's
        cores, its GIL and its memory; full-text search goes on meanwhile."""
        if self.enabled and self._thread is None:
            self._pool = workers.pool(1, low_priority=True)
            self._thread = threading.Thread(target=self._run, name="memvault-embed", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Something changed: look for notes to embed now rather than at the next idle tick."""
        self._wake.set()

    def close(self) -> None:
        """Stop the background thread after its current batch (already saved ones stay), and
        the threads of the searches."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        self._asker.shutdown()

    def question_soon(self, text: str) -> Future[Vectors]:
        """A question's vector, made in a thread of its own (once the vectors are loaded), so
        that the caller reads its filter's notes meanwhile."""
        return self._asker.submit(self._question, text)

    def _question(self, text: str) -> Vectors:
        embedder, _store, _table = self._ready()
        return embedder.query(text)

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
        _embedder, _store, table = self._ready()
        return table.nearest(question.result(), limit, among, leaving_out)

    def within(self, vector: np.ndarray, at_least: float) -> list[Near]:
        """Every note whose first chunk is at least `at_least` close to a vector, best first."""
        _embedder, _store, table = self._ready()
        return table.within(vector, at_least)

    def within_soon(self, title: str, body: str, at_least: float) -> Future[list[Near]]:
        """`within` of a memory not yet written (`passage`), found in a thread of its own, so
        that the writer compares the memory's text with the notes' meanwhile: the model lets
        go of the GIL, and a short write waits for the slower of the two, not for both."""
        return self._asker.submit(self._within_new, title, body, at_least)

    def _within_new(self, title: str, body: str, at_least: float) -> list[Near]:
        """`within` of a memory not yet written; none when the model will not run (the write
        is then compared by its text alone)."""
        try:
            return self.within(self.passage(title, body), at_least)
        except Unavailable:
            return []

    def related(
        self, rowid: int, limit: int, among: Collection[int] | None, leaving_out: Collection[int]
    ) -> list[Near] | None:
        """The notes closest in meaning to a note, by the cosine of their mean chunk vectors
        (which found npm's "See Also" pages better than a best-chunk match: benchmarks/
        service/related.py); None when the note has no vectors yet."""
        _embedder, _store, table = self._ready()
        return table.related(rowid, limit, among, leaving_out)

    def passage(self, title: str, body: str) -> Vectors:
        """A memory not yet written, by its first chunk embedded as the notes' chunks are (one
        short text, one run of the model); the vector is kept (FRESH) for the memory's own
        embedding once it is written."""
        from memvault.semantic.vector_store import as_stored

        embedder, _store, _table = self._ready()
        first = chunks(title, body, embedder.measure, limit=1)[0]
        vector: Vectors = embedder.passages([first.text])[0]
        with self._lock:
            self._fresh[_row(0, first).hash] = as_stored(vector)
            if len(self._fresh) > FRESH:
                self._fresh.popitem(last=False)
        return vector

    def excerpt(self, rowid: int, chunk: int) -> str:
        """The text of a note's chunk, to show as a search hit's snippet; empty when the note
        changed or went since (its vectors are about to follow)."""
        _embedder, store, _table = self._ready()
        found = store.note_path(rowid)
        rows = store.chunks(found[1]) if found else []
        if found is None or chunk >= len(rows):
            return ""
        try:
            body = split_document(self._store.read_text(found[0])).body
        except MemvaultError:
            return ""
        return body[rows[chunk].start : rows[chunk].end].strip()

    def status(self, load: bool = True) -> SemanticStatus:
        """Whether semantic search is on, with which model, and how far its embedding is
        (counted in the index, unless this process holds the vectors already). Outside a
        server the model is loaded and run to tell, unless not to `load` it."""
        if self.spec is None or (load and self._thread is None and not self._runs()):
            return SemanticStatus(False, None, self.reason, 0, 0)
        store = self._vector_store
        embedded = len(self._loaded[2]) if self._loaded else len(store.embedded())
        return SemanticStatus(True, self.spec.key, "", embedded, len(store.notes()) - embedded)

    def catch_up(self, progress: Progress | None = None, everything: bool = True) -> int:
        """Embed every note whose vectors are missing or stale, in batches, each saved as it is
        done, in order; returns how many notes were embedded (fewer when stopped). A server
        keeps its vectors in memory in step and sends its batches to its worker; `memvault
        embed` never loads them (436 MB at 100k notes) and embeds on one worker a core (up to
        SHELL_WORKERS) when there is more than a batch to do, a batch in flight for each and
        one more queued, so that no worker waits while the next batch is read and cut (3,000
        generated notes: 57 s against 53). A server's background pass is not `everything`: it
        looks at the notes `_stale` names."""
        table: VectorTable | None = None
        if self._thread is None and self._loaded is None:
            embedder, store = self._embedder, self._vector_store
            with self._lock:
                self._known = store.embedded()
        else:
            embedder, store, table = self._ready()
        todo = list(self._stale(store, table, everything))
        shell = self._pool is None and len(todo) > BATCH
        cores = min(workers.parallelism(), SHELL_WORKERS) if shell else 0
        pool = workers.pool(cores) if cores > 1 else self._pool
        done = 0
        flight: deque[tuple[int, list[_Pending], Future[np.ndarray]]] = deque()
        try:
            for position, batch in self._batches(store, todo):
                flight.append((position, batch, self._embedding(embedder, pool, batch)))
                while flight and (len(flight) > cores or position == len(todo)):
                    at, finished, vectors = flight.popleft()
                    done += self._finish(store, table, finished, vectors.result())
                    if progress is not None:
                        progress(at, len(todo))
        except BrokenProcessPool:
            if self._pool is not None:  # a server's worker died: the next pass uses a new one
                self._pool = workers.pool(1, low_priority=True)
            raise
        finally:
            if pool is not self._pool and pool is not None:
                pool.shutdown(cancel_futures=True)
        return done

    def prune(self, thorough: bool) -> int:
        """Drop the vectors and chunk maps no note uses any more (prune.py); returns
        how many vectors went. Needs no model: a vault with semantic search off prunes too."""
        return prune.prune(self._index, thorough)

    def _take_in(self) -> int:
        """Publish to the vectors in memory the changed notes whose vectors another process of
        the vault has saved (a server without the turn to embed): read from the index, with
        no file read, no model run and nothing written; returns how many."""
        _embedder, store, table = self._ready()
        taken = 0
        for rowid, note_hash in self._stale(store, table, everything=False).items():
            rows = store.chunks(note_hash)
            have = store.vectors(r.hash for r in rows)
            if not rows or any(r.hash not in have for r in rows):
                continue
            self._publish(table, rowid, note_hash, [have[r.hash] for r in rows])
            taken += 1
        return taken

    def _stale(
        self, store: VectorStore, table: VectorTable | None, everything: bool
    ) -> dict[int, str]:
        """The notes (rowid: content hash) whose vectors are missing or stale, among every
        note when asked for `everything` or a full pass is due (FULL_PASS_SECONDS), else among
        those this process changed since and those an earlier pass left unsettled; notes gone
        from the index are forgotten first, and dropped from `table` when there is one."""
        now = time.monotonic()
        touched = self._index.touched_notes()
        with self._lock:
            looked = self._unsettled | (touched or set())
        full = everything or touched is None or len(looked) > TOUCHED_KEPT
        full = full or now >= self._next_full
        notes = store.notes(None if full else looked)
        with self._lock:
            if full:
                self._next_full, looked = now + FULL_PASS_SECONDS, set(self._known)
            for rowid in [r for r in looked if r in self._known and r not in notes]:
                if table is not None:
                    table.remove(rowid)
                del self._known[rowid]
            stale = {r: h for r, h in notes.items() if self._known.get(r) != h}
            self._unsettled = set(stale)
            return stale

    def _batches(self, store: VectorStore, todo: list[int]) -> Iterator[tuple[int, list[_Pending]]]:
        """The notes to embed in batches of about BATCH chunks, each with the position of its
        last note in `todo`; none once stopped."""
        batch: list[_Pending] = []
        for position, rowid in enumerate(todo, start=1):
            if self._stop.is_set():
                return
            pending = self._prepare(store, rowid)
            if pending is not None:
                batch.append(pending)
            if sum(len(p.texts) for p in batch) >= BATCH or position == len(todo):
                yield position, batch
                batch = []

    @cached_property
    def _embedder(self) -> Embedder:
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

    def _runs(self) -> bool:
        """Whether the model loads and runs (loading it, at its first need)."""
        try:
            return self._embedder.dimensions > 0
        except Unavailable:
            return False

    @cached_property
    def _vector_store(self) -> VectorStore:
        """The index's tables of chunks and vectors for this model."""
        from memvault.semantic.vector_store import VectorStore

        if self.spec is None:
            raise Unavailable(self.reason)
        return VectorStore(self._index, self.spec.key, self.spec.chunker)

    def _ready(self) -> tuple[Embedder, VectorStore, VectorTable]:
        """The model and the vectors the index holds, loaded once: in one read of the index
        (a server loads them in its background thread, while full-text search answers)."""
        if self.spec is None:
            raise Unavailable(self.reason)
        with self._lock:
            if self._loaded is None:
                from memvault.semantic.vectors import ROOM, VectorTable

                embedder, store = self._embedder, self._vector_store
                table = VectorTable(embedder.dimensions, split=workers.parallelism() > 1)
                stored = store.every_vector(embedder.dimensions, ROOM)
                table.load(stored.notes, stored.matrix, stored.scales)
                self._known.update(stored.hashes)
                self._loaded = (embedder, store, table)
            return self._loaded

    def _prepare(self, store: VectorStore, rowid: int) -> _Pending | None:
        """A note's chunks and which of their texts still need a vector; None when the note
        went or changed since it was indexed (the next pass sees the new version)."""
        found = store.note_path(rowid)
        if found is None:
            return None
        path, note_hash = found
        try:
            memory, _doc = self._store.read(path)
        except MemvaultError as exc:
            log.warning("embedding skipped %s: %s", path, exc)
            return None
        if not note_hash.startswith(memory.version):
            return None
        pieces = chunks(memory.title, memory.body, self._embedder.measure)
        rows = [_row(seq, piece) for seq, piece in enumerate(pieces)]
        texts = {row.hash: piece.text for row, piece in zip(rows, pieces, strict=True)}
        with self._lock:
            fresh = {h: self._fresh.pop(h) for h in texts if h in self._fresh}
        have = fresh | store.vectors(texts)
        pending = _Pending(
            rowid, note_hash, rows, {h: t for h, t in texts.items() if h not in have}
        )
        pending.vectors.update(have)
        return pending

    def _embedding(
        self, embedder: Embedder, pool: ProcessPoolExecutor | None, batch: list[_Pending]
    ) -> Future[np.ndarray]:
        """The vectors of a batch's missing texts (`_missing`'s): made in `pool`'s workers when
        there is one, else here and now."""
        texts = list(_missing(batch).values())
        if pool is not None and texts and self.spec is not None:
            return pool.submit(embed_passages, self.spec, texts)
        made: Future[np.ndarray] = Future()
        made.set_result(embedder.passages(texts))
        return made

    def _finish(
        self,
        store: VectorStore,
        table: VectorTable | None,
        batch: list[_Pending],
        made: np.ndarray,
    ) -> int:
        """Save a batch's vectors (those it found and those made for it), and publish them to
        the vectors in memory when this process holds them."""
        from memvault.semantic.vector_store import as_stored

        made_for = dict(zip(_missing(batch), as_stored(made), strict=True))
        for pending in batch:
            pending.vectors.update((digest, made_for[digest]) for digest in pending.texts)
            store.save(pending.note_hash, pending.rows, pending.vectors)
            vectors = [pending.vectors[r.hash] for r in pending.rows]
            self._publish(table, pending.rowid, pending.note_hash, vectors)
        return len(batch)

    def _publish(
        self, table: VectorTable | None, rowid: int, note_hash: str, vectors: list[np.ndarray]
    ) -> None:
        """A note's chunk vectors, in chunk order, into the vectors in memory (when this
        process holds them), and its content hash into what those vectors follow."""
        import numpy as np

        with self._lock:
            if table is not None:
                table.put(rowid, np.stack(vectors))
            self._known[rowid] = note_hash

    def _run(self) -> None:
        """The background thread: catch up when this process has the vault's turn to embed,
        else take in the vectors the process embedding the vault saved; then sleep until woken
        or idle too long."""
        while not self._stop.is_set():
            try:
                with self._store.embedding_turn() as ours:
                    ready = self.catch_up(everything=False) if ours else self._take_in()
                    dropped = self._prune_due() if ours else 0
                if ready:
                    log.info("semantic search: vectors of %d notes ready", ready)
                if dropped:
                    log.info("semantic search: dropped %d vectors no note uses", dropped)
            except Unavailable as exc:  # the model will not run: said once, in the log
                log.warning("%s", exc)
                return
            except Exception:
                log.exception("semantic search: embedding failed; trying again later")
            self._wake.wait(IDLE_SECONDS)
            self._wake.clear()

    def _prune_due(self) -> int:
        """`prune` (not thorough) once PRUNE_FIRST_SECONDS have passed since the start, then
        PRUNE_SECONDS since the last one."""
        if time.monotonic() < self._next_prune:
            return 0
        self._next_prune = time.monotonic() + PRUNE_SECONDS
        return self.prune(thorough=False)


def _missing(batch: list[_Pending]) -> dict[bytes, str]:
    """The texts a batch needs vectors for, each once however many of its notes hold it (by
    hash, in order): one run of the model gives a text one vector, where two runs could give
    two a little apart (the int8 model quantises each run by its own range)."""
    return {digest: text for pending in batch for digest, text in pending.texts.items()}


def _row(seq: int, piece: Chunk) -> ChunkRow:
    from memvault.semantic.vector_store import ChunkRow

    digest = hashlib.blake2b(piece.text.encode("utf-8"), digest_size=16).digest()
    return ChunkRow(seq, digest, piece.start, piece.end)
