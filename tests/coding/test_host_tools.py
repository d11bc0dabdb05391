"""Host tool definitions, registration in a real session, and the call bridge's frame exchange."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from coding.session_helpers import workspace_session
from conftest import Workspace
from xcsh.ai.abort import AbortController
from xcsh.coding.host_tools import (
    DISCONNECTED_TEXT,
    HostToolBridge,
    HostToolDefinitionError,
    HostToolError,
    error_text,
    normalize_definitions,
)
from xcsh.coding.session import AgentSession

SCHEMA = {"type": "object", "properties": {"m": {"type": "string"}}}


def _session(ws: Workspace) -> AgentSession:
    return workspace_session(ws, no_tools=True, rpc_mode=True)


def _tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name} tool", "parameters": SCHEMA, **extra}


def test_definitions_are_trimmed_labelled_and_hidden_only_when_true() -> None:
    raw = [
        {"name": " a ", "description": " d ", "parameters": {}, "label": "  "},
        {"name": "b", "description": "e", "parameters": SCHEMA, "label": " B ", "hidden": "yes"},
        {"name": "c", "description": "f", "parameters": {}, "hidden": True},
    ]
    assert normalize_definitions(raw) == [
        {"name": "a", "label": "a", "description": "d", "parameters": {}, "hidden": False},
        {"name": "b", "label": "B", "description": "e", "parameters": SCHEMA, "hidden": False},
        {"name": "c", "label": "c", "description": "f", "parameters": {}, "hidden": True},
    ]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            [{"name": "ok", "description": "d", "parameters": {}}, "junk"],
            "Host tool at index 1 must provide a non-empty name",
        ),
        (
            [{"name": 3, "description": "d", "parameters": {}}],
            "Host tool at index 0 must provide a non-empty name",
        ),
        ([{"name": "x", "parameters": {}}], 'Host tool "x" must provide a non-empty description'),
        ([{"name": "x", "description": "d"}], 'Host tool "x" must provide a JSON Schema object'),
        (
            [{"name": "x", "description": "d", "parameters": "{}"}],
            'Host tool "x" must provide a JSON Schema object',
        ),
    ],
)
def test_invalid_definitions_raise_the_protocol_text(tools: list[Any], message: str) -> None:
    with pytest.raises(HostToolDefinitionError) as info:
        normalize_definitions(tools)
    assert str(info.value) == message


def test_error_text_joins_text_blocks_or_falls_back() -> None:
    assert (
        error_text(
            {"content": [{"type": "text", "text": " a"}, {"type": "image"}, {"type": "text", "text": "b "}]}
        )
        == "a\nb"
    )
    assert error_text({"content": [{"type": "text", "text": "  "}]}) == "Host tool execution failed"


def test_registration_activates_new_tools_and_keeps_previous_state(workspace: Workspace) -> None:
    session = _session(workspace)
    bridge = HostToolBridge(session, lambda frame: None)
    assert bridge.set_tools(normalize_definitions([_tool("a"), _tool("h", hidden=True)])) == ["a", "h"]
    assert session.has_tool("h") and session.active_tool_names == ["a"]
    assert [t.name for t in session.active_tools()] == ["a"] and "a" in session.system_prompt
    tool = session.tool("a")
    assert tool is not None and (tool.concurrency, tool.abortable) == ("shared", True)
    session.set_active_tools([])  # deactivated by someone else: kept tools keep that state
    bridge.set_tools(normalize_definitions([_tool("a"), _tool("b")]))
    assert session.active_tool_names == ["b"] and not session.has_tool("h")
    bridge.set_tools([])
    assert session.active_tool_names == [] and not (session.has_tool("a") or session.has_tool("b"))


def test_registration_refuses_duplicates_and_other_tools_names(workspace: Workspace) -> None:
    session = _session(workspace)
    bridge = HostToolBridge(session, lambda frame: None)
    bridge.set_tools(normalize_definitions([_tool("a")]))
    with pytest.raises(HostToolDefinitionError, match=r"^RPC host tool names must be unique$"):
        bridge.set_tools(normalize_definitions([_tool("b"), _tool("b")]))
    for taken in ("bash", "todo_write"):
        with pytest.raises(HostToolDefinitionError) as info:
            bridge.set_tools(normalize_definitions([_tool(taken)]))
        assert str(info.value) == f'RPC host tool "{taken}" conflicts with an existing tool'
    assert bridge.names == ["a"] and session.active_tool_names == ["a"]


class Sent:
    """The bridge's ``send``: records frames and lets the test await each one."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def __call__(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        self._queue.put_nowait(frame)

    async def next(self) -> dict[str, Any]:
        async with asyncio.timeout(5):
            return await self._queue.get()


