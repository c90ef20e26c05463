"""The embedding of the notes whose vectors are missing or stale, in batches, each saved as done.

New and changed notes are found by comparing each note's content hash with the one its vectors
were made from, so writes, syncs and the watcher only need to `wake` a server's background
thread, and a crash or a stop loses nothing but the batch in hand. A server's thread sends its
batches to one worker process at a lower priority, on a share of the cores, and in a long pass
(a first embedding) waits for the requests to stop before each batch (throttle.py); it prunes
on a schedule. `memvault embed` runs `catch_up` in the foreground, on a pool of its own.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memvault import workers
from memvault.core.records import Backlog, Progress
from memvault.errors import MemvaultError
from memvault.index.database import Index
from memvault.index.entries import TOUCHED_KEPT
from memvault.semantic.chunks import Chunk, chunks
from memvault.semantic.loaded_vectors import LoadedVectors
from memvault.semantic.model import BATCH, Embedder, Model, Unavailable, embed_passages
from memvault.semantic.prune import PruneSchedule
from memvault.semantic.throttle import Throttle, embed_cores
from memvault.storage.files import VaultStore

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    import numpy as np

    from memvault.semantic.vector_store import ChunkRow, VectorStore

log = logging.getLogger(__name__)

# How long a server's background thread waits before its first pass, unless woken.
START_SECONDS = 1.0
# How long the background thread sleeps when nobody wakes it: a change the watcher missed is
# embedded within this.
IDLE_SECONDS = 30.0
# A pass over every note's content hash (140 ms at 100k notes, the GIL held for most of it) runs
# at most this often, and at a server's start; the passes a write wakes between two look only at
# the notes this process changed (Entries.touched_notes) and those not yet settled. Another
# process's changes are taken in by the next full pass.
FULL_PASS_SECONDS = IDLE_SECONDS
# The duplicate guard's vectors of new memories' first chunks kept (the newest), for the pass
# that embeds those memories once written: a short memory's one chunk is not run through the
# model twice, and the background pass leaves the cores to the requests.
FRESH = 64
# Worker processes of `memvault embed` at most (one a core below that): each holds its own model
# and onnxruntime, about 120 MB (PSS), so two keep a first embedding under 400 MB in all.
SHELL_WORKERS = 2
# A chunk holds about this many bytes of text (128 word-pieces): a backlog's size in chunks.
BYTES_PER_CHUNK = 500
# A server's pass of at most this many notes (memories just written) embeds them at once,
# whatever the load, so that they are found by meaning a second or two after their write; a
# longer one (a first embedding, an import) waits for the server to be quiet before each batch.
UNPACED = 8


@dataclass
class _Pending:
    """A note whose vectors are being made: its chunks, and the vectors found or made."""

    rowid: int
    note_hash: str
    rows: list[ChunkRow]
    texts: dict[bytes, str]
    vectors: dict[bytes, np.ndarray] = field(default_factory=dict)


class EmbeddingWorker:
    """What embeds a vault's notes: a server's background thread and its worker process, or
    `catch_up` called in the foreground."""

    def __init__(
        self, index: Index, store: VaultStore, model: Model, vectors: LoadedVectors
    ) -> None:
        self._index = index
        self._store = store
        self._model = model
        self._vectors = vectors
        self._unsettled: set[int] = set()
        self._next_full = 0.0
        self._fresh: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._pruning = PruneSchedule(index)
        self._throttle = Throttle(self._stop)
        self._cores = 1
        # The notes a server's last pass found without current vectors, less those done since;
        # None until a pass (or `waiting`) has counted them.
        self._waiting: int | None = None

    @property
    def serving(self) -> bool:
        """Whether a server's background thread embeds (`start` was called)."""
        return self._thread is not None

    def waiting(self) -> int:
        """How many notes wait for their vectors, as the server's last pass found them (less
        those done since); counted in the index (`backlog`) until a pass has counted them."""
        if self._waiting is None:
            self._waiting = self.backlog().notes
        return self._waiting

    @property
    def paused(self) -> bool:
        """Whether the background embedding waits for the server's requests to stop."""
        return self._throttle.paused

    def start(self) -> None:
        """Embed from now on in the background (a server): a thread finds the work and a
        worker process at a lower priority runs the model on a share of the cores
        (throttle.embed_cores), so requests keep the server's other cores, its GIL and its
        memory; full-text search goes on meanwhile. Invalid when MEMVAULT_EMBED_CORES is."""
        if self._model.enabled and self._thread is None:
            self._cores = embed_cores()
            self._pool = workers.pool(1, low_priority=True)
            self._thread = threading.Thread(target=self._run, name="memvault-embed", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Something changed: look for notes to embed now rather than at the next idle tick."""
        self._wake.set()

    def close(self) -> None:
        """Stop the background thread after its current batch (already saved ones stay)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def keep(self, text: str, vector: np.ndarray) -> None:
        """The vector of a new memory's first chunk, made for the duplicate guard, kept (the
        newest FRESH) for this memory's own embedding once it is written."""
        from memvault.semantic.vector_store import as_stored

        with self._lock:
            self._fresh[_digest(text)] = as_stored(vector)
            if len(self._fresh) > FRESH:
                self._fresh.popitem(last=False)

    def catch_up(
        self, progress: Progress | None = None, everything: bool = True, paced: bool = False
    ) -> int:
        """Embed every note whose vectors are missing or stale, in batches, each saved as it is
        done, in order; returns how many notes were embedded (fewer when stopped). A server
        keeps its vectors in memory in step and sends its batches to its worker; `memvault
        embed` never loads them (436 MB at 100k notes) and embeds on one worker a core (up to
        SHELL_WORKERS) when there is more than a batch to do, a batch in flight for each and
        one more queued, so that no worker waits while the next batch is read and cut (3,000
        generated notes: 57 s against 53). A server's background pass is not `everything`: it
        looks at the notes `_stale` names, and is `paced` when it holds more than UNPACED
        notes (each batch waits its turn: throttle.py)."""
        if self._thread is None and not self._vectors.loaded:
            embedder = self._model.embedder
            self._vectors.follow_index()
        else:
            self._vectors.table()
            embedder = self._model.embedder
        store = self._vectors.store
        todo = list(self._stale(store, everything))
        shell = self._pool is None and len(todo) > BATCH
        cores = min(workers.parallelism(), SHELL_WORKERS) if shell else 0
        pool = workers.pool(cores) if cores > 1 else self._pool
        pace = self._throttle.wait_turn if paced and len(todo) > UNPACED else None
        if paced:
            self._waiting = len(todo)
        done = 0
        flight: deque[tuple[int, list[_Pending], Future[np.ndarray]]] = deque()
        try:
            for position, batch in self._batches(store, todo, pace):
                flight.append((position, batch, self._embedding(embedder, pool, batch)))
                while flight and (len(flight) > cores or position == len(todo)):
                    at, finished, vectors = flight.popleft()
                    done += self._finish(store, finished, vectors.result())
                    if progress is not None:
                        progress(at, len(todo))
        except BrokenExecutor:  # the process pool's (its module is not imported up front)
            if self._pool is not None:  # a server's worker died: the next pass uses a new one
                self._pool = workers.pool(1, low_priority=True)
            raise
        finally:
            if pool is not self._pool and pool is not None:
                pool.shutdown(cancel_futures=True)
        return done

    def embed_touched(self) -> int:
        """Embed now the notes this process wrote (a CLI write or edit), not the rest of the
        vault; returns how many. Unavailable when the model will not run."""
        with self._lock:
            self._next_full = time.monotonic() + FULL_PASS_SECONDS
        return self.catch_up(everything=False)

    def backlog(self) -> Backlog:
        """The notes waiting for vectors, and about how many chunks they hold: one read of the
        index (their sizes are there); no file is read and the model is not loaded."""
        waiting, size = self._index.pool.query(
            "SELECT count(*), coalesce(sum(size), 0) FROM notes n WHERE NOT EXISTS (SELECT 1"
            " FROM chunk_maps c WHERE c.chunker = ? AND c.note_hash = n.hash AND c.seq = 0)",
            [self._vectors.store.chunker],
        )[0]
        return Backlog(int(waiting), int(waiting) + int(size) // BYTES_PER_CHUNK)

    def _take_in(self) -> int:
        """Publish to the vectors in memory the changed notes whose vectors another process of
        the vault has saved (a server without the turn to embed): read from the index, with
        no file read, no model run and nothing written; returns how many."""
        self._vectors.table()
        store = self._vectors.store
        taken = 0
        stale = self._stale(store, everything=False)
        for rowid, note_hash in stale.items():
            rows = store.chunks(note_hash)
            have = store.vectors(r.hash for r in rows)
            if not rows or any(r.hash not in have for r in rows):
                continue
            self._vectors.put(rowid, note_hash, [have[r.hash] for r in rows])
            taken += 1
        self._waiting = len(stale) - taken
        return taken

    def _stale(self, store: VectorStore, everything: bool) -> dict[int, str]:
        """The notes (rowid: content hash) whose vectors are missing or stale, among every
        note when asked for `everything` or a full pass is due (FULL_PASS_SECONDS), else among
        those this process changed since and those an earlier pass left unsettled; notes gone
        from the index are forgotten first (LoadedVectors.stale)."""
        now = time.monotonic()
        touched = self._index.entries.touched_notes()
        with self._lock:
            looked = self._unsettled | (touched or set())
        full = everything or touched is None or len(looked) > TOUCHED_KEPT
        full = full or now >= self._next_full
        notes = store.notes(None if full else looked)
        if full:
            with self._lock:
                self._next_full = now + FULL_PASS_SECONDS
        stale = self._vectors.stale(notes, None if full else looked)
        with self._lock:
            self._unsettled = set(stale)
        return stale

    def _batches(
        self, store: VectorStore, todo: list[int], pace: Callable[[], None] | None
    ) -> Iterator[tuple[int, list[_Pending]]]:
        """The notes to embed in batches of about BATCH chunks, each with the position of its
        last note in `todo`, each read once `pace` (if any) lets it start; none once stopped."""
        batch: list[_Pending] = []
        for position, rowid in enumerate(todo, start=1):
            if pace is not None and not batch:
                pace()
            if self._stop.is_set():
                return
            pending = self._prepare(store, rowid)
            if pending is not None:
                batch.append(pending)
            if sum(len(p.texts) for p in batch) >= BATCH or position == len(todo):
                yield position, batch
                batch = []

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
        pieces = chunks(memory.title, memory.body, self._model.embedder.measure)
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
        spec = self._model.spec
        if pool is not None and texts and spec is not None:
            threads = self._cores if pool is self._pool else 1
            return pool.submit(embed_passages, spec, texts, threads)
        made: Future[np.ndarray] = Future()
        made.set_result(embedder.passages(texts))
        return made

    def _finish(self, store: VectorStore, batch: list[_Pending], made: np.ndarray) -> int:
        """Save a batch's vectors (those it found and those made for it), publish them to the
        vectors in memory when this process holds them, and count the notes off `waiting`."""
        from memvault.semantic.vector_store import as_stored

        made_for = dict(zip(_missing(batch), as_stored(made), strict=True))
        for pending in batch:
            pending.vectors.update((digest, made_for[digest]) for digest in pending.texts)
            store.save(pending.note_hash, pending.rows, pending.vectors)
            vectors = [pending.vectors[r.hash] for r in pending.rows]
            if self._waiting:  # first: a search that sees the note embedded sees it counted
                self._waiting -= 1
            self._vectors.put(pending.rowid, pending.note_hash, vectors)
        return len(batch)

    def _run(self) -> None:
        """The background thread: catch up when this process has the vault's turn to embed,
        else take in the vectors the process embedding the vault saved; then sleep until woken
        or idle too long."""
        # A server's first second is its start: the MCP client's initialize waits for it, and
        # loading numpy and the vectors here would take the GIL from it (about 0.2 s on two
        # cores). A write or a search that needs the vectors wakes the thread sooner.
        self._wake.wait(START_SECONDS)
        self._wake.clear()
        while not self._stop.is_set():
            try:
                with self._store.embedding_turn() as ours:
                    ready = self.catch_up(everything=False, paced=True) if ours else self._take_in()
                    dropped = self._pruning.prune_if_due() if ours else 0
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


def _missing(batch: list[_Pending]) -> dict[bytes, str]:
    """The texts a batch needs vectors for, each once however many of its notes hold it (by
    hash, in order): one run of the model gives a text one vector, where two runs could give
    two a little apart (the int8 model quantises each run by its own range)."""
    return {digest: text for pending in batch for digest, text in pending.texts.items()}


def _row(seq: int, piece: Chunk) -> ChunkRow:
    """A chunk as the index maps it: its place, its text's hash and its span."""
    from memvault.semantic.vector_store import ChunkRow

    return ChunkRow(seq, _digest(piece.text), piece.start, piece.end)


def _digest(text: str) -> bytes:
    """The hash by which the index keeps a chunk text's vector."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
