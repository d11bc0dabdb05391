"""Host tools: tools the RPC host defines and runs itself (rpc-protocol §5.2 ``set_host_tools``, §7).

:func:`normalize_definitions` validates a ``set_host_tools`` list with the protocol's
exact error strings. :class:`HostToolBridge` registers the tools in the session and
runs each call as a frame exchange: it writes ``host_tool_call`` (and ``host_tool_cancel``
on abort) through ``send`` and settles the call when the host's ``host_tool_result``
arrives; ``host_tool_update`` frames become tool progress updates.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

import msgspec

from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortSignal

if TYPE_CHECKING:
    from xcsh.agent.types import AgentToolResult, ToolUpdate
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession

    # Only annotations name it: created at run time, its five string annotations would each
    # compile a ForwardRef at start-up (docs/performance.md, "Seventh session: start-up").
    class HostToolDefinition(TypedDict):
        """A normalised host tool definition (``RpcHostToolDefinition``)."""

        name: str
        label: str
        description: str
        parameters: dict[str, Any]
        hidden: NotRequired[bool]


logger = logging.getLogger(__name__)

DISCONNECTED_TEXT = "RPC client disconnected before host tool execution completed"
FAILED_TEXT = "Host tool execution failed"


class HostToolDefinitionError(ValueError):
    """A ``set_host_tools`` list is invalid; the message is the protocol's error text."""


class HostToolError(Exception):
    """A host tool call failed (error result from the host, abort, or disconnection)."""


def _no_host(frame: dict[str, Any]) -> None:
    raise HostToolError("no host is connected")


def aborted_text(name: str) -> str:
    return f'Host tool "{name}" was aborted'


def normalize_definitions(tools: list[Any]) -> list[HostToolDefinition]:
    """Validate and normalise each definition in order (names and descriptions trimmed).

    Raises :class:`HostToolDefinitionError` with the first failing check's text.
    """
    out: list[HostToolDefinition] = []
    for index, tool in enumerate(tools):
        raw = tool if isinstance(tool, dict) else {}
        name = raw["name"].strip() if isinstance(raw.get("name"), str) else ""
        if not name:
            raise HostToolDefinitionError(f"Host tool at index {index} must provide a non-empty name")
        description = raw["description"].strip() if isinstance(raw.get("description"), str) else ""
        if not description:
            raise HostToolDefinitionError(f'Host tool "{name}" must provide a non-empty description')
        parameters = raw.get("parameters")
        if not isinstance(parameters, dict):
            raise HostToolDefinitionError(f'Host tool "{name}" must provide a JSON Schema object')
        label = raw["label"].strip() if isinstance(raw.get("label"), str) else ""
        out.append(
            {
                "name": name,
                "label": label or name,
                "description": description,
                "parameters": parameters,
                "hidden": raw.get("hidden") is True,
            }
        )
    return out


def error_text(result: dict[str, Any]) -> str:
    """The failure message of an ``isError`` result: its text blocks joined and trimmed."""
    texts = [
        block["text"]
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts).strip() or FAILED_TEXT


def _block(block: Any) -> dict[str, Any]:
    """``block`` when it is a text or image block of the protocol, else a text block holding its JSON."""
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            return block
        if kind == "image" and isinstance(block.get("data"), str) and isinstance(block.get("mimeType"), str):
            return block
    import json  # a malformed block only

    return {"type": "text", "text": json.dumps(block, ensure_ascii=False, default=repr)}


def checked_result(result: dict[str, Any]) -> AgentToolResult:
    """The host's result with every content block a text or image block (docs/decisions.md).

    The result is kept verbatim (rpc-protocol §7) when its blocks are well formed. A block that
    is not (no ``type``, an unknown type, a missing field, not an object) becomes a text block
    with its JSON: the model still sees it, and no provider request or resumed session trips on it.
    """
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    fixed = [_block(block) for block in blocks]
    if all(a is b for a, b in zip(fixed, blocks, strict=True)):
        return cast("AgentToolResult", result)
    return cast("AgentToolResult", {**result, "content": fixed})


class _PendingCall(msgspec.Struct):
    name: str
    future: asyncio.Future[AgentToolResult]
    on_update: ToolUpdate


