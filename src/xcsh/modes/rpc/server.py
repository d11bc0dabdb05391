"""The RPC server: reads frames from stdin, dispatches commands, writes responses and events.

Ordinary commands are handled one at a time, in arrival order, and answered in that
order. Control frames — ``abort``, ``abort_bash``, ``abort_retry``, host-tool results and
updates, extension UI responses — take effect at once, even while a long command such as
``bash`` or ``compact`` is still running (this project's decision, rpc-protocol §2.4).

This module is the single place where exceptions become responses.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from xcsh.coding.errors import CommandError
from xcsh.coding.session import AgentSession
from xcsh.modes.rpc.updates import MessageUpdates, slim_update
from xcsh.rpc.jsonl import LineSplitter, OversizedLine, decode_frame, decode_line
from xcsh.rpc.protocol import CONTROL_COMMANDS, SPECS, check
from xcsh.version import __version__

logger = logging.getLogger(__name__)

# A handler takes its command's TypedDict (xcsh.rpc.commands): _handle_command validates every
# frame against it first, so handlers read fields without checking them again.
Handler = Callable[["RpcServer", Any], Awaitable[Any]]
InstantHandler = Callable[["RpcServer", Any], Any]


if TYPE_CHECKING:
    # Typing only: a Protocol class costs ~0.13 M instructions to create, and nothing checks it
    # at run time (docs/performance.md, "Seventh session: start-up").
    class FrameSink(Protocol):
        """Where frames go: stdout (``stdio.FrameWriter``) or an in-memory pipe (``memory.py``)."""

        def write(self, frame: Any) -> None: ...


class QueueSource(Protocol):
    """Where input comes from: raw chunks on ``queue``, ``None`` at end of input (``memory.py``)."""

    queue: asyncio.Queue[bytes | None]


@runtime_checkable
class PushSource(Protocol):
    """Where input comes from: raw chunks, then ``None``, handed to ``deliver`` (``stdio.StdinReader``)."""

    def attach(self, deliver: Callable[[bytes | None], None]) -> None: ...


ChunkSource = QueueSource | PushSource


FrameHandler = Callable[[dict[str, Any]], None]


class _NoData:
    """Sentinel: the command's success response carries no ``data``."""


class _Handled:
    """Sentinel: the handler wrote its own response(s)."""


NO_DATA = _NoData()
HANDLED = _Handled()


# after stdin's end, how often a blocking command still running is aborted again (one started
# after the previous abort, e.g. the next compact in the queue)
_EOF_ABORT_EVERY_S = 0.05


def _exit_process() -> None:
    import os
    import sys

    from xcsh.modes.rpc.stdio import flush_frames

    flush_frames()  # frames the writer gathered in this loop turn (stdio.FrameWriter)
    sys.stderr.flush()
    os._exit(0)


def _well_formed(frame: dict[str, Any], payload: str) -> bool:
    body = frame.get(payload)
    return (
        isinstance(frame.get("id"), str) and isinstance(body, dict) and isinstance(body.get("content"), list)
    )


