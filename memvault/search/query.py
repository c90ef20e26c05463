"""Turn what a person or an assistant types into safe FTS5 queries, and text into FTS5 input.

Every term reaches FTS5 as a quoted string, so no input can be a syntax error. Text in Chinese,
Japanese and Korean is written without spaces, which `unicode61` would index as one long token;
we index each CJK character as its own token and search a CJK run as a phrase of characters, so
any run of two or more characters finds the notes that contain it, with no dictionary to ship.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

MAX_TERMS = 64
# How FTS5 cuts text into tokens, for the index and for relevance's scratch table alike.
TOKENIZE = "porter unicode61 remove_diacritics 2"

_CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0002fa1f"
)
# What fts_text puts around each CJK character: a separator to unicode61 that no one types, so
# display_text can take exactly these out again and keep the spaces the writer put.
_GAP = "\u2009"
_TOKEN = re.compile(r'(-?)"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+")
# A word with a possessive or contracted ending: `Melanie's`, `what's`, `we'll`, `don't`.
_APOSTROPHES = "'\u2019"
_CLITIC = re.compile(
    rf"([\w{_APOSTROPHES}-]+?)(n[{_APOSTROPHES}]t|[{_APOSTROPHES}](?:s|re|ve|ll|d|m))", re.I
)

# Words that carry no topic in a question ("what did we decide about ...", "what kind of ...
# might she like"): measured on `make bench-quality`, a longer general list (scikit-learn's 318
# words) lost recall, since it drops words such as "system", "fire" or "front".
STOPWORDS = frozenset(
    """a about above after again all am an and any are as at be been before being below between
    both but by can could did do does doing done down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my
    no nor not now of off on once only or other our ours out over own same she should so some
    such than that the their theirs them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    yours tell know remember recall please anything something thing things kind kinds type types
    sort way ways might likely also ever both get got go going went make made like say said
    think""".split()
)


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    """A run of CJK characters, compiled at first use: 6 ms of every command's start."""
    return re.compile(f"[{_CJK_CLASS}]+")


def fts_text(text: str) -> str:
    """Text as it goes into the FTS table: each CJK character stands alone as a token."""
    if text.isascii() or not _cjk_run().search(text):
        return text
    return _cjk_run().sub(lambda run: _GAP + _GAP.join(run.group(0)) + _GAP, text)


def as_written(text: str) -> bool:
    """Whether FTS text is the text as written: `fts_text` put no gaps in it (no CJK), so an
    offset into the one is an offset into the other."""
    return _GAP not in text


def display_text(text: str) -> str:
    """FTS text back to how a person wrote it (without the gaps `fts_text` put around CJK)."""
    return text.replace(_GAP, "").strip()


@dataclass
class Term:
    """One quoted FTS5 string: a word, a phrase, or a prefix; a `pair` only ranks (_pairable)."""

    words: list[str]
    prefix: bool = False
    stopword: bool = False
    pair: bool = False

    def fts(self) -> str:
        phrase = " ".join(fts_text(w) for w in self.words)
        return f'"{" ".join(phrase.split())}"' + ("*" if self.prefix else "")


@dataclass
class Query:
    """A parsed query: groups of alternatives (all groups wanted) and excluded terms. Two
    words typed side by side also stand together as a phrase among the first word's
    alternatives (see `_pairable`), in the expressions that rank (`ranked`) only: it never
    changes which notes match, so the expressions that only match or count leave it out."""

    groups: list[list[Term]] = field(default_factory=list)
    excluded: list[Term] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.groups

    def strict(self, ranked: bool = False) -> str:
        """Every group must match: the notes that answer the whole question."""
        return self._without(f"({' AND '.join(self.each_group(ranked))})")

    def each_group(self, ranked: bool = False) -> list[str]:
        """Each group alone (its alternatives OR'd): what a hit holds of the question."""
        return [
            "(" + " OR ".join(t.fts() for t in self._terms(g, ranked)) + ")" for g in self.groups
        ]

    def loose(self, ranked: bool = False) -> str:
        """Any term may match: so a missing word never means no results."""
        every = [t.fts() for g in self.groups for t in self._terms(g, ranked)]
        return self._without("(" + " OR ".join(every) + ")")

    @staticmethod
    def _terms(group: list[Term], ranked: bool) -> list[Term]:
        """A group's alternatives, with its pair only in an expression that ranks."""
        return [t for t in group if ranked or not t.pair]

    def _without(self, expression: str) -> str:
        return expression + "".join(f" NOT {t.fts()}" for t in self.excluded)


