"""The Memory record, the limits it must respect, and the rules that turn titles into file names."""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from slugify import slugify

from .document import Document
from .errors import Invalid, TooLarge
from .markdown import headings

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
# memvault stamps updated_at just before writing; an mtime later than that by more than this
# many seconds means someone else changed the file since (see memory_from).
WRITE_SLACK = 2
# The folder expired memories move to; they stay readable there, and out of searches.
ARCHIVE = "archive"
# A memory's version is this many hex digits of its file's content hash.
VERSION_LENGTH = 12


@dataclass(frozen=True)
class Limits:
    """Size bounds on what a caller may store; each has a clear error when exceeded."""

    max_title: int = 200
    max_content: int = 1024 * 1024
    max_tags: int = 64
    max_tag_length: int = 100
    # A category is a folder path: 980 folders deep made every later start fail (issue 13).
    max_category_depth: int = 8
    max_category_length: int = 200


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
    version: str = ""

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


def archived(folder: str) -> bool:
    """Whether a folder lies in the archive (case-sensitive, as the SQL filter reads it)."""
    return folder == ARCHIVE or folder.startswith(ARCHIVE + "/")


def content_hash(text: str) -> str:
    """A file's fingerprint, to tell an edit from a touch; its first hex digits are the
    memory's version."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


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


def clean_category(category: str | None, limits: Limits) -> str | None:
    """A category is a folder path; each part becomes a safe slug, so it never leaves the vault,
    within the depth and length limits (the archive's own folder in front does not count: it
    mirrors every category one level down)."""
    if category is None or not str(category).strip():
        return None
    parts = [_slug(p) for p in re.split(r"[\\/]+", str(category))]
    parts = [p for p in parts if p]
    if not parts:
        raise Invalid(f"category {category!r} has no usable name; use letters or digits")
    own = parts[1:] if parts[0] == ARCHIVE else parts
    if len(own) > limits.max_category_depth:
        raise TooLarge(
            f"category is {len(own)} levels deep; the limit is {limits.max_category_depth}. "
            "Use a shorter folder path and tags for the rest."
        )
    if len("/".join(own)) > limits.max_category_length:
        raise TooLarge(
            f"category is {len('/'.join(own))} characters; the limit is "
            f"{limits.max_category_length}"
        )
    return "/".join(parts)


def refuse_archive(folder: str | None) -> None:
    """Invalid for a new memory in the archive: expired memories go there, and one written
    there would leave search, lists and the briefing at once."""
    if folder is not None and archived(folder):
        raise Invalid(
            f"category {folder!r} is the archive, where expired memories go: a memory written "
            "there is hidden at once; pick another category (expires_at or ttl_days archive it "
            "later)"
        )


def category_spellings(category: str) -> tuple[str, ...]:
    """The folders (lower-case) a category filter names: as written, and as `clean_category`
    stores it on a write (`architecture_decision` -> `architecture-decision`), so a filter
    accepts every spelling a write accepts and still finds a folder made by hand."""
    written = category.strip().strip("/").lower()
    stored = "/".join(p for p in (_slug(part) for part in re.split(r"[\\/]+", category)) if p)
    return tuple(dict.fromkeys(name for name in (written, stored) if name))


def path_problem(path: str) -> str | None:
    """Why a vault-relative path can name no memory's file (None when it can): it leaves the
    vault, holds a NUL, or lies in a dot-folder (.trash, .obsidian, memvault's own)."""
    if "\x00" in path:
        return "contains a NUL character"
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if path.startswith(("/", "\\")) or ".." in parts or not parts:
        return "is not inside the vault"
    if any(part.startswith(".") for part in parts):
        return "is in a dot-folder, which holds no memories"
    return None


def is_memory_path(path: str) -> bool:
    """Whether a walk of the vault takes the file at `path` for a memory: markdown, not in a
    dot-folder."""
    return path.lower().endswith(".md") and path_problem(path) is None


def clean_scope(scope: str | None) -> str | None:
    """A scope (project, account or fleet name): one trimmed line, or None for global."""
    if scope is None or not str(scope).strip():
        return None
    cleaned = " ".join(_CONTROL.sub(" ", str(scope)).split())
    if len(cleaned) > 100:
        raise TooLarge(f"scope is {len(cleaned)} characters; the limit is 100")
    return cleaned


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


def memory_from(path: str, doc: Document, mtime_ns: int | None = None, digest: str = "") -> Memory:
    """Build the Memory record a file describes; hand-made files get a title and a stable id.

    `updated_at` is the later of the frontmatter's and the file's modification time, so an edit
    made in Obsidian (which leaves the frontmatter alone) still counts as a change (the index
    keeps the earlier time when only the mtime moved: see `Index.known_update`). `digest` is the
    file's `content_hash`; the version is its first VERSION_LENGTH digits.
    """
    meta = doc.metadata
    title = meta.get("title")
    if not isinstance(title, str | int | float) or not str(title).strip():
        title = _first_heading(doc.body) or stem_of(path)
    raw_id = meta.get("id")
    aliases = string_list(meta.get("aliases")) + string_list(meta.get("alias"))
    return Memory(
        id=str(raw_id).strip() if raw_id not in (None, "") else derived_id(path),
        title=" ".join(str(title).split()),
        path=path,
        body=doc.body,
        tags=[t.lstrip("#") for t in _tag_list(meta.get("tags"))],
        aliases=aliases,
        created_at=_text_or_none(meta.get("created_at")),
        updated_at=_later(_text_or_none(meta.get("updated_at")), mtime_ns),
        last_reviewed=_text_or_none(meta.get("last_reviewed")),
        scope=_text_or_none(meta.get("scope")),
        expires_at=_text_or_none(meta.get("expires_at")),
        metadata=meta,
        problem=doc.error,
        has_frontmatter=doc.frontmatter is not None,
        version=digest[:VERSION_LENGTH],
    )


def _later(stamp: str | None, mtime_ns: int | None) -> str | None:
    """The file's mtime if it is later than `stamp` by more than the write itself takes."""
    if mtime_ns is None:
        return stamp
    seconds = mtime_ns // 1_000_000_000
    modified = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
    if stamp is None:
        return modified
    written = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds - WRITE_SLACK))
    return modified if written > stamp else stamp


def _tag_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [t for t in re.split(r"[,\s]+", value) if t]
    return string_list(value)


def _first_heading(body: str) -> str | None:
    for _start, _end, level, text in headings(body):
        if level == 1 and text.strip():
            return text.strip()
    return None


def _text_or_none(value: object) -> str | None:
    return None if value in (None, "") else str(value)
