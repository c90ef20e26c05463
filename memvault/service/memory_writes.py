"""The writes of a vault: create, write (create or replace by title), update, restore
(import), verify, archive, delete, link, unlink and merge, each under the vault lock, with
files, links and index kept in step."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import replace as replace_fields
from typing import Any

from memvault.core import clock
from memvault.core.body_edits import BodyEdit, apply_edit, with_newline
from memvault.core.document import Document
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.expiry import archive_folder, expiry_from
from memvault.core.markdown import remove_related
from memvault.core.memory import (
    Memory,
    archived,
    check_content,
    clean_category,
    clean_scope,
    clean_tags,
    clean_title,
    is_memory_path,
    refuse_reserved,
    slug_for,
    stem_of,
)
from memvault.core.properties import clean_properties, merged_properties, property_link, with_link
from memvault.core.property_lists import check_apart, clean_items
from memvault.core.records import Deleted, Filter, LinkChange, NoteRow, Saved
from memvault.core.secrets import SecretPolicy, screened, screened_edit, screened_fields
from memvault.errors import Conflict, Invalid
from memvault.service.duplicate_guard import DuplicateGuard, Suspects
from memvault.service.edits import (
    Change,
    changed_fields,
    check_guards,
    check_writable,
    dated,
    edited,
    list_fields,
    new_fields,
)
from memvault.service.new_paths import free_path, join, moved_path
from memvault.service.parts import VaultParts
from memvault.writes.writer import Rewrite, retrying

# As many rows as a listing can give: every memory an archive_all moves.
_EVERY_ROW = 1 << 40


class MemoryWrites:
    """Every change to the memories of one vault. Every lookup for a write is exact (see
    service/lookup.py), so no write or delete ever lands on a memory the caller did not name."""

    def __init__(self, parts: VaultParts):
        self._store = parts.store
        self._index = parts.index
        self._lookup = parts.lookup
        self._writer = parts.writer
        self._links = parts.links
        self._succession = parts.succession
        self._lock = parts.lock
        self._guard = DuplicateGuard(parts.index, parts.store, parts.semantic)
        self.limits = parts.limits
        self.policies = parts.policies

    def create(self, draft: Draft, options: WriteOptions = WriteOptions()) -> Memory:
        """Write a new memory to `<category>/<slug>.md` with a fresh id and timestamps (now,
        or the times an import keeps: the draft's `created_at`, the options' `at`), its
        `properties` as extra frontmatter keys, the options' `agent` as who wrote it; a memory
        it `supersedes` is marked superseded (writes/supersedes.py).

        A memory with the same title in the same scope, or near-identical content there, is
        refused (Duplicate, with the existing id) unless `allow_duplicate`. A secret in it is
        refused, or redacted under `secrets="redact"` (core/secrets.py).
        """
        secrets, agent = options.secrets, options.agent
        title = clean_title(screened(draft.title, secrets, "the title"), self.limits)
        content = check_content(screened(draft.content, secrets, "the content"), self.limits)
        tag_list = clean_tags(list(draft.tags), self.limits)
        folder = clean_category(draft.category, self.limits)
        refuse_reserved(folder)
        scope = clean_scope(draft.scope)
        ttl_days = draft.ttl_days
        if draft.expires_at is None and ttl_days is None:
            ttl_days = self.policies.ttl_for(folder)
        expires = expiry_from(draft.expires_at, ttl_days)
        given = {k: v for k, v in clean_properties(draft.properties).items() if v is not None}
        extra = screened_fields(given, secrets)
        times = draft.created_at, options.at
        fields = {**new_fields(title, folder, scope, tag_list, expires, times, agent), **extra}
        checked = not options.allow_duplicate
        suspects = self._guard.suspects(title, content, scope) if checked else Suspects()
        with self._lock.writing(agent):
            old = None if draft.supersedes is None else self._lookup.locate(draft.supersedes)
            if checked:
                self._guard.refuse(title, scope, old, suspects)
            if old is not None:
                fields["supersedes"] = property_link(old)
            memory = self._save_new(folder, slug_for(title), with_newline(content), fields)
            if old is not None:
                self._succession.mark(old, memory)
            return self._dated(memory, options)

    def write(self, draft: Draft, options: WriteOptions = WriteOptions()) -> Saved:
        """write_mem: `create`, or with on_exists="replace" (key-value use: the title is the
        key) give the memory titled like the draft in its scope the draft's content, tags,
        category, properties (merged) and expiry, creating it when there is none; a memory
        archived or expired comes back live. `expected_version` refuses the replace if that
        memory changed since (or is gone)."""
        replace = _replacing(options)
        # A replace holds the vault lock from the title's lookup to the write; a new memory
        # takes it in `create`, after the duplicate guard's run of the model.
        with self._lock.writing(options.agent) if replace else nullcontext():
            key = clean_title(draft.title, self.limits), clean_scope(draft.scope)
            path = self._guard.titled(*key) if replace else None
            if path is not None:
                revision = Revision(
                    edit=BodyEdit(content=draft.content),
                    tags=draft.tags or None,
                    category=draft.category,
                    properties=draft.properties,
                    supersedes=draft.supersedes,
                    expires_at=draft.expires_at,
                    ttl_days=draft.ttl_days,
                    archived=False,
                )
                return Saved(self.update(path, revision, options), replaced=True)
            if options.expected_version is not None:
                raise _no_longer_titled(*key, options.expected_version)
            kept = replace_fields(options, allow_duplicate=options.allow_duplicate or replace)
            return Saved(self.create(draft, kept), replaced=False)

    def _save_new(self, folder: str | None, stem: str, body: str, fields: dict[str, Any]) -> Memory:
        """Write a new file at the first free path for `stem` (another, if a program creates
        that file meanwhile)."""

        def attempt() -> Memory:
            """One pick of a free path and write."""
            path = free_path(self._store, self._index, folder, stem)
            return self._writer.save(path, Document(body=""), body, fields, None)

        return retrying(join(folder, f"{stem}.md"), attempt)

    def update(
        self,
        identifier: str,
        revision: Revision,
        options: WriteOptions = WriteOptions(),
    ) -> Memory:
        """Change a memory as `revision` says; a new title renames its file and a new category
        moves it, and every link to it follows. The options' `agent` is recorded as who
        changed it. The id never changes (a hand-made note's derived id is written into its
        frontmatter). The edit applies to the file as it is when written: if it changed since
        it was read, it is read again and the edit applied again, unless a guard
        (`expected_version`, `expected_updated_at`) refuses it. A secret in the new text is
        refused, or redacted under `secrets="redact"`. Only `revision.archived` files a memory
        under archive/ (or brings it back). An append is remembered: `check` reports it if an
        editor's later save loses it."""
        secrets, title, edit = options.secrets, revision.title, revision.edit
        adds = clean_items(revision.add_to, "add_to")
        removes = clean_items(revision.remove_from, "remove_from")
        check_apart(revision.properties, revision.tags, adds, removes)
        screened_revision = replace_fields(
            revision,
            title=None if title is None else screened(title, secrets, "the title"),
            edit=None if edit is None else screened_edit(edit, secrets),
            properties=screened_fields(clean_properties(revision.properties), secrets),
            add_to=screened_fields(adds, secrets),
            remove_from=removes,
        )
        change = Change(screened_revision, options)
        with self._lock.writing(options.agent):
            path = self._lookup.locate(identifier)
            named = revision.supersedes
            old = None if named is None else self._lookup.locate(named)
            if old == path:
                raise Invalid(f"{path} cannot supersede itself; name the older memory it replaces")
            change.supersedes = old
            memory = self._dated(retrying(path, lambda: self._attempt(path, change)), options)
            edit = change.revision.edit
            if edit is not None and edit.append is not None:
                self._index.appends.remember(memory.id, edit.append)
            if old is not None:
                self._succession.mark(old, memory)
            return memory

    def _dated(self, memory: Memory, options: WriteOptions) -> Memory:
        """The memory just written, its file's modification time set to the write's time
        when that is an import's (`options.at`): else the file, changed now, would read as
        edited since the time its frontmatter holds."""
        if options.at is None or memory.metadata.get("updated_at") != dated(options.at):
            return memory
        return self._writer.date(memory.path, dated(options.at))

    def _attempt(self, path: str, change: Change) -> Memory:
        """One read of the memory at `path`, check of the guards, change and write (moving
        the file, links following, when its title or category changes)."""
        memory, doc, base = self._lookup.read_for_edit(path)
        check_writable(path, doc)
        check_guards(memory, change.options)
        fields = changed_fields(memory, doc, change, self.limits)
        fields.update(merged_properties(memory.metadata, change.revision.properties or {}))
        fields.update(list_fields(memory, change.revision, self.limits))
        if change.supersedes is not None:
            link = property_link(change.supersedes)
            fields.update(with_link(memory.metadata, "supersedes", link))
        if "title" in fields and not change.options.allow_duplicate:
            self._guard.refuse_title(fields["title"], memory.scope, path)
        edit = change.revision.edit
        body = memory.body if edit is None else edited(memory, edit, self.limits)
        new_path = moved_path(self._store, self._index, memory, fields)
        if body == memory.body and not fields:
            return memory
        if doc.writable and memory.metadata.get("id") in (None, ""):
            fields = {"id": memory.id, **fields}
        fields["updated_at"] = dated(change.options.at)
        if new_path == path and "title" not in fields:
            return self._writer.save(path, doc, body, fields, base)
        moved = self._links.move(Rewrite(memory, doc, base, body, fields), new_path)
        self._succession.follow_move(path, new_path)
        return moved

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
        with self._lock.writing():
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
        with self._lock.writing(agent):
            path = self._lookup.locate(identifier)

            def attempt() -> Memory:
                """One read and write of the review time."""
                memory, doc, base = self._lookup.read_for_edit(path)
                check_writable(path, doc)
                extra = {} if memory.has_frontmatter else {"id": memory.id, "title": memory.title}
                fields: dict[str, object] = {**extra, "last_reviewed": clock.now_iso()}
                return self._writer.save(path, doc, memory.body, fields, base)

            return retrying(path, attempt)

    def archive(self, identifier: str, *, agent: str | None = None) -> Memory:
        """Move one memory to archive/ because a person (`agent`) asked to (the web page's
        Archive), or upkeep does (no agent: updated_by stays): out of searches and lists,
        still readable, links following (`update` with `Revision(archived=True)`)."""
        return self.update(identifier, Revision(archived=True), WriteOptions(agent=agent))

    def archivable(self, where: Filter, *, restore: bool = False) -> list[NoteRow]:
        """The memories `archive_all` would move for `where` (its category and scope; tags and
        properties too): the live ones, expired or not, or with `restore` the archived ones
        (`where`'s category is then looked for under archive/)."""
        if restore:
            folders = where.category
            if isinstance(folders, str):
                folders = (folders,)
            category = tuple(archive_folder(c) for c in folders) if folders else None
            where = replace_fields(where, category=category, archived=True)
        else:
            where = replace_fields(where, archived=None)
        where = replace_fields(where, include_superseded=True)
        rows = self._index.search.list_notes(where, "title", _EVERY_ROW, 0)[0]
        return [row for row in rows if archived(row.category or "") == restore]

    def archive_all(
        self, paths: Iterable[str], *, restore: bool = False, agent: str | None = None
    ) -> list[Memory]:
        """Move the memories at `paths` (from `archivable`) to archive/, or with `restore` back
        to their categories, each as `update` does with `Revision(archived=...)`: all of them
        or none, by `agent`."""
        revision, options = Revision(archived=not restore), WriteOptions(agent=agent)
        with self._lock.writing(agent):
            return [self.update(path, revision, options) for path in paths]

    def delete(self, identifier: str, *, agent: str | None = None) -> Deleted:
        """Delete a memory's file after taking every link to it out of other memories (each
        recording `agent` as who changed it)."""
        with self._lock.writing(agent):
            path = self._lookup.locate(identifier)
            memory = self._lookup.read(path)
            changed = self._links.remove_inbound(path)
            self._succession.forget(path)
            self._writer.remove(path)
            return Deleted(memory, changed)

    def link(
        self,
        source: str,
        target: str,
        text: str | None = None,
        *,
        back_text: str | None = None,
        agent: str | None = None,
    ) -> LinkChange:
        """Link two memories both ways (`text` and `back_text`: the words each link shows,
        default the other's title), each file recording `agent` as who changed it."""
        with self._lock.writing(agent):
            locate = self._lookup.locate
            return self._links.link(locate(source), locate(target), text, back_text)

    def unlink(self, source: str, target: str, *, agent: str | None = None) -> LinkChange:
        """Unlink two memories both ways, each file recording `agent` as who changed it."""
        with self._lock.writing(agent):
            return self._links.unlink(self._lookup.locate(source), self._lookup.locate(target))

    def merge(self, keep: str, other: str, *, agent: str | None = None) -> Memory:
        """Fold the memory `other` into `keep` (near duplicates): its text is appended under a
        heading naming it, its tags and Related links join `keep`'s, it is deleted and every
        link to it points at `keep` instead. All of it or none of it, by `agent`."""
        with self._lock.writing(agent):
            kept_path, gone_path = self._lookup.locate(keep), self._lookup.locate(other)
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
                check_writable(kept_path, doc)
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


def _replacing(options: WriteOptions) -> bool:
    """Whether write_mem replaces a memory of that title (Invalid for a choice it has not)."""
    if options.on_exists not in ("refuse", "replace"):
        raise Invalid(f"on_exists must be refuse or replace, not {options.on_exists!r}")
    replace = options.on_exists == "replace"
    if options.expected_version is not None and not replace:
        raise Invalid("expected_version guards a replace: pass on_exists=replace too")
    return replace


def _no_longer_titled(title: str, scope: str | None, expected_version: str) -> Conflict:
    """The refusal of a replace guarded by a version when no memory has that title now."""
    return Conflict(
        f"no memory is titled {title!r} in scope {scope or '(global)'} any "
        f"more, so it is not version {expected_version}; read it again"
    )
