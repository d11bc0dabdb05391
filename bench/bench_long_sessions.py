"""Benchmark: what a host does with a LONG session, through the real ``xcsh --mode rpc`` process.

Run: ``python bench/bench_long_sessions.py [--sizes 1000,5000,20000] [--repeats 5]``.
Prints one table (rows: operations, columns: session sizes) and writes every figure to
``bench/results/long_sessions.json``. Nothing is asserted: these are measurements.

For each size a realistic session file is written straight to disk (no agent involved;
``long_session_files.py``): turns of a user prompt, one to four assistant tool calls with their
results (1–3 KB each, every 40th a 40 KB output), a final answer; every ~1,000 entries the
conversation goes back to an earlier user message (an abandoned branch), a ``model_change`` and
a label here and there, and one ``compaction`` entry 60 % of the way in (so the live context is
the last ~40 %). The operations
are then timed with the bench's own host (``bench/host.py``: raw bytes, responses parsed only
when read) against the fake LLM on loopback:

* resume: spawn with ``--session FILE`` → the answer to a ``get_state`` written at once
  (median of 3 spawns), and the same for a fresh session as the baseline;
* the first prompt after resuming → ``agent_end`` (and the request body the fake LLM got);
* read commands, each ``--repeats`` times in that process: ``get_state``, ``get_messages``,
  ``get_branch_messages``, ``get_tree``, ``get_session_stats``, ``get_last_assistant_text``,
  ``list_sessions``; then ``set_session_name`` and ``export_html``;
* ``switch_session`` from a new session to the long file, ``branch`` at a user message in the
  middle of the file (a new session file), and a manual ``compact`` of the long history.

Each row gives the median wall time of a command (ms) and the agent's CPU per command
(``/proc/<pid>/stat``, 10 ms ticks: read it over several repeats), plus the answer's size.
With ``--profile DIR`` the agent runs under ``py-spy record`` (raw collapsed stacks in DIR;
CPU figures are then py-spy's own, so read only the profile).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents import Workspace, find_agents
from host import Host, Response
from long_session_files import build_session

from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

RESULTS = Path(__file__).resolve().parent / "results"
ANSWER_TIMEOUT = float(os.environ.get("XCSH_BENCH_ANSWER_TIMEOUT", "60"))  # a command with no answer


def _succeeded(answer: Response) -> bool:
    """Read from the answer's first bytes: a deep answer (``get_tree``) may be too deep for ``json``."""
    return b'"success":true' in answer.raw[:300]


class Timer:
    """Runs commands in one host, recording wall time and agent CPU per command name."""

    def __init__(self, host: Host, repeats: int) -> None:
        self.host = host
        self.repeats = repeats
        self.rows: dict[str, dict[str, Any]] = {}

    async def run(self, name: str, frame: dict[str, Any], repeats: int | None = None) -> Response | None:
        times: list[float] = []
        count = repeats or self.repeats
        cpu0 = self.host.cpu_seconds()
        answer: Response | None = None
        for _ in range(count):
            t0 = time.perf_counter()
            try:
                answer = await asyncio.wait_for(self.host.send(frame), ANSWER_TIMEOUT)
            except TimeoutError:
                print(f"!! {name}: no answer in {ANSWER_TIMEOUT} s", file=sys.stderr)
                self.rows[name] = {"ms": float("nan"), "error": f"no answer in {ANSWER_TIMEOUT} s"}
                return None
            times.append(time.perf_counter() - t0)
        cpu = (self.host.cpu_seconds() - cpu0) / count
        assert answer is not None
        if not _succeeded(answer):
            print(f"!! {name}: {answer.raw[:300]!r}", file=sys.stderr)
        self.rows[name] = {
            "ms": statistics.median(times) * 1000,
            "cpu_ms": cpu * 1000,
            "bytes": len(answer.raw),
            "runs": count,
        }
        return answer


async def _quiet(host: Host, still: float = 0.5, limit: float = 10.0) -> None:
    """Wait until the agent's CPU stops moving for ``still`` seconds (at most ``limit``)."""
    deadline = time.monotonic() + limit
    last = host.cpu_seconds()
    while time.monotonic() < deadline:
        await asyncio.sleep(still)
        now = host.cpu_seconds()
        if now == last:
            return
        last = now


async def _spawn(ws: Workspace, extra: list[str], cpu: list[float] | None = None) -> tuple[Host, float]:
    """Start the agent and wait for its first ``get_state`` answer (the agent's CPU by then into ``cpu``)."""
    t0 = time.perf_counter()
    host = await Host.start(ws.argv(*extra), cwd=ws.project, env=ws.env)
    answer = await asyncio.wait_for(host.send({"type": "get_state"}), 600)
    elapsed = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(host.cpu_seconds())
    if not _succeeded(answer):
        print(f"!! spawn: {answer.raw[:300]!r}", file=sys.stderr)
    return host, elapsed


