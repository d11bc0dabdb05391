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
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents import Agent, compile_xcsh, find_agents
from host import Host

from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

RESULTS = Path(__file__).resolve().parent / "results"
OPENAI, ANTHROPIC = "openai-completions", "anthropic-messages"
WIRES = {"openai": OPENAI, "anthropic": ANTHROPIC}
TEXT_DELTA = "message_update:text_delta"
PEERS = ("pi", "omp")  # the agents a target's ratio is taken against ("floor" only calibrates)
LONG_WAIT_S = 180  # a long answer not over by then is reported as TimeoutError
PROBE_WAIT_S = 1200  # a probe not over by then is reported as TimeoutError (its processes killed)
SPARE = 10


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def _p99(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, int(len(ordered) * 0.99) - 1)], 2)


class Probes:
    """One agent's probes; each returns a dict of figures (milliseconds unless named otherwise)."""

    def __init__(self, agent: Agent, fake: FakeLLM, quick: bool) -> None:
        self.agent = agent
        self.fake = fake
        self.quick = quick
        self.spawned: list[Host] = []

    async def _spawn(self, api: str = OPENAI) -> tuple[Host, Any]:
        ws = self.agent.workspace(self.fake.base_url, api)
        host = await Host.start(ws.argv(), cwd=ws.project, env=ws.env)
        self.spawned.append(host)
        return host, ws

    def _script(self, *steps: script.Step) -> None:
        """The fake LLM's answers for one run, plus spare ones: a peer may ask for more (a title)."""
        self.fake.reset()
        self.fake.script(*steps, *(script.text(f"spare answer {i}") for i in range(SPARE)))

    def kill_spawned(self) -> None:
        """Kill whatever a failed or timed-out probe left running."""
        for host in self.spawned:
            if host.process.returncode is None:
                host.process.kill()

    async def _idle(self, host: Host) -> None:
        """Wait until ``get_state`` says the run chain is over (not timed)."""
        while (await host.send({"type": "get_state"}))["data"]["isStreaming"]:
            await asyncio.sleep(0.005)

    async def _settled_cpu(self, host: Host) -> tuple[float, float]:
        """Wait until the agent's CPU stops growing (0.5 s unchanged, at most 10 s); (CPU then, seconds waited).

        The CPU probes open their window here, so work an agent does in the background after its
        first answer (xcsh imports the provider SDK once ready; the peers import theirs before
        answering) is counted for nobody, and the window holds the streaming work itself.
        """
        t0 = time.perf_counter()
        last, still_since = host.cpu_seconds(), t0
        while time.perf_counter() - t0 < 10.0:
            await asyncio.sleep(0.1)
            now = host.cpu_seconds()
            if now != last:
                last, still_since = now, time.perf_counter()
            elif time.perf_counter() - still_since >= 0.5:
                break
        return last, round(time.perf_counter() - t0, 2)

    async def _prompt(self, host: Host, text: str, until: str = "agent_end") -> tuple[float, float]:
        """Send a prompt; (seconds to the first text_delta, seconds to ``until``)."""
        first, end = host.expect(TEXT_DELTA), host.expect(until)
        t0 = time.perf_counter()
        response = await host.send({"type": "prompt", "message": text})
        if not response.get("success", False):
            raise RuntimeError(f"prompt refused: {response}")
        return await first - t0, await end - t0

    async def startup(self) -> dict[str, Any]:
        """Spawn → first ``get_state`` answer: the first start in a fresh agent directory, then
        repeated starts in that same directory, as a host starts the agent day to day.

        ``median_ms`` (the target's figure) is over the repeated starts, ``first_start_ms`` is the
        very first one (an agent may keep what it derived from its config files between starts).
        """
        ws = self.agent.workspace(self.fake.base_url, OPENAI)
        times = []
        try:
            for _ in range(1 + (3 if self.quick else 15)):
                t0 = time.perf_counter()
                host = await Host.start(ws.argv(), cwd=ws.project, env=ws.env)
                self.spawned.append(host)
                await host.send({"type": "get_state"})
                times.append(time.perf_counter() - t0)
                await host.close()
        finally:
            ws.remove()
        first, again = _ms(times[0]), [_ms(t) for t in times[1:]]
        return {"median_ms": _median(again), "first_start_ms": first, "runs_ms": again}

    async def round_trip(self) -> dict[str, Any]:
        host, ws = await self._spawn()
        await host.send({"type": "get_state"})
        sizes, times = [], []
        for _ in range(200 if self.quick else 1000):
            t0 = time.perf_counter()
            frame = await host.send({"type": "get_state"})
            times.append(_ms(time.perf_counter() - t0))
        sizes.append(len(frame.raw))
        await host.close()
        ws.remove()
        return {"median_ms": _median(times), "p99_ms": _p99(times), "response_bytes": sizes[0]}

    async def first_token_immediate(self, api: str) -> dict[str, Any]:
        times = []
        for _ in range(2 if self.quick else 5):
            self._script(script.text("hello there, this is the answer"))
            t0 = time.perf_counter()
            host, ws = await self._spawn(api)
            first, end = host.expect(TEXT_DELTA), host.expect("agent_end")
            host.send({"type": "prompt", "message": "hi"})
            times.append(_ms(await first - t0))
            await end
            await host.close()
            ws.remove()
        return {"median_ms": _median(times), "runs_ms": times}

    async def first_token_idle(self, api: str) -> dict[str, Any]:
        idle, second = [], []
        for _ in range(2 if self.quick else 5):
            self._script(script.text("first answer here"), script.text("second answer here"))
            host, ws = await self._spawn(api)
            await host.send({"type": "get_state"})
            await asyncio.sleep(2.0)
            first_s, _ = await self._prompt(host, "first question")
            await self._idle(host)
            second_s, _ = await self._prompt(host, "second question")
            idle.append(_ms(first_s))
            second.append(_ms(second_s))
            await host.close()
            ws.remove()
        return {
            "idle_first_median_ms": _median(idle),
            "second_median_ms": _median(second),
            "idle_runs_ms": idle,
            "second_runs_ms": second,
        }

    async def many_prompts(self) -> dict[str, Any]:
        count = 60 if self.quick else 300
        self._script(*(script.text(f"answer {i}: " + _prose(i)) for i in range(count)))
        host, ws = await self._spawn()
        await host.send({"type": "get_state"})
        per_prompt = []
        for i in range(count):
            _, end_s = await self._prompt(host, f"question {i}? " + _prose(-i - 1))
            per_prompt.append(_ms(end_s))
            self.fake.clear_requests()  # a kept body per prompt would slow the server's next read
            await self._idle(host)
        cpu = host.cpu_seconds()
        await host.close()
        session_files = list(ws.sessions.rglob("*.jsonl"))
        persisted = sum(f.stat().st_size for f in session_files)
        ws.remove()
        first, last = per_prompt[:20], per_prompt[-20:]
        slope = _slope(per_prompt)
        return {
            "prompts": count,
            "first20_median_ms": _median(first),
            "last20_median_ms": _median(last),
            "last_over_first": round(statistics.median(last) / statistics.median(first), 2),
            "slope_ms_per_prompt": round(slope, 3),
            "agent_cpu_s": round(cpu, 2),
            "session_bytes": persisted,
            "per_prompt_ms": per_prompt,
        }

    async def long_answer(self) -> dict[str, Any]:
        deltas = 2000 if self.quick else 20000
        self._script(script.Reply(text=[f"token{i} " for i in range(deltas)]))
        host, ws = await self._spawn()
        await host.send({"type": "get_state"})
        cpu_ready = host.cpu_seconds()
        cpu0, settle_s = await self._settled_cpu(host)
        try:
            _, end_s = await asyncio.wait_for(self._prompt(host, "a long answer please"), LONG_WAIT_S)
        except (TimeoutError, EOFError, RuntimeError) as exc:
            await host.close()
            ws.remove()
            return {"deltas": deltas, "failed": type(exc).__name__}
        result = {
            "deltas": deltas,
            "prompt_to_agent_end_s": round(end_s, 2),
            "agent_cpu_s": round(host.cpu_seconds() - cpu0, 2),
            "agent_cpu_from_ready_s": round(host.cpu_seconds() - cpu_ready, 2),
            "settle_s": settle_s,
            "peak_rss_mb": round(host.peak_rss_mb(), 1),
            "updates": host.counts.get(TEXT_DELTA, 0),
            "stdout_mb": round(host.bytes_read / 1e6, 1),
        }
        await host.close()
        ws.remove()
        return result

    async def tool_arguments(self) -> dict[str, Any]:
        size = 64 * 1024
        lines, length = [], 0
        while length < size:  # varied lines with quotes, tabs and newlines to escape
            lines.append(f'print("line {len(lines)}")\t# {_prose(len(lines), 50)}\n')
            length += len(lines[-1])
        content = "".join(lines)[:size]
        arguments = json.dumps({"path": "out.txt", "content": content})
        call = script.ToolCallSpec("call_1", "write", arguments, fragment_size=10)
        self._script(script.Reply(tool_calls=[call]), script.text("written"))
        host, ws = await self._spawn()
        await host.send({"type": "get_state"})
        cpu_ready = host.cpu_seconds()
        cpu0, settle_s = await self._settled_cpu(host)
        end = host.expect("agent_end")
        t0 = time.perf_counter()
        host.send({"type": "prompt", "message": "write the file"})
        try:
            end_s = await asyncio.wait_for(end, LONG_WAIT_S) - t0
        except (TimeoutError, EOFError) as exc:
            await host.close()
            ws.remove()
            return {"argument_bytes": len(arguments), "failed": type(exc).__name__}
        written = ws.project / "out.txt"
        result = {
            "argument_bytes": len(arguments),
            "deltas": -(-len(arguments) // 10),
            "prompt_to_agent_end_s": round(end_s, 2),
            "agent_cpu_s": round(host.cpu_seconds() - cpu0, 2),
            "agent_cpu_from_ready_s": round(host.cpu_seconds() - cpu_ready, 2),
            "settle_s": settle_s,
            "file_written": written.exists() and written.read_text() == content,
            "stdout_mb": round(host.bytes_read / 1e6, 1),
        }
        await host.close()
        ws.remove()
        return result


_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "kernel",
    "buffer",
    "socket",
    "parser",
    "token",
    "stream",
    "window",
    "cursor",
    "branch",
    "commit",
    "module",
    "import",
    "thread",
    "signal",
    "memory",
    "cache",
    "vector",
    "matrix",
    "lambda",
    "closure",
    "object",
    "method",
]


