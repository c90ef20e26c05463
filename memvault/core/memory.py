"""The Memory record, the limits it must respect, and the rules that turn titles into file names."""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from slugify import slugify

from memvault.core.ages import Seen, update_time
from memvault.core.document import Document
from memvault.core.markdown import headings
from memvault.errors import Invalid, TooLarge
from memvault.words import Term

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
_WORDS = re.compile(r"[^\W_]+")
_DERIVED_ID = uuid.UUID("6f1c2a52-8f0e-4f54-9d1e-4c3b7a1d2e90")
# The folder expired memories move to; they stay readable there, and out of searches.
ARCHIVE = "archive"
# Names Windows keeps for devices: no file or folder there may have one before its first dot.
_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul", *(f"{port}{n}" for port in ("com", "lpt") for n in range(10))]
)
# A file or folder name's limit in UTF-8 bytes on ext4, APFS and most other file systems.
_NAME_MAX = 255
# The longest file name memvault makes: room is left for the 23 bytes store's temp file beside
# it adds (".{name}.{8 hex}.memvault-tmp").
MAX_NAME_BYTES = _NAME_MAX - 23
# A title's slug leaves room in that for ".md" and the number a taken name gets ("-2"; ten digits).
_STEM_BYTES = MAX_NAME_BYTES - len(".md") - len("-0123456789")
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


_SURROGATE = re.compile("[\ud800-\udfff]")


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
    return content_digest([text.encode("utf-8")])


def content_digest(pieces: Iterable[bytes]) -> str:
    """`content_hash` of a file's bytes given piece by piece: a big file is never held whole."""
    digest = hashlib.blake2b(digest_size=16)
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


def derived_id(path: str) -> str:
    """A stable id for a file that has none in its frontmatter (a hand-made note)."""
    return str(uuid.uuid5(_DERIVED_ID, path))


def new_id() -> str:
    return str(uuid.uuid4())


def slug_for(title: str) -> str:
    """The file stem for a title: readable, Unicode kept, and safe on every file system: within
    the byte limit, and never a device name (`con` becomes `con-memory`, as a title that gives
    no name becomes `memory`: a title is a person's words, so it is kept, and its file named)."""
    slug = _slug(title, _STEM_BYTES) or "memory"
    return f"{slug}-memory" if _is_device(slug) else slug


def _slug(text: str, max_bytes: int = _NAME_MAX) -> str:
    """`text` as a lower-case slug of at most 80 characters and `max_bytes` of UTF-8."""
    slug = slugify(text, allow_unicode=True, max_length=80, word_boundary=True, save_order=True)
    return _within(str(slug), max_bytes)


def _within(slug: str, max_bytes: int) -> str:
    """`slug` within `max_bytes` of UTF-8, cut as slugify cuts to a length: after the last
    whole word that fits, inside the first word when none does, never inside a character."""
    encoded = slug.encode("utf-8")
    if len(encoded) <= max_bytes:
        return slug
    cut = encoded[:max_bytes].decode("utf-8", "ignore")
    if "-" in cut and slug[len(cut)] != "-":
        cut = cut.rpartition("-")[0]
    return cut.strip("-")


def _is_device(name: str) -> bool:
    """Whether Windows keeps `name` for a device (its part before the first dot, in any case):
    such a file or folder cannot be made there, so a vault synced there could not hold it."""
    return name.partition(".")[0].lower() in _DEVICE_NAMES


def storable(text: str, what: str) -> str:
    """`text` if a UTF-8 file can hold it: a lone UTF-16 surrogate (JSON's "\\ud800" alone)
    cannot, and is refused with what held it, not met as an encoding error mid-write."""
    found = _SURROGATE.search(text)
    if found:
        raise Invalid(
            f"{what} holds a lone UTF-16 surrogate (U+{ord(found.group()):04X}), which no UTF-8 "
            "file can store; send the character whole"
        )
    return text


