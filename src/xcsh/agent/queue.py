"""Message queues for steering and follow-ups, with "all" / "one-at-a-time" delivery."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage, QueueMode


class MessageQueue:
    """FIFO of queued messages; ``drain()`` takes one or all according to ``mode``.

    Any mode other than ``"one-at-a-time"`` behaves as ``"all"`` (the reference does not
    validate the value).
    """

    def __init__(self, mode: str = "one-at-a-time") -> None:
        self.mode: str = mode
        self._items: deque[AgentMessage] = deque()

    def push(self, message: AgentMessage) -> None:
        self._items.append(message)

    def drain(self) -> list[AgentMessage]:
        if not self._items:
            return []
        if self.mode == "one-at-a-time":
            return [self._items.popleft()]
        items = list(self._items)
        self._items.clear()
        return items

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def peek_all(self) -> list[AgentMessage]:
        return list(self._items)


def normalize_queue_mode(value: object) -> QueueMode:
    return "one-at-a-time" if value == "one-at-a-time" else "all"
