"""Properties that hold for every input: hypothesis generates the inputs, the docstrings say why.

Each test reads as given / when / then. Strategies are built from fragments that are special to
the format under test (YAML indicators, link syntax, FTS5 operators) mixed with arbitrary text,
so the interesting corners are reached often without losing generality.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from collections.abc import Iterator
from unittest import mock
from urllib.parse import quote

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memvault.config import Settings
from memvault.core.document import BOM, Document, parse_document, render_document
from memvault.core.drafts import Draft
from memvault.core.markdown import (
    find_links,
    find_tags,
    format_link,
    masked,
    related_links,
    rewrite_links,
)
from memvault.core.memory import OWNED_KEYS, Limits, clean_tags, clean_title
from memvault.core.records import Filter, SearchPage, TimeField
from memvault.errors import MemvaultError
from memvault.search.filters import MARK, note_facets
from memvault.search.query import parse_query
from memvault.service.vault import VaultService

LIMITS = Limits()
CREATED_AT = "2024-01-15T10:30:00Z"
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- strategies: frontmatter -------------------------------------------------------------------

# Text that YAML reads specially when it is not quoted: indicators, implicit types, documents.
YAML_SPECIAL = [
    ": ", ":", "#", " #", "'", '"', "- ", "-", "[", "]", "{", "}", ",", "&", "*", "!", "!!",
    "|", ">", "%", "@", "`", "? ", "?", "---", "...", "~", "null", "Null", "true", "yes", "no",
    "on", "off", "1", "-1", "1.5", "1e3", ".inf", ".nan", "0x1F", "0o17", "2024-01-15",
    "\\", "\\n", "\t", " ", "  ", "\u00a0", "é", "ß", "中文", "日本語", "한국어", "😀", "\u200b",
]  # fmt: skip


@st.composite
def timestamp_like(draw: st.DrawFn) -> str:
    """Strings shaped like the timestamps memvault writes, sometimes naming an impossible day."""
    year = draw(st.integers(1900, 2100))
    month = draw(st.integers(0, 19))
    day = draw(st.integers(0, 39))
    hour, minute, second = draw(st.tuples(*[st.integers(0, 59)] * 3))
    fraction = draw(st.sampled_from(["", ".5", ".123456"]))
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}Z"


yaml_ish_text = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.one_of(st.sampled_from(YAML_SPECIAL), st.text(max_size=4), timestamp_like()),
        max_size=8,
    ).map("".join),
)
ids = st.uuids().map(str)
bodies = st.one_of(
    st.text(),
    st.lists(
        st.one_of(
            st.text(max_size=10),
            st.sampled_from(["\n", "\r\n", "\r", "---", "---\n", "...\n", "\n---\n", "#", "\t"]),
        ),
        max_size=20,
    ).map("".join),
)


def title_or_skip(raw: str) -> str:
    """The title as memvault would store it; inputs it would refuse are not the case here."""
    try:
        return clean_title(raw, LIMITS)
    except MemvaultError:
        assume(False)
        raise  # unreachable: assume(False) raises


titles = yaml_ish_text.map(title_or_skip)


def tags_or_skip(raw: list[str]) -> list[str]:
    """The tags as memvault would store them; lists it would refuse are not the case here."""
    try:
        return clean_tags(raw, LIMITS)
    except MemvaultError:
        assume(False)
        raise  # unreachable: assume(False) raises


tag_lists = st.lists(
    st.one_of(yaml_ish_text, st.from_regex(r"[\w/-]{1,20}", fullmatch=True)).map(lambda s: s[:50]),
    max_size=6,
).map(tags_or_skip)

# Unknown keys a person (or a plugin) might keep in a note's frontmatter.
unknown_keys = st.one_of(
    st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,11}", fullmatch=True),
    st.text(
        st.characters(categories=["L", "N"], include_characters=" _-."), min_size=1, max_size=10
    ).map(str.strip),
).filter(lambda k: bool(k) and k not in OWNED_KEYS)
yaml_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    yaml_ish_text,
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
)
yaml_values = st.recursive(
    yaml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(unknown_keys, inner, max_size=3),
    ),
    max_leaves=6,
)


@st.composite
def entry_text(draw: st.DrawFn, key: str, value: object) -> str:
    """One top-level `key: value` block, written in one of the styles people and tools use."""
    style = draw(st.sampled_from(["block", "flow", "indented", "comment"]))
    if style == "flow" and isinstance(value, list | dict):
        key_text = yaml.safe_dump({key: None}, allow_unicode=True).rsplit(": null", 1)[0]
        flow = yaml.safe_dump(value, allow_unicode=True, default_flow_style=True, width=10**6)
        return f"{key_text}: {flow}"
    dumped = yaml.safe_dump(
        {key: value},
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=1_000_000,
        indent=4 if style == "indented" else 2,
    )
    if style == "comment" and dumped.count("\n") == 1:
        dumped = dumped[:-1] + "  # a person's note\n"
    return dumped


@st.composite
def existing_documents(draw: st.DrawFn) -> str:
    """A note with valid frontmatter: unknown keys, some owned keys, comments, blank lines."""
    keys = draw(st.lists(unknown_keys, min_size=1, max_size=5, unique=True))
    entries = [draw(entry_text(k, draw(yaml_values))) for k in keys]
    owned = draw(st.lists(st.sampled_from(["id", "title", "tags", "created_at"]), unique=True))
    old_values = {"id": "abc-123", "title": "Old title", "tags": ["old"], "created_at": CREATED_AT}
    for key in owned:
        at = draw(st.integers(0, len(entries)))
        entries.insert(at, draw(entry_text(key, old_values[key])))
    extras = st.sampled_from(["# a comment line\n", "\n", "#no space comment\n"])
    for _ in range(draw(st.integers(0, 3))):
        entries.insert(draw(st.integers(0, len(entries))), draw(extras))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    closer = draw(st.sampled_from(["---", "...", "---  "]))
    text = f"---\n{''.join(entries)}{closer}\n{draw(bodies)}"
    if newline != "\n":
        text = text.replace("\n", newline)
    return (BOM if draw(st.booleans()) else "") + text


updates_for_owned = st.fixed_dictionaries(
    {},
    optional={
        "id": ids,
        "title": titles,
        "tags": tag_lists,
        "created_at": st.just(CREATED_AT),
        "updated_at": st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2100, 1, 1)).map(
            lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
        ),
    },
)


# Lines that make frontmatter YAML broken in the ways hand edits do.
BROKEN_LINES = [
    "title: [broken", "title: 'unterminated", "key value without colon", "  bad: indent",
    "- a list item", "{", "}", "? complex", "&anchor", "*alias", "a: *missing", "a: !!int x",
    "a: !!float", "a: !!timestamp nope", "a: !!binary ???", "a: !custom tag", "a: 2024-02-30",
    "created_at: 2024-13-45T10:30:00Z", "a: b: c", "a:\tb", "%YAML 1.1", "---", "...", "",
    "title: ok", "tags: [a, b]", "\t", "#",
]  # fmt: skip


@st.composite
def frontmatter_like_text(draw: st.DrawFn) -> str:
    """Text that opens like frontmatter: valid, broken, unclosed, with BOM, CRLF or neither."""
    lines = draw(st.lists(st.one_of(st.sampled_from(BROKEN_LINES), st.text(max_size=8))))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    closer = draw(st.sampled_from(["---", "...", ""]))
    text = newline.join(["---", *lines, closer]) + draw(bodies)
    return (BOM if draw(st.booleans()) else "") + text


any_file_text = st.one_of(
    st.text(),
    frontmatter_like_text(),
    existing_documents(),
    st.text().map(lambda s: BOM + s),
)


# -- 1. frontmatter round trip -----------------------------------------------------------------


@FAST
@given(ident=ids, title=titles, tags=tag_lists, body=bodies)
@example(ident="0", title="a: b # c", tags=["-x", "[y]"], body="\r\n---\r\n")
@example(ident="0", title="2024-02-30T10:00:00Z", tags=[], body="")
def test_rendered_metadata_and_body_read_back_exactly(
    ident: str, title: str, tags: list[str], body: str
) -> None:
    """Given any title and tags memvault accepts and any body,
    when a new document is rendered with them and parsed again,
    then the metadata equals what was written and the body is the same byte for byte."""
    updates = {"id": ident, "title": title, "tags": tags, "created_at": CREATED_AT}

    parsed = parse_document(render_document(Document(body=body), updates))

    assert parsed.error is None
    assert parsed.metadata == updates
    assert list(parsed.metadata) == list(updates)
    assert parsed.body == body


@FAST
@given(ident=ids, title=titles, tags=tag_lists, extra=st.text())
@example(ident="0", title="café 中文 ok", tags=["naïve"], extra="smile 😀")
@example(ident="0", title="a\u00a0b", tags=["x\u2028y"], extra="nel\x85")
def test_either_yaml_emitter_writes_the_same_frontmatter(
    ident: str, title: str, tags: list[str], extra: str
) -> None:
    """Given any values (memvault hands printable BMP text to libyaml's faster emitter),
    when a new document is rendered with them,
    then the file is byte for byte what PyYAML's own emitter writes."""
    updates = {"id": ident, "title": title, "tags": tags, "note": extra}

    fast = render_document(Document(body=""), updates)
    with mock.patch("memvault.core.document._FastDumper", yaml.SafeDumper):
        reference = render_document(Document(body=""), updates)

    assert fast == reference


# -- 2. edits keep what they do not touch ------------------------------------------------------


@FAST
@given(text=existing_documents(), updates=updates_for_owned)
def test_updates_keep_unknown_keys_their_order_and_the_body(text: str, updates: dict) -> None:
    """Given a note with unknown keys, comments, CRLF or BOM and a body,
    when memvault renders it with new values for keys it owns,
    then every other key keeps its value and place, new keys come last, the body is unchanged."""
    doc = parse_document(text)
    assume(doc.writable)

    out = render_document(doc, updates)
    again = parse_document(out)

    assert again.error is None
    assert again.body == doc.body
    assert out.startswith(BOM) == text.startswith(BOM)
    assert {k: again.metadata[k] for k in doc.metadata if k not in updates} == {
        k: v for k, v in doc.metadata.items() if k not in updates
    }
    assert list(again.metadata) == list(doc.metadata) + [
        k for k in updates if k not in doc.metadata
    ]
    assert {k: again.metadata[k] for k in updates} == updates


@FAST
@given(text=any_file_text)
@example(text="---\ntitle: [broken\n---\nbody")
@example(text="\ufeff---\r\nnever closed\r\n")
@example(text="---\ndue: 2024-02-30\n---\nA date that does not exist.\n")
def test_rendering_without_updates_gives_back_the_exact_text(text: str) -> None:
    """Given any text at all (broken YAML, unclosed frontmatter, BOM, CRLF),
    when it is parsed and rendered with no updates,
    then the result is the original text exactly."""
    assert render_document(parse_document(text), {}) == text


# -- 3. and 4. links ---------------------------------------------------------------------------

# Prose that cannot start, end or escape a link, code span, fence or comment by itself.
prose = st.text(
    st.characters(
        categories=["L", "N", "Zs"],
        include_characters=" \n\r.,;:?'\"*_=+&%$@/",
        exclude_characters="\u2028\u2029",
    ),
    max_size=12,
)
NAME_CHARS = st.characters(categories=["L", "N"], include_characters=" .,'&_-:;?@$%^+=~")
names = st.text(NAME_CHARS, min_size=1, max_size=12).map(str.strip).filter(bool)
labels = st.text(NAME_CHARS, max_size=10)


@st.composite
def link_forms(draw: st.DrawFn) -> str:
    """One link in any of the forms Obsidian writes."""
    name, label, heading = draw(names), draw(labels), draw(names)
    return draw(
        st.sampled_from(
            [
                f"[[{name}]]",
                f"[[{name}|{label}]]",
                f"[[{name}#{heading}|{label}]]",
                f"[[{name}\\|{label}]]",
                f"![[{name}]]",
                f"[[{draw(names)}/{name}]]",
                f"[{label}]({quote(name, safe='/')}.md)",
                # ':' stays escaped: `[x](A:.md)` is a link to the URI scheme `A:`, not a file.
                f"[{label}]({name.replace(' ', '%20').replace(':', '%3A')}.md)",
            ]
        )
    )


@st.composite
def code_with_links(draw: st.DrawFn) -> str:
    """A code span, fenced block or HTML comment whose content looks like links."""
    parts = draw(st.lists(st.one_of(link_forms(), prose), max_size=3))
    inner = "".join([*parts, draw(link_forms())])
    one_line = " ".join(inner.split())
    kind = draw(st.sampled_from(["code", "code2", "fence", "tilde", "comment"]))
    if kind == "code":
        return f" `{one_line}` "
    if kind == "code2":
        return f" ``{one_line}`` "
    if kind == "fence":
        return f" \n```\n{inner}\n```\n "
    if kind == "tilde":
        return f" \n~~~md\n{inner}\n~~~\n "
    return f" <!-- {inner} --> "


@st.composite
def bodies_with_links(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A body of prose, links and code, with the span of every real link in it."""
    parts = draw(
        st.lists(st.one_of(prose, link_forms().map(lambda s: ("link", s)), code_with_links()))
    )
    body, spans = "", []
    for part in parts:
        if isinstance(part, tuple):
            spans.append((len(body), len(body) + len(part[1])))
            body += part[1]
        else:
            body += part
    return body, spans


@FAST
@given(case=bodies_with_links(), new_target=names)
def test_rewriting_links_changes_only_the_links(
    case: tuple[str, list[tuple[int, int]]], new_target: str
) -> None:
    """Given a body of prose, links of every form, and code or comments holding link-like text,
    when every link is pointed at a new target,
    then only the real links are found, and every byte outside their spans is unchanged."""
    body, spans = case

    links = find_links(body)
    rewritten = rewrite_links(body, lambda link: format_link(link, new_target))

    assert [(link.start, link.end) for link in links] == spans
    expected, last = [], 0
    for link in links:
        expected += [body[last : link.start], format_link(link, new_target)]
        last = link.end
    assert rewritten == "".join([*expected, body[last:]])


markdown_noise = st.one_of(
    st.text(),
    st.text(st.sampled_from("[]()!|#\\`<>-~*\n\r x./%:^\"'"), max_size=60),
    st.lists(
        st.one_of(
            link_forms(),
            code_with_links(),
            prose,
            st.sampled_from(["[", "]", "(", ")", "`", "```", "<!--", "-->", "\\", "!", "\n"]),
        ),
        max_size=12,
    ).map("".join),
)


@FAST
@given(body=markdown_noise)
def test_find_links_never_raises_and_spans_are_links(body: str) -> None:
    """Given any text,
    when links are looked for,
    then nothing raises, and each span starts with '[' or '!' and ends with ']' or ')'."""
    for link in find_links(body):
        span = body[link.start : link.end]
        assert span[:1] in ("[", "!")
        assert span[-1:] in ("]", ")")


# The scanners look for a literal first and check in code what comes before it, which is
# several times faster than a leading lookbehind; these patterns say what they must find.
REFERENCE_WIKILINK = re.compile(r"(?<!\\)(!?)\[\[([^\[\]\n]+?)\]\]")
REFERENCE_TAG = re.compile(r"(?:(?<=\s)|^)#([^\s#!\"$%&'()*+,.:;<=>?@\[\\\]^`{|}~]+)", re.M)
REFERENCE_RELATED = re.compile(r"^##[ \t]+Related[ \t]*$", re.M | re.I)
scanner_text = st.lists(
    st.one_of(
        st.sampled_from(["[[", "]]", "![[", "\\[[", "\\![[", "#", " #", "##", "## Related\n"]),
        st.sampled_from(["[[a]]", "\\[[a]]", "![[a]]", "\\![[a]]", "[[a\\|b]]", "[[#h]]"]),
        st.sampled_from(["[", "]", "!", "\\", "|", "a", "b/c", " ", "\n", "\t", "\u3000", "`"]),
        st.text(max_size=3),
    ),
    max_size=40,
).map("".join)


def _blank_target(inside: str) -> bool:
    """Whether a wikilink's inside names no target (such a link is not reported)."""
    head, pipe, _ = inside.partition("|")
    if pipe and head.endswith("\\"):
        head = head[:-1]
    return not head.partition("#")[0].strip()


@FAST
@given(body=scanner_text)
@example(body="[[`[[`]]")  # a target that is all code is no link (was reported with target `[[`)
def test_link_tag_and_related_scanners_find_what_the_lookbehind_patterns_find(body: str) -> None:
    """Given text dense in brackets, bangs, backslashes, hashes and headings,
    when wikilinks, tags and the Related section are looked for,
    then they are what the reference patterns (with lookbehinds) find."""
    text = masked(body)
    matches = list(REFERENCE_WIKILINK.finditer(text))
    wiki = [
        (m.start(), m.end(), bool(m.group(1))) for m in matches if not _blank_target(m.group(2))
    ]
    found = [(link.start, link.end, link.embed) for link in find_links(body) if link.kind == "wiki"]
    assert found == wiki

    unlinked = REFERENCE_WIKILINK.sub(lambda m: " " * len(m.group(0)), text)
    tags = [m.group(1).rstrip("/") for m in REFERENCE_TAG.finditer(unlinked)]
    expected = {t.lower(): t for t in reversed(tags) if t and not t.replace("/", "").isdigit()}
    assert sorted(find_tags(body)) == sorted(expected.values())

    heading = REFERENCE_RELATED.search(text)
    in_related = related_links(body)
    assert heading is not None or not in_related
    assert all(link.start > heading.start() for link in in_related if heading is not None)


# -- 5. and 6. search --------------------------------------------------------------------------

FTS_SPECIAL = [
    '"', '""', "*", ":", "^", "NEAR(", "NEAR", "AND", "OR", "NOT", "&&", "|", "-", "+", "(", ")",
    "{", "}", "title:", "-title", "'", "\\", ",", ".", "_", " ", "  ", "\t", "\n", "é", "ß", "İ",
    "中文", "記憶", "한국어", "カタカナ", "\u0301", "²", "½", "😀", "\x00", "\u200b", "café",
]  # fmt: skip
queries = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FTS_SPECIAL), st.text(max_size=5)), max_size=20).map(
        "".join
    ),
    st.text(min_size=1, max_size=30).map(lambda s: (s * (10_000 // len(s) + 1))[:10_000]),
)
LONG_QUERY = ('NEAR( "x AND -y* OR ^title: 中文 (' * 400)[:10_000]


@pytest.fixture(scope="module")
def search_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultService]:
    folder = tmp_path_factory.mktemp("property-vault")
    service = VaultService.open(Settings(vault=folder))
    service.create(Draft("Deploy checklist", "Run the tests, then deploy on Friday.", ["ops"]))
    service.create(Draft("项目记忆", "我们决定使用 SQLite 全文搜索。", ["中文"], category="notes"))
    service.create(Draft("Café résumé", "Crème brûlée at the café near the naïve coöperative.", []))
    yield service
    service.close()


@SLOW
@given(text=queries)
@example(text=LONG_QUERY)
@example(text='"unterminated NEAR(a b) OR -(x) ^y title:z *')
def test_search_never_raises(search_vault: VaultService, text: str) -> None:
    """Given a vault with English, Chinese and accented notes and any query text,
    when it is searched,
    then a page comes back whose total counts at least the results it holds."""
    page = search_vault.search(text)

    assert isinstance(page, SearchPage)
    assert page.total >= len(page.results)


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')"
    )
    db.executemany(
        "INSERT INTO t (body) VALUES (?)",
        [("deploy on friday",), ("我 们 决 定",), ("crème brûlée café",)],
    )
    yield db
    db.close()


