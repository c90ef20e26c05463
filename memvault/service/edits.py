"""What a write puts in a memory's file: a new memory's fields, an edit's changed fields and
body, and the checks a change must pass first (the caller's guards, a writable file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memvault.core import clock
from memvault.core.body_edits import BodyEdit, apply_edit
from memvault.core.document import Document
from memvault.core.drafts import Revision, WriteOptions
from memvault.core.expiry import archive_folder, expiry_update, live_folder
from memvault.core.memory import (
    Limits,
    Memory,
    check_content,
    check_size,
    clean_category,
    clean_tags,
    clean_title,
    new_id,
    refuse_reserved,
)
from memvault.core.property_lists import TAGS, edited_list, edited_tags
from memvault.errors import Conflict, Invalid
from memvault.words import parts


@dataclass
class Change:
    """What `update` asks of a memory: the revision (its text screened for secrets), how it
    is written, and the path of the memory it supersedes once located; applied to the file as
    it is at each attempt (`MemoryWrites.update`)."""

    revision: Revision
    options: WriteOptions
    supersedes: str | None = None


def dated(stamp: str | None) -> str:
    """When a write is dated: now, or `stamp` (a time an import kept from its source) in the
    form memvault writes times; Invalid if it is no ISO 8601 time."""
    if stamp is None:
        return clock.now_iso()
    moment = clock.parse(stamp)
    if moment is None:
        raise Invalid(f"{stamp!r} is not an ISO 8601 time, such as 2024-01-15T10:30:00Z")
    return clock.iso(moment)


def new_fields(
    title: str,
    folder: str | None,
    scope: str | None,
    tags: list[str],
    expires: str | None,
    times: tuple[str | None, str | None],
    agent: str | None,
) -> dict[str, Any]:
    """The frontmatter of a new memory: a fresh id, its title, category, scope and tags, its
    `times` (created, written: each now unless an import kept it from its source) as created,
    updated and last reviewed, its expiry, and `agent` as who wrote it."""
    created, written = times
    now = dated(written)
    fields: dict[str, Any] = {"id": new_id(), "title": title}
    if folder:
        fields["category"] = folder
    if scope:
        fields["scope"] = scope
    begun = now if created is None else dated(created)
    fields.update(tags=tags, created_at=begun, updated_at=now, last_reviewed=now)
    if expires:
        fields["expires_at"] = expires
    if agent:
        fields["created_by"] = agent  # updated_by too: the writer stamps a change by one
    return fields


def changed_fields(memory: Memory, doc: Document, change: Change, limits: Limits) -> dict[str, Any]:
    """The title, tags, category (the archive's too) and expiry `change` gives `memory` that
    differ from its own (with its id and title when it has no frontmatter yet to hold them)."""
    fields: dict[str, Any] = {}
    revision = change.revision
    if revision.title is not None and clean_title(revision.title, limits) != memory.title:
        fields["title"] = clean_title(revision.title, limits)
    if revision.tags is not None and clean_tags(list(revision.tags), limits) != memory.tags:
        fields["tags"] = clean_tags(list(revision.tags), limits)
    folder = _folder(memory, revision, limits)
    if folder != memory.category:
        refuse_reserved(folder, bool(revision.archived))
        fields["category"] = folder
    reviving = revision.archived is False
    fields.update(
        expiry_update(memory.expires_at, revision.expires_at, revision.ttl_days, reviving)
    )
    if fields and not doc.writable:
        raise Invalid(doc.refusal(memory.path))
    if fields and not memory.has_frontmatter:
        fields = {"id": memory.id, "title": memory.title, **fields}
    return fields


def list_fields(memory: Memory, revision: Revision, limits: Limits) -> dict[str, Any]:
    """The lists the revision's `add_to` and `remove_from` change (checked by
    `property_lists.clean_items`): each property's new list, the tags cleaned."""
    adds, removes = revision.add_to or {}, revision.remove_from or {}
    fields: dict[str, Any] = {}
    for key in dict.fromkeys([*adds, *removes]):
        add, remove = list(adds.get(key, ())), list(removes.get(key, ()))
        if key == TAGS:
            tags = clean_tags(edited_tags(memory.tags, add, remove), limits)
            if tags != memory.tags:
                fields[TAGS] = tags
        else:
            new = edited_list(key, memory.metadata.get(key), add, remove)
            if new is not None:
                fields[key] = new
    return fields


def _folder(memory: Memory, revision: Revision, limits: Limits) -> str | None:
    """The folder `revision` puts `memory` in: the category it names (or its own), under the
    archive or back from it when it says so."""
    folder = memory.category
    if revision.category is not None:
        folder = clean_category(revision.category, limits)
    if revision.archived is None:
        return folder
    return archive_folder(folder) if revision.archived else live_folder(folder)


def edited(memory: Memory, edit: BodyEdit, limits: Limits) -> str:
    """The memory's body after `edit`, each step refused before it is built when it would
    be over the size limit (a find/replace of a short text by a long one multiplies)."""
    for part in (edit.content, edit.append, edit.prepend, edit.replace, edit.section):
        if part is not None:
            check_content(part if isinstance(part, str) else part[1], limits)
    try:
        body = apply_edit(memory.body, edit, lambda size: check_size(size, limits))
    except ValueError as exc:
        raise Invalid((f"{memory.path}: ", *parts(exc))) from exc
    check_content(body, limits)
    return body


def check_guards(memory: Memory, options: WriteOptions) -> None:
    """Conflict if the memory is not the version (or the update time) the caller last saw."""
    expected_version, expected_updated_at = options.expected_version, options.expected_updated_at
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


def check_writable(path: str, doc: Document) -> None:
    """Refuse to change a file whose frontmatter cannot be parsed: memvault would lose it."""
    if not doc.writable:
        raise Invalid(doc.refusal(path))
