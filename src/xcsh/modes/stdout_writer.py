"""stdout for print mode (``-p``, ``--mode json``): blocking writes from a thread of their own.

stdout's open file description is shared with every process that inherited the same pipe (the
siblings of ``make -j`` behind ``| tee log``, ``{ xcsh -p … & other; } | reader``), and
``O_NONBLOCK`` lives on that description: setting it would make the others' writes fail with
``EAGAIN``. So the fd stays blocking and a daemon thread writes it; the loop's thread only queues
the bytes and never waits on the reader, so a stop signal is handled while the reader does not
read (docs/fleet.md).

The queue is bounded (:data:`QUEUE_MAX`): past it the loop waits for the writer, for a stop
signal (:func:`~xcsh.modes.signals.stop_notice_fd`) or, with :meth:`drain`, for the end. A stop
signal ends such a wait: what is queued is dropped with every later frame (:attr:`stopped`), and
the process leaves without waiting for a writer blocked on a full pipe (:meth:`abandon`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import select
import socket
import threading
from collections.abc import Callable
from typing import Any

from xcsh.modes.rpc.stdio import grow_pipe
from xcsh.modes.signals import stop_notice_fd
from xcsh.rpc.jsonl import encode_frame_into

QUEUE_MAX = 4 << 20  # bytes queued before the loop waits for the writer
LEAVE_GRACE_S = 1.0  # at exit, queued frames are written while the reader takes some this often
SPARE_BUFFERS = 4  # written buffers kept to encode the next frames into
SPARE_BUFFER_MAX = 8 << 20  # a buffer larger than this is not kept
IOV_MAX = 1024  # buffers per writev (POSIX's minimum is 16; Linux and macOS allow 1024)


class StdoutWriter:
    """Queues frames (or bytes) for fd ``fd``, written in order by a daemon thread.

    A reader that has gone (EPIPE) closes the writer: later frames are dropped and ``on_broken``
    is called once, on ``loop``'s thread.
    """

    def __init__(
        self,
        fd: int,
        loop: asyncio.AbstractEventLoop,
        *,
        on_broken: Callable[[], None] | None = None,
    ) -> None:
        self._fd = fd
        self._loop = loop
        self._on_broken = on_broken
        self._queue: collections.deque[bytes | bytearray] = collections.deque()
        # frames are encoded into buffers the writer has written (fresh memory for every long
        # message_update would be faulted in page by page: +60 % CPU on a 20,000-delta answer)
        self._spare: list[bytearray] = []
        self._queued = 0  # bytes queued or being written
        self._cond = threading.Condition()
        self._waiting = False  # the loop's thread waits on _progress
        self._progress = socket.socketpair()  # the writer marks each write done while one waits
        for end in self._progress:
            end.setblocking(False)
        self.closed = False  # nothing more is written (the reader has gone, or a stop dropped it)
        self.stopped = False  # a stop signal ended a wait for the writer
        if os.name == "posix":  # the pipe's size (not the description's flags): fewer wake-ups
            grow_pipe(fd)
        threading.Thread(target=self._run, name="stdout-writer", daemon=True).start()

    def write(self, frame: Any) -> None:
        with self._cond:
            buffer = self._spare.pop() if self._spare else bytearray()
        try:
            encode_frame_into(frame, buffer)
        except BufferError:  # a view of it is still alive somewhere: a new buffer
            buffer = bytearray()
            encode_frame_into(frame, buffer)
        self.write_bytes(buffer)

    def write_bytes(self, data: bytes | bytearray) -> None:
        with self._cond:
            if self.closed:
                return
            self._queue.append(data)
            self._queued += len(data)
            self._cond.notify()
            full = self._queued > QUEUE_MAX
        if full:
            self._wait(QUEUE_MAX)

    def drain(self) -> None:
        """Wait until everything queued is written, the reader has gone or a stop signal came."""
        self._wait(0)

    def abandon(self, grace_s: float = LEAVE_GRACE_S) -> None:
        """Before the process leaves on a stop: let the writer go on while the reader takes
        something at least every ``grace_s``, then drop the rest (a writer blocked on a full
        pipe is left behind). A further stop signal ends the wait at once."""
        notice = stop_notice_fd()
        watch = [self._progress[0].fileno()]
        if notice is not None:
            with contextlib.suppress(OSError):  # the signals noted so far; we are leaving anyway
                while os.read(notice, 4096):
                    pass
            watch.append(notice)
        while True:
            with self._cond:
                if self.closed or self._queued == 0:
                    return
                self._waiting = True
            readable, _, _ = select.select(watch, [], [], grace_s)
            if not readable or (notice is not None and notice in readable):
                return
            self._take_progress()

    def _wait(self, most: int) -> None:
        notice = stop_notice_fd()
        progress = self._progress[0].fileno()
        watch = [progress] if notice is None else [progress, notice]
        while True:
            with self._cond:
                if self.closed or self._queued <= most:
                    self._waiting = False
                    return
                self._waiting = True
            readable, _, _ = select.select(watch, [], [])
            if notice is not None and notice in readable:
                with self._cond:
                    self.closed = self.stopped = True
                    self._waiting = False
                    self._queue.clear()
                return
            self._take_progress()

    def _take_progress(self) -> None:
        with contextlib.suppress(OSError):  # BlockingIOError: another wait took it
            while self._progress[0].recv(4096):
                pass

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                batch = list(self._queue)  # one write for what queued up meanwhile
                self._queue.clear()
            try:
                _write_batch(self._fd, batch)
            except BrokenPipeError:
                with self._cond:
                    self.closed = True
                    self._queue.clear()
                    self._queued = 0
                if self._on_broken is not None:
                    with contextlib.suppress(RuntimeError):  # the loop has closed
                        self._loop.call_soon_threadsafe(self._on_broken)
            except OSError:  # stdout closed under us: nothing more can be written
                with self._cond:
                    self.closed = True
                    self._queue.clear()
                    self._queued = 0
            with self._cond:
                if not self.closed:
                    self._queued -= sum(len(data) for data in batch)
                waiting = self._waiting
                for data in batch:
                    small = len(data) <= SPARE_BUFFER_MAX
                    if isinstance(data, bytearray) and small and len(self._spare) < SPARE_BUFFERS:
                        self._spare.append(data)
            if waiting:
                with contextlib.suppress(OSError):  # full: it is readable already
                    self._progress[1].send(b".")
            if self.closed:
                return


def _write_batch(fd: int, batch: list[bytes | bytearray]) -> None:
    """Write ``batch`` in order, most of it with one ``writev``."""
    if len(batch) == 1 or not hasattr(os, "writev"):
        for data in batch:
            _write_all(fd, data)
        return
    written = os.writev(fd, batch[:IOV_MAX])
    for data in batch:
        if written >= len(data):
            written -= len(data)
            continue
        with memoryview(data) as whole:
            _write_all(fd, whole[written:])
        written = 0


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    with memoryview(data) as whole:
        view = whole
        while view:
            view = view[os.write(fd, view) :]
        view.release()  # no view is left on a buffer that is encoded into again
