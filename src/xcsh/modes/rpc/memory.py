"""An in-memory transport for the RPC command core: the server side of ``xcsh.open_session``.

:class:`MemoryProcess` looks like the ``asyncio`` subprocess the RPC client drives
(``stdin.write``/``drain``/``close``, ``stdout.read``, ``wait``, ``kill``, ``returncode``), but
the "process" is :func:`~xcsh.modes.rpc.run.build_server`'s server running as a task in the
caller's event loop. Frames are JSON-encoded exactly as on stdout and decoded by the client,
so hosts see the same commands, responses and events as over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from xcsh.coding.session import AgentSession
from xcsh.modes.rpc.updates import MessageUpdates
from xcsh.rpc.jsonl import encode_frame


class _Stdout:
    """The client's read side: encoded frames, then ``b""`` at the end."""

    def __init__(self) -> None:
        self.chunks: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(self, n: int = -1) -> bytes:
        return await self.chunks.get()


class _Writer:
    """The server's frame sink: one encoded line per frame, in call order."""

    def __init__(self, stdout: _Stdout) -> None:
        self._stdout = stdout
        self.closed = False

    def write(self, frame: Any) -> None:
        if not self.closed:
            self._stdout.chunks.put_nowait(encode_frame(frame))


class _Stdin:
    """The client's write side, feeding the server's input queue."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._closed = False

    def write(self, data: bytes) -> None:
        if not self._closed:
            self.queue.put_nowait(bytes(data))

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.queue.put_nowait(None)

    def is_closing(self) -> bool:
        return self._closed


class MemoryProcess:
    """The command core serving one session in this event loop, behind a process-like face."""

    def __init__(
        self,
        build_session: Callable[[], AgentSession],
        *,
        protocol_fixes: bool = False,
        message_updates: MessageUpdates = "full",
    ) -> None:
        self.stdin = _Stdin()
        self.stdout = _Stdout()
        self.stderr = None
        self.pid = 0
        self.returncode: int | None = None
        self.session: AgentSession | None = None
        self._build = build_session
        self._protocol_fixes = protocol_fixes
        self._message_updates: MessageUpdates = message_updates
        self._shut_down = False
        self._task = asyncio.ensure_future(self._run())

    def _extension_exit(self) -> None:
        self._shut_down = True
        self.stdin.close()

    async def _run(self) -> None:
        from xcsh.modes.rpc.run import build_server

        writer = _Writer(self.stdout)
        try:
            self.session = self._build()
            server = build_server(
                self.session,
                writer,
                protocol_fixes=self._protocol_fixes,
                message_updates=self._message_updates,
            )
            # an extension's shutdown request ends this session, not the host's process
            # (its handler has already shut the session down)
            server.exit = self._extension_exit
            await server.serve(self.stdin)
            self.returncode = 0
        except BaseException:
            self.returncode = 1
            raise
        finally:
            try:
                if self.session is not None and not self._shut_down:
                    await self.session.shutdown_async()  # the loop runs on while a rewrite ends
            finally:  # also when the host kills this session while it waits
                writer.closed = True
                self.stdout.chunks.put_nowait(b"")

    async def wait(self) -> int:
        """The exit code, like a process's ``wait()``: a failure of the core (a start-up
        error) is its exit code 1, not raised here (:meth:`start_error` gives it)."""
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(self._task)
        return self.returncode if self.returncode is not None else 1

    def kill(self) -> None:
        self._task.cancel()

    def start_error(self) -> BaseException | None:
        """The exception that stopped the core before it was ready (start-up errors)."""
        if self._task.done() and not self._task.cancelled():
            return self._task.exception()
        return None
