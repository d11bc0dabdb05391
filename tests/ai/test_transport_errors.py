"""Every failure reads as it did when the vendor SDKs carried the request (xcsh/ai/transport.py).

The expected texts were recorded on the SDK path (``anthropic`` 2.15, ``openai`` 3.57) by running
each scenario against the fake LLM on each wire, before the SDKs were replaced; the new path
must give the same ``errorMessage`` (docs/decisions.md). Rows differ on purpose where the SDK's
text was unclear: an OpenAI chat chunk that is not a JSON object (``data-null``, ``data-list``) is
skipped, as on the other wires, instead of failing with an ``AttributeError`` text; invalid JSON
names the wire (``Malformed response from prov (OpenAI Responses stream): invalid JSON: …``,
tests/ai/test_stream_shapes.py).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import wire_model
from xcsh.ai.errors import is_context_overflow, is_retryable
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import complete
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM, running

APIS = ("openai-completions", "anthropic-messages", "openai-responses")
KEY = "test-key-123456"

# (scenario, what the server answers, errorMessage on the chat / Anthropic / Responses wire)
CASES: list[tuple[str, Any, tuple[str, str, str]]] = [
    (
        "400",
        script.http_error(400, "bad request"),
        (
            "400 invalid_request_error: bad request",
            "400 invalid_request_error: bad request",
            "400 invalid_request_error: bad request",
        ),
    ),
    (
        "400-error-string",
        script.http_error(400, raw_body=b'{"error":"plain string"}'),
        ("400 Error code: 400", "400 plain string", "400 Error code: 400"),
    ),
    (
        "400-json-string",
        script.http_error(400, raw_body=b'"just a string"'),
        ("400 Error code: 400", "400 Error code: 400 - just a string", "400 Error code: 400"),
    ),
    (
        "400-list",
        script.http_error(400, raw_body=b"[1,2]"),
        ("400 Error code: 400", "400 Error code: 400 - [1, 2]", "400 Error code: 400"),
    ),
    (
        "400-ws",
        script.http_error(400, raw_body=b"  \n"),
        (
            "prov answered HTTP 400 (Bad Request) with an empty body",
            "prov answered HTTP 400 (Bad Request) with an empty body",
            "prov answered HTTP 400 (Bad Request) with an empty body",
        ),
    ),
    (
        "401",
        script.http_error(
            401, "Incorrect API key provided: test-key-123456.", error_type="authentication_error"
        ),
        (
            "401 authentication_error: Incorrect API key provided: [redacted].",
            "401 authentication_error: Incorrect API key provided: [redacted].",
            "401 authentication_error: Incorrect API key provided: [redacted].",
        ),
    ),
    (
        "404",
        script.http_error(404, "no such model"),
        (
            "404 invalid_request_error: no such model",
            "404 not_found_error: no such model",
            "404 invalid_request_error: no such model",
        ),
    ),
    (
        "413",
        script.http_error(413, "request_too_large"),
        (
            "413 invalid_request_error: request_too_large",
            "413 request_too_large",
            "413 invalid_request_error: request_too_large",
        ),
    ),
    (
        "422-detail",
        script.http_error(422, raw_body=b'{"detail":"x"}'),
        ("422 Error code: 422", "422 Error code: 422 - {'detail': 'x'}", "422 Error code: 422"),
    ),
    (
        "429",
        script.http_error(429, "Slow down", retry_after=7),
        (
            "429 invalid_request_error: Slow down (retry-after: 7)",
            "429 rate_limit_error: Slow down (retry-after: 7)",
            "429 rate_limit_exceeded: Slow down (retry-after: 7)",
        ),
    ),
    (
        "500",
        script.http_error(500, "Internal trouble"),
        (
            "500 invalid_request_error: Internal trouble",
            "500 api_error: Internal trouble",
            "500 server_error: Internal trouble",
        ),
    ),
    (
        "502-html",
        script.http_error(502, raw_body=b"<html>bad gateway</html>"),
        ("502 Error code: 502", "502 <html>bad gateway</html>", "502 Error code: 502"),
    ),
    (
        "503",
        script.http_error(503, "busy"),
        ("503 invalid_request_error: busy", "503 api_error: busy", "503 server_error: busy"),
    ),
    (
        "503-empty",
        script.http_error(503, raw_body=b""),
        (
            "prov answered HTTP 503 (Service Unavailable) with an empty body",
            "prov answered HTTP 503 (Service Unavailable) with an empty body",
            "prov answered HTTP 503 (Service Unavailable) with an empty body",
        ),
    ),
    (
        "529",
        script.http_error(529, "Overloaded", error_type="overloaded_error"),
        (
            "529 overloaded_error: Overloaded",
            "529 overloaded_error: Overloaded",
            "529 overloaded_error: Overloaded",
        ),
    ),
    (
        "529-not-utf8",
        script.http_error(529, raw_body=b"\xa5\xff overloaded"),
        (
            "prov answered HTTP 529 (Overloaded) with a body that is not UTF-8 text",
            "prov answered HTTP 529 (Overloaded) with a body that is not UTF-8 text",
            "prov answered HTTP 529 (Overloaded) with a body that is not UTF-8 text",
        ),
    ),
    (
        "anthropic-error-event",
        script.garbage(
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
        ),
        ("overloaded_error: Overloaded", "overloaded_error: Overloaded", "overloaded_error: Overloaded"),
    ),
    (
        "cut",
        script.cut("partial"),
        (
            "Connection error: prov closed the connection before the answer was complete",
            "Connection error: prov closed the connection before the answer was complete",
            "Connection error: prov closed the connection before the answer was complete",
        ),
    ),
    (
        "data-list",
        script.garbage(b"data: [1]\n\n"),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "data-nan",
        script.garbage(b'data: {"x": NaN}\n\n'),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "data-null",
        script.garbage(b"data: null\n\n"),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "done-only",
        script.garbage(b"data: [DONE]\n\n"),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "empty-stream",
        script.garbage(b""),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "error-event-empty",
        script.garbage(b"event: error\n\n"),
        (
            "Malformed response from prov (OpenAI chat completions stream): invalid JSON: Expecting value: line 1 column 1 (char 0)",
            "Error code: 200",
            "Malformed response from prov (OpenAI Responses stream): invalid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
    ),
    (
        "error-event-not-json",
        script.garbage(b"event: error\ndata: not json\n\n"),
        (
            "Malformed response from prov (OpenAI chat completions stream): invalid JSON: Expecting value: line 1 column 1 (char 0)",
            "not json",
            "Malformed response from prov (OpenAI Responses stream): invalid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
    ),
    (
        "garbage",
        script.garbage(),
        (
            "Malformed response from prov (OpenAI chat completions stream): invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            "Connection error: prov ended the stream without sending an answer",
            "Malformed response from prov (OpenAI Responses stream): invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
    ),
    (
        "garbage-not-utf8",
        script.garbage(b"data: \xff\xfe\n\n"),
        (
            "prov sent a response that is not UTF-8 text (byte 0xff at position 6)",
            "prov sent a response that is not UTF-8 text (byte 0xff at position 6)",
            "prov sent a response that is not UTF-8 text (byte 0xff at position 6)",
        ),
    ),
    (
        "garbage-not-utf8-later",
        script.garbage(b'data: {"a": 1}\n\ndata: ab\xc3\n\n'),
        (
            "prov sent a response that is not UTF-8 text (byte 0xc3 at position 8)",
            "prov sent a response that is not UTF-8 text (byte 0xc3 at position 8)",
            "prov sent a response that is not UTF-8 text (byte 0xc3 at position 8)",
        ),
    ),
    (
        "no-trailing-blank",
        script.garbage(b'data: {"a": 1}'),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "odd-stop",
        script.text("abc", stop="weird_reason"),
        (
            "Provider finish_reason: weird_reason",
            "Provider stop_reason: weird_reason",
            "Provider finish_reason: weird_reason",
        ),
    ),
    (
        "openai-error-chunk",
        script.garbage(b'data: {"error":{"message":"boom","type":"server_error"}}\n\n'),
        (
            "server_error: boom",
            "Connection error: prov ended the stream without sending an answer",
            "server_error: boom",
        ),
    ),
    (
        "openai-error-chunk-nomsg",
        script.garbage(b'data: {"error":{"code":5}}\n\n'),
        (
            "An error occurred during streaming",
            "Connection error: prov ended the stream without sending an answer",
            "An error occurred during streaming",
        ),
    ),
    (
        "openai-error-chunk-str",
        script.garbage(b'data: {"error":"str"}\n\n'),
        (
            "An error occurred during streaming",
            "Connection error: prov ended the stream without sending an answer",
            "An error occurred during streaming",
        ),
    ),
    (
        "ping-only",
        script.garbage(b"event: ping\ndata: {}\n\n"),
        (
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
            "Connection error: prov ended the stream without sending an answer",
        ),
    ),
    (
        "responses-error-event",
        script.garbage(b'event: error\ndata: {"type":"error","code":"rate_limit","message":"slow"}\n\n'),
        (
            "Connection error: prov ended the stream without sending an answer",
            "{'type': 'error', 'code': 'rate_limit', 'message': 'slow'}",
            "rate_limit: slow",
        ),
    ),
]


REFUSED = "Connection error."
TIMED_OUT_OPENAI = "Connection error: Request timed out."  # the OpenAI SDK wrapped read errors
TIMED_OUT_ANTHROPIC = "Connection error: ReadTimeout"  # the Anthropic SDK let httpx2's through


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLM]:
    with running() as fake:
        yield fake


def model(base_url: str, api: str) -> Any:
    return wire_model(
        base_url, api, id="m1", name="m1", provider="prov", contextWindow=100000, maxTokens=1000
    )


async def error_of(target: Any, opts: StreamOptions) -> str | None:
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    async with asyncio.timeout(30):
        message = await complete(target, context, opts)
    assert message["stopReason"] == "error"
    return message.get("errorMessage")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("name", "step", "expected"), CASES, ids=[case[0] for case in CASES])
async def test_a_failure_reads_as_it_did_with_the_vendor_sdk(
    server: FakeLLM, api: str, name: str, step: Any, expected: tuple[str, str, str]
) -> None:
    server.reset()
    server.script(step)
    text = await error_of(model(server.base_url, api), StreamOptions(api_key=KEY))
    assert text == expected[APIS.index(api)], name


@pytest.mark.parametrize("api", APIS)
async def test_a_refused_connection_and_a_read_timeout_read_as_they_did_with_the_vendor_sdk(
    server: FakeLLM, api: str
) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    refused = await error_of(model(f"http://127.0.0.1:{port}", api), StreamOptions(api_key=KEY))
    assert refused == REFUSED
    server.reset()
    server.script(script.hold("held"))
    timed_out = await error_of(model(server.base_url, api), StreamOptions(api_key=KEY, timeout_s=0.5))
    assert timed_out == (TIMED_OUT_ANTHROPIC if api == "anthropic-messages" else TIMED_OUT_OPENAI)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("status", [400, 413])
async def test_an_empty_400_or_413_reads_as_a_context_overflow_on_every_wire(
    server: FakeLLM, api: str, status: int
) -> None:
    """Spec §7.5: "400 (no body)" / "413 (no body)" are overflows, whatever the wording (review 2 D5)."""
    server.reset()
    server.script(script.http_error(status, raw_body=b""))
    text = await error_of(model(server.base_url, api), StreamOptions(api_key=KEY))
    assert text is not None and text.endswith("with an empty body")
    assert is_context_overflow(text)
    assert not is_retryable(text)


def test_an_empty_413_is_an_overflow_in_the_reason_phrase_of_python_3_13_too() -> None:
    assert is_context_overflow("custom answered HTTP 413 (Content Too Large) with an empty body")
    assert not is_context_overflow("custom answered HTTP 500 (Internal Server Error) with an empty body")
