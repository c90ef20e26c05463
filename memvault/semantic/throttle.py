"""How a server's background embedding shares the machine with its requests: its model runs on
a share of the cores, and a long pass (a first embedding, a big import) starts each batch only
once the server has answered no request for QUIET seconds.

Under a load that never stops, a batch still starts LONGEST_PAUSE after the pass began to wait:
a busy server's vault is embedded all the same, slowly (one batch of model.BATCH chunks, about
0.35 s of one core, every few seconds: about one generated note a second). A batch under way
is not stopped when a request comes: it runs in a worker process at a lower priority
(workers.NICE), on its share of the cores.
"""

from __future__ import annotations

import os
import threading
import time

from memvault.activity import REQUESTS, Activity
from memvault.errors import Invalid

CORES_ENV = "MEMVAULT_EMBED_CORES"
# Seconds without a request before the background embedding takes the next batch: a client's
# calls one after the other (milliseconds apart) keep it waiting.
QUIET = 0.5
# The longest a long pass waits for the server to be quiet before it takes a batch anyway.
LONGEST_PAUSE = 5.0
# How often a waiting pass looks again (a few microseconds each).
POLL = 0.05


def embed_cores() -> int:
    """The cores a server's background embedding runs its model on: MEMVAULT_EMBED_CORES (a
    whole number from 1, at most the machine's), else half the machine's, at least one."""
    machine = os.cpu_count() or 1
    given = os.environ.get(CORES_ENV, "").strip()
    if not given:
        return max(1, machine // 2)
    if not given.isdigit() or int(given) < 1:
        raise Invalid(
            f"{CORES_ENV}={given!r}: give a whole number of cores from 1 (this machine has"
            f" {machine}), or leave it unset for half of them"
        )
    return min(int(given), machine)


class Throttle:
    """When a server's background embedding may take its next batch, and whether it is waiting
    for the requests to stop."""

    def __init__(self, stop: threading.Event, requests: Activity = REQUESTS) -> None:
        self._stop = stop
        self._requests = requests
        self.paused = False

    def wait_turn(self) -> None:
        """Return when the next batch may start: at once when the server has been quiet for
        QUIET seconds; else once it has, or LONGEST_PAUSE from now, or at a stop. `paused`
        says so meanwhile."""
        until = time.monotonic() + LONGEST_PAUSE
        while self._requests.quiet_for() < QUIET and time.monotonic() < until:
            self.paused = True
            if self._stop.wait(POLL):
                break
        self.paused = False
