"""The extension UI sub-protocol (rpc-protocol §8): UI calls become ``extension_ui_request`` frames.

Dialogs (``select``, ``confirm``, ``input``, ``editor``) wait for the host's
``extension_ui_response`` with the same ``id``; a timeout or an abort resolves them to
their default without any frame (except ``editor``, whose abort sends ``cancel``).
Responses for unknown or settled ids are ignored; at stdin EOF every dialog resolves to
its default. ``setTitle`` is sent only when
``PI_RPC_EMIT_TITLE`` is 1/true/yes/on. Extension failures become ``extension_error``
frames, and an extension's shutdown request ends the process after the next response.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from xcsh.coding.extensions.feature import runner_for
from xcsh.coding.extensions.ui import Dialog, DialogUI, NotifyType, WidgetPlacement

if TYPE_CHECKING:
    from xcsh.coding.extensions.runner import ExtensionRunner
    from xcsh.modes.rpc.server import RpcServer

logger = logging.getLogger(__name__)

T = TypeVar("T")
Frame = dict[str, Any]
Write = Callable[[Frame], None]


def titles_enabled(env: Mapping[str, str]) -> bool:
    """Whether ``setTitle`` requests are emitted (``PI_RPC_EMIT_TITLE``, rpc-protocol §8.2)."""
    return env.get("PI_RPC_EMIT_TITLE", "").strip().lower() in {"1", "true", "yes", "on"}


def _run_callback(callback: Callable[[], None] | None) -> None:
    if callback is None:
        return
    try:
        callback()
    except Exception:  # extension boundary: an on_timeout callback is extension code
        logger.exception("extension on_timeout callback failed")


def _text_answer(frame: Frame, on_timeout: Callable[[], None] | None) -> str | None:
    if frame.get("cancelled") is True:
        if frame.get("timedOut") is True:
            _run_callback(on_timeout)
        return None
    value = frame.get("value")
    return value if isinstance(value, str) else None


def _confirm_answer(frame: Frame, on_timeout: Callable[[], None] | None) -> bool:
    if frame.get("cancelled") is True:
        if frame.get("timedOut") is True:
            _run_callback(on_timeout)
        return False
    return frame.get("confirmed") is True


class UiBridge(DialogUI):
    """An :class:`~xcsh.coding.extensions.api.ExtensionUI` speaking the RPC frames."""

    def __init__(self, write: Write, *, emit_titles: bool = False) -> None:
        self._write = write
        self._emit_titles = emit_titles
        self._pending: dict[str, Callable[[Frame], None]] = {}
        self._host_gone = False

    @property
    def has_ui(self) -> bool:
        return True

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def handle_response(self, frame: Frame) -> None:
        """An ``extension_ui_response`` from the host; unknown ids are ignored silently."""
        rid = frame.get("id")
        resolve = self._pending.pop(rid, None) if isinstance(rid, str) else None
        if resolve is not None:
            resolve(frame)

    def close(self) -> None:
        """stdin ended: open and later dialogs resolve to their defaults, since nobody can answer."""
        self._host_gone = True
        pending, self._pending = list(self._pending.values()), {}
        for resolve in pending:
            resolve({"cancelled": True})

    def _send(self, method: str, fields: Mapping[str, Any], rid: str | None = None) -> str:
        rid = rid or uuid.uuid4().hex
        frame: Frame = {"type": "extension_ui_request", "id": rid, "method": method}
        frame.update({k: v for k, v in fields.items() if v is not None})
        self._write(frame)
        return rid

    async def _ask_text(self, dialog: Dialog) -> str | None:
        return await self._dialog(dialog, None, lambda frame: _text_answer(frame, dialog.on_timeout))

    async def _ask_confirm(self, dialog: Dialog) -> bool:
        return await self._dialog(dialog, False, lambda frame: _confirm_answer(frame, dialog.on_timeout))

    async def _dialog(self, dialog: Dialog, default: T, answer: Callable[[Frame], T]) -> T:
        """Send the request and wait for its answer, the timeout or the abort, whichever is first."""
        signal, timeout_ms = dialog.signal, dialog.timeout_ms
        if self._host_gone or (signal is not None and signal.aborted):
            return default
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        rid = uuid.uuid4().hex
        # only the editor tells the host to close on abort (rpc-protocol §8.4)
        cancel_on_abort = dialog.method == "editor"

        def settle(value: T) -> None:
            self._pending.pop(rid, None)
            if not future.done():
                future.set_result(value)

        def aborted() -> None:
            if rid in self._pending and cancel_on_abort:
                self._send("cancel", {"targetId": rid})
            settle(default)

        def expired() -> None:
            _run_callback(dialog.on_timeout)
            settle(default)

        self._pending[rid] = lambda frame: settle(answer(frame))
        unlink = signal.add_callback(aborted) if signal is not None else None
        timer = loop.call_later(timeout_ms / 1000, expired) if timeout_ms is not None else None
        self._send(dialog.method, {**dialog.fields, "timeout": timeout_ms}, rid)
        try:
            return await future
        finally:
            self._pending.pop(rid, None)
            if unlink is not None:
                unlink()
            if timer is not None:
                timer.cancel()

    def notify(self, message: str, type: NotifyType | None = None) -> None:
        self._send("notify", {"message": message, "notifyType": type})

    def set_status(self, key: str, text: str | None = None) -> None:
        self._send("setStatus", {"statusKey": key, "statusText": text})

    def set_widget(
        self, key: str, lines: list[str] | None = None, *, placement: WidgetPlacement | None = None
    ) -> None:
        shown = list(lines) if lines is not None else None
        self._send("setWidget", {"widgetKey": key, "widgetLines": shown, "widgetPlacement": placement})

    def set_title(self, title: str) -> None:
        if self._emit_titles:
            self._send("setTitle", {"title": title})

    def set_editor_text(self, text: str) -> None:
        self._send("set_editor_text", {"text": text})

    def get_editor_text(self) -> str:
        # the host owns the editor; a synchronous read cannot wait for it
        return ""


_BRIDGES: weakref.WeakKeyDictionary[RpcServer, UiBridge] = weakref.WeakKeyDictionary()


def bridge_for(server: RpcServer) -> UiBridge:
    """The server's one UI bridge (made and wired to the response/EOF hooks on first use).

    Extensions and tool approvals share it, so every ``extension_ui_response`` finds its dialog.
    """
    bridge = _BRIDGES.get(server)
    if bridge is None:
        bridge = UiBridge(server.write, emit_titles=titles_enabled(os.environ))
        server.on_ui_response = bridge.handle_response
        server.on_eof.append(bridge.close)
        _BRIDGES[server] = bridge
    return bridge


def wire(server: RpcServer) -> None:
    """Give the session's extensions the RPC UI, error frames, ``session_start`` and shutdown."""
    runner = runner_for(server.session)
    if runner is None:
        return
    bridge = bridge_for(server)
    runner.ui = bridge
    runner.on_error = lambda error: server.write(error.frame())
    runner.on_action_error = lambda command, message: server.write(
        {"type": "response", "command": command, "success": False, "error": message}
    )
    server.on_ready.append(runner.start)
    exiting: list[bool] = []

    def check_shutdown() -> None:
        if runner.shutdown_requested and not exiting:
            exiting.append(True)
            server.spawn(_shutdown(server, runner))

    server.after_response.append(check_shutdown)


async def _shutdown(server: RpcServer, runner: ExtensionRunner) -> None:
    """An extension asked to exit: ``session_shutdown`` handlers, then exit code 0 (rpc-protocol §2.5)."""
    await runner.shutdown()
    await server.session.shutdown_async()
    server.exit()
