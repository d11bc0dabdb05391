"""The streaming contract every provider keeps, checked once per wire through its official SDK.

HTTP errors, a stream cut mid-way and an abort mid-stream end the stream the same way
whatever the vendor: one terminal ``error`` event, a readable ``errorMessage``, partial
content kept, no retry inside the SDK. Vendor-specific cases stay in ``test_<wire>.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ai import providers_helpers
from ai.providers_helpers import kinds, model_from, options, run_stream, user
from xcsh.ai.abort import AbortController
from xcsh.ai.errors import is_retryable, retry_hint_ms
from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.registry import stream
from xcsh.ai.types import Model
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Gate, Reply, cut, garbage, http_error

fake = providers_helpers.fake

# api → path the SDK expects after the server's address
WIRES = {
    "anthropic-messages": "",
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "google-generative-ai": "/v1beta",
}

pytestmark = pytest.mark.parametrize("api", list(WIRES))


def make_model(fake: FakeLLM, api: str) -> Model:
    fields: dict[str, Any] = {
        "id": "contract-model",
        "name": "Contract Model",
        "api": api,
        "provider": "contract",
        "baseUrl": f"{fake.base_url}{WIRES[api]}",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 100000,
        "maxTokens": 1000,
    }
    return model_from(fields)


async def test_http_429_ends_as_one_retryable_error_carrying_the_vendor_message_and_retry_after(
    fake: FakeLLM, api: str
) -> None:
    fake.script(http_error(429, "Slow down please", retry_after=7))
    events, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    assert kinds(events) == ["error"]
    error = message.get("errorMessage", "")
    assert message["stopReason"] == "error" and error.startswith("429 ")
    assert "Slow down please" in error
    assert retry_hint_ms(error) == 7000 and is_retryable(error)
    assert len(fake.requests) == 1  # the SDK did not retry on its own


async def test_http_500_ends_as_one_retryable_error_without_sdk_retries(fake: FakeLLM, api: str) -> None:
    fake.script(http_error(500, "Internal trouble"))
    _, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    error = message.get("errorMessage", "")
    assert message["stopReason"] == "error" and error.startswith("500 ") and "Internal trouble" in error
    assert is_retryable(error)
    assert len(fake.requests) == 1


async def test_stream_cut_mid_response_is_a_retryable_connection_error_keeping_partial_text(
    fake: FakeLLM, api: str
) -> None:
    fake.script(cut("Partial"))
    events, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    error = message.get("errorMessage", "")
    assert message["stopReason"] == "error"
    assert error == "Connection error: contract closed the connection before the answer was complete"
    assert is_retryable(error)
    assert message["content"] == [{"type": "text", "text": "Partial"}]
    assert "text_end" not in kinds(events)
    assert len(fake.requests) == 1  # the SDK did not resume the stream on its own


async def test_abort_mid_stream_ends_as_aborted_without_closing_the_open_block(
    fake: FakeLLM, api: str
) -> None:
    gate = Gate()
    fake.script(Reply(text=["Partial answer", " and more"], gate=gate))
    controller = AbortController()
    events: list[AssistantMessageEvent] = []
    async with asyncio.timeout(5):
        s = stream(make_model(fake, api), {"messages": [user("hi")]}, options(signal=controller.signal))
        async for ev in s:
            events.append(ev)
            if ev["type"] == "text_delta":
                controller.abort()
        message = await s.result()
    gate.release()
    assert message["stopReason"] == "aborted"
    assert message["errorMessage"] == "Request was aborted"
    assert message["content"] == [{"type": "text", "text": "Partial answer"}]
    assert kinds(events) == ["start", "text_start", "text_delta", "error"]
    assert events[-1]["type"] == "error" and events[-1]["reason"] == "aborted"


async def test_an_error_body_that_is_not_utf8_is_one_sentence_naming_the_provider(
    fake: FakeLLM, api: str
) -> None:
    fake.script(http_error(529, raw_body=b"\xa5\xff overloaded"))
    _, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    error = message.get("errorMessage", "")
    assert "codec" not in error and "\ufffd" not in error
    if api == "google-generative-ai":  # the SDK decodes the body before the status is known
        assert error == "contract sent a response that is not UTF-8 text (byte 0xa5 at position 0)"
    else:
        assert error == "contract answered HTTP 529 (Overloaded) with a body that is not UTF-8 text"
        assert is_retryable(error)


async def test_an_empty_error_body_is_one_retryable_sentence_naming_the_provider(
    fake: FakeLLM, api: str
) -> None:
    fake.script(http_error(503, raw_body=b""))
    _, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    error = message.get("errorMessage", "")
    assert error == "contract answered HTTP 503 (Service Unavailable) with an empty body"
    assert is_retryable(error)


async def test_a_stream_that_is_not_utf8_is_one_sentence_naming_the_provider(fake: FakeLLM, api: str) -> None:
    fake.script(garbage(b"data: \xa5\xff\n\n"))
    _, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    assert message["stopReason"] == "error"
    assert message.get("errorMessage", "").startswith("contract sent a response that is not UTF-8 text")


async def test_an_empty_stream_is_a_retryable_sentence_naming_the_provider(fake: FakeLLM, api: str) -> None:
    fake.script(garbage(b""))
    _, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    error = message.get("errorMessage", "")
    assert error == "Connection error: contract ended the stream without sending an answer"
    assert is_retryable(error)


async def test_a_rejected_key_echoed_by_the_provider_is_redacted(fake: FakeLLM, api: str) -> None:
    fake.script(http_error(401, "Incorrect API key provided: test-key."))
    _, message = await run_stream(make_model(fake, api), {"messages": [user("hi")]})
    error = message.get("errorMessage", "")
    assert "test-key" not in error and "Incorrect API key provided: [redacted]." in error
