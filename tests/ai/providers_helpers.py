"""Shared pieces of the provider tests (``tests/ai/test_<wire>.py``).

A running fake server, models aimed at it, the wire-shaped messages a conversation is
built from, and collecting a stream's events with a bound wait. Each test module keeps
its own model fields and wire details; import this as ``ai.providers_helpers`` (``tests/``
is on ``sys.path``) and bind the fixture with ``fake = providers_helpers.fake``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, cast

import pytest

from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import stream
from xcsh.ai.types import AssistantMessage, Context, Message, Model, StopReason, zero_usage
from xcsh.testing.fake_llm import FakeLLM, running
from xcsh.testing.script import text

# a 1×1 PNG
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TOOLS: list[Any] = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A running fake LLM server (leftover scripted steps are not an error here)."""
    with running() as server:
        yield server


def model_from(fields: dict[str, Any], **overrides: Any) -> Model:
    """A model made of ``fields`` with ``overrides`` applied on top."""
    return cast(Model, {**fields, **overrides})


def options(**kwargs: Any) -> StreamOptions:
    """Stream options with the test API key."""
    return StreamOptions(api_key="test-key", **kwargs)


def user(content: Any) -> Message:
    return {"role": "user", "content": content, "timestamp": 1}


def assistant_message(
    content: list[Any], *, api: str, provider: str, model: str, stop: StopReason | None = None
) -> Message:
    """An assistant message as ``provider``/``model`` produced it; ``toolUse`` when it calls a tool."""
    message: AssistantMessage = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": zero_usage(),
        "stopReason": stop or ("toolUse" if any(b["type"] == "toolCall" for b in content) else "stop"),
        "timestamp": 2,
    }
    return message


def tool_result(call_id: str, content: list[Any], *, is_error: bool = False, name: str = "read") -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
        "timestamp": 3,
    }


async def run_stream(
    model: Model, context: Context, opts: StreamOptions | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """Every event of one streamed call and its final message (within 30 s: the first call of a module imports the SDK, slow on a loaded machine)."""
    events: list[AssistantMessageEvent] = []
    async with asyncio.timeout(30):
        s = stream(model, context, opts or options())
        async for ev in s:
            events.append(ev)
        return events, await s.result()


async def sent_body(fake: FakeLLM, model: Model, context: Context, opts: StreamOptions | None = None) -> Any:
    """The JSON body the server recorded for one call answered with a short text."""
    fake.script(text("ok"))
    _, message = await run_stream(model, context, opts)
    assert message["stopReason"] == "stop", message.get("errorMessage")
    return fake.requests[-1].json


def kinds(events: list[AssistantMessageEvent]) -> list[str]:
    return [e["type"] for e in events]
