"""Watching OS processes from tests and benchmarks: alive or not, waiting (bounded) for them to end.

:func:`wait_gone` waits on events: a pidfd per process (Linux ≥ 5.3), readable once the
process has exited, watched with one ``select``; :func:`until_gone` is the same for one
process in a coroutine, the pidfd watched by the event loop. Where ``os.pidfd_open`` is missing it falls
back to checking every 20 ms, still bounded. It works for any process we may signal, not
only our children, and never reaps one: a child stays for its ``Popen`` or ``waitpid``.
:func:`alive` and :func:`session_members` read ``/proc`` where there is one.
"""

from __future__ import annotations

import asyncio
import os
import select
import time
from collections.abc import Iterable
from pathlib import Path

_POLL_S = 0.02  # only without pidfds


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (without ``/proc``: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        pass
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no /proc: the signal test is all we know
    except OSError:  # gone between the two looks
        return False


def wait_gone(pids: Iterable[int], within: float) -> list[int]:
    """Wait until every process in ``pids`` has exited, at most ``within`` seconds; the survivors.

    A zombie counts as exited.
    """
    pending: dict[int, int] = {}  # pidfd → pid
    survivors: list[int] = []
    try:
        for pid in pids:
            try:
                pending[os.pidfd_open(pid)] = pid
            except ProcessLookupError:
                continue
            except (AttributeError, OSError):  # no pidfds here (macOS, Linux < 5.3)
                if alive(pid):
                    survivors.append(pid)
        deadline = time.monotonic() + within
        while pending and (remaining := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(pending), [], [], remaining)
            for fd in ready:
                os.close(fd)
                del pending[fd]
        while survivors and time.monotonic() < deadline:
            survivors = [p for p in survivors if alive(p)]
            if survivors:
                time.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic())))
        survivors = [p for p in survivors if alive(p)]
        return sorted({*pending.values(), *survivors})
    finally:
        for fd in pending:
            os.close(fd)


async def until_gone(pid: int, within: float = 5.0) -> None:
    """Wait until ``pid`` has exited (a zombie counts); ``TimeoutError`` after ``within`` seconds."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # no pidfds here: the bounded fallback, in a thread
        if await asyncio.to_thread(wait_gone, [pid], within):
            raise TimeoutError(f"process {pid} still runs after {within} s") from None
        return
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def on_exit() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(fd, on_exit)
    try:
        async with asyncio.timeout(within):
            await exited
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes of session ``sid`` (Linux ``/proc``; empty without it)."""
    members: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return members
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                members.append(int(entry.name))
    return members
