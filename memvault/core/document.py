"""A markdown file split into YAML frontmatter and body, put back together byte for byte.

python-frontmatter strips the text it parses, so it cannot give the body back byte for byte;
this module splits the file itself and edits frontmatter one key at a time, so a person's
comments, quoting and unknown keys survive every write memvault makes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from memvault.core.yaml_errors import yaml_problem

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# libyaml's emitter is several times faster than PyYAML's own, and writes the same text for
# printable characters of the Basic Multilingual Plane; it escapes the rest (an emoji becomes
# "\U0001F600"), which Obsidian shows as typed, so those values go through PyYAML's emitter.
_FastDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

BOM = "\ufeff"
_OPEN = re.compile(r"---[ \t]*(\r?\n)")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.M)
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")
_BUILD_ERRORS = (ValueError, TypeError, AttributeError, IndexError, OverflowError, RecursionError)
_CONTINUATION = re.compile(r"[ \t]|-(?:[ \t]|$)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _Remove:
    """The type of REMOVE."""

    def __repr__(self) -> str:
        return "REMOVE"


# An update's value that takes its key out of the frontmatter (edit_mem's property set to null).
REMOVE: Any = _Remove()


@dataclass
class Document:
    """One parsed file: what came before the body, the metadata it holds, and the body itself."""

    body: str
    head: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    frontmatter: str | None = None
    error: str | None = None
    bom: bool = False
    newline: str = "\n"
    # The line of a git merge conflict's first marker: the file is mid-merge.
    conflict_line: int | None = None

    @property
    def writable(self) -> bool:
        """False when the frontmatter is broken or the file is mid-merge: memvault then never
        rewrites the file."""
        return self.error is None

    def refusal(self, path: str) -> str:
        """Why memvault will not change the file at `path`, and what to do about it."""
        if self.conflict_line is not None:
            return (
                f"{path} holds git merge conflict markers (from line {self.conflict_line}); "
                "resolve the merge in an editor (`memvault check` lists such files), then try again"
            )
        return (
            f"{path} has frontmatter memvault cannot parse ({self.error}); fix the YAML between"
            " its --- lines in an editor (`memvault check` lists such files), then try again"
        )


def parse_document(text: str) -> Document:
    """Split text into frontmatter and body; broken YAML is reported in `error`, never raised,
    and so is a file mid-merge (git's conflict markers, which a vault synced with git gets)."""
    doc = split_document(text)
    if doc.frontmatter is not None:
        doc.metadata, doc.error = _load_mapping(doc.frontmatter)
    doc.conflict_line = merge_conflict_line(text)
    if doc.conflict_line is not None:  # the likely cause of broken YAML too: said first
        doc.error = f"git merge conflict markers from line {doc.conflict_line}: resolve the merge"
    return doc


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CONFLICT = (re.compile(r"<{7}(?: |$)"), re.compile(r"={7}[ \t]*$"), re.compile(r">{7}(?: |$)"))


def merge_conflict_line(text: str) -> int | None:
    """The line of the first of git's conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`, each
    at the start of a line, in that order, outside fenced code), None when the file has none."""
    if "<<<<<<<" not in text:
        return None
    step, start, fence = 0, 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if opened and (not fence or opened.group(1).startswith(fence)):
            fence = "" if fence else opened.group(1)[:3]
            continue
        if fence or not _CONFLICT[step].match(line):
            continue
        start = number if step == 0 else start
        step += 1
        if step == len(_CONFLICT):
            return start
    return None


def split_document(text: str) -> Document:
    """Split text into frontmatter and body without reading the YAML (no metadata): what a
    search needs to show a piece of the body."""
    bom = text.startswith(BOM)
    head = BOM if bom else ""
    if bom:
        text = text[1:]
    opening = _OPEN.match(text)
    if opening is None:
        return Document(body=text, head=head, bom=bom, newline=_newline_of(text))
    newline = opening.group(1)
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        error = "frontmatter opened with --- never closes"
        return Document(body=text, head=head, bom=bom, newline=newline, error=error)
    return Document(
        body=text[closing.end() :],
        head=head + text[: closing.end()],
        frontmatter=text[opening.end() : closing.start()],
        bom=bom,
        newline=newline,
    )


def render_document(doc: Document, updates: dict[str, Any]) -> str:
    """Return the file text with `updates` set in the frontmatter and every other byte kept.

    Keys already present are rewritten in place; new keys are appended in the order given; a
    key whose value is REMOVE goes, with its block of lines. With no updates the head is kept
    as it was, even when its YAML is broken.
    """
    if not updates:
        return doc.head + doc.body
    if not doc.writable:
        raise ValueError("refusing to rewrite a file whose frontmatter is broken")
    raw = doc.frontmatter or ""
    if doc.frontmatter is not None and all(
        _unchanged(doc.metadata, k, v) for k, v in updates.items()
    ):
        new_raw = raw
    else:
        new_raw = _edit_frontmatter(raw, doc.metadata, updates)
    nl = doc.newline
    if nl != "\n":
        new_raw = re.sub(r"(?<!\r)\n", nl, new_raw)
    if new_raw and not new_raw.endswith(nl):
        new_raw += nl
    return (BOM if doc.bom else "") + f"---{nl}{new_raw}---{nl}" + doc.body


def _unchanged(metadata: dict[str, Any], key: str, value: Any) -> bool:
    """Whether an update leaves a key as it is (REMOVE of a key that is not there)."""
    if value is REMOVE:
        return key not in metadata
    return bool(metadata.get(key) == value)


def normalize_value(value: Any) -> Any:
    """YAML timestamps and dates back to the ISO strings memvault writes, inside lists and
    objects too (whose keys read as text, as top-level keys do). A timestamp that has no UTC
    time (9999-12-31T23:59:59-23:59 is in year 10000 there) reads as absent (None)."""
    if isinstance(value, list):
        return [normalize_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): normalize_value(item) for key, item in value.items()}
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            try:
                value = value.astimezone(dt.UTC).replace(tzinfo=None)
            except OverflowError:
                return None
        return value.isoformat(timespec="seconds") + "Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _load_mapping(raw: str) -> tuple[dict[str, Any], str | None]:
    try:
        if _has_anchor(raw):
            return {}, "frontmatter uses YAML anchors or aliases (& and *), which memvault refuses"
        data = yaml.load(raw, Loader=_Loader)  # a safe loader: C or pure-Python SafeLoader
    except yaml.YAMLError as exc:
        return {}, yaml_problem(exc, raw)
    except _BUILD_ERRORS as exc:
        # PyYAML builds tagged values (dates, !!int) with plain calls that raise these.
        return {}, f"frontmatter has a value YAML cannot read: {exc}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a mapping of keys to values"
    return {str(k): normalize_value(v) for k, v in data.items()}, None


