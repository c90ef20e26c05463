"""The page never shows a secret: every text the API answers (names, properties and error lines
included) has each secret the secrets guard detects replaced by `[redacted: KIND]`
(core/secrets.py). A memory's id that holds one is answered as a handle the API takes back in its
place; a search snippet is masked before its highlight marks go back, against the secrets of the
text around it; and a save that would write a marker over a secret the file holds is refused
rather than losing the secret."""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any

from memvault.core.memory import Memory
from memvault.core.secrets import Secret, described, find_secrets, found_under, redact, redacted
from memvault.errors import Invalid

MARKER = "[redacted: "
# How a search snippet marks the query's words (the page highlights what lies between).
MARK = "**"
ELLIPSIS = "…"
# A word of a snippet shorter than this is too common to take for a piece of a secret.
FRAGMENT = 4
# A snippet is checked against the secrets of this many characters of its memory either side
# of it: room for a private key's block before the line a snippet shows of it.
MARGIN = 8192
# The longest text of a snippet its memory is asked where it holds it.
ANCHOR = 200
# Keys whose text names a memory (or a graph's node) the page opens or changes by it.
NAMES = frozenset({"id", "edges"})
# Keys whose text is a link to a memory as its frontmatter writes it (`[[name]]`).
LINKS = frozenset({"superseded_by", "supersedes"})
HANDLE = "redacted-"
_LINK = re.compile(r"\[\[([^\[\]|#]+)([^\[\]]*)\]\]")
# The words of a snippet a piece of a secret may be: what lies between blanks, quotes,
# brackets and the marks of an assignment (`key=`, `key:`, `user@`).
_WORD = re.compile(r"[^\s=:\"'`,;()\[\]{}<>|@…*]+")
_SENTENCE = ".!?"
_TEXT = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Span:
    """A part of a snippet's text to mask, and the kind of secret it belongs to."""

    start: int
    end: int
    kind: str


class Mask:
    """Masks the secrets in the page's answers, and hands out a handle in place of each name
    holding one: a handle (`redacted-` and digits keyed by this process) carries no secret,
    and the API takes it back as the name, so the page opens and changes that memory as any
    other. Handles last as long as the process."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self._named: dict[str, str] = {}

    def answer(self, value: Any) -> Any:
        """A JSON-ready answer with the secrets in each of its texts masked: each value read
        with its key before it (a property as its frontmatter line reads), dict keys too."""
        return self._masked(value, "", "text")

    def resolved(self, value: str) -> str:
        """A name the page sent back: the one a handle stands for, else the value itself."""
        return self._named.get(value, value)

    def _masked(self, value: Any, key: str, role: str) -> Any:
        """`value` masked, read under `key` as a text, a name or a link (`role`)."""
        if isinstance(value, dict):
            return {
                redacted(str(k)): self._masked(v, str(k), _role(str(k))) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._masked(item, key, role) for item in value]
        if isinstance(value, str):
            return self._text(value, key, role)
        if isinstance(value, int | float) and not isinstance(value, bool):
            shown = self._text(str(value), key, role)
            return value if shown == str(value) else shown
        return value

    def _text(self, text: str, key: str, role: str) -> str:
        """A text with its secrets masked; a name holding one is a handle instead."""
        found = found_under(key, text) if key else find_secrets(text)
        if not found:
            return text
        if role == "name":
            return self._handle(text)
        if role == "link":
            link = _LINK.fullmatch(text.strip())
            return f"[[{self._handle(link.group(1).strip())}]]" if link else self._handle(text)
        return redact(text, found)

    def _handle(self, name: str) -> str:
        """The handle the page gets for a name holding a secret: the same for the same name."""
        digest = hmac.new(self._key, name.encode("utf-8"), "sha256").hexdigest()
        handle = HANDLE + digest[:24]
        self._named[handle] = name
        return handle


def masked_snippet(snippet: str, around: list[str]) -> str:
    """A search snippet with its secrets masked before its highlight marks go back (a mark must
    not split a token the rules would see whole, `**ghp**_...`). `around` holds the texts it
    was cut from, each with MARGIN characters either side: a secret whose context the cut
    left out is found there with it, and masked where the snippet shows it; so is every word
    of the snippet that is a piece of one of those secrets."""
    plain, marks = unmarked(snippet)
    spans = [Span(s.start, s.end, s.kind) for s in find_secrets(plain)]
    held: list[tuple[str, str]] = []
    for text in around:
        bare = text.replace(MARK, "")
        found = find_secrets(bare)
        held += [(bare[s.start : s.end], s.kind) for s in found]
        spans += _placed(plain, bare, found)
    return _marked(plain, marks, _merged(spans + _pieces(plain, held)))


def unmarked(snippet: str) -> tuple[str, list[int]]:
    """A snippet's text without its highlight marks, and where each mark stood in that text."""
    parts = snippet.split(MARK)
    places, at = [], 0
    for part in parts[:-1]:
        at += len(part)
        places.append(at)
    return "".join(parts), places