@FAST
@given(text=queries)
@example(text=LONG_QUERY)
def test_parsed_queries_are_valid_fts5(fts: sqlite3.Connection, text: str) -> None:
    """Given any query text,
    when it is parsed into FTS5 expressions (strict, loose, and loose-but-not-strict),
    then SQLite FTS5 accepts every one of them."""
    query = parse_query(text)
    if query.empty:  # search() returns no results without asking FTS5
        return
    strict, loose = query.strict(), query.loose()
    for expression in (strict, loose, f"{loose} NOT {strict}"):
        fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchall()


# -- 7. filters: a filtered search covers what the filtered listing covers ---------------------

FOLDERS = ["", "work", "Work", "work/alpha", "work/Alpha/deep", "workshop", "archive",
           "archive/work", "Archive", "ärger/Ä", "a b"]  # fmt: skip
TAGS = ["ops", "OPS", "ops/db", "ops/db/pg", "opsx", "Ü/x", "/lead", "a b"]
SCOPES = [None, "acme", "ACME", "beta"]


@pytest.fixture(scope="module")
def filter_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultService]:
    """Notes in every folder with every tag and scope (written as files, so names keep their
    case), one with an inline tag, one expired but not archived yet."""
    folder = tmp_path_factory.mktemp("filter-vault")
    combinations = [(f, t, s) for f in FOLDERS for t in TAGS for s in SCOPES]
    for i, (where, tag, scope) in enumerate(combinations[::3]):
        path = folder / where / f"note-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"id": f"n{i}", "title": f"Note {i}", "tags": [tag]} | (
            {"scope": scope} if scope else {}
        )
        path.write_text(f"---\n{yaml.safe_dump(meta)}---\nshared word #inline/{i % 2}\n")
    service = VaultService.open(Settings(vault=folder))
    late = folder / "work" / "expired.md"
    late.write_text("---\nid: late\ntitle: Late\nexpires_at: 2001-01-01\n---\nshared word\n")
    service.upkeep.sync()
    yield service
    service.close()


