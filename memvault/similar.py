"""How alike two things are: a name someone typed and a memory's title (fuzzy recall), and two
memories' contents (duplicate detection). Scores run from 0 to 1."""

from __future__ import annotations

from rapidfuzz import fuzz, process

# Fuzzy recall's scale: exact 1.0; the name inside the title (or the title inside the name) at
# least 0.85; typo-level edits 0.6 to 0.84; a match inside the content at most 0.5.
SUBSTRING = 0.85
TYPO = 0.6
CONTENT = 0.5
CLEAR_LEAD = 0.1
# Near-identical content: this share of characters in common (rapidfuzz's normalised Indel
# similarity) after lower-casing and collapsing whitespace, on the first COMPARED characters.
# Texts shorter than SHORT characters must be equal: one changed word is a tenth of them.
NEAR_IDENTICAL = 0.9
COMPARED = 20_000
SHORT = 80


def name_score(wanted: str, candidate: str) -> float:
    """How well `candidate` (a title, file name or alias) matches what someone typed."""
    a, b = _norm(wanted), _norm(candidate)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    if a in b or b in a:
        return round(SUBSTRING + 0.14 * min(len(a), len(b)) / max(len(a), len(b)), 2)
    ratio = fuzz.ratio(a, b) / 100
    if ratio >= 0.75:
        return round(TYPO + (ratio - 0.75) / 0.25 * 0.24, 2)
    return round(ratio * TYPO / 0.75, 2)


def closest(wanted: str, names: list[tuple[str, str]], limit: int) -> list[tuple[str, float]]:
    """The best `limit` keys among (key, name) pairs, each key scored by its best name."""
    choices = [_norm(name) for _key, name in names]
    shortlist = process.extract(_norm(wanted), choices, scorer=fuzz.WRatio, limit=limit * 4)
    best: dict[str, float] = {}
    for _choice, _score, position in shortlist:
        key, name = names[position]
        best[key] = max(best.get(key, 0.0), name_score(wanted, name))
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]


def content_similarity(a: str, b: str) -> float:
    """How near two memories' texts are (1.0 = the same words in the same order); texts under
    SHORT characters score 1.0 when equal and 0.0 otherwise."""
    x, y = _norm(a)[:COMPARED], _norm(b)[:COMPARED]
    if min(len(x), len(y)) < SHORT:
        return 1.0 if x == y else 0.0
    return fuzz.ratio(x, y) / 100


def _norm(text: str) -> str:
    return " ".join(text.lower().split())
