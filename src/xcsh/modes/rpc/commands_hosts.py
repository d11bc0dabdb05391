"""Handlers of the commands hosts asked for beyond the reference (docs/host-commands.md).

``get_commands``, ``clear_queue``, ``list_sessions``, ``get_tree``, ``get_tools`` and
``set_active_tools``: thin adapters over :mod:`xcsh.coding.host_ops`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xcsh.coding.errors import CommandError

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer
    from xcsh.rpc import commands as c


async def get_commands(server: RpcServer, cmd: c.GetCommandsCommand) -> Any:
    from xcsh.coding import host_ops  # on first use, not at start-up

    return host_ops.list_commands(server.session)


async def clear_queue(server: RpcServer, cmd: c.ClearQueueCommand) -> Any:
    from xcsh.coding import host_ops  # on first use, not at start-up

    return host_ops.clear_queue(server.session)


async def list_sessions(server: RpcServer, cmd: c.ListSessionsCommand) -> Any:
    from xcsh.coding import host_ops  # on first use, not at start-up

    scope = cmd.get("scope") or "cwd"
    if scope not in ("cwd", "all"):
        raise CommandError(f"Invalid scope: {scope}. Valid scopes: cwd, all")
    return host_ops.list_sessions(server.session, "all" if scope == "all" else "cwd")


async def get_tree(server: RpcServer, cmd: c.GetTreeCommand) -> Any:
    from xcsh.coding import host_ops  # on first use, not at start-up

    return host_ops.entry_tree(server.session)


async def get_tools(server: RpcServer, cmd: c.GetToolsCommand) -> Any:
    from xcsh.coding import host_ops  # on first use, not at start-up

    return host_ops.tool_infos(server.session)


async def set_active_tools(server: RpcServer, cmd: c.SetActiveToolsCommand) -> Any:
    from xcsh.coding import host_ops  # on first use, not at start-up

    return host_ops.set_active_tools(server.session, cmd["toolNames"])


HANDLERS: dict[str, Handler] = {
    "get_commands": get_commands,
    "clear_queue": clear_queue,
    "list_sessions": list_sessions,
    "get_tree": get_tree,
    "get_tools": get_tools,
    "set_active_tools": set_active_tools,
}
