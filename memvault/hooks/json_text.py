"""Changes to a JSON file's text that leave every untouched member and item byte for byte as
it was: a person's settings file keeps its layout, its other keys and its other hooks. Values
are found by their spans in the text (json's own decoder reads each one); only the spans that
change are rewritten, in the file's own indentation."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")


@dataclass(frozen=True)
class Member:
    """An object's member: where its text starts (the key's quote) and its value's span."""

    start: int
    value_start: int
    value_end: int


def skip_space(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def members(text: str, at: int) -> dict[str, Member]:
    """The members of the object whose `{` is at `at`, by key."""
    found: dict[str, Member] = {}
    i = skip_space(text, at + 1)
    while text[i] != "}":
        key, after_key = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
        colon = skip_space(text, after_key)
        start = skip_space(text, colon + 1)
        _, end = _DECODER.raw_decode(text, start)
        found[key] = Member(i, start, end)
        i = skip_space(text, end)
        if text[i] == ",":
            i = skip_space(text, i + 1)
    return found


def items(text: str, at: int) -> list[tuple[int, int]]:
    """The spans of the items of the array whose `[` is at `at`."""
    spans = []
    i = skip_space(text, at + 1)
    while text[i] != "]":
        _, end = _DECODER.raw_decode(text, i)
        spans.append((i, end))
        i = skip_space(text, end)
        if text[i] == ",":
            i = skip_space(text, i + 1)
    return spans


def indent_unit(text: str) -> str:
    """The indentation the file uses (two spaces for a new file, as Claude Code writes)."""
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else "  "


def dumped(value: Any, unit: str, level: int) -> str:
    """`value` as JSON in the file's indentation, for a place `level` deep."""
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", "\n" + unit * level)


def add_member(text: str, at: int, key: str, value: Any, level: int) -> str:
    """The text with `key: value` added last to the object at `at` (`level` deep)."""
    unit = indent_unit(text)
    found = members(text, at)
    close = skip_space(text, max((m.value_end for m in found.values()), default=at + 1))
    entry = f"{unit * level}{json.dumps(key)}: {dumped(value, unit, level)}"
    if found:
        last_end = max(m.value_end for m in found.values())
        return f"{text[:last_end]},\n{entry}{text[last_end:]}"
    return f"{text[: at + 1]}\n{entry}\n{unit * (level - 1)}{text[close:]}"


def remove_member(text: str, at: int, key: str) -> str:
    """The text without the member `key` of the object at `at`, with its comma."""
    found = members(text, at)
    order = sorted(found.values(), key=lambda m: m.start)
    member = found[key]
    index = order.index(member)
    if index > 0:
        return text[: order[index - 1].value_end] + text[member.value_end :]
    if len(order) > 1:
        return text[: member.start] + text[order[1].start :]
    close = text.index("}", member.value_end)
    return text[: at + 1] + text[close:]


def replace_array(text: str, at: int, kept: list[str], level: int) -> str:
    """The text with the array at `at` (`level` deep) holding the item texts `kept`."""
    unit = indent_unit(text)
    spans = items(text, at)
    end = text.index("]", spans[-1][1] if spans else at + 1) + 1
    if not kept:
        body = "[]"
    else:
        inner = unit * (level + 1)
        body = "[\n" + ",\n".join(inner + item for item in kept) + f"\n{unit * level}]"
    return text[:at] + body + text[end:]