def _has_anchor(raw: str) -> bool:
    """Whether YAML text holds an anchor or an alias, asked of the parser's events (no value is
    built): a few hundred bytes of nested aliases expand to gigabytes (an alias bomb). Text
    without '&' or '*' has none and skips the parse."""
    if "&" not in raw and "*" not in raw:
        return False
    return any(
        isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None
        for event in yaml.parse(raw, Loader=_Loader)
    )


def _newline_of(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _entry(key: str, value: Any) -> str:
    """One `key: value` block in the style Obsidian writes: flow lists, bare timestamps; an
    object, or a list holding one, as block YAML with each list's items indented."""
    if isinstance(value, str) and (_TIMESTAMP.fullmatch(value) or _is_date(value)):
        return f"{key}: {value}\n"
    if _nested(value):
        return yaml.dump(
            {key: value},
            Dumper=_BlockDumper,
            allow_unicode=True,
            sort_keys=False,
            default_flow_style=False,
            width=1_000_000,
        )
    if isinstance(value, list):
        flow = yaml.dump(
            value,
            Dumper=_dumper(value),
            allow_unicode=True,
            default_flow_style=True,
            width=1_000_000,
        )
        return f"{_dump({key: None}).split(':')[0]}: {flow}"
    return _dump({key: value})


def _nested(value: Any) -> bool:
    """Whether a value is an object, or a list holding an object or a list."""
    return isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(item, dict | list) for item in value)
    )


class _BlockDumper(yaml.SafeDumper):
    """PyYAML's emitter, with a list inside an object indented under its key as Obsidian
    writes lists (`key:` then `  - item`), not level with it."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _is_date(value: str) -> bool:
    """Whether a string is a real calendar date (YYYY-MM-DD), which Obsidian writes bare."""
    if not _DATE.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_dumper(data),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=1_000_000,
    )


class _SafeDumper(yaml.SafeDumper):
    """PyYAML's emitter, with a string holding a line break YAML alone knows (NEL, U+2028,
    U+2029) written double-quoted: PyYAML quotes it with single quotes, where a reader folds
    that break into a space (a value "\x85" read back as " ")."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(ch in value for ch in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_SafeDumper.add_representer(str, _represent_str)


def _dumper(data: object) -> type[yaml.SafeDumper]:
    """libyaml's emitter when every string in `data` is printable BMP text, else PyYAML's."""
    plain = all(t.isprintable() and (t.isascii() or max(t) <= "\uffff") for t in _texts(data))
    return _FastDumper if plain else _SafeDumper


def _texts(data: object) -> Iterator[str]:
    """Every string in a frontmatter value: keys and items of mappings and lists, nested."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _texts(key)
            yield from _texts(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _texts(item)


def _key_blocks(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Where each top-level key's block of lines starts and ends."""
    blocks: dict[str, tuple[int, int]] = {}
    key_at: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith("#") or _CONTINUATION.match(line):
            continue
        match = re.match(r"""(?:"([^"]+)"|'([^']+)'|([^:]+?))[ \t]*:(?:[ \t]|$)""", line)
        if match:
            key_at.append((i, next(g for g in match.groups() if g is not None)))
    for n, (start, key) in enumerate(key_at):
        end = key_at[n + 1][0] if n + 1 < len(key_at) else len(lines)
        while end - 1 > start and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        blocks[key] = (start, end)
    return blocks


def _edit_frontmatter(raw: str, old: dict[str, Any], updates: dict[str, Any]) -> str:
    """Replace only the blocks of the updated keys; fall back to a full dump if that misparses."""
    lines = raw.replace("\r\n", "\n").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    blocks = _key_blocks(lines)
    replacements: list[tuple[int, int, str]] = []
    appended = ""
    for key, value in updates.items():
        if value is REMOVE:
            if key in blocks:
                replacements.append((*blocks[key], ""))
        elif key in blocks:
            start, end = blocks[key]
            replacements.append((start, end, _entry(key, value)))
        else:
            appended += _entry(key, value)
    for start, end, text in sorted(replacements, reverse=True):
        lines[start:end] = [text]
    edited = "".join(lines) + appended
    expected = {**old, **updates}
    expected = {k: v for k, v in expected.items() if v is not REMOVE}
    parsed, error = _load_mapping(edited)
    if error is None and parsed == expected and list(parsed) == list(expected):
        return edited
    return _dump(expected)
