"""Stopping on SIGTERM, SIGHUP and SIGINT: abort, end every child process group, flush, exit.

A supervisor, ``timeout`` or a closed terminal must not leave commands running that the
agent started in their own process groups. On the first of these signals the handler:

1. sends SIGTERM to every running shell command's process group, SIGKILL after a short
   grace (:func:`xcsh.coding.bash.process.terminate_all_groups`);
2. aborts the session's run (bounded wait), so the aborted messages are persisted;
3. shuts the session down (extensions' ``session_shutdown``, the session file closed —
   every entry was written when appended; closing fsyncs what the background fsync had not,
   after a rewrite of the file in progress, which is waited for off the event loop);
4. exits with the conventional status ``128 + signal number`` (143, 129, 130).

A second signal during that sequence exits at once with the same status.

The loop's handlers run only when the loop gets to them: a thread blocked in a write (a host
that stopped reading stdout) would hold them off. So each stop signal also makes
:func:`stop_notice_fd` readable, at once, from a Python-level handler; a writer waiting for room
on stdout waits on it too and gives up its frames when it becomes readable
(:class:`xcsh.modes.rpc.stdio.FrameWriter`), and the loop then runs the sequence above.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable

from xcsh.coding.session import AgentSession

logger = logging.getLogger(__name__)


def terminate_all_groups() -> None:
    """End every running shell's process group (:func:`xcsh.coding.bash.process.terminate_all_groups`).

    Shells are started only through that module, so when it was never imported there is
    nothing to end (and start-up need not import it).
    """
    process = sys.modules.get("xcsh.coding.bash.process")
    if process is not None:
        process.terminate_all_groups()


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
ABORT_WAIT_S = 3.0


_notice: tuple[socket.socket, socket.socket] | None = None


def stop_notice_fd() -> int | None:
    """An fd that becomes readable (and stays so) once a stop signal has arrived; None until
    stop handlers are held or installed."""
    return _notice[0].fileno() if _notice is not None else None


def _ensure_notice() -> None:
    global _notice
    if _notice is None:
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        _notice = (reader, writer)


def _note_stop(signum: int, frame: object) -> None:
    """The stop signals' Python-level handler: make the notice readable (the signal's number
    still reaches the loop, or the held socket, through the wakeup fd)."""
    if _notice is not None:
        with contextlib.suppress(OSError):  # full: it is readable already
            _notice[1].send(b"!")


def exit_status(signum: int) -> int:
    """The shell's convention for a process ended by ``signum``."""
    return 128 + signum


class StopHandlers:
    """The installed handlers; a mode awaits :meth:`settle` before it returns on its own."""

    def __init__(self, session: Callable[[], AgentSession | None], exit: Callable[[int], None]) -> None:
        self._session = session
        self._exit = exit
        self._loop = asyncio.get_running_loop()
        self._signum: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._held: tuple[socket.socket, socket.socket] | None = None
        self._signalled = asyncio.Event()

    @property
    def stopping(self) -> bool:
        return self._signum is not None

    def on_signal(self, signum: int) -> None:
        if self._signum is not None:
            self._exit(exit_status(self._signum))
            return
        self._signum = signum
        self._signalled.set()
        terminate_all_groups()
        self._task = self._loop.create_task(_stop(self._session(), signum, self._exit))

    async def finish(self) -> None:
        """Wait for a stop signal already noted (:func:`stop_notice_fd` is readable) to reach
        the loop, then for its stop sequence (which exits the process)."""
        await self._signalled.wait()
        await self.settle()

    async def settle(self) -> None:
        """Finish a stop already under way (it exits the process) — e.g. when stdin closed
        right after the signal; returns at once otherwise."""
        if self._task is not None:
            await self._task

    def hold(self) -> None:
        """Until :meth:`install`, the stop signals only write their number to a socket of our
        own (``signal.set_wakeup_fd`` and handlers that only mark the notice, far cheaper than the loop's
        handlers); :meth:`install` then handles what arrived. The loop's first handler
        replaces that wakeup fd in one step, so each signal reaches exactly one of the two
        (noting it in a Python handler as well could handle one arriving mid-install twice,
        and the second time is the immediate exit)."""
        _ensure_notice()
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        self._held = (reader, writer)
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        for signum in STOP_SIGNALS:
            signal.signal(signum, _note_stop)

    def install(self) -> None:
        _ensure_notice()
        for signum in STOP_SIGNALS:
            self._loop.add_signal_handler(signum, self.on_signal, signum)
            # asyncio's own Python-level handler does nothing; ours also wakes a blocked writer
            signal.signal(signum, _note_stop)
        if self._held is None:
            return
        reader, writer = self._held
        self._held = None
        noted = b""
        with contextlib.suppress(OSError):  # BlockingIOError: nothing (more) arrived
            while chunk := reader.recv(64):
                noted += chunk
        reader.close()
        writer.close()
        for number in noted:
            if number in STOP_SIGNALS:
                self.on_signal(number)

    def remove(self) -> None:
        """Uninstall the handlers and forget a noted stop (in-process uses, such as tests)."""
        global _notice
        for signum in STOP_SIGNALS:
            with contextlib.suppress(Exception):
                self._loop.remove_signal_handler(signum)
        if _notice is not None:
            for end in _notice:
                end.close()
            _notice = None


def install_stop_handlers(
    session: Callable[[], AgentSession | None], *, exit: Callable[[int], None] = os._exit
) -> StopHandlers:
    """Handle the stop signals on the running loop for the session ``session()`` returns.

    ``exit`` ends the process (the modes use ``os._exit`` so no other task delays it).
    """
    handlers = StopHandlers(session, exit)
    handlers.install()
    return handlers


async def _stop(session: AgentSession | None, signum: int, exit: Callable[[int], None]) -> None:
    try:
        if session is not None:
            try:
                async with asyncio.timeout(ABORT_WAIT_S):
                    await session.abort()
            except TimeoutError:
                logger.warning("the run did not stop within %.0f s of the signal", ABORT_WAIT_S)
            terminate_all_groups()  # anything started while aborting
            await session.shutdown_async()  # a rewrite is waited for off the loop (a 2nd signal exits)
    except Exception:  # leaving anyway: report, never hang on the way out
        logger.exception("error while stopping on signal %d", signum)
    finally:
        with contextlib.suppress(Exception):  # a closed stderr (None) must not keep us running
            sys.stderr.flush()
        exit(exit_status(signum))
