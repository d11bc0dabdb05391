"""The python tool's kernel process: a start interrupted by a cancellation leaves no kernel running.

A real ipykernel is started (skipped without the ``tools`` extra). The moment its process group
is handed to the watchdog (:func:`xcsh.ai.watchdog.wait_until`) is the event the test waits for:
the kernel runs then, and the start still waits for it to answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from xcsh.ai import watchdog
from xcsh.coding.tools.kernel import PythonKernel
from xcsh.testing.processes import alive, wait_gone

START_WITHIN_S = 60.0


async def test_a_cancellation_while_the_kernel_starts_ends_the_kernel_and_a_later_call_starts_anew(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ipykernel")
    kernel = PythonKernel(tmp_path)
    before = watchdog.guarded()
    first = asyncio.create_task(kernel.execute("1", 30, None))
    started = await asyncio.to_thread(
        watchdog.wait_until, lambda groups: bool(groups - before), START_WITHIN_S
    )
    assert started, "the kernel's process group was never guarded"
    (pid,) = watchdog.guarded() - before
    try:
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert not kernel.started
        assert await asyncio.to_thread(wait_gone, [pid], 10) == []  # not left running, unowned
        assert pid not in watchdog.guarded()
        outcome = await kernel.execute("print(6 * 7)", 30, None)
        assert outcome.text == "42\n" and outcome.error is None
    finally:
        kernel.kill()
        if alive(pid):
            import os
            import signal

            os.killpg(pid, signal.SIGKILL)


async def test_killing_a_started_kernel_closes_its_descriptors_at_once(tmp_path: Path) -> None:
    """The manager's and client's zmq contexts end with the kernel, not when the garbage collector
    finds them: a suite (or a session restarting kernels) would otherwise run out of descriptors."""
    pytest.importorskip("ipykernel")
    import gc
    import os

    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        pytest.skip("counts descriptors through /proc")
    was_enabled = gc.isenabled()
    gc.disable()  # what kill() leaves open must not be closed by a collection meanwhile
    try:
        warm = PythonKernel(tmp_path)  # jupyter-client's first use opens what it keeps for good
        await warm.execute("1", 30, None)
        warm.kill()
        before = len(os.listdir(fd_dir))
        kernel = PythonKernel(tmp_path)
        outcome = await kernel.execute("print(6 * 7)", 30, None)
        assert outcome.text == "42\n"
        kernel.kill()
        assert len(os.listdir(fd_dir)) <= before
    finally:
        if was_enabled:
            gc.enable()


async def test_a_started_kernel_runs_no_heartbeat_thread(tmp_path: Path) -> None:
    """The manager tells whether the kernel lives; a heartbeat thread stopped while it was still
    starting (a cancelled start) spun creating zmq sockets until its context had none left."""
    pytest.importorskip("ipykernel")
    import threading

    from jupyter_client.channels import HBChannel

    kernel = PythonKernel(tmp_path)
    try:
        outcome = await kernel.execute("print(1)", 30, None)
        assert outcome.text == "1\n"
        assert not [t for t in threading.enumerate() if isinstance(t, HBChannel)]
    finally:
        kernel.kill()


async def test_a_cell_ignoring_the_interrupt_ends_with_its_kernel_when_its_call_is_cancelled(
    tmp_path: Path,
) -> None:
    """What abandoning a python call after an abort does: the cell must not run on unseen (it could
    write files after the host was told the call was aborted); the next call gets a new kernel."""
    pytest.importorskip("ipykernel")
    kernel = PythonKernel(tmp_path)
    before = watchdog.guarded()
    ready = asyncio.Event()
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(3600)\n"
    )
    cell = asyncio.create_task(kernel.execute(code, 600, None, lambda text: ready.set()))
    pids: set[int] = set()
    try:
        async with asyncio.timeout(START_WITHIN_S):
            await ready.wait()
        pids = watchdog.guarded() - before
        assert len(pids) == 1
        cell.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cell
        assert await asyncio.to_thread(wait_gone, list(pids), 10) == []
        async with asyncio.timeout(START_WITHIN_S):
            outcome = await kernel.execute("print(6 * 7)", 30, None)
        assert outcome.text == "42\n" and outcome.error is None
    finally:
        kernel.kill()
        for pid in pids:
            if alive(pid):
                import os
                import signal

                os.killpg(pid, signal.SIGKILL)