class HostToolBridge:
    """Host tools of one session and their calls in flight.

    ``send`` writes one outbound frame (the RPC server's ``write``; set by :meth:`connect`
    when the feature is installed before a host exists). Frames for ids that are unknown
    or already settled are ignored.
    """

    def __init__(self, session: AgentSession, send: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.session = session
        self.send: Callable[[dict[str, Any]], None] = send or _no_host
        self.names: list[str] = []
        self._pending: dict[str, _PendingCall] = {}

    def connect(self, send: Callable[[dict[str, Any]], None]) -> None:
        """Route this bridge's frames to the host's writer."""
        self.send = send

    @property
    def pending_ids(self) -> list[str]:
        return list(self._pending)

    # ---- registration ----------------------------------------------------------------
    def set_tools(self, definitions: list[HostToolDefinition]) -> list[str]:
        """Replace the host-owned tool set; returns the names in request order.

        New non-hidden tools become active, tools kept from the previous set keep their
        active state, hidden ones are registered only. The session's tools are refreshed,
        so the change reaches the model's next call.
        """
        names = [d["name"] for d in definitions]
        if len(set(names)) != len(names):
            raise HostToolDefinitionError("RPC host tool names must be unique")
        previous = set(self.names)
        for name in names:
            if self.session.has_tool(name) and name not in previous:
                raise HostToolDefinitionError(f'RPC host tool "{name}" conflicts with an existing tool')
        session = self.session
        was_active = session.active_tool_names
        others = [n for n in was_active if n not in previous]
        kept = [n for n in was_active if n in previous and n in names]
        added = [d["name"] for d in definitions if not d.get("hidden") and d["name"] not in previous]
        session.update_tools(
            remove=previous,
            add=[self._make_tool(d) for d in definitions],
            active=[*others, *kept, *added],
        )
        self.names = names
        return names

    def _make_tool(self, definition: HostToolDefinition) -> AgentTool:
        name = definition["name"]

        async def execute(
            tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
        ) -> AgentToolResult:
            return await self.call(name, tool_call_id, args, signal, on_update)

        return AgentTool(
            name=name,
            label=definition["label"],
            description=definition["description"],
            parameters=definition["parameters"],
            execute=execute,
            concurrency="shared",
            abortable=True,
            meta={"host": True},
        )

    # ---- execution -------------------------------------------------------------------
    def _fresh_id(self) -> str:
        while True:
            candidate = os.urandom(8).hex()
            if candidate not in self._pending:
                return candidate

    async def call(
        self,
        name: str,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal | None,
        on_update: ToolUpdate,
    ) -> AgentToolResult:
        """Ask the host to run ``name`` and wait for its result (or an abort)."""
        if signal is not None and signal.aborted:
            raise HostToolError(aborted_text(name))
        call_id = self._fresh_id()
        future: asyncio.Future[AgentToolResult] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = _PendingCall(name, future, on_update)

        def on_abort() -> None:
            if self._pending.pop(call_id, None) is None:
                return
            self.send({"type": "host_tool_cancel", "id": self._fresh_id(), "targetId": call_id})
            if not future.done():
                future.set_exception(HostToolError(aborted_text(name)))

        unregister = signal.add_callback(on_abort) if signal is not None else (lambda: None)
        self.send(
            {
                "type": "host_tool_call",
                "id": call_id,
                "toolCallId": tool_call_id,
                "toolName": name,
                "arguments": args,
            }
        )
        try:
            return await future
        finally:
            unregister()
            self._pending.pop(call_id, None)

    def handle_result(self, frame: dict[str, Any]) -> None:
        """Settle the call ``frame["id"]`` with the host's result (``isError`` → failure)."""
        pending = self._pending.pop(str(frame.get("id")), None)
        if pending is None or pending.future.done():
            return
        result = frame.get("result") or {}
        if frame.get("isError"):
            pending.future.set_exception(HostToolError(error_text(result)))
        else:
            pending.future.set_result(checked_result(result))

    def handle_update(self, frame: dict[str, Any]) -> None:
        """Forward a progress update for a pending call as a tool update, its blocks checked as a
        result's are (:func:`checked_result`: a malformed block becomes a text block with its JSON,
        so the ``tool_execution_update`` frame stays on the protocol's schema)."""
        pending = self._pending.get(str(frame.get("id")))
        if pending is not None and not pending.future.done():
            pending.on_update(checked_result(frame["partialResult"]))

    def reject_all(self, message: str = DISCONNECTED_TEXT) -> None:
        """Fail every pending call with ``message`` (stdin reached EOF)."""
        pending, self._pending = list(self._pending.values()), {}
        for call in pending:
            if not call.future.done():
                call.future.set_exception(HostToolError(message))


class HostToolsConfig(msgspec.Struct, frozen=True):
    """Host tools have no start-up options: the host defines them with ``set_host_tools``."""


def configure(options: StartupOptions) -> HostToolsConfig:
    return HostToolsConfig()


def install(session: AgentSession, config: HostToolsConfig) -> HostToolBridge:
    """Give the session a host-tool bridge; a mode with a host connects it (:meth:`HostToolBridge.connect`)."""
    bridge = HostToolBridge(session)
    session.features.put(bridge)
    return bridge


def host_bridge_of(session: AgentSession) -> HostToolBridge | None:
    """The session's host-tool bridge, or None when host tools are not installed."""
    return session.features.get(HostToolBridge)


def set_host_tools(session: AgentSession, tools: list[Any]) -> list[str]:
    """The ``set_host_tools`` operation: check and install the definitions; their names in request order.

    Raises :class:`HostToolDefinitionError` for an invalid definition.
    """
    definitions = normalize_definitions(tools)
    bridge = host_bridge_of(session)
    if bridge is None:
        raise RuntimeError("host tools are not available in this session")
    return bridge.set_tools(definitions)
