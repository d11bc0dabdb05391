"""``set_todos`` and ``set_host_tools`` (rpc-protocol §5.2) and the host-tool frame wiring (§7).

Invalid input raises (never :class:`CommandError`), so the server answers with the
``parse`` error the protocol specifies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xcsh.coding.host_tools import DISCONNECTED_TEXT, host_bridge_of
from xcsh.coding.host_tools import set_host_tools as set_host_tools_of
from xcsh.coding.todos import set_todos as set_todos_of

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer
    from xcsh.rpc import commands as c


async def set_todos(server: RpcServer, cmd: c.SetTodosCommand) -> Any:
    return {"todoPhases": set_todos_of(server.session, cmd["phases"])}


async def set_host_tools(server: RpcServer, cmd: c.SetHostToolsCommand) -> Any:
    return {"toolNames": set_host_tools_of(server.session, cmd["tools"])}


HANDLERS: dict[str, Handler] = {"set_todos": set_todos, "set_host_tools": set_host_tools}


def wire(server: RpcServer) -> None:
    """Connect the session's host-tool bridge to the server: outbound frames, results, updates, EOF."""
    bridge = host_bridge_of(server.session)
    if bridge is None:
        return
    bridge.connect(server.write)
    server.on_host_tool_result = bridge.handle_result
    server.on_host_tool_update = bridge.handle_update
    server.on_eof.append(lambda: bridge.reject_all(DISCONNECTED_TEXT))
