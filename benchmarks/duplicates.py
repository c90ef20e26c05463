"""The duplicate guard's threshold in meaning: the cosine of reworded pairs vs merely related
ones (benchmarks/quality/duplicates.json), by the default model, and what one check costs.

    python benchmarks/duplicates.py

Each memory is embedded as the guard embeds a new one and as notes are embedded: its first
chunk (title, newline, content). Not part of `make test`.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from memvault.semantic.chunks import chunks
from memvault.semantic.model import Embedder, find_model

HERE = Path(__file__).parent


def main() -> None:
    """Print each kind's cosines, the gap between them, and the time to embed one memory."""
    spec = json.loads((HERE / "quality" / "duplicates.json").read_text())
    embedder = Embedder(find_model(None))

    def vector(memory: list[str]) -> object:
        return embedder.passages([chunks(memory[0], memory[1], embedder.measure, limit=1)[0].text])[
            0
        ]

    cosines: dict[str, list[float]] = {}
    for kind in ("same", "related"):
        cosines[kind] = sorted(float(vector(a) @ vector(b)) for a, b in spec[kind])  # type: ignore[operator]
        values = cosines[kind]
        print(
            f"{kind}: n={len(values)} min {values[0]:.3f} median {statistics.median(values):.3f} "
            f"max {values[-1]:.3f}"
        )
    print(f"gap: related max {cosines['related'][-1]:.3f} < same min {cosines['same'][0]:.3f}")
    texts = [pair[0] for pair in spec["same"]]
    started = time.perf_counter()
    for memory in texts * 5:
        vector(memory)
    print(f"one memory embedded: {(time.perf_counter() - started) / len(texts) / 5 * 1000:.1f} ms")


if __name__ == "__main__":
    main()
