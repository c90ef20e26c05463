"""What a caller asks a write for, as values each face builds once and hands over whole: a
new memory (`Draft`), a change to one (`Revision`) and how either is written (`WriteOptions`).
The service cleans and checks them (core/memory.py's limits); these only hold them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memvault.core.body_edits import BodyEdit
from memvault.core.secrets import SecretPolicy

# What write does when a memory of that title exists in that scope: refuse it as a duplicate,
# or replace its content (key-value use: the title is the key).
OnExists = Literal["refuse", "replace"]


@dataclass(frozen=True)
class Draft:
    """A memory to write: its title and markdown body, tags, category (its folder), scope,
    expiry (`expires_at`, or `ttl_days` from now; neither: the category's default TTL),
    `properties` as extra frontmatter keys, `supersedes`: a memory it replaces, and
    `created_at`: when it was begun, kept from where an import found it (None: when written)."""

    title: str
    content: str
    tags: Sequence[str] = ()
    category: str | None = None
    scope: str | None = None
    expires_at: str | None = None
    ttl_days: float | None = None
    properties: Mapping[str, Any] | None = None
    supersedes: str | None = None
    created_at: str | None = None


@dataclass(frozen=True)
class Revision:
    """A change to a memory; None leaves a part as it is. A new title renames its file, a new
    category moves it, `edit` changes its body, `tags` replace its tags, `properties` are
    merged into its frontmatter (a None value removes one), `add_to` and `remove_from` add
    items to and take items out of list properties or the tags (core/property_lists.py),
    `supersedes` names a memory this one replaces. `expires_at` (an ISO date, or "never" for
    none) or `ttl_days` from now set when it expires. `archived` True moves it under archive/
    (out of searches, still readable), False brings it back to its category, without an
    expiry already past."""

    title: str | None = None
    edit: BodyEdit | None = None
    tags: Sequence[str] | None = None
    category: str | None = None
    properties: Mapping[str, Any] | None = None
    supersedes: str | None = None
    add_to: Mapping[str, Any] | None = None
    remove_from: Mapping[str, Any] | None = None
    expires_at: str | None = None
    ttl_days: float | None = None
    archived: bool | None = None

    @property
    def empty(self) -> bool:
        """Whether it changes nothing."""
        edits = self.edit is not None and not self.edit.empty
        rest = (self.title, self.tags, self.category, self.properties, self.supersedes)
        lists = (self.add_to, self.remove_from)
        expiry = (self.expires_at, self.ttl_days, self.archived)
        return not edits and all(value is None for value in (*rest, *expiry)) and not any(lists)


@dataclass(frozen=True)
class WriteOptions:
    """How a write is done: `agent` is recorded as who wrote it; a duplicate (same title in
    the scope, near-identical content) is refused unless `allow_duplicate`; a secret is
    refused, or redacted under `secrets="redact"`; `expected_version` (or, for an edit,
    `expected_updated_at`) refuses it if the memory changed since; `on_exists` is what
    `write` does with a title its scope has already; `at` is when it is dated (`updated_at`,
    and a new memory's times): an import keeps its source's time (None: now)."""

    agent: str | None = None
    allow_duplicate: bool = False
    secrets: SecretPolicy = "refuse"
    expected_version: str | None = None
    expected_updated_at: str | None = None
    on_exists: OnExists = "refuse"
    at: str | None = None
