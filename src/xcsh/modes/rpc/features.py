"""RPC-side feature wiring, in one place: the command tables and the per-feature server hooks.

A feature that needs RPC commands adds its ``HANDLERS`` table to :data:`COMMAND_TABLES`
order, or — when its module is not needed before the first answer — the module's name and
command names to :data:`LAZY_TABLES`, which loads the module with its first command; one that
needs frames or EOF callbacks adds a ``wire(server)`` function to :func:`wirings`. Handlers
stay thin: parse fields, call one session operation, shape the answer.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xcsh.coding.extensions.feature import runner_for
from xcsh.modes.rpc import approvals, commands_core, commands_todos_hosts, warm

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer

COMMAND_TABLES: tuple[dict[str, Handler], ...] = (
    commands_core.HANDLERS,
    commands_todos_hosts.HANDLERS,
)

# Handler modules loaded with their first command (a start-up answers without them), each
# with the commands of its ``HANDLERS`` table (tests/modes/test_rpc_features.py compares them).
LAZY_TABLES: dict[str, tuple[str, ...]] = {
    "xcsh.modes.rpc.commands_session": (
        "new_session",
        "switch_session",
        "branch",
        "get_branch_messages",
        "get_last_assistant_text",
        "set_session_name",
        "get_session_stats",
        "export_html",
    ),
    "xcsh.modes.rpc.commands_ops": ("compact", "abort_retry", "bash", "abort_bash"),
    "xcsh.modes.rpc.commands_hosts": (
        "get_commands",
        "clear_queue",
        "list_sessions",
        "get_tree",
        "get_tools",
        "set_active_tools",
    ),
}


class LazyHandler:
    """A command's handler from a module of :data:`LAZY_TABLES`, imported on its first call."""

    def __init__(self, module: str, command: str) -> None:
        self.module = module
        self.command = command

    def resolve(self) -> Handler:
        """The handler itself (imports its module the first time)."""
        handler: Handler = importlib.import_module(self.module).HANDLERS[self.command]
        return handler

    async def __call__(self, server: RpcServer, cmd: Any) -> Any:
        return await self.resolve()(server, cmd)


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
    for module, commands in LAZY_TABLES.items():
        server.handlers.update((command, LazyHandler(module, command)) for command in commands)
    server.instant.update(commands_core.INSTANT)
    for wire in wirings():
        wire(server)