CATEGORIES = [*FOLDERS[1:], "WORK", "work/", "archive/", "A_B", "Work Alpha"]


@SLOW
@given(
    category=st.one_of(
        st.sampled_from([None, *CATEGORIES]),
        st.lists(st.sampled_from(CATEGORIES), max_size=3).map(tuple),
    ),
    tags=st.lists(st.sampled_from([*TAGS, "#ops", "ops/", "inline", "INLINE/1"]), max_size=2),
    scope=st.one_of(
        st.sampled_from([*SCOPES, "Acme"]),
        st.lists(st.sampled_from(["acme", "Beta", "gamma"]), max_size=2).map(tuple),
    ),
    only_scope=st.booleans(),
    archived=st.sampled_from([False, True, None]),
    since=st.sampled_from([None, "7d", "2030-01-01"]),
    time_field=st.sampled_from(["updated", "created"]),
)
def test_filtered_search_covers_what_the_filtered_listing_covers(
    filter_vault: VaultService,
    category: str | tuple[str, ...] | None,
    tags: list[str],
    scope: str | tuple[str, ...] | None,
    only_scope: bool,
    archived: bool | None,
    since: str | None,
    time_field: TimeField,
) -> None:
    """Given notes in folders, tags and scopes that differ in case, depth and archive state,
    when every note matches the query and a filter is applied (categories and scopes one or
    several, in any spelling, and a time window),
    then search finds (and counts) exactly the notes the listing with that filter gives."""
    where = Filter(category, tuple(tags), scope, only_scope, archived, since, None, time_field)
    listed, total = filter_vault.list_memories(where, limit=10_000)
    page = filter_vault.search("shared word", limit=10_000, where=where)
    assert sorted(hit.path for hit in page.results) == sorted(row.path for row in listed)
    assert page.total == total


