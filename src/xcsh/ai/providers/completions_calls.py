"""Tool calls of a Chat Completions stream, put together by their ``index`` (or id).

A server streams each call as deltas: the first names its id and function, the next ones add
argument text. Most servers send one call after the other; the wire format allows deltas of
several calls to interleave (``0:start, 1:start, 0:args, 1:args``), which is what ``index`` is for.

The builder streams one block at a time and closes it for good, so a call is streamed live when
no other call is open, or when the open one's arguments already form a whole JSON object (it is
complete: the sequential case). Otherwise the call waits, its deltas gathered, and is handed to
the builder once the open call is complete or the stream ends (docs/decisions.md, "Chat
Completions: interleaved tool-call deltas").
"""

from __future__ import annotations

import json

from xcsh.ai.builder import MessageBuilder


class _Call:
    __slots__ = ("_pieces", "call_id", "index", "name", "state")

    def __init__(self, index: int | None, call_id: str | None, name: str) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        # the argument text as it arrived, joined when read or when many pieces have gathered: a
        # string extended per delta would copy the whole text each time (the builder already keeps
        # it as the block's partialJson)
        self._pieces: list[str] = []
        self.state = "waiting"  # waiting | open | closed

    @property
    def arguments(self) -> str:
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def add(self, text: str) -> None:
        if text:
            self._pieces.append(text)
            if len(self._pieces) > _JOIN_AT:
                self._pieces = ["".join(self._pieces)]


_JOIN_AT = 256  # pieces gathered before they are joined (bounds their memory; the join is rare)


class ToolCallAssembler:
    """Feeds one stream's tool-call deltas into ``builder`` (see the module docstring)."""

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._calls: list[_Call] = []
        self._open: _Call | None = None

    def delta(self, index: int | None, call_id: str | None, name: str, arguments: str) -> None:
        """One entry of ``delta.tool_calls`` (``name`` and ``arguments`` "" when absent)."""
        if self._open is not None and not self._builder.has_open_tool_call():
            self._open.state = "closed"  # a text or thinking delta closed it
            self._open = None
        call = self._find(index, call_id)
        if call is None:
            call = _Call(index, call_id, name)
            self._calls.append(call)
        elif name and not call.name and call.state == "waiting":
            call.name = name
        call.add(arguments)
        if call.state == "open":
            self._builder.tool_arguments(arguments)
            return
        if self._open is None or _complete(self._open.arguments):
            self._stream(call)

    def finish(self) -> None:
        """Hand the calls still waiting to the builder, in the order they started."""
        for call in self._calls:
            if call.state == "waiting":
                self._stream(call)

    def _find(self, index: int | None, call_id: str | None) -> _Call | None:
        """The call a delta continues, None when it starts a new one: the latest call with its index
        unless the delta names another id (a server that numbers every call 0); without an index,
        the call with its id, else the latest call. Two calls may share an id (the builder renames
        the second), so the index decides first."""
        live = [call for call in self._calls if call.state != "closed"]
        if index is not None:
            for call in reversed(live):
                if call.index == index:
                    return None if call_id and call.call_id and call_id != call.call_id else call
            return None
        if call_id:
            return next((call for call in reversed(live) if call.call_id == call_id), None)
        return live[-1] if live else None

    def _stream(self, call: _Call) -> None:
        if self._open is not None:
            self._open.state = "closed"
        position = call.index if call.index is not None else len(self._calls) - 1
        self._builder.begin_tool_call(call.call_id or f"call_{position}", call.name)
        call.state = "open"
        self._open = call
        if call.arguments:
            self._builder.tool_arguments(call.arguments)


def _complete(arguments: str) -> bool:
    """Whether ``arguments`` is a whole JSON object already (no later delta can extend it)."""
    text = arguments.rstrip()
    if not text.endswith("}"):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False
