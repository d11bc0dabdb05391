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
    """``convert`` over a tool list, remembered for the latest list (see the module docstring).

    Safe to share between threads (sessions run on loops of their own in one process): what is
    remembered is replaced as one tuple, so a list is never paired with another list's
    conversion or JSON text.
    """

    __slots__ = ("_convert", "_encoded", "_latest")

    def __init__(self, convert: Callable[[Tool], R]) -> None:
        self._convert = convert
        self._latest: tuple[list[Tool], list[R]] = ([], [])
        self._encoded: tuple[list[R], msgspec.Raw] | None = None

    def __call__(self, tools: Sequence[Tool]) -> list[R]:
        """Each tool converted; the same list as the last call's when ``tools`` are the same objects."""
        known, converted = self._latest
        if len(tools) == len(known) and all(map(is_, tools, known)):
            return converted
        convert = self._convert
        converted = [convert(tool) for tool in tools]
        self._latest = (list(tools), converted)
        return converted

    def encoded(self, converted: list[R]) -> list[R] | msgspec.Raw:
        """``converted`` as its JSON text when it is the latest call's result (encoded once), to
        splice into a request body (``xcsh.ai.clients.encode_body``: the same bytes as encoding
        the list); else, or when msgspec cannot encode it, ``converted`` itself."""
        kept = self._encoded
        if kept is not None and kept[0] is converted:
            return kept[1]
        if converted is not self._latest[1]:
            return converted
        try:
            raw = msgspec.Raw(msgspec.json.encode(converted))
        except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
            return converted
        self._encoded = (converted, raw)
        return raw
