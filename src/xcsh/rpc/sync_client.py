"""Blocking client: the :class:`~xcsh.rpc.client.RpcClient` API for code that does not use asyncio.

The async client runs on a private event-loop thread; each method here waits for its
result. Commands return the same typed data as the async client's.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Unpack

from xcsh.ai.types import ImageContent, Model
from xcsh.rpc import commands as c
from xcsh.rpc import results as r

if TYPE_CHECKING:
    from xcsh.rpc.client import RpcClient, StartOptions
    from xcsh.rpc.frame_log import FrameLog
    from xcsh.rpc.frames import ServerEvent

T = TypeVar("T")
Frame = dict[str, Any]


class SyncRpcClient:
    """Starts ``xcsh --mode rpc`` (same options as :meth:`RpcClient.start`) and drives it synchronously."""

    def __init__(self, **options: Unpack[StartOptions]) -> None:
        from xcsh.rpc.client import RpcClient

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="xcsh-rpc-client", daemon=True)
        self._thread.start()
        try:
            self.client: RpcClient = self._run(RpcClient.start(**options))
        except BaseException:
            self._stop_loop()
            raise

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    # ---- lifecycle and frames ----------------------------------------------------------------
    def close(self) -> int | None:
        code = self._run(self.client.close())
        self._stop_loop()
        return code

    def __enter__(self) -> SyncRpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def frames(self) -> FrameLog:
        return self.client.frames

    @property
    def version(self) -> str | None:
        return self.client.version

    @property
    def stderr_tail(self) -> str:
        return self.client.stderr_tail

    def mark(self) -> int:
        return self.client.mark()

    def send_raw(self, data: bytes | Frame) -> None:
        """Write a frame or raw bytes to the process's stdin (thread-safe)."""
        self._run(self._send(data))

    async def _send(self, data: bytes | Frame) -> None:
        self.client.send_raw(data)
        assert self.client.process.stdin is not None
        await self.client.process.stdin.drain()

    def request(self, command: Frame, *, timeout: float | None = None) -> Frame:
        return self._run(self.client.request(command, timeout=timeout))

    def call(self, command: Frame, *, timeout: float | None = None) -> Any:
        return self._run(self.client.call(command, timeout=timeout))

    def wait_for(
        self, predicate: Callable[[Frame], bool], *, since: int = 0, timeout: float | None = None
    ) -> Frame:
        return self._run(self.client.wait_for(predicate, since=since, timeout=timeout))

    def wait_for_type(self, kind: str, *, since: int = 0, timeout: float | None = None) -> Frame:
        return self._run(self.client.wait_for_type(kind, since=since, timeout=timeout))

    def wait_for_idle(self, *, since: int = 0, timeout: float | None = None) -> list[Frame]:
        return self._run(self.client.wait_for_idle(since=since, timeout=timeout))

    def prompt_and_wait(self, message: str, *, timeout: float | None = None, **fields: Any) -> list[Frame]:
        return self._run(self.client.prompt_and_wait(message, timeout=timeout, **fields))

    def events(self, *, since: int | None = None) -> Iterator[ServerEvent]:
        """Every non-response frame from ``since`` (default: now) on, until the process exits."""
        items: queue.Queue[ServerEvent | None] = queue.Queue()
        started = threading.Event()

        async def pump() -> None:
            try:
                iterator = self.client.events(since=since)
                started.set()
                async for frame in iterator:
                    items.put(frame)
            finally:
                items.put(None)

        future = asyncio.run_coroutine_threadsafe(pump(), self._loop)
        started.wait(5)
        try:
            while (item := items.get()) is not None:
                yield item
        finally:
            future.cancel()

    def on_host_tool(self, name: str, handler: Callable[..., Any]) -> None:
        """Like :meth:`RpcClient.on_host_tool`; ``handler`` may be a plain function (run in a thread).

        Its ``update`` callback may be called from that thread: the frame is handed to the
        client's loop, which alone writes to the agent's stdin.
        """
        self.client.on_host_tool(name, _as_async(handler))

    def on_ui_request(self, handler: Callable[[Frame], Any] | None) -> None:
        """Like :meth:`RpcClient.on_ui_request`; ``handler`` may be a plain function (run in a thread)."""
        self.client.on_ui_request(None if handler is None else _as_async(handler))

    def answer_ui(self, request_id: str, **answer: Any) -> None:
        self._run(self._send({"type": "extension_ui_response", "id": request_id, **answer}))

    # ---- commands (rpc-protocol §5) ---------------------------------------------------------------
    def prompt(
        self,
        message: str,
        *,
        images: list[ImageContent] | None = None,
        streaming_behavior: Literal["steer", "followUp"] | None = None,
        locale: str | None = None,
    ) -> None:
        self._run(
            self.client.prompt(message, images=images, streaming_behavior=streaming_behavior, locale=locale)
        )

    def steer(self, message: str, *, images: list[ImageContent] | None = None) -> None:
        self._run(self.client.steer(message, images=images))

    def follow_up(self, message: str, *, images: list[ImageContent] | None = None) -> None:
        self._run(self.client.follow_up(message, images=images))

    def abort(self) -> None:
        self._run(self.client.abort())

    def abort_and_prompt(self, message: str, *, images: list[ImageContent] | None = None) -> None:
        self._run(self.client.abort_and_prompt(message, images=images))

    def new_session(self, parent_session: str | None = None) -> r.CancelledResult:
        return self._run(self.client.new_session(parent_session))

    def get_state(self) -> r.SessionState:
        return self._run(self.client.get_state())

    def set_todos(self, phases: list[c.TodoPhaseInput]) -> r.TodosResult:
        return self._run(self.client.set_todos(phases))

    def set_host_tools(self, tools: list[c.HostToolDefinition]) -> list[str]:
        return self._run(self.client.set_host_tools(tools))

    def get_integrations(self) -> r.IntegrationsResult:
        return self._run(self.client.get_integrations())

    def set_locale(self, locale: str) -> None:
        self._run(self.client.set_locale(locale))

    def set_model(self, provider: str, model_id: str) -> Model:
        return self._run(self.client.set_model(provider, model_id))

    def cycle_model(self) -> r.CycleModelResult | None:
        return self._run(self.client.cycle_model())

    def get_available_models(self) -> list[Model]:
        return self._run(self.client.get_available_models())

    def set_thinking_level(self, level: c.ThinkingLevelField) -> None:
        self._run(self.client.set_thinking_level(level))

    def cycle_thinking_level(self) -> r.ThinkingLevelResult | None:
        return self._run(self.client.cycle_thinking_level())

    def set_steering_mode(self, mode: c.QueueModeField) -> None:
        self._run(self.client.set_steering_mode(mode))

    def set_follow_up_mode(self, mode: c.QueueModeField) -> None:
        self._run(self.client.set_follow_up_mode(mode))

    def set_interrupt_mode(self, mode: Literal["immediate", "wait"]) -> None:
        self._run(self.client.set_interrupt_mode(mode))

    def compact(
        self, custom_instructions: str | None = None, *, timeout: float | None = None
    ) -> r.CompactionResult:
        return self._run(self.client.compact(custom_instructions, timeout=timeout))

    def set_auto_compaction(self, enabled: bool) -> None:
        self._run(self.client.set_auto_compaction(enabled))

    def set_auto_retry(self, enabled: bool) -> None:
        self._run(self.client.set_auto_retry(enabled))

    def abort_retry(self) -> None:
        self._run(self.client.abort_retry())

    def bash(self, command: str, *, timeout: float | None = None) -> r.BashResult:
        return self._run(self.client.bash(command, timeout=timeout))

    def abort_bash(self) -> None:
        self._run(self.client.abort_bash())

    def get_session_stats(self) -> r.SessionStats:
        return self._run(self.client.get_session_stats())

    def export_html(self, output_path: str | None = None) -> str:
        return self._run(self.client.export_html(output_path))

    def switch_session(self, session_path: str) -> r.CancelledResult:
        return self._run(self.client.switch_session(session_path))

    def branch(self, entry_id: str) -> r.BranchResult:
        return self._run(self.client.branch(entry_id))

    def get_branch_messages(self) -> list[r.BranchMessage]:
        return self._run(self.client.get_branch_messages())

    def get_last_assistant_text(self) -> str | None:
        return self._run(self.client.get_last_assistant_text())

    def set_session_name(self, name: str) -> None:
        self._run(self.client.set_session_name(name))

    def get_messages(self) -> list[r.AgentMessage]:
        return self._run(self.client.get_messages())

    def get_commands(self) -> list[r.CommandInfo]:
        return self._run(self.client.get_commands())

    def clear_queue(self) -> r.ClearedQueue:
        return self._run(self.client.clear_queue())

    def list_sessions(self, scope: str = "cwd") -> list[r.SessionInfo]:
        return self._run(self.client.list_sessions(scope))

    def get_tree(self) -> r.TreeResult:
        return self._run(self.client.get_tree())

    def get_tools(self) -> list[r.ToolDetails]:
        return self._run(self.client.get_tools())

    def set_active_tools(self, tool_names: list[str]) -> list[str]:
        return self._run(self.client.set_active_tools(tool_names))


def _as_async(handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler`` as a coroutine function; a plain function runs in a worker thread."""
    if inspect.iscoroutinefunction(handler):
        return handler

    async def run(*args: Any) -> Any:
        return await asyncio.to_thread(handler, *args)

    return run
