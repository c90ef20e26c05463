"""Mixed load: several HTTP clients on one server at once, each call a search, a read, a write
or an append in the issue's proportions, for a fixed time; latencies by kind, errors, and how
much the server's resident memory grew. Also issue 38's mix (unfiltered searches of common
words, reads, appends) from one client and from four, beside the rate of calls that do nothing
(`get_current_date`) on the same server."""

from __future__ import annotations

import os
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import mcp_bench
from workload import Query

CLIENTS = 4
# Server processes sharing the port (serve --processes): one a core of this 2-core machine.
PROCESSES = 2
SECONDS = 60.0
Mix = Sequence[tuple[str, int]]
# (kind, share of the calls in percent): the mix.
MIX: Mix = (("search", 50), ("read", 20), ("write", 15), ("append", 15))
# Issue 38's mix: searches of three common words without a filter, reads and appends; and the
# calls that do nothing, whose rate is the yardstick of the transport itself.
COMMON_MIX: Mix = (("common", 60), ("read", 25), ("append", 15))
NULL_MIX: Mix = (("null", 100),)
# Seconds each run of issue 38's rows lasts (null calls, one client, four clients).
COMMON_SECONDS = 20.0
# Seconds of the same mix before the measured ones, from WARM_CLIENTS clients, so that every
# copy's threads, connections and caches are made first. Each client keeps its connection and
# the kernel spreads connections over the copies, so with four a copy may serve one in the
# warm-up and three after: after a 5 s warm-up of four clients the second copy held 75 MB, grew
# to 94 MB in the next 40 s and then stayed within a few MB (the first at 99-108 MB).
WARM_UP = 20.0
WARM_CLIENTS = 16


@dataclass
class MixedLoad:
    """What the clients saw: seconds each call took by kind, the errors, the wall time, the
    server's resident memory before and after (MB) and the CPU seconds it used."""

    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rss_before: float = 0.0
    rss_after: float = 0.0
    server_cpu: float = 0.0

    @property
    def calls(self) -> int:
        """Calls that succeeded."""
        return sum(len(t) for t in self.times.values())


def copies(pid: int) -> list[int]:
    """A server process and the copies it forked (the children with its command line)."""
    line = Path(f"/proc/{pid}/cmdline").read_bytes()
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid] + [int(c) for c in children if Path(f"/proc/{c}/cmdline").read_bytes() == line]


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time processes have used so far (Linux)."""
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mb(pids: list[int]) -> float:
    """Processes' resident memory now, in MB (Linux)."""
    total = 0.0
    for pid in pids:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        total += next(int(t.split()[1]) for t in lines if t.startswith("VmRSS:")) / 1024
    return total


class Calls:
    """The arguments of each kind of call, drawn at random (thread-safe); `common` holds the
    questions of common words."""

    def __init__(
        self,
        queries: list[Query],
        paths: list[str],
        make: Callable[[str], Any],
        common: Sequence[str] = (),
    ):
        self.queries = queries
        self.paths = paths
        self.make = make
        self.common = common
        self._lock = threading.Lock()

    def draw(self, rng: random.Random, kind: str, who: str) -> tuple[str, dict[str, Any]]:
        """A (tool, arguments) of `kind`."""
        if kind == "search":
            return "search_mem", rng.choice(self.queries).arguments()
        if kind == "common":
            return "search_mem", {"query": rng.choice(self.common)}
        if kind == "null":
            return "get_current_date", {}
        if kind == "read":
            return "read_mem", {"identifier": rng.choice(self.paths)}
        if kind == "append":
            line = f"- appended under mixed load by {who} at {time.time():.6f}"
            return "edit_mem", {"id": rng.choice(self.paths), "append": line}
        with self._lock:
            return "write_mem", self.make(who)


