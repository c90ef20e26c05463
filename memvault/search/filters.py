"""Filters as words in the full-text index, so a filtered search scores only the notes that pass.

Each note's folder, tags, scope and archived state become tokens in the FTS table's `facets`
column; a category, tag or scope filter is then one more term of the FTS5 query, and FTS5
computes bm25 for the passing notes only, where filtering after ranking scores every match.

The tokens follow the rules of the SQL filters that listings use (`search_sql.filter_sql`): case is
folded for ASCII letters only, as SQLite's lower() and NOCASE do, and a category or a tag also
covers everything under it (`work` covers `work/alpha`). A token is a hash in decimal digits
behind MARK, a private-use character: unicode61 keeps it inside a token, and the query parser
reads words as `\\w+`, which never holds it. So no term a person types can equal or prefix a
facet token, and the query's own words need no column filter (with one, FTS5 reads every
position list of every word to check its column: about a quarter of a filtered search). The
porter stemmer only strips letter suffixes, so it leaves the digits whole.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable
from functools import lru_cache

from memvault.core.memory import archived, category_spellings

COLUMN = "facets"
MARK = "\ue000"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def note_facets(
    folder: str,
    tags: Iterable[str],
    scope: str | None,
    properties: Iterable[tuple[str, str]] = (),
    superseded: bool = False,
) -> str:
    """The `facets` text of a note: one token per folder prefix, tag prefix, scope and
    property value (`properties.indexed_pairs`), and whether another memory replaced it."""
    tokens = list(_hierarchy("category", folder)) if folder else []
    for tag in tags:
        tokens += _hierarchy("tag", tag)
    tokens.append(_scope_token(scope))
    tokens += (_property(key, value) for key, value in properties)
    if archived(folder):
        tokens.append(_token("archived", ""))
    if superseded:
        tokens.append(_token("superseded", ""))
    return " ".join(dict.fromkeys(tokens))


def filter_terms(
    categories: Iterable[str],
    tags: Iterable[str],
    scopes: Iterable[str],
    only_scope: bool,
    archived_only: bool | None,
    properties: Iterable[tuple[str, str]] = (),
    superseded_too: bool = False,
) -> tuple[list[str], list[str]]:
    """(FTS5 terms a note must match, terms it must not match) for a filter's arguments.

    A note passes with any of the `categories` (each in every spelling `category_spellings`
    gives, compared lower-cased as search_sql.filter_sql does), every tag, any of the `scopes`
    (or none: global) unless `only_scope`, and every (property, value) pair; tags, scopes and
    property values are ASCII-folded. `archived_only`: True keeps archived notes only, False
    leaves them out, None keeps all. Superseded notes are left out unless `superseded_too`.
    """
    required = []
    folders = [name for category in categories for name in category_spellings(category)]
    if folders:
        required.append(_any([_token("category", folder) for folder in folders]))
    for tag in tags:
        required.append(_term(_token("tag", _fold(tag.strip().lstrip("#")))))
    wanted = [_token("scope", _fold(scope)) for scope in scopes]
    if wanted:
        required.append(_any(wanted if only_scope else [*wanted, _token("global", "")]))
    required += (_term(_property(key, value)) for key, value in properties)
    archived_term = _term(_token("archived", ""))
    if archived_only:
        required.append(archived_term)
    excluded = [archived_term] if archived_only is False else []
    if not superseded_too:
        excluded.append(_term(_token("superseded", "")))
    return required, excluded


def scopes_term(scopes: Iterable[str | None]) -> str:
    """The term the notes of exactly these scopes match (None among them: the global ones)."""
    return _any([_scope_token(scope) for scope in scopes])


def _scope_token(scope: str | None) -> str:
    return _token("scope", _fold(scope)) if scope else _token("global", "")


def same_scope(one: str | None, other: str | None) -> bool:
    """Whether two scopes are one, as a scope filter tells them (ASCII case ignored; None is
    global): the duplicate checks look within a scope by the same rule."""
    return _fold(one or "") == _fold(other or "")


def _fold(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def _prefixes(value: str) -> list[str]:
    """`a/b/c` -> `a`, `a/b`, `a/b/c`: every place a filter on the hierarchy may stop."""
    return [value[:i] for i, char in enumerate(value) if char == "/"] + [value]


@lru_cache(maxsize=4096)
def _hierarchy(kind: str, value: str) -> tuple[str, ...]:
    """The tokens of a folder or tag and every level above it. Cached: a vault has far fewer
    folders and tags than notes, so a rebuild hashes each about once."""
    return tuple(_token(kind, prefix) for prefix in _prefixes(_fold(value)))


def _property(key: str, value: str) -> str:
    """The token of one property value (key and value ASCII-folded, as NOCASE compares them)."""
    return _token("property", f"{_fold(key)}\0{_fold(value)}")


def _token(kind: str, value: str) -> str:
    digest = hashlib.blake2b(f"{kind}\0{value}".encode(), digest_size=8).digest()
    return f"{MARK}{int.from_bytes(digest, 'big')}"


def _term(token: str) -> str:
    return f'{COLUMN} : "{token}"'


def _any(tokens: list[str]) -> str:
    """The term a note matches with any of `tokens` (with one, the plain term)."""
    unique = list(dict.fromkeys(tokens))
    if len(unique) == 1:
        return _term(unique[0])
    alternatives = " OR ".join(f'"{token}"' for token in unique)
    return f"{COLUMN} : ({alternatives})"
