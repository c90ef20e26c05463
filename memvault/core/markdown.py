"""Pure functions over a markdown body: find links and tags (never inside code or comments),
rewrite links without touching any other byte, manage the `## Related` list, strip syntax."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal
from urllib.parse import quote, unquote

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
LIST_ITEM = re.compile(r"[ \t]*[-*+][ \t]+")


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
    section = related_span(body)
    if section is None:
        return []
    found = find_links(body) if links is None else links
    return [link for link in found if section[0] <= link.start < section[1]]


def add_related(body: str, link_markdown: str) -> str:
    """The body with `- link` added at the end of its `## Related` list (created if missing)."""
    section = related_span(body)
    if section is None:
        prefix = body if body.endswith("\n") or not body else body + "\n"
        gap = "\n" if prefix.strip() and not prefix.endswith("\n\n") else ""
        return f"{prefix}{gap}## Related\n- {link_markdown}\n"
    at, text = related_insertion(body, section, [f"- {link_markdown}"])
    return body[:at] + text + body[at:]


def related_insertion(body: str, span: tuple[int, int], lines: list[str]) -> tuple[int, str]:
    """Where new `lines` go in the Related list at `span` (after its last item), and the text
    inserted there (with the line break the item before lacks at the end of a body)."""
    start, end = span
    old = body[start:end].splitlines(keepends=True)
    insert_at = 1
    for i, line in enumerate(old[1:], start=1):
        if LIST_ITEM.match(line):
            insert_at = i + 1
    at = start + sum(len(line) for line in old[:insert_at])
    gap = "" if old[insert_at - 1].endswith("\n") else "\n"
    return at, gap + "".join(f"{line}\n" for line in lines)


def remove_related(body: str, drop: Callable[[Link], bool]) -> str:
    """The body without the `## Related` items whose link `drop` picks; an emptied section goes."""
    section = related_span(body)
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
        if not (LIST_ITEM.match(line) and any(offset <= d.start < line_end for d in doomed)):
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


# A snippet cut inside a link: its hidden start (`target|` before `]]`, `](url)` after the
# text), or its open end (`[[target` or `[[target|text` with no `]]`).
_CUT_LINK_START = re.compile(r"^(…?)[^\[\]\n]*?\|([^\[\]\n]*)\]\]")
_CUT_LINK_END = re.compile(r"!?\[\[(?:[^\]\n|]*\|)?([^\]\n]*)$")
_CUT_URL = re.compile(r"\]\([^)\s]*\)?")
_MARKDOWN_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")


def plain_snippet(snippet: str) -> str:
    """A search snippet (an excerpt of a body, maybe cut inside a link or emphasis) as plain
    text on one line: markdown syntax gone, a link shown as a reader sees it, so a highlight
    mark inside a link's hidden target goes with it."""
    text = _MARKDOWN_LINK.sub(r"\1", _CUT_LINK_START.sub(r"\1\2", snippet))
    text = _CUT_LINK_END.sub(r"\1", to_plain(text))
    text = _CUT_URL.sub("", text).replace("[[", "").replace("]]", "")
    return " ".join(text.split())


def safe_link_text(text: str) -> str:
    """Text that can stand after a wikilink's `|`: no pipe, bracket or line break."""
    return text.replace("|", "-").replace("[", "(").replace("]", ")").replace("\n", " ")


def related_span(body: str) -> tuple[int, int] | None:
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
