"""Search as the faces ask for it: by words (full-text), by meaning, or both fused, with
`min_relevance` and `prefer_recent` applied; memories like one; semantic search's state."""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from memvault.core import clock, timespec
from memvault.core.records import (
    Backlog,
    Filter,
    Progress,
    Related,
    SearchMode,
    SearchPage,
    SemanticStatus,
)
from memvault.index.database import Index
from memvault.index.searching import Match
from memvault.search import relevance
from memvault.search.fusion import fuse
from memvault.semantic.engine import COVERED, Semantic
from memvault.semantic.model import OFF, Unavailable
from memvault.semantic.reranker import Reordering
from memvault.service import related
from memvault.service.lookup import Lookup

if TYPE_CHECKING:
    from memvault.semantic.vectors import Near

log = logging.getLogger(__name__)

# How many notes each side of a hybrid search puts forward for fusion (more when a page asks).
CANDIDATES = 50
# How many of the best matches a search with min_relevance weighs, and how many more than a
# page prefer_recent looks at, for a newer near-tie just below the page.
WEIGHED = 500
RECENT = 20
EMBED_HOW = "`memvault embed` embeds them, as a running server does"
# Deeper than any vault's last page, and within SQLite's integers: a page past the end is empty.
MAX_OFFSET = 1 << 40


