"""RPC benchmarks against the fake LLM: start-up, round trip, streaming throughput, memory, growth.

Run: ``python bench/bench_rpc.py [--quick]``. Prints a table and writes
``bench/results/rpc.json``. Nothing is asserted: these are measurements.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

RESULTS = Path(__file__).resolve().parent / "results"


def _workspace(fake: FakeLLM) -> tuple[Path, dict[str, str]]:
    root = Path(tempfile.mkdtemp(prefix="xcsh-bench-"))
    agent = root / "agent"
    agent.mkdir()
    (agent / "models.yml").write_text(
        f"providers:\n  fake:\n    baseUrl: {fake.base_url}/v1\n    apiKey: k\n    api: openai-completions\n"
        "    models:\n      - id: fake-model\n        contextWindow: 10000000\n        maxTokens: 4096\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PI_CODING_AGENT_DIR"] = str(agent)
    env["XCSH_DISABLED_PROVIDERS"] = "local"
    return root, env


ARGS = ["--model", "fake/fake-model", "--no-tools", "--no-session"]


def _rss_kib(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        pass
    return out


async def startup(fake: FakeLLM, runs: int) -> dict[str, Any]:
    root, env = _workspace(fake)
    ready, first = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        client = await RpcClient.start(args=ARGS, cwd=root, env=env)
        t1 = time.perf_counter()
        await client.get_state()
        t2 = time.perf_counter()
        await client.close()
        ready.append(t1 - t0)
        first.append(t2 - t0)
    return {
        "ready_s_median": statistics.median(ready),
        "first_response_s_median": statistics.median(first),
        "runs": runs,
    }


async def round_trip(fake: FakeLLM, count: int) -> dict[str, Any]:
    root, env = _workspace(fake)
    async with RpcClient.spawn(args=ARGS, cwd=root, env=env) as client:
        times = []
        for _ in range(count):
            t0 = time.perf_counter()
            await client.request({"type": "get_state"})
            times.append(time.perf_counter() - t0)
    times.sort()
    return {
        "count": count,
        "p50_ms": times[len(times) // 2] * 1000,
        "p99_ms": times[int(len(times) * 0.99) - 1] * 1000,
        "mean_ms": statistics.fmean(times) * 1000,
    }


async def streaming(fake: FakeLLM, deltas: int) -> dict[str, Any]:
    root, env = _workspace(fake)
    fake.script(script.Reply(text=[f"token{i} " for i in range(deltas)]))
    # every frame is counted below, so the client keeps its whole history
    async with RpcClient.spawn(
        args=ARGS, cwd=root, env=env, timeout=600, history=None, history_bytes=None
    ) as client:
        mark = client.mark()
        t0 = time.perf_counter()
        await client.prompt("stream?")
        await client.wait_for_type("agent_end", since=mark, timeout=600)
        elapsed = time.perf_counter() - t0
        frames = client.frames[mark:]
        updates = sum(1 for f in frames if f.get("type") == "message_update")
        size = sum(len(json.dumps(f)) for f in frames)
        memory = _rss_kib(client.process.pid)
    return {
        "deltas": deltas,
        "message_update_frames": updates,
        "seconds": elapsed,
        "events_per_s": updates / elapsed,
        "frame_mb": size / 1e6,
        "frame_mb_per_s": size / 1e6 / elapsed,
        "rss_kib": memory,
    }


async def growth(fake: FakeLLM, sizes: list[int]) -> dict[str, Any]:
    root, env = _workspace(fake)
    rows = []
    async with RpcClient.spawn(args=ARGS, cwd=root, env=env, timeout=600) as client:
        turns = 0
        for size in sizes:
            while turns < size - 1:
                fake.script(script.text(f"answer {turns} " + "x" * 200))
                await client.prompt_and_wait(f"question {turns}? " + "y" * 200)
                turns += 1
            fake.script(script.text("last answer"))
            t0 = time.perf_counter()
            await client.prompt_and_wait("timed question?")
            prompt_s = time.perf_counter() - t0
            turns += 1
            t1 = time.perf_counter()
            await client.get_messages()
            messages_s = time.perf_counter() - t1
            t2 = time.perf_counter()
            await client.get_state()
            state_s = time.perf_counter() - t2
            rows.append(
                {
                    "turns": turns,
                    "prompt_round_s": prompt_s,
                    "get_messages_s": messages_s,
                    "get_state_s": state_s,
                    "request_bytes": len(fake.requests[-1].body),
                    "rss_kib": _rss_kib(client.process.pid),
                }
            )
    return {"rows": rows}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    quick = options.quick
    with FakeLLM() as fake:
        results = {
            "startup": await startup(fake, 3 if quick else 7),
            "round_trip": await round_trip(fake, 200 if quick else 1000),
            "streaming": await streaming(fake, 2000 if quick else 10000),
            "growth": await growth(fake, [10, 50] if quick else [10, 100, 300]),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "rpc.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
