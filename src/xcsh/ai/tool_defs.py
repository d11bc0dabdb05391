"""A wire's form of the tool definitions, converted and JSON-encoded once per tool list.

Every request of a run carries the same tools (~20 KB of JSON schemas for the built-in set):
converting them into the wire's shape and encoding them again per request is repeated work.
:class:`ToolDefinitions` keeps the latest list's conversion and its JSON text.

Contract, as for the message history (:mod:`xcsh.ai.prefix_cache`): a tool definition is never
changed in place (a changed tool is a new dict), and the conversion is a pure function of one
definition. Tools are recognised item by item by identity; the agent loop hands over the same
definition objects while its tools do not change (``xcsh.agent.loop``). The converted list is
shared between calls: callers must not change it in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_
from typing import Generic, TypeVar

import msgspec

from xcsh.ai.types import Tool

R = TypeVar("R")


class ToolDefinitions(Generic[R]):
    """``convert`` over a tool list, remembered for the latest list (see the module docstring)."""

    __slots__ = ("_convert", "_converted", "_raw", "_tools")

    def __init__(self, convert: Callable[[Tool], R]) -> None:
        self._convert = convert
        self._tools: list[Tool] = []
        self._converted: list[R] = []
        self._raw: msgspec.Raw | None = None

    def __call__(self, tools: Sequence[Tool]) -> list[R]:
        """Each tool converted; the same list as the last call's when ``tools`` are the same objects."""
        if len(tools) == len(self._tools) and all(map(is_, tools, self._tools)):
            return self._converted
        convert = self._convert
        self._tools = list(tools)
        self._converted = [convert(tool) for tool in tools]
        self._raw = None
        return self._converted

    def encoded(self, converted: list[R]) -> list[R] | msgspec.Raw:
        """``converted`` as its JSON text when it is the latest call's result (encoded once), to
        splice into a request body (``xcsh.ai.clients.encode_body``: the same bytes as encoding
        the list); else, or when msgspec cannot encode it, ``converted`` itself."""
        if converted is not self._converted:
            return converted
        if self._raw is None:
            try:
                self._raw = msgspec.Raw(msgspec.json.encode(converted))
            except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
                return converted
        return self._raw
