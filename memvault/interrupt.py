"""Ctrl-C while the program starts, before the command runs: no traceback, ever.

The `memvault` program (`__main__.run`) imports click and the vault service first, about
0.3 s. From its first moment a Ctrl-C is only noted (`note_early`); once the command is known
(`settle`) a noted one stops it: `serve` and `ui`, for which Ctrl-C is the normal stop, with
exit 0; any other command as click's Abort, as later on.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

# The commands a Ctrl-C stops normally (exit 0): they run until stopped.
RUN_UNTIL_STOPPED = frozenset({"serve", "ui"})

_pressed: list[int] = []


def note_early() -> None:
    """From now until `settle`, a Ctrl-C is noted instead of raised in the middle of an import."""
    signal.signal(signal.SIGINT, _note)


def _note(signum: int, frame: FrameType | None) -> None:
    """Note one Ctrl-C (`settle` acts on it)."""
    _pressed.append(signum)


def settle(command: str | None) -> None:
    """Once the command is known, end it if a Ctrl-C came while the program started: with
    exit 0 for a command that runs until stopped, else by KeyboardInterrupt (click's Abort).
    From here such a command ends at once on Ctrl-C (the server takes over once it serves);
    any other gets KeyboardInterrupt, as Python gives it. Nothing changes when `note_early`
    was not called (the CLI run in-process, as tests do)."""
    if signal.getsignal(signal.SIGINT) is not _note:
        return
    stops = command in RUN_UNTIL_STOPPED
    signal.signal(signal.SIGINT, quit_at_once if stops else signal.default_int_handler)
    if _pressed and stops:
        raise SystemExit(0)
    if _pressed:
        raise KeyboardInterrupt


def quit_at_once(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C before the server serves: exit 0 at once, without a traceback (unwinding through
    a worker pool would end with one; the next start repairs whatever a stop cut short)."""
    os._exit(0)
