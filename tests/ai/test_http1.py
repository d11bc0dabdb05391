"""The small plain-http client (xcsh.ai.http1) against a raw loopback server: framing, codings, reuse, redirects.

The fake LLM covers the streaming wires and every error text (test_transport_errors.py runs on
this client); this server answers with exact bytes for what the fake LLM never sends.
"""

from __future__ import annotations

import asyncio
import gzip
import zlib

import pytest

from xcsh.ai import http1


class RawServer:
    """Answers each request with the next scripted bytes; records request heads and bodies."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = answers
        self.requests: list[tuple[str, bytes]] = []
        self.connections = 0
        self.port = 0
        self._server: asyncio.base_events.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                length = 0
                for line in head.split("\r\n"):
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                self.requests.append((head, body))
                answer = self.answers.pop(0)
                writer.write(answer)
                await writer.drain()
                if b"Connection: close" in answer or (
                    b"Content-Length" not in answer and b"chunked" not in answer
                ):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _body(client: http1.Client, url: str, content: bytes = b"{}") -> tuple[int, bytes]:
    response = await client.send(client.build_request("POST", url, content=content))
    try:
        return response.status_code, await response.aread()
    finally:
        await response.aclose()


async def test_length_chunked_and_close_delimited_bodies_read_whole_and_kept_alive_connections_are_reused() -> (
    None
):
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\n\r\nuntil the end",
    ]
    async with RawServer(answers) as server:
        client = http1.Client(headers={"Authorization": "Bearer k", "accept": "application/json"}, timeout=5)
        assert await _body(client, server.url + "/v1/x?y=1") == (200, b"hello")
        assert await _body(client, server.url + "/v1/x") == (200, b"abcde")
        assert await _body(client, server.url + "/v1/x") == (200, b"ok")
        assert await _body(client, server.url + "/v1/x") == (200, b"until the end")
        await client.aclose()
    assert server.connections == 1
    head, body = server.requests[0]
    lines = head.split("\r\n")
    assert lines[0] == "POST /v1/x?y=1 HTTP/1.1"
    assert lines[1] == f"Host: 127.0.0.1:{server.port}"
    assert "Accept: */*" not in lines and "accept: application/json" in lines  # overridden, any case
    assert {"Accept-Encoding: gzip, deflate", "Connection: keep-alive", "Authorization: Bearer k"} <= set(
        lines
    )
    assert "Content-Length: 2" in lines and body == b"{}"


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate"])
async def test_a_compressed_body_is_decoded(coding: str) -> None:
    text = b'{"error": {"message": "compressed"}}' * 20
    if coding == "gzip":
        data = gzip.compress(text)
    elif coding == "deflate":
        data = zlib.compress(text)
    else:
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        data = packer.compress(text) + packer.flush()
    name = coding.removeprefix("raw-").encode()
    answer = b"HTTP/1.1 400 Bad Request\r\nContent-Encoding: " + name
    answer += b"\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(data)
    async with RawServer([answer + data]) as server:
        client = http1.Client(timeout=5)
        response = await client.send(client.build_request("POST", server.url, content=b"{}"))
        assert not response.is_success and response.status_code == 400
        await response.aread()
        assert response.content == text and response.text == text.decode()
        assert response.headers.get("content-encoding") == name.decode()
        await response.aclose()


async def test_redirects_are_followed_as_httpx2_follows_them() -> None:
    async with RawServer([]) as other:
        other.answers.append(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nmoved")
        answers = [
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 303 See Other\r\nLocation: "
            + other.url.encode()
            + b"/there\r\nContent-Length: 0\r\n\r\n",
        ]
        async with RawServer(answers) as server:
            client = http1.Client(headers={"Authorization": "Bearer k"}, timeout=5)
            assert await _body(client, server.url + "/first", b'{"a":1}') == (200, b"moved")
    again_head, again_body = server.requests[1]
    assert again_head.startswith("POST /again HTTP/1.1") and again_body == b'{"a":1}'  # 307 keeps both
    there_head, there_body = other.requests[0]
    assert there_head.startswith("GET /there HTTP/1.1") and there_body == b""  # 303: a GET
    assert "Authorization" not in there_head and "Content-Length" not in there_head  # another origin


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\na",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb",
    ]
    async with RawServer(answers) as server:
        client = http1.Client(timeout=5)
        assert await _body(client, server.url) == (200, b"a")
        assert await _body(client, server.url) == (200, b"b")
    assert server.connections == 2


async def test_a_body_cut_short_and_a_refused_connection_raise_httpx2s_error_kinds() -> None:
    answers = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"]
    async with RawServer(answers) as server:
        client = http1.Client(timeout=5)
        response = await client.send(client.build_request("POST", server.url, content=b"{}"))
        with pytest.raises(http1.RemoteProtocolError) as cut:
            await response.aread()
        assert isinstance(cut.value, http1.TransportError)
        port = server.port
    with pytest.raises(http1.ConnectError):
        await client.send(client.build_request("POST", f"http://127.0.0.1:{port}", content=b"{}"))


async def test_a_silent_server_raises_a_read_timeout() -> None:
    done = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)
        await done.wait()  # never answers
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        client = http1.Client(timeout=0.2)
        with pytest.raises(http1.ReadTimeout) as caught:
            await client.send(client.build_request("POST", f"http://127.0.0.1:{port}", content=b"{}"))
        assert str(caught.value) == "" and isinstance(caught.value.__cause__, TimeoutError)
    finally:
        done.set()
        server.close()