def _prose(seed: int, size: int = 200) -> str:
    """About ``size`` characters of varied words (repeated filler trips omp's loop detector)."""
    rng = random.Random(seed)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append(f"{rng.choice(_WORDS)}{rng.randint(0, 999)}")
    return " ".join(words)


def _slope(values: list[float]) -> float:
    """Least-squares slope of ``values`` against their index."""
    n = len(values)
    mean_x, mean_y = (n - 1) / 2, statistics.fmean(values)
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den if den else 0.0


PROBES: dict[str, Callable[[Probes], Awaitable[dict[str, Any]]]] = {
    "startup": Probes.startup,
    "round_trip": Probes.round_trip,
    "immediate_openai": lambda p: p.first_token_immediate(OPENAI),
    "immediate_anthropic": lambda p: p.first_token_immediate(ANTHROPIC),
    "idle_openai": lambda p: p.first_token_idle(OPENAI),
    "idle_anthropic": lambda p: p.first_token_idle(ANTHROPIC),
    "many_prompts": Probes.many_prompts,
    "long_answer": Probes.long_answer,
    "tool_arguments": Probes.tool_arguments,
}

# (table row, probe, figure, unit)
ROWS = [
    ("spawn → first get_state answer", "startup", "median_ms", "ms"),
    ("spawn → first get_state answer, first start in a fresh agent dir", "startup", "first_start_ms", "ms"),
    ("get_state round trip, median", "round_trip", "median_ms", "ms"),
    ("get_state round trip, p99", "round_trip", "p99_ms", "ms"),
    ("immediate prompt → first text_delta, OpenAI", "immediate_openai", "median_ms", "ms"),
    ("immediate prompt → first text_delta, Anthropic", "immediate_anthropic", "median_ms", "ms"),
    ("idle 2 s, first prompt → first text_delta, OpenAI", "idle_openai", "idle_first_median_ms", "ms"),
    ("idle 2 s, first prompt → first text_delta, Anthropic", "idle_anthropic", "idle_first_median_ms", "ms"),
    ("second prompt → first text_delta, OpenAI", "idle_openai", "second_median_ms", "ms"),
    ("second prompt → first text_delta, Anthropic", "idle_anthropic", "second_median_ms", "ms"),
    ("300 prompts: ms per prompt, first 20", "many_prompts", "first20_median_ms", "ms"),
    ("300 prompts: ms per prompt, last 20", "many_prompts", "last20_median_ms", "ms"),
    ("300 prompts: agent CPU, whole run", "many_prompts", "agent_cpu_s", "s"),
    ("20,000-delta answer: prompt → agent_end", "long_answer", "prompt_to_agent_end_s", "s"),
    ("20,000-delta answer: agent CPU", "long_answer", "agent_cpu_s", "s"),
    ("20,000-delta answer: agent CPU from the first answer", "long_answer", "agent_cpu_from_ready_s", "s"),
    ("20,000-delta answer: peak RSS", "long_answer", "peak_rss_mb", "MB"),
    ("64 KiB tool arguments: prompt → agent_end", "tool_arguments", "prompt_to_agent_end_s", "s"),
    ("64 KiB tool arguments: agent CPU", "tool_arguments", "agent_cpu_s", "s"),
    (
        "64 KiB tool arguments: agent CPU from the first answer",
        "tool_arguments",
        "agent_cpu_from_ready_s",
        "s",
    ),
]