def parse_query(text: str) -> Query:
    """Read `"exact phrase"`, `prefix*`, `-excluded`, `OR`; everything else is a plain word."""
    query = Query()
    pending_or = False
    negate_next = False
    count = 0
    previous: Term | None = None  # the word typed just before, as _pairable gives it
    for match in _TOKEN.finditer(text or ""):
        if count >= MAX_TERMS:
            break
        if match.group(3) in ("OR", "|"):
            pending_or = bool(query.groups)
            continue
        if match.group(3) in ("AND", "&&"):
            previous = None
            continue
        if match.group(3) == "NOT":
            negate_next = True
            continue
        term, negated = _term(match)
        if term is None:
            continue
        count += 1
        word = None
        if negated or negate_next:
            query.excluded.append(term)
        elif pending_or:
            query.groups[-1].append(term)
        else:
            parts = _bigrams(term)
            word = _pairable(match.group(3), parts)
            if previous is not None and word is not None:
                query.groups[-1].append(Term(previous.words + word.words, pair=True))
            query.groups += [[part] for part in parts]
        previous = word
        pending_or = negate_next = False
    return _drop_stopwords(query)


def _term(match: re.Match[str]) -> tuple[Term | None, bool]:
    if match.group(2) is not None:
        words = _WORD.findall(match.group(2))
        return (Term(words) if words else None), bool(match.group(1))
    raw = match.group(3)
    negated = raw.startswith("-") and len(raw) > 1
    prefix = raw.endswith("*")
    words = _words(raw)
    if not words:
        return None, False
    stop = len(words) == 1 and not prefix and words[0].lower() in STOPWORDS
    return Term(words, prefix=prefix, stopword=stop), negated


def _words(raw: str) -> list[str]:
    """A typed token's words. A possessive or a contraction is its word alone (`Melanie's` is
    `Melanie`, `what's` is `what`, a stop word), not the phrase `"Melanie s"`: notes name
    people without the ending, and the ending's letter is no word of the question. A negated
    auxiliary (`don't`, `isn't`) is a filler word like the `do` and `is` it comes from."""
    core = raw.strip(f'-*"{_APOSTROPHES}.,;:!?()[]{{}}')
    clitic = _CLITIC.fullmatch(core)
    if clitic is None:
        return _WORD.findall(raw)
    if clitic.group(2)[0] in "nN":
        return ["not"]
    return _WORD.findall(clitic.group(1))


def _pairable(raw: str | None, parts: list[Term]) -> Term | None:
    """A plain typed word as it is typed, to stand in a phrase with the word typed next to it:
    that phrase is an alternative of the first word's group, so it decides nothing about which
    notes match (it holds the first word) but adds its bm25, and a note saying "support group"
    ranks above one with "support" and "group" apart (the sequential dependence of Metzler and
    Croft). A possessive stays whole here (`Melanie's kids` is the phrase "Melanie s kids", as a
    note's text reads), though its own group is just `Melanie`. None for a quoted phrase, a
    prefix, a stop word or a CJK run cut into pairs."""
    if raw is None or len(parts) != 1 or parts[0].prefix or parts[0].stopword:
        return None
    return Term(_WORD.findall(raw))


def _bigrams(term: Term) -> list[Term]:
    """A run of three or more CJK characters as its overlapping pairs: CJK has no spaces, so
    the pairs play the part of words (all wanted first, then any), and 查看磁盘空间 still finds
    a note that says 磁盘空间 without 查看."""
    word = term.words[0]
    if len(term.words) > 1 or term.prefix or len(word) < 3 or _cjk_run().fullmatch(word) is None:
        return [term]
    return [Term([word[i : i + 2]]) for i in range(len(word) - 1)]


def _drop_stopwords(query: Query) -> Query:
    """Leave out filler words, unless the query is made of nothing else."""
    kept = [[t for t in group if not t.stopword] for group in query.groups]
    kept = [group for group in kept if group]
    if kept:
        query.groups = kept
    return query
