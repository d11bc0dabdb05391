"""The probes of docs/performance.md: one agent at a time against the fake LLM, each returning its figures.

:class:`Probes` drives one agent (``bench/agents.py``) through ``bench/host.py``; :data:`PROBES`
names each probe as ``bench_probes.py --probes`` takes it.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent
from host import Host

from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

OPENAI, ANTHROPIC = "openai-completions", "anthropic-messages"
TEXT_DELTA = "message_update:text_delta"
LONG_WAIT_S = 180  # a long answer not over by then is reported as TimeoutError
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
