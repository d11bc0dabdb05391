"""Run every benchmark in this folder (one command): ``python bench/run_all.py [--quick]``.

Each benchmark is its own script so a failure in one does not hide the others. Results land
in ``bench/results/``; nothing is asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    "bench_probes.py",
    "bench_rpc.py",
    "bench_prompt_cpu.py",
    "bench_session_load.py",
    "bench_compaction.py",
    "bench_long_sessions.py",
    "bench_watchdog.py",
]


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    failures = 0
    for name in SCRIPTS:
        path = HERE / name
        if not path.exists():
            print(f"== {name}: missing, skipped")
            continue
        args = [sys.executable, str(path)]
        if quick and name in ("bench_rpc.py", "bench_probes.py"):
            args.append("--quick")
        if quick and name == "bench_prompt_cpu.py":
            args.append("60")
        if quick and name == "bench_long_sessions.py":
            args += ["--sizes", "1000,5000", "--repeats", "3"]
        print(f"== {name}", flush=True)
        started = time.monotonic()
        code = subprocess.call(args)
        print(f"== {name}: exit {code} in {time.monotonic() - started:.1f}s", flush=True)
        failures += code != 0
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