# (target, probe, figure, the largest xcsh ÷ best-peer ratio that meets it) — the targets
TARGETS = [
    ("spawn → first get_state ≤ 0.1×", "startup", "median_ms", 0.1),
    ("get_state round trip ≤ 1× (median)", "round_trip", "median_ms", 1.0),
    ("immediate prompt → first text_delta ≤ 0.1×, OpenAI", "immediate_openai", "median_ms", 0.1),
    ("immediate prompt → first text_delta ≤ 0.1×, Anthropic", "immediate_anthropic", "median_ms", 0.1),
    ("idle first prompt → first text_delta ≤ 0.5×, OpenAI", "idle_openai", "idle_first_median_ms", 0.5),
    ("idle first prompt → first text_delta ≤ 0.5×, Anthropic", "idle_anthropic", "idle_first_median_ms", 0.5),
    ("second prompt → first text_delta ≤ 0.5×, OpenAI", "idle_openai", "second_median_ms", 0.5),
    ("second prompt → first text_delta ≤ 0.5×, Anthropic", "idle_anthropic", "second_median_ms", 0.5),
    ("300 prompts: ms per prompt ≤ 0.25× (last 20)", "many_prompts", "last20_median_ms", 0.25),
    ("20,000-delta answer: agent CPU ≤ 0.15×", "long_answer", "agent_cpu_s", 0.15),
    ("20,000-delta answer: peak RSS ≤ 0.15×", "long_answer", "peak_rss_mb", 0.15),
    ("64 KiB tool arguments: agent CPU ≤ 0.1×", "tool_arguments", "agent_cpu_s", 0.1),
]


