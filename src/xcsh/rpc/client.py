"""Typed client for ``xcsh --mode rpc``: spawn, correlate ids, stream events.

Async first::

    async with RpcClient.spawn(args=["--model", "fake/fake-model"]) as client:
        events = await client.prompt_and_wait("hello?")

:class:`SyncRpcClient` wraps it for scripts that do not use asyncio. This module imports
only wire types, so hosts can use it without pulling in the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, TypeVar, Unpack

from xcsh.rpc.jsonl import LineSplitter, OversizedLine, decode_line, encode_frame
from xcsh.rpc.rebuild import PartialMessages

T = TypeVar("T")
Frame = dict[str, Any]
HostToolHandler = Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], Awaitable[Any]]


class RpcError(RuntimeError):
    """A command answered ``success: false`` (``response`` holds the frame)."""

    def __init__(self, response: Frame) -> None:
        super().__init__(str(response.get("error", "RPC command failed")))
        self.response = response


class StartOptions(TypedDict, total=False):
    """The keyword options of :meth:`RpcClient.start`, also taken by ``spawn`` and :class:`SyncRpcClient`."""

    args: Sequence[str]
    cwd: str | Path | None
    env: Mapping[str, str] | None
    command: Sequence[str] | None
    stderr: Any
    timeout: float
    message_updates: str | None


class RpcClient:
    """Drives one ``xcsh --mode rpc`` process."""

    def __init__(self, process: asyncio.subprocess.Process, *, timeout: float = 30.0) -> None:
        self.process = process
        self.timeout = timeout
        self.frames: list[Frame] = []
        self.version: str | None = None
        self._changed = asyncio.Condition()
        # id → (the request's raw ``type``, future of its response)
        self._pending: dict[str, tuple[Any, asyncio.Future[Frame]]] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._host_tools: dict[str, HostToolHandler] = {}
        self._host_tasks: dict[str, asyncio.Task[None]] = {}
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
        message_updates: str | None = None,
    ) -> RpcClient:
        """Start ``xcsh --mode rpc`` (``python -m xcsh`` by default) and wait for ``ready``.

        ``message_updates="delta"`` asks for slim ``message_update`` frames (``--message-updates
        delta``; an agent that offers it reports ``messageUpdates`` in ``get_state``); the client
        rebuilds each partial message, so :attr:`frames` look the same in both modes.
        """
        mode = ["--message-updates", message_updates] if message_updates else []
        argv = [*(command or [sys.executable, "-m", "xcsh"]), "--mode", "rpc", *mode, *args]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=str(cwd) if cwd is not None else None,
            env=dict(env) if env is not None else None,
        )
        client = cls(process, timeout=timeout)
        client._reader = asyncio.ensure_future(client._read())
        try:
            async with asyncio.timeout(timeout):
                await client._ready.wait()
        except TimeoutError:
            await client.close()
            raise
        return client

    async def close(self, *, timeout: float = 5.0) -> int | None:
        """Close stdin and wait for the process to exit (killing it if it does not)."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            async with asyncio.timeout(timeout):
                await self.process.wait()
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, timeout)
        for task in self._host_tasks.values():
            task.cancel()
        return self.process.returncode

    # ---- frames ------------------------------------------------------------------------
    async def _read(self) -> None:
        assert self.process.stdout is not None
        splitter = LineSplitter()
        while True:
            chunk = await self.process.stdout.read(1 << 16)
            lines = list(splitter.feed(chunk)) if chunk else list(splitter.finish())
            for line in lines:
                if isinstance(line, OversizedLine):
                    continue
                text = decode_line(line)
                if text is not None:
                    await self._on_frame(_loads(text))
            if not chunk:
                break
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("xcsh process exited"))
        async with self._changed:
            self._changed.notify_all()

    async def _on_frame(self, frame: Frame) -> None:
        frame = self._partials.feed(frame)
        kind = frame.get("type")
        if kind == "ready":
            self.version = frame.get("version")
            self._ready.set()
        elif kind == "response":
            self._resolve(frame)
        elif kind == "host_tool_call":
            self._start_host_tool(frame)
        elif kind == "host_tool_cancel":
            task = self._host_tasks.pop(str(frame.get("targetId")), None)
            if task is not None:
                task.cancel()
        async with self._changed:
            self.frames.append(frame)
            self._changed.notify_all()

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
            if not entry[1].done():
                entry[1].set_result(frame)

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
        self.send_raw(frame)
        assert self.process.stdin is not None
        await self.process.stdin.drain()
        async with asyncio.timeout(timeout or self.timeout):
            return await future

    async def call(self, command: Frame, *, timeout: float | None = None) -> Any:
        """Send a command; return its ``data`` or raise :class:`RpcError`."""
        response = await self.request(command, timeout=timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    def mark(self) -> int:
        """A position in :attr:`frames`; pass it as ``since`` to wait only for later frames."""
        return len(self.frames)

    async def wait_for(
        self, predicate: Callable[[Frame], bool], *, since: int = 0, timeout: float | None = None
    ) -> Frame:
        """The first frame at or after ``since`` matching ``predicate`` (waits for it)."""
        async with asyncio.timeout(timeout or self.timeout), self._changed:
            index = since
            while True:
                while index < len(self.frames):
                    if predicate(self.frames[index]):
                        return self.frames[index]
                    index += 1
                if self.process.stdout is not None and self._reader is not None and self._reader.done():
                    raise ConnectionError("xcsh process exited before the expected frame")
                await self._changed.wait()

    async def wait_for_type(self, kind: str, *, since: int = 0, timeout: float | None = None) -> Frame:
        return await self.wait_for(lambda f: f.get("type") == kind, since=since, timeout=timeout)

    async def events(self, *, since: int | None = None) -> AsyncIterator[Frame]:
        """Every non-response frame from ``since`` (default: now) on, as it arrives."""
        index = self.mark() if since is None else since
        while True:
            async with self._changed:
                while index >= len(self.frames):
                    if self._reader is not None and self._reader.done():
                        return
                    await self._changed.wait()
                batch = self.frames[index:]
                index = len(self.frames)
            for frame in batch:
                if frame.get("type") != "response":
                    yield frame

    async def wait_for_idle(self, *, since: int = 0, timeout: float | None = None) -> list[Frame]:
        """Wait for an ``agent_end`` after ``since`` and then until ``isStreaming`` is false."""
        limit = timeout or self.timeout
        async with asyncio.timeout(limit):
            await self.wait_for_type("agent_end", since=since, timeout=limit)
            while True:
                # mark before asking: the chain's last agent_end may be read before we resume
                mark = self.mark()
                if not (await self.get_state())["isStreaming"]:
                    break
                await self.wait_for_type("agent_end", since=mark, timeout=limit)
        return self.frames[since:]

    async def prompt_and_wait(
        self, message: str, *, timeout: float | None = None, **fields: Any
    ) -> list[Frame]:
        """Send a prompt and return every frame up to the end of its run chain (idle)."""
        start = self.mark()
        await self.prompt(message, **fields)
        frames = await self.wait_for_idle(since=start, timeout=timeout)
        return [f for f in frames if f.get("type") != "response"]

    # ---- host tools --------------------------------------------------------------------
    def on_host_tool(self, name: str, handler: HostToolHandler) -> None:
        """Answer ``host_tool_call`` frames for ``name`` with ``handler(arguments, update)``.

        The handler's return value becomes the result (a string becomes one text block; a
        dict with ``content`` is sent as is); an exception becomes an ``isError`` result.
        """
        self._host_tools[name] = handler

    def _start_host_tool(self, frame: Frame) -> None:
        handler = self._host_tools.get(str(frame.get("toolName")))
        if handler is None:
            return
        call_id = str(frame.get("id"))

        async def run() -> None:
            def update(partial: dict[str, Any]) -> None:
                self.send_raw({"type": "host_tool_update", "id": call_id, "partialResult": partial})

            try:
                value = await handler(dict(frame.get("arguments") or {}), update)
            except asyncio.CancelledError:
                return
            except Exception as exc:  # host-side boundary: report the failure to the agent
                self.send_raw(
                    {
                        "type": "host_tool_result",
                        "id": call_id,
                        "result": {"content": [{"type": "text", "text": str(exc)}], "details": {}},
                        "isError": True,
                    }
                )
                return
            result = value if isinstance(value, dict) and "content" in value else _text_result(value)
            self.send_raw({"type": "host_tool_result", "id": call_id, "result": result})
            self._host_tasks.pop(call_id, None)

        self._host_tasks[call_id] = asyncio.ensure_future(run())

    # ---- commands ----------------------------------------------------------------------
    async def prompt(
        self,
        message: str,
        *,
        images: list[dict[str, Any]] | None = None,
        streaming_behavior: str | None = None,
    ) -> None:
        command: Frame = {"type": "prompt", "message": message}
        if images:
            command["images"] = images
        if streaming_behavior:
            command["streamingBehavior"] = streaming_behavior
        await self.call(command)

    async def steer(self, message: str, *, images: list[dict[str, Any]] | None = None) -> None:
        await self.call({"type": "steer", "message": message, **({"images": images} if images else {})})

    async def follow_up(self, message: str, *, images: list[dict[str, Any]] | None = None) -> None:
        await self.call({"type": "follow_up", "message": message, **({"images": images} if images else {})})

    async def abort(self) -> None:
        await self.call({"type": "abort"})

    async def abort_and_prompt(self, message: str) -> None:
        await self.call({"type": "abort_and_prompt", "message": message})

    async def new_session(self, parent_session: str | None = None) -> dict[str, Any]:
        command: Frame = {"type": "new_session"}
        if parent_session is not None:
            command["parentSession"] = parent_session
        return dict(await self.call(command))

    async def get_state(self) -> dict[str, Any]:
        return dict(await self.call({"type": "get_state"}))

    async def set_todos(self, phases: list[dict[str, Any]]) -> dict[str, Any]:
        return dict(await self.call({"type": "set_todos", "phases": phases}))

    async def set_host_tools(self, tools: list[dict[str, Any]]) -> list[str]:
        return list((await self.call({"type": "set_host_tools", "tools": tools}))["toolNames"])

    async def set_model(self, provider: str, model_id: str) -> dict[str, Any]:
        return dict(await self.call({"type": "set_model", "provider": provider, "modelId": model_id}))

    async def cycle_model(self) -> dict[str, Any] | None:
        return await self.call({"type": "cycle_model"})  # type: ignore[no-any-return]  # wire data

    async def get_available_models(self) -> list[dict[str, Any]]:
        return list((await self.call({"type": "get_available_models"}))["models"])

    async def set_thinking_level(self, level: str) -> None:
        await self.call({"type": "set_thinking_level", "level": level})

    async def cycle_thinking_level(self) -> dict[str, Any] | None:
        return await self.call({"type": "cycle_thinking_level"})  # type: ignore[no-any-return]  # wire data

    async def set_steering_mode(self, mode: str) -> None:
        await self.call({"type": "set_steering_mode", "mode": mode})

    async def set_follow_up_mode(self, mode: str) -> None:
        await self.call({"type": "set_follow_up_mode", "mode": mode})

    async def set_interrupt_mode(self, mode: str) -> None:
        await self.call({"type": "set_interrupt_mode", "mode": mode})

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        command: Frame = {"type": "compact"}
        if custom_instructions is not None:
            command["customInstructions"] = custom_instructions
        return dict(await self.call(command))

    async def set_auto_compaction(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_compaction", "enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_retry", "enabled": enabled})

    async def abort_retry(self) -> None:
        await self.call({"type": "abort_retry"})

    async def bash(self, command: str, *, timeout: float | None = None) -> dict[str, Any]:
        return dict(await self.call({"type": "bash", "command": command}, timeout=timeout))

    async def abort_bash(self) -> None:
        await self.call({"type": "abort_bash"})

    async def get_session_stats(self) -> dict[str, Any]:
        return dict(await self.call({"type": "get_session_stats"}))

    async def export_html(self, output_path: str | None = None) -> str:
        command: Frame = {"type": "export_html"}
        if output_path is not None:
            command["outputPath"] = output_path
        return str((await self.call(command))["path"])

    async def switch_session(self, session_path: str) -> dict[str, Any]:
        return dict(await self.call({"type": "switch_session", "sessionPath": session_path}))

    async def branch(self, entry_id: str) -> dict[str, Any]:
        return dict(await self.call({"type": "branch", "entryId": entry_id}))

    async def get_branch_messages(self) -> list[dict[str, Any]]:
        return list((await self.call({"type": "get_branch_messages"}))["messages"])

    async def get_last_assistant_text(self) -> str | None:
        data = await self.call({"type": "get_last_assistant_text"})
        text = data.get("text") if isinstance(data, dict) else None
        return text if isinstance(text, str) else None

    async def set_session_name(self, name: str) -> None:
        await self.call({"type": "set_session_name", "name": name})

    async def get_messages(self) -> list[dict[str, Any]]:
        return list((await self.call({"type": "get_messages"}))["messages"])

    # ---- beyond the reference (docs/host-commands.md) -------------------------------
    async def get_commands(self) -> list[dict[str, Any]]:
        return list((await self.call({"type": "get_commands"}))["commands"])

    async def clear_queue(self) -> dict[str, list[str]]:
        return dict(await self.call({"type": "clear_queue"}))

    async def list_sessions(self, scope: str = "cwd") -> list[dict[str, Any]]:
        return list((await self.call({"type": "list_sessions", "scope": scope}))["sessions"])

    async def get_tree(self) -> dict[str, Any]:
        return dict(await self.call({"type": "get_tree"}))

    async def get_tools(self) -> list[dict[str, Any]]:
        return list((await self.call({"type": "get_tools"}))["tools"])

    async def set_active_tools(self, tool_names: list[str]) -> list[str]:
        return list((await self.call({"type": "set_active_tools", "toolNames": tool_names}))["toolNames"])


def _loads(text: str) -> Frame:
    """Parse one stdout line; anything that is not a JSON object is kept as an ``invalid`` frame."""
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {"type": "invalid", "raw": text}
    return value if isinstance(value, dict) else {"type": "invalid", "value": value}


def _text_result(value: Any) -> dict[str, Any]:
    import json

    text = value if isinstance(value, str) else json.dumps(value)
    return {"content": [{"type": "text", "text": text}], "details": {}}


class SyncRpcClient:
    """Blocking wrapper: runs an :class:`RpcClient` on a private event loop thread."""

    def __init__(self, **spawn_kwargs: Unpack[StartOptions]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="xcsh-rpc-client", daemon=True)
        self._thread.start()
        self._client: RpcClient = self._run(RpcClient.start(**spawn_kwargs))

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._run(attr(*args, **kwargs))

        return call

    def close(self) -> int | None:
        code = self._run(self._client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        return code

    def __enter__(self) -> SyncRpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_env(**overrides: str) -> dict[str, str]:
    """The current environment plus ``overrides`` (convenience for spawning)."""
    env = dict(os.environ)
    env.update(overrides)
    return env
