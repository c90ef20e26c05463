"""VaultService: the one entry point to a vault for the faces (CLI, MCP) and the features.

It creates, reads, updates and deletes memories, keeping files, links and index in step; the
store, the index and the services under it are its own and stay private. Every lookup for a
write is exact (see service/lookup.py), so no write or delete ever lands on a memory the caller
did not name. Reads never write a file; upkeep that does (finishing an interrupted rename, archiving
expired memories) runs only in `maintain`, at server start and on explicit commands.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from memvault import workers
from memvault.config import Settings, cached_index
from memvault.core import clock
from memvault.core.document import Document
from memvault.core.expiry import archive_folder, expiry_from
from memvault.core.markdown import BodyEdit, apply_edit, remove_related, with_newline
from memvault.core.memory import (
    Limits,
    Memory,
    archived,
    check_content,
    check_size,
    clean_category,
    clean_scope,
    clean_tags,
    clean_title,
    is_memory_path,
    new_id,
    refuse_reserved,
    slug_for,
    stem_of,
)
from memvault.core.properties import (
    clean_properties,
    merged_properties,
    property_link,
    with_link,
)
from memvault.core.records import (
    CheckReport,
    Deleted,
    DuplicatePair,
    Filter,
    Head,
    LinkChange,
    LinkRow,
    Maintenance,
    NoteRow,
    Progress,
    RebuildSummary,
    Recall,
    Saved,
    Skipped,
    Stats,
    Succession,
    SyncSummary,
    Usage,
)
from memvault.core.secrets import SecretPolicy, screened, screened_edit, screened_fields
from memvault.errors import Conflict, Invalid, ReadOnly
from memvault.index import sync
from memvault.index.database import Index
from memvault.index.search_sql import SORTS
from memvault.index.sync import Changes
from memvault.policies import Policies
from memvault.semantic import prune
from memvault.semantic.engine import Semantic
from memvault.semantic.model import OFF
from memvault.service import checks, near_duplicates
from memvault.service.duplicate_guard import DuplicateGuard, Suspects
from memvault.service.hybrid_search import MAX_OFFSET, HybridSearch, dated
from memvault.service.lookup import Lookup
from memvault.storage.atomic_writes import folders_synced_at_end
from memvault.storage.files import VaultStore
from memvault.storage.journal import Journal
from memvault.words import parts
from memvault.writes.links import LinkService
from memvault.writes.supersedes import SuccessionService
from memvault.writes.writer import Rewrite, Writer, retrying

log = logging.getLogger(__name__)

# What write does when a memory of that title exists in that scope: refuse it as a duplicate,
# or replace its content (key-value use).
OnExists = Literal["refuse", "replace"]


class VaultService:
    """The memories of one vault, as files on disk mirrored by the index."""

    def __init__(
        self,
        store: VaultStore,
        index: Index,
        limits: Limits | None = None,
        embed_model: str | None = OFF,
        policies: Policies | None = None,
    ):
        self._store = store
        self._index = index
        self._semantic = Semantic(index, store, embed_model)
        self._writer = Writer(store, index)
        self._links = LinkService(store, index, self._writer, Journal(store.state_dir / "journal"))
        self._lookup = Lookup(store, index)
        searching = HybridSearch(index, self._semantic, self._lookup)
        # The faces call these as the vault's own: the part's methods, not copies forwarding.
        self.search = searching.search
        self.similar = searching.similar
        self.semantic_status = searching.semantic_status
        self.embed = searching.embed
        self.serve_semantic = searching.serve_semantic
        self._guard = DuplicateGuard(index, store, self._semantic)
        self._succession = SuccessionService(store, index, self._writer)
        self._write_lock = threading.RLock()
        self._changing = threading.local()
        self.limits = limits or Limits()
        self.policies = policies or Policies()

    @classmethod
    def open(cls, settings: Settings, fill: bool = True) -> VaultService:
        """Open (and create if needed) the vault and index, and fill the index (see `fill`)
        unless `fill` is off (for a caller about to rebuild, or with a walk to fill from)."""
        store = VaultStore(settings.vault)
        store.ensure()
        fallback = cached_index(Path(settings.vault))
        index = Index(settings.index_file, settings.query_timeout, fallback)
        vault = cls(store, index, settings.limits, settings.embed_model, settings.policies)
        if fill:
            vault.fill()
        return vault

    @classmethod
    def start(cls, settings: Settings) -> Starting:
        """Open a vault for serving: a child process looks for what changed on disk while the
        caller goes on starting up; `Starting.finish` then syncs and runs `maintain`."""
        return Starting(cls.open(settings, fill=False))

    def fill(self, found: Changes | None = None, progress: Progress | None = None) -> list[Skipped]:
        """Bring the index up to date with the files: a full build for a new index (reporting
        to `progress`), else an incremental sync (of `found` when the caller looked for changes
        already). Only the index changes: no file is written (see `maintain`). The files it
        skipped, and why."""
        if self._index.pool.fresh:
            return sync.rebuild(self._index, self._store, progress).skipped
        return sync.sync(self._index, self._store, found).skipped

    def maintain(self) -> Maintenance:
        """Upkeep that writes files, run when the server starts and on explicit commands:
        finish renames a crash cut short, and move expired memories (and, where the vault's
        policies ask, unused ones) to the archive. A read-only vault skips it with one
        warning: reads still work."""
        try:
            with self._locked():
                finished = self._links.recover()
            archived = self.archive_expired() + self.archive_unused()
            return Maintenance(finished_renames=finished, archived=archived)
        except ReadOnly as exc:
            log.warning("upkeep skipped: %s", exc)
            return Maintenance()

    def close(self) -> None:
        """Stop embedding, save the uses counted in memory and close the index."""
        self._semantic.close()
        self._index.close()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The vault lock, which every memvault process takes to write; threads of this one
        queue for it on a lock of their own first, rather than polling the file."""
        with self._write_lock, self._store.lock():
            yield

    @contextmanager
    def _writing(self, agent: str | None = None) -> Iterator[None]:
        """Hold the vault lock for a change by `agent` (recorded as updated_by in every file
        it writes; None for upkeep), first finishing any rename a crash cut short, so that a
        write never starts from a half-renamed vault. Reads never take this path. A write
        inside another (write_mem's replace) joins it: all or nothing together. The folders it
        changed are fsynced after the lock is released, before the caller hears back."""
        if getattr(self._changing, "active", False):
            yield
            return
        with folders_synced_at_end(), self._locked():
            for line in self._links.recover():
                log.warning("%s (interrupted earlier)", line)
            self._changing.active = True
            try:
                with self._writer.all_or_nothing(agent):
                    yield
            finally:
                self._changing.active = False
        self._semantic.embedding.wake()

    @property
    def root(self) -> Path:
        """The vault folder."""
        return self._store.root

    def file_text(self, identifier: str) -> str:
        """The markdown file of the memory an identifier names exactly, byte for byte."""
        return self._store.read_text(self.locate(identifier))

    def record_use(self, ids: Iterable[str]) -> None:
        """Count one use of each memory (kept state, never written into the files)."""
        self._index.usage.record(ids)

    def usage(self) -> dict[str, Usage]:
        """Kept state of every memory used at least once, by id."""
        return self._index.usage.by_id()

    def restore_usage(self, memory_id: str, usage: Usage) -> None:
        """Set a memory's kept state (import), never lowering a count already here."""
        self._index.usage.restore(memory_id, usage.access_count, usage.last_access)

    def has_id(self, memory_id: str) -> bool:
        """Whether a memory with this exact id is indexed."""
        return self._index.names.has_id(memory_id)

    def stats(self) -> Stats:
        """The vault's figures, with how far semantic search's embedding is (the model is not
        loaded for it: `semantic_status` is the check that it runs)."""
        return replace(self._index.reports.stats(), semantic=self._semantic.status(load=False))

    # -- reading ---------------------------------------------------------------------------

    def locate(self, identifier: str) -> str:
        """The path of the one memory an identifier names exactly, or NotFound with suggestions."""
        return self._lookup.locate(identifier)

    def get(self, identifier: str) -> Memory:
        """The memory an identifier names exactly, read fresh from its file."""
        return self._lookup.read(self.locate(identifier))

    def head(self, identifier: str, limit: int) -> Head:
        """The memory an identifier names exactly, read from at most `limit` bytes of its file:
        a hand-made note too big to show whole comes with its body cut there (`Head.cut`),
        never read whole."""
        return self._lookup.read_head(self.locate(identifier), limit)

    def passages(self, path: str, text: str, margin: int) -> list[str]:
        """The places `text` stands in the body of the memory at `path`, each with `margin`
        characters either side, as the index holds the body: what surrounds a search hit's
        snippet, without reading its file (`Search.passages`)."""
        return self._index.search.passages(path, text, margin)

    def recall(self, identifier: str) -> Recall:
        """The memory an identifier names, or, when none does exactly, the one it most likely
        means if that one is clearly ahead (with its confidence); else NotFound listing the
        candidates. `category:key` looks only in that category, `scope:key` only in that
        scope. Reads only: writes and deletes use `locate`, which never guesses."""
        found = self._lookup.recall(identifier)
        self._index.usage.record([found.memory.id])
        return found

    def outgoing(self, memory: Memory) -> list[LinkRow]:
        return self._index.names.outgoing(memory.path)

    def backlinks(self, memory: Memory) -> list[LinkRow]:
        return self._index.names.backlinks(memory.path)

    def list_memories(
        self,
        where: Filter | None = None,
        sort: str = "updated",
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[NoteRow], int]:
        if sort not in SORTS:
            raise Invalid(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
        return self._index.search.list_notes(dated(where), sort, limit, min(offset, MAX_OFFSET))

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
        secrets: SecretPolicy = "refuse",
        *,
        properties: dict[str, Any] | None = None,
        agent: str | None = None,
        supersedes: str | None = None,
    ) -> Memory:
        """Write a new memory to `<category>/<slug>.md` with a fresh id and timestamps, its
        `properties` as extra frontmatter keys, `agent` as who wrote it; `supersedes` names a
        memory it replaces (marked superseded: writes/supersedes.py).

        A memory with the same title in the same scope, or near-identical content there, is
        refused (Duplicate, with the existing id) unless `allow_duplicate`. A secret in it is
        refused, or redacted under `secrets="redact"` (core/secrets.py).
        """
        title = clean_title(screened(title, secrets, "the title"), self.limits)
        content = check_content(screened(content, secrets, "the content"), self.limits)
        tag_list = clean_tags(tags, self.limits)
        folder = clean_category(category, self.limits)
        refuse_reserved(folder)
        scope = clean_scope(scope)
        if expires_at is None and ttl_days is None:
            ttl_days = self.policies.ttl_for(folder)
        expires = expiry_from(expires_at, ttl_days)
        given = {k: v for k, v in clean_properties(properties).items() if v is not None}
        extra = screened_fields(given, secrets)
        now = clock.now_iso()
        fields: dict[str, Any] = {"id": new_id(), "title": title}
        if folder:
            fields["category"] = folder
        if scope:
            fields["scope"] = scope
        fields.update(tags=tag_list, created_at=now, updated_at=now, last_reviewed=now)
        if expires:
            fields["expires_at"] = expires
        if agent:
            fields["created_by"] = agent  # updated_by too: the writer stamps a change by one
        fields.update(extra)
        suspects = Suspects() if allow_duplicate else self._guard.suspects(title, content, scope)
        with self._writing(agent):
            old = None if supersedes is None else self.locate(supersedes)
            if not allow_duplicate:
                self._guard.refuse(title, scope, old, suspects)
            if old is not None:
                fields["supersedes"] = property_link(old)
            memory = self._save_new(folder, slug_for(title), with_newline(content), fields)
            if old is not None:
                self._succession.mark(old, memory)
            return memory

    def write(
        self,
        title: str,
        content: str,
        tags: list[str] | None = None,
        category: str | None = None,
        scope: str | None = None,
        expires_at: str | None = None,
        ttl_days: float | None = None,
        allow_duplicate: bool = False,
        *,
        on_exists: OnExists = "refuse",
        expected_version: str | None = None,
        properties: dict[str, Any] | None = None,
        agent: str | None = None,
        supersedes: str | None = None,
        secrets: SecretPolicy = "refuse",
    ) -> Saved:
        """write_mem: `create`, or with on_exists="replace" (key-value use: the title is the
        key) give the memory titled `title` in `scope` this content, and the tags, category
        and properties given (merged), creating it when there is none. `expected_version`
        refuses the replace if that memory changed since (or is gone). A secret is refused, or
        redacted under `secrets="redact"`."""
        if on_exists not in ("refuse", "replace"):
            raise Invalid(f"on_exists must be refuse or replace, not {on_exists!r}")
        replace = on_exists == "replace"
        if expected_version is not None and not replace:
            raise Invalid("expected_version guards a replace: pass on_exists=replace too")
        # A replace holds the vault lock from the title's lookup to the write; a new memory
        # takes it in `create`, after the duplicate guard's run of the model.
        with self._writing(agent) if replace else nullcontext():
            key = clean_title(title, self.limits), clean_scope(scope)
            path = self._guard.titled(*key) if replace else None
            if path is not None:
                memory = self.update(
                    path,
                    edit=BodyEdit(content=content),
                    tags=tags or None,
                    category=category,
                    expected_version=expected_version,
                    properties=properties,
                    agent=agent,
                    supersedes=supersedes,
                    secrets=secrets,
                )
                return Saved(memory, replaced=True)
            if expected_version is not None:
                raise Conflict(
                    f"no memory is titled {key[0]!r} in scope {key[1] or '(global)'} any "
                    f"more, so it is not version {expected_version}; read it again"
                )
            memory = self.create(
                title,
                content,
                tags,
                category,
                scope,
                expires_at,
                ttl_days,
                allow_duplicate or replace,
                secrets,
                properties=properties,
                agent=agent,
                supersedes=supersedes,
            )
            return Saved(memory, replaced=False)

    def _save_new(self, folder: str | None, stem: str, body: str, fields: dict[str, Any]) -> Memory:
        """Write a new file at the first free path for `stem` (another, if a program creates
        that file meanwhile)."""

        def attempt() -> Memory:
            """One pick of a free path and write."""
            path = self._free_path(folder, stem)
            return self._writer.save(path, Document(body=""), body, fields, None)

        return retrying(_join(folder, f"{stem}.md"), attempt)

    def update(
        self,
        identifier: str,
        *,
        title: str | None = None,
        edit: BodyEdit | None = None,
        tags: list[str] | None = None,
        category: str | None = None,
        expected_updated_at: str | None = None,
        expected_version: str | None = None,
        allow_duplicate: bool = False,
        secrets: SecretPolicy = "refuse",
        properties: dict[str, Any] | None = None,
        agent: str | None = None,
        supersedes: str | None = None,
        archiving: bool = False,
    ) -> Memory:
        """Change a memory; a new title renames its file and a new category moves it, and
        every link to it follows. `properties` are merged into its frontmatter (None removes
        one); `agent` is recorded as who changed it; `supersedes` names a memory this one
        replaces. The id never changes (a hand-made note's derived id is written into its
        frontmatter). The edit applies to the file as it is when written: if it changed since
        it was read, it is read again and the edit applied again, unless a guard
        (`expected_version`, `expected_updated_at`) refuses it. A secret in the new text is
        refused, or redacted under `secrets="redact"`. Only upkeep's moves (`archiving`) may
        file a memory under archive/. An append is remembered: `check` reports it if an
        editor's later save loses it."""
        if title is not None:
            title = screened(title, secrets, "the title")
        if edit is not None:
            edit = screened_edit(edit, secrets)
        changes = screened_fields(clean_properties(properties), secrets)
        with self._writing(agent):
            path = self.locate(identifier)
            old = None if supersedes is None else self.locate(supersedes)
            if old == path:
                raise Invalid(f"{path} cannot supersede itself; name the older memory it replaces")

            def attempt() -> Memory:
                """One read, check of the guards, change and write."""
                memory, doc, base = self._lookup.read_for_edit(path)
                _check_writable(path, doc)
                _check_guards(memory, expected_version, expected_updated_at)
                fields = self._changed_fields(memory, doc, title, tags, category, archiving)
                fields.update(merged_properties(memory.metadata, changes))
                if old is not None:
                    fields.update(with_link(memory.metadata, "supersedes", property_link(old)))
                if "title" in fields and not allow_duplicate:
                    self._guard.refuse_title(fields["title"], memory.scope, path)
                body = memory.body if edit is None else self._edited(memory, edit)
                new_path = self._new_path(memory, fields)
                if body == memory.body and not fields:
                    return memory
                if doc.writable and memory.metadata.get("id") in (None, ""):
                    fields = {"id": memory.id, **fields}
                fields["updated_at"] = clock.now_iso()
                if new_path == path and "title" not in fields:
                    return self._writer.save(path, doc, body, fields, base)
                moved = self._links.move(Rewrite(memory, doc, base, body, fields), new_path)
                self._succession.follow_move(path, new_path)
                return moved

            memory = retrying(path, attempt)
            if edit is not None and edit.append is not None:
                self._index.appends.remember(memory.id, edit.append)
            if old is not None:
                self._succession.mark(old, memory)
            return memory

    def succession(self, memory: Memory) -> Succession:
        """The memories this one supersedes and the one that superseded it, by the links in
        its `supersedes` and `superseded_by` properties."""
        return self._succession.of(memory)

    def restore(self, record: dict[str, Any], secrets: SecretPolicy = "refuse") -> Memory:
        """Write an exported memory back with its id, timestamps and frontmatter (import).
        Its old path is used when free, else a fresh slug in its category. A secret in it is
        refused, or redacted under `secrets="redact"`."""
        title = clean_title(screened(str(record["title"]), secrets, "the title"), self.limits)
        content = screened(str(record.get("content") or ""), secrets, "the content")
        body = with_newline(check_content(content, self.limits))
        folder = clean_category(record.get("category"), self.limits)
        metadata = screened_fields(dict(record.get("frontmatter") or {}), secrets)
        metadata.update(id=str(record["id"]), title=title)
        with self._writing():
            wanted = str(record.get("path") or "")
            try:
                taken = not is_memory_path(wanted) or self._store.exists(wanted)
            except Invalid:
                taken = True
            taken = taken or self._index.names.stem_taken(stem_of(wanted))
            if taken:
                return self._save_new(folder, slug_for(title), body, metadata)
            return self._writer.save(wanted, Document(body=""), body, metadata, None)

    def verify(self, identifier: str, *, agent: str | None = None) -> Memory:
        """Mark a memory as reviewed now by `agent`: it is still true (sets `last_reviewed`)."""
        with self._writing(agent):
            path = self.locate(identifier)

            def attempt() -> Memory:
                """One read and write of the review time."""
                memory, doc, base = self._lookup.read_for_edit(path)
                _check_writable(path, doc)
                extra = {} if memory.has_frontmatter else {"id": memory.id, "title": memory.title}
                fields: dict[str, object] = {**extra, "last_reviewed": clock.now_iso()}
                return self._writer.save(path, doc, memory.body, fields, base)

            return retrying(path, attempt)

    def archive(self, identifier: str, *, agent: str | None = None) -> Memory:
        """Move one memory to archive/ because a person (`agent`) asked to (the web page's
        Archive), or upkeep does (no agent: updated_by stays): out of searches and lists,
        still readable, links following. Writes and edits that name an archive/ category
        stay refused; this and upkeep are the ways in."""
        memory = self.get(identifier)
        if archived(memory.category or ""):
            return memory
        folder = archive_folder(memory.category)
        return self.update(memory.id, category=folder, archiving=True, agent=agent)

    def archive_expired(self) -> list[str]:
        """Move every memory past its `expires_at` to archive/ (links follow); never deletes."""
        return [self.archive(path).path for path in self._index.reports.expired(clock.now_iso())]

    def archive_unused(self) -> list[str]:
        """Move to archive/ every live memory nobody used (read, found, briefed) or changed for
        the policies' `archive_unused_days`; none unless the vault's policies set it."""
        days = self.policies.archive_unused_days
        if days is None:
            return []
        cutoff = clock.iso(clock.now() - dt.timedelta(days=days))
        return [self.archive(path).path for path, _ in self._index.reports.unused(cutoff)]

    def _edited(self, memory: Memory, edit: BodyEdit) -> str:
        """The memory's body after `edit`, each step refused before it is built when it would
        be over the size limit (a find/replace of a short text by a long one multiplies)."""
        for part in (edit.content, edit.append, edit.prepend, edit.replace, edit.section):
            if part is not None:
                check_content(part if isinstance(part, str) else part[1], self.limits)
        try:
            body = apply_edit(memory.body, edit, lambda size: check_size(size, self.limits))
        except ValueError as exc:
            raise Invalid((f"{memory.path}: ", *parts(exc))) from exc
        check_content(body, self.limits)
        return body

    def delete(self, identifier: str, *, agent: str | None = None) -> Deleted:
        """Delete a memory's file after taking every link to it out of other memories (each
        recording `agent` as who changed it)."""
        with self._writing(agent):
            path = self.locate(identifier)
            memory = self._lookup.read(path)
            changed = self._links.remove_inbound(path)
            self._succession.forget(path)
            self._writer.remove(path)
            return Deleted(memory, changed)

    def link(
        self, source: str, target: str, text: str | None = None, *, agent: str | None = None
    ) -> LinkChange:
        """Link two memories both ways, each file recording `agent` as who changed it."""
        with self._writing(agent):
            return self._links.link(self.locate(source), self.locate(target), text)

    def unlink(self, source: str, target: str, *, agent: str | None = None) -> LinkChange:
        """Unlink two memories both ways, each file recording `agent` as who changed it."""
        with self._writing(agent):
            return self._links.unlink(self.locate(source), self.locate(target))

    def merge(self, keep: str, other: str, *, agent: str | None = None) -> Memory:
        """Fold the memory `other` into `keep` (near duplicates): its text is appended under a
        heading naming it, its tags and Related links join `keep`'s, it is deleted and every
        link to it points at `keep` instead. All of it or none of it, by `agent`."""
        with self._writing(agent):
            kept_path, gone_path = self.locate(keep), self.locate(other)
            if kept_path == gone_path:
                raise Invalid("a memory cannot be merged into itself; pick two different ones")
            gone = self._lookup.read(gone_path)
            related = {
                row.target
                for row in self._index.names.outgoing(gone_path)
                if row.related and row.target
            }
            text = remove_related(gone.body, lambda _link: True).strip()
            merged = BodyEdit(append=f"## Merged from {gone.title}\n\n{text}\n")

            def attempt() -> Memory:
                """One read of the kept memory, and the write of its text and tags."""
                memory, doc, base = self._lookup.read_for_edit(kept_path)
                _check_writable(kept_path, doc)
                fields: dict[str, Any] = {} if memory.has_frontmatter else {"id": memory.id}
                fields.update(
                    tags=clean_tags([*memory.tags, *gone.tags], self.limits),
                    updated_at=clock.now_iso(),
                )
                body = apply_edit(memory.body, merged)
                return self._writer.save(kept_path, doc, body, fields, base)

            retrying(kept_path, attempt)
            self._links.fold(gone, kept_path)
            for path in sorted(related - {kept_path, gone_path}):
                self._links.link(kept_path, path)
            return self._lookup.read(kept_path)

    def near_duplicates(self, limit: int = 20) -> list[DuplicatePair]:
        """Pairs of memories whose texts are near duplicates, most alike first (to merge)."""
        return near_duplicates.near_duplicates(self._index, self._store, limit)

    def category_links(self) -> list[tuple[str, str, int]]:
        """How many links go from each category (folder, '' at the root) to each other one."""
        return self._index.reports.category_links()

    def changes(self) -> str:
        """A short text that changes whenever any memory is added, removed, moved or edited,
        by memvault or any other program once the index follows it (polled by the web page)."""
        return self._index.reports.fingerprint()

    # -- the whole vault -------------------------------------------------------------------

    def rebuild(self, progress: Progress | None = None) -> RebuildSummary:
        """Make the index again from the files (kept state survives), remove temp files a
        crash left behind, and drop the vectors no note uses any more."""
        summary = sync.rebuild(self._index, self._store, progress, sweep=True)
        summary.dropped_vectors = prune.prune(self._index, thorough=True)
        return summary

    def sync(self) -> SyncSummary:
        """Index what changed on disk since the last pass (edits made outside memvault), and
        remove temp files a crash left behind."""
        summary = sync.sync(self._index, self._store, sweep=True)
        self._semantic.embedding.wake()
        return summary

    def refresh(self, path: str) -> str:
        """Bring one file's index entry up to date with the disk (the watcher's unit of work)."""
        outcome = sync.refresh(self._index, self._store, path)
        self._semantic.embedding.wake()
        return outcome

    def check(self, fix: bool = False, secrets: bool = False) -> CheckReport:
        """Broken, one-sided and ambiguous links, duplicate ids, malformed frontmatter; with
        `fix`, upkeep and the repairs first, and what they did in `fixed`; with `secrets`,
        the files holding secrets (reads every file). The index is brought up to date first,
        so every file that cannot be read is named."""
        skipped = self.fill()
        fixed = []
        if fix:
            fixed = self.maintain().lines()
            with self._writing():
                fixed += checks.repair(self._index, self._store, self._writer, self._links)
        report = checks.find_problems(self._index, self._store, self._links, skipped)
        if secrets:
            report = replace(report, secrets=checks.secrets_in_files(self._index, self._store))
        report.fixed = fixed
        return report

    def _changed_fields(
        self,
        memory: Memory,
        doc: Document,
        title: str | None,
        tags: list[str] | None,
        category: str | None,
        archiving: bool,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if title is not None and clean_title(title, self.limits) != memory.title:
            fields["title"] = clean_title(title, self.limits)
        if tags is not None and clean_tags(tags, self.limits) != memory.tags:
            fields["tags"] = clean_tags(tags, self.limits)
        if category is not None:
            folder = clean_category(category, self.limits)
            if folder != memory.category:
                refuse_reserved(folder, archiving)
                fields["category"] = folder
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
            moved = _join(folder, f"{stem}.md")
            # An expired note whose archive path is taken goes to a free name (outage-2.md).
            free = is_memory_path(moved) and not self._store.exists(moved)
            return moved if free else self._free_path(folder, stem)
        return self._free_path(folder, stem, memory.path)

    def _free_path(self, folder: str | None, stem: str, current: str | None = None) -> str:
        """`folder/stem.md`, numbered `-2`, `-3`... until the stem is unused across the vault."""
        n = 1
        while True:
            candidate = stem if n == 1 else f"{stem}-{n}"
            path = _join(folder, f"{candidate}.md")
            own = current is not None and stem_of(current).lower() == candidate.lower()
            if is_memory_path(path) and (
                own
                or (not self._index.names.stem_taken(candidate) and not self._store.exists(path))
            ):
                return path
            n += 1


def _check_guards(
    memory: Memory, expected_version: str | None, expected_updated_at: str | None
) -> None:
    """Conflict if the memory is not the version (or the update time) the caller last saw."""
    if expected_version is not None and memory.version != expected_version.strip():
        raise Conflict(
            f"{memory.path} changed since version {expected_version} (now {memory.version}); "
            "read it again and reapply your edit"
        )
    if expected_updated_at is not None and memory.updated_at != expected_updated_at:
        raise Conflict(
            f"{memory.path} changed since {expected_updated_at} (now {memory.updated_at}); "
            "read it again and reapply your edit"
        )


class Starting:
    """A vault being opened for serving, with a look for changes on disk under way in a worker
    process (most of a second at 100k notes, which the server spends importing the MCP SDK)."""

    def __init__(self, vault: VaultService):
        self.vault = vault
        self._pool = workers.pool(1)
        self._finding = (
            None
            if vault._index.pool.fresh
            else self._pool.submit(sync.changes_on_disk, vault.root, vault._index.pool.path, True)
        )

    def finish(self) -> tuple[VaultService, Maintenance]:
        """The vault, synced with the disk, and what upkeep did to its files."""
        try:
            found = self._finding.result() if self._finding is not None else None
        finally:
            self._pool.shutdown()
        self.vault.fill(found)
        upkeep = self.vault.maintain()
        self.vault.serve_semantic()
        return self.vault, upkeep


def _check_writable(path: str, doc: Document) -> None:
    """Refuse to change a file whose frontmatter cannot be parsed: memvault would lose it."""
    if not doc.writable:
        raise Invalid(
            f"{path} has frontmatter memvault cannot parse ({doc.error}); fix the YAML between"
            " its --- lines in an editor (`memvault check` lists such files), then try again"
        )


def _join(folder: str | None, name: str) -> str:
    return f"{folder}/{name}" if folder else name
