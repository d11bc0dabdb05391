"""The performance probes of docs/performance.md, against this project and (when installed) its peers.

Run: ``python bench/bench_probes.py [--quick] [--agents xcsh,pi,omp] [--probes a,b] [--peers DIR]``.
Prints a table (medians; lower is better) and writes ``bench/results/probes.json`` with every raw
figure, the machine's load (``uptime``) before and after, and the date. Nothing is asserted.

Every agent talks to the same fake LLM on loopback (``xcsh.testing.FakeLLM``) with sessions
persisted to a tmp session directory. The host (``bench/host.py``) reads frames as raw bytes so
the figures measure the agent, not the host. Before each agent's run of a probe the machine must
be quiet (≥ 90 % idle CPU over 0.25 s, waited for up to 10 s), and the agents take turns to go
first, probe by probe, so no agent always runs right after the same peer's teardown.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents import compile_xcsh, find_agents
from probe_tables import PEERS, table, targets
from probes import PROBES, Probes

from xcsh.testing.fake_llm import FakeLLM

RESULTS = Path(__file__).resolve().parent / "results"
PROBE_WAIT_S = 1200  # a probe not over by then is reported as TimeoutError (its processes killed)


def _cpu_idle_share(window_s: float) -> float | None:
    """The machine's idle CPU share over ``window_s`` (from /proc/stat; None where there is none)."""

    def sample() -> tuple[int, int] | None:
        try:
            fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        return fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields)

    first = sample()
    time.sleep(window_s)
    second = sample()
    if first is None or second is None or second[1] == first[1]:
        return None
    return (second[0] - first[0]) / (second[1] - first[1])


def settle(max_wait_s: float = 10.0, idle: float = 0.9, window_s: float = 0.25) -> float:
    """Wait until the machine is quiet (the last agent's exit and its children's teardown done).

    Returns the seconds waited. Gives up after ``max_wait_s``: a machine that never quiets down
    shows in the recorded load instead.
    """
    t0 = time.monotonic()
    while time.monotonic() - t0 < max_wait_s:
        share = _cpu_idle_share(window_s)
        if share is None or share >= idle:
            break
    return round(time.monotonic() - t0, 2)


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "?"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter streams")
    parser.add_argument(
        "--agents",
        default="xcsh,pi,omp,floor",
        help="comma-separated: xcsh, pi, omp, floor (the calibration agent, never a peer)",
    )
    parser.add_argument("--probes", default=",".join(PROBES), help="comma-separated probe names")
    parser.add_argument("--peers", default=os.environ.get("XCSH_BENCH_PEERS", "/work/peers"))
    parser.add_argument("--out", default=str(RESULTS / "probes.json"))
    parser.add_argument("--profile", help="run xcsh under py-spy, collapsed stacks into this folder")
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="do not write xcsh's bytecode first (start-up then includes compiling wherever "
        "PYTHONDONTWRITEBYTECODE is set)",
    )
    parser.add_argument(
        "--peer-results",
        help="a probes.json of an earlier run: its figures for agents not run now join the table",
    )
    options = parser.parse_args()
    profile = Path(options.profile) if options.profile else None
    agents = find_agents(options.agents.split(","), Path(options.peers), profile)
    probes = options.probes.split(",")
    bytecode = {"compiled": False, "why": "--no-compile"} if options.no_compile else compile_xcsh()
    load_before = _uptime()
    results: dict[str, dict[str, Any]] = {a.name: {} for a in agents}
    with FakeLLM() as fake:
        for index, name in enumerate(probes):
            # each probe starts with another agent, so none always follows the same one, and each
            # starts on a quiet machine (a peer's teardown disturbed the next spawn otherwise)
            turn = index % len(agents)
            for agent in agents[turn:] + agents[:turn]:
                waited = settle()
                fake.reset()
                print(f"-- {agent.name}: {name} (settled in {waited} s)", file=sys.stderr, flush=True)
                probes = Probes(agent, fake, options.quick)
                try:
                    results[agent.name][name] = await asyncio.wait_for(PROBES[name](probes), PROBE_WAIT_S)
                except Exception as exc:  # a peer that cannot do a probe is a figure, not a crash
                    results[agent.name][name] = {"failed": f"{type(exc).__name__}: {exc}"[:200]}
                    probes.kill_spawned()
                partial = Path(options.out).with_suffix(".partial.json")
                partial.write_text(json.dumps({"results": results, "load_before": load_before}, indent=1))
    earlier: dict[str, Any] = {}
    if options.peer_results:
        earlier = json.loads(Path(options.peer_results).read_text())
        for name, figures in earlier["results"].items():
            results.setdefault(name, figures)
    names = [n for n in ("xcsh", *PEERS, "floor") if n in results]
    text = table(results, names)
    goals = targets(results, names)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_before": load_before,
        "load_after": _uptime(),
        "quick": options.quick,
        "xcsh_bytecode": bytecode,
        "peer_results_from": (
            {"file": options.peer_results, "date": earlier.get("date"), "load": earlier.get("load_before")}
            if earlier
            else None
        ),
        "results": results,
        "table": text,
        "targets": goals,
    }
    out = Path(options.out)
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(
        f"{report['date']}  {report['machine']}\nload before: {load_before}\nload after:  {report['load_after']}"
    )
    print(text)
    print()
    print(goals)


if __name__ == "__main__":
    asyncio.run(main())
