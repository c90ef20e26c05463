"""How things are named to a caller: counts with their plurals, and the parameters and commands
that messages name, which each face writes in its own words (`allow_duplicate=true` for an MCP
client, `--allow-duplicate` on the command line). Pure and at the bottom: every layer uses it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The two faces a caller meets: the MCP tools and the command line.
Face = Literal["tool", "cli"]


@dataclass(frozen=True)
class Term:
    """A parameter or a command named in a message, as each face writes it."""

    tool: str
    cli: str

    def said(self, face: Face) -> str:
        return self.tool if face == "tool" else self.cli


# A message: text with the terms in it; each face joins it in its own words.
Part = str | Term
Message = str | tuple[Part, ...]


def param(name: str, value: str | None = None) -> Term:
    """A parameter as a tool takes it (`expected_count=3`) and as a CLI option
    (`--expected-count 3`; a flag for the value `true`)."""
    option = "--" + name.replace("_", "-")
    if value is None:
        return Term(name, option)
    return Term(f"{name}={value}", option if value == "true" else f"{option} {value}")


def command(tool: str, cli: str) -> Term:
    """A tool (`edit_mem`) and the command that does the same (`memvault edit`)."""
    return Term(tool, f"`memvault {cli}`")


def said(message: Message, face: Face) -> str:
    """A message in one face's words."""
    if isinstance(message, str):
        return message
    return "".join(part if isinstance(part, str) else part.said(face) for part in message)


class WordedValueError(ValueError):
    """A ValueError whose message names terms (for pure code below the error hierarchy); its
    text is in the tools' words, and the service passes `message` on in a MemvaultError."""

    def __init__(self, message: Message):
        super().__init__(said(message, "tool"))
        self.message = message


def parts(error: ValueError) -> tuple[Part, ...]:
    """A ValueError's message as parts, its terms kept (a WordedValueError's) to be said later."""
    message = error.message if isinstance(error, WordedValueError) else str(error)
    return (message,) if isinstance(message, str) else message


def count(n: int, one: str, many: str | None = None, none: str | None = None) -> str:
    """`n` things as a person says it: "1 memory", "3 memories", and "no memories" (or
    `none`) for zero."""
    many = many if many is not None else one + "s"
    if n == 0:
        return none if none is not None else f"no {many}"
    return f"{n:,} {one if n == 1 else many}"


def memories(n: int, none: str | None = None) -> str:
    """`n` memories: "1 memory", "3 memories", "no memories" (or `none`)."""
    return count(n, "memory", "memories", none)
