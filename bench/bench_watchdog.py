"""Benchmark: what the process-group watchdog (``xcsh.ai.watchdog``) costs and how fast it acts.

Run as ``python bench/bench_watchdog.py [repeats]`` (default 30). Measures, on this machine:

- the watchdog's own start: CPU per start of the ``bash`` script, and of the smallest Python
  equivalent (``python -I -S -c``) for comparison; memory of each while it waits (Linux
  ``smaps_rollup``: Rss, Pss, Private_Dirty);
- in a fresh process, the first :func:`~xcsh.ai.watchdog.guard` (it spawns the watchdog) and a
  later one, wall and CPU of the calling process;
- after an owner process is SIGKILLed, how long until a guarded group is gone: one that exits
  on SIGTERM and one that ignores it (SIGKILL after the grace).

Writes ``bench/results/watchdog.json``. Nothing is asserted. docs/decisions.md, "Processes
outlive no xcsh".
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from xcsh.ai import watchdog
from xcsh.testing.processes import wait_gone

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")
PYTHON_EQUIVALENT = [sys.executable, "-I", "-S", "-c", "import os\nwhile os.read(0, 4096): pass"]

GUARD_CHILD = r"""
import shutil, subprocess, time  # shutil: xcsh's bash runner has it loaded before the first guard
from xcsh.ai import watchdog
from xcsh.testing.processes import wait_gone
out = []
for _ in range(2):
    p = subprocess.Popen(["sleep", "5"], start_new_session=True)
    wall, cpu = time.perf_counter(), time.process_time()
    watchdog.guard(p.pid)
    out += [(time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3]
    p.kill(); p.wait(); watchdog.release(p.pid)
print(*out)
"""

OWNER_CHILD = r"""
import subprocess, sys
from xcsh.ai import watchdog
from xcsh.testing.processes import wait_gone
p = subprocess.Popen(["bash", "-c", sys.argv[1]], start_new_session=True)
watchdog.guard(p.pid)
print(p.pid, flush=True)
sys.stdin.read()
"""


def start_cpu_ms(argv: list[str], repeats: int) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(repeats):
        subprocess.run(argv, stdin=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return spent / repeats * 1e3


def waiting_memory_kb(argv: list[str]) -> dict[str, int]:
    read_end, write_end = os.pipe()
    process = subprocess.Popen(argv, stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(read_end)
    try:
        deadline = time.monotonic() + 5
        rollup = Path(f"/proc/{process.pid}/smaps_rollup")
        while time.monotonic() < deadline:  # until it sleeps in read() (its start-up is over)
            stat = Path(f"/proc/{process.pid}/wchan")
            if stat.exists() and stat.read_text() in ("pipe_read", "pipe_wait"):
                break
            time.sleep(0.01)
        if not rollup.exists():
            return {}
        fields = dict(line.split(":", 1) for line in rollup.read_text().splitlines()[1:])
        return {k: int(fields[k].split()[0]) for k in ("Rss", "Pss", "Private_Dirty") if k in fields}
    finally:
        os.close(write_end)
        process.wait()


def gone_after_sigkill_ms(script: str) -> float:
    env = {**os.environ, "PYTHONPATH": SRC}
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER_CHILD, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert owner.stdout is not None
    pid = int(owner.stdout.readline())
    started = time.perf_counter()
    owner.kill()
    wait_gone([pid], 10)  # a pidfd: woken when the process exits
    elapsed = (time.perf_counter() - started) * 1e3
    owner.wait()
    return elapsed


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    bash = watchdog.command(os.getpid())
    results: dict[str, Any] = {
        "start_cpu_ms": {
            "bash": round(start_cpu_ms(bash, repeats * 5), 3),
            "python -I -S": round(start_cpu_ms(PYTHON_EQUIVALENT, repeats * 5), 3),
        },
        "waiting_memory_kb": {
            "bash": waiting_memory_kb(bash),
            "python -I -S": waiting_memory_kb(PYTHON_EQUIVALENT),
        },
    }
    rows = []
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, "-c", GUARD_CHILD],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": SRC},
            check=True,
        )
        rows.append([float(x) for x in done.stdout.split()])
    results["guard_ms"] = {
        "first_wall": median([r[0] for r in rows]),
        "first_cpu": median([r[1] for r in rows]),
        "later_wall": median([r[2] for r in rows]),
        "later_cpu": median([r[3] for r in rows]),
    }
    results["gone_after_sigkill_ms"] = {
        "exits_on_sigterm": median(
            [gone_after_sigkill_ms("exec sleep 1000") for _ in range(repeats // 3 or 1)]
        ),
        "ignores_sigterm": median(
            [
                gone_after_sigkill_ms("trap '' TERM; while :; do sleep 1; done")
                for _ in range(repeats // 3 or 1)
            ]
        ),
    }
    results["repeats"] = repeats
    print(json.dumps(results, indent=2))
    out = HERE / "results" / "watchdog.json"
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
