"""Ending an agent process a client started: end its input, wait, kill it if it stays."""

from __future__ import annotations

import asyncio


async def close_and_wait(process: asyncio.subprocess.Process, timeout: float) -> int | None:
    """Close ``process``'s stdin and wait up to ``timeout`` seconds for it to exit, then kill
    it and wait; its exit status."""
    if process.stdin is not None and not process.stdin.is_closing():
        process.stdin.close()
    try:
        async with asyncio.timeout(timeout):
            await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()
    return process.returncode
