"""The Anthropic and OpenAI wires stream over httpx2 with our own SSE decoding, never a vendor SDK."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Workspace, wire_model
from xcsh.ai.sse import LineSplitter, SseParser
from xcsh.ai.transport import endpoint_url, request_headers
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

SDKS = ("openai", "anthropic")


def imported(importtime_stderr: str) -> set[str]:
    """Module names in ``python -X importtime`` output."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:"):
            names.add(line.rsplit("|", 1)[-1].strip())
    return names


@pytest.mark.parametrize(
    "workspace", ["openai-completions", "anthropic-messages", "openai-responses"], indirect=True
)
async def test_a_streamed_answer_on_each_http_wire_imports_no_vendor_sdk(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.script(script.text("streamed without an SDK"))
    log = tmp_path / "importtime.txt"
    with log.open("wb") as stderr:
        command = [sys.executable, "-X", "importtime", "-m", "xcsh"]
        async with RpcClient.spawn(
            args=["--model", "fake/fake-model", "--no-session", "--no-tools"],
            cwd=workspace.proj,
            env=workspace.env,
            command=command,
            stderr=stderr,
        ) as client:
            frames = await client.prompt_and_wait("hi")
    deltas = [
        f["assistantMessageEvent"]["delta"]
        for f in frames
        if f["type"] == "message_update" and f["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert "".join(deltas) == "streamed without an SDK"
    names = imported(log.read_text())
    assert "httpx2" in names and "xcsh.ai.transport" in names  # the parse sees the real imports
    assert sorted(n for n in names if n.split(".")[0] in SDKS) == []


def events(raw: bytes, sizes: int) -> list[tuple[str | None, str]]:
    """``raw`` fed to the decoder in pieces of ``sizes`` bytes."""
    splitter, parser, out = LineSplitter(), SseParser(), []
    for start in range(0, len(raw), sizes):
        for line in splitter.feed(raw[start : start + sizes]):
            event = parser.line(line)
            if event is not None:
                out.append(event)
    for line in splitter.finish():
        event = parser.line(line)
        if event is not None:
            out.append(event)
    return out


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_server_sent_events_decode_the_same_whatever_the_line_ends_and_chunk_boundaries(size: int) -> None:
    body = (
        ": a comment\n"
        'event: message_start\ndata: {"a": 1}\n\n'
        "data: first\ndata: second\n\n"
        "event: ping\ndata:no space\n\n"
        "retry: 10\n\n"
        "data: é ✓\n\n"
        "data: tail without a blank line"
    ).encode()
    expected = [
        ("message_start", '{"a": 1}'),
        (None, "first\nsecond"),
        ("ping", "no space"),
        (None, ""),
        (None, "é ✓"),
    ]
    for line_end in (b"\n", b"\r\n", b"\r"):
        assert events(body.replace(b"\n", line_end), size) == expected


def test_a_line_that_is_not_utf8_raises_with_its_position_in_the_line() -> None:
    with pytest.raises(UnicodeDecodeError) as caught:
        events(b"data: ok\n\ndata: ab\xc3\n\n", 4)
    assert caught.value.start == 8


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://h/v1", "http://h/v1/chat/completions"),
        ("http://h/v1/", "http://h/v1/chat/completions"),
        ("http://h", "http://h/chat/completions"),
        ("http://h/proxy/v1?key=1", "http://h/proxy/v1/chat/completions?key=1"),
    ],
)
def test_the_endpoint_path_is_appended_to_the_base_url_as_the_sdks_did(base: str, url: str) -> None:
    assert endpoint_url(base, "/chat/completions") == url


def test_configured_headers_replace_the_defaults_whatever_their_case() -> None:
    from xcsh.ai.options import StreamOptions

    model: dict[str, object] = {"baseUrl": "http://h", "headers": {"authorization": "Bearer model"}}
    headers = request_headers("openai", model, StreamOptions(api_key="k", headers={"X-Extra": "1"}))  # type: ignore[arg-type]
    lowered = {k.lower(): v for k, v in headers.items()}
    assert len(lowered) == len(headers)
    assert lowered["authorization"] == "Bearer model" and lowered["x-extra"] == "1"
    assert lowered["user-agent"].startswith("xcsh/")
    anthropic = request_headers("anthropic", model, StreamOptions(api_key="k"))  # type: ignore[arg-type]
    assert anthropic["x-api-key"] == "k" and anthropic["anthropic-version"] == "2023-06-01"


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "openai-responses"])
async def test_consecutive_answers_on_each_wire_reuse_one_connection(api: str) -> None:
    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import complete
    from xcsh.testing.fake_llm import running

    with running() as fake:
        model = wire_model(fake.base_url, api)
        fake.script(script.text("one"), script.text("two"))
        for expected in ("one", "two"):
            context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
            message = await complete(model, context, StreamOptions(api_key="k"))
            assert [b.get("text") for b in message["content"]] == [expected], message.get("errorMessage")
        assert fake.connections == 1


