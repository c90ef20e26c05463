"""What the CLI does differently for a person at a terminal: markdown rendered lightly (bold
instead of `**`), colour only on a terminal and never with NO_COLOR, a question before a
delete, a word on what standard input is waited for. Piped output stays exactly as it was."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from contextlib import ExitStack
from typing import TextIO, TypeVar

import click
from click._termui_impl import ProgressBar

from memvault.core.records import Progress

T = TypeVar("T")

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*)$", re.M)
_STRONG = re.compile(r"(\*{2,}|_{2,})(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_CODE = re.compile(r"`([^`\n]+)`")
_WIKILINK = re.compile(r"\[\[([^\]|\n]+)(?:\|([^\]\n]+))?\]\]")
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def on_terminal(stream: TextIO) -> bool:
    """Whether a person reads (or types into) `stream`."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def colour_on(stream: TextIO) -> bool:
    """Colour only on a terminal that can show it, and never when NO_COLOR is set
    (https://no-color.org)."""
    return (
        on_terminal(stream)
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM", "") != "dumb"
    )


def light_markdown(text: str, colour: bool) -> str:
    """Markdown as a terminal shows it: headings and **strong** in bold, *emphasis* in italics,
    `code` and links in their own colours; without colour, the same text without the marks.
    The frontmatter of a file is dimmed."""

    def style(
        value: str,
        bold: bool | None = None,
        italic: bool | None = None,
        underline: bool | None = None,
        dim: bool | None = None,
        fg: str | None = None,
    ) -> str:
        """`value` in the given style, or as it is without colour."""
        if not colour:
            return value
        return click.style(value, fg, bold=bold, italic=italic, underline=underline, dim=dim)

    head = _FRONTMATTER.match(text)
    front = style(head.group(0).rstrip("\n"), dim=True) + "\n" if head else ""
    body = text[head.end() :] if head else text
    body = _HEADING.sub(
        lambda m: style(m.group(2), bold=True, underline=len(m.group(1)) == 1 or None), body
    )
    body = _STRONG.sub(lambda m: style(m.group(2), bold=True), body)
    body = _EMPHASIS.sub(lambda m: style(m.group(1), italic=True), body)
    body = _CODE.sub(lambda m: style(m.group(1), fg="cyan"), body)
    body = _WIKILINK.sub(lambda m: style(m.group(2) or m.group(1), fg="blue", underline=True), body)
    return front + body


def show(text: str, nl: bool = True, err: bool = False) -> None:
    """Print markdown-bearing text: rendered lightly for a terminal, as it is for a pipe."""
    stream = sys.stderr if err else sys.stdout
    if on_terminal(stream):
        text = light_markdown(text, colour_on(stream))
    click.echo(text, nl=nl, err=err)


def with_progress(label: str, quiet: bool, work: Callable[[Progress | None], T]) -> T:
    """Run `work` (which reports done of total), with a progress bar on stderr when that is a
    terminal, unless `quiet` (JSON output) or the work is done at its first report."""
    if quiet or not on_terminal(sys.stderr):
        return work(None)
    with ExitStack() as stack:
        bars: list[ProgressBar[int]] = []

        def progress(done: int, total: int) -> None:
            """Show the bar at the first report of unfinished work, then move it."""
            if not bars and done < total:
                bar = click.progressbar(length=total, label=label, file=sys.stderr)
                bars.append(stack.enter_context(bar))
            for bar in bars:
                bar.length = total
                bar.update(done - bar.pos)

        return work(progress)


def confirmed(question: str, yes: bool) -> bool:
    """True with `yes`, or when standard input is no terminal (a script has decided); else
    the person's answer (no by default)."""
    if yes or not on_terminal(sys.stdin):
        return True
    return click.confirm(question, default=False, err=True)


def stdin_text(what: str) -> str:
    """Standard input, after saying on a terminal what is waited for and how to end it."""
    if on_terminal(sys.stdin):
        click.echo(
            f"memvault: type {what}, then press Ctrl-D on a new line (or pass it as an argument)",
            err=True,
        )
    return sys.stdin.read()
