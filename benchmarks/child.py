"""Run a command; write its exit code, wall seconds and peak RSS (KiB) as JSON to REPORT.

    python -I -S benchmarks/child.py REPORT COMMAND...

A process forked from the benchmark runner would start with the runner's own peak RSS (Linux
keeps the high-water mark across fork and exec), so the measured command is started from this
small process instead: what getrusage(RUSAGE_CHILDREN) reports here is the command's own peak.
"""

import json
import resource
import subprocess
import sys
import time

started = time.perf_counter()
code = subprocess.call(sys.argv[2:])
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open(sys.argv[1], "w") as report:
    json.dump({"code": code, "seconds": seconds, "peak_kib": peak}, report)
