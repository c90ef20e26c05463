"""Pure functions over a markdown body: find links and tags (never inside code or comments),
rewrite links without touching any other byte, manage the `## Related` list, strip syntax."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal
from urllib.parse import quote, unquote

from memvault.words import WordedValueError, param

LinkKind = Literal["wiki", "markdown"]

# Obsidian's attachment formats plus common documents: a link to one of these is not a memory link.
ATTACHMENT_EXTENSIONS = frozenset(
    "png jpg jpeg gif bmp svg webp avif heic tif tiff ico "
    "mp3 wav m4a ogg oga flac 3gp webm mp4 ogv mov mkv avi "
    "pdf canvas base csv tsv txt json xml yaml yml zip gz tar 7z "
    "doc docx xls xlsx ppt pptx odt ods odp rtf epub html htm excalidraw".split()
)

_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})", re.M)
_INLINE_OPEN = re.compile(r"`+|<!--")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_NOT_NEWLINE = re.compile(r"[^\r\n]")
# The scanning patterns start with a literal, which `re` finds fast; what a lookbehind would
# check (start of line, an escaping backslash, the `!` of an embed) is checked in code.
_WIKI = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(
    r"(?<![\\\]])(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_TAG = re.compile(r"#([^\s#!\"$%&'()*+,.:;<=>?@\[\\\]^`{|}~]+)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$", re.M)
_RELATED = re.compile(r"##[ \t]+Related[ \t]*$", re.M | re.I)
_ITEM = re.compile(r"[ \t]*[-*+][ \t]+")


@dataclass(frozen=True)
class BodyEdit:
    """Changes to a body that save sending it whole: applied in the order of the fields."""

    content: str | None = None
    find: str | None = None
    replace: str | None = None
    expected_count: int | None = None
    section: tuple[str, str] | None = None
    prepend: str | None = None
    append: str | None = None

    @property
    def empty(self) -> bool:
        return all(
            getattr(self, name) is None
            for name in ("content", "find", "section", "prepend", "append")
        )


@dataclass(frozen=True)
class Link:
    """A link found in a body, with its span so it can be rewritten in place."""

    start: int
    end: int
    kind: LinkKind
    target: str
    subpath: str = ""
    text: str | None = None
    embed: bool = False
    escaped_pipe: bool = False

    @property
    def is_attachment(self) -> bool:
        """A link to a non-markdown file (image, PDF, ...) rather than to a memory."""
        name = self.target.rsplit("/", 1)[-1]
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        return ext in ATTACHMENT_EXTENSIONS

    @property
    def display(self) -> str:
        """What a reader sees for this link: its text, or the target's name."""
        if self.text:
            return self.text
        name = self.target.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name


