"""A scripted fake LLM HTTP server on 127.0.0.1 speaking the vendors' real streaming wires.

Routes (any path prefix is accepted):

- ``POST …/chat/completions``                  → OpenAI Chat Completions SSE
- ``POST …/responses``                         → OpenAI Responses SSE
- ``POST …/messages``                          → Anthropic Messages SSE
- ``POST …/models/<m>:streamGenerateContent``  → Gemini SSE

Each request consumes the next script step (see :mod:`xcsh.testing.script`) and is
recorded in :attr:`FakeLLM.requests`. The server runs its own event loop in a daemon
thread, so synchronous and asynchronous tests can both use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from xcsh.testing.script import Garbage, HttpError, Reply, Step

_WIRES = {
    "chat": "xcsh.testing.wires.openai_chat",
    "responses": "xcsh.testing.wires.openai_responses",
    "anthropic": "xcsh.testing.wires.anthropic",
    "gemini": "xcsh.testing.wires.gemini",
}


_UNPARSED: Any = object()


class _Model(msgspec.Struct):
    """The one body field the replies need (a reply names the request's model)."""

    model: Any = None


@dataclass(slots=True)
class RecordedRequest:
    """One request as the server received it; ``json`` (the parsed body, None when it is not
    JSON) is parsed when first read, so serving a request does not parse the whole history."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    wire: str
    _json: Any = field(default=_UNPARSED, repr=False)

    @property
    def json(self) -> Any:
        if self._json is _UNPARSED:
            try:
                self._json = json.loads(self.body) if self.body else None
            except ValueError:
                self._json = None
        return self._json

    def reply_fields(self) -> dict[str, Any]:
        """What ``render`` reads of the body (``model``), without parsing the rest into objects."""
        if self._json is not _UNPARSED:
            return self._json if isinstance(self._json, dict) else {}
        try:
            model = msgspec.json.decode(self.body, type=_Model).model
        except (msgspec.DecodeError, msgspec.ValidationError):
            return self.json if isinstance(self.json, dict) else {}
        return {} if model is None else {"model": model}


class UnconsumedStepsError(AssertionError):
    pass


def _wire_for(path: str) -> str | None:
    bare = path.split("?", 1)[0]
    if bare.endswith("/chat/completions"):
        return "chat"
    if bare.endswith("/responses"):
        return "responses"
    if bare.endswith("/messages"):
        return "anthropic"
    if ":streamGenerateContent" in bare or ":generateContent" in bare:
        return "gemini"
    return None


class FakeLLM:
    """The scripted server. Use as a context manager or call ``start()``/``stop()``."""

    def __init__(self) -> None:
        self._steps: list[Step] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.requests: list[RecordedRequest] = []
        self.problems: list[str] = []
        self.finished = 0  # streamed replies sent to their end
        self.connections = 0  # TCP connections accepted (a client reusing its connection opens one)
        self.open_connections = 0  # of those, the ones neither side has closed yet
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._ready = threading.Event()
        self._closing = False

    # ---- scripting ------------------------------------------------------------------
    def script(self, *steps: Step) -> None:
        """Append steps; each incoming request consumes one, in order."""
        with self._lock:
            self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps)

    def assert_complete(self) -> None:
        """Fail when scripted steps were left unconsumed or a request found no step."""
        with self._lock:
            problems = list(self.problems)
            if self._steps:
                problems.append(f"{len(self._steps)} scripted step(s) never consumed: {self._steps!r}")
        if problems:
            raise UnconsumedStepsError("; ".join(problems))

    def reset(self) -> None:
        with self._lock:
            self._steps.clear()
            self.problems.clear()
            self.requests.clear()

    def clear_requests(self) -> None:
        """Forget the requests recorded so far (their count included), keeping the script.

        A long benchmark run calls it between prompts: every kept request holds its body, so
        each new body lands in memory never touched before (page faults: ~70 us for a 175 KB
        body, against ~2 us when the previous one was freed), a cost of this server that grows
        with the history it is sent.
        """
        with self._lock:
            self.requests.clear()

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least ``count`` requests have arrived (bounded by ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected {count} requests, got {len(self.requests)}")
                self._cond.wait(left)
            return list(self.requests)

    def wait_for_no_open_connection(self, timeout: float = 10.0) -> bool:
        """Block until every accepted connection is closed (bounded by ``timeout``); whether it was."""
        with self._cond:
            return self._cond.wait_for(lambda: self.open_connections == 0, timeout)

    def wait_for_finished(self, count: int, timeout: float = 10.0) -> None:
        """Block until ``count`` streamed replies have been written to their end (bounded by ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.finished < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected {count} finished replies, got {self.finished}")
                self._cond.wait(left)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- lifecycle ------------------------------------------------------------------
    def start(self) -> FakeLLM:
        self._thread = threading.Thread(target=self._run, name="fake-llm", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake LLM server did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        self._closing = True

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    # ---- HTTP -----------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self._cond:
            self.connections += 1
            self.open_connections += 1
        try:
            while not self._closing:
                keep = await self._one_request(reader, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
            with self._cond:
                self.open_connections -= 1
                self._cond.notify_all()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        line = await reader.readline()
        if not line:
            return False
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            raw = await reader.readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await _read_chunked(reader)
        wire = _wire_for(path)
        record = RecordedRequest(method, path, headers, body, wire or "unknown")
        with self._cond:
            self.requests.append(record)
            step = self._steps.pop(0) if self._steps and wire else None
            if wire is None:
                self.problems.append(f"unexpected request {method} {path}")
            elif step is None:
                self.problems.append(
                    f"request {len(self.requests)} ({path}) arrived with no scripted step left"
                )
            self._cond.notify_all()
        if wire is None or step is None:
            await _respond_json(writer, 500, {"error": {"message": "fake LLM: no scripted step left"}})
            return False
        module = importlib.import_module(_WIRES[wire])
        if isinstance(step, HttpError):
            extra = {"retry-after": _fmt(step.retry_after)} if step.retry_after is not None else {}
            if step.raw_body is not None:
                await _respond_raw(writer, step.status, step.raw_body, extra)
            else:
                await _respond_json(writer, step.status, module.error_body(step), extra)
            return False
        if isinstance(step, Garbage):
            await _start_stream(writer)
            if step.payload:
                await _send_chunk(writer, step.payload)
            if step.cut:
                writer.transport.abort()  # drop the connection without the final chunk
                return False
            await _end_stream(writer)
            return True
        return await self._stream_reply(reader, writer, module, step, record.reply_fields())

    async def _stream_reply(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        module: Any,
        step: Reply,
        request: Any,
    ) -> bool:
        head, tail = module.render(step, request)
        await _start_stream(writer)
        for frame in head:
            await _send_chunk(writer, frame)
        if step.cut:
            writer.transport.abort()  # drop the connection without the final chunk
            return False
        if step.hold_forever or step.gate is not None:
            while not (step.gate is not None and step.gate.released):
                if reader.at_eof() or writer.is_closing():
                    return False
                try:
                    probe = await asyncio.wait_for(reader.read(1), 0.02)
                    if not probe:
                        return False
                except TimeoutError:
                    pass
        if step.delay_ms:
            await asyncio.sleep(step.delay_ms / 1000)
        for frame in tail:
            await _send_chunk(writer, frame)
        await _end_stream(writer)
        with self._cond:
            self.finished += 1
            self._cond.notify_all()
        return True


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readline()
            return bytes(out)
        out += await reader.readexactly(size)
        await reader.readline()


async def _respond_json(
    writer: asyncio.StreamWriter, status: int, body: Any, extra: dict[str, str] | None = None
) -> None:
    await _respond_raw(writer, status, json.dumps(body).encode(), extra)


async def _respond_raw(
    writer: asyncio.StreamWriter, status: int, payload: bytes, extra: dict[str, str] | None = None
) -> None:
    head = [
        f"HTTP/1.1 {status} Fake",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
    ]
    head += [f"{k}: {v}" for k, v in (extra or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()


async def _start_stream(writer: asyncio.StreamWriter) -> None:
    head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    writer.write(head.encode())
    await writer.drain()


async def _send_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _end_stream(writer: asyncio.StreamWriter) -> None:
    writer.write(b"0\r\n\r\n")
    await writer.drain()


@contextlib.contextmanager
def running() -> Iterator[FakeLLM]:
    """``with running() as fake:`` — a started server, stopped afterwards."""
    server = FakeLLM().start()
    try:
        yield server
    finally:
        server.stop()
