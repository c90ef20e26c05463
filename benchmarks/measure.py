"""Timing helpers: percentiles, child processes with their own peak memory, the machine."""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MEMVAULT = str(Path(sys.executable).with_name("memvault"))
CHILD = Path(__file__).with_name("child.py")


@dataclass
class ProcessRun:
    """One finished child process: wall time, peak resident memory and what it printed."""

    seconds: float
    peak_mb: float
    stdout: str


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0..100) of `values`, interpolating between neighbours."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: list[float]) -> float:
    """The 50th percentile."""
    return percentile(values, 50)


def run_process(command: list[str], env: dict[str, str] | None = None) -> ProcessRun:
    """Run `command` to its end through child.py, which times it and reads its peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp, "report.json")
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(CHILD), str(report), *command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
        )
        measured = json.loads(report.read_text())
    if done.returncode != 0 or measured["code"] != 0:
        raise RuntimeError(f"{' '.join(command)} exited {measured['code']}: {done.stderr}")
    return ProcessRun(measured["seconds"], measured["peak_kib"] / 1024, done.stdout)


def timed(action: Callable[[], object]) -> float:
    """Seconds one call of `action` takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def machine() -> dict[str, object]:
    """What the numbers were measured on."""
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "load average (1 min) at start": os.getloadavg()[0],
    }