def clean_title(title: str, limits: Limits) -> str:
    """A one-line title within the limit, or a clear error."""
    if not isinstance(title, str):
        raise Invalid("title must be a string")
    storable(title, "the title")
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
    storable(content, "the content")
    check_size(len(content.encode("utf-8")), limits)
    return content


def check_size(size: int, limits: Limits) -> None:
    """TooLarge if a body of `size` UTF-8 bytes is over the limit; an edit asks before it
    builds its result."""
    if size > limits.max_content:
        raise TooLarge(
            f"content is {human_size(size)}; the limit is {human_size(limits.max_content)}. "
            "Split it into several linked memories."
        )


def clean_tags(tags: Any, limits: Limits) -> list[str]:
    """Tags as Obsidian keeps them: a leading '#' dropped, no duplicates (ignoring case), order
    kept; a tag Obsidian could not hold is refused (`tag_problem`), never renamed."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = re.split(r"[,\s]+", tags)
    if not isinstance(tags, list | tuple):
        raise Invalid("tags must be a list of strings")
    cleaned: list[str] = []
    for tag in tags:
        text = str(tag).strip()
        text = text[1:] if text.startswith("#") else text
        if not text or text.lower() in (t.lower() for t in cleaned):
            continue
        if len(text) > limits.max_tag_length:
            raise TooLarge(
                f"tag {text[:20]!r}... is {len(text)} characters; the limit is "
                f"{limits.max_tag_length}"
            )
        problem = tag_problem(text)
        if problem:
            raise Invalid(f"tag {text!r} {problem}")
        cleaned.append(text)
    if len(cleaned) > limits.max_tags:
        raise TooLarge(f"{len(cleaned)} tags given; the limit is {limits.max_tags}")
    return cleaned


def tag_problem(tag: str) -> str | None:
    """Why Obsidian could not hold `tag` (None when it can). Its rule (help.obsidian.md, Tags >
    Tag format): letters, numbers, underscore, hyphen and forward slash (for nested tags) only,
    no blank spaces, and at least one character that is not a number (#1984 is no tag, #y1984
    is). Letters and numbers are Unicode's, with their combining marks."""
    odd = {c for c in tag if not (c.isalnum() or c in "_-/" or _is_mark(c))}
    if odd:
        shown = ", ".join(sorted({"a space" if c.isspace() else repr(c) for c in odd}))
        rule = "an Obsidian tag holds letters, digits, '_', '-' and '/' (for nesting) only"
        if any(c.isspace() or c in ",;" for c in odd):
            joined = "-".join(_WORDS.findall(tag))
            return (
                f"holds {shown}: give several tags as separate items, or join the words with "
                f"'-' ({joined!r}); {rule}"
            )
        return f"holds {shown}; {rule}"
    if tag.replace("/", "").isdigit():
        return f"is all digits, which Obsidian does not take as a tag; add a letter (y{tag})"
    if "" in tag.split("/"):
        return "has an empty part around '/'; nested tags are written parent/child"
    return None


def _is_mark(char: str) -> bool:
    """A combining mark (an accent typed as its own code point)."""
    return unicodedata.category(char).startswith("M")


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


# The vault folder's own README (lower-cased), which describes the vault to a person.
VAULT_README = "readme.md"
# How memvault's own README.md (the default vault's) starts: such a file is no memory. A person's
# README.md at the top of their vault is a note like any other (Obsidian's help vault has one).
OWN_README_MARK = "<!-- memvault: this file describes the vault; it is not a memory -->"
# How the default vault's README started before it carried the mark.
_OLD_OWN_README = "# About this vault\n\nThis folder is memvault's default vault"


