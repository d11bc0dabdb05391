"""Typed client for ``xcsh --mode rpc``: spawn, correlate ids, stream events, answer host requests.

Async first::

    async with RpcClient.spawn(args=["--model", "fake/fake-model"]) as client:
        events = await client.prompt_and_wait("hello?")

:class:`SyncRpcClient` offers the same methods for code that does not use asyncio. Every
command has a method (:mod:`xcsh.rpc.client_commands`) returning its typed ``data``.

Two timeouts: ``timeout`` bounds each command's answer (default 30 s); ``run_timeout``
bounds a whole run in :meth:`~RpcClient.wait_for_idle` / :meth:`~RpcClient.prompt_and_wait`
(default: none; the agent may work for hours). A process that exits before ``ready``
raises :class:`RpcStartupError` at once with its exit status and the end of its stderr.
Received frames are kept in a bounded :class:`~xcsh.rpc.frame_log.FrameLog`; host tool calls
and extension dialogs are answered by :class:`~xcsh.rpc.client_host.HostAnswers`.

This module imports only wire types, so hosts can use it without the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack, cast

from xcsh.rpc.client_commands import AsyncCommands
from xcsh.rpc.client_host import FRAME_TYPES as HOST_FRAME_TYPES
from xcsh.rpc.client_host import HostAnswers, HostToolHandler, UiHandler
from xcsh.rpc.deep_json import decode_deep
from xcsh.rpc.frame_log import FrameLog
from xcsh.rpc.frames import ServerEvent
from xcsh.rpc.jsonl import LineSplitter, OversizedLine, decode_frame, decode_line, encode_frame
from xcsh.rpc.process import close_and_wait
from xcsh.rpc.rebuild import PartialMessages

T = TypeVar("T")
Frame = dict[str, Any]
STDERR_TAIL_BYTES = 8192
# commands answered at once whose later failure is a second response with the same id (spec §3)
PROMPT_LIKE = frozenset({"prompt", "abort_and_prompt"})
LATE_KEPT = 4096  # acknowledged prompt ids watched for a late error (the oldest are forgotten)


class RpcError(RuntimeError):
    """A command answered ``success: false`` (``response`` holds the frame)."""

    def __init__(self, response: Frame) -> None:
        super().__init__(str(response.get("error", "RPC command failed")))
        self.response = response


class RpcStartupError(RuntimeError):
    """The process exited before its ``ready`` frame (no model, a bad flag …)."""

    def __init__(self, returncode: int | None, stderr_tail: str) -> None:
        detail = f":\n{stderr_tail.rstrip()}" if stderr_tail.strip() else " (no stderr output)"
        super().__init__(f"xcsh exited with status {returncode} before it was ready{detail}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class StartOptions(TypedDict, total=False):
    """The keyword options of :meth:`RpcClient.start`, also taken by ``spawn`` and :class:`SyncRpcClient`."""

    args: Sequence[str]
    cwd: str | Path | None
    env: Mapping[str, str] | None
    command: Sequence[str] | None
    stderr: Any
    timeout: float
    start_timeout: float | None
    run_timeout: float | None
    history: int | None
    history_bytes: int | None
    message_updates: str | None


class RpcClient(AsyncCommands):
    """Drives one ``xcsh --mode rpc`` process."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        *,
        timeout: float = 30.0,
        run_timeout: float | None = None,
        history: int | None = 10_000,
        history_bytes: int | None = 64 << 20,
    ) -> None:
        self.process = process
        self.timeout = timeout
        self.run_timeout = run_timeout
        self.frames = FrameLog(history, history_bytes)
        self.version: str | None = None
        # id → (the request's raw ``type``, future of its response)
        self._pending: dict[str, tuple[Any, asyncio.Future[Frame]]] = {}
        # acknowledged prompt ids → their late success:false response, once it arrives
        self._late: dict[str, Frame | None] = {}
        self._waiters: list[tuple[Callable[[Frame], bool], asyncio.Future[Frame]]] = []
        self._streams: list[asyncio.Queue[Frame | None]] = []
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._stderr_reader: asyncio.Task[None] | None = None
        self._stderr_tail: deque[bytes] = deque()
        self._host = HostAnswers(self.send_raw)  # host tool calls and extension dialogs
        self._ready = asyncio.Event()
        self._partials = PartialMessages()  # rebuilds delta-mode message_update frames

    # ---- lifecycle ---------------------------------------------------------------------
    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(cls, **options: Unpack[StartOptions]) -> AsyncIterator[RpcClient]:
        """:meth:`start` as an async context manager that closes the client on exit."""
        client = await cls.start(**options)
        try:
            yield client
        finally:
            await client.close()

    @classmethod
    async def start(
        cls,
        *,
        args: Sequence[str] = (),
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        command: Sequence[str] | None = None,
        stderr: Any = None,
        timeout: float = 30.0,
        start_timeout: float | None = None,
        message_updates: str | None = None,
        run_timeout: float | None = None,
        history: int | None = 10_000,
        history_bytes: int | None = 64 << 20,
    ) -> RpcClient:
        """Start ``xcsh --mode rpc`` (``python -P -m xcsh`` by default) and wait for ``ready``.

        ``-P`` (Python 3.11+) keeps the working directory off ``sys.path``: without it a
        repository's ``msgspec.py`` or ``json.py`` in ``cwd`` would shadow the real module.

        ``start_timeout`` bounds the wait for ``ready`` (default: ``timeout``, at least 60 s);
        a process that exits first raises :class:`RpcStartupError` at once.

        ``message_updates="delta"`` asks for slim ``message_update`` frames (``--message-updates
        delta``; an agent that offers it reports ``messageUpdates`` in ``get_state``); the client
        rebuilds each partial message, so :attr:`frames` look the same in both modes.

        With ``stderr`` unset, the process's stderr is passed through to ours and its end is
        kept for :class:`RpcStartupError`; any other value is handed to the subprocess as is.
        """
        mode = ["--message-updates", message_updates] if message_updates else []
        argv = [*(command or [sys.executable, "-P", "-m", "xcsh"]), "--mode", "rpc", *mode, *args]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if stderr is None else stderr,
            cwd=str(cwd) if cwd is not None else None,
            env=dict(env) if env is not None else None,
        )
        client = cls(
            process, timeout=timeout, run_timeout=run_timeout, history=history, history_bytes=history_bytes
        )
        client._reader = asyncio.ensure_future(client._read())
        if stderr is None:
            client._stderr_reader = asyncio.ensure_future(client._pass_stderr())
        ready = asyncio.ensure_future(client._ready.wait())
        exited = asyncio.ensure_future(process.wait())
        try:
            limit = start_timeout if start_timeout is not None else max(timeout, 60.0)
            await asyncio.wait({ready, exited}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
            ready.cancel()
        if client._ready.is_set():
            return client
        if process.returncode is not None:
            if client._stderr_reader is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(client._stderr_reader), 5)
            await client.close()
            raise RpcStartupError(process.returncode, client.stderr_tail)
        await client.close()
        raise TimeoutError(f"xcsh sent no ready frame within {limit} s")

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the process wrote to stderr (when the client reads its stderr)."""
        return b"".join(self._stderr_tail).decode("utf-8", "replace")

    async def close(self, *, timeout: float = 5.0) -> int | None:
        """Close stdin and wait for the process to exit (killing it if it does not)."""
        await close_and_wait(self.process, timeout)
        for task in (self._reader, self._stderr_reader):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(task, timeout)
        self._host.cancel_all()
        return self.process.returncode

    # ---- frames ------------------------------------------------------------------------
    async def _pass_stderr(self) -> None:
        assert self.process.stderr is not None
        kept = 0
        while chunk := await self.process.stderr.read(1 << 14):
            with contextlib.suppress(Exception):  # our own stderr may be closed; keep draining
                sys.stderr.write(chunk.decode("utf-8", "replace"))
                sys.stderr.flush()
            self._stderr_tail.append(chunk)
            kept += len(chunk)
            while kept - len(self._stderr_tail[0]) >= STDERR_TAIL_BYTES:
                kept -= len(self._stderr_tail.popleft())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        splitter = LineSplitter()
        try:
            while True:
                chunk = await self.process.stdout.read(1 << 16)
                lines = list(splitter.feed(chunk)) if chunk else list(splitter.finish())
                for line in lines:
                    if isinstance(line, OversizedLine):
                        continue
                    text = decode_line(line)
                    if text is not None:
                        self._on_frame(_loads(text), len(line))
                if not chunk:
                    break
        finally:
            gone = ConnectionError("xcsh process exited")
            for _, future in self._pending.values():
                if not future.done():
                    future.set_exception(gone)
            for _, waiter in self._waiters:
                if not waiter.done():
                    waiter.set_exception(ConnectionError("xcsh process exited before the expected frame"))
            for stream in self._streams:
                stream.put_nowait(None)

    def _on_frame(self, frame: Frame, size: int = 0) -> None:
        frame = self._partials.feed(frame)
        kind = frame.get("type")
        if kind == "ready":
            self.version = frame.get("version")
            self._ready.set()
        elif kind == "response":
            self._resolve(frame)
            if frame.get("command") == "set_host_tools":
                self._host.registered(frame)
        elif kind in HOST_FRAME_TYPES:
            self._host.handle(frame)
        self.frames.append(frame, size)
        for predicate, waiter in list(self._waiters):
            if waiter.done():
                continue
            try:
                if predicate(frame):
                    waiter.set_result(frame)
            except Exception as exc:  # a caller's predicate failed: its wait fails with it
                waiter.set_exception(exc)
        for stream in self._streams:
            stream.put_nowait(frame)

    def _resolve(self, frame: Frame) -> None:
        cid = frame.get("id")
        entry = self._pending.get(cid) if isinstance(cid, str) else None
        if entry is None and cid is None:
            # an error without id: an unknown command names its request's type; a parse error
            # can only be attributed when one request is pending (rpc-protocol §3). Anything else
            # (e.g. extension_send errors) belongs to no request.
            command = frame.get("command")
            same = [k for k, (sent, _) in self._pending.items() if sent == command]
            alone = command == "parse" and len(self._pending) == 1
            candidates = same or (list(self._pending) if alone else [])
            if len(candidates) == 1:
                cid = candidates[0]
                entry = self._pending.get(cid)
        if entry is not None and isinstance(cid, str):
            self._pending.pop(cid, None)
            if entry[0] in PROMPT_LIKE and frame.get("success"):
                self._late[cid] = None  # its run may still fail: a second response (spec §3 case 3)
                if len(self._late) > LATE_KEPT:
                    del self._late[next(iter(self._late))]
            if not entry[1].done():
                entry[1].set_result(frame)
        elif isinstance(cid, str) and cid in self._late and frame.get("success") is False:
            self._late[cid] = frame

    def _late_error(self, frame: Frame) -> bool:
        """``frame`` is the late ``success:false`` of a prompt this client sent (spec §3 case 3)."""
        cid = frame.get("id")
        return frame.get("type") == "response" and isinstance(cid, str) and self._late.get(cid) is frame

    def _raise_late(self, frame: Frame) -> None:
        self._late.pop(str(frame.get("id")), None)
        raise RpcError(frame)

    def send_raw(self, data: bytes | Frame) -> None:
        """Write a frame (or raw bytes, for tests of bad input) to the process's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(data if isinstance(data, bytes) else encode_frame(data))

    async def request(self, command: Frame, *, timeout: float | None = None) -> Frame:
        """Send a command with a fresh id and return its response frame (success or not)."""
        cid = str(command.get("id") or f"req_{next(self._ids)}")
        frame = {**command, "id": cid}
        future: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._pending[cid] = (command.get("type"), future)
        try:
            self.send_raw(frame)
            assert self.process.stdin is not None
            await self.process.stdin.drain()
            async with asyncio.timeout(timeout or self.timeout):
                response = await future
        finally:
            self._pending.pop(cid, None)
        late = self._late.get(cid) if response.get("success") else None
        if late is not None:  # the prompt's failure came with its acknowledgement: that is the answer
            del self._late[cid]
            return late
        return response

    async def call(self, command: Frame, *, timeout: float | None = None) -> Any:
        """Send a command; return its ``data`` (None when it has none) or raise :class:`RpcError`."""
        response = await self.request(command, timeout=timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    # ---- waiting ------------------------------------------------------------------------
    def mark(self) -> int:
        """The position of the next frame; pass it as ``since`` to wait only for later frames."""
        return len(self.frames)

    async def wait_for(
        self, predicate: Callable[[Frame], bool], *, since: int = 0, timeout: float | None = None
    ) -> Frame:
        """The first frame at or after ``since`` matching ``predicate`` (waits up to ``timeout``)."""
        return await self._wait(predicate, since, timeout or self.timeout)

    async def _wait(self, predicate: Callable[[Frame], bool], since: int, limit: float | None) -> Frame:
        for frame in self.frames[since:]:
            if predicate(frame):
                return frame
        if self._reader is not None and self._reader.done():
            raise ConnectionError("xcsh process exited before the expected frame")
        waiter: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        entry = (predicate, waiter)
        self._waiters.append(entry)
        try:
            async with asyncio.timeout(limit):
                return await waiter
        finally:
            self._waiters.remove(entry)

    async def wait_for_type(self, kind: str, *, since: int = 0, timeout: float | None = None) -> Frame:
        return await self.wait_for(lambda f: f.get("type") == kind, since=since, timeout=timeout)

    async def events(self, *, since: int | None = None) -> AsyncIterator[ServerEvent]:
        """Every non-response frame from ``since`` (default: now) on, as it arrives, until the process exits.

        Typed as :data:`~xcsh.rpc.frames.ServerEvent`: narrow on ``frame["type"]``.
        """
        stream: asyncio.Queue[Frame | None] = asyncio.Queue()
        self._streams.append(stream)
        try:
            backlog = self.frames[since:] if since is not None else []
            ended = self._reader is not None and self._reader.done()
            for frame in backlog:
                if frame.get("type") != "response":
                    yield cast(ServerEvent, frame)
            while not ended:
                item = await stream.get()
                if item is None:
                    return
                if item.get("type") != "response":
                    yield cast(ServerEvent, item)
        finally:
            self._streams.remove(stream)

    async def wait_for_idle(self, *, since: int = 0, timeout: float | None = None) -> list[Frame]:
        """Wait for an ``agent_end`` after ``since``, then until ``isStreaming`` is false.

        ``timeout`` bounds the whole wait (default: ``run_timeout``, no limit unless set).
        Returns the retained frames from ``since`` on. A prompt of this client that fails
        later (its second, ``success:false`` response, read after ``since``) raises
        :class:`RpcError`: that run will not come.
        """
        limit = timeout if timeout is not None else self.run_timeout
        is_end: Callable[[Frame], bool] = lambda f: f.get("type") == "agent_end" or self._late_error(f)  # noqa: E731
        async with asyncio.timeout(limit):
            if self._late_error(frame := await self._wait(is_end, since, None)):
                self._raise_late(frame)
            while True:
                # mark before asking: the chain's last agent_end may be read before we resume
                mark = self.mark()
                if not (await self.get_state())["isStreaming"]:
                    break
                if self._late_error(frame := await self._wait(is_end, mark, None)):
                    self._raise_late(frame)
        return self.frames[since:]

    async def prompt_and_wait(
        self, message: str, *, timeout: float | None = None, **fields: Any
    ) -> list[Frame]:
        """Send a prompt; return every event up to the end of its run chain (idle).

        ``timeout`` bounds the whole run (default: ``run_timeout``). The events are collected
        as they arrive, so none is lost to the bounded history.
        """
        collected: asyncio.Queue[Frame | None] = asyncio.Queue()
        self._streams.append(collected)
        try:
            start = self.mark()
            await self.prompt(message, **fields)
            await self.wait_for_idle(since=start, timeout=timeout)
        finally:
            self._streams.remove(collected)
        frames: list[Frame] = []
        while not collected.empty():
            item = collected.get_nowait()
            if item is not None and item.get("type") != "response":
                frames.append(item)
        return frames

    # ---- host tools and extension UI (answered by xcsh.rpc.client_host) -------------------
    def on_host_tool(self, name: str, handler: HostToolHandler) -> None:
        """Answer ``host_tool_call`` frames for ``name`` with ``handler(arguments, update)``.

        The handler's return value becomes the result (a string becomes one text block; a
        dict with ``content`` is sent as is); an exception becomes an ``isError`` result.

        A call for a tool with no handler is left for the caller to answer with :meth:`send_raw`
        (a ``host_tool_result`` with the call's ``id``) when the tool is in the last
        ``set_host_tools`` the agent accepted from this client, however it was sent. A call for
        any other tool is answered at once with the reference clients' ``isError`` result
        ``Host tool "<name>" is not registered`` (rpc-protocol §7.4): nobody else would answer
        it, and the agent waits for an answer without a timeout (§7.3).
        """
        self._host.on_host_tool(name, handler)

    def on_ui_request(self, handler: UiHandler | None) -> None:
        """Answer extension dialogs with ``handler(request)``.

        The handler gets every ``extension_ui_request`` frame; for a dialog (``select``,
        ``confirm``, ``input``, ``editor``) its result — ``{"value": …}``, ``{"confirmed": …}``
        or ``{"cancelled": True}`` — is sent as the ``extension_ui_response``; None sends
        nothing. An exception answers ``cancelled``. None unregisters.
        """
        self._host.on_ui_request(handler)

    def answer_ui(self, request_id: str, **answer: Any) -> None:
        """Send an ``extension_ui_response`` (``value=``, ``confirmed=``, ``cancelled=``, ``timedOut=``)."""
        self._host.answer_ui(request_id, **answer)


def _loads(text: str) -> Frame:
    """Parse one stdout line; anything that is not a JSON object is kept as an ``invalid`` frame."""
    try:
        # msgspec first; what it refuses but JSON allows (a lone surrogate escape, which the
        # server writes when a host sent one) is read by json.loads, as the server reads input
        value = decode_frame(text)
    except RecursionError:  # a long session's get_tree answer: read without recursion
        try:
            value = decode_deep(text)
        except ValueError:
            return {"type": "invalid", "raw": text}
    except ValueError:  # not JSON: kept raw, the reader goes on
        return {"type": "invalid", "raw": text}
    return value if isinstance(value, dict) else {"type": "invalid", "value": value}


def default_env(**overrides: str) -> dict[str, str]:
    """The current environment plus ``overrides`` (convenience for spawning)."""
    env = dict(os.environ)
    env.update(overrides)
    return env
