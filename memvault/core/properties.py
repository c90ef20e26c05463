"""Properties: the frontmatter keys memvault does not own, as Obsidian shows them (text, list,
number, checkbox, date), and nested values (objects, lists of objects) as block YAML. What a
caller may set, what a note holds, and the text each value is indexed and matched as: a
`where` filter is simple equality, a list matches by any element, and a dotted path
(`owner.team`) reaches into objects, and into each object of a list.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from memvault.core.document import REMOVE
from memvault.core.memory import OWNED_KEYS, stem_of, storable, string_list
from memvault.errors import Invalid, TooLarge

# Who wrote a memory, and who changed it last (the MCP client's name, --agent, the CLI's user).
ATTRIBUTION = ("created_by", "updated_by")
# Links between a memory and the one that replaced it, both ways.
SUCCESSION = ("supersedes", "superseded_by")
# Keys a caller cannot set as properties: memvault writes them itself.
RESERVED = frozenset(OWNED_KEYS + ATTRIBUTION + SUCCESSION)
MAX_PROPERTIES = 64
MAX_KEY = 100
MAX_TEXT = 2000
MAX_ITEMS = 100
# How deep objects and lists may nest under a property (`a: {b: [{c: 1}]}` is 3 deep).
MAX_DEPTH = 4
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\ufeff]")
_SCALARS = "text, a number, true/false or a date (YYYY-MM-DD)"
_KINDS = f"{_SCALARS}, an object, or a list of those"

Pairs = tuple[tuple[str, str], ...]


def clean_properties(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Properties a caller passed, checked: each key a short name memvault does not own, each
    value one Obsidian can show; None (remove the key) is kept for an edit to apply."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise Invalid(f"properties must be an object of names to values ({_KINDS})")
    if len(given) > MAX_PROPERTIES:
        raise TooLarge(f"{len(given)} properties given; the limit is {MAX_PROPERTIES}")
    cleaned: dict[str, Any] = {}
    for key, value in given.items():
        name = _clean_key(key)
        cleaned[name] = None if value is None else clean_value(name, value)
    return cleaned


def _clean_key(key: object) -> str:
    name = _clean_name(key, "property name")
    if name in RESERVED:
        raise Invalid(
            f"property {name!r} is reserved: memvault sets it itself (reserved: "
            f"{', '.join(sorted(RESERVED))}); use the tool's own parameter, or another name"
        )
    return name


def _clean_name(key: object, what: str) -> str:
    """A key trimmed: a one-line name of at most MAX_KEY characters."""
    if not isinstance(key, str) or not key.strip() or _CONTROL.search(key):
        raise Invalid(f"{what} {key!r} is not a one-line name")
    storable(key, what)
    name = key.strip()
    if len(name) > MAX_KEY:
        raise TooLarge(f"{what} {name[:20]!r}... is {len(name)} characters; the limit is {MAX_KEY}")
    return name


def clean_value(key: str, value: object, depth: int = 0) -> Any:
    """A value Obsidian can show, checked: a scalar, or a list or object of values nested at
    most MAX_DEPTH deep (null only inside one: a property set to null is removed)."""
    if depth and value is None:
        return None
    if isinstance(value, list | tuple | Mapping) and depth >= MAX_DEPTH:
        raise Invalid(f"property {key!r} nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        if len(value) > MAX_PROPERTIES:
            raise TooLarge(
                f"property {key!r} has {len(value)} fields; the limit is {MAX_PROPERTIES}"
            )
        fields = {
            _clean_name(name, f"property {key!r}: field"): clean_value(
                f"{key}.{name}", item, depth + 1
            )
            for name, item in value.items()
        }
        if len(fields) < len(value):
            raise Invalid(f"property {key!r} names a field twice (spaces around it aside)")
        return fields
    if isinstance(value, list | tuple):
        if len(value) > MAX_ITEMS:
            raise TooLarge(f"property {key!r} has {len(value)} items; the limit is {MAX_ITEMS}")
        return [clean_value(key, item, depth + 1) for item in value]
    return _clean_scalar(key, value)


def _clean_scalar(key: str, value: object) -> str | int | float | bool:
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str):
        if "\x00" in value:
            raise Invalid(f"property {key!r} holds a NUL character")
        storable(value, f"property {key!r}")
        if len(value) > MAX_TEXT:
            raise TooLarge(f"property {key!r} is {len(value)} characters; the limit is {MAX_TEXT}")
        return value
    raise Invalid(f"property {key!r}: {type(value).__name__} values are not allowed; use {_KINDS}")


def properties_of(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A note's properties: its frontmatter keys that memvault does not own, in file order."""
    return {k: v for k, v in metadata.items() if k not in RESERVED}