@pytest.mark.parametrize(
    ("api", "suffix", "path", "auth"),
    [
        ("openai-completions", "/v1", "/proxy/v1/chat/completions", ("authorization", "Bearer k-123")),
        ("openai-responses", "/v1/", "/proxy/v1/responses", ("authorization", "Bearer k-123")),
        ("anthropic-messages", "", "/proxy/v1/messages", ("x-api-key", "k-123")),
    ],
)
async def test_a_request_reaches_the_joined_path_with_auth_and_configured_headers(
    api: str, suffix: str, path: str, auth: tuple[str, str]
) -> None:
    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import complete
    from xcsh.testing.fake_llm import running

    with running() as fake:
        model = wire_model(
            fake.base_url,
            api,
            baseUrl=fake.base_url + "/proxy" + suffix,
            headers={"X-Model": "m", "X-Both": "model"},
        )
        fake.script(script.text("ok"))
        context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
        options = StreamOptions(api_key="k-123", headers={"X-Both": "call"})
        message = await complete(model, context, options)
        assert message["stopReason"] == "stop", message.get("errorMessage")
        request = fake.requests[0]
    assert (request.method, request.path) == ("POST", path)
    headers = request.headers
    assert headers[auth[0]] == auth[1]
    assert headers["content-type"] == "application/json" and headers["user-agent"].startswith("xcsh/")
    assert headers["x-model"] == "m" and headers["x-both"] == "call"
    assert ("anthropic-version" in headers) == (api == "anthropic-messages")
    assert request.json["stream"] is True


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "openai-responses"])
async def test_an_abort_mid_stream_closes_the_connection(api: str) -> None:
    import asyncio

    from xcsh.ai.abort import AbortController
    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import stream
    from xcsh.testing.fake_llm import running

    with running() as fake:
        model = wire_model(fake.base_url, api)
        fake.script(script.hold("held until the client leaves"))
        controller = AbortController()
        context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
        async with asyncio.timeout(30):
            answer = stream(model, context, StreamOptions(api_key="k", signal=controller.signal))
            async for event in answer:
                if event["type"] == "text_delta":
                    controller.abort()
            message = await answer.result()
        assert message["stopReason"] == "aborted"
        # the server sees the connection closed: the held stream was not left open in the pool
        closed = await asyncio.to_thread(fake.wait_for_no_open_connection, 10.0)
        assert closed and fake.connections == 1


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "openai-responses"])
async def test_an_answer_leaves_no_async_generator_for_the_loop_to_close(api: str) -> None:
    """Each stream's generators are closed when the answer ends, whole or aborted, not by the loop's
    finaliser hook (which costs a thread-safe wake-up and a task per answer)."""
    import asyncio
    import gc

    from xcsh.ai.abort import AbortController
    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import complete, stream
    from xcsh.testing.fake_llm import running

    finalised: list[str] = []
    first_iter, finaliser = sys.get_asyncgen_hooks()
    assert finaliser is not None  # the loop's hook, installed by asyncio

    def recording(agen: Any) -> None:
        finalised.append(agen.ag_code.co_qualname)
        finaliser(agen)

    sys.set_asyncgen_hooks(first_iter, recording)
    try:
        with running() as fake:
            model = wire_model(fake.base_url, api)
            fake.script(script.text("one"), script.text("two"), script.hold("held until aborted"))
            context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
            for expected in ("one", "two"):
                message = await complete(model, context, StreamOptions(api_key="k"))
                assert [b.get("text") for b in message["content"]] == [expected], message.get("errorMessage")
            controller = AbortController()
            async with asyncio.timeout(30):
                answer = stream(model, context, StreamOptions(api_key="k", signal=controller.signal))
                async for event in answer:
                    if event["type"] == "text_delta":
                        controller.abort()
                assert (await answer.result())["stopReason"] == "aborted"
            gc.collect()
            await asyncio.sleep(0)
    finally:
        sys.set_asyncgen_hooks(first_iter, finaliser)
    assert finalised == []


