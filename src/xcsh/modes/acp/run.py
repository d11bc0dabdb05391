"""Entry point of ACP mode: claim stdio, serve the Agent Client Protocol until stdin ends."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, cast

from xcsh.coding.factory import StartupOptions, create_session


class _WritePipe(asyncio.Protocol):
    """Write-side protocol with the flow control a ``StreamWriter`` needs for ``drain()``."""

    def __init__(self) -> None:
        self._paused = False
        self._resumed: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)
        self._resumed = None

    async def _drain_helper(self) -> None:
        if self._paused:
            self._resumed = asyncio.get_running_loop().create_future()
            await self._resumed


async def _streams(frame_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    protocol = _WritePipe()
    transport: Any
    transport, _ = await loop.connect_write_pipe(lambda: protocol, os.fdopen(frame_fd, "wb", buffering=0))
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def run_acp(options: StartupOptions) -> int:
    """Serve ACP on stdio; exit code 0 when the client closes stdin."""
    from acp import Agent, run_agent

    from xcsh.modes.acp.agent import XcshAcpAgent
    from xcsh.modes.rpc.stdio import claim_stdout

    frame_fd = claim_stdout()

    async def main() -> None:
        from xcsh.modes.signals import install_stop_handlers

        install_stop_handlers(lambda: None)  # ends the shells' process groups, then exits
        agent = XcshAcpAgent(options, create_session)
        reader, writer = await _streams(frame_fd)
        try:
            # methods the agent lacks (modes, config options …) are answered "method not found"
            await run_agent(cast("Agent", agent), writer, reader)
        finally:
            await agent.close()

    asyncio.run(main())
    sys.stderr.flush()
    os._exit(0)
