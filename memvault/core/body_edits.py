"""Edits of a markdown body as one value (`BodyEdit`: new content, find/replace, a section, a
prepend, an append), applied in order, each step's size checked before its text is built."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memvault.core.markdown import (
    LIST_ITEM,
    headings,
    related_insertion,
    related_span,
    section_span,
)
from memvault.words import WordedValueError, param


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
    old = related_span(old_body)
    if old is None or related_span(content) is not None:
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
    related = related_span(content)
    if related is not None and heading.strip().lstrip("#").strip().lower() != "related":
        start, end = related
        before = content[:start].rstrip("\n")
        rest = (before + "\n" if before else "") + content[end:]
        own = _joined(_section_parts(body, heading, rest), check)
        if related_span(own) is not None:
            lines = content[start:end].splitlines()[1:]
            return _add_items(own, [line.strip() for line in lines if LIST_ITEM.match(line)], check)
    return _joined(_section_parts(body, heading, content), check)


def _add_items(body: str, items: list[str], check: Check) -> str:
    """The body (which has a Related list) with each item in `items` (`- [[x|X]]`) that it
    lacks added at the end of that list."""
    listed = {line.strip() for line in body.splitlines() if LIST_ITEM.match(line)}
    added: list[str] = []
    for item in items:
        if item not in listed:
            line = f"- {LIST_ITEM.sub('', item, count=1)}"
            added.append(line)
            listed.add(line.strip())
    span = related_span(body)
    if not added or span is None:
        return body
    at, text = related_insertion(body, span, added)
    return _joined([body[:at], text, body[at:]], check)


def _append(body: str, text: str, check: Check) -> str:
    """The body with `text` as a paragraph of its own at the end, before the Related list."""
    related = related_span(body)
    if related is None:
        if not body.strip("\n"):
            return _joined([text], check)
        trailing = len(body) - len(body.rstrip("\n"))
        return _joined([body, "\n" * max(0, 2 - trailing), text], check)
    start = related[0]
    before = body[:start].rstrip("\n")
    return _joined([before, "\n\n" if before else "", text, "\n", body[start:]], check)