async def test_a_call_streams_updates_and_resolves_with_the_host_result(workspace: Workspace) -> None:
    sent = Sent()
    frames = sent.frames
    updates: list[Any] = []
    bridge = HostToolBridge(_session(workspace), sent)
    task = asyncio.ensure_future(
        bridge.call("a", "call-1", {"m": "x"}, AbortController().signal, updates.append)
    )
    call = await sent.next()
    assert re.fullmatch(r"[0-9a-f]{16}", call["id"]) and bridge.pending_ids == [call["id"]]
    assert call == {
        "type": "host_tool_call",
        "id": call["id"],
        "toolCallId": "call-1",
        "toolName": "a",
        "arguments": {"m": "x"},
    }
    bridge.handle_update({"id": "other", "partialResult": {"content": []}})
    bridge.handle_update({"id": call["id"], "partialResult": {"content": [], "n": 1}})
    result = {"content": [{"type": "text", "text": "done"}], "details": {"k": 1}}
    bridge.handle_result({"id": call["id"], "result": result})
    bridge.handle_result({"id": call["id"], "result": {"content": []}})  # settled: ignored
    async with asyncio.timeout(5):
        assert await task == result
    assert updates == [{"content": [], "n": 1}] and bridge.pending_ids == [] and len(frames) == 1


async def test_error_results_abort_and_disconnection_fail_the_call(workspace: Workspace) -> None:
    sent = Sent()
    frames = sent.frames
    bridge = HostToolBridge(_session(workspace), sent)
    controller = AbortController()
    failing = asyncio.ensure_future(bridge.call("a", "c1", {}, None, lambda p: None))
    aborted = asyncio.ensure_future(bridge.call("b", "c2", {}, controller.signal, lambda p: None))
    orphaned = asyncio.ensure_future(bridge.call("c", "c3", {}, None, lambda p: None))
    for _ in range(3):
        await sent.next()
    ids = {f["toolName"]: f["id"] for f in frames}
    bridge.handle_result(
        {"id": ids["a"], "isError": True, "result": {"content": [{"type": "text", "text": "boom"}]}}
    )
    controller.abort()
    assert frames[3] == {"type": "host_tool_cancel", "id": frames[3]["id"], "targetId": ids["b"]}
    assert frames[3]["id"] not in ids.values()
    bridge.reject_all()
    async with asyncio.timeout(5):
        outcomes = await asyncio.gather(failing, aborted, orphaned, return_exceptions=True)
    assert [type(o) for o in outcomes] == [HostToolError] * 3
    assert [str(o) for o in outcomes] == ["boom", 'Host tool "b" was aborted', DISCONNECTED_TEXT]
    assert len(frames) == 4 and bridge.pending_ids == []


async def test_an_already_aborted_signal_fails_at_once_without_frames(workspace: Workspace) -> None:
    frames: list[dict[str, Any]] = []
    bridge = HostToolBridge(_session(workspace), frames.append)
    controller = AbortController()
    controller.abort()
    with pytest.raises(HostToolError, match=r'^Host tool "a" was aborted$'):
        await bridge.call("a", "c1", {}, controller.signal, lambda p: None)
    assert frames == []
