"""A provider stream with well-formed SSE framing but wrongly shaped JSON ends the answer plainly.

The table is generated: each wire's fake server renders a well-formed answer (thinking, text,
one tool call, usage), then every JSON value of every event, at every level, is replaced in
turn by a value of another kind (a string, a number, an array, an object, null, ``1e308``,
a 31-digit integer) or removed. Each variant is served by the fake LLM and read by the real
provider. Whatever the variant, the call ends within the bound and either

- ends normally (the value was one the message model does not read, or ``null`` for an
  optional field), or
- ends with ``stopReason`` ``error`` and an ``errorMessage`` that names the provider and the
  wire and says what was wrong (``Malformed response from prov (<wire> stream): <field> is a
  number, expected a string``), or one of the existing plain sentences (a cut stream, an
  unknown finish reason); never a bare Python error such as ``'str' object has no attribute
  'get'``, and never the registry's last-resort "could not be read".

Hand-written rows add what a generator of values cannot: truncated events, dropped
connections, bytes that are not UTF-8 inside a JSON string, unknown event types only, a huge
single line. The retry column says whether the spec's retry rules (agent-behaviour.md §6.1)
classify the text as transient: a dropped connection is, a malformed answer is not.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import wire_model
from xcsh.ai.errors import is_retryable
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import WIRE_NAMES, complete, register_provider
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM, running

TOOLS: list[Any] = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]
# api → (fake wire module, extra model fields, whether the context offers tools)
WIRES: dict[str, tuple[str, dict[str, Any], bool]] = {
    "anthropic-messages": ("anthropic", {}, False),
    "openai-completions": ("openai_chat", {}, False),
    "openai-responses": ("openai_responses", {}, False),
    "google-generative-ai": ("gemini", {}, False),
    # the embedded model's path: chat completions with schema-constrained output
    "constrained": ("openai_chat", {"compat": {"constrainedToolCalls": True}}, True),
}
REPLACEMENTS: list[Any] = ["x", 7, [], {"k": 1}, None, 1e308, 10**30]
_REMOVED = object()
_BARE_PYTHON = re.compile(
    r"object has no attribute|object is not|unsupported operand|can only concatenate|"
    r"not subscriptable|argument of type|could not be read \(",
)


def _reply(api: str) -> script.Reply:
    if api == "constrained":
        return script.Reply(text=['{"final": "he', 'llo"}'], prompt_tokens=3, completion_tokens=2)
    call = script.ToolCallSpec("c1", "read", '{"path": "a.txt"}')
    return script.Reply(
        text=["he", "llo"], thinking=["hm"], tool_calls=[call], prompt_tokens=3, completion_tokens=2
    )


def _frames(api: str) -> list[bytes]:
    wire = importlib.import_module(f"xcsh.testing.wires.{WIRES[api][0]}")
    head, tail = wire.render(_reply(api), {"model": "m1"})
    return [*head, *tail]


def _split(frame: bytes) -> tuple[bytes, Any, bytes] | None:
    """A frame as (bytes before the JSON, the JSON, bytes after), None without a JSON data line."""
    start = frame.find(b"data: ")
    if start < 0:
        return None
    end = frame.find(b"\n", start)
    raw = frame[start + 6 : end].rstrip(b"\r")
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return frame[: start + 6], value, frame[start + 6 + len(raw) :]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    if new is _REMOVED:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return out


def shape_cases(api: str) -> list[tuple[str, bytes]]:
    """(name, whole body) for every replacement of every JSON value of every event of ``api``."""
    frames = _frames(api)
    cases: list[tuple[str, bytes]] = []
    for index, frame in enumerate(frames):
        parts = _split(frame)
        if parts is None:
            continue
        before, value, after = parts
        for path in _paths(value):
            for new in [*REPLACEMENTS, *([_REMOVED] if path else [])]:
                if new is not _REMOVED and type(new) is type(_get(value, path)):
                    continue  # same kind as the original: not a shape error
                mutated = _replaced(value, path, new)
                body = json.dumps(mutated).encode()
                name = f"event {index} {'.'.join(map(str, path)) or '(whole)'} := {'removed' if new is _REMOVED else repr(new)[:12]}"
                cases.append((name, b"".join([*frames[:index], before + body + after, *frames[index + 1 :]])))
    return cases


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _model(server: FakeLLM, api: str) -> Any:
    real_api = "openai-completions" if api == "constrained" else api
    return wire_model(
        server.base_url,
        real_api,
        id="m1",
        name="m1",
        provider="prov",
        contextWindow=100000,
        maxTokens=1000,
        **WIRES[api][1],
    )


async def _answer(server: FakeLLM, api: str, step: Any) -> dict[str, Any]:
    server.reset()
    server.script(step)
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
    if WIRES[api][2]:
        context["tools"] = TOOLS
    async with asyncio.timeout(20):
        message: Any = await complete(_model(server, api), context, StreamOptions(api_key="test-key-123456"))
    return dict(message)


def _wire_name(api: str) -> str:
    return WIRE_NAMES["openai-completions" if api == "constrained" else api]


def problem(api: str, message: dict[str, Any]) -> str | None:
    """Why ``message`` is not an acceptable end for a malformed answer (None: it is)."""
    json.dumps(message)  # whatever it holds, it can be written to a frame and a session file
    reason = message["stopReason"]
    if reason in ("stop", "toolUse", "length"):
        return None
    if reason != "error":
        return f"stopReason {reason!r}"
    text = message.get("errorMessage") or ""
    if _BARE_PYTHON.search(text):
        return f"unclear errorMessage {text!r}"
    if text.startswith("Malformed response from "):
        if not text.startswith(f"Malformed response from prov ({_wire_name(api)} stream): "):
            return f"errorMessage does not name the provider and wire: {text!r}"
        if is_retryable(text):
            return f"a malformed answer classified as retryable: {text!r}"
        return None
    if text.startswith(
        (
            "Connection error: prov ",
            "Provider finish_reason: ",
            "Provider stop_reason: ",
            "prov sent a response",
        )
    ):
        return None
    return f"unexpected errorMessage {text!r}"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLM]:
    with running() as fake:
        yield fake


@pytest.mark.parametrize("api", list(WIRES))
async def test_every_wrongly_shaped_value_of_every_event_ends_the_answer_plainly(
    server: FakeLLM, api: str
) -> None:
    cases = shape_cases(api)
    assert len(cases) > 100  # the generator found the events' values
    failures: list[str] = []
    errors = 0
    for name, body in cases:
        message = await _answer(server, api, script.garbage(body))
        errors += message["stopReason"] == "error"
        found = problem(api, message)
        if found is not None:
            failures.append(f"{name}: {found}")
    assert not failures, "\n".join(failures[:40])
    assert errors > len(cases) // 20  # the wrong shapes were read, not all skipped


# (name, body of a 200 stream after the wire's first event, cut the connection after it, what
#  errorMessage must contain and whether the spec's rules retry it; the same on Gemini, whose SDK
#  reads every line of the body as JSON and decodes it with replacement characters)
ROWS: list[tuple[str, bytes, bool, tuple[str, bool], tuple[str, bool]]] = [
    (
        "truncated mid-event",
        b'event: content_block_delta\ndata: {"type": "content_blo',
        False,
        ("ended the stream", True),
        ("invalid JSON", False),
    ),
    (
        "dropped mid-event",
        b'data: {"type": "content_blo',
        True,
        ("closed the connection", True),
        ("closed the connection", True),
    ),
    ("dropped between events", b"", True, ("closed the connection", True), ("closed the connection", True)),
    (
        "not UTF-8 inside a JSON string",
        b'event: x\ndata: {"type": "x", "text": "\xc3\x28"}\n\n',
        False,
        ("not UTF-8", False),
        ("invalid JSON", False),
    ),
    (
        "unknown event types only",
        b'event: surprise\ndata: {"type": "surprise", "v": [1]}\n\n',
        False,
        ("ended the stream", True),
        ("invalid JSON", False),
    ),
    (
        "a 2 MB line of an unknown event",
        b'data: {"type": "big", "v": "' + b"x" * 2_000_000 + b'"}\n\n',
        False,
        ("ended the stream", True),
        ("ended the stream", True),
    ),
    (
        "invalid JSON",
        b"event: content_block_delta\ndata: {nope\n\n",
        False,
        ("invalid JSON", False),
        ("invalid JSON", False),
    ),
]


@pytest.mark.parametrize("api", list(WIRES))
@pytest.mark.parametrize(("name", "body", "cut", "usual", "gemini"), ROWS, ids=[row[0] for row in ROWS])
async def test_a_cut_truncated_or_undecodable_stream_ends_with_a_plain_error_and_the_spec_s_retry_class(
    server: FakeLLM,
    api: str,
    name: str,
    body: bytes,
    cut: bool,
    usual: tuple[str, bool],
    gemini: tuple[str, bool],
) -> None:
    says, retryable = gemini if api == "google-generative-ai" else usual
    message = await _answer(server, api, script.garbage(_frames(api)[0] + body, cut=cut))
    assert message["stopReason"] == "error", name
    text = message["errorMessage"]
    assert says in text and "prov" in text, text
    assert problem(api, message) is None, text
    assert is_retryable(text) == retryable, text


async def test_a_python_error_raised_once_the_answer_started_reads_as_a_malformed_response() -> None:
    async def provider(model: Any, context: Any, options: Any, builder: Any) -> None:
        builder.start()
        {}.get("x").get("y")  # a shape the provider did not check

    register_provider("shape-test-api", provider)
    model: Any = {**wire_model("http://127.0.0.1:9", "openai-completions"), "api": "shape-test-api"}
    message = await complete(model, {"messages": []}, StreamOptions())
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (
        "Malformed response from fake (shape-test-api stream): an event could not be read "
        "(AttributeError: 'NoneType' object has no attribute 'get')"
    )


async def test_a_usage_that_cannot_be_priced_still_ends_the_stream() -> None:
    async def provider(model: Any, context: Any, options: Any, builder: Any) -> None:
        builder.start()
        builder.usage["output"] = "many"  # what a provider without count checks once let through
        builder.finish()

    register_provider("shape-test-usage", provider)
    model: Any = {**wire_model("http://127.0.0.1:9", "openai-completions"), "api": "shape-test-usage"}
    async with asyncio.timeout(10):
        message = await complete(model, {"messages": []}, StreamOptions())
    assert message["stopReason"] == "error"
    assert message["usage"]["output"] == 0
