"""How alike two things are: a name someone typed and a memory's title (fuzzy recall), and two
memories' contents (duplicate detection). Scores run from 0 to 1."""

from __future__ import annotations

import re

from memvault.search.query import STOPWORDS

# rapidfuzz is imported where it is used: 12 ms of every command's start (a SessionStart
# hook's among them) that most commands never need.

# Fuzzy recall's scale (names only): exact 1.0; the same words in any order, or with other
# punctuation, 0.95; then, as words typed are found in the name (a typo costs a share of its word)
# and as the name's words are typed, lower. A name counts from TYPO; one CLEAR_LEAD ahead of the
# next is returned; candidates from SUGGEST_FLOOR are listed. A word of 3 characters or fewer
# must be typed exactly; longer ones may be 1 edit off, from 6 characters 2.
TYPO = 0.6
CLEAR_LEAD = 0.1
SUGGEST_FLOOR = 0.3
SAME_WORDS = 0.95
SHORTLIST = 50
# Near-identical content: this share of characters in common (rapidfuzz's normalised Indel
# similarity) after lower-casing and collapsing whitespace, on the first COMPARED characters.
# Texts shorter than SHORT characters must be equal: one changed word is a tenth of them.
NEAR_IDENTICAL = 0.9
COMPARED = 20_000
SHORT = 80
# Bytes a note's frontmatter may take beside its text, for `largest_alike`.
FRONTMATTER_ROOM = 1 << 16
# Related by words (similar_mem without vectors): a memory's most frequent words of at least
# four letters, stop words left out, at most this many, searched as one query (bm25 weighs
# the rare ones up).
KEY_WORDS = 12
TITLE_WEIGHT = 3
_WORD = re.compile(r"[^\W_]+")
_LONG_WORD = re.compile(r"\w{4,}")


def name_score(wanted: str, candidate: str) -> float:
    """How well `candidate` (a title, file name or alias) matches what someone typed: 1.0 when
    equal (ignoring case and spacing); else as `_word_score` finds the typed words in it, or in
    its head (`Payment retries` of `Payment retries: 3 with backoff`), whichever is better."""
    if _norm(wanted) == _norm(candidate):
        return 1.0
    typed = words(wanted)
    head = candidate.split(":", 1)[0] if ":" in candidate else ""
    return max(_word_score(typed, words(candidate)), _word_score(typed, words(head)))


def _word_score(typed: list[str], name: list[str]) -> float:
    """The share of the typed words found in the name, weighted by their length (a typo costs
    its share of the word), times a factor that grows with the share of the name's words typed.
    Punctuation is no word, so a title of punctuation only (`.`) matches nothing, and a short
    title is a small share of a long key."""
    if not typed or not name:
        return 0.0
    unused = list(name)
    found = covered = 0.0
    for word in sorted(typed, key=len, reverse=True):
        best, likeness = _closest_word(word, unused)
        if best is not None:
            unused.remove(best)
            found += len(word) * likeness
            covered += likeness
    precision = found / sum(len(word) for word in typed)
    return round(SAME_WORDS * precision * (0.55 + 0.45 * covered / len(name)), 2)


def closest(wanted: str, names: list[tuple[str, str]], limit: int) -> list[tuple[str, float]]:
    """The best `limit` keys among (key, name) pairs, each key scored by its best name, from
    SUGGEST_FLOOR up. A fast first pass (rapidfuzz) keeps the SHORTLIST names worth scoring."""
    typed = " ".join(words(wanted))
    if not typed:
        return []
    choices = [" ".join(words(name)) for _key, name in names]
    from rapidfuzz import fuzz, process

    shortlist = process.extract(typed, choices, scorer=fuzz.WRatio, limit=SHORTLIST, score_cutoff=1)
    best: dict[str, float] = {}
    for _choice, _score, position in shortlist:
        key, name = names[position]
        score = name_score(wanted, name)
        if score >= SUGGEST_FLOOR:
            best[key] = max(best.get(key, 0.0), score)
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]


def words(text: str) -> list[str]:
    """The lower-case words of a name (letters and digits; punctuation and `_` separate)."""
    return _WORD.findall(text.lower())


def _closest_word(word: str, among: list[str]) -> tuple[str | None, float]:
    """The word of `among` nearest `word` within its typo allowance, and how alike (0..1)."""
    from rapidfuzz.distance import Levenshtein

    allowed = 0 if len(word) <= 3 else 1 if len(word) < 6 else 2
    best: str | None = None
    likeness = 0.0
    for other in among:
        if abs(len(other) - len(word)) > allowed:
            continue
        edits = Levenshtein.distance(word, other, score_cutoff=allowed)
        if edits <= allowed and 1 - edits / max(len(word), len(other)) > likeness:
            best, likeness = other, 1 - edits / max(len(word), len(other))
    return best, likeness


def content_similarity(a: str, b: str) -> float:
    """How near two memories' texts are (1.0 = the same words in the same order); texts under
    SHORT characters score 1.0 when equal and 0.0 otherwise."""
    x, y = _norm(a)[:COMPARED], _norm(b)[:COMPARED]
    if min(len(x), len(y)) < SHORT:
        return 1.0 if x == y else 0.0
    from rapidfuzz import fuzz

    return fuzz.ratio(x, y) / 100


def largest_alike(text: str) -> int:
    """The largest file, in bytes, whose memory can be near-identical to `text`: its compared
    text may be at most about 1.2 times as long (NEAR_IDENTICAL), and a file holds up to 4 bytes
    a character, a frontmatter and whitespace the comparison collapses; room for all that twice
    over. A duplicate check reads no note bigger (a 50 MB note holding every word was read and
    compared on every write, about a second each)."""
    return 8 * max(len(text), COMPARED) + FRONTMATTER_ROOM


def longest_words(text: str, count: int) -> list[str]:
    """A text's `count` longest distinct words of four letters or more (lower-cased): the rare
    ones a full-text query for texts near-identical to it asks for."""
    return sorted(set(_LONG_WORD.findall(text.lower())), key=len, reverse=True)[:count]


def key_words(title: str, body: str, count: int = KEY_WORDS) -> list[str]:
    """A memory's words that say what it is about, for a full-text search of related ones:
    by how often they occur, a title word counting TITLE_WEIGHT times (ties: longer first)."""
    found: dict[str, int] = {}
    for word in words(" ".join([title] * TITLE_WEIGHT + [body])):
        if len(word) >= 4 and word not in STOPWORDS and not word.isdigit():
            found[word] = found.get(word, 0) + 1
    return sorted(found, key=lambda word: (-found[word], -len(word)))[:count]


def _norm(text: str) -> str:
    return " ".join(text.lower().split())
