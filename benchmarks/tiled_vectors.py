"""The semantic side's matrix cost at a bigger scale, from a smaller vault's real vectors tiled.

    python benchmarks/tiled_vectors.py INDEX VAULT [--times 10] [--queries 150]

Embedding 100k generated notes takes hours of this machine's CPU, so this measures what the
size changes, the matrix, without it: the vectors of an embedded index (a 10k one from
`run.py`'s cache) are loaded as a server loads them (timed), copied `--times` times under new
note ids, and searched with the benchmark's queries (embedded once) under their own filters,
each filter letting through the same share of notes as in the real vault (CPU time beside the
wall time: on a busy shared machine it tells more). These are figures of tiled vectors, not of
a real 100k vault: `run.py --sizes 100000` measures that.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from measure import median, percentile
from workload import queries

from memvault.core.records import Filter
from memvault.index.database import Index
from memvault.semantic.model import Embedder, find_model
from memvault.semantic.vector_store import VectorStore
from memvault.semantic.vectors import ROOM, VectorTable

CANDIDATES = 50  # as many as a hybrid search asks the semantic side for (vault.CANDIDATES)


def main(argv: list[str] | None = None) -> None:
    """Load, tile and search; print load time, matrix size and query latencies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--times", type=int, default=10)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    spec = find_model(None)
    embedder = Embedder(spec)
    index = Index(args.index)
    started = time.perf_counter()
    stored = VectorStore(index, spec.key, spec.chunker).every_vector(embedder.dimensions, ROOM)
    loaded = time.perf_counter() - started
    rows, notes = len(stored.notes), len(stored.hashes)
    print(f"loaded {rows:,} chunk vectors of {notes:,} notes in one read: {loaded:.2f} s")
    top = int(stored.notes.max()) + 1
    tiled_notes = np.concatenate([stored.notes + k * top for k in range(args.times)])
    spare = int(len(tiled_notes) * ROOM)
    matrix = np.zeros((len(tiled_notes) + spare, embedder.dimensions), dtype=np.int8)
    matrix[: len(tiled_notes)] = np.tile(stored.matrix[:rows], (args.times, 1))
    scales = np.zeros(len(matrix), dtype=np.float32)
    scales[: len(tiled_notes)] = np.tile(stored.scales[:rows], args.times)
    table = VectorTable(embedder.dimensions)
    started = time.perf_counter()
    table.load(tiled_notes, matrix, scales)
    print(
        f"tiled x{args.times}: {len(tiled_notes):,} rows of {len(table):,} notes, "
        f"{matrix.nbytes / 2**20:.0f} MB int8 (with room); table built in "
        f"{time.perf_counter() - started:.2f} s"
    )
    asked = queries(args.vault, args.seed, args.queries)
    shares = []
    timings: dict[str, list[float]] = {"filtered": [], "no filter": []}
    cpu: dict[str, float] = {"filtered": 0.0, "no filter": 0.0}
    for query in asked:
        where = Filter(
            query.category if query.tag is None else None, (query.tag,) if query.tag else ()
        )
        among, _ = index.search.admitted(where)
        passing = np.array(sorted(among or ()), dtype=np.int64)
        tiled = {int(n) for n in np.concatenate([passing + k * top for k in range(args.times)])}
        shares.append(len(passing) / notes)
        vector = embedder.query(query.text)
        for name, chosen in (("filtered", tiled), ("no filter", None)):
            started, used = time.perf_counter(), time.process_time()
            table.nearest(vector, CANDIDATES, chosen)
            timings[name].append((time.perf_counter() - started) * 1000)
            cpu[name] += (time.process_time() - used) * 1000 / len(asked)
    index.close()
    print(
        f"filters let through {median(shares):.1%} of the notes (median), "
        f"{percentile(shares, 95):.1%} (p95)"
    )
    for name, ms in timings.items():
        print(
            f"nearest {CANDIDATES}, {name}: "
            f"p50 {median(ms):.2f} ms, p95 {percentile(ms, 95):.2f} ms (wall); "
            f"{cpu[name]:.2f} ms of CPU on average"
        )


if __name__ == "__main__":
    main()
