"""Waiting on OS processes in tests, event-driven and bounded. Import as ``coding.process_helpers``."""

from __future__ import annotations

import asyncio
import os


async def wait_until_gone(pid: int) -> None:
    """Wait (via a pidfd, at most 5 s) until ``pid`` has exited."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    loop.add_reader(fd, lambda: exited.done() or exited.set_result(None))
    try:
        async with asyncio.timeout(5):
            await exited
    finally:
        loop.remove_reader(fd)
        os.close(fd)
