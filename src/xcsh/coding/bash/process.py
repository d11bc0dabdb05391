"""Running one shell process: its own process group, merged output, abort and timeout kill.

- ``argv`` runs in its own session/process group (``start_new_session=True``), stdin
  ``/dev/null``, stdout and stderr merged into one pipe so output keeps arrival order.
  Child output only ever goes to that pipe, never to our stdout.
- Abort (an :class:`~xcsh.ai.abort.AbortSignal`) or timeout sends SIGTERM to the
  whole group, then SIGKILL after a short grace, and stops waiting for the pipe
  shortly after the shell is gone (background children may hold it open). What is left
  of the command's session in other groups (GNU ``timeout``) gets the same, afterwards.
- Output goes through :class:`~xcsh.coding.bash.capture.OutputCapture`.
- Every running group is registered so :func:`terminate_all_groups` can end them all when
  the process itself is told to stop (SIGTERM/SIGHUP/SIGINT, see ``xcsh.modes.signals``).
- Every group is also guarded by the watchdog (:mod:`xcsh.ai.watchdog`) from its start until
  it is empty — past the shell's exit while background children (``server &``) remain — so
  it ends when this process dies in any way, SIGKILL included.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal as signal_module
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from xcsh.ai import watchdog
from xcsh.ai.abort import AbortSignal
from xcsh.coding.bash.capture import OutputCapture
from xcsh.coding.secrets import tool_environment

KILL_GRACE_S = 0.5
_DRAIN_AFTER_EXIT_S = 1.0

NON_INTERACTIVE_ENV: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "DEBIAN_FRONTEND": "noninteractive",
}


class BashLaunchError(RuntimeError):
    """The shell could not be started (missing cwd, no bash, …)."""


class ProcessOutcome(msgspec.Struct, kw_only=True):
    """How a shell process ended and what it printed (no notices added)."""

    capture: OutputCapture
    exit_code: int | None
    aborted: bool
    timed_out: bool


# Process groups of the shells running now (a group's id is its leader's pid).
_live_groups: set[int] = set()


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def live_groups() -> frozenset[int]:
    """Process groups of the shell commands running now."""
    return frozenset(_live_groups)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_all_groups(grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM every running shell's process group, then SIGKILL what is left after ``grace_s``.

    Synchronous (it may block for ``grace_s``): meant for the moment the process is told to
    stop. Groups are forgotten afterwards.
    """
    import time

    groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid, signal_module.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(_group_alive(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pgid in groups:
        _kill_group(pgid, signal_module.SIGKILL)
    _live_groups.difference_update(groups)


async def run_shell_process(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None,
    signal: AbortSignal | None = None,
    on_output: Callable[[str], None] | None = None,
    kill_grace_s: float = KILL_GRACE_S,
) -> ProcessOutcome:
    """Run ``argv`` in a new process group with merged, sanitised, tail-limited output.

    Raises :class:`BashLaunchError` when the process cannot be started.
    """
    capture = OutputCapture(on_output=on_output)
    if signal is not None and signal.aborted:
        capture.finish()
        return ProcessOutcome(capture=capture, exit_code=None, aborted=True, timed_out=False)
    loop = asyncio.get_running_loop()
    try:
        read_fd, write_fd = os.pipe()
    except OSError as exc:
        raise BashLaunchError(f"Could not start shell in {cwd}: {exc.strerror or exc}") from exc
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except BaseException as exc:  # a cancellation too: asyncio has ended the process then
        os.close(read_fd)
        if isinstance(exc, OSError):
            raise BashLaunchError(f"Could not start shell in {cwd}: {exc.strerror or exc}") from exc
        raise
    finally:
        os.close(write_fd)
    # From here on the group exists: whatever happens (an error, a cancellation, a second
    # cancellation during the clean-up), the inner `finally` below closes the pipe, kills a
    # still-running group and unregisters it; it never awaits.
    _live_groups.add(proc.pid)
    pipe = open(read_fd, "rb", buffering=0)  # noqa: SIM115 - the transport (or the finally) closes it
    transport: asyncio.ReadTransport | None = None
    tasks: list[asyncio.Task[Any]] = []
    aborted = timed_out = False
    try:
        watchdog.guard(proc.pid)
        reader = asyncio.StreamReader(limit=1 << 20)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)

        async def pump() -> None:
            while chunk := await reader.read(65_536):
                capture.feed(chunk)

        pump_task = asyncio.create_task(pump())
        wait_task = asyncio.create_task(proc.wait())
        abort_task = asyncio.create_task(signal.wait()) if signal is not None else None
        tasks = [pump_task, wait_task, *([abort_task] if abort_task else [])]
        watched: set[asyncio.Task[Any]] = {wait_task} | ({abort_task} if abort_task else set())
        done, _ = await asyncio.wait(watched, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if wait_task not in done:
            aborted = abort_task is not None and abort_task in done
            timed_out = not aborted
            await _terminate(proc.pid, wait_task, kill_grace_s)
        drain = kill_grace_s if (aborted or timed_out) else _DRAIN_AFTER_EXIT_S
        await asyncio.wait({pump_task}, timeout=drain)
        if not pump_task.done() and (aborted or timed_out):
            _kill_group(proc.pid, signal_module.SIGKILL)
            await asyncio.wait({pump_task}, timeout=kill_grace_s)
    finally:
        try:
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            if transport is not None:
                transport.close()
            else:
                pipe.close()
            if proc.returncode is None:
                _kill_group(proc.pid, signal_module.SIGKILL)
            _live_groups.discard(proc.pid)
            watchdog.release(proc.pid)  # a group still holding processes is forgotten once empty
            capture.finish()
    exit_code = None if (aborted or timed_out) else proc.returncode
    return ProcessOutcome(capture=capture, exit_code=exit_code, aborted=aborted, timed_out=timed_out)


async def _terminate(pid: int, wait_task: asyncio.Task[int], grace_s: float) -> None:
    _kill_group(pid, signal_module.SIGTERM)
    done, _ = await asyncio.wait({wait_task}, timeout=grace_s)
    if not done:
        _kill_group(pid, signal_module.SIGKILL)
        await asyncio.wait({wait_task}, timeout=5.0)
    await _end_rest_of_session(pid, grace_s)


async def _end_rest_of_session(sid: int, grace_s: float) -> None:
    """SIGTERM what is left of the command's session once its group is gone, SIGKILL after ``grace_s``.

    That is a process that moved to another group of the session — GNU ``timeout`` does,
    with its command. One ``pkill`` when nothing is left; skipped where ``pkill`` is missing.
    """
    pkill = shutil.which("pkill")
    if pkill is None:
        return
    if await _run_quietly(pkill, "-TERM", "-s", str(sid)) != 0:  # 1: no process matched
        return
    await asyncio.sleep(grace_s)  # their grace, as the group had
    await _run_quietly(pkill, "-KILL", "-s", str(sid))


async def _run_quietly(*argv: str) -> int | None:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            env=tool_environment(),
        )
    except OSError:
        return None
    try:
        async with asyncio.timeout(5.0):
            return await proc.wait()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None


def shell_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment without provider credentials (:func:`xcsh.coding.secrets.tool_environment`),
    plus the non-interactive defaults and ``extra`` (which wins)."""
    env = tool_environment()
    env.update(NON_INTERACTIVE_ENV)
    if extra:
        env.update(extra)
    return env


def find_bash() -> str:
    """Path of the bash executable."""
    return shutil.which("bash") or "/bin/bash"
