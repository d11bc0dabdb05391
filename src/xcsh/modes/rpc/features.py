"""RPC-side feature wiring: extra command handlers and server hooks, one line per feature."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import RpcServer


def install(server: RpcServer) -> None:
    """Add every feature's command handlers and frame hooks to ``server``."""
    from xcsh.modes.rpc.commands_todos_hosts import install as install_todos_hosts

    install_todos_hosts(server)
    from xcsh.modes.rpc.commands_ops import install as install_ops

    install_ops(server)
    from xcsh.modes.rpc.extension_ui import install as install_extension_ui

    install_extension_ui(server)
    from xcsh.modes.rpc.approvals import install as install_approvals

    install_approvals(server)
    from xcsh.modes.rpc.commands_hosts import install as install_hosts

    install_hosts(server)
    from xcsh.modes.rpc.warm import install as install_warm

    install_warm(server)
