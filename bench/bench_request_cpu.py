"""Benchmark: the agent's CPU for one short streamed request, in-process, per wire (fake LLM on loopback).

Run as ``python bench/bench_request_cpu.py [requests] [--profile FILE] [--compare-anyio]``
(default 500). Each
request is one ``complete()`` of a one-message context answered by a short text, with an abort
signal as the agent passes; the fake LLM
runs in its own thread, so ``time.thread_time()`` of the event loop's thread is the agent's
side: building the body, ``httpx2``'s request and response handling, the SSE decoding and the
message builder. Prints the median and p10 per wire. ``--profile`` writes a cProfile of the
OpenAI chat run (thread CPU as its clock). ``--compare-anyio`` alternates each request with
one on a second client whose pool reads and writes through ``httpcore2``'s default (anyio)
network backend instead of :mod:`xcsh.ai.netstream`, in the same process and minutes, and
prints both (the A/B of docs/decisions.md's network-backend entry; the second client's backend
is set on its pool, a private attribute, which only this benchmark touches). Nothing is
asserted. docs/performance.md, "Fourth session: per-request HTTP cost" and "Sixth session:
per-prompt CPU".
"""

from __future__ import annotations

import asyncio
import cProfile
import statistics
import sys
import time
from typing import Any

from xcsh.ai.abort import AbortController
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import complete
from xcsh.testing import script
from xcsh.testing.fake_llm import running

WIRES = (("openai-completions", "/v1"), ("anthropic-messages", ""), ("openai-responses", "/v1"))


def _model(api: str, base_url: str) -> Any:
    return {
        "id": "m",
        "name": "m",
        "api": api,
        "provider": "fake",
        "baseUrl": base_url,
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 100000,
        "maxTokens": 100,
    }


async def _run(api: str, base_url: str, count: int, profile: cProfile.Profile | None) -> list[float]:
    model = _model(api, base_url)
    options = StreamOptions(api_key="k")
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
    await complete(model, context, options)  # imports and the pooled connection
    cpu_us: list[float] = []
    for _ in range(count):
        options.signal = AbortController().signal  # as the agent passes one per prompt
        if profile is not None:
            profile.enable()
        start = time.thread_time()
        message = await complete(model, context, options)
        cpu_us.append((time.thread_time() - start) * 1e6)
        if profile is not None:
            profile.disable()
        assert message.get("stopReason") == "stop", message.get("errorMessage")
    return cpu_us


async def _compare(api: str, base_url: str, count: int) -> tuple[list[float], list[float]]:
    """Agent-thread CPU per request (µs) of the usual client and of one on the anyio backend, interleaved."""
    import httpcore2

    from xcsh.ai.transport import pooled_client

    usual, other = _model(api, base_url), _model(api, base_url.rstrip("/") + "/")  # two pooled clients
    options = StreamOptions(api_key="k")
    vendor = "anthropic" if api.startswith("anthropic") else "openai"
    pooled_client(vendor, other, options).client._transport._pool._network_backend = httpcore2.AnyIOBackend()
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
    await complete(usual, context, options)
    await complete(other, context, options)
    results: dict[int, list[float]] = {0: [], 1: []}
    for i in range(2 * count):
        which = (i + i // 2) % 2  # 0 1 1 0 0 1 1 0 …: neither always goes first
        options.signal = AbortController().signal
        start = time.thread_time()
        message = await complete(usual if which == 0 else other, context, options)
        results[which].append((time.thread_time() - start) * 1e6)
        assert message.get("stopReason") == "stop", message.get("errorMessage")
    return results[0], results[1]


def main() -> None:
    args = sys.argv[1:]
    profile_path = None
    if "--profile" in args:
        at = args.index("--profile")
        profile_path = args[at + 1]
        del args[at : at + 2]
    compare = "--compare-anyio" in args
    if compare:
        args.remove("--compare-anyio")
    count = int(args[0]) if args else 500
    if compare:
        print("| wire | median / p10 (µs) | anyio backend: median / p10 (µs) | change |\n|---|---|---|---|")
        with running() as fake:
            for api, suffix in WIRES:
                fake.script(*(script.text("a short answer") for _ in range(2 * count + 2)))
                ours, anyio = asyncio.run(_compare(api, fake.base_url + suffix, count))
                fake.clear_requests()
                (m1, p1), (m2, p2) = (
                    (statistics.median(x), statistics.quantiles(x, n=10)[0]) for x in (ours, anyio)
                )
                print(
                    f"| {api} | {m1:.0f} / {p1:.0f} | {m2:.0f} / {p2:.0f} | {m1 / m2 - 1:+.0%} / {p1 / p2 - 1:+.0%} |"
                )
        return
    print("| wire | median (µs) | p10 (µs) |\n|---|---|---|")
    with running() as fake:
        for api, suffix in WIRES:
            fake.script(*(script.text("a short answer") for _ in range(count + 1)))
            profile = cProfile.Profile(time.thread_time) if profile_path and api == WIRES[0][0] else None
            cpu_us = asyncio.run(_run(api, fake.base_url + suffix, count, profile))
            fake.clear_requests()
            p10 = statistics.quantiles(cpu_us, n=10)[0]
            print(f"| {api} | {statistics.median(cpu_us):.0f} | {p10:.0f} |")
            if profile is not None and profile_path:
                profile.dump_stats(profile_path)


if __name__ == "__main__":
    main()
