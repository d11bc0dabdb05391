"""Tool approvals over RPC: the gate asks through the extension UI ``confirm`` request.

The host answers ``{"type":"extension_ui_response","id":…,"confirmed":true|false}``; a
``timeout`` field on the request tells it how long the agent waits (rpc-protocol §8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xcsh.coding.approvals import approval_gate_for

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import RpcServer


def wire(server: RpcServer) -> None:
    """Let the session's approval gate (if approvals are on) ask the host."""
    gate = approval_gate_for(server.session)
    if gate is not None:
        from xcsh.modes.rpc.extension_ui import bridge_for  # the UI bridge: only when approvals are on

        gate.ui = bridge_for(server)
