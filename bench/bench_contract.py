"""What strict validation costs: `get_state` round trips and streaming, this tree vs. another.

Run: ``python bench/bench_contract.py [--before PATH] [--rounds N]``. ``--before`` is the
``src`` directory of another checkout (e.g. ``git worktree add /tmp/before <commit>``);
both servers are driven by this tree's client, in alternating rounds, so the machine's
load affects both alike. Also times the validation call itself in-process. Prints a
table and writes ``bench/results/contract.json``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from xcsh.rpc.client import RpcClient
from xcsh.rpc.protocol import SPECS, check
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rpc import ARGS, _workspace

RESULTS = Path(__file__).resolve().parent / "results"
HERE = Path(__file__).resolve().parents[1] / "src"


def _env(base: dict[str, str], src: Path) -> dict[str, str]:
    env = dict(base)
    env["PYTHONPATH"] = str(src)
    return env


async def round_trips(fake: FakeLLM, src: Path, count: int) -> list[float]:
    root, env = _workspace(fake)
    async with RpcClient.spawn(args=ARGS, cwd=root, env=_env(env, src)) as client:
        for _ in range(50):  # warm up
            await client.request({"type": "get_state"})
        times = []
        for _ in range(count):
            t0 = time.perf_counter()
            await client.request({"type": "get_state"})
            times.append(time.perf_counter() - t0)
    return times


async def stream(fake: FakeLLM, src: Path, deltas: int) -> float:
    root, env = _workspace(fake)
    fake.script(script.Reply(text=[f"token{i} " for i in range(deltas)]))
    async with RpcClient.spawn(args=ARGS, cwd=root, env=_env(env, src), timeout=600, history=100) as client:
        mark = client.mark()
        t0 = time.perf_counter()
        await client.prompt("stream?")
        await client.wait_for_type("agent_end", since=mark, timeout=600)
        return deltas / (time.perf_counter() - t0)


def validation_cost_us() -> dict[str, float]:
    frames = {
        "get_state": {"id": "1", "type": "get_state"},
        "prompt": {"id": "2", "type": "prompt", "message": "hello " * 20},
        "set_todos": {
            "type": "set_todos",
            "phases": [{"id": "p", "name": "P", "tasks": [{"id": f"t{i}", "content": "c", "status": "pending"}
                                                         for i in range(10)]}],
        },
    }  # fmt: skip
    out = {}
    for name, frame in frames.items():
        spec = SPECS[name]
        n = 20_000
        t0 = time.perf_counter()
        for _ in range(n):
            check(spec, frame)
        out[name] = (time.perf_counter() - t0) / n * 1e6
    return out


def _p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="src/ of the checkout to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--deltas", type=int, default=2000)
    args = parser.parse_args()
    trees = {"after": HERE}
    if args.before is not None:
        trees["before"] = args.before.resolve()
    trips: dict[str, list[float]] = {k: [] for k in trees}
    rates: dict[str, list[float]] = {k: [] for k in trees}
    with FakeLLM() as fake:
        for _ in range(args.rounds):
            for name, src in trees.items():
                trips[name] += await round_trips(fake, src, args.count)
                rates[name].append(await stream(fake, src, args.deltas))
    result: dict[str, Any] = {"validation_us": validation_cost_us()}
    for name in trees:
        result[name] = {
            "get_state_p50_ms": _p(trips[name], 0.5),
            "get_state_p99_ms": _p(trips[name], 0.99),
            "get_state_mean_ms": statistics.fmean(trips[name]) * 1000,
            "stream_deltas_per_s_median": statistics.median(rates[name]),
            "stream_rounds": rates[name],
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "contract.json").write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"validation per command (µs): {', '.join(f'{k} {v:.1f}' for k, v in result['validation_us'].items())}"
    )
    print(f"{'tree':8} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'deltas/s':>10}")
    for name in trees:
        row = result[name]
        print(
            f"{name:8} {row['get_state_p50_ms']:8.3f} {row['get_state_p99_ms']:8.3f} "
            f"{row['get_state_mean_ms']:8.3f} {row['stream_deltas_per_s_median']:10.0f}"
        )


if __name__ == "__main__":
    os.environ.setdefault("XCSH_LOG_LEVEL", "ERROR")
    asyncio.run(main())
