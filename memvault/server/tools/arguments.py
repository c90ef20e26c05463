"""Arguments a tool does not take: the error that names them with the nearest real parameter,
so a misspelled or invented argument (`account` for `scope`) is never silently dropped."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

# Names an assistant reaches for, and the parameters that mean the same, in order of preference.
# Only parameters the tool has are suggested, so one table serves every tool.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "account": ("scope",),
    "project": ("scope",),
    "fleet": ("scope",),
    "namespace": ("scope",),
    "body": ("content", "append"),
    "text": ("content", "query", "append"),
    "note": ("content",),
    "name": ("title", "identifier", "id"),
    "tag": ("tags",),
    "label": ("tags",),
    "labels": ("tags",),
    "folder": ("category",),
    "type": ("category",),
    "kind": ("category",),
    "id": ("identifier",),
    "identifier": ("id",),
    "memory_id": ("id", "identifier"),
    "key": ("identifier", "id"),
    "slug": ("identifier", "id"),
    "path": ("identifier", "id"),
    "uuid": ("id", "identifier"),
    "q": ("query",),
    "search": ("query",),
    "k": ("limit",),
    "top_k": ("limit",),
    "max_results": ("limit",),
    "count": ("limit",),
    "skip": ("offset",),
    "page": ("offset",),
    "source": ("source_id",),
    "target": ("target_id",),
    "from": ("source_id",),
    "to": ("target_id",),
    "ttl": ("ttl_days",),
    "expires": ("expires_at",),
}


def unknown_arguments(tool: str, arguments: Mapping[str, Any], parameters: Iterable[str]) -> str:
    """'' when every argument is a parameter of `tool`; else one line naming each unknown
    argument, the parameter it most likely meant, and the parameters the tool takes."""
    known = list(parameters)
    unknown = [name for name in arguments if name not in known]
    if not unknown:
        return ""
    described = []
    for name in unknown:
        meant = _nearest(name, known, arguments)
        described.append(f"{name!r}" + (f" (did you mean {meant!r}?)" if meant else ""))
    noun = "parameter" if len(unknown) == 1 else "parameters"
    return (
        f"{tool} has no {noun} {', '.join(described)}; nothing was done. Its parameters are: "
        f"{', '.join(known) or 'none'}"
    )


def _nearest(name: str, parameters: list[str], given: Mapping[str, Any]) -> str | None:
    """The parameter `name` most likely stands for: one meaning the same, else one spelled
    alike (case, `-` and `_` aside), leaving out parameters the call already gives."""
    free = [p for p in parameters if p not in given]
    key = name.lower().replace("-", "_")
    for meant in SYNONYMS.get(key, ()):
        if meant in free:
            return meant
    squashed = {p.replace("_", ""): p for p in free}
    if key.replace("_", "") in squashed:
        return squashed[key.replace("_", "")]
    close = difflib.get_close_matches(key, free, n=1, cutoff=0.6)
    return close[0] if close else None
