"""The file format: frontmatter and body survive every read and every write memvault makes."""

from __future__ import annotations

from memvault.core.document import parse_document, render_document


def test_unknown_keys_comments_and_order_survive_an_update() -> None:
    text = (
        "---\n"
        "id: 1\n"
        "status: draft  # mine\n"
        "title: Old\n"
        "aliases:\n"
        "  - Other name\n"
        "# a comment between keys\n"
        "tags:\n"
        "- a\n"
        "zeta: 3\n"
        "---\n"
        "Body\n"
    )
    out = render_document(parse_document(text), {"title": "New", "tags": ["b"]})
    assert out == text.replace("title: Old", "title: New").replace("tags:\n- a", "tags: [b]")


def test_no_updates_gives_back_the_exact_text_even_with_broken_yaml() -> None:
    for text in (
        "---\ntitle: [broken\n---\nbody",
        "\ufeff---\r\ntitle: x\r\n---\r\nbody\r\n",
        "no frontmatter at all\n",
        "---\nnever closed\n",
    ):
        assert render_document(parse_document(text), {}) == text


def test_crlf_and_bom_are_kept_when_frontmatter_changes() -> None:
    text = "\ufeff---\r\ntitle: x\r\n---\r\nline one\r\nline two\r\n"
    out = render_document(parse_document(text), {"title": "y"})
    assert out == "\ufeff---\r\ntitle: y\r\n---\r\nline one\r\nline two\r\n"


def test_broken_yaml_is_reported_not_raised() -> None:
    doc = parse_document("---\ntitle: [broken\n---\n# Heading\n")
    assert doc.error == "frontmatter line 2 is not valid YAML: a [ list ] that is never closed"
    assert not doc.writable
    assert doc.body == "# Heading\n"


def test_broken_yaml_is_said_in_plain_words_at_the_line_of_the_file() -> None:
    colon = "a ':' is not allowed here (a ': ' inside a value that is not in quotes?)"
    for text, line, words in [
        ("---\ntitle: x\nsummary: a: b\n---\n", 3, colon),
        ("\ufeff---\r\ntitle: x\r\nsummary: a: b\r\n---\r\n", 3, colon),
        ("---\ntitle: x\ntags: [a, b\nday: 1\n---\n", 3, "a [ list ] that is never closed"),
        (
            "---\ntitle: 'open\nday: 1\n---\n",
            2,
            "the frontmatter ends inside a value (a quote not closed?)",
        ),
        ("---\ntitle: x\n\tday: 1\n---\n", 3, "a tab where YAML wants spaces"),
        ("---\ntitle: x\nday\n---\n", 3, "a key with no ':' after it"),
    ]:
        error = parse_document(text).error
        assert error == f"frontmatter line {line} is not valid YAML: {words}", text
    control = parse_document('---\ntitle: x\nday: "a\x07"\n---\n').error
    assert control is not None and control.startswith(
        "frontmatter line 3 is not valid YAML: a character YAML does not allow (#x0007: "
    )


def test_frontmatter_that_is_not_a_mapping_is_a_problem() -> None:
    doc = parse_document("---\n- just\n- a list\n---\nbody\n")
    assert doc.error == "frontmatter is not a mapping of keys to values"


def test_timestamps_read_back_as_the_strings_memvault_writes() -> None:
    doc = parse_document("---\ncreated_at: 2024-01-15T10:30:00Z\nday: 2024-01-15\n---\n")
    assert doc.metadata == {"created_at": "2024-01-15T10:30:00Z", "day": "2024-01-15"}
    rendered = render_document(doc, {"updated_at": "2024-02-01T00:00:00Z"})
    assert "updated_at: 2024-02-01T00:00:00Z\n" in rendered


def test_values_yaml_cannot_build_are_problems_not_crashes() -> None:
    for text in ("---\ndue: 2024-02-30\n---\nx", "---\n0: !!int\n---\n", "---\na: !!float\n---"):
        doc = parse_document(text)
        assert doc.error is not None and not doc.writable
        assert render_document(doc, {}) == text


def test_text_is_written_as_people_type_it_not_escaped() -> None:
    """Emoji and other scripts stay literal in the frontmatter a person edits (libyaml's
    emitter would write "\\U0001F680"; the pure-Python one keeps them)."""
    out = render_document(
        parse_document("Body\n"), {"title": "Deploy 🚀 to 生产", "tags": ["🚀", "café"]}
    )
    assert "title: Deploy 🚀 to 生产\n" in out and "tags: [🚀, café]\n" in out
