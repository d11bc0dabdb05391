"""Entry point of RPC mode: claim stdio, build the server, serve until stdin ends."""

from __future__ import annotations

import asyncio
import logging
import os
import select
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from xcsh.coding.session import AgentSession
from xcsh.modes.rpc import features
from xcsh.modes.rpc.server import RpcServer
from xcsh.modes.rpc.stdio import FrameWriter, StdinReader
from xcsh.modes.rpc.updates import MessageUpdates
from xcsh.modes.signals import StopHandlers

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import FrameSink

logger = logging.getLogger(__name__)


def build_server(
    session: AgentSession,
    writer: FrameSink,
    *,
    protocol_fixes: bool = False,
    message_updates: MessageUpdates = "full",
) -> RpcServer:
    """The command core for ``session``: every handler and feature hook installed.

    ``xcsh --mode rpc`` (below) and the in-process API (``xcsh.open_session``) both serve
    through this one server; they differ only in where frames come from and go to.
    """
    server = RpcServer(session, writer, protocol_fixes=protocol_fixes, message_updates=message_updates)
    features.install(server)
    if protocol_fixes:
        from xcsh.modes.rpc.settle import install as install_settle

        install_settle(server)
    return server


async def serve(
    session: AgentSession,
    frame_fd: int,
    *,
    protocol_fixes: bool = False,
    message_updates: MessageUpdates = "full",
) -> None:
    """Serve ``session`` on stdio until stdin reaches EOF."""
    check = None
    if os.environ.get("XCSH_RPC_CHECK_FRAMES"):  # the debug switch's module only when it may be on
        from xcsh.modes.rpc.frame_check import frame_check_from_env

        check = frame_check_from_env(os.environ)
    loop = asyncio.get_running_loop()
    reader = StdinReader(loop)
    writer = FrameWriter(frame_fd, check=check, stdin=reader, loop=loop)
    server = build_server(session, writer, protocol_fixes=protocol_fixes, message_updates=message_updates)
    try:
        await server.serve(reader)
    finally:
        writer.flush()


def _input_waiting(fd: int) -> bool:
    """Whether ``fd`` has input (or its end) to read right now."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def run_rpc(
    build_session: Callable[[], AgentSession],
    *,
    protocol_fixes: bool = False,
    message_updates: MessageUpdates = "full",
) -> int:
    """Claim stdout for frames, build the session, serve; exit code 0 at stdin EOF.

    Start-up errors raised by ``build_session`` propagate before any frame is written.
    """
    from xcsh.modes.rpc.stdio import claim_stdout, flush_frames

    frame_fd = claim_stdout()

    def leave(status: int) -> None:
        flush_frames()  # small frames of the last loop turn may still be gathered
        os._exit(status)

    async def main() -> None:
        from xcsh.modes.rpc.gc_pause import resume, resume_after_s

        asyncio.get_running_loop().call_later(resume_after_s(os.environ), resume)  # cli.main paused it
        session = build_session()
        stop = StopHandlers(lambda: session, exit=leave)
        if _input_waiting(0):
            # A host that wrote its first command before we were ready gets the answer first:
            # the loop's handlers (~0.5 ms: asyncio checks each signal against every valid one)
            # are installed once the loop has handled the input already there (a timer due now
            # runs after the loop turn's I/O callbacks); a signal meanwhile is noted and handled
            # then. An idle host gets them before the ready frame.
            stop.hold()
            asyncio.get_running_loop().call_later(0, stop.install)
        else:
            stop.install()
        await serve(session, frame_fd, protocol_fixes=protocol_fixes, message_updates=message_updates)
        await stop.settle()
        await session.shutdown_async()  # the loop stays free (a second signal exits at once)
        flush_frames()

    asyncio.run(main())
    if sys.stderr is not None:  # None when fd 2 was closed at start (cli/entry.py reopens it)
        sys.stderr.flush()
    # An in-flight run is not awaited at EOF (rpc-protocol §2.5): leave without joining tasks.
    os._exit(0)
