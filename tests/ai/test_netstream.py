"""The asyncio network backend (xcsh/ai/netstream.py) answers as httpcore2's default (anyio) one.

Each scenario runs against a server on loopback through both backends and must end the same
way: the same bytes, or the same exception type with the same text. The plain-http clients of
:mod:`xcsh.ai.transport` are shown to use it.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpcore2

from conftest import wire_model
from xcsh.ai import clients, netstream, transport
from xcsh.ai.options import StreamOptions
from xcsh.testing.fake_llm import FakeLLM

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
BACKENDS = {"anyio": httpcore2.AnyIOBackend, "asyncio": netstream.AsyncioBackend}


@asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[int]:
    """A loopback server running ``handler`` per connection; yields its port."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def outcome(call: Awaitable[Any]) -> tuple[str, str]:
    """What a call ended with: its result's repr, or its exception's type and text."""
    try:
        async with asyncio.timeout(10):
            return ("result", repr(await call))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


async def read_all(stream: httpcore2.AsyncNetworkStream, timeout: float | None = 5) -> bytes:
    out = b""
    while chunk := await stream.read(65536, timeout=timeout):
        out += chunk
    return out


async def both(scenario: Callable[[httpcore2.AsyncNetworkBackend], Awaitable[Any]]) -> dict[str, Any]:
    return {name: await outcome(scenario(backend())) for name, backend in BACKENDS.items()}


async def read_after_lagging(
    stream: httpcore2.AsyncNetworkStream, done: asyncio.Event, most_buffered: int | None = None
) -> bytes:
    """Wait (loop turns) until the adapter has paused reading with the server's writes still
    blocked (``done`` unset), then read everything; each read finds at most ``most_buffered``
    bytes waiting, when given. The stream is closed."""
    assert isinstance(stream, netstream.AsyncioStream)
    protocol = stream._protocol
    for _ in range(100_000):
        if protocol.read_paused:
            break
        await asyncio.sleep(0)
    assert protocol.read_paused and not done.is_set()
    received = bytearray()
    while chunk := await stream.read(65536, timeout=5):
        assert most_buffered is None or protocol.buffered <= most_buffered
        received += chunk
    await stream.aclose()
    return bytes(received)


async def test_bytes_then_the_end_read_the_same() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello, " * 1000)
        await writer.drain()
        writer.close()

    async with serving(handler) as port:

        async def scenario(backend: httpcore2.AsyncNetworkBackend) -> tuple[bytes, bytes]:
            stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
            first = await stream.read(4, timeout=5)  # at most max_bytes
            rest = await read_all(stream)
            await stream.aclose()
            return first, rest

        results = await both(scenario)
    assert results["asyncio"] == results["anyio"] == ("result", repr((b"hell", b"o, " + b"hello, " * 999)))


async def test_a_reset_connection_and_a_silent_one_fail_the_same() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"partial")
        await writer.drain()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    async with serving(reset) as reset_port, serving(silent) as silent_port:

        async def after_reset(backend: httpcore2.AsyncNetworkBackend) -> bytes:
            stream = await backend.connect_tcp("127.0.0.1", reset_port, timeout=5)
            try:
                return await read_all(stream)
            finally:
                await stream.aclose()

        async def read_timeout(backend: httpcore2.AsyncNetworkBackend) -> bytes:
            stream = await backend.connect_tcp("127.0.0.1", silent_port, timeout=5)
            try:
                return await stream.read(100, timeout=0.05)
            finally:
                await stream.aclose()

        async def write_timeout(backend: httpcore2.AsyncNetworkBackend) -> None:
            stream = await backend.connect_tcp("127.0.0.1", silent_port, timeout=5)
            try:  # the server never reads: the kernel's buffers fill up
                await stream.write(b"x" * (64 << 20), timeout=0.2)
            finally:
                await stream.aclose()

        reset_results = await both(after_reset)
        read_results = await both(read_timeout)
        write_results = await both(write_timeout)
    for writer in held:
        writer.close()
    assert reset_results["asyncio"] == reset_results["anyio"] == ("ReadError", "")
    assert read_results["asyncio"] == read_results["anyio"] == ("ReadTimeout", "")
    assert write_results["asyncio"] == write_results["anyio"] == ("WriteTimeout", "")


async def test_after_the_peer_ends_its_side_the_stream_reads_the_end_and_still_writes() -> None:
    received: asyncio.Queue[bytes] = asyncio.Queue()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"bye")
        writer.write_eof()
        received.put_nowait(await reader.readexactly(4))  # what the client writes after our end
        writer.close()

    async with serving(handler) as port:

        async def scenario(backend: httpcore2.AsyncNetworkBackend) -> tuple[bytes, bool, bytes, bytes]:
            stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
            data = await read_all(stream)
            readable = stream.get_extra_info("is_readable")
            await stream.write(b"late", timeout=5)
            end = await stream.read(100, timeout=5)  # as httpcore2 reads after writing a request
            late = await received.get()
            await stream.aclose()
            return data, readable, end, late

        results = await both(scenario)
    assert results["asyncio"] == results["anyio"] == ("result", repr((b"bye", True, b"", b"late")))


