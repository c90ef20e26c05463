"""memvault next to a peer, basic-memory, on the same generated vault (`make bench-peers`).

    python benchmarks/peers.py [--size 1000] [--runs 3]

basic-memory is installed from PyPI into benchmarks/.peers-venv (it needs Python 3.12+), with
its home (config and database) under benchmarks/.cache, semantic search off (its embedding
model cannot be downloaded here) and auto-update off. It rewrites every note's frontmatter
when it indexes, so it gets a full copy of the vault, never the cached one.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mcp_bench
from mcp import StdioServerParameters
from measure import MEMVAULT, ProcessRun, median, percentile, run_process
from run import CACHE, HERE, cached_vault, log, remove_index, shown
from workload import queries

VENV = HERE / ".peers-venv"
# 0.24.x needs a certifi newer than the package index here serves.
PACKAGE = "basic-memory==0.23.2"
PROJECT = "bench"
SEARCHES = 50


def newer_python() -> str:
    """A Python 3.12+ interpreter on this machine, for basic-memory's venv."""
    names = [shutil.which(f"python3.{minor}") for minor in (14, 13, 12)]
    names += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")))
    for name in filter(None, names):
        probe = [name, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
        if subprocess.run(probe, capture_output=True).returncode == 0:
            return name
    raise SystemExit("bench-peers needs Python 3.12 or newer for basic-memory")


def basic_memory() -> str:
    """The basic-memory command, installed into its own venv on first use."""
    command = VENV / "bin" / "basic-memory"
    if not command.exists():
        log(f"installing {PACKAGE} into {VENV}")
        subprocess.run([newer_python(), "-m", "venv", str(VENV)], check=True)
        pip = [str(VENV / "bin" / "pip"), "install", "--quiet", PACKAGE]
        subprocess.run(pip, check=True)
    return str(command)


class BasicMemory:
    """basic-memory with its own home folder, pointed at one copy of the vault."""

    def __init__(self, vault: Path, home: Path):
        self.command = basic_memory()
        self.env = {**os.environ, "HOME": str(home), "NO_COLOR": "1"}
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        for key in ("semantic_search_enabled", "auto_update"):
            self.run("config", "set", key, "false")
        self.run("project", "add", PROJECT, str(vault))

    def run(self, *args: str) -> ProcessRun:
        """One basic-memory CLI command, timed, in this home."""
        return run_process([self.command, *args], self.env)

    def reindex(self) -> ProcessRun:
        """A full rebuild of the full-text index of the project."""
        return self.run("reindex", "--full", "--search", "--project", PROJECT)

    def stdio(self) -> StdioServerParameters:
        """How the MCP client launches basic-memory's server on the project."""
        return StdioServerParameters(
            command=self.command, args=["mcp", "--project", PROJECT], env=self.env
        )


def search_times(
    params: StdioServerParameters, tool: str, texts: list[str], log_to: Path
) -> list[float]:
    """Milliseconds of each search in one MCP stdio session."""
    with open(log_to, "w") as errlog:
        calls = [{"query": text} for text in texts]
        seconds = asyncio.run(mcp_bench.call_times(params, tool, calls, errlog))
    return [s * 1000 for s in seconds]


def compared(what: str, mine: float, theirs: float, unit: str) -> tuple[str, str, str, str]:
    """One comparison line: both values with their unit, and how many times memvault's."""
    return what, shown(mine, unit), shown(theirs, unit), f"{theirs / mine:.1f}x"


def report(rows: list[tuple[str, str, str, str]]) -> None:
    """Print what, memvault, basic-memory and their ratio as a fixed-width table."""
    print(f"{'what':32}  {'memvault':>14}  {'basic-memory':>14}  {'bm / memvault':>13}")
    for what, mine, theirs, ratio in rows:
        print(f"{what:32}  {mine:>14}  {theirs:>14}  {ratio:>13}")


def main(argv: list[str] | None = None) -> None:
    """CLI: index and search one vault size with both, then print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3, help="memvault reindex runs (median)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    source = cached_vault(args.size, args.seed)
    work = CACHE / f"peers-{args.size}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work / "vault")
    index = work / "index.sqlite3"
    mine = []
    for run in range(args.runs):
        log(f"memvault reindex {run + 1}/{args.runs}")
        remove_index(index)
        command = [MEMVAULT, *mcp_bench.base_args(work / "vault", index), "reindex", "--json"]
        mine.append(run_process(command))
    log("basic-memory reindex (one run: it is slow)")
    peer = BasicMemory(work / "vault", work / "home")
    theirs = peer.reindex()
    texts = [q.text for q in queries(source, args.seed, SEARCHES + 3)]
    log(f"search x{SEARCHES} over MCP stdio, both")
    mine_params = mcp_bench.memvault_stdio(work / "vault", index)
    my_search = search_times(mine_params, "search_mem", texts, work / "memvault.log")
    their_search = search_times(peer.stdio(), "search_notes", texts, work / "basic-memory.log")
    print(f"{args.size} notes; {PACKAGE}; memvault on Python {sys.version.split()[0]}")
    report(
        [
            compared("full reindex (CLI)", median([r.seconds for r in mine]), theirs.seconds, "s"),
            compared("reindex peak RSS", max(r.peak_mb for r in mine), theirs.peak_mb, "MB"),
            compared("search via MCP stdio, p50", median(my_search), median(their_search), "ms"),
            compared(
                "search via MCP stdio, p95",
                percentile(my_search, 95),
                percentile(their_search, 95),
                "ms",
            ),
        ]
    )
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
