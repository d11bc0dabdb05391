"""The process's stdio for RPC mode: fd 1 reserved for frames, stdin read on the event loop.

``claim_stdout`` duplicates the real stdout for the protocol and points fd 1 (and
``sys.stdout``) at stderr, so a stray ``print`` or an inheriting child process can
never write into the frame stream.

Input is read on the event loop itself (``add_reader``) when the loop can watch stdin (a pipe,
socket or terminal on POSIX): a command is answered in the loop turn that reads it, without a
thread hop. Where the loop cannot watch it (a regular file, Windows) a daemon thread reads it.
Frames are written synchronously; when the host does not read stdout and the pipe is full, the
writer waits for room and meanwhile keeps reading stdin, so a host that writes many commands
before reading any answer never deadlocks against us (docs/performance.md). A stop signal ends
that wait: the frame's unwritten rest and every later frame are dropped, so the process stops
even when the host never reads again (docs/fleet.md).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import select
import stat
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from xcsh.modes.signals import stop_notice_fd
from xcsh.rpc.jsonl import encode_frame_into

_KEEP_BUFFER = 8 << 20
GATHER_FRAME_MAX = 4096  # frames this large are written at once (see FrameWriter)
GATHER_MAX = 64 << 10  # gathered frames are written once they reach this size


def claim_stdout() -> int:
    """Reserve the real stdout for frames; returns the fd to write frames to."""
    sys.stdout.flush()
    frame_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return frame_fd


def _is_pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def grow_pipe(fd: int, size: int = 1 << 20) -> None:
    """Ask for a larger pipe buffer (Linux; best effort): long answers then wait and wake less."""
    import fcntl

    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    try:
        fcntl.fcntl(fd, set_size, size)
    except OSError:
        pass  # above the system's limit, or not a pipe


class StdinReader:
    """Reads fd 0 and hands its chunks, then ``None`` at EOF, to the server.

    :meth:`attach` gives the function chunks are delivered to and starts reading: on the loop
    when it can watch the fd (each chunk is delivered in the loop turn that reads it), else in
    a daemon thread (which works for every kind of stdin and never blocks the loop). A read
    error counts as EOF.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int = 0, chunk_size: int = 1 << 16) -> None:
        self._loop = loop
        self._fd = fd
        self._chunk = chunk_size
        self._deliver: Callable[[bytes | None], None] = lambda chunk: None
        self._held: list[bytes | None] = []  # read while a frame was being written
        self.on_loop = False  # True while the loop watches the fd (the writer may then read it too)
        self._ended = False

    @property
    def fd(self) -> int:
        return self._fd

    @property
    def loop_closed(self) -> bool:
        return self._loop.is_closed()

    def attach(self, deliver: Callable[[bytes | None], None]) -> None:
        self._deliver = deliver
        try:
            self._loop.add_reader(self._fd, self._readable)
        except (NotImplementedError, OSError, ValueError):  # a regular file, Windows' proactor loop
            threading.Thread(target=self._run, name="rpc-stdin", daemon=True).start()
        else:
            self.on_loop = True

    def _readable(self) -> None:
        chunk = self._read()
        if chunk != b"":
            self._deliver(chunk)

    def hold(self) -> None:
        """Read one chunk now and deliver it later (the writer waits for room on stdout)."""
        chunk = self._read()
        if chunk == b"":
            return
        if not self._held:
            self._loop.call_soon(self._release)
        self._held.append(chunk)

    def _release(self) -> None:
        held, self._held = self._held, []
        for chunk in held:
            self._deliver(chunk)

    def _read(self) -> bytes | None:
        """A chunk, None at EOF, or b"" when there was nothing to read after all."""
        if self._ended:
            return b""
        # The loop's readiness can be stale: input the writer took with hold() while a frame
        # waited for room, earlier in the same loop turn, leaves stdin empty, and a read of an
        # empty blocking pipe would wait for the host, which waits for our answers.
        if not select.select([self._fd], [], [], 0)[0]:
            return b""
        try:
            data = os.read(self._fd, self._chunk)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if data:
            if self._held:  # keep the order: earlier held chunks first
                self._held.append(data)
                return b""
            return data
        self._ended = True
        self.on_loop = False
        self._loop.remove_reader(self._fd)
        if self._held:
            self._held.append(None)
            return b""
        return None

    def _run(self) -> None:
        while True:
            try:
                data = os.read(self._fd, self._chunk)
            except OSError:
                data = b""
            self._loop.call_soon_threadsafe(self._deliver, data or None)
            if not data:
                return


_writers: weakref.WeakSet[FrameWriter] = weakref.WeakSet()
atexit.register(lambda: flush_frames())  # a normal interpreter exit (os._exit callers flush first)


