"""OpenAI chat-completion stream chunks without a pydantic model per chunk.

The SDK's ``AsyncStream`` builds a typed model for every chunk (``construct_type``), which was
half of the agent's busy time in a long streamed answer (docs/performance.md, profile 14).
:class:`PlainChunkStream` is that stream with the same transport, SSE decoder, ``[DONE]``
handling, in-stream error events (``APIError``) and connection errors, yielding each chunk as a
:class:`Fields` view of its decoded JSON instead: attribute access as on the SDK's models (a
field the chunk does not carry reads as ``None``), nothing built that is not read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from openai import APIError, AsyncStream
from openai._streaming_cleanup import drain_response_async
from openai._utils import is_mapping


class Fields:
    """Attribute access over a decoded JSON object (nested objects are wrapped on access)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        return _wrap(self._data.get(name))

    def __repr__(self) -> str:
        return f"Fields({self._data!r})"


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Fields(value)
    if isinstance(value, list):
        return [Fields(v) if isinstance(v, dict) else v for v in value]
    return value


def _decode(data: str) -> Any:
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        return json.loads(data)  # what msgspec refuses (NaN …), or the same error the SDK raised


class PlainChunkStream(AsyncStream[Any]):
    """``AsyncStream`` yielding :class:`Fields` views instead of ``ChatCompletionChunk`` models."""

    async def __stream__(self) -> AsyncIterator[Any]:  # type: ignore[override]
        response = self.response
        try:
            async for sse in self._iter_events():
                if sse.data.startswith("[DONE]"):
                    if response.http_version == "HTTP/1.1":
                        await drain_response_async(response)  # keeps the connection reusable
                    break
                data = _decode(sse.data)
                if is_mapping(data) and data.get("error"):
                    error = data.get("error")
                    message = error.get("message") if is_mapping(error) else None
                    if not message or not isinstance(message, str):
                        message = "An error occurred during streaming"
                    raise APIError(message=message, request=response.request, body=data["error"])
                yield Fields(data) if isinstance(data, dict) else data
        finally:
            await response.aclose()