def refuse_reserved(folder: str | None, archiving: bool = False) -> None:
    """Invalid when a caller files a memory in a folder that is not a category: memvault's
    archive (a memory there leaves searches and lists at once; only `archiving`, an archive
    asked for, moves one there), or a name Windows keeps for a device (such a folder cannot
    be synced there)."""
    if folder is None:
        return
    if archived(folder) and not archiving:
        raise Invalid(
            (
                f"category {folder!r} is refused: {ARCHIVE}/ is where memvault moves expired "
                "memories, out of search and lists. Pick another category, and give the "
                "memory expires_at or ttl_days if it should go there when it expires, or "
                "archive it now with ",
                Term("edit_mem(archive=true)", "`memvault archive`"),
            )
        )
    for part in folder.split("/"):
        if _is_device(part):
            raise Invalid(
                f"category {folder!r} is refused: {part!r} is a name Windows keeps for a device, "
                "so no vault synced there could hold that folder. Pick another name"
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
    """Whether memvault may write a memory at `path`: markdown, not in a dot-folder, not the
    top-level README.md (which a walk indexes when it is a person's: VaultStore.indexable)."""
    return path.lower().endswith(".md") and path_problem(path) is None and not is_vault_readme(path)


# A copy a sync tool made of a note changed on two machines at once: Syncthing's
# `x.sync-conflict-20240101-120000-ABCDEFG.md`, Dropbox's `x (conflicted copy 2024-01-01).md`
# (and `x (Ana's conflicted copy ...)`), Nextcloud's and others' `x (conflict ...).md`.
_CONFLICT_COPY = re.compile(r"\.sync-conflict-\d{8}-\d{6}|\bconflicted copy\b|\(conflict\b", re.I)
CONFLICT_COPY = (
    "a sync tool's conflict copy (the note was changed on two machines): merge what it adds "
    "into the note by hand, then delete it"
)


def conflict_copy(path: str) -> bool:
    """Whether the file at `path` is a sync tool's conflict copy of a note (its name says so):
    not indexed, so its text does not show twice, but named by reindex, sync and check."""
    return _CONFLICT_COPY.search(path.rpartition("/")[2]) is not None


def own_readme(head: str) -> bool:
    """Whether a top-level README.md that starts with `head` is memvault's own (no memory)."""
    start = head.lstrip("\ufeff").replace("\r\n", "\n")
    return start.startswith((OWN_README_MARK, _OLD_OWN_README))


def is_vault_readme(path: str) -> bool:
    """Whether `path` is the vault folder's top-level README.md (in any case): no memory is
    ever written there, and it is indexed only when it is not memvault's own (`own_readme`:
    storage reads its start)."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    return len(parts) == 1 and parts[0].lower() == VAULT_README


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


def human_size(size: int) -> str:
    """A size in bytes as a person reads it: "1 MiB", "3.5 KiB", "12 bytes"."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB".replace(".0 MiB", " MiB")
    if size >= 1024:
        return f"{size / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{size} bytes"


def memory_from(
    path: str,
    doc: Document,
    mtime_ns: int | None = None,
    digest: str = "",
    seen: Seen | None = None,
) -> Memory:
    """Build the Memory record a file describes; hand-made files get a title and a stable id.

    `updated_at` is the frontmatter's, unless the content changed since the index `seen` it
    and the stamp did not (an edit made in Obsidian): then the file's mtime (core/ages.py).
    `digest` is the file's `content_hash`; the version is its first VERSION_LENGTH digits.
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
        updated_at=update_time(stamp_of(meta), mtime_ns, digest, seen),
        last_reviewed=_text_or_none(meta.get("last_reviewed")),
        scope=_text_or_none(meta.get("scope")),
        expires_at=_text_or_none(meta.get("expires_at")),
        metadata=meta,
        problem=doc.error,
        has_frontmatter=doc.frontmatter is not None,
        version=digest[:VERSION_LENGTH],
    )


def stamp_of(metadata: dict[str, Any]) -> str | None:
    """The `updated_at` a file's frontmatter gives, if any."""
    return _text_or_none(metadata.get("updated_at"))


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