def core(plain: str) -> tuple[int, int]:
    """Where a snippet's own text lies in it: without the ellipses that say it was cut."""
    start = len(plain) - len(plain.lstrip(ELLIPSIS + " \n\t"))
    return start, max(start, len(plain.rstrip(ELLIPSIS + " \n\t")))


def anchors(snippet: str) -> list[str]:
    """The runs of a snippet between its marks and ellipses, longest first, each cut at a
    blank within ANCHOR characters: what the index is asked to find of it, in turn (a run
    that spans a link's shown text is not in the body as the snippet shows it)."""
    runs = [run.strip() for run in re.split(r"\*\*|…", snippet) if _TEXT.search(run)]
    return [
        run if len(run) <= ANCHOR else run[:ANCHOR].rsplit(maxsplit=1)[0]
        for run in sorted(runs, key=len, reverse=True)
    ]


def secrets_shown_masked(memory: Memory, body: str) -> str | None:
    """Which secrets the page shows masked in this memory's title and the `body` it shows of
    it ("JWT on line 3"), or None."""
    found = find_secrets(body) + find_secrets(memory.title)
    return described(found) if found else None


def refuse_marker_over_secret(memory: Memory, title: str | None, content: str) -> None:
    """Invalid when a save keeps a `[redacted: ...]` marker the page showed in place of a
    secret the memory holds: saving it would overwrite the secret with the marker."""
    held = secrets_shown_masked(memory, memory.body)
    if held and MARKER in f"{title or ''}\n{content}":
        raise Invalid(
            f"not saved: this memory holds a secret ({held}) the page shows as [redacted: ...] "
            f"and saving would replace it with that marker; edit {memory.path} in its file, "
            "or take the marker out to remove the secret"
        )


def _role(key: str) -> str:
    """How an answer's key holds its text: a memory's name, a link, or a text."""
    if key in NAMES or key.endswith("_id"):
        return "name"
    return "link" if key in LINKS else "text"


def _placed(plain: str, text: str, found: list[Secret]) -> list[Span]:
    """The parts of a snippet's text where it shows the secrets found in `text`, a text it was
    cut from (each place `text` holds the snippet's own text)."""
    start, end = core(plain)
    shown = plain[start:end]
    spans = []
    at = text.find(shown) if shown else -1
    while at >= 0:
        for secret in found:
            if secret.start < at + len(shown) and at < secret.end:
                first = max(secret.start, at) - at + start
                spans.append(
                    Span(first, min(secret.end, at + len(shown)) - at + start, secret.kind)
                )
        at = text.find(shown, at + 1)
    return spans


def _pieces(plain: str, held: list[tuple[str, str]]) -> list[Span]:
    """The words of a snippet's text that are pieces (FRAGMENT characters or more) of these
    secrets, and each whole secret it shows anywhere."""
    spans = []
    for word in _WORD.finditer(plain):
        bare = word.group(0).strip(_SENTENCE)
        if len(bare) < FRAGMENT:
            continue
        start = word.start() + word.group(0).index(bare)
        kind = next((kind for value, kind in held if bare in value), None)
        if kind is not None:
            spans.append(Span(start, start + len(bare), kind))
    for value, kind in held:
        at = plain.find(value) if len(value) >= FRAGMENT else -1
        while at >= 0:
            spans.append(Span(at, at + len(value), kind))
            at = plain.find(value, at + 1)
    return spans


def _merged(spans: list[Span]) -> list[Span]:
    """Spans in order, overlapping ones joined (the first one's kind names the whole)."""
    joined: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if joined and span.start < joined[-1].end:
            last = joined[-1]
            joined[-1] = Span(last.start, max(last.end, span.end), last.kind)
        else:
            joined.append(span)
    return joined


def _marked(plain: str, marks: list[int], spans: list[Span]) -> str:
    """The masked text with its highlight marks back, none inside a masked part: a mark that
    stood there moves to the part's edge on the side of its highlight, and a highlight left
    with nothing in it goes."""
    kept = []
    for n in range(0, len(marks), 2):
        opening = _outside(marks[n], spans, opening=True)
        if n + 1 == len(marks):
            kept.append(opening)
            continue
        closing = _outside(marks[n + 1], spans, opening=False)
        if opening < closing:
            kept += [opening, closing]
    out: list[str] = []
    at = 0
    for span in [*spans, Span(len(plain), len(plain), "")]:
        while kept and kept[0] <= span.start:
            place = kept.pop(0)
            out.append(plain[at:place] + MARK)
            at = place
        out.append(plain[at : span.start])
        if span.kind:
            out.append(f"{MARKER}{span.kind}]")
        at = span.end
    return "".join(out)


def _outside(place: int, spans: list[Span], opening: bool) -> int:
    """A mark's place moved out of the masked part it stands in: an opening mark to its end,
    a closing one to its start."""
    for span in spans:
        if opening and span.start <= place < span.end:
            return span.end
        if not opening and span.start < place <= span.end:
            return span.start
    return place
