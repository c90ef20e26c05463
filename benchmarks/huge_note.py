"""Search over a vault that holds one 50 MB note: FTS5's snippets grow with the square of the
text they are drawn from, so memvault indexes a long body in sections (rows.sections)."""

from __future__ import annotations

import time
from pathlib import Path

from workload import Query, frontmatter, note_files

from memvault.config import Settings
from memvault.core.records import Filter
from memvault.service.vault import VaultService

HUGE_BYTES = 50_000_000
LAST_WORD = "zyzzyvaend"
HUGE_PATH = "huge/everything.md"


def write_huge_note(vault: Path) -> Path:
    """A hand-made note of HUGE_BYTES: the vault's own bodies one after another (so the
    benchmark's queries match it all along), then a word no other note has."""
    bodies = [frontmatter(f.read_text(encoding="utf-8"))[1] for f in note_files(vault)]
    parts = ["---\ntitle: Everything ever logged\n---\n"]
    size = 0
    while size < HUGE_BYTES:
        for body in bodies:
            parts.append(body)
            size += len(body)
    parts.append(f"\nThe very last word is {LAST_WORD}.\n")
    path = vault / HUGE_PATH
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(parts), encoding="utf-8")
    return path


def search_times(vault: Path, index: Path, asked: list[Query]) -> list[float]:
    """Seconds of each unfiltered in-process search once the huge note is indexed; fails when
    the note's last word does not find it first (a hybrid search adds its semantic
    neighbours after it)."""
    write_huge_note(vault)
    service = VaultService.open(Settings(vault=vault, index_path=index))
    try:
        service.upkeep.sync()
        found = [hit.path for hit in service.search(LAST_WORD).results]
        if found[:1] != [HUGE_PATH]:
            raise RuntimeError(f"the huge note's last word found {found} first")
        times = []
        for query in asked:
            started = time.perf_counter()
            service.search(query.text, 10, 0, Filter())
            times.append(time.perf_counter() - started)
        return times[3:]
    finally:
        service.close()
