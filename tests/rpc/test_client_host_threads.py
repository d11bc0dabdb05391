"""Host-tool answers are written from the client's event loop, whatever thread the handler uses.

The client's pipe to the agent is an asyncio transport, which is not thread-safe. A blocking
client's plain-function handler runs in a worker thread (``SyncRpcClient``), and its progress
updates were written from that thread: under a full pipe the write raised ``BufferError`` and
the tool failed (review 3 D5; tests/e2e/test_client_host_tools.py shows it end to end).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from xcsh.rpc.client_host import HostAnswers


async def test_updates_sent_from_a_worker_thread_are_written_by_the_loop_thread() -> None:
    loop_thread = threading.get_ident()
    written: list[tuple[int, dict[str, Any]]] = []
    answered = asyncio.Event()

    def send(frame: dict[str, Any]) -> None:  # where the client writes to the agent's stdin
        written.append((threading.get_ident(), frame))
        if frame["type"] == "host_tool_result":
            answered.set()

    def in_a_thread(args: dict[str, Any], update: Callable[[dict[str, Any]], None]) -> str:
        assert threading.get_ident() != loop_thread
        for i in range(3):
            update({"content": [{"type": "text", "text": f"step {i}"}]})
        return "done"

    async def handler(args: dict[str, Any], update: Callable[[dict[str, Any]], None]) -> Any:
        return await asyncio.to_thread(in_a_thread, args, update)

    host = HostAnswers(send)
    host.on_host_tool("slow", handler)
    host.handle({"type": "host_tool_call", "id": "call-1", "toolName": "slow", "arguments": {}})
    async with asyncio.timeout(10):
        await answered.wait()
    assert {thread for thread, _ in written} == {loop_thread}
    assert [frame["type"] for _, frame in written] == ["host_tool_update"] * 3 + ["host_tool_result"]
    assert [f["partialResult"]["content"][0]["text"] for _, f in written[:3]] == [
        "step 0",
        "step 1",
        "step 2",
    ]
