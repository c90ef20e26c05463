"""How a link reads after the note it names is renamed: pointed at the new file name (the form
Obsidian resolves), keeping the words a reader saw, and a Related item showing the new title."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from memvault.core.markdown import Link, format_link, masked, safe_link_text

_WIKILINK = re.compile(r"\[\[[^\[\]\n]*\]\]")
_CELL_BAR = re.compile(r"(?<!\\)\|")
_DELIMITER_ROW = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")


@dataclass(frozen=True)
class Renamed:
    """A renamed note's old file, and its old and new titles."""

    old_path: str
    old_title: str
    new_title: str


def moved(body: str, link: Link, target: str, renamed: Renamed, item: bool) -> str:
    """`link` (found in `body`) pointed at `target`, the renamed note's new name.

    A wikilink that named the old file as it is written follows it as Obsidian's rename does;
    one that showed other words (a title, an alias) keeps them as display text
    (`[[new-name|Old words]]`), with `\\|` inside a table. An embed shows the note, not words.
    A Related `item` that showed the old title shows the new one.
    """
    if item and _shows_title(link, renamed.old_title):
        return retitled(link, target, renamed.new_title)
    names_file = _without_md(link.target) in (_without_md(renamed.old_path), _stem(renamed))
    if link.kind == "wiki" and link.text is None and not link.embed and not names_file:
        link = replace(link, text=link.display, escaped_pipe=in_table(body, link.start))
    return format_link(link, target)


def retitled(link: Link, target: str, title: str) -> str:
    """`link` pointed at `target` with `title` as its text (none when it is the target)."""
    text = None if link.kind == "wiki" and title == target else safe_link_text(title)
    return format_link(replace(link, text=text), target)


def shows_old_title(link: Link, renamed: Renamed) -> bool:
    """Whether a Related item shows the note's old title, which should become the new one."""
    return renamed.old_title != renamed.new_title and _shows_title(link, renamed.old_title)


def _shows_title(link: Link, title: str) -> bool:
    """Whether the reader sees `title` for `link` (ignoring case and a `|`'s replacements)."""
    return link.display.strip().lower() in (title.lower(), safe_link_text(title).lower())


def in_table(body: str, at: int) -> bool:
    """Whether the character at `at` lies in a row of a markdown table: its line has a `|`
    outside wikilinks, and so does each line up to a delimiter row such as `|---|:--|`."""
    lines = masked(body).split("\n")
    row = body.count("\n", 0, at)

    def piped(number: int) -> bool:
        """Whether line `number` has a cell bar outside its wikilinks."""
        return bool(_CELL_BAR.search(_WIKILINK.sub("", lines[number])))

    if not piped(row):
        return False
    first = last = row
    while first > 0 and piped(first - 1):
        first -= 1
    while last + 1 < len(lines) and piped(last + 1):
        last += 1
    return any(_DELIMITER_ROW.fullmatch(line) for line in lines[first : last + 1])


def _without_md(target: str) -> str:
    """A link target or path without its `.md`, as a wikilink writes it."""
    return target[:-3] if target.lower().endswith(".md") else target


def _stem(renamed: Renamed) -> str:
    """The renamed note's old file name without `.md`."""
    return _without_md(renamed.old_path.rsplit("/", 1)[-1])