# (folder, tag, scope) of each note in facet_vault: every folder once.
FILED = list(zip(FOLDERS, TAGS * 2, SCOPES * 3, strict=False))


@pytest.fixture(scope="module")
def facet_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultService]:
    """Notes in many folders, tags and scopes, whose own text is letters only."""
    folder = tmp_path_factory.mktemp("facet-vault")
    for i, (where, tag, scope) in enumerate(FILED):
        path = folder / where / f"plain-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"title": "Plain note", "tags": [tag]} | ({"scope": scope} if scope else {})
        path.write_text(f"---\n{yaml.safe_dump(meta)}---\nnothing else here\n")
    service = VaultService.open(Settings(vault=folder))
    yield service
    service.close()


FACET_TOKENS = sorted(
    {
        token
        for where, tag, scope in FILED
        for token in note_facets(where.lower(), [tag], scope).split()
    }
)


@st.composite
def typed_facet_token(draw: st.DrawFn) -> str:
    """A facet token as a person might type it: whole, quoted, as a prefix, without its mark,
    upper-cased, or behind the letter that marked tokens before MARK did."""
    token = draw(st.sampled_from(FACET_TOKENS))
    digits = token.removeprefix(MARK)
    form = draw(st.sampled_from([token, MARK + digits[:3], "f" + digits, digits, f'"{token}"']))
    cut = draw(st.integers(1, len(form)))
    typed = form[:cut] + draw(st.sampled_from(["", "*"]))
    return typed.upper() if draw(st.booleans()) else typed


@FAST
@given(query=st.lists(typed_facet_token(), min_size=1, max_size=3).map(" ".join))
def test_no_query_finds_a_note_through_its_facets(facet_vault: VaultService, query: str) -> None:
    """Given notes whose own text is letters only, filed under many folders, tags and scopes,
    when a query is made of their facet tokens in any form a person could type,
    then it finds nothing: the query's words never reach the facets column."""
    assert facet_vault.search(query, where=Filter(archived=None)).total == 0
