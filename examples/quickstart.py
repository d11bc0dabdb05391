"""Quick start: drive `xcsh --mode rpc` through the Python client on a real task.

It starts the agent in a fresh temporary directory, asks it to write a small program
and run it, and prints the streamed events as they arrive, with timings. With no
provider key configured, the agent uses the embedded offline model (`xcsh[local]`).

    python examples/quickstart.py                 # the default task
    python examples/quickstart.py "your task"     # your own task
    python examples/quickstart.py --model anthropic/claude-sonnet-4-5 "task"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from xcsh.rpc.client import RpcClient

DEFAULT_TASK = (
    "Create a Python file hello.py that prints 'hello world', run it with bash, and tell me what it printed."
)


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Printer:
    """Turns protocol frames into a readable transcript."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.streaming = False

    def stamp(self) -> str:
        return f"[{time.monotonic() - self.t0:6.1f}s]"

    def line(self, text: str) -> None:
        if self.streaming:
            sys.stdout.write("\n")
            self.streaming = False
        print(f"{self.stamp()} {text}", flush=True)

    def frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "message_update":
            event = frame["assistantMessageEvent"]
            if event["type"] in ("text_delta", "thinking_delta"):
                if not self.streaming:
                    sys.stdout.write(f"{self.stamp()} assistant: ")
                    self.streaming = True
                sys.stdout.write(event["delta"])
                sys.stdout.flush()
            return
        if kind == "message_start" and frame["message"]["role"] == "user":
            self.line(f"user: {_short(frame['message']['content'][0].get('text', ''))}")
        elif kind == "tool_execution_start":
            self.line(f"tool {frame['toolName']} {_short(frame['args'])}")
        elif kind == "tool_execution_end":
            text = "".join(
                b.get("text", "") for b in frame["result"].get("content", []) if b.get("type") == "text"
            )
            status = "error" if frame["isError"] else "ok"
            self.line(f"  → {status}: {_short(text)}")
        elif kind == "message_end" and frame["message"]["role"] == "assistant":
            message = frame["message"]
            if message.get("stopReason") in ("error", "aborted"):
                self.line(f"assistant stopped: {message.get('errorMessage')}")
        elif kind in ("auto_retry_start", "auto_compaction_start", "todo_reminder"):
            self.line(f"{kind}: {_short({k: v for k, v in frame.items() if k != 'type'})}")


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("task", nargs="?", default=DEFAULT_TASK)
    parser.add_argument("--model", help="model selector (default: the first available model)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the task")
    options = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="xcsh-quickstart-"))
    args = ["--no-session", "--tools", "read,write,edit,bash,ls"]
    if options.model:
        args += ["--model", options.model]
    printer = Printer()
    print(f"Working directory: {workdir}")
    started = time.monotonic()
    async with RpcClient.spawn(args=args, cwd=workdir, timeout=options.timeout) as client:
        state = await client.get_state()
        model = state["model"]
        print(f"Model: {model['provider']}/{model['id']} ({model['name']})")
        printer.t0 = time.monotonic()
        events = client.events()
        mark = client.mark()
        await client.prompt(options.task)

        async def show() -> None:
            async for frame in events:
                printer.frame(frame)

        shower = asyncio.ensure_future(show())
        await client.wait_for_idle(since=mark, timeout=options.timeout)
        shower.cancel()
        answer = await client.get_last_assistant_text()
    printer.line(f"done in {time.monotonic() - started:.1f}s")
    print(f"\nFinal answer:\n{answer or '(none)'}")
    print(f"\nFiles in {workdir}: {sorted(p.name for p in workdir.iterdir())}")
    return 0 if answer else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
