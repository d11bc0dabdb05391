"""Push streams: providers push events, consumers ``async for`` them and await the result."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.types import AssistantMessage

T = TypeVar("T")
R = TypeVar("R")


class EventStream(Generic[T, R]):
    """A single-consumer async stream of events that ends with a result.

    ``push`` never blocks (events are buffered); ``end(result)`` closes the stream.
    Iterating yields every pushed event once; ``await result()`` waits for ``end``.
    """

    def __init__(self) -> None:
        self._queue: deque[T] = deque()
        self._wakeup = asyncio.Event()
        self._done = False
        self._result: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None  # keeps the producer alive

    def push(self, event: T) -> None:
        if self._done:
            return
        self._queue.append(event)
        self._wakeup.set()

    def end(self, result: R) -> None:
        if self._done:
            return
        self._done = True
        if not self._result.done():
            self._result.set_result(result)
        self._wakeup.set()

    @property
    def backlog(self) -> int:
        """Events pushed and not yet taken by the consumer."""
        return len(self._queue)

    @property
    def ended(self) -> bool:
        return self._done

    async def result(self) -> R:
        return await self._result

    def __aiter__(self) -> AsyncIterator[T]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[T]:
        while True:
            while self._queue:
                yield self._queue.popleft()
            if self._done:
                return
            self._wakeup.clear()
            await self._wakeup.wait()


class AssistantMessageStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """The stream a provider call returns; its result is the final assistant message."""
