"""The extension UI in ACP mode: ``confirm`` becomes ``session/request_permission``.

Tool approvals (docs/approvals.md) and extensions' confirm dialogs both arrive here. A
confirm about a tool call names that call (the editor shows it on the call's card); any
other confirm gets a call id of its own. The editor's choice of the ``allow`` option means
yes; ``deny``, a cancelled request, the dialog's timeout or its abort signal mean no.
ACP has no text dialogs, so ``select``/``input``/``editor`` resolve to ``None`` at once, and
status, widget and title calls are dropped.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from acp import text_block, tool_content
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from xcsh.coding.approvals import PENDING_CALL
from xcsh.coding.extensions.ui import Dialog, DialogUI, NotifyType, WidgetPlacement

logger = logging.getLogger(__name__)

ALLOW = "allow"
DENY = "deny"
OPTIONS = [
    PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=DENY, name="Deny", kind="reject_once"),
]


class AcpUI(DialogUI):
    """Dialogs of one ACP session, asked through ``request_permission``."""

    def __init__(self, request_permission: Callable[..., Any], session_id: str) -> None:
        self._request_permission = request_permission
        self._session_id = session_id

    @property
    def has_ui(self) -> bool:
        return True

    async def _ask_confirm(self, dialog: Dialog) -> bool:
        signal = dialog.signal
        if signal is not None and signal.aborted:
            return False
        call = PENDING_CALL.get()
        title = str(dialog.fields.get("title", ""))
        message = str(dialog.fields.get("message", ""))
        tool_call = ToolCallUpdate(
            tool_call_id=str(call["id"]) if call is not None else f"confirm-{uuid.uuid4().hex}",
            title=title,
            content=[tool_content(text_block(message))] if message else None,
        )
        asked = asyncio.ensure_future(
            self._request_permission(session_id=self._session_id, tool_call=tool_call, options=OPTIONS)
        )
        aborted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not aborted.done():
                aborted.set_result(None)

        unlink = signal.add_callback(wake) if signal is not None else None
        timeout = dialog.timeout_ms / 1000 if dialog.timeout_ms is not None else None
        try:
            done, _ = await asyncio.wait(
                {asked, aborted}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if unlink is not None:
                unlink()
        if asked not in done:
            asked.cancel()
            if aborted not in done and dialog.on_timeout is not None:
                dialog.on_timeout()
            return False
        aborted.cancel()
        try:
            response = asked.result()
        except Exception:  # the editor failed the request: nobody said yes
            logger.debug("request_permission failed", exc_info=True)
            return False
        outcome = response.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW

    def notify(self, message: str, type: NotifyType | None = None) -> None:
        logger.info("extension notice: %s", message)

    def set_status(self, key: str, text: str | None = None) -> None:
        return None

    def set_widget(
        self, key: str, lines: list[str] | None = None, *, placement: WidgetPlacement | None = None
    ) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""