async def test_an_idle_connection_is_readable_only_once_the_server_closed_it() -> None:
    writers: list[asyncio.StreamWriter] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)

    async with serving(handler) as port:

        async def scenario(backend: httpcore2.AsyncNetworkBackend) -> tuple[bool, bool]:
            stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
            while not writers:  # the server has taken the connection
                await asyncio.sleep(0)
            idle = stream.get_extra_info("is_readable")
            server_side = writers.pop()
            server_side.close()
            await server_side.wait_closed()
            closed = stream.get_extra_info("is_readable")
            await stream.aclose()
            return idle, closed

        results = await both(scenario)
    assert results["asyncio"] == results["anyio"] == ("result", repr((False, True)))


async def test_a_refused_connection_and_a_failed_tls_handshake_fail_the_same() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    refused_port = sock.getsockname()[1]
    sock.close()  # nothing listens there now

    async def not_tls(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        writer.close()

    async with serving(not_tls) as port:

        async def refused(backend: httpcore2.AsyncNetworkBackend) -> None:
            await backend.connect_tcp("127.0.0.1", refused_port, timeout=5)

        async def handshake(backend: httpcore2.AsyncNetworkBackend) -> None:
            stream = await backend.connect_tcp("127.0.0.1", port, timeout=5)
            context = clients.shared_ssl_context(trust_env=False)
            await stream.start_tls(context, server_hostname="127.0.0.1", timeout=5)

        refused_results = await both(refused)
        tls_results = await both(handshake)
    assert (
        refused_results["asyncio"]
        == refused_results["anyio"]
        == ("ConnectError", "All connection attempts failed")
    )
    assert tls_results["asyncio"][0] == tls_results["anyio"][0] == "ConnectError"


async def test_short_writes_leave_together_at_the_next_read() -> None:
    async def echo_first_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.read(65536))  # whatever the first read got
        writer.close()

    async with serving(echo_first_read) as port:
        stream = await netstream.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
        await stream.write(b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n", timeout=5)  # a head
        for _ in range(20):  # loop turns in which the server would read a head sent alone
            await asyncio.sleep(0)
        await stream.write(b"body", timeout=5)
        echoed = await read_all(stream)
        await stream.aclose()
    assert echoed == b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody"


async def test_a_reader_that_lags_leaves_the_rest_in_the_kernel_and_gets_every_byte_in_order() -> None:
    payload = bytes(range(256)) * (16 << 10)  # 4 MiB
    done = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(payload)
        await writer.drain()
        done.set()
        writer.close()

    async with serving(handler) as port:
        stream = await netstream.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
        # at most two socket reads (asyncio's size) wait at any read
        received = await read_after_lagging(stream, done, most_buffered=2 * 256 * 1024)
    assert received == payload and done.is_set()


@asynccontextmanager
async def serving_tls(handler: Handler) -> AsyncIterator[tuple[int, ssl.SSLContext]]:
    """A loopback TLS server (a test CA's certificate for 127.0.0.1); yields its port and a
    client context trusting that CA."""
    import trustme

    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_context)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=server_context)
    try:
        yield server.sockets[0].getsockname()[1], client_context
    finally:
        server.close()


async def test_after_start_tls_a_reader_that_lags_still_gets_every_byte_in_order() -> None:
    payload = bytes(range(256)) * (256 << 10)  # 64 MiB: more than the kernel and TLS buffers hold
    done = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for start in range(0, len(payload), 1 << 20):
            writer.write(payload[start : start + (1 << 20)])
            await writer.drain()
        done.set()
        writer.close()

    async with serving_tls(handler) as (port, context):
        plain = await netstream.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
        stream = await plain.start_tls(context, server_hostname="127.0.0.1", timeout=5)
        received = await read_after_lagging(stream, done)
    assert received == payload and done.is_set()


async def test_a_socket_option_that_fails_closes_the_new_connection() -> None:
    accepted: list[asyncio.StreamReader] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(reader)
        await reader.read()  # the end: the client closed its side

    async with serving(handler) as port:
        bad_option = [(socket.SOL_SOCKET, 0x7FFF, 1)]  # no such option: setsockopt raises
        result = await outcome(
            netstream.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5, socket_options=bad_option)
        )
        for _ in range(10_000):  # loop turns until the server has seen the connection end
            if accepted and accepted[0].at_eof():
                break
            await asyncio.sleep(0)
    assert result[0] == "OSError"
    assert accepted and accepted[0].at_eof()


async def test_plain_http_clients_read_through_the_asyncio_backend(fake_llm: FakeLLM) -> None:
    from xcsh.testing import script

    fake_llm.script(script.text("hi"))
    model = wire_model(fake_llm.base_url + "/v1", "openai-completions")
    body = b'{"model":"m","stream":true,"messages":[]}'
    stream = await transport.open_stream(
        "openai", model, StreamOptions(api_key="k"), "chat/completions", body
    )
    async with stream:
        assert isinstance(stream.response.extensions["network_stream"], netstream.AsyncioStream)
        async for _ in stream:
            pass
    # an https client keeps httpx2's own transport (and its TLS)
    secure = transport.new_client("openai", {**model, "baseUrl": "https://127.0.0.1:1/v1"}, StreamOptions())
    assert not isinstance(secure._transport._pool._network_backend, netstream.AsyncioBackend)
    await secure.aclose()
