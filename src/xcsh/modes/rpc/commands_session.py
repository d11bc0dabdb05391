"""Handlers for session commands (rpc-protocol §5.9–§5.10)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from xcsh.coding.sessions.context import last_assistant_text
from xcsh.modes.rpc.server import NO_DATA
from xcsh.modes.rpc.shapes import stats_payload

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer
    from xcsh.rpc import commands as c


async def new_session(server: RpcServer, cmd: c.NewSessionCommand) -> Any:
    done = await server.session.new_session(cmd.get("parentSession"))
    return {"cancelled": not done}


async def switch_session(server: RpcServer, cmd: c.SwitchSessionCommand) -> Any:
    done = await server.session.switch_session(cmd["sessionPath"])
    return {"cancelled": not done}


async def branch(server: RpcServer, cmd: c.BranchCommand) -> Any:
    text, cancelled = await server.session.branch(cmd["entryId"])
    return {"text": text, "cancelled": cancelled}


async def get_branch_messages(server: RpcServer, cmd: c.GetBranchMessagesCommand) -> Any:
    return {"messages": [{"entryId": i, "text": t} for i, t in server.session.branch_messages()]}


async def get_last_assistant_text(server: RpcServer, cmd: c.GetLastAssistantTextCommand) -> Any:
    text = last_assistant_text(server.session.messages)
    return {} if text is None else {"text": text}


async def set_session_name(server: RpcServer, cmd: c.SetSessionNameCommand) -> Any:
    server.session.set_session_name(cmd["name"])
    return NO_DATA


async def get_session_stats(server: RpcServer, cmd: c.GetSessionStatsCommand) -> Any:
    return stats_payload(server.session.stats())


async def export_html(server: RpcServer, cmd: c.ExportHtmlCommand) -> Any:
    from xcsh.coding.export.html import prepare_export  # markdown and Pygments: loaded on use

    job = prepare_export(server.session, cmd.get("outputPath"))
    # rendering a long session takes seconds: in a worker thread, so a run's events and the
    # control frames (abort, host tool results) keep flowing; later commands still wait (§2.4)
    await asyncio.to_thread(job.run)
    return {"path": job.output}


HANDLERS: dict[str, Handler] = {
    "new_session": new_session,
    "switch_session": switch_session,
    "branch": branch,
    "get_branch_messages": get_branch_messages,
    "get_last_assistant_text": get_last_assistant_text,
    "set_session_name": set_session_name,
    "get_session_stats": get_session_stats,
    "export_html": export_html,
}