def targets(results: dict[str, dict[str, Any]], names: list[str]) -> str:
    """Each target: xcsh's figure, the best peer's, the ratio and whether it is met."""
    peers = [n for n in names if n in PEERS]
    lines = ["| target | xcsh | best peer | ratio | met |", "|---|---|---|---|---|"]
    for label, probe, figure, limit in TARGETS:
        ours = results.get("xcsh", {}).get(probe, {}).get(figure)
        theirs = [(results[n].get(probe, {}).get(figure), n) for n in peers]
        found = [(v, n) for v, n in theirs if isinstance(v, (int, float)) and v > 0]
        if not isinstance(ours, (int, float)) or not found:
            continue
        best, who = min(found)
        ratio = ours / best
        lines.append(
            f"| {label} | {ours:,} | {best:,} ({who}) | {ratio:.2f}× | {'yes' if ratio <= limit else 'no'} |"
        )
    many = results.get("xcsh", {}).get("many_prompts", {})
    if "last_over_first" in many:
        flat = many["last_over_first"]
        lines.append(
            f"| 300 prompts flat: last 20 within 20 % of first 20 | {flat:.2f}× | — | — | {'yes' if flat <= 1.2 else 'no'} |"
        )
    return "\n".join(lines)


def _cell(results: dict[str, Any], probe: str, figure: str) -> str:
    value = results.get(probe)
    if value is None:
        return "—"
    if "failed" in value:
        return str(value["failed"])
    found = value.get(figure)
    return "—" if found is None else f"{found:,}"


def table(results: dict[str, dict[str, Any]], names: list[str]) -> str:
    peers = [n for n in names if n in PEERS]
    head = ["probe", *names] + (["vs best peer"] if peers and "xcsh" in names else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, probe, figure, unit in ROWS:
        if not any(probe in results[n] for n in names):
            continue
        cells = [_cell(results[n], probe, figure) for n in names]
        row = [f"{label} ({unit})", *cells]
        if len(head) > len(names) + 1:
            ours = results["xcsh"].get(probe, {}).get(figure)
            theirs = [results[n].get(probe, {}).get(figure) for n in peers]
            best = min((v for v in theirs if isinstance(v, (int, float)) and v > 0), default=None)
            row.append(f"{ours / best:.2f}×" if isinstance(ours, (int, float)) and best else "—")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


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