@lru_cache(maxsize=8)
def masked(body: str) -> str:
    """The body with fenced code, HTML comments and code spans blanked out, offsets unchanged.

    Cached: finding links, tags, headings and the Related list of one body all start here.
    """
    text = body
    if "```" in text or "~~~" in text:
        text = _blank(text, _fenced_blocks(text))
    if "`" in text or "<!--" in text:
        text = _blank(text, _inline_spans(text))
    return text


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with every character in `spans` but line breaks turned into a space."""
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        part = text[start:end]
        plain = "\n" not in part and "\r" not in part
        out.append(" " * len(part) if plain else _NOT_NEWLINE.sub(" ", part))
        last = end
    out.append(text[last:])
    return "".join(out)


def find_links(body: str) -> list[Link]:
    """Every wikilink, embed and relative markdown link in reading order."""
    text = masked(body)
    links = [_wikilink(start, match, body, text) for start, match in _wikilinks(text)]
    if "](" in text:
        links += [_mdlink(m, body) for m in _MDLINK.finditer(_without_wikilinks(body))]
    return sorted((link for link in links if link is not None), key=lambda link: link.start)


def _wikilinks(text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """(start, match) of each wikilink in masked text: `[[...]]` not escaped by a backslash;
    an embed starts one character early, at its `!` (unless that is escaped)."""
    for match in _WIKI.finditer(text):
        start = match.start()
        before = text[start - 1] if start else ""
        if before == "\\":
            continue
        embed = before == "!" and (start < 2 or text[start - 2] != "\\")
        yield start - embed, match


@lru_cache(maxsize=8)
def _without_wikilinks(body: str) -> str:
    """The masked body with wikilinks blanked too: where markdown links and tags are sought."""
    text = masked(body)
    if "[[" not in text:
        return text
    return _blank(text, ((start, match.end()) for start, match in _wikilinks(text)))


def find_tags(body: str) -> list[str]:
    """Inline `#tags`, as Obsidian reads them: not in code, not all digits, no duplicates."""
    text = _without_wikilinks(body)
    seen: dict[str, str] = {}
    for match in _TAG.finditer(text):
        if not _after_space(text, match.start()):
            continue
        tag = match.group(1).rstrip("/")
        if tag and not tag.replace("/", "").isdigit():
            seen.setdefault(tag.lower(), tag)
    return list(seen.values())


def rewrite_links(body: str, replace: Callable[[Link], str | None]) -> str:
    """The body with each link for which `replace` returns text swapped for that text."""
    out: list[str] = []
    last = 0
    for link in find_links(body):
        new = replace(link)
        if new is None:
            continue
        out.append(body[last : link.start])
        out.append(new)
        last = link.end
    out.append(body[last:])
    return "".join(out)


def format_link(link: Link, target: str) -> str:
    """`link` pointed at a new target, keeping its form, heading, block and text."""
    bang = "!" if link.embed else ""
    if link.kind == "markdown":
        destination = quote(target, safe="/") + link.subpath
        if " " in target or "(" in target:
            destination = f"<{target}{link.subpath}>"
        return f"{bang}[{link.text or ''}]({destination})"
    pipe = "\\|" if link.escaped_pipe else "|"
    text = f"{pipe}{link.text}" if link.text is not None else ""
    return f"{bang}[[{target}{link.subpath}{text}]]"


def wikilink(target: str, text: str | None = None) -> str:
    """A plain wikilink to a note, with display text when it differs from the target."""
    if text is None or text == target:
        return f"[[{target}]]"
    return f"[[{target}|{safe_link_text(text)}]]"


def related_links(body: str, links: list[Link] | None = None) -> list[Link]:
    """Links in the list items of the body's `## Related` section (from `links`, the body's
    links when the caller has them already)."""
    section = _related_span(body)
    if section is None:
        return []
    found = find_links(body) if links is None else links
    return [link for link in found if section[0] <= link.start < section[1]]


def add_related(body: str, link_markdown: str) -> str:
    """The body with `- link` added at the end of its `## Related` list (created if missing)."""
    section = _related_span(body)
    if section is None:
        prefix = body if body.endswith("\n") or not body else body + "\n"
        gap = "\n" if prefix.strip() and not prefix.endswith("\n\n") else ""
        return f"{prefix}{gap}## Related\n- {link_markdown}\n"
    at, text = _related_insertion(body, section, [f"- {link_markdown}"])
    return body[:at] + text + body[at:]


def _related_insertion(body: str, span: tuple[int, int], lines: list[str]) -> tuple[int, str]:
    """Where new `lines` go in the Related list at `span` (after its last item), and the text
    inserted there (with the line break the item before lacks at the end of a body)."""
    start, end = span
    old = body[start:end].splitlines(keepends=True)
    insert_at = 1
    for i, line in enumerate(old[1:], start=1):
        if _ITEM.match(line):
            insert_at = i + 1
    at = start + sum(len(line) for line in old[:insert_at])
    gap = "" if old[insert_at - 1].endswith("\n") else "\n"
    return at, gap + "".join(f"{line}\n" for line in lines)


def remove_related(body: str, drop: Callable[[Link], bool]) -> str:
    """The body without the `## Related` items whose link `drop` picks; an emptied section goes."""
    section = _related_span(body)
    if section is None:
        return body
    start, end = section
    doomed = [link for link in related_links(body) if drop(link)]
    if not doomed:
        return body
    kept: list[str] = []
    offset = start
    for line in body[start:end].splitlines(keepends=True):
        line_end = offset + len(line)
        if not (_ITEM.match(line) and any(offset <= d.start < line_end for d in doomed)):
            kept.append(line)
        offset = line_end
    if all(not line.strip() for line in kept[1:]):
        head = body[:start]
        tail = body[end:]
        if not tail.strip() and head.endswith("\n\n"):
            head = head[:-1]
        return head + tail
    return body[:start] + "".join(kept) + body[end:]


def unlink_inline(body: str, points_here: Callable[[Link], bool]) -> str:
    """The body with links that `points_here` picks turned into their plain display text."""
    return rewrite_links(body, lambda link: link.display if points_here(link) else None)


def headings(body: str) -> Iterator[tuple[int, int, int, str]]:
    """(start, end of line, level, text) of every ATX heading outside code."""
    text = masked(body)
    for match in _HEADING.finditer(text):
        yield match.start(), match.end(), len(match.group(1)), body[match.start(2) : match.end(2)]


def section_span(body: str, heading: str) -> tuple[int, int] | None:
    """The span from a heading (matched case-insensitively, without #) to the next of its level."""
    wanted = heading.strip().lstrip("#").strip().lower()
    found: tuple[int, int] | None = None
    level = 0
    for start, _end, lvl, text in headings(body):
        if found is not None and lvl <= level:
            return found[0], start
        if found is None and text.strip().lower() == wanted:
            found, level = (start, len(body)), lvl
    return found


# Given the size of an edit's step in UTF-8 bytes before the step's text is built; raises to
# refuse it (the service's size limit).
Check = Callable[[int], None]


def _unlimited(size: int) -> None:
    """The check of an edit that no size limit applies to: every size passes."""


def apply_edit(body: str, edit: BodyEdit, check: Check = _unlimited) -> str:
    """The body after `edit`; a ValueError says why an edit cannot apply (nothing is changed).

    New `content` keeps the old `## Related` list when it brings none of its own, and `append`
    lands before that list, so links made on both sides are never dropped by a text edit.
    `check` is given each step's size before that step's text is built, and may refuse it: a
    find/replace can make a body thousands of times larger than anything the caller sent.
    """
    if edit.content is not None:
        body = _keep_related(body, with_newline(edit.content), check)
    if edit.find is not None:
        body = _find_replace(body, edit.find, edit.replace, edit.expected_count, check)
    if edit.section is not None:
        heading, content = edit.section
        body = _set_section(body, heading, content, check)
    if edit.prepend is not None:
        body = _joined([with_newline(edit.prepend), body], check)
    if edit.append is not None:
        body = _append(body, with_newline(edit.append), check)
    return body


def _utf8_size(text: str) -> int:
    """The size of `text` in UTF-8 bytes (what the size limit counts), encoding only non-ASCII."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _joined(parts: list[str], check: Check) -> str:
    """The parts as one text, once `check` has accepted their size."""
    check(sum(_utf8_size(part) for part in parts))
    return "".join(parts)


def with_newline(text: str) -> str:
    """Text ending in a newline (empty text stays empty), as files and sections should."""
    return text if not text or text.endswith("\n") else text + "\n"


def _keep_related(old_body: str, content: str, check: Check) -> str:
    old = _related_span(old_body)
    if old is None or _related_span(content) is not None:
        return _joined([content], check)
    gap = "" if content.endswith("\n\n") or not content else "\n"
    return _joined([content, gap, old_body[old[0] : old[1]]], check)


def _find_replace(
    body: str, find: str, replace: str | None, expected: int | None, check: Check
) -> str:
    if not find:
        raise ValueError("find is empty; give the exact text to replace")
    if replace is None:
        raise WordedValueError(
            (param("find"), " needs ", param("replace"), " (an empty string deletes the text)")
        )
    count = body.count(find)
    if count == 0:
        raise ValueError(f"{find[:60]!r} does not occur in the memory; read it and copy the text")
    if expected is None and count > 1:
        raise WordedValueError(
            (
                f"{find[:60]!r} occurs {count} times; pass ",
                param("expected_count", str(count)),
                " to replace all, or make ",
                param("find"),
                " longer so it is unique",
            )
        )
    if expected is not None and expected != count:
        raise ValueError(f"{find[:60]!r} occurs {count} times, not {expected}; nothing replaced")
    # str.replace finds the same non-overlapping occurrences that str.count counted.
    check(_utf8_size(body) + count * (_utf8_size(replace) - _utf8_size(find)))
    return body.replace(find, replace)


def _section_parts(body: str, heading: str, content: str) -> list[str]:
    """The parts of the body with `content` under `heading` in place of that section's text."""
    span = section_span(body, heading)
    if span is None:
        found = ", ".join(repr(text) for *_, text in headings(body)) or "none"
        raise ValueError(f"no heading {heading!r} in the memory (headings: {found}); use append")
    start, end = span
    line_end = body.find("\n", start)
    head_end = end if line_end == -1 or line_end >= end else line_end + 1
    heading_line = body[start:head_end] if line_end != -1 else body[start:end] + "\n"
    text = with_newline(content)
    if end < len(body) and text and not text.endswith("\n\n"):
        text += "\n"
    return [body[:start], heading_line, text, body[end:]]


def _set_section(body: str, heading: str, content: str, check: Check) -> str:
    """The body with `content` under `heading`; when the body has a `## Related` list of its
    own outside that section, the items of the content's list join it instead."""
    related = _related_span(content)
    if related is not None and heading.strip().lstrip("#").strip().lower() != "related":
        start, end = related
        before = content[:start].rstrip("\n")
        rest = (before + "\n" if before else "") + content[end:]
        own = _joined(_section_parts(body, heading, rest), check)
        if _related_span(own) is not None:
            lines = content[start:end].splitlines()[1:]
            return _add_items(own, [line.strip() for line in lines if _ITEM.match(line)], check)
    return _joined(_section_parts(body, heading, content), check)


def _add_items(body: str, items: list[str], check: Check) -> str:
    """The body (which has a Related list) with each item in `items` (`- [[x|X]]`) that it
    lacks added at the end of that list."""
    listed = {line.strip() for line in body.splitlines() if _ITEM.match(line)}
    added: list[str] = []
    for item in items:
        if item not in listed:
            line = f"- {_ITEM.sub('', item, count=1)}"
            added.append(line)
            listed.add(line.strip())
    span = _related_span(body)
    if not added or span is None:
        return body
    at, text = _related_insertion(body, span, added)
    return _joined([body[:at], text, body[at:]], check)


def _append(body: str, text: str, check: Check) -> str:
    """The body with `text` as a paragraph of its own at the end, before the Related list."""
    related = _related_span(body)
    if related is None:
        if not body.strip("\n"):
            return _joined([text], check)
        trailing = len(body) - len(body.rstrip("\n"))
        return _joined([body, "\n" * max(0, 2 - trailing), text], check)
    start = related[0]
    before = body[:start].rstrip("\n")
    return _joined([before, "\n\n" if before else "", text, "\n", body[start:]], check)


def first_line(body: str, limit: int = 200) -> str:
    """The first line of text in a body, without heading marks: a one-line preview."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:limit]
    return ""


def to_plain(body: str) -> str:
    """Readable text without markdown syntax: links as their text, no emphasis or heading marks."""
    text = rewrite_links(body, lambda link: link.display)
    text = re.sub(r"^[ \t]*(`{3,}|~{3,}).*$\n?", "", text, flags=re.M)
    text = re.sub(r"^#{1,6}[ \t]+", "", text, flags=re.M)
    text = re.sub(r"^[ \t]*>[ \t]?", "", text, flags=re.M)
    text = re.sub(r"^([ \t]*)[-*+][ \t]+\[[ xX]\][ \t]+", r"\1", text, flags=re.M)
    text = re.sub(r"^([ \t]*)[-*+][ \t]+", r"\1", text, flags=re.M)
    text = re.sub(r"(\*\*|__|~~|==)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])([*_])(?!\s)(.+?)(?<!\s)\1(?![\w*])", r"\2", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    return text


def safe_link_text(text: str) -> str:
    """Text that can stand after a wikilink's `|`: no pipe, bracket or line break."""
    return text.replace("|", "-").replace("[", "(").replace("]", ")").replace("\n", " ")


def _related_span(body: str) -> tuple[int, int] | None:
    text = masked(body)
    match = next((m for m in _RELATED.finditer(text) if _line_start(text, m.start())), None)
    if match is None:
        return None
    nxt = re.compile(r"^#{1,2}[ \t]", re.M).search(text, match.end())
    return match.start(), nxt.start() if nxt else len(body)


def _line_start(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] == "\n"


def _after_space(text: str, at: int) -> bool:
    return at == 0 or text[at - 1].isspace()


def _fenced_blocks(body: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while True:
        opening = _FENCE.search(body, pos)
        if opening is None:
            return
        fence = opening.group(1)
        closer = re.compile(rf"^[ \t>]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        line_end = body.find("\n", opening.end())
        if line_end == -1:
            yield opening.start(), len(body)
            return
        closing = closer.search(body, line_end + 1)
        end = closing.end() if closing else len(body)
        yield opening.start(), end
        pos = end


def _inline_spans(text: str) -> Iterator[tuple[int, int]]:
    """Code spans and HTML comments, left to right: whichever opens first wins, so a `<!--`
    inside code hides nothing, and a backtick inside a comment opens no code span."""
    pos = 0
    while True:
        opening = _INLINE_OPEN.search(text, pos)
        if opening is None:
            return
        if opening.group(0) == "<!--":
            close = text.find("-->", opening.end())
            end = len(text) if close == -1 else close + 3
            yield opening.start(), end
            pos = end
            continue
        closing = _closer(len(opening.group(0))).search(text, opening.end())
        if closing is None or _BLANK_LINE.search(text, opening.end(), closing.start()):
            pos = opening.end()
            continue
        yield opening.start(), closing.end()
        pos = closing.end()


@lru_cache(maxsize=32)
def _closer(length: int) -> re.Pattern[str]:
    return re.compile(f"(?<!`)`{{{length}}}(?!`)")


def _wikilink(start: int, match: re.Match[str], body: str, text: str) -> Link | None:
    """The link `match` found in `text` (the masked body); None if it names no target, or
    one that is all code (`[[`x`]]`)."""
    target, sub, shown, escaped = _wiki_parts(body[match.start(1) : match.end(1)])
    if not target or not _wiki_parts(text[match.start(1) : match.end(1)])[0]:
        return None
    return Link(
        start=start,
        end=match.end(),
        kind="wiki",
        target=target,
        subpath=f"#{sub}" if sub else "",
        text=shown,
        embed=start < match.start(),
        escaped_pipe=escaped,
    )


def _wiki_parts(inner: str) -> tuple[str, str, str | None, bool]:
    """(target, subpath without '#', text after the pipe, pipe escaped) of a wikilink's inside."""
    escaped = False
    shown: str | None = None
    pipe = inner.find("|")
    if pipe >= 0:
        escaped = pipe > 0 and inner[pipe - 1] == "\\"
        shown = inner[pipe + 1 :]
        inner = inner[: pipe - 1] if escaped else inner[:pipe]
    target, _, sub = inner.partition("#")
    return target.strip(), sub, shown, escaped


def _mdlink(match: re.Match[str], body: str) -> Link | None:
    destination = body[match.start(3) : match.end(3)].strip()
    if destination.startswith("<"):
        destination = destination[1:-1]
    if not destination or destination.startswith("#") or _SCHEME.match(destination):
        return None
    path, _, sub = destination.partition("#")
    target = unquote(path).strip()
    if not target:
        return None
    return Link(
        start=match.start(),
        end=match.end(),
        kind="markdown",
        target=target,
        subpath=f"#{sub}" if sub else "",
        text=body[match.start(2) : match.end(2)],
        embed=bool(match.group(1)),
    )