def indexed_pairs(metadata: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, value) rows of every frontmatter key but memvault's own columns, one per list
    element, and one per value inside an object under its dotted path (`owner.team`, and
    `reviewers.name` for each object of a list), as a `where` filter matches them
    (attribution and succession keys included)."""
    pairs: dict[tuple[str, str], None] = {}
    for key, value in metadata.items():
        if key in OWNED_KEYS:
            continue
        for pair in _leaves(key, value, 0):
            pairs[pair] = None
    return list(pairs)


def where_pairs(where: Mapping[str, Any] | None) -> Pairs:
    """A `where` filter as (key, value text) pairs, every one of which a note must hold; an
    object given as a value stands for the dotted paths of its values."""
    if not where:
        return ()
    if not isinstance(where, Mapping):
        raise Invalid("where must be an object of property names to values")
    pairs: list[tuple[str, str]] = []
    for key, value in where.items():
        if not isinstance(key, str) or not key.strip():
            raise Invalid(f"where: {key!r} is not a property name")
        if key.strip() in OWNED_KEYS:
            raise Invalid(
                f"where: {key.strip()!r} is one of memvault's own fields, not a property; "
                "category, tags and scope have filters of their own"
            )
        if isinstance(value, Mapping) and value:
            pairs += where_pairs({f"{key.strip()}.{name}": v for name, v in value.items()})
            continue
        texts = list(_texts(value))
        if len(texts) != 1 or isinstance(value, list | tuple | Mapping):
            raise Invalid(f"where: {key!r} takes one value ({_SCALARS}), not {value!r}")
        pairs.append((key.strip(), texts[0]))
    return tuple(pairs)


def _leaves(path: str, value: object, depth: int) -> Iterator[tuple[str, str]]:
    """(dotted path, text) of every scalar in a value: a list's items under its own path, an
    object's fields under `path.field`; nesting past MAX_DEPTH (a hand-made file) is left
    out."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(path, item, depth + 1)
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield from _leaves(f"{path}.{name}", item, depth + 1)
    else:
        yield from ((path, text) for text in _texts(value))


def _texts(value: object) -> Iterator[str]:
    """The text a scalar is indexed and matched as: true/false, 3 (not 3.0), dates in ISO;
    none for anything else."""
    if isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, float) and value.is_integer():
        yield str(int(value))
    elif isinstance(value, dt.date):
        yield value.isoformat()
    elif isinstance(value, str | int | float) and str(value).strip():
        yield str(value).strip()


def merged_properties(metadata: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """The frontmatter updates that merge checked `changes` into a note's properties: a new
    value set, None taking its key out (REMOVE), a value already there left alone."""
    updates: dict[str, Any] = {}
    for key, value in changes.items():
        if value is None:
            if key in metadata:
                updates[key] = REMOVE
        elif key not in metadata or metadata[key] != value:
            updates[key] = value
    return updates


def property_link(path: str) -> str:
    """A link to a memory as an Obsidian property holds one: `[[file name]]` (memvault keeps
    file names unique across the vault, so it names one note)."""
    return f"[[{stem_of(path)}]]"


def link_target(value: str) -> str:
    """The note a property's link names: `[[name|text]]` -> `name`; plain text as it is."""
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0]
    return text.strip()


def relinked(
    metadata: Mapping[str, Any], key: str, before: str, after: str | None
) -> dict[str, Any]:
    """The update that replaces the link `before` under `key` by `after` (None: takes it out,
    and the key with it when none is left); none when the note does not hold it."""
    value = metadata.get(key)
    links = string_list(value)
    gone = link_target(before).lower()
    kept = [after if link_target(link).lower() == gone else link for link in links]
    new = [link for link in kept if link is not None]
    if new == links:
        return {}
    if not new:
        return {key: REMOVE}
    return {key: new if isinstance(value, list) else new[0]}


def with_link(metadata: Mapping[str, Any], key: str, link: str) -> dict[str, Any]:
    """The update that adds `link` to a note's list of links under `key` (one link stays a
    text value); none when the note has it already."""
    present = string_list(metadata.get(key))
    if link in present:
        return {}
    return {key: [*present, link] if present else link}


def clean_agent(name: object) -> str | None:
    """A writer's name as created_by / updated_by record it: one trimmed line of at most
    MAX_KEY characters, or None when there is none."""
    if not isinstance(name, str):
        return None
    cleaned = " ".join(_CONTROL.sub(" ", name).split())[:MAX_KEY]
    return cleaned or None
