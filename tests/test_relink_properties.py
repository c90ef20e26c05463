"""Properties of link rewriting after a rename (relink.py): hypothesis generates bodies of prose,
code and links of every form naming the renamed note; the docstrings say what must hold."""

from __future__ import annotations

import re
from urllib.parse import quote

from hypothesis import assume, given
from hypothesis import strategies as st

from memvault.core.markdown import Link, find_links, rewrite_links
from memvault.writes.renamed_links import Renamed, moved

from .test_properties import FAST, code_with_links, names, prose

OLD_STEM = "old-note"
RENAMED = Renamed(f"ops/{OLD_STEM}.md", "Old note title", "New note title")
CELL_BAR = re.compile(r"(?<!\\)\|")


@st.composite
def links_to_the_note(draw: st.DrawFn) -> str:
    """A link naming the renamed note by file name, path, title or alias, in any form."""
    name = draw(st.sampled_from([OLD_STEM, f"ops/{OLD_STEM}", "Old note title", "an alias"]))
    label, heading, block = (
        draw(names),
        draw(names),
        draw(st.from_regex(r"\^[a-z0-9]{1,6}", fullmatch=True)),
    )
    return draw(
        st.sampled_from(
            [
                f"[[{name}]]",
                f"[[{name}|{label}]]",
                f"[[{name}#{heading}]]",
                f"[[{name}#{block}]]",
                f"[[{name}#{heading}|{label}]]",
                f"![[{name}]]",
                f"![[{name}#{heading}]]",
                f"[[{name}.md]]",
                f"[{label}]({quote(name)}.md)",
            ]
        )
    )


@st.composite
def bodies(draw: st.DrawFn) -> str:
    """Prose, code spans, fences and comments holding link-like text, links, and table rows."""
    parts = draw(st.lists(st.one_of(prose, code_with_links(), links_to_the_note(), table())))
    return "".join(parts)


@st.composite
def table(draw: st.DrawFn) -> str:
    """A markdown table whose cells hold links to the note."""
    cells = draw(st.lists(links_to_the_note(), min_size=1, max_size=3))
    head = "| " + " | ".join("h" for _ in cells) + " |"
    return f"\n\n{head}\n|{'---|' * len(cells)}\n| " + " | ".join(cells) + " |\n\n"


def rename(body: str, target: str) -> str:
    return rewrite_links(body, lambda link: moved(body, link, target, RENAMED, False))


def shown(link: Link) -> str | None:
    """The words a reader sees for a link in prose (an embed shows the note instead)."""
    return None if link.embed else link.display


@FAST
@given(body=bodies(), target=names)
def test_a_rename_keeps_every_link_s_words_form_and_parts(body: str, target: str) -> None:
    """Given a body with links to a note in every form, in prose, tables and code,
    when the note is renamed and each link pointed at its new file name,
    then the same links are found in the same order, each with the same kind, embed, heading or
    block, and the same display text; a link that named the old file (`[[old-note]]`) shows the
    new name, as Obsidian's rename does; every byte outside the links is unchanged (code spans,
    fences and comments included)."""
    before = find_links(body)
    after_body = rename(body, target)
    after = find_links(after_body)

    assert len(after) == len(before)
    kept, last = [], 0
    for old, new in zip(before, after, strict=True):
        assert (new.kind, new.embed, new.subpath) == (old.kind, old.embed, old.subpath)
        if new.kind == "markdown":
            assert new.text == old.text
        else:
            assert new.target == target
            names_file = old.target.removesuffix(".md") in (OLD_STEM, f"ops/{OLD_STEM}")
            if old.text is not None or old.embed or not names_file:
                assert shown(new) == shown(old)
            else:
                assert new.text is None
        kept.append(body[last : old.start])
        last = old.end
    kept.append(body[last:])
    outside, last = [], 0
    for new in after:
        outside.append(after_body[last : new.start])
        last = new.end
    outside.append(after_body[last:])
    assert outside == kept


@FAST
@given(case=table(), target=names)
def test_a_rename_keeps_a_table_s_cells(case: str, target: str) -> None:
    """Given a table whose cells link to the note,
    when the note is renamed,
    then every row has as many cell bars as before: display text added in a cell is written
    after `\\|`."""
    after = rename(case, target)
    assert [len(CELL_BAR.findall(row)) for row in after.split("\n")] == [
        len(CELL_BAR.findall(row)) for row in case.split("\n")
    ]


@FAST
@given(title=names, new_title=names, target=names, upper=st.booleans())
def test_a_related_item_showing_the_old_title_shows_the_new_one(
    title: str, new_title: str, target: str, upper: bool
) -> None:
    """Given a Related item written as memvault writes it, `[[old-note|Title]]` (in any case),
    when the note is renamed with a new title,
    then the item points at the new name and shows the new title (nothing when they are one)."""
    renamed = Renamed(f"{OLD_STEM}.md", title, new_title)
    shown_title = title.upper() if upper else title
    assume(shown_title.lower() == title.lower())  # a dotless i upper-cases to I
    body = f"## Related\n- [[{OLD_STEM}|{shown_title}]]\n"
    link = find_links(body)[0]

    item = find_links(moved(body, link, target, renamed, True))[0]

    assert item.target == target
    assert item.text == (None if new_title == target else new_title)
