"""The in-process API: drive a session from Python without a subprocess.

`xcsh.open_session` runs the same command core as `xcsh --mode rpc` inside this event loop;
the session object has the RPC client's methods and sees the same events. This example
registers a host tool, asks the model to use it, streams the answer, and prints the tools
and the session tree.

    python examples/in_process.py                                   # first available model
    python examples/in_process.py --model anthropic/claude-sonnet-4-5
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from typing import Any

import xcsh

CLOCK_TOOL = {
    "name": "project_clock",
    "description": "The project's release date. Call it when asked about the release.",
    "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
}


async def release_date(arguments: dict[str, Any], update: Any) -> str:
    update({"content": [{"type": "text", "text": "looking it up"}]})
    return "The release is on 2027-03-01."


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="model selector (default: the first available model)")
    parser.add_argument("--prompt", default="When is the release? Use the project_clock tool.")
    options = parser.parse_args()

    args = ["--no-session", "--no-tools", "--no-todo-defaults"]
    if options.model:
        args += ["--model", options.model]
    with tempfile.TemporaryDirectory(prefix="xcsh-in-process-") as workdir:
        async with xcsh.open_session(cwd=workdir, args=args) as session:
            # host tools work as over the wire: the client answers host_tool_call frames
            await session.set_host_tools([CLOCK_TOOL])
            session.on_host_tool("project_clock", release_date)

            events = session.events()

            async def show() -> None:
                async for frame in events:
                    if frame["type"] == "message_update":
                        delta = frame["assistantMessageEvent"]
                        if delta["type"] == "text_delta":
                            sys.stdout.write(delta["delta"])
                            sys.stdout.flush()
                    elif frame["type"] == "tool_execution_start":
                        print(f"[tool {frame['toolName']}]")

            printer = asyncio.ensure_future(show())
            await session.prompt_and_wait(options.prompt)
            printer.cancel()
            print()
            answer = await session.get_last_assistant_text()
            tools = [t["name"] for t in await session.get_tools() if t["active"]]
            tree = await session.get_tree()
            print(f"answer: {answer}")
            print(f"active tools: {', '.join(tools)}")
            print(f"entries on the active branch: {len(tree['path'])}")
    return 0 if answer else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
