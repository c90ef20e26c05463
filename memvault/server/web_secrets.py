"""The page never shows a secret: every text the API answers has each secret the secrets guard
detects replaced by `[redacted: KIND]` (secret_scan.py), and a save that would write such a
marker over a secret the file holds is refused rather than losing the secret."""

from __future__ import annotations

from typing import Any

from ..errors import Invalid
from ..model import Memory
from ..secret_scan import described, find_secrets, redacted

MARKER = "[redacted: "
ELLIPSIS = "…"
# Names and addresses, never shown as content: masking them would break the page's links.
IDENTIFIERS = frozenset({"id", "path", "version", "source", "target"})
# A snippet's cut word shorter than this is too common to take for part of a secret.
FRAGMENT = 4
PUNCTUATION = "*…,.;:!?()[]\"'`"


def masked(value: Any) -> Any:
    """A JSON-ready answer with the secrets in each of its texts masked (identifiers kept)."""
    if isinstance(value, str):
        return redacted(value)
    if isinstance(value, dict):
        return {key: value[key] if _identifier(key) else masked(value[key]) for key in value}
    if isinstance(value, list | tuple):
        return [masked(item) for item in value]
    return value


def masked_snippet(snippet: str, body: str) -> str:
    """A search snippet of `body` with the secrets in it masked, including a secret the snippet
    cut at an end (`…`), which the rules alone cannot recognise: that end's word is masked when
    it is part of one of the body's secrets."""
    values = [body[s.start : s.end] for s in find_secrets(body)]
    words = redacted(snippet).split(" ")
    cuts = ((0, snippet.startswith(ELLIPSIS)), (len(words) - 1, snippet.endswith(ELLIPSIS)))
    for n, cut in cuts:
        if cut and _fragment(words[n], values):
            words[n] = words[n].replace(words[n].strip(ELLIPSIS), "[redacted: secret]")
    return " ".join(words)


def secrets_shown_masked(memory: Memory) -> str | None:
    """Which secrets the page shows masked in this memory ("JWT on line 3"), or None."""
    found = find_secrets(memory.body) + find_secrets(memory.title)
    return described(found) if found else None


def refuse_marker_over_secret(memory: Memory, title: str | None, content: str) -> None:
    """Invalid when a save keeps a `[redacted: ...]` marker the page showed in place of a
    secret the memory holds: saving it would overwrite the secret with the marker."""
    held = secrets_shown_masked(memory)
    if held and MARKER in f"{title or ''}\n{content}":
        raise Invalid(
            f"not saved: this memory holds a secret ({held}) the page shows as [redacted: ...] "
            f"and saving would replace it with that marker; edit {memory.path} in its file, "
            "or take the marker out to remove the secret"
        )


def _identifier(key: str) -> bool:
    """Whether an answer's key names a memory or a file rather than holding its text."""
    return key in IDENTIFIERS or key.endswith("_id")


def _fragment(word: str, values: list[str]) -> bool:
    """Whether a snippet's cut word is a piece of one of these secrets."""
    bare = word.strip(PUNCTUATION)
    return len(bare) >= FRAGMENT and any(bare in value for value in values)