def flush_frames() -> None:
    """Write every frame writer's gathered frames now: call before ``os._exit``."""
    for writer in list(_writers):
        writer.flush()


def _ends_run(frame: Any) -> bool:
    return type(frame) is dict and frame.get("type") == "agent_end"


class FrameWriter:
    """The only writer of frames: each frame is encoded and written whole, in call order.

    A pipe or socket is made non-blocking, which every process sharing its open file
    description sees: RPC mode's stdout is the host's own pipe (print mode leaves stdout
    blocking, :class:`xcsh.modes.stdout_writer.StdoutWriter`). While it has no room the writer
    waits for room, for a stop signal (:func:`stop_notice_fd`: the writer then drops the rest
    and every later frame, and :attr:`stopped` is set) and, with ``stdin`` read on the loop,
    for input, which it reads (queued, handled after the frame is written), so a full stdout
    pipe does not stop input. A reader that has gone (EPIPE) closes the writer.

    With ``loop``, small frames written on the loop's thread are gathered and written together
    at the end of the loop turn (:meth:`flush`, scheduled with ``call_soon``): a prompt's
    ``agent_start``, ``turn_start`` and ``message_start`` reach the host in one write and wake
    it once. A frame of :data:`GATHER_FRAME_MAX` bytes or more (a ``get_state`` answer, a long
    partial message), a frame from another thread, or a gathering grown past
    :data:`GATHER_MAX` writes what was gathered and itself at once, so order is kept and
    nothing is held without bound. An ``agent_end`` is written at once with what was gathered
    before it: the host waits for it, and what the session does after a run (the compaction
    checks, the provider reading the rest of the HTTP answer) must not delay it. Call
    :meth:`flush` before leaving the process.
    """

    def __init__(
        self,
        fd: int,
        *,
        check: Callable[[Any], None] | None = None,
        stdin: StdinReader | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._fd = fd
        self._lock = threading.RLock()
        self._check = check  # the outbound-checking debug switch (modes/rpc/frame_check.py)
        self._stdin = stdin
        self._buffer = bytearray()  # every frame is encoded into this one buffer
        self._loop = loop
        self._gathered = bytearray()  # small frames waiting for the end of the loop turn
        self._flush_soon: asyncio.Handle | None = None
        self.closed = False
        self.stopped = False  # a stop signal ended a wait for room
        if os.name == "posix" and _is_pipe_or_socket(fd):
            os.set_blocking(fd, False)
            grow_pipe(fd)
        _writers.add(self)

    def write(self, frame: Any) -> None:
        if self._check is not None:
            self._check(frame)
        with self._lock:
            if self.closed:
                return
            buffer = self._buffer
            try:
                encode_frame_into(frame, buffer)
            except BufferError:  # a view of the last frame is still alive somewhere: a new buffer
                buffer = self._buffer = bytearray()
                encode_frame_into(frame, buffer)
            gathered = self._gathered
            if self._loop is not None and len(buffer) < GATHER_FRAME_MAX and self._on_loop():
                gathered += buffer
                if len(gathered) < GATHER_MAX and not _ends_run(frame):
                    if self._flush_soon is None:
                        self._flush_soon = self._loop.call_soon(self.flush)
                    return
                self.flush()
                return
            if gathered:
                self.flush()
            self._write_all(buffer)
            if len(buffer) > _KEEP_BUFFER:
                self._buffer = bytearray()  # not kept after a huge frame

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:  # another thread, or the loop is not running
            return False

    def flush(self) -> None:
        """Write the gathered frames now (idempotent; a no-op when nothing is gathered)."""
        with self._lock:
            if self._flush_soon is not None:
                self._flush_soon.cancel()
                self._flush_soon = None
            if self._gathered and not self.closed:
                self._write_all(self._gathered)
            self._gathered.clear()

    def _write_all(self, data: bytes | bytearray) -> None:
        try:
            with memoryview(data) as whole:
                view = whole
                while view:
                    try:
                        written = os.write(self._fd, view)
                    except BlockingIOError:
                        if not self._wait_for_room():
                            self.closed = self.stopped = True
                            break
                        continue
                    view = view[written:]
                view.release()
        except BrokenPipeError:
            self.closed = True

    def _wait_for_room(self) -> bool:
        """Wait until the fd has room (True) or a stop signal has arrived (False)."""
        stdin = self._stdin
        # input is taken only while the loop can still deliver it (not at a flush after it closed)
        watch = [stdin.fd] if stdin is not None and stdin.on_loop and not stdin.loop_closed else []
        notice = stop_notice_fd()
        if notice is not None:
            watch.append(notice)
        readable, _, _ = select.select(watch, [self._fd], [])
        if notice is not None and notice in readable:
            return False
        if readable and stdin is not None:
            stdin.hold()
        return True
