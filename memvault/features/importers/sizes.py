"""An imported memory kept readable: within 64 KB, the first and the last of its parts
(messages, observations) kept and the memory saying what was left out between them."""

from __future__ import annotations

MAX_BYTES = 64 * 1024
# Room kept for the note that says what was left out.
_NOTE_ROOM = 400
_FENCE = "```"


def size(text: str) -> int:
    """`text`'s size in UTF-8 bytes, as the vault's limit counts it."""
    return len(text.encode("utf-8"))


def fitted(head: str, parts: list[str], noun: str, limit: int, sep: str = "\n\n") -> str:
    """`head`, then `parts` joined by `sep`, within `limit` bytes: if they do not fit, the
    first and the last parts that fit in half the room each, with a note between them
    saying how many `noun`s (and how many KB) are left out; a part too big for its half
    keeps its start and says how much of it is cut."""
    whole = head + sep.join(parts)
    if size(whole) <= limit:
        return whole
    half = max(0, (limit - size(head) - _NOTE_ROOM) // 2)
    first = _taken(parts, half, len(sep), noun)
    rest = parts[len(first) :]
    last = _taken(rest[::-1], half, len(sep), noun)[::-1]
    left = rest[: len(rest) - len(last)]
    if not left:
        return head + sep.join([*first, *last])
    note = (
        f"> [!note] {len(left):,} {noun}{'s' if len(left) != 1 else ''} "
        f"({sum(map(size, left)) / 1024:,.0f} KB) left out here: this memory keeps the first "
        f"{len(first):,} and the last {len(last):,} of {len(parts):,} within {limit // 1024} KB."
    )
    return head + sep.join([*first, note, *last])


def _taken(parts: list[str], budget: int, gap: int, noun: str) -> list[str]:
    """The parts from the start of `parts` that fit in `budget` bytes; at least one, cut to
    fit, when even the first does not."""
    taken: list[str] = []
    used = 0
    for part in parts:
        used += size(part) + gap
        if used > budget:
            if not taken:
                taken.append(_cut(part, budget, noun))
            break
        taken.append(part)
    return taken


def _cut(text: str, budget: int, noun: str) -> str:
    """The start of `text` in about `budget` bytes, cut at a line's end (unless it is one
    line), a code block cut open closed again, and a line saying how much of it is cut."""
    piece = text.encode("utf-8")[: max(budget - 120, 0)].decode("utf-8", "ignore")
    if "\n" in piece:
        piece = piece[: piece.rfind("\n")]
    cut_kb = (size(text) - size(piece)) / 1024
    return f"{closed(piece)}\n\n_({cut_kb:,.0f} KB of this {noun} cut here)_"


def closed(text: str) -> str:
    """`text` with a code block it leaves open closed, so that it cannot swallow what
    follows it in the memory (the next message, the Related list)."""
    fences = sum(1 for line in text.splitlines() if line.lstrip().startswith(_FENCE))
    return text + "\n" + _FENCE if fences % 2 else text
