"""The Memory record, the limits it must respect, and the rules that turn titles into file names."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from slugify import slugify

from .errors import Invalid, TooLarge

OWNED_KEYS = (
    "id",
    "title",
    "category",
    "scope",
    "tags",
    "created_at",
    "updated_at",
    "last_reviewed",
    "expires_at",
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029\ufeff]")
_TAG_STRIP = "#, \t"
_DERIVED_ID = uuid.UUID("6f1c2a52-8f0e-4f54-9d1e-4c3b7a1d2e90")


@dataclass(frozen=True)
class Limits:
    """Size bounds on what a caller may store; each has a clear error when exceeded."""

    max_title: int = 200
    max_content: int = 1024 * 1024
    max_tags: int = 64
    max_tag_length: int = 100


@dataclass
class Memory:
    """One memory as read from its file: identity, metadata and body."""

    id: str
    title: str
    path: str
    body: str
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    created_at: str | None = None
    updated_at: str | None = None
    last_reviewed: str | None = None
    scope: str | None = None
    expires_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None
    has_frontmatter: bool = True

    @property
    def category(self) -> str | None:
        """The folder the file lives in: moving a file in Obsidian changes its category."""
        return folder_of(self.path) or None

    @property
    def stem(self) -> str:
        return stem_of(self.path)


def folder_of(path: str) -> str:
    """The folder of a vault-relative path ('' at the root): its category."""
    return path.rpartition("/")[0]


def stem_of(path: str) -> str:
    """The file name of a vault-relative path without its extension (as PurePosixPath.stem,
    without building one: a rebuild asks for every file's)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def derived_id(path: str) -> str:
    """A stable id for a file that has none in its frontmatter (a hand-made note)."""
    return str(uuid.uuid5(_DERIVED_ID, path))


def new_id() -> str:
    return str(uuid.uuid4())


def slug_for(title: str) -> str:
    """The file stem for a title: safe on every file system, readable, Unicode kept."""
    return _slug(title) or "memory"


def _slug(text: str) -> str:
    return str(
        slugify(text, allow_unicode=True, max_length=80, word_boundary=True, save_order=True)
    )


def clean_title(title: str, limits: Limits) -> str:
    """A one-line title within the limit, or a clear error."""
    if not isinstance(title, str):
        raise Invalid("title must be a string")
    cleaned = " ".join(_CONTROL.sub(" ", title).split())
    if not cleaned:
        raise Invalid("title is empty; give the memory a short descriptive title")
    if len(cleaned) > limits.max_title:
        raise TooLarge(
            f"title is {len(cleaned)} characters; the limit is {limits.max_title}. "
            "Shorten it and put the detail in the content."
        )
    return cleaned


def check_content(content: str, limits: Limits) -> str:
    """The body as given, if it fits the size limit."""
    if not isinstance(content, str):
        raise Invalid("content must be a string")
    if "\x00" in content:
        raise Invalid("content contains a NUL character; memories are text")
    size = len(content.encode("utf-8"))
    if size > limits.max_content:
        raise TooLarge(
            f"content is {_human(size)}; the limit is {_human(limits.max_content)}. "
            "Split it into several linked memories."
        )
    return content


def clean_tags(tags: Any, limits: Limits) -> list[str]:
    """Tags as Obsidian keeps them: no '#', no spaces, no duplicates, order kept."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = re.split(r"[,\s]+", tags)
    if not isinstance(tags, list | tuple):
        raise Invalid("tags must be a list of strings")
    cleaned: list[str] = []
    for tag in tags:
        text = "-".join(str(tag).strip(_TAG_STRIP).split())
        if not text or text.lower() in (t.lower() for t in cleaned):
            continue
        if len(text) > limits.max_tag_length:
            raise TooLarge(
                f"tag {text[:20]!r}... is {len(text)} characters; the limit is "
                f"{limits.max_tag_length}"
            )
        cleaned.append(text)
    if len(cleaned) > limits.max_tags:
        raise TooLarge(f"{len(cleaned)} tags given; the limit is {limits.max_tags}")
    return cleaned


def clean_category(category: str | None) -> str | None:
    """A category is a folder path; each part becomes a safe slug, so it never leaves the vault."""
    if category is None or not str(category).strip():
        return None
    parts = [_slug(p) for p in re.split(r"[\\/]+", str(category))]
    parts = [p for p in parts if p]
    if not parts:
        raise Invalid(f"category {category!r} has no usable name; use letters or digits")
    return "/".join(parts)


def clean_scope(scope: str | None) -> str | None:
    """A scope (project, account or fleet name): one trimmed line, or None for global."""
    if scope is None or not str(scope).strip():
        return None
    cleaned = " ".join(_CONTROL.sub(" ", str(scope)).split())
    if len(cleaned) > 100:
        raise TooLarge(f"scope is {len(cleaned)} characters; the limit is 100")
    return cleaned


def clean_expiry(expires_at: str | None) -> str | None:
    """An expiry as memvault writes timestamps (UTC, to the second), or a clear error."""
    if expires_at is None or not str(expires_at).strip():
        return None
    text = str(expires_at).strip()
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise Invalid(
            f"expires_at {text!r} is not an ISO date; use e.g. 2025-01-31 or 2025-01-31T12:00:00Z"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def string_list(value: Any) -> list[str]:
    """A frontmatter value that should be a list of strings (tags, aliases), however written."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _human(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB".replace(".0 MiB", " MiB")
    if size >= 1024:
        return f"{size / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{size} bytes"
