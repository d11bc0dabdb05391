"""Rebuilding partial messages from delta-mode ``message_update`` frames (``--message-updates delta``).

In delta mode the agent sends ``text_delta`` / ``thinking_delta`` / ``toolcall_delta`` updates
without ``partial`` and ``message``. :class:`PartialMessages` keeps the partial message of the
answer being streamed (from ``message_start`` and each whole ``message_update``) and turns every
slim update back into the whole frame the reference sends, so code reading frames sees the same
shape in both modes. Earlier frames are never changed by later ones.
"""

from __future__ import annotations

from typing import Any

import jiter

Frame = dict[str, Any]
_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "toolcall_delta": "partialJson"}


class PartialMessages:
    """The partial assistant message as of the last frame fed."""

    def __init__(self) -> None:
        self._message: Frame | None = None

    def feed(self, frame: Frame) -> Frame:
        """``frame``, or for a slim update the whole frame rebuilt from the partial message."""
        kind = frame.get("type")
        if kind == "message_start":
            message = frame.get("message")
            self._message = (
                message if isinstance(message, dict) and message.get("role") == "assistant" else None
            )
        elif kind == "message_end":
            self._message = None
        elif kind == "message_update":
            if "message" in frame:
                message = frame["message"]
                self._message = message if isinstance(message, dict) else None
                return frame
            event = frame.get("assistantMessageEvent")
            if isinstance(event, dict) and self._message is not None:
                rebuilt = _applied(self._message, event)
                if rebuilt is not None:
                    self._message = rebuilt
                    return {
                        "type": "message_update",
                        "assistantMessageEvent": {**event, "partial": rebuilt},
                        "message": rebuilt,
                    }
        return frame


def _applied(message: Frame, event: Frame) -> Frame | None:
    """A copy of ``message`` with the delta of ``event`` appended (None if it does not fit)."""
    field = _FIELDS.get(str(event.get("type")))
    index = event.get("contentIndex")
    delta = event.get("delta")
    content = message.get("content")
    if (
        field is None
        or not isinstance(index, int)
        or not isinstance(delta, str)
        or not isinstance(content, list)
    ):
        return None
    if not 0 <= index < len(content) or not isinstance(content[index], dict):
        return None
    block = dict(content[index])
    block[field] = str(block.get(field, "")) + delta
    if field == "partialJson":
        try:
            parsed = jiter.from_json(block[field].encode(), partial_mode="trailing-strings")
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            block["arguments"] = parsed
    blocks = list(content)
    blocks[index] = block
    return {**message, "content": blocks}
