"""Command handler modules that a start-up does not need are loaded with their first command.

``xcsh.modes.rpc.features.LAZY_TABLES`` names each such module with its commands, so the
server can route them before the module is imported; the names must be exactly the module's
own ``HANDLERS`` table, or a command would be lost (or answered "Unknown command").
"""

from __future__ import annotations

import importlib

from conftest import Workspace
from xcsh.api import open_session
from xcsh.modes.rpc.features import LAZY_TABLES, LazyHandler


def test_each_lazily_loaded_table_lists_exactly_its_modules_commands() -> None:
    for module, commands in LAZY_TABLES.items():
        assert tuple(importlib.import_module(module).HANDLERS) == commands, module


def test_a_lazy_handler_resolves_to_the_modules_own_handler() -> None:
    for module, commands in LAZY_TABLES.items():
        table = importlib.import_module(module).HANDLERS
        for command in commands:
            assert LazyHandler(module, command).resolve() is table[command]


async def test_commands_of_lazily_loaded_modules_answer_as_before(workspace: Workspace) -> None:
    async with open_session(
        workspace.proj,
        args=["--model", "fake/fake-model", "--session-dir", str(workspace.sess)],
        agent_dir=workspace.agent,
        env=workspace.env,
    ) as session:
        stats = await session.request({"id": "a", "type": "get_session_stats"})  # commands_session
        tree = await session.request({"id": "b", "type": "get_tree"})  # commands_hosts
        retry = await session.request({"id": "c", "type": "abort_retry"})  # commands_ops
    assert stats["success"] is True and stats["data"]["sessionId"]
    assert tree["success"] is True and tree["command"] == "get_tree"
    assert retry == {"id": "c", "type": "response", "command": "abort_retry", "success": True}
