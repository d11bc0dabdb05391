"""The host side of the agent's requests: host tool calls and extension dialogs (rpc-protocol §7).

:class:`HostAnswers` belongs to one :class:`~xcsh.rpc.client.RpcClient`: the client hands it
every ``host_tool_call``, ``host_tool_cancel`` and ``extension_ui_request`` frame it reads,
and it answers through the client's ``send`` (``host_tool_update`` / ``host_tool_result``,
``extension_ui_response``) from tasks it keeps until they end or the client closes.

This module imports only wire types, like the client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast

Frame = dict[str, Any]
HostToolHandler = Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], Awaitable[Any]]
# an extension_ui_request → the answer's fields ({"value": …}, {"confirmed": …}, {"cancelled": True}) or None
UiHandler = Callable[[Frame], Awaitable[dict[str, Any] | None]]
DIALOGS = frozenset({"select", "confirm", "input", "editor"})
FRAME_TYPES = frozenset({"host_tool_call", "host_tool_cancel", "extension_ui_request"})
"""The frame types :meth:`HostAnswers.handle` takes."""


class HostAnswers:
    """The registered host-tool and dialog handlers and the tasks answering with them."""

    def __init__(self, send: Callable[[Frame], None]) -> None:
        self._send = send
        self._tools: dict[str, HostToolHandler] = {}
        # the names of the last set_host_tools the agent accepted: a call for one of them with no
        # handler is the caller's to answer (send_raw); a call for any other name gets an error
        self._registered: frozenset[str] = frozenset()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._ui_handler: UiHandler | None = None

    def on_host_tool(self, name: str, handler: HostToolHandler) -> None:
        """See :meth:`xcsh.rpc.client.RpcClient.on_host_tool`."""
        self._tools[name] = handler

    def registered(self, response: Frame) -> None:
        """Note the tool names of an accepted ``set_host_tools`` (its response, however it was sent)."""
        data = response.get("data")
        names = data.get("toolNames") if isinstance(data, dict) else None
        if response.get("success") is True and isinstance(names, list):
            self._registered = frozenset(str(n) for n in names)

    def on_ui_request(self, handler: UiHandler | None) -> None:
        """See :meth:`xcsh.rpc.client.RpcClient.on_ui_request`."""
        self._ui_handler = handler

    def answer_ui(self, request_id: str, **answer: Any) -> None:
        """Send an ``extension_ui_response`` (``value=``, ``confirmed=``, ``cancelled=``, ``timedOut=``)."""
        self._send({"type": "extension_ui_response", "id": request_id, **answer})

    def handle(self, frame: Frame) -> None:
        """React to a frame of one of :data:`FRAME_TYPES` (others are ignored)."""
        kind = frame.get("type")
        if kind == "host_tool_call":
            self._start_host_tool(frame)
        elif kind == "host_tool_cancel":
            task = self._tasks.pop(str(frame.get("targetId")), None)
            if task is not None:
                task.cancel()
        elif kind == "extension_ui_request" and self._ui_handler is not None:
            self._answer_ui(self._ui_handler, frame)

    def cancel_all(self) -> None:
        """Cancel every answer still running (the client is closing)."""
        for task in self._tasks.values():
            task.cancel()

    def _start_host_tool(self, frame: Frame) -> None:
        name = str(frame.get("toolName"))
        call_id = str(frame.get("id"))
        handler = self._tools.get(name)
        if handler is None:
            # a tool this client never registered (or has withdrawn) has nobody to answer it, and
            # the run would wait for ever (§7.3): answer as the reference clients do (§7.4). A
            # registered tool without a handler is answered by the caller with send_raw.
            if name not in self._registered:
                self._send(_error_result(call_id, f'Host tool "{name}" is not registered'))
            return

        async def run() -> None:
            loop = asyncio.get_running_loop()

            def update(partial: dict[str, Any]) -> None:
                frame = {"type": "host_tool_update", "id": call_id, "partialResult": partial}
                if _on_loop(loop):
                    self._send(frame)
                else:  # a plain handler in a worker thread: the pipe is the loop's (not thread-safe)
                    loop.call_soon_threadsafe(self._send, frame)

            try:
                value = await handler(dict(frame.get("arguments") or {}), update)
            except asyncio.CancelledError:
                return
            except Exception as exc:  # host-side boundary: report the failure to the agent
                self._send(_error_result(call_id, str(exc)))
                return
            result = value if isinstance(value, dict) and "content" in value else _text_result(value)
            self._send({"type": "host_tool_result", "id": call_id, "result": result})

        task = asyncio.ensure_future(run())
        self._tasks[call_id] = task

        def forget(_: asyncio.Task[None]) -> None:  # also after a failure or a cancel
            if self._tasks.get(call_id) is task:
                del self._tasks[call_id]

        task.add_done_callback(forget)

    def _answer_ui(self, handler: UiHandler, frame: Frame) -> None:
        request_id = frame.get("id")
        dialog = frame.get("method") in DIALOGS and isinstance(request_id, str)

        async def run() -> None:
            try:
                answer = await handler(frame)
            except Exception:  # host-side boundary: a failing handler dismisses the dialog
                answer = {"cancelled": True}
            if dialog and answer is not None:
                self.answer_ui(cast(str, request_id), **answer)

        task = asyncio.ensure_future(run())
        self._tasks[f"ui:{request_id}"] = task
        task.add_done_callback(lambda _: self._tasks.pop(f"ui:{request_id}", None))


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """The caller runs in ``loop``'s thread (else it must hand work over with ``call_soon_threadsafe``)."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _error_result(call_id: str, text: str) -> Frame:
    """The ``isError`` answer to a call (as the reference clients send it, spec §7.4)."""
    result = {"content": [{"type": "text", "text": text}], "details": {}}
    return {"type": "host_tool_result", "id": call_id, "result": result, "isError": True}


def _text_result(value: Any) -> dict[str, Any]:
    import json

    text = value if isinstance(value, str) else json.dumps(value)
    return {"content": [{"type": "text", "text": text}], "details": {}}
