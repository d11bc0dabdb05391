"""A cancellation signal shared by providers, the agent loop and tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class AbortSignal:
    """Read side of a cancellation: check ``aborted``, ``await wait()`` or register a callback.

    Callbacks run synchronously when the signal fires (or at once if it already has).
    """

    __slots__ = ("_callbacks", "_event", "reason")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._callbacks: list[Callable[[], None]] = []
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` on abort; returns a function that unregisters it."""
        if self.aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def _fire(self, reason: str | None) -> None:
        if self._event.is_set():
            return
        self.reason = reason
        self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


class AbortController:
    """Write side: ``abort()`` fires the signal once; later calls are no-ops."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._fire(reason)


def linked_controller(parent: AbortSignal | None) -> tuple[AbortController, Callable[[], None]]:
    """A child controller that also fires when ``parent`` fires; returns it and an unlink function."""
    child = AbortController()
    if parent is None:
        return child, lambda: None
    unlink = parent.add_callback(lambda: child.abort(parent.reason))
    return child, unlink