class HybridSearch:
    """The ranking of a search: full-text's, the semantic side's, or the two fused."""

    def __init__(self, index: Index, semantic: Semantic, lookup: Lookup):
        self._index = index
        self._semantic = semantic
        self._lookup = lookup

    def search(
        self,
        query: str,
        limit: int = 10,
        offset: int = 0,
        where: Filter | None = None,
        mode: SearchMode | None = None,
        min_relevance: float = 0.0,
        prefer_recent: bool = False,
        count_use: bool = True,
    ) -> SearchPage:
        """Search by words (`keyword`, bm25), by meaning (`semantic`, the notes whose best chunk
        is closest), or both fused (`hybrid`, see search/fusion.py): hybrid when vectors exist
        (and a server has loaded them) unless `mode` says otherwise. `min_relevance` leaves out hits
        less relevant than that (weighing the best WEIGHED matches), `prefer_recent` breaks
        near-ties toward newer memories (search/relevance.py). Each memory returned counts as one
        use, unless `count_use` is off (a person browsing on the web page, letter by letter, is not
        a use)."""
        where = dated(where)
        offset = min(offset, MAX_OFFSET)
        chosen = self._mode(mode)
        if min_relevance > 0 or prefer_recent:
            depth = max(offset + limit, WEIGHED) if min_relevance > 0 else offset + limit + RECENT
            pool = self._ranked(query, depth, 0, where, chosen)
            hits = [hit for hit in pool.results if hit.relevance >= min_relevance]
            hits = relevance.prefer_recent(hits) if prefer_recent else hits
            total = len(hits) if min_relevance > 0 else pool.total
            capped = pool.total_capped and min_relevance == 0
            page = replace(
                pool, results=hits[offset : offset + limit], total=total, total_capped=capped
            )
        else:
            page = self._ranked(query, limit, offset, where, chosen)
        page.offset = offset
        page.has_more = offset + len(page.results) < page.total or page.total_capped
        page.mode = chosen
        page.caveat = "; ".join(c for c in (self._caveat(mode, chosen), page.caveat) if c)
        if count_use:
            self._index.usage.record(hit.id for hit in page.results)
        return page

    def _mode(self, asked: SearchMode | None) -> SearchMode:
        """The ranking a search runs: hybrid by default once meaning can take part, else by
        words; meaning when asked for (waiting for vectors that are loading; Unavailable, why,
        when the model is off), but by words while no note has vectors of this model (the
        page says so)."""
        if asked is None:
            return "hybrid" if self._semantic.ready() else "keyword"
        if asked == "keyword" or self._model_off() or self._semantic.has_vectors():
            return asked
        return "keyword"

    def _model_off(self) -> str:
        """Why the model is off, or empty."""
        return self._semantic.model.reason

    def _caveat(self, asked: SearchMode | None, chosen: SearchMode) -> str:
        """Why a search ran by words only although meaning was asked for or is the default, or
        how little of the vault meaning covered (under 95 %); empty otherwise."""
        if asked == "keyword" or (asked is None and f"={OFF}" in self._model_off()):
            return ""  # words only by choice: the model was turned off
        if chosen == "keyword":
            return f"by words only: {self._why_words_only()}"
        embedded, total = self._semantic.vectors.embedded(), self._index.reports.count()
        if embedded >= total * COVERED:
            return ""
        return (
            f"meaning covers {embedded:,} of {total:,} memories so far "
            f"(the rest by words; {EMBED_HOW})"
        )

    def _why_words_only(self) -> str:
        """Why meaning cannot take part in a search now."""
        if self._model_off():
            return self._model_off()
        if self._semantic.loading():
            return "the vectors are still loading"
        if self._semantic.embedding.serving and self._semantic.has_vectors():
            embedded, total = self._semantic.coverage()
            return (
                f"meaning joins once most memories are embedded ({embedded:,} of {total:,} so "
                "far; the server embeds the rest)"
            )
        return f"no memory is embedded yet ({EMBED_HOW})"

    def _ranked(
        self, query: str, limit: int, offset: int, where: Filter, mode: SearchMode
    ) -> SearchPage:
        """A page of the search in `mode`, in its ranking's order."""
        if mode == "keyword":
            return self._index.search.page(query, limit, offset, where)
        return self._by_meaning(query, limit, offset, where, mode == "hybrid")

    def _by_meaning(
        self, query: str, limit: int, offset: int, where: Filter, hybrid: bool
    ) -> SearchPage:
        """The semantic side's best notes under the filter that match the question (their best
        chunk at least the model's match floor close), fused with full-text's when `hybrid`
        (full-text weighed by the share of the query its first note holds), the best of those
        reordered by the reranker when one is set (semantic/reranker.py); a note only the
        semantic side found shows its best chunk as its snippet. The total counts matches
        only: a question nothing answers gets an empty page."""
        wanted = offset + limit
        if not query.strip() or limit <= 0:
            return SearchPage([], 0)
        question = self._semantic.question_soon(query)
        among, leaving_out = self._index.search.admitted(where)
        count = max(CANDIDATES, wanted)
        meaning = self._semantic.nearest_soon(question, count, among, leaving_out)
        words = self._index.search.candidates(query, where, count) if hybrid else []
        held = self._index.search.share_held(words[0], query) if words else 1.0
        # The snippets of full-text's first `wanted`, made while the semantic side finishes:
        # the page's full-text hits are mostly those; any other one's follow the fusion.
        early = self._index.search.with_snippets(words[:wanted], query)
        floor = self._semantic.model.spec.match_floor if self._semantic.model.spec else 0.0
        found = meaning.result()
        near = [n for n in found if n.score >= floor]  # matches only
        by_meaning = [(n.note, n.rank) for n in near]
        # By meaning alone a note is ranked by its score as a whole (semantic/vectors.py), and
        # shows its best chunk's cosine (`_matches`); fusing one side keeps its order.
        ranked = (
            fuse([(m.rowid, -m.rank) for m in words], by_meaning, held) if hybrid else by_meaning
        )
        best = {n.note: n.chunk for n in found}
        reordering = (
            self._semantic.reranker.start(
                query, ranked, offset, partial(self._semantic.passages, question.result(), best)
            )
            if hybrid
            else Reordering(ranked)
        )
        # The snippets of the rest of the page, and of the notes the reranker may bring onto
        # it, made while it scores them.
        shown = {rowid for rowid, _score in ranked[offset:wanted]} | set(reordering.top)
        late = self._index.search.with_snippets(
            [m for m in words[wanted:] if m.rowid in shown], query
        )
        ranked, reranked, why = reordering.outcome()
        snippets = {m.rowid: m.snippet for m in [*early, *late]}
        whole = {m.rowid for m in words if m.whole}
        page = self._matches(ranked[offset:wanted], snippets, near, whole)
        return SearchPage(
            self._index.search.hits(page, query), len(ranked), caveat=why, reranked=reranked
        )

    def _matches(
        self,
        ranked: list[tuple[int, float]],
        snippets: dict[int, str],
        near: list[Near],
        whole: set[int],
    ) -> list[Match]:
        """The page's notes as matches: full-text's snippet where it has one (the query's
        words marked), else the best chunk's text, each note's cosine, and whether it holds
        every word of the query (`whole`: its relevance is known without a read)."""
        chunk_of = {n.note: n.chunk for n in near}
        cosine = {n.note: n.score for n in near}

        def snippet(rowid: int) -> str:
            if snippets.get(rowid) or rowid not in chunk_of:
                return snippets.get(rowid, "")
            return self._semantic.excerpt(rowid, chunk_of[rowid])

        return [
            Match(rowid, -score, snippet(rowid), cosine.get(rowid, 0.0), whole=rowid in whole)
            for rowid, score in ranked
        ]

    def similar(self, identifier: str, limit: int = 5, where: Filter | None = None) -> Related:
        """The memories most like the one an identifier names, best first, never itself, under
        `where` (as search): by meaning once it has vectors, else by its key words (`by` says
        which). Each memory returned counts as one use."""
        memory = self._lookup.read(self._lookup.locate(identifier))
        found = related.similar(self._index, self._semantic, memory, limit, dated(where))
        self._index.usage.record(hit.id for hit in found.results)
        return found

    def semantic_status(self) -> SemanticStatus:
        """Whether semantic search is on, with which model or why not, and its progress."""
        return self._semantic.status()

    def embed(self, progress: Progress | None = None) -> int:
        """Embed every note without current vectors now (the server does it in the
        background); returns how many. Unavailable says why semantic search is off."""
        return self._semantic.embedding.catch_up(progress)

    def embed_written(self) -> int:
        """Embed now what this process wrote (a CLI write or edit) when this process has the
        model loaded already (the duplicate guard ran it: the vault has vectors), so the next
        search finds it by meaning; returns how many notes. A vault without vectors is left to
        the next search (`embed_if_quick`): a write never loads the model for this alone."""
        if self._model_off() or not self._semantic.model.loaded:
            return 0
        try:
            return self._semantic.embedding.embed_touched()
        except Unavailable:
            return 0

    def embed_if_quick(self, budget: float) -> Backlog:
        """Embed the notes waiting for vectors when that takes about `budget` seconds or less
        (a CLI search, which has no server to do it); what still waits (none when done, or
        with the model off: the search's caveat says why)."""
        if self._model_off():
            return Backlog(0, 0)
        waiting = self._semantic.embedding.backlog()
        if not waiting.notes or waiting.seconds() > budget:
            return waiting
        try:
            self._semantic.embedding.catch_up()
        except Unavailable:
            return waiting
        return Backlog(0, 0)

    def serve_semantic(self) -> None:
        """Embed new and changed notes in a background thread from now on (a server), and load
        the reranker if one is set, or say in the log why semantic search (or reranking) is
        off."""
        reason = self._semantic.model.reason
        if reason:
            log.log(logging.INFO if f"={OFF}" in reason else logging.WARNING, reason)
        self._semantic.embedding.start()
        self._semantic.reranker.serve()


def dated(where: Filter | None) -> Filter:
    """The filter (or the default one) with its `since`/`until` read by the clock now."""
    return timespec.resolved(where or Filter(), clock.now().astimezone())
