"""Where a write checks duplicates: a memory of the same title in the same scope, one with
near-identical content, or (short ones, by meaning) one saying the same in other words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memvault.errors import Duplicate
from memvault.index.database import Index
from memvault.search import similarity
from memvault.search.filters import same_scope
from memvault.semantic.engine import Semantic
from memvault.service import related
from memvault.storage.files import VaultStore
from memvault.words import command, param

if TYPE_CHECKING:
    from memvault.semantic.vectors import Near

DUPLICATE_CANDIDATES = 5
DUPLICATE_WORDS = 8
EDIT = command("edit_mem", "edit")


@dataclass
class Suspects:
    """What a new memory may duplicate, looked for before the vault lock is taken: the
    refusal its near-identical content calls for, and the notes saying the same by meaning."""

    identical: Duplicate | None = None
    twins: list[Near] = field(default_factory=list)


class DuplicateGuard:
    """The duplicate checks of the writes, over the index (and the files it names)."""

    def __init__(self, index: Index, store: VaultStore, semantic: Semantic):
        self._index = index
        self._store = store
        self._semantic = semantic

    def suspects(self, title: str, content: str, scope: str | None) -> Suspects:
        """What a new memory may duplicate, looked for before the vault lock is taken: by
        meaning in a thread while the texts are compared here, so no writer waits for the
        model, and this one waits for the slower side."""
        meaning = related.twins_soon(self._semantic, title, content)
        identical = self._identical(content, scope)
        return Suspects(identical, meaning.result())

    def _identical(self, content: str, scope: str | None) -> Duplicate | None:
        """The refusal a memory of this scope with near-identical content calls for, if one
        has it: looked for before the vault lock (a few ms of reads at 100k notes), so two
        writers of the same text at the same moment may both be kept, as by meaning."""
        words = similarity.longest_words(content, DUPLICATE_WORDS)
        largest = similarity.largest_alike(content)
        for path in self._index.names.with_all_words(words, DUPLICATE_CANDIDATES, largest, [scope]):
            other = self._store.read_if_readable(path)
            if other is None:
                continue  # gone or spoilt since it was indexed: no twin, and no reason to fail
            score = similarity.content_similarity(content, other.body)
            if score >= similarity.NEAR_IDENTICAL:
                return Duplicate(
                    (
                        f"{other.title!r} (id {other.id}, {path}) has near-identical content "
                        f"({score:.0%} alike); edit it with ",
                        EDIT,
                        ", or pass ",
                        param("allow_duplicate", "true"),
                        " to keep both",
                    ),
                    other.id,
                )
        return None

    def refuse(
        self, title: str, scope: str | None, replacing: str | None, suspects: Suspects
    ) -> None:
        """Duplicate if a memory of this scope has this title (looked up under the vault lock,
        so exact), near-identical content (`suspects.identical`), or is one of the twins saying
        the same in other words (service/related.py), except the memory at `replacing` for the
        last (a new memory superseding it may say the same)."""
        self.refuse_title(title, scope)
        if suspects.identical is not None:
            raise suspects.identical
        for hit in related.reworded(self._index, suspects.twins):
            if same_scope(hit.scope, scope) and hit.path != replacing:
                raise Duplicate(
                    f"{hit.title!r} (id {hit.id}, {hit.path}) says the same in other words "
                    f"({hit.relevance:.0%} alike in meaning); edit it, or pass "
                    "allow_duplicate=true to keep both",
                    hit.id,
                )

    def refuse_title(self, title: str, scope: str | None, own: str | None = None) -> None:
        """Duplicate if a memory of this scope other than the one at `own` has this title."""
        path = self.titled(title, scope, own)
        note = None if path is None else self._index.names.note(path)
        if note is not None:
            raise Duplicate(
                (
                    f"a memory titled {note.title!r} exists (id {note.id}, {path}); edit it with ",
                    EDIT,
                    ", replace it with ",
                    param("on_exists", "replace"),
                    ", or pass ",
                    param("allow_duplicate", "true"),
                    " to keep both",
                ),
                note.id,
            )

    def titled(self, title: str, scope: str | None, own: str | None = None) -> str | None:
        """The path of a memory of this scope (other than the one at `own`) with this title
        (case ignored); a title may repeat in other scopes."""
        for path in self._index.names.titled(title):
            note = self._index.names.note(path)
            if note is not None and path != own and same_scope(note.scope, scope):
                return path
        return None
