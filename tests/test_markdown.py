"""Link and tag parsing: every form Obsidian writes, and nothing inside code or comments."""

from __future__ import annotations

import pytest

from memvault.core.body_edits import BodyEdit, apply_edit
from memvault.core.markdown import (
    add_related,
    find_links,
    find_tags,
    format_link,
    related_links,
    remove_related,
    rewrite_links,
    section_span,
    to_plain,
    unlink_inline,
)


def targets(body: str) -> list[tuple[str, str, str | None]]:
    return [(link.target, link.subpath, link.text) for link in find_links(body)]


def test_every_link_form_is_found() -> None:
    body = (
        "[[Plain]] [[Aliased|shown]] [[Note#Heading|text]] [[Block#^abc]] ![[Embedded]]\n"
        "| a | [[Table\\|cell]] |\n"
        "[[folder/Deep note]] [md](Other%20Note.md) [rel](../up/There.md#Part)\n"
        "![img](pics/cat.png) ![[diagram.png]] [site](https://example.com) [[#Local heading]]\n"
    )
    assert targets(body) == [
        ("Plain", "", None),
        ("Aliased", "", "shown"),
        ("Note", "#Heading", "text"),
        ("Block", "#^abc", None),
        ("Embedded", "", None),
        ("Table", "", "cell"),
        ("folder/Deep note", "", None),
        ("Other Note.md", "", "md"),
        ("../up/There.md", "#Part", "rel"),
        ("pics/cat.png", "", "img"),
        ("diagram.png", "", None),
    ]
    links = find_links(body)
    assert links[5].escaped_pipe
    assert links[4].embed
    assert [link.is_attachment for link in links][-2:] == [True, True]
    assert not any(link.is_attachment for link in links[:-2])


def test_links_in_code_comments_and_escapes_are_not_links() -> None:
    body = (
        "```\n[[in fence]]\n```\n"
        "~~~python\n[[in tilde fence]]\n~~~\n"
        "`[[inline code]]` and ``[[double `tick`]]``\n"
        "<!-- [[in comment]] -->\n"
        "\\[\\[escaped\\]\\] \\[[also escaped]]\n"
        "[[Real]]\n"
    )
    assert targets(body) == [("Real", "", None)]


def test_unclosed_fence_hides_the_rest_like_commonmark() -> None:
    assert targets("[[Before]]\n```\n[[after]]\n") == [("Before", "", None)]


def test_inline_tags() -> None:
    body = "#project and #area/work, not # heading, not #123, `#code`, url.com/#frag #café\n"
    assert find_tags(body) == ["project", "area/work", "café"]


def test_rewrite_keeps_text_heading_and_form() -> None:
    body = "See [[Old|the old one]], [[Old#Part]], ![[Old]], [x](Old.md#p) and [[Other]].\n"
    out = rewrite_links(
        body, lambda link: format_link(link, "New") if link.target.startswith("Old") else None
    )
    assert out == "See [[New|the old one]], [[New#Part]], ![[New]], [x](New#p) and [[Other]].\n"


def test_related_section_add_and_remove() -> None:
    body = "Intro\n"
    body = add_related(body, "[[a|A]]")
    body = add_related(body, "[[b|B]]")
    assert body == "Intro\n\n## Related\n- [[a|A]]\n- [[b|B]]\n"
    assert [link.target for link in related_links(body)] == ["a", "b"]
    body = remove_related(body, lambda link: link.target == "a")
    assert body == "Intro\n\n## Related\n- [[b|B]]\n"
    assert remove_related(body, lambda link: True) == "Intro\n"


def test_related_items_go_before_a_following_section() -> None:
    body = "## Related\n- [[a]]\n\n## Notes\ntext\n"
    assert add_related(body, "[[b]]") == "## Related\n- [[a]]\n- [[b]]\n\n## Notes\ntext\n"


def test_unlink_inline_keeps_the_words() -> None:
    body = "Ask [[alice|Alice]] or [[alice]] about [[bob]].\n"
    assert unlink_inline(body, lambda link: link.target == "alice") == (
        "Ask Alice or alice about [[bob]].\n"
    )


def test_section_span_stops_at_the_next_heading_of_its_level() -> None:
    body = "# T\n## A\none\n### sub\ntwo\n## B\nthree\n"
    start, end = section_span(body, "a") or (0, 0)
    assert body[start:end] == "## A\none\n### sub\ntwo\n"


def test_plain_text_strips_syntax() -> None:
    body = "# Title\n\nSome **bold** and _em_ text with [[note|a link]] and `code`.\n- item\n"
    assert to_plain(body) == "Title\n\nSome bold and em text with a link and code.\nitem\n"


def test_body_edits_apply_in_place_and_keep_related_last() -> None:
    body = "# T\nintro\n\n## Steps\nold step\n\n## Related\n- [[x]]\n"
    edited = apply_edit(
        body,
        BodyEdit(
            find="intro",
            replace="preface",
            section=("steps", "new step"),
            append="tail",
            prepend="top",
        ),
    )
    assert edited == "top\n# T\npreface\n\n## Steps\nnew step\n\ntail\n\n## Related\n- [[x]]\n"


def test_find_must_be_unique_unless_counted() -> None:
    with pytest.raises(ValueError, match="occurs 2 times; pass expected_count=2"):
        apply_edit("a a", BodyEdit(find="a", replace="b"))
    assert apply_edit("a a", BodyEdit(find="a", replace="b", expected_count=2)) == "b b"
    with pytest.raises(ValueError, match="occurs 2 times, not 3"):
        apply_edit("a a", BodyEdit(find="a", replace="b", expected_count=3))
    with pytest.raises(ValueError, match="does not occur"):
        apply_edit("a", BodyEdit(find="z", replace="b"))


def test_replace_section_names_the_headings_it_has() -> None:
    with pytest.raises(ValueError, match=r"no heading 'Nope' in the memory \(headings: 'A'\)"):
        apply_edit("## A\ntext\n", BodyEdit(section=("Nope", "x")))


def test_new_content_keeps_the_related_list_unless_it_has_one() -> None:
    old = "old\n\n## Related\n- [[x]]\n"
    assert apply_edit(old, BodyEdit(content="new")) == "new\n\n## Related\n- [[x]]\n"
    assert apply_edit(old, BodyEdit(content="new\n## Related\n- [[y]]\n")) == (
        "new\n## Related\n- [[y]]\n"
    )


def test_a_comment_opener_inside_code_hides_nothing() -> None:
    assert targets("Use `<!--` here. See [[Real note]]") == [("Real note", "", None)]
    assert targets("<!-- a ` tick --> [[After]] `x`") == [("After", "", None)]
