"""The extension UI: what an extension (or an approval prompt) may ask of the user, and the dialog base.

Split from :mod:`xcsh.coding.extensions.api` so a mode can offer its UI (the RPC mode's
``UiBridge``, used by tool approvals too) without importing the extension machinery, which
loads only when a session has extensions. :mod:`.api` re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

import msgspec

from xcsh.ai.abort import AbortSignal

NotifyType = Literal["info", "warning", "error"]
WidgetPlacement = Literal["aboveEditor", "belowEditor"]


class ExtensionUI(Protocol):
    """UI requests an extension can make; every method is safe to call in every mode.

    Dialogs take ``timeout_ms`` (resolve to the default after that many milliseconds),
    ``signal`` (resolve to the default when it fires) and ``on_timeout`` (called when the
    dialog times out, or the host reports ``timedOut``). Defaults: ``select``/``input``/
    ``editor`` → ``None``, ``confirm`` → ``False``.
    """

    @property
    def has_ui(self) -> bool:
        """True when a host answers dialogs (RPC mode); False when they resolve at once."""
        ...

    async def select(
        self,
        title: str,
        options: list[str],
        *,
        timeout_ms: int | None = None,
        signal: AbortSignal | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> str | None: ...

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout_ms: int | None = None,
        signal: AbortSignal | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> bool: ...

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout_ms: int | None = None,
        signal: AbortSignal | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> str | None: ...

    async def editor(
        self,
        title: str,
        prefill: str | None = None,
        *,
        signal: AbortSignal | None = None,
        prompt_style: bool | None = None,
    ) -> str | None: ...

    def notify(self, message: str, type: NotifyType | None = None) -> None: ...

    def set_status(self, key: str, text: str | None = None) -> None: ...

    def set_widget(
        self, key: str, lines: list[str] | None = None, *, placement: WidgetPlacement | None = None
    ) -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...


class Dialog(msgspec.Struct, frozen=True, kw_only=True):
    """One dialog call: its method and parameters under their rpc-protocol names, and how it may end early."""

    method: Literal["select", "confirm", "input", "editor"]
    fields: dict[str, Any]
    timeout_ms: int | None = None
    signal: AbortSignal | None = None
    on_timeout: Callable[[], None] | None = None


class DialogUI:
    """The dialog half of :class:`ExtensionUI`, shared by its implementations.

    Each dialog method becomes one :class:`Dialog` handed to :meth:`_ask_text` (``select``,
    ``input``, ``editor``) or :meth:`_ask_confirm`; a subclass with a host overrides those
    two. Here they resolve at once to the defaults, ``None`` and ``False``.
    """

    async def _ask_text(self, dialog: Dialog) -> str | None:
        return None

    async def _ask_confirm(self, dialog: Dialog) -> bool:
        return False

    async def select(
        self,
        title: str,
        options: list[str],
        *,
        timeout_ms: int | None = None,
        signal: AbortSignal | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> str | None:
        fields = {"title": title, "options": list(options)}
        return await self._ask_text(
            Dialog(
                method="select", fields=fields, timeout_ms=timeout_ms, signal=signal, on_timeout=on_timeout
            )
        )

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout_ms: int | None = None,
        signal: AbortSignal | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> bool:
        fields = {"title": title, "message": message}
        return await self._ask_confirm(
            Dialog(
                method="confirm", fields=fields, timeout_ms=timeout_ms, signal=signal, on_timeout=on_timeout
            )
        )

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout_ms: int | None = None,
        signal: AbortSignal | None = None,
        on_timeout: Callable[[], None] | None = None,
    ) -> str | None:
        fields = {"title": title, "placeholder": placeholder}
        return await self._ask_text(
            Dialog(method="input", fields=fields, timeout_ms=timeout_ms, signal=signal, on_timeout=on_timeout)
        )

    async def editor(
        self,
        title: str,
        prefill: str | None = None,
        *,
        signal: AbortSignal | None = None,
        prompt_style: bool | None = None,
    ) -> str | None:
        fields = {"title": title, "prefill": prefill, "promptStyle": prompt_style}
        return await self._ask_text(Dialog(method="editor", fields=fields, signal=signal))


class HeadlessUI(DialogUI):
    """The UI without a host (print mode): dialogs return their defaults, the rest is dropped."""

    @property
    def has_ui(self) -> bool:
        return False

    def notify(self, message: str, type: NotifyType | None = None) -> None:
        pass

    def set_status(self, key: str, text: str | None = None) -> None:
        pass

    def set_widget(
        self, key: str, lines: list[str] | None = None, *, placement: WidgetPlacement | None = None
    ) -> None:
        pass

    def set_title(self, title: str) -> None:
        pass

    def set_editor_text(self, text: str) -> None:
        pass

    def get_editor_text(self) -> str:
        return ""
