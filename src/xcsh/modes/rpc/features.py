"""RPC-side feature wiring, in one place: the command tables and the per-feature server hooks.

A feature that needs RPC commands adds its ``HANDLERS`` table to :data:`COMMAND_TABLES`
order; one that needs frames or EOF callbacks adds a ``wire(server)`` function to
:func:`wirings`. Handlers stay thin: parse fields, call one session operation, shape
the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xcsh.coding.extensions.feature import runner_for
from xcsh.modes.rpc import (
    approvals,
    commands_core,
    commands_hosts,
    commands_ops,
    commands_session,
    commands_todos_hosts,
    warm,
)

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer

COMMAND_TABLES: tuple[dict[str, Handler], ...] = (
    commands_core.HANDLERS,
    commands_session.HANDLERS,
    commands_todos_hosts.HANDLERS,
    commands_ops.HANDLERS,
    commands_hosts.HANDLERS,
)


def wirings() -> list[Callable[[RpcServer], None]]:
    """Server hooks of the features (host tools, the extension UI, approvals, provider warm-up), in order."""
    return [commands_todos_hosts.wire, _extension_ui, approvals.wire, warm.wire]


def _extension_ui(server: RpcServer) -> None:
    """The extension UI, for a session with extensions: its bridge's code is loaded only then."""
    if runner_for(server.session) is None:
        return
    from xcsh.modes.rpc import extension_ui

    extension_ui.wire(server)


def install(server: RpcServer) -> None:
    """Register every command handler and feature hook on ``server``."""
    for table in COMMAND_TABLES:
        server.handlers.update(table)
    server.instant.update(commands_core.INSTANT)
    for wire in wirings():
        wire(server)