def client(
    port: int,
    calls: Calls,
    seed: int,
    until: list[float],
    found: MixedLoad,
    start: threading.Barrier,
    mix: Mix = MIX,
) -> None:
    """Call tools in the mix on one kept connection until the deadline (set once every client
    is ready)."""
    rng = random.Random(seed)
    kinds = [k for k, _ in mix]
    weights = [w for _, w in mix]
    who = f"mixed{seed}"
    connection = mcp_bench.KeptConnection(port)
    start.wait()
    try:
        while time.perf_counter() < until[0]:
            kind = rng.choices(kinds, weights)[0]
            name, arguments = calls.draw(rng, kind, who)
            started = time.perf_counter()
            try:
                connection.post_tool(name, arguments)
            except Exception as exc:
                found.errors.append(f"{name}: {exc}")
                continue
            found.times[kind].append(time.perf_counter() - started)
    finally:
        connection.close()


def run_clients(
    port: int,
    calls: Calls,
    seconds: float,
    found: MixedLoad,
    clients: int = CLIENTS,
    mix: Mix = MIX,
) -> None:
    """`clients` client threads calling at once for `seconds`, what they saw in `found`."""
    start = threading.Barrier(clients + 1)
    until = [0.0]
    threads = [
        threading.Thread(target=client, args=(port, calls, seed, until, found, start, mix))
        for seed in range(1, clients + 1)
    ]
    for thread in threads:
        thread.start()
    until[0] = time.perf_counter() + seconds
    started = time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    found.seconds = time.perf_counter() - started


def mixed_load(vault: Path, index: Path, calls: Calls, seconds: float, errlog: TextIO) -> MixedLoad:
    """CLIENTS clients on one `memvault serve --transport http --processes PROCESSES` for
    `seconds`, after WARM_CLIENTS for WARM_UP seconds (the server's caches and connections are
    then made: what grows after is what the load costs). RSS and CPU are the processes' sums."""
    return loads(vault, index, calls, [(MIX, CLIENTS, seconds)], errlog)[0]


def common_loads(vault: Path, index: Path, calls: Calls, errlog: TextIO) -> list[MixedLoad]:
    """Issue 38's rows on one server: null calls from one client, then its mix from one client
    and from four, COMMON_SECONDS each (after the same warm-up)."""
    runs = [(NULL_MIX, 1, COMMON_SECONDS), (COMMON_MIX, 1, COMMON_SECONDS)]
    return loads(vault, index, calls, [*runs, (COMMON_MIX, CLIENTS, COMMON_SECONDS)], errlog)


def embedding_load(
    vault: Path, index: Path, calls: Calls, errlog: TextIO, env: dict[str, str]
) -> MixedLoad:
    """Issue 38's mix from one client for COMMON_SECONDS (after the same warm-up) on a server
    started in `env` (the model on) on an index without vectors: during its first embedding."""
    return loads(vault, index, calls, [(COMMON_MIX, 1, COMMON_SECONDS)], errlog, env)[0]


def loads(
    vault: Path,
    index: Path,
    calls: Calls,
    runs: list[tuple[Mix, int, float]],
    errlog: TextIO,
    env: dict[str, str] | None = None,
) -> list[MixedLoad]:
    """Each (mix, clients, seconds) of `runs` in turn on one `memvault serve --transport http
    --processes PROCESSES` (in `env`, None: this process's environment), after WARM_CLIENTS
    clients of the last mix for WARM_UP seconds; what each saw, with the server's RSS and CPU
    (the processes' sums, its embedding worker left out) around it."""
    port = mcp_bench.free_port()
    process = mcp_bench.start_http(vault, index, port, errlog, PROCESSES, env)
    try:
        mcp_bench.wait_listening(port, process)
        run_clients(port, calls, WARM_UP, MixedLoad(), WARM_CLIENTS, runs[-1][0])
        pids = copies(process.pid)
        found = []
        for mix, clients, seconds in runs:
            seen = MixedLoad(rss_before=rss_mb(pids))
            cpu_before = cpu_seconds(pids)
            run_clients(port, calls, seconds, seen, clients, mix)
            seen.rss_after = rss_mb(pids)
            seen.server_cpu = cpu_seconds(pids) - cpu_before
            found.append(seen)
        return found
    finally:
        process.terminate()
        process.wait(timeout=60)