class RpcServer:
    """Serves one :class:`AgentSession` over a frame writer until stdin ends."""

    def __init__(
        self,
        session: AgentSession,
        writer: FrameSink,
        *,
        protocol_fixes: bool = False,
        message_updates: MessageUpdates = "full",
    ) -> None:
        self.session = session
        self.writer = writer
        # --protocol-fixes: error responses keep the request id; settled frames (settle.py)
        self.protocol_fixes = protocol_fixes
        self.message_updates = message_updates  # "delta": slim message_update frames (updates.py)
        # told of every prompt-like command: (command, id, run task or None if queued, error text)
        self.prompt_started: list[Callable[[str, Any, asyncio.Future[None] | None, str | None], None]] = []
        self.handlers: dict[str, Handler] = {}
        # commands whose handler never waits (get_state, prompt): answered at once when nothing is queued
        self.instant: dict[str, InstantHandler] = {}
        self._jobs = 0  # ordinary commands queued or running, control commands running
        self._blocking = 0  # blocking commands (bash, compact, session switches …) running
        self._input_ended = False
        self._aborting: asyncio.Task[None] | None = None  # after stdin's end: aborting blocking commands
        self._control: set[asyncio.Task[Any]] = set()  # control commands running
        # ``abort`` frames read so far: an abort overtakes ordinary commands read before it, and
        # a prompt among them must not start after it (_handle_command tells the handler)
        self._aborts_read = 0
        # the command being handled was read before an ``abort`` that has run since (handlers of
        # prompt-like commands read it before their first await; commands_core.py)
        self.read_before_abort = False
        self.on_ui_response: FrameHandler = lambda frame: None
        self.on_host_tool_result: FrameHandler = lambda frame: None
        self.on_host_tool_update: FrameHandler = lambda frame: None
        self.on_eof: list[Callable[[], None]] = []
        self.after_response: list[Callable[[], None]] = []
        # called right after the ready frame (extensions' session_start)
        self.on_ready: list[Callable[[], None]] = []
        self._queue: asyncio.Queue[Callable[[], Awaitable[None]] | None] = asyncio.Queue()
        self._background: set[asyncio.Task[Any]] = set()
        self._unsubscribe = session.subscribe(self.write)
        # what "the process exits" means for this server (an extension's shutdown request);
        # the stdio server leaves the process, the in-process one only ends its input
        self.exit: Callable[[], None] = _exit_process

    # ---- output ------------------------------------------------------------------------
    def write(self, frame: Any) -> None:
        if (
            self.message_updates == "delta"
            and isinstance(frame, dict)
            and frame.get("type") == "message_update"
        ):
            frame = slim_update(frame)
        self.writer.write(frame)

    def respond(self, command: Any, cid: Any, *, data: Any = NO_DATA, error: str | None = None) -> None:
        frame: dict[str, Any] = {}
        if cid is not None:
            frame["id"] = cid  # any JSON value is echoed, as the reference does
        frame["type"] = "response"
        frame["command"] = command
        frame["success"] = error is None
        if error is not None:
            frame["error"] = error
        elif data is not NO_DATA:
            frame["data"] = data
        self._answer(frame)

    def _answer(self, frame: dict[str, Any]) -> None:
        """Write a command's response, then run the after-response hooks (e.g. a pending shutdown)."""
        self.write(frame)
        for callback in list(self.after_response):
            callback()

    def parse_error(self, message: str) -> None:
        self.write(
            {
                "type": "response",
                "command": "parse",
                "success": False,
                "error": f"Failed to parse command: {message}",
            }
        )

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, keeping a reference until it finishes."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # ---- input -------------------------------------------------------------------------
    async def serve(self, reader: ChunkSource) -> None:
        """Process stdin until EOF; returns when the input ends."""
        unspecified = sorted(set(self.handlers) - set(SPECS))
        if unspecified:
            # every command needs its TypedDict in xcsh.rpc.commands (docs/protocol.md, "Adding a command")
            logger.warning("commands without a wire type, not validated: %s", ", ".join(unspecified))
        self.write({"type": "ready", "version": __version__})
        for callback in self.on_ready:
            callback()
        worker = asyncio.ensure_future(self._work())
        splitter = LineSplitter()
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def feed(chunk: bytes | None) -> None:
            if ended.done():
                return
            if chunk is None:
                for line in splitter.finish():
                    self._accept(line)
                ended.set_result(None)
                return
            for line in splitter.feed(chunk):
                self._accept(line)

        try:
            if isinstance(reader, PushSource):
                reader.attach(feed)  # chunks arrive in the loop turn that reads them
                await ended
            else:
                while not ended.done():
                    feed(await reader.queue.get())
            # pending host-tool calls fail first, so nothing queued can wait on the host
            self._run_eof_callbacks()
            # commands already received are still answered before leaving; but the exit does not
            # wait on the model or a shell for a host that is gone (rpc-protocol §2.5): a blocking
            # command running now or later (a compact on a stream that never ends, a long bash) is
            # aborted, and answers as an aborted one does
            await self._queue.put(None)
            self._input_ended = True
            if self._blocking:
                self._abort_blocking()
            await worker
        finally:
            worker.cancel()
            self._run_eof_callbacks()

    def _abort_blocking(self) -> None:
        """After stdin's end: abort the blocking commands running, again until none runs."""
        if self._aborting is None or self._aborting.done():
            self._aborting = self.spawn(self._abort_while_blocking())

    async def _abort_while_blocking(self) -> None:
        from xcsh.coding.user_bash import abort_user_bash

        while self._blocking:
            abort_user_bash(self.session)
            await self.session.abort()
            await asyncio.sleep(_EOF_ABORT_EVERY_S)  # one that started meanwhile is aborted too

    def _run_eof_callbacks(self) -> None:
        callbacks, self.on_eof = self.on_eof, []
        for callback in callbacks:
            callback()

    def _accept(self, line: bytes | OversizedLine) -> None:
        if isinstance(line, OversizedLine):
            size = line.size
            self._enqueue(
                lambda: self._async(self.parse_error, f"line of {size} bytes exceeds the size limit")
            )
            return
        try:
            text = decode_line(line)
        except UnicodeDecodeError as exc:
            message = f"invalid UTF-8 in input ({exc.reason})"
            self._enqueue(lambda: self._async(self.parse_error, message))
            return
        if text is None:
            return
        try:
            frame = decode_frame(text)
        except (ValueError, RecursionError) as exc:
            import json  # already loaded: only decode_frame's json.loads fallback raises

            if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError):
                raise
            detail = str(exc)
            self._enqueue(lambda: self._async(self.parse_error, detail))
            return
        self._dispatch(frame)

    async def _async(self, fn: Callable[[str], None], arg: str) -> None:
        fn(arg)

    def _job_done(self, task: asyncio.Task[Any]) -> None:
        self._jobs -= 1

    def _enqueue(self, job: Callable[[], Awaitable[None]]) -> None:
        self._jobs += 1
        self._queue.put_nowait(job)

    def _dispatch(self, frame: Any) -> None:
        if isinstance(frame, dict):
            kind = frame.get("type")
            if kind == "extension_ui_response":
                self.on_ui_response(frame)
                return
            if kind == "host_tool_result" and _well_formed(frame, "result"):
                self.on_host_tool_result(frame)
                return
            if kind == "host_tool_update" and _well_formed(frame, "partialResult"):
                self.on_host_tool_update(frame)
                return
            if isinstance(kind, str) and kind in CONTROL_COMMANDS:
                if kind == "abort":
                    self._aborts_read += 1
                self._jobs += 1  # an instant answer must not overtake it
                task = self.spawn(self._run_command(frame))
                self._control.add(task)
                task.add_done_callback(self._control.discard)
                task.add_done_callback(self._job_done)
                return
            instant = self.instant.get(kind) if isinstance(kind, str) else None
            if instant is not None and self._jobs == 0:
                try:  # nothing waits before it, so answering now keeps the arrival order
                    self._handle_at_once(frame, instant)
                except Exception as exc:  # as in _run_command: one line never stops the input
                    logger.debug("line could not be handled", exc_info=True)
                    self.parse_error(str(exc) or type(exc).__name__)
                return
        aborts = self._aborts_read
        if self._control:
            # read after a control command still running (an abort waiting for the run to end):
            # handled once it is done, as a host that writes "abort, prompt" expects
            before = set(self._control)
            self._enqueue(lambda: self._after(before, frame, aborts))
            return
        self._enqueue(lambda: self._run_command(frame, aborts))

    async def _after(self, before: set[asyncio.Task[Any]], frame: Any, aborts: int) -> None:
        await asyncio.wait(before)
        await self._run_command(frame, aborts)

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            if job is None:
                return
            try:
                await job()
            finally:
                self._jobs -= 1

    def _keep_id(self, request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
        """With ``--protocol-fixes``, an error response carries the request's id (first, as usual)."""
        if not self.protocol_fixes or request.get("id") is None:
            return response
        return {"id": request["id"], **response}

    async def _run_command(self, frame: Any, aborts: int | None = None) -> None:
        """Handle one command; ``aborts`` is the count of ``abort`` frames read before it (queued ones)."""
        try:
            await self._handle_command(frame, aborts)
        except Exception as exc:  # never let one line stop the worker: e.g. a frame too deep to echo
            logger.debug("line could not be handled", exc_info=True)
            self.parse_error(str(exc) or type(exc).__name__)

    def _resolve(self, frame: Any) -> tuple[str, Any, Handler, dict[str, Any]] | None:
        """The command's name, id, handler and validated frame; or None, the error answered."""
        if frame is None or not isinstance(frame, dict):
            if frame is None:
                self.parse_error("Cannot read properties of null (reading 'type')")
            else:
                self._answer({"type": "response", "success": False, "error": "Unknown command: undefined"})
            return None
        kind = frame.get("type")
        handler = self.handlers.get(kind) if isinstance(kind, str) else None
        if handler is None or not isinstance(kind, str):
            if "type" not in frame:
                unknown = {"type": "response", "success": False, "error": "Unknown command: undefined"}
            else:
                # JSON.stringify keeps a null command; String(null) is "null"
                import json  # an odd frame only

                shown = kind if isinstance(kind, str) else json.dumps(kind)
                unknown = {
                    "type": "response",
                    "command": kind,
                    "success": False,
                    "error": f"Unknown command: {shown}",
                }
            self._answer(self._keep_id(frame, unknown))
            return None
        cid = frame.get("id")
        spec = SPECS.get(kind)
        if spec is not None:
            # the one validation point: a handler only ever sees fields of the declared types
            checked = check(spec, frame)
            if not isinstance(checked, dict):  # an Invalid (xcsh.rpc.validation)
                if checked.with_id or (self.protocol_fixes and cid is not None):
                    self.respond(kind, cid, error=checked.error)
                else:
                    self.parse_error(checked.error)
                return None
            frame = checked
        return kind, cid, handler, frame

    def _failed(self, kind: str, cid: Any, exc: Exception) -> None:
        if isinstance(exc, CommandError):
            self.respond(kind, cid, error=str(exc))
            return
        # the one boundary: any failure becomes a parse-error response
        logger.debug("command %s failed", kind, exc_info=exc)
        message = str(exc) or type(exc).__name__
        if self.protocol_fixes and cid is not None:
            self.respond(kind, cid, error=message)
        else:
            self.parse_error(message)

    async def _handle_command(self, frame: Any, aborts: int | None = None) -> None:
        resolved = self._resolve(frame)
        if resolved is None:
            return
        kind, cid, handler, checked = resolved
        spec = SPECS.get(kind)
        blocking = spec is not None and spec.blocking
        self._blocking += blocking
        if blocking and self._input_ended:
            self._abort_blocking()
        # a prompt written before an abort that overtook it (the abort ran while the prompt waited
        # behind a blocking command) is aborted too: commands take effect in the order written
        self.read_before_abort = aborts is not None and aborts != self._aborts_read
        try:
            result = await handler(self, checked)
        except Exception as exc:
            self._failed(kind, cid, exc)
            return
        finally:
            self._blocking -= blocking
        if result is HANDLED:
            return
        self.respond(kind, cid, data=result)

    def _handle_at_once(self, frame: dict[str, Any], run: InstantHandler) -> None:
        """A command whose handler never waits, answered in this loop turn (nothing is queued)."""
        resolved = self._resolve(frame)
        if resolved is None:
            return
        kind, cid, _, checked = resolved
        self.read_before_abort = False  # nothing was queued before it
        try:
            result = run(self, checked)
        except Exception as exc:
            self._failed(kind, cid, exc)
            return
        if result is HANDLED:
            return
        self.respond(kind, cid, data=result)