async def measure_size(ws: Workspace, fake: FakeLLM, size: int, repeats: int) -> dict[str, Any]:
    session = build_session(ws.sessions, str(ws.project), size)
    path: Path = session["path"]
    users: list[str] = session["users"]
    out: dict[str, Any] = {
        "entries": session["entries"],
        "file_mb": session["bytes"] / 1e6,
        "branches": session["branches"],
        "large_outputs": session["large_outputs"],
    }
    rows: dict[str, dict[str, Any]] = {}

    spawns: list[float] = []
    cpus: list[float] = []
    for i in range(3):
        host, elapsed = await _spawn(ws, ["--session", str(path)], cpus)
        spawns.append(elapsed)
        if i < 2:
            await host.close()
    rows["resume: spawn → get_state"] = {
        "ms": statistics.median(spawns) * 1000,
        "cpu_ms": statistics.median(cpus) * 1000,
        "runs": 3,
    }

    timer = Timer(host, repeats)
    await _quiet(host)
    fake.reset()
    fake.script(script.text("resumed answer"))
    cpu0 = host.cpu_seconds()
    done = host.expect("agent_end")
    first_delta = host.expect("message_update:text_delta")
    t0 = time.perf_counter()
    await host.send({"type": "prompt", "message": "continue where we left off"})
    inode = path.stat().st_ino
    ended = await asyncio.wait_for(done, 600)
    # the command a host sends right after the run: it waits for whatever the session does after
    # a run on the event loop (on a resumed long session: pruning old tool outputs, §6)
    t_next = time.perf_counter()
    after = await asyncio.wait_for(host.send({"type": "get_state"}), 600)
    next_ms = (time.perf_counter() - t_next) * 1000
    cpu = host.cpu_seconds() - cpu0
    body = fake.requests[-1].body if fake.requests else b""
    await _quiet(host)  # what the session does after a run must not be charged to the next command
    rows["get_state sent at that agent_end (pruning)"] = {
        "ms": next_ms,
        "bytes": len(after.raw),
        "file_rewritten": path.stat().st_ino != inode,
        "runs": 1,
    }
    rows["first prompt after resume → agent_end"] = {
        "ms": (ended - t0) * 1000,
        "first_text_delta_ms": (first_delta.result() - t0) * 1000,
        "llm_requests": len(fake.requests),
        "llm_problems": list(fake.problems),
        "cpu_ms": cpu * 1000,
        "bytes": len(body),
        "runs": 1,
    }
    fake.reset()
    fake.script(script.text("second answer"))
    cpu0 = host.cpu_seconds()
    done = host.expect("agent_end")
    first_delta = host.expect("message_update:text_delta")
    t0 = time.perf_counter()
    ack = host.send({"type": "prompt", "message": "and the next step?"})
    ended = await asyncio.wait_for(done, 600)
    cpu = host.cpu_seconds() - cpu0
    await ack
    rows["second prompt → agent_end"] = {
        "ms": (ended - t0) * 1000,
        "first_text_delta_ms": (first_delta.result() - t0) * 1000,
        "cpu_ms": cpu * 1000,
        "bytes": len(fake.requests[-1].body) if fake.requests else 0,
        "runs": 1,
    }
    await _quiet(host)
    for name in (
        "get_state",
        "get_messages",
        "get_branch_messages",
        "get_tree",
        "get_session_stats",
        "get_last_assistant_text",
        "list_sessions",
    ):
        await timer.run(name, {"type": name})
    await timer.run("set_session_name", {"type": "set_session_name", "name": "a long session"})
    cpu0 = host.cpu_seconds()
    await _quiet(host)  # the header's rewrite runs in the background: not charged to the export
    timer.rows["set_session_name"]["background_cpu_ms"] = (host.cpu_seconds() - cpu0) * 1000
    export = ws.root / "export.html"
    await timer.run("export_html", {"type": "export_html", "outputPath": str(export)}, repeats=2)
    await host.close()

    # switch_session: a process on a new session opens the long file (then back to a small one)
    host, _ = await _spawn(ws, [])
    await _quiet(host)
    timer2 = Timer(host, repeats)
    small = ws.sessions / "small.jsonl"
    switch_times: list[float] = []
    cpu0 = host.cpu_seconds()
    for _ in range(3):
        await timer2.run("_small", {"type": "switch_session", "sessionPath": str(small)}, repeats=1)
        await timer2.run("_switch", {"type": "switch_session", "sessionPath": str(path)}, repeats=1)
        switch_times.append(timer2.rows["_switch"]["ms"])
    cpu_total = host.cpu_seconds() - cpu0
    rows["switch_session to it"] = {
        "ms": statistics.median(switch_times),
        "cpu_ms": cpu_total / 3 * 1000,  # includes the cheap switch to the small file
        "bytes": timer2.rows["_switch"].get("bytes", 0),
        "runs": 3,
    }
    # branch at a user message in the middle (a new session file), then back to the long file
    middle = users[len(users) // 2]
    branch_times: list[float] = []
    for _ in range(2):
        await timer2.run("_branch", {"type": "branch", "entryId": middle}, repeats=1)
        branch_times.append(timer2.rows["_branch"]["ms"])
        await timer2.run("_back", {"type": "switch_session", "sessionPath": str(path)}, repeats=1)
    rows["branch (fork) at the middle"] = {
        **timer2.rows["_branch"],
        "ms": statistics.median(branch_times),
        "runs": 2,
    }
    fake.reset()
    fake.script(*(script.text("## Goal\nsummary " + "word " * 200) for _ in range(4)))
    await timer2.run("compact", {"type": "compact"}, repeats=1)
    rows["compact"] = timer2.rows["compact"]
    await host.close()

    rows.update(timer.rows)
    out["rows"] = rows
    return out


async def baseline(ws: Workspace) -> float:
    times = []
    for _ in range(3):
        host, elapsed = await _spawn(ws, [], [])
        times.append(elapsed)
        await host.close()
    return statistics.median(times) * 1000


ORDER = [
    "resume: spawn → get_state",
    "first prompt after resume → agent_end",
    "get_state sent at that agent_end (pruning)",
    "second prompt → agent_end",
    "get_state",
    "get_messages",
    "get_branch_messages",
    "get_tree",
    "get_session_stats",
    "get_last_assistant_text",
    "list_sessions",
    "set_session_name",
    "export_html",
    "switch_session to it",
    "branch (fork) at the middle",
    "compact",
]


def print_table(results: dict[str, Any], base_ms: float) -> None:
    sizes = list(results)
    head = f"{'operation':<40}" + "".join(f"{s + ' entries':>28}" for s in sizes)
    print(head)
    print(f"{'':<40}" + "".join(f"{'ms':>10}{'cpu ms':>9}{'answer KB':>9}" for _ in sizes))
    files = "".join(f"{results[s]['file_mb']:>19.1f} MB file{'':>1}" for s in sizes)
    print(f"{'(session file)':<40}{files}")
    print(f"{'spawn → get_state, new session':<40}{base_ms:>10.1f}")
    for name in ORDER:
        cells = ""
        for s in sizes:
            row = results[s]["rows"].get(name)
            if row is None:
                cells += f"{'—':>28}"
                continue
            if "error" in row:
                cells += f"{'no answer':>28}"
                continue
            cpu = f"{row['cpu_ms']:.1f}" if "cpu_ms" in row else "—"
            kb = f"{row['bytes'] / 1024:.1f}" if "bytes" in row else "—"
            cells += f"{row['ms']:>10.1f}{cpu:>9}{kb:>9}"
        print(f"{name:<40}{cells}")


async def main_async(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    profile = Path(args.profile) if args.profile else None
    (agent,) = find_agents(["xcsh"], Path("/nonexistent"), profile)
    results: dict[str, Any] = {}
    with FakeLLM() as fake:
        ws = agent.workspace(fake.base_url, "openai-completions")
        try:
            base_ms = await baseline(ws)
            for size in sizes:
                sub = agent.workspace(fake.base_url, "openai-completions")
                try:
                    results[str(size)] = await measure_size(sub, fake, size, args.repeats)
                finally:
                    sub.remove()
        finally:
            ws.remove()
    print_table(results, base_ms)
    RESULTS.mkdir(exist_ok=True)
    record = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "repeats": args.repeats,
        "baseline_spawn_ms": base_ms,
        "sizes": results,
    }
    out = Path(args.output) if args.output else RESULTS / "long_sessions.json"
    out.write_text(json.dumps(record, indent=2, default=str) + "\n")
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000", help="session sizes in entries")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each read command")
    parser.add_argument("--profile", help="run the agent under py-spy, stacks in this folder")
    parser.add_argument("--output", help="results file (default bench/results/long_sessions.json)")
    with tempfile.TemporaryDirectory():
        asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
