"""Incremental decoding of a streamed ``{"tool", "arguments"}`` / ``{"final"}`` JSON reply.

The decoder reads the model's output character by character, tracking just enough JSON
structure to know which top-level key a value belongs to:

- ``final``: the string is unescaped as it arrives and streamed as text deltas;
- ``tool``: the name opens a ``toolCall`` block once it is complete;
- ``arguments``: the raw JSON of the value is streamed as tool-call argument deltas
  (held back until the tool name is known, should the model write it second).

Output that does not start with ``{`` is passed through as plain text, so a server that
ignores ``response_format`` still produces a readable answer.
"""

from __future__ import annotations

from xcsh.ai.builder import MessageBuilder

_WHITESPACE = " \t\r\n"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _StringDecoder:
    """Unescapes a JSON string body fed one character at a time."""

    def __init__(self) -> None:
        self._escape: str | None = None  # collected escape sequence after the backslash
        self._high_surrogate: int | None = None

    def feed(self, ch: str) -> tuple[str, bool]:
        """Decoded text produced by ``ch`` and whether ``ch`` closed the string."""
        if self._escape is None:
            if ch == "\\":
                self._escape = ""
                return "", False
            if ch == '"':
                return self._flush_surrogate(), True
            return self._flush_surrogate() + ch, False
        self._escape += ch
        if self._escape[0] != "u":
            out = _ESCAPES.get(self._escape, self._escape)
            self._escape = None
            return self._flush_surrogate() + out, False
        if len(self._escape) < 5:
            return "", False
        try:
            code = int(self._escape[1:], 16)
        except ValueError:
            code = 0xFFFD
        self._escape = None
        if 0xD800 <= code < 0xDC00:
            pending = self._flush_surrogate()
            self._high_surrogate = code
            return pending, False
        if 0xDC00 <= code < 0xE000 and self._high_surrogate is not None:
            high, self._high_surrogate = self._high_surrogate, None
            return chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)), False
        return self._flush_surrogate() + chr(code), False

    def _flush_surrogate(self) -> str:
        if self._high_surrogate is None:
            return ""
        self._high_surrogate = None
        return "\ufffd"


class ConstrainedDecoder:
    """Feeds a streamed constrained reply into a :class:`MessageBuilder`."""

    def __init__(self, builder: MessageBuilder, call_id: str) -> None:
        self._builder = builder
        self._call_id = call_id
        self._raw: list[str] = []
        self._state = "start"
        self._key: list[str] = []
        self._key_escape = False
        self._current_key = ""
        self._kind = ""  # kind of the value being read: string | container | primitive
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._string: _StringDecoder | None = None
        self._tool_name: list[str] = []
        self._tool_open = False
        self._tool_done = False
        self._held_arguments: list[str] = []
        self._arguments_done = False
        self._emitted = False
        # per-feed output, flushed as one delta per chunk
        self._text_out: list[str] = []
        self._args_out: list[str] = []

    # ---- public ----------------------------------------------------------------------
    def feed(self, chunk: str) -> None:
        """Consume the next piece of the reply, emitting the events it completes."""
        self._raw.append(chunk)
        for ch in chunk:
            self._step(ch)
        self._flush()

    def close(self) -> None:
        """End of the reply: close an open tool call; fall back to raw text if nothing decoded."""
        self._flush()
        if self._tool_open:
            self._close_tool()
        if not self._emitted:
            raw = "".join(self._raw).strip()
            if raw:
                self._builder.text(raw)
                self._emitted = True
        self._builder.end_block()

    # ---- scanning --------------------------------------------------------------------
    def _step(self, ch: str) -> None:
        state = self._state
        if state == "start":
            if ch in _WHITESPACE:
                return
            if ch == "{":
                self._state = "key_wait"
            else:
                self._state = "plain"
                self._text_out.append(ch)
        elif state == "plain":
            self._text_out.append(ch)
        elif state == "key_wait":
            if ch == '"':
                self._key.clear()
                self._state = "key"
            elif ch == "}":
                self._state = "done"
        elif state == "key":
            if self._key_escape:
                self._key.append(ch)
                self._key_escape = False
            elif ch == "\\":
                self._key_escape = True
            elif ch == '"':
                self._current_key = "".join(self._key)
                self._state = "colon"
            else:
                self._key.append(ch)
        elif state == "colon":
            if ch == ":":
                self._state = "value_wait"
        elif state == "value_wait":
            if ch not in _WHITESPACE:
                self._begin_value(ch)
        elif state == "value":
            self._value_char(ch)
        elif state == "after_value":
            if ch == ",":
                self._state = "key_wait"
            elif ch == "}":
                self._state = "done"

    def _begin_value(self, ch: str) -> None:
        self._state = "value"
        if ch == '"':
            self._kind = "string"
            self._string = _StringDecoder()
            self._value_raw(ch)
        elif ch in "{[":
            self._kind = "container"
            self._depth = 1
            self._in_string = False
            self._escape = False
            self._value_raw(ch)
        else:
            self._kind = "primitive"
            self._value_char(ch)

    def _value_char(self, ch: str) -> None:
        if self._kind == "string":
            assert self._string is not None
            text, closed = self._string.feed(ch)
            self._value_raw(ch)
            if text:
                self._value_text(text)
            if closed:
                self._end_value()
        elif self._kind == "container":
            self._value_raw(ch)
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._in_string = False
            elif ch == '"':
                self._in_string = True
            elif ch in "{[":
                self._depth += 1
            elif ch in "}]":
                self._depth -= 1
                if self._depth == 0:
                    self._end_value()
        elif ch in ",}" or ch in _WHITESPACE:
            self._end_value()
            self._step(ch)  # the delimiter belongs to the enclosing object
        else:
            self._value_raw(ch)

    # ---- sinks -----------------------------------------------------------------------
    def _value_raw(self, ch: str) -> None:
        if self._current_key == "arguments" and not self._arguments_done:
            self._args_out.append(ch)

    def _value_text(self, text: str) -> None:
        if self._current_key == "final":
            self._text_out.append(text)
        elif self._current_key == "tool" and not self._tool_done:
            self._tool_name.append(text)

    def _end_value(self) -> None:
        self._state = "after_value"
        if self._current_key == "tool" and not self._tool_done:
            self._tool_done = True
            self._flush()
            self._open_tool()
        elif self._current_key == "arguments" and not self._arguments_done:
            self._flush()
            self._arguments_done = True
            if self._tool_open:
                self._close_tool()

    def _open_tool(self) -> None:
        self._builder.begin_tool_call(self._call_id, "".join(self._tool_name))
        self._tool_open = True
        self._emitted = True
        if self._held_arguments:
            self._builder.tool_arguments("".join(self._held_arguments))
            self._held_arguments.clear()
        if self._arguments_done:
            self._close_tool()

    def _close_tool(self) -> None:
        """Emit ``toolcall_end`` (the builder parses the accumulated arguments)."""
        self._builder.end_block()
        self._tool_open = False

    def _flush(self) -> None:
        if self._text_out:
            self._builder.text("".join(self._text_out))
            self._text_out.clear()
            self._emitted = True
        if self._args_out:
            delta = "".join(self._args_out)
            self._args_out.clear()
            if self._tool_open:
                self._builder.tool_arguments(delta)
            else:
                self._held_arguments.append(delta)
