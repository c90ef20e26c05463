"""Reading a transcript file as JSON objects, one a line, in constant memory whatever its
size: a line that is not a JSON object (a client killed mid-write, a stray byte) is counted
and skipped, never fatal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.errors import Invalid, NotFound
from memvault.transcripts import claude_code, codex, generic
from memvault.transcripts.events import Event

FORMATS: dict[str, Callable[[Iterator[dict[str, Any]]], Iterator[Event]]] = {
    "claude-code": claude_code.events,
    "codex": codex.events,
    "jsonl": generic.events,
}


@dataclass
class Lines:
    """The JSON objects of a file's lines, counting those that are not one."""

    path: Path
    skipped: int = 0
    first_bad: list[int] = field(default_factory=list)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            handle = self.path.open("rb")
        except FileNotFoundError as exc:
            raise NotFound(f"no transcript at {self.path}") from exc
        except OSError as exc:
            raise Invalid(f"cannot read the transcript {self.path}: {exc.strerror}") from exc
        with handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError:
                    value = None
                if isinstance(value, dict):
                    yield value
                else:
                    self.skipped += 1
                    if len(self.first_bad) < 5:
                        self.first_bad.append(number)


def read_events(path: Path, fmt: str) -> tuple[Iterator[Event], Lines]:
    """The events of the transcript at `path` written in `fmt` (see FORMATS), and its lines
    (which count the malformed ones as they are read)."""
    if fmt not in FORMATS:
        raise Invalid(f"unknown transcript format {fmt!r}; use one of {', '.join(FORMATS)}")
    lines = Lines(Path(path))
    return FORMATS[fmt](iter(lines)), lines
