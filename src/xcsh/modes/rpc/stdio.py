"""The process's stdio for RPC mode: fd 1 reserved for frames, stdin read in the background.

``claim_stdout`` duplicates the real stdout for the protocol and points fd 1 (and
``sys.stdout``) at stderr, so a stray ``print`` or an inheriting child process can
never write into the frame stream.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from xcsh.rpc.jsonl import encode_frame


def claim_stdout() -> int:
    """Reserve the real stdout for frames; returns the fd to write frames to."""
    sys.stdout.flush()
    frame_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return frame_fd


class FrameWriter:
    """The only writer of frames: each frame is encoded and written whole, in call order."""

    def __init__(self, fd: int, *, check: Callable[[Any], None] | None = None) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._check = check  # the outbound-checking debug switch (modes/rpc/frame_check.py)
        self.closed = False

    def write(self, frame: Any) -> None:
        if self._check is not None:
            self._check(frame)
        data = encode_frame(frame)
        with self._lock:
            if self.closed:
                return
            view = memoryview(data)
            try:
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
            except BrokenPipeError:
                self.closed = True


class StdinReader:
    """Reads fd 0 in a daemon thread and hands chunks to the event loop (None at EOF).

    A thread works for every kind of stdin (pipe, file, tty) and never blocks the loop.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int = 0, chunk_size: int = 1 << 16) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._loop = loop
        self._fd = fd
        self._chunk = chunk_size
        self._thread = threading.Thread(target=self._run, name="rpc-stdin", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                data = os.read(self._fd, self._chunk)
            except OSError:
                data = b""
            self._loop.call_soon_threadsafe(self.queue.put_nowait, data or None)
            if not data:
                return
