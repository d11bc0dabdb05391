"""Handlers for compaction, retry control and user bash (rpc-protocol §5.6–§5.8).

``compact`` and ``bash`` are long commands processed in order; ``abort_retry`` and
``abort_bash`` are control commands the server runs at once, so ``abort_bash`` stops
a ``bash`` command that is still running. Compaction failures raise
:class:`~xcsh.coding.compaction.errors.CompactionError`, which the server turns into
the ``parse`` error response the protocol specifies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xcsh.coding.compaction.compactor import compact_now
from xcsh.coding.retry import abort_retry as cancel_retry
from xcsh.coding.user_bash import abort_user_bash, run_user_bash
from xcsh.modes.rpc.server import NO_DATA

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer
    from xcsh.rpc import commands as c


async def compact(server: RpcServer, cmd: c.CompactCommand) -> Any:
    return await compact_now(server.session, cmd.get("customInstructions"))


async def abort_retry(server: RpcServer, cmd: c.AbortRetryCommand) -> Any:
    cancel_retry(server.session)
    return NO_DATA


async def bash(server: RpcServer, cmd: c.BashCommand) -> Any:
    return await run_user_bash(server.session, cmd["command"])


async def abort_bash(server: RpcServer, cmd: c.AbortBashCommand) -> Any:
    abort_user_bash(server.session)
    return NO_DATA


HANDLERS: dict[str, Handler] = {
    "compact": compact,
    "abort_retry": abort_retry,
    "bash": bash,
    "abort_bash": abort_bash,
}
