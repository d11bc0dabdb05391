"""Benchmark: the agent's CPU for the 64 KiB tool-call answer, in-process, by how far its frames go.

Run as ``python bench/bench_delta_cpu.py [runs] [--frames none|encode|devnull|pipe]`` (default 3
runs, ``encode``). A real session (session file on disk) answers a prompt with one ``write`` call
whose 69 KB of JSON arguments arrive in 10-character deltas (the arguments of
``bench_probes.py``'s ``tool_arguments`` probe), then a short text; the fake LLM runs in its own
thread. The RPC server turns the session's events into frames, which go:

- ``none``: nowhere (no server; the provider, parser and event fan-out alone),
- ``encode``: encoded as the stdout writer encodes them, not written,
- ``devnull``: through the stdout writer into ``/dev/null`` (the write calls, no pipe),
- ``pipe``: through the stdout writer into a 1 MiB non-blocking pipe that a second process reads
  256 KiB at a time and splits into lines, as the probes' host does (the kernel's part: copying
  ~1 GB of frames into pipe pages while the reader takes them out).

Prints, per run, the event loop thread's CPU (``time.thread_time``: its user and system time)
and the process's user and system time (which include the fake LLM's thread). A first, small
tool call warms imports and the argument validator. Nothing is asserted. docs/performance.md,
"Eighth session: per-delta and per-prompt CPU".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probes import _prose

from xcsh.coding.factory import StartupOptions, create_session
from xcsh.modes.rpc.run import build_server
from xcsh.modes.rpc.stdio import FrameWriter, StdinReader
from xcsh.rpc.jsonl import encode_frame_into
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

READER = """
import os
buffer = b""
while chunk := os.read(0, 262144):
    buffer += chunk
    start = 0
    while (end := buffer.find(b"\\n", start)) >= 0:
        buffer[start:end].find(b'"type":"message_update"', 0, 200)
        start = end + 1
    buffer = buffer[start:]
"""


def _content(size: int = 64 * 1024) -> str:
    """The probe's file content: varied lines with quotes, tabs and newlines to escape."""
    lines: list[str] = []
    length = 0
    while length < size:
        lines.append(f'print("line {len(lines)}")\t# {_prose(len(lines), 50)}\n')
        length += len(lines[-1])
    return "".join(lines)[:size]


def _models_yml(base_url: str) -> str:
    return (
        f"providers:\n  fake:\n    baseUrl: {base_url}/v1\n    apiKey: k\n    api: openai-completions\n"
        "    models:\n      - id: fake-model\n        contextWindow: 10000000\n"
        "        maxTokens: 4096\n        reasoning: false\n"
    )


class _EncodeOnly:
    """A frame sink that encodes each frame as the stdout writer does and writes nothing."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def write(self, frame: Any) -> None:
        encode_frame_into(frame, self.buffer)


async def _run(runs: int, frames: str, pipe_fd: int) -> list[tuple[float, float, float]]:
    llm = FakeLLM().start()
    root = Path(tempfile.mkdtemp(prefix="xcsh-bench-delta-"))
    (root / "agent").mkdir()
    (root / "agent" / "models.yml").write_text(_models_yml(llm.base_url))
    session = create_session(
        StartupOptions(
            cwd=root, agent_dir=root / "agent", env={}, model="fake/fake-model", session_dir=root / "sessions"
        )
    )
    loop = asyncio.get_running_loop()
    writer: FrameWriter | None = None
    if frames == "encode":
        build_server(session, _EncodeOnly())
    elif frames == "devnull":
        writer = FrameWriter(os.open(os.devnull, os.O_WRONLY), loop=loop)
        build_server(session, writer)
    elif frames == "pipe":
        # a stdin reader makes the writer's pipe non-blocking and 1 MiB, as in `xcsh --mode rpc`
        stdin = StdinReader(loop, fd=os.open(os.devnull, os.O_RDONLY))
        writer = FrameWriter(pipe_fd, loop=loop, stdin=stdin)
        build_server(session, writer)
    content = _content()
    arguments = json.dumps({"path": "out.txt", "content": content})
    small = json.dumps({"path": "warm.txt", "content": "x" * 100})
    results = []
    try:
        for i in range(runs + 1):
            call = script.ToolCallSpec(f"call_{i}", "write", arguments if i else small, fragment_size=10)
            llm.script(script.Reply(tool_calls=[call]), script.text("written"))
            thread0, usage0 = time.thread_time(), resource.getrusage(resource.RUSAGE_SELF)
            task = session.start_prompt("write the file")
            if task is not None:
                await task
            thread1, usage1 = time.thread_time(), resource.getrusage(resource.RUSAGE_SELF)
            llm.clear_requests()
            if i:
                user, system = usage1.ru_utime - usage0.ru_utime, usage1.ru_stime - usage0.ru_stime
                results.append((thread1 - thread0, user, system))
        if (root / "out.txt").read_text() != content:
            raise RuntimeError("the file was not written as streamed")
    finally:
        llm.stop()
        if writer is not None:
            writer.flush()
            writer.closed = True  # the pipe is closed by the caller
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("runs", nargs="?", type=int, default=3)
    parser.add_argument("--frames", choices=("none", "encode", "devnull", "pipe"), default="encode")
    options = parser.parse_args()
    read_end, write_end = os.pipe()
    reader = subprocess.Popen([sys.executable, "-c", READER], stdin=read_end, stdout=subprocess.DEVNULL)
    os.close(read_end)
    try:
        results = asyncio.run(_run(max(1, options.runs), options.frames, write_end))
    finally:
        os.close(write_end)
        reader.wait(timeout=30)
    print(f"| run ({options.frames}) | loop thread CPU (s) | process user (s) | process system (s) |")
    print("|---|---|---|---|")
    for n, (thread, user, system) in enumerate(results, 1):
        print(f"| {n} | {thread:.3f} | {user:.3f} | {system:.3f} |")


if __name__ == "__main__":
    main()
