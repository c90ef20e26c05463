"""VaultService: create, read, update and delete memories, keeping files, links and index in step.

Every lookup here is exact (id, path, file stem, title or alias); a near miss is an error that
lists suggestions, so no write or delete ever lands on a memory the caller did not name.
"""

from __future__ import annotations

import datetime as dt
import logging
import multiprocessing
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import clock, similar
from .config import Settings
from .document import Document
from .errors import Conflict, Duplicate, Invalid, NotFound
from .facets import ARCHIVE
from .index import SORTS, Changes, Index, Progress, changes_on_disk
from .links import LinkService
from .markdown import BodyEdit, apply_edit, with_newline
from .model import (
    Limits,
    Memory,
    check_content,
    clean_category,
    clean_expiry,
    clean_scope,
    clean_tags,
    clean_title,
    new_id,
    slug_for,
    stem_of,
)
from .records import (
    CheckReport,
    Deleted,
    Filter,
    LinkChange,
    LinkRow,
    Maintenance,
    NoteRow,
    RebuildSummary,
    Recall,
    SearchPage,
    Stats,
    Suggestion,
    SyncSummary,
    Usage,
)
from .store import VaultStore

log = logging.getLogger(__name__)

SUGGESTIONS = 5
DUPLICATE_CANDIDATES = 5
WORD = re.compile(r"\w{4,}")


