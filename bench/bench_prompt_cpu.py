"""Benchmark: the agent's own CPU per prompt as the history grows (in-process, fake LLM on loopback).

Run as ``python bench/bench_prompt_cpu.py [prompts]`` (default 300). A real session with its
session file on disk answers short prompts from the fake LLM, which runs in its own thread;
``time.thread_time()`` of the event loop's thread is the agent's work per prompt, apart from
the server's parsing and the harness around it, so it is far less noisy on a busy machine
than the wall-clock probe of ``bench_probes.py``. Prints the median of prompts 11–30 and of
the last 20 and their ratio (flat is ~1). Nothing is asserted. docs/performance.md, profile 15.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from xcsh.coding.factory import StartupOptions, create_session
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PROSE = "lorem ipsum dolor sit amet " * 8


def _models_yml(base_url: str) -> str:
    return (
        f"providers:\n  fake:\n    baseUrl: {base_url}/v1\n    apiKey: k\n    api: openai-completions\n"
        "    models:\n      - id: fake-model\n        contextWindow: 10000000\n"
        "        maxTokens: 4096\n        reasoning: false\n"
    )


async def _run(count: int) -> list[float]:
    llm = FakeLLM().start()
    try:
        llm.script(*(script.text(f"answer {i}: " + PROSE) for i in range(count)))
        root = Path(tempfile.mkdtemp(prefix="xcsh-bench-"))
        agent = root / "agent"
        agent.mkdir()
        (agent / "models.yml").write_text(_models_yml(llm.base_url))
        session = create_session(
            StartupOptions(
                cwd=root, agent_dir=agent, env={}, model="fake/fake-model", session_dir=root / "sessions"
            )
        )
        cpu_ms: list[float] = []
        for i in range(count):
            start = time.thread_time()
            task = session.start_prompt(f"question {i}? " + PROSE)
            if task is not None:
                await task
            cpu_ms.append((time.thread_time() - start) * 1000)
            llm.clear_requests()  # the server keeps no body (see FakeLLM.clear_requests)
        return cpu_ms
    finally:
        llm.stop()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    cpu_ms = asyncio.run(_run(max(count, 40)))
    early, late = statistics.median(cpu_ms[10:30]), statistics.median(cpu_ms[-20:])
    print("| measure | value |\n|---|---|")
    print(f"| prompts | {len(cpu_ms)} |")
    print(f"| agent-thread CPU per prompt, prompts 11-30 (ms) | {early:.2f} |")
    print(f"| agent-thread CPU per prompt, last 20 (ms) | {late:.2f} |")
    print(f"| last 20 / prompts 11-30 | {late / early:.2f} |")


if __name__ == "__main__":
    main()