async def test_a_compressed_stream_is_decoded_and_a_plain_one_passed_on_as_it_arrived() -> None:
    """The body is read raw only without ``Content-Encoding``; a gzip stream still decodes."""
    import asyncio
    import gzip
    import json

    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import complete

    def sse(text: str) -> bytes:
        delta = json.dumps({"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]})
        stop = json.dumps({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        return f"data: {delta}\n\ndata: {stop}\n\ndata: [DONE]\n\n".encode()

    bodies = [(b"gzip", gzip.compress(sse("unzipped"))), (None, sse("as sent"))]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for encoding, body in bodies:
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            if encoding:
                head += b"Content-Encoding: " + encoding + b"\r\n"
            half = len(body) // 2
            writer.write(head + b"\r\n")
            for part in (body[:half], body[half:]):
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    model = wire_model(f"http://127.0.0.1:{port}", "openai-completions")
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
    async with server:
        for expected in ("unzipped", "as sent"):
            message = await asyncio.wait_for(complete(model, context, StreamOptions(api_key="k")), 10)
            assert [b.get("text") for b in message["content"]] == [expected], message.get("errorMessage")


class HeldChunkedServer:
    """A loopback HTTP/1.1 server whose answers end when the test says so.

    Each request gets a 200 chunked ``text/event-stream`` whose one chunk is ``payload``; then
    ``hold(index, reader)`` is awaited (``index``: the request's place on its connection, from 0;
    ``reader``: the connection's), and when it returns True the terminating chunk follows.
    ``requests`` requests are answered per connection; False from ``hold`` ends the connection.
    ``connections`` counts the connections accepted. ``async with`` gives the base URL.
    """

    def __init__(
        self,
        payload: bytes,
        hold: Callable[[int, asyncio.StreamReader], Awaitable[bool]],
        *,
        requests: int = 1,
    ) -> None:
        self.payload, self.hold, self.requests = payload, hold, requests
        self.connections = 0
        self._server: asyncio.Server | None = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        for index in range(self.requests):
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            writer.write(head + b"%x\r\n%s\r\n" % (len(self.payload), self.payload))
            await writer.drain()
            if not await self.hold(index, reader):
                break
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        writer.close()

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        await self._server.__aenter__()
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        await self._server.__aexit__(*exc)


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses"])
async def test_a_finished_answer_is_handed_over_before_the_rest_of_its_body_and_the_connection_is_reused(
    api: str,
) -> None:
    """The message ends at ``[DONE]`` / ``response.completed``, before the chunked body's end is read;
    the next request on the client waits for that read and goes out on the same connection."""
    import asyncio
    import json

    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import complete, stream

    # the rest of the body arrives when the test says so: the read of it waits up to 30 s
    options = StreamOptions(api_key="k", drain_s=30.0)
    if api == "openai-completions":
        events = [
            {"id": "c", "choices": [{"index": 0, "delta": {"content": "held"}}]},
            {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    else:
        done = {
            "id": "r",
            "status": "completed",
            "output": [],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        events = [
            {"type": "response.output_item.added", "item": {"type": "message", "id": "m", "content": []}},
            {"type": "response.output_text.delta", "delta": "held"},
            {"type": "response.output_item.done", "item": {"type": "message", "id": "m"}},
            {"type": "response.completed", "response": done},
        ]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    release = asyncio.Event()

    async def hold_the_first(index: int, reader: asyncio.StreamReader) -> bool:
        if index == 0:
            await release.wait()  # the first body's end is held back
        return True

    server = HeldChunkedServer(body.encode(), hold_the_first, requests=2)
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
    async with server as base:
        model = wire_model(base + ("/v1" if api.startswith("openai") else ""), api)
        first = stream(model, context, options)
        message = await asyncio.wait_for(first.result(), 10)  # while the body's end is still held
        assert [b.get("text") for b in message["content"]] == ["held"], message.get("errorMessage")
        second = asyncio.ensure_future(complete(model, context, options))
        await asyncio.sleep(0)
        release.set()
        again = await asyncio.wait_for(second, 10)
        assert [b.get("text") for b in again["content"]] == ["held"], again.get("errorMessage")
        assert first.task is not None and first.task.done()
    assert server.connections == 1


async def test_an_abort_while_the_rest_of_a_finished_body_is_read_leaves_the_answer_as_it_ended() -> None:
    import asyncio
    import json

    from xcsh.ai.abort import AbortController
    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import stream

    chunks = [
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "kept"}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    payload = ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()
    closed = asyncio.Event()

    async def until_the_client_closes(index: int, reader: asyncio.StreamReader) -> bool:
        await reader.read()  # the body's end never comes; the client closes the connection
        closed.set()
        return False

    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}
    controller = AbortController()
    async with HeldChunkedServer(payload, until_the_client_closes) as base:
        model = wire_model(f"{base}/v1", "openai-completions")
        answered = stream(model, context, StreamOptions(api_key="k", signal=controller.signal, drain_s=30.0))
        message = await asyncio.wait_for(answered.result(), 10)
        controller.abort()
        await asyncio.wait_for(closed.wait(), 10)
        assert answered.task is not None
        await asyncio.wait_for(answered.task, 10)
    assert message["stopReason"] == "stop" and "errorMessage" not in message
    assert [b.get("text") for b in message["content"]] == ["kept"]
