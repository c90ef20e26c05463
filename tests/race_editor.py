"""A person's editor, scripted: it appends numbered lines to one note for a while, saving in
turn atomically (temp file, then an exchange with the note) and in place (truncate and write in
chunks through the file it read), and prints what it saved as JSON.

    python tests/race_editor.py NOTE SECONDS

It takes no lock: like any editor it knows nothing of memvault. It re-reads the note before
each save and appends to what it just read, and it never leaves a stale buffer over a newer
file: an atomic save swaps its file with the note (renameat2 RENAME_EXCHANGE) and, if what it
swapped out is not what it read, saves again with the lines of both; an in-place save writes
through the file it read, which memvault (renaming new files over the note) never writes into.

A save is acknowledged when a read of the note ACK_DELAY after it shows the line, as a person
sees the note after saving. A save that memvault replaced in the microseconds between its
last check and its rename (see store.py) is not acknowledged; the editor saves that line again.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from pathlib import Path

ACK_DELAY = 0.05
PAUSE = 0.02
CHUNK = 256
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def exchange(a: Path, b: Path) -> None:
    """Swap two files in one step (Linux renameat2)."""
    if _libc.renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def has_line(text: bytes, line: bytes) -> bool:
    """Whether `line` is one of the lines of `text`."""
    return line.rstrip(b"\n") in text.splitlines()


def save_atomically(note: Path, line: bytes) -> None:
    """Append `line` to what the note holds, by a temp file exchanged with the note. If what
    comes back from the exchange is not what was read, another program saved meanwhile, and
    what went in briefly lacked its lines: the editor saves again, with the lines of both."""
    temp = note.with_name(".editor-save.tmp")
    expected = note.read_bytes()
    content = expected + line
    while True:
        temp.write_bytes(content)
        exchange(temp, note)
        came_back = temp.read_bytes()
        temp.unlink()
        if came_back == expected:
            return
        expected, content = content, merged(came_back, content)


def merged(text: bytes, other: bytes) -> bytes:
    """`text` with the body lines of `other` it lacks added at the end."""
    have = set(text.splitlines())
    _head, _end, body = other.rpartition(b"\n---\n")
    return text + b"".join(
        line for line in body.splitlines(keepends=True) if line.rstrip(b"\n") not in have
    )


def save_in_place(note: Path, line: bytes) -> None:
    """Append `line` by rewriting the note in place, in chunks, through the file it read (read
    again if memvault replaced the note meanwhile)."""
    while True:
        with open(note, "r+b", buffering=0) as handle:
            data = handle.read()
            if os.stat(note).st_ino != os.fstat(handle.fileno()).st_ino:
                continue
            content = data + line
            handle.seek(0)
            handle.truncate()
            for start in range(0, len(content), CHUNK):
                handle.write(content[start : start + CHUNK])
            return


def edit(note: Path, seconds: float) -> dict[str, list[str]]:
    """Append numbered lines for `seconds`; the labels acknowledged and those saved again."""
    saved: dict[str, list[str]] = {"acknowledged": [], "saved_again": []}
    until = time.monotonic() + seconds
    number = 0
    while time.monotonic() < until:
        number += 1
        label = f"editor {number}"
        line = f"{label}\n".encode()
        save = save_atomically if number % 2 else save_in_place
        while True:
            save(note, line)
            time.sleep(ACK_DELAY)
            if has_line(note.read_bytes(), line):
                saved["acknowledged"].append(label)
                break
            saved["saved_again"].append(label)
        time.sleep(PAUSE)
    return saved


if __name__ == "__main__":
    print(json.dumps(edit(Path(sys.argv[1]), float(sys.argv[2]))))
