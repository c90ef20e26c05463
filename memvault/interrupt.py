"""Ctrl-C while the program starts, before the command runs: no traceback, ever; and
Ctrl-C during a job done step by step (an import), which ends it between two steps.

The `memvault` program (`__main__.run`) imports click and the vault service first, about
0.3 s. From its first moment a Ctrl-C is only noted (`note_early`); once the command is known
(`settle`) a noted one stops it: `serve` and `ui`, for which Ctrl-C is the normal stop, with
exit 0; any other command as click's Abort, as later on. A command whose work is done and
closed may end the program at once (`end_now`), without the interpreter's teardown.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

# The commands a Ctrl-C stops normally (exit 0): they run until stopped.
RUN_UNTIL_STOPPED = frozenset({"serve", "ui"})

_pressed: list[int] = []
# Whether this is the `memvault` program (`note_early` ran), not the CLI run in-process.
_program: list[bool] = []


def note_early() -> None:
    """From now until `settle`, a Ctrl-C is noted instead of raised in the middle of an import."""
    _program.append(True)
    signal.signal(signal.SIGINT, _note)


def end_now() -> None:
    """End the program with exit 0 now, skipping the interpreter's teardown: freeing the ~350
    modules a command loads takes 40 ms, a seventh of a SessionStart hook's budget. For a
    command whose files are closed; nothing happens in-process (the CLI run by tests)."""
    if not _program:
        return
    for stream in (sys.stdout, sys.stderr):  # None when the descriptor was closed
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(0)


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


@contextmanager
def between_steps() -> Iterator[Callable[[], bool]]:
    """Within it, a Ctrl-C is noted rather than raised, and the callable it gives says
    whether one was: a job asks it between two steps, so none is cut in half. A second
    Ctrl-C stops at once (KeyboardInterrupt). Off the main thread, nothing is noted."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    pressed: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        """Note the first Ctrl-C; raise at the second."""
        if pressed:
            raise KeyboardInterrupt
        pressed.append(signum)

    before = signal.signal(signal.SIGINT, note)
    try:
        yield lambda: bool(pressed)
    finally:
        signal.signal(signal.SIGINT, before)
