"""A person's editor and memvault append to one note at once; no acknowledged append is lost.

The editor (tests/race_editor.py) saves atomically and in place, re-reading the note before each
save and appending to what it just read; its save is acknowledged when the note shows its line
ACK_DELAY after the save. Two memvault servers (real stdio MCP sessions) and the CLI append at
the same time; their appends are acknowledged when the call succeeds. At the end, every
acknowledged line from every writer is in the note. `make bench` runs the same race for 20 s.
"""

from __future__ import annotations

import sys

import pytest

from .edit_race import run

pytestmark = pytest.mark.processes

SECONDS = 4.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the editor uses renameat2")
def test_no_acknowledged_append_is_lost_to_an_editor_or_another_writer() -> None:
    outcome = run(SECONDS)
    assert outcome.lost == [], outcome
    assert all(count > 0 for count in outcome.acknowledged.values()), outcome
    assert not [r for r in outcome.refused if "kept changing" not in r], outcome