class VaultService:
    """The memories of one vault, as files on disk mirrored by the index."""

    def __init__(self, store: VaultStore, index: Index, limits: Limits | None = None):
        self.store = store
        self.index = index
        self.links = LinkService(store, index)
        self.limits = limits or Limits()

    @classmethod
    def open(cls, settings: Settings, fill: bool = True) -> VaultService:
        """Open (and create if needed) the vault and index, and fill the index (see `fill`)
        unless `fill` is off (for a caller about to rebuild, or with a walk to fill from)."""
        store = VaultStore(settings.vault)
        store.ensure()
        vault = cls(store, Index(settings.index_file), settings.limits)
        if fill:
            vault.fill()
        return vault

    @classmethod
    def start(cls, settings: Settings) -> Starting:
        """Open a vault for serving: a child process looks for what changed on disk while the
        caller goes on starting up; `Starting.finish` then syncs and runs `maintain`."""
        return Starting(cls.open(settings, fill=False))

    def fill(self, found: Changes | None = None) -> None:
        """Bring the index up to date with the files: a full build for a new index, else an
        incremental sync (of `found` when the caller looked for changes already). Only the
        index changes: no file is written (see `maintain`)."""
        if self.index.fresh:
            self.index.rebuild(self.store)
        else:
            self.index.sync(self.store, found)

    def maintain(self) -> Maintenance:
        """Upkeep that writes files, run when the server starts and on explicit commands:
        finish renames a crash cut short, and move expired memories to the archive."""
        return Maintenance(finished_renames=self.links.recover(), archived=self.archive_expired())

    def close(self) -> None:
        self.index.close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the vault lock for a change, first finishing any rename a crash cut short, so
        that a write never starts from a half-renamed vault. Reads never take this path."""
        with self.store.lock():
            for line in self.links.recover():
                log.warning("%s (interrupted earlier)", line)
            yield

    @property
    def root(self) -> Path:
        """The vault folder."""
        return self.store.root

    def file_text(self, identifier: str) -> str:
        """The markdown file of the memory an identifier names exactly, byte for byte."""
        return self.store.read_text(self.locate(identifier))

    def record_use(self, ids: Iterable[str]) -> None:
        """Count one use of each memory (kept state, never written into the files)."""
        self.index.record_access(ids)

    def usage(self) -> dict[str, Usage]:
        """Kept state of every memory used at least once, by id."""
        return self.index.usage()

    def restore_usage(self, memory_id: str, usage: Usage) -> None:
        """Set a memory's kept state (import), never lowering a count already here."""
        self.index.restore_usage(memory_id, usage.access_count, usage.last_access)

    def has_id(self, memory_id: str) -> bool:
        """Whether a memory with this exact id is indexed."""
        return self.index.has_id(memory_id)

    def stats(self) -> Stats:
        return self.index.stats()

    # -- reading ---------------------------------------------------------------------------

    def locate(self, identifier: str) -> str:
        """The path of the one memory an identifier names exactly, or NotFound with suggestions."""
        path = self._exact(identifier)
        if path is None:
            raise self._not_found(identifier, self.suggest(identifier))
        return path

    def _exact(self, identifier: str) -> str | None:
        """The path an identifier names exactly, None if none does; NotFound if several do."""
        if not isinstance(identifier, str) or not identifier.strip():
            raise Invalid("identifier is empty; pass a memory's id, path, slug, title or alias")
        paths = self.index.resolve(identifier)
        if len(paths) > 1:
            first = self.index.note(paths[0])
            if first is not None and first.id == identifier.strip():
                return paths[0]
            raise NotFound(
                f"{identifier!r} names {len(paths)} memories: {', '.join(paths)}; "
                "use the path or id",
                [(p, p, 1.0) for p in paths],
            )
        if paths:
            return paths[0]
        return self._unindexed_file(identifier)

    def get(self, identifier: str) -> Memory:
        """The memory an identifier names exactly, read fresh from its file."""
        memory, _doc = self.store.read(self.locate(identifier))
        return memory

    def recall(self, identifier: str) -> Recall:
        """The memory an identifier names, or, when none does exactly, the one it most likely
        means if that one is clearly ahead (with its confidence); else NotFound listing the
        candidates. `category:key` looks only in that category. Reads only: writes and deletes
        use `locate`, which never guesses."""
        found = self._recall(identifier)
        self.index.record_access([found.memory.id])
        return found

    def _recall(self, identifier: str) -> Recall:
        category, key = _split_category(identifier, self.index)
        exact = self._exact(identifier) if category is None else None
        if exact is not None:
            return Recall(self.store.read(exact)[0], 1.0, "exact")
        suggestions = self.suggest(key, category=category)
        if not suggestions:
            raise self._not_found(identifier, suggestions)
        best = suggestions[0]
        lead = best.score - (suggestions[1].score if len(suggestions) > 1 else 0.0)
        if best.score == 1.0 and lead > 0:
            return Recall(self.store.read(best.path)[0], 1.0, "exact")
        good = best.score >= similar.TYPO or (
            best.kind == "content" and best.score >= similar.CONTENT
        )
        if good and lead >= similar.CLEAR_LEAD:
            return Recall(self.store.read(best.path)[0], best.score, best.kind)
        raise self._not_found(identifier, suggestions)

    def suggest(
        self, identifier: str, limit: int = SUGGESTIONS, category: str | None = None
    ) -> list[Suggestion]:
        """Memories whose title, file name or alias is close to `identifier` (or whose text
        mentions it, at a lower score), best first."""
        where = Filter(category=category, archived=None)
        scored = dict(similar.closest(identifier, self.index.names(where), limit))
        kinds = dict.fromkeys(scored, "name")
        content = self.index.search(identifier, limit, 0, where).results
        for rank, hit in enumerate(content):
            score = round(similar.CONTENT - 0.05 * rank, 2)
            if score > scored.get(hit.path, 0.0):
                scored[hit.path], kinds[hit.path] = score, "content"
        ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:limit]
        suggestions = []
        for path, score in ranked:
            note = self.index.note(path)
            if note is not None:
                suggestions.append(Suggestion(note.id, note.title, path, score, kinds[path]))
        return suggestions

    def _not_found(self, identifier: str, suggestions: list[Suggestion]) -> NotFound:
        hint = (
            "; did you mean "
            + ", ".join(f"{s.title!r} ({s.score:.2f})" for s in suggestions[:3])
            + "?"
            if suggestions
            else "; search for it with search_mem or `memvault search`"
        )
        return NotFound(
            f"no memory {identifier!r}{hint}",
            [(s.path, s.title, s.score) for s in suggestions],
        )

    def outgoing(self, memory: Memory) -> list[LinkRow]:
        return self.index.outgoing(memory.path)

    def backlinks(self, memory: Memory) -> list[LinkRow]:
        return self.index.backlinks(memory.path)

    def search(
        self, query: str, limit: int = 10, offset: int = 0, where: Filter | None = None
    ) -> SearchPage:
        """Full-text search; each memory returned counts as one use."""
        page = self.index.search(query, limit, offset, where or Filter())
        self.index.record_access(hit.id for hit in page.results)
        return page

    def list_memories(
        self,
        where: Filter | None = None,
        sort: str = "updated",
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[NoteRow], int]:
        if sort not in SORTS:
            raise Invalid(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
        return self.index.list_notes(where or Filter(), sort, limit, offset)

    # -- writing ---------------------------------------------------------------------------

    def create(
        self,
        title: str,
        content: str,
        tags: list[str] | None = None,
        category: str | None = None,
        scope: str | None = None,
        expires_at: str | None = None,
        ttl_days: float | None = None,
        allow_duplicate: bool = False,
    ) -> Memory:
        """Write a new memory to `<category>/<slug>.md` with a fresh id and timestamps.

        A memory with the same title, or near-identical content, is refused (Duplicate, with
        the existing id) unless `allow_duplicate`.
        """
        title = clean_title(title, self.limits)
        content = check_content(content, self.limits)
        tag_list = clean_tags(tags, self.limits)
        folder = clean_category(category)
        scope = clean_scope(scope)
        if ttl_days is not None:
            if ttl_days <= 0:
                raise Invalid(f"ttl_days must be positive, not {ttl_days}")
            expires_at = clock.iso(clock.now() + dt.timedelta(days=ttl_days))
        expires = clean_expiry(expires_at)
        with self._writing():
            if not allow_duplicate:
                self._refuse_duplicate(title, content)
            path = self._free_path(folder, slug_for(title))
            now = clock.now_iso()
            fields: dict[str, Any] = {"id": new_id(), "title": title}
            if folder:
                fields["category"] = folder
            if scope:
                fields["scope"] = scope
            fields.update(tags=tag_list, created_at=now, updated_at=now, last_reviewed=now)
            if expires:
                fields["expires_at"] = expires
            return self.links.save(path, Document(body=""), with_newline(content), fields)

    def update(
        self,
        identifier: str,
        *,
        title: str | None = None,
        edit: BodyEdit | None = None,
        tags: list[str] | None = None,
        category: str | None = None,
        expected_updated_at: str | None = None,
    ) -> Memory:
        """Change a memory; a new title renames its file and a new category moves it, and
        every link to it follows. The id never changes."""
        with self._writing():
            path = self.locate(identifier)
            memory, doc = self.store.read(path)
            if expected_updated_at is not None and memory.updated_at != expected_updated_at:
                raise Conflict(
                    f"{path} changed since {expected_updated_at} (now {memory.updated_at}); "
                    "read it again and reapply your edit"
                )
            fields = self._changed_fields(memory, doc, title, tags, category)
            body = memory.body if edit is None else self._edited(memory, edit)
            new_path = self._new_path(memory, fields)
            if body == memory.body and not fields:
                return memory
            fields["updated_at"] = clock.now_iso()
            if new_path == path:
                return self.links.save(path, doc, body, fields)
            return self.links.rename(memory, doc, body, fields, new_path)

    def _refuse_duplicate(self, title: str, content: str) -> None:
        for path in self.index.resolve(title):
            note = self.index.note(path)
            if note is not None and note.title.lower() == title.lower():
                raise Duplicate(
                    f"a memory titled {note.title!r} exists (id {note.id}, {path}); edit it "
                    "with edit_mem, or pass allow_duplicate=true to keep both",
                    note.id,
                )
        words = sorted(set(WORD.findall(content.lower())), key=len, reverse=True)[:8]
        for path in self.index.with_all_words(words, DUPLICATE_CANDIDATES):
            other = self.store.read(path)[0]
            score = similar.content_similarity(content, other.body)
            if score >= similar.NEAR_IDENTICAL:
                raise Duplicate(
                    f"{other.title!r} (id {other.id}, {path}) has near-identical content "
                    f"({score:.0%} alike); edit it, or pass allow_duplicate=true",
                    other.id,
                )

    def restore(self, record: dict[str, Any]) -> Memory:
        """Write an exported memory back with its id, timestamps and frontmatter (import).
        Its old path is used when free, else a fresh slug in its category."""
        title = clean_title(str(record["title"]), self.limits)
        body = with_newline(check_content(str(record.get("content") or ""), self.limits))
        folder = clean_category(record.get("category"))
        metadata = dict(record.get("frontmatter") or {})
        metadata.update(id=str(record["id"]), title=title)
        with self._writing():
            wanted = str(record.get("path") or "")
            try:
                taken = not wanted.endswith(".md") or self.store.exists(wanted)
            except Invalid:
                taken = True
            taken = taken or self.index.stem_taken(stem_of(wanted))
            path = self._free_path(folder, slug_for(title)) if taken else wanted
            return self.links.save(path, Document(body=""), body, metadata)

    def verify(self, identifier: str) -> Memory:
        """Mark a memory as reviewed now: it is still true (sets `last_reviewed`)."""
        with self._writing():
            path = self.locate(identifier)
            memory, doc = self.store.read(path)
            if not doc.writable:
                raise Invalid(f"{path} has frontmatter memvault cannot parse ({doc.error})")
            extra = {} if memory.has_frontmatter else {"id": memory.id, "title": memory.title}
            return self.links.save(
                path, doc, memory.body, {**extra, "last_reviewed": clock.now_iso()}
            )

    def archive_expired(self) -> list[str]:
        """Move every memory past its `expires_at` to archive/ (links follow); never deletes."""
        moved = []
        for path in self.index.expired(clock.now_iso()):
            memory = self.get(path)
            target = f"{ARCHIVE}/{memory.category}" if memory.category else ARCHIVE
            moved.append(self.update(memory.id, category=target).path)
        return moved

    def _edited(self, memory: Memory, edit: BodyEdit) -> str:
        for part in (edit.content, edit.append, edit.prepend, edit.replace, edit.section):
            if part is not None:
                check_content(part if isinstance(part, str) else part[1], self.limits)
        try:
            body = apply_edit(memory.body, edit)
        except ValueError as exc:
            raise Invalid(f"{memory.path}: {exc}") from exc
        check_content(body, self.limits)
        return body

    def delete(self, identifier: str) -> Deleted:
        """Delete a memory's file after taking every link to it out of other memories."""
        with self._writing():
            path = self.locate(identifier)
            memory, _doc = self.store.read(path)
            changed = self.links.remove_inbound(path)
            self.store.remove(path)
            self.index.remove(path)
            return Deleted(memory, changed)

    def link(self, source: str, target: str, text: str | None = None) -> LinkChange:
        with self._writing():
            return self.links.link(self.locate(source), self.locate(target), text)

    def unlink(self, source: str, target: str) -> LinkChange:
        with self._writing():
            return self.links.unlink(self.locate(source), self.locate(target))

    # -- the whole vault -------------------------------------------------------------------

    def rebuild(self, progress: Progress | None = None) -> RebuildSummary:
        return self.index.rebuild(self.store, progress)

    def sync(self) -> SyncSummary:
        """Index what changed on disk since the last pass (edits made outside memvault)."""
        return self.index.sync(self.store)

    def refresh(self, path: str) -> str:
        """Bring one file's index entry up to date with the disk (the watcher's unit of work)."""
        return self.index.refresh(self.store, path)

    def check(self, fix: bool = False) -> CheckReport:
        """Broken, one-sided and ambiguous links, duplicate ids, malformed frontmatter."""
        if fix:
            report = CheckReport()
            report.fixed += self.maintain().lines()
            report.fixed += [f"linked back {b} -> {a}" for a, b in self.links.repair()]
            report.fixed += self._fix_duplicate_ids()
            found = self.check(fix=False)
            found.fixed = report.fixed
            return found
        return CheckReport(
            broken_links=self.index.dangling(),
            one_sided=self.links.one_sided(),
            duplicate_ids=self.index.duplicate_ids(),
            malformed=self.index.problems(),
            ambiguous=self.index.ambiguous(),
        )

    def _fix_duplicate_ids(self) -> list[str]:
        """Give every copy after the first (oldest, then by path) a fresh id."""
        fixed = []
        with self._writing():
            for memory_id, paths in self.index.duplicate_ids():
                copies = [self.store.read(p) for p in paths]
                copies.sort(key=lambda c: (c[0].created_at or "", c[0].path))
                for memory, doc in copies[1:]:
                    if doc.writable:
                        fresh = new_id()
                        self.links.save(memory.path, doc, memory.body, {"id": fresh})
                        fixed.append(f"new id {fresh} for {memory.path} (was {memory_id})")
        return fixed

    def _changed_fields(
        self,
        memory: Memory,
        doc: Document,
        title: str | None,
        tags: list[str] | None,
        category: str | None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if title is not None and clean_title(title, self.limits) != memory.title:
            fields["title"] = clean_title(title, self.limits)
        if tags is not None and clean_tags(tags, self.limits) != memory.tags:
            fields["tags"] = clean_tags(tags, self.limits)
        if category is not None and (clean_category(category) or None) != memory.category:
            fields["category"] = clean_category(category)
        if fields and not doc.writable:
            raise Invalid(
                f"{memory.path} has frontmatter memvault cannot parse ({doc.error}); "
                "fix the YAML by hand, then retry"
            )
        if fields and not memory.has_frontmatter:
            fields = {"id": memory.id, "title": memory.title, **fields}
        return fields

    def _new_path(self, memory: Memory, fields: dict[str, Any]) -> str:
        folder = (
            fields.get("category", memory.category) if "category" in fields else (memory.category)
        )
        stem = slug_for(fields["title"]) if "title" in fields else memory.stem
        if folder == memory.category and stem == memory.stem:
            return memory.path
        if stem == memory.stem:
            return _join(folder, f"{stem}.md")
        return self._free_path(folder, stem, memory.path)

    def _free_path(self, folder: str | None, stem: str, current: str | None = None) -> str:
        """`folder/stem.md`, numbered `-2`, `-3`... until the stem is unused across the vault."""
        n = 1
        while True:
            candidate = stem if n == 1 else f"{stem}-{n}"
            path = _join(folder, f"{candidate}.md")
            own = current is not None and stem_of(current).lower() == candidate.lower()
            if own or (not self.index.stem_taken(candidate) and not self.store.exists(path)):
                return path
            n += 1

    def _unindexed_file(self, identifier: str) -> str | None:
        """A file the index has not seen yet, named by its relative path."""
        path = identifier.strip()
        if not path.lower().endswith(".md"):
            path += ".md"
        try:
            if self.store.absolute(path).is_file():
                text = self.store.read_text(path)
                self.index.upsert(path, text, self.store.info(path))
                return path
        except (Invalid, NotFound):
            return None
        return None


class Starting:
    """A vault being opened for serving, with a look for changes on disk under way in a child
    process (most of a second at 100k notes, which the server spends importing the MCP SDK)."""

    def __init__(self, vault: VaultService):
        self.vault = vault
        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
        index = vault.index
        self._finding = (
            None if index.fresh else self._pool.submit(changes_on_disk, vault.root, index.path)
        )

    def finish(self) -> tuple[VaultService, Maintenance]:
        """The vault, synced with the disk, and what upkeep did to its files."""
        try:
            found = self._finding.result() if self._finding is not None else None
        finally:
            self._pool.shutdown()
        self.vault.fill(found)
        return self.vault, self.vault.maintain()


def _split_category(identifier: str, index: Index) -> tuple[str | None, str]:
    """`category:key` -> (category, key) when the category exists; else (None, identifier)."""
    head, sep, tail = identifier.partition(":")
    if (
        sep
        and tail.strip()
        and head.strip()
        and index.list_notes(Filter(category=head.strip(), archived=None), limit=1)[1]
    ):
        return head.strip(), tail.strip()
    return None, identifier


def _join(folder: str | None, name: str) -> str:
    return f"{folder}/{name}" if folder else name
