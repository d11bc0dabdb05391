"""``message_update`` frames in delta mode, and the ``get_state`` parts encoded once.

Delta mode (``--message-updates delta``, reported by ``get_state`` as ``messageUpdates``) is an
opt-in: the reference repeats the whole partial message in every ``message_update`` (twice:
``assistantMessageEvent.partial`` and ``message``), so an answer of n deltas costs O(n²) bytes.
In delta mode a ``text_delta`` / ``thinking_delta`` / ``toolcall_delta`` update carries only its
event (``type``, ``contentIndex``, ``delta``), without ``partial`` and without ``message``; every
other update (``*_start``, ``*_end``) stays whole, so a host can rebuild the partial message by
appending each delta to block ``contentIndex`` (``text``, ``thinking`` or the tool call's
``partialJson``). ``usage`` and ``responseId`` of a rebuilt partial are as of the last whole
frame; ``message_end`` carries the final message as always.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from xcsh.agent.tool import AgentTool
from xcsh.rpc.jsonl import encode_json

_parts = operator.attrgetter("name", "description", "parameters")

MessageUpdates = Literal["full", "delta"]
MESSAGE_UPDATE_MODES: tuple[MessageUpdates, ...] = ("full", "delta")
DELTA_EVENTS = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})


def slim_update(frame: dict[str, Any]) -> dict[str, Any]:
    """The delta-mode form of a ``message_update`` frame (other frames unchanged)."""
    event = frame.get("assistantMessageEvent")
    if not isinstance(event, dict) or event.get("type") not in DELTA_EVENTS:
        return frame
    return {
        "type": "message_update",
        "assistantMessageEvent": {k: v for k, v in event.items() if k != "partial"},
    }


class EncodedOnce:
    """The JSON bytes of the last value seen; encoded again only when the value changes.

    ``get_state`` repeats the system prompt and the tool definitions (most of its 15 KB) on every
    call; they change only when the model, tools or prompt change. A string is compared by value
    (:meth:`__call__`); the tool definitions by the identity of their parts (:meth:`tools`), which
    the cache keeps alive (equal parts that are not the same object compare by value). Contract: tool definitions are replaced, never mutated in place
    (``set_host_tools``, extensions and tool options all build new objects).
    """

    def __init__(self) -> None:
        self._key: Any = None
        self._value: Any = None  # keeps the compared objects alive, so their ids stay theirs
        self._raw: msgspec.Raw | None = None

    def __call__(self, value: str) -> msgspec.Raw:
        if self._raw is None or value != self._key:
            self._raw = msgspec.Raw(encode_json(value))
            self._key = self._value = value
        return self._raw

    def tools(self, tools: Sequence[AgentTool]) -> msgspec.Raw:
        """``dumpTools``: name, description and parameters of each tool."""
        key = tuple(map(_parts, tools))  # compared item by item: identical parts compare at once
        if self._raw is None or key != self._key:
            value = [
                {"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools
            ]
            self._raw = msgspec.Raw(encode_json(value))
            self._key, self._value = key, value
        return self._raw
