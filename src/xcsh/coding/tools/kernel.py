"""A persistent IPython kernel for the ``python`` tool (jupyter-client + ipykernel, the ``tools`` extra).

Contract: :class:`PythonKernel` starts an ipykernel (this interpreter, the session
cwd) on first use and keeps it for the session, so variables and imports persist
between calls. :meth:`execute` runs one cell and collects what the kernel
publishes for it — stream text, ``execute_result`` / ``display_data`` (text/plain,
image/png, application/json) and errors (traceback without colour codes) — until
the kernel is idle. A timeout or an abort interrupts the kernel (KeyboardInterrupt
in the cell; the kernel and its state survive). A cell whose ``execute`` is cancelled (the
call abandoned after an abort, the run cancelled) is ended with its kernel (:meth:`kill`):
the next call starts a new one. :meth:`restart` restarts it;
:meth:`kill` ends the process at once and is safe to call from synchronous shutdown
code; it ends the kernel's whole process group (what its cells started too) and closes the
zmq contexts of the kernel's manager and client (their sockets and descriptors); a start
that fails or is cancelled ends the kernel it started the same way. The
kernel leads its own process group (jupyter-client starts it in a new session), which the
watchdog (:mod:`xcsh.ai.watchdog`) guards: if this process dies in any way, SIGKILL
included, the group is ended (an ipykernel alone only exits itself, after polling for its
parent). The kernel gets the tool environment: provider credentials are withheld as from
``bash``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal as signal_module
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcsh.ai import watchdog
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.optional import require

logger = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0
OutputListener = Callable[[str], None]
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(slots=True)
class CellOutcome:
    """What one cell produced."""

    text: str = ""
    images: list[dict[str, str]] = field(default_factory=list)
    json: list[Any] = field(default_factory=list)
    error: str | None = None
    timed_out: bool = False
    aborted: bool = False
    duration_ms: int = 0


class PythonKernel:
    """One lazily started kernel; ``execute`` calls are serialised."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._manager: Any = None
        self._client: Any = None
        self._pid: int | None = None  # the kernel process, leader of its own process group
        self._lock = asyncio.Lock()

    @property
    def started(self) -> bool:
        return self._manager is not None

    async def _start(self) -> None:
        require("ipykernel", "ipykernel", "python")
        manager_module = require("jupyter_client.manager", "jupyter-client", "python")
        manager = manager_module.AsyncKernelManager(kernel_name="python3")
        # this interpreter, whatever kernelspecs are installed elsewhere
        manager.kernel_cmd = []
        manager.kernel_spec.argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        await manager.start_kernel(cwd=str(self.cwd), env=_kernel_env())
        pid = _guard(manager)
        client = None
        try:
            client = manager.client()
            # no heartbeat thread: the manager tells whether the kernel lives (jupyter-client asks
            # it for a client it made), and stopping the channels while that thread was still
            # starting (a cancelled start) left it spinning, one zmq socket after another, until
            # the context had none left ("Too many open files" from the channel thread)
            client.start_channels(hb=False)
            await client.wait_for_ready(timeout=START_TIMEOUT_S)
        except BaseException as exc:  # a cancellation too: the kernel must not run on unowned
            self._manager, self._client, self._pid = manager, client, pid
            self.kill()
            if isinstance(exc, RuntimeError):
                raise ToolError(f"The Python kernel did not start: {exc}") from exc
            raise
        self._manager, self._client, self._pid = manager, client, pid

    async def restart(self) -> None:
        async with self._lock:
            if self._manager is None:
                return
            self._client.stop_channels()
            with contextlib.suppress(Exception):
                self._client.context.destroy(linger=0)  # the old client's sockets, now
            await self._manager.restart_kernel(now=True)
            _end_group(self._pid)  # the old kernel's children
            self._pid = _guard(self._manager)
            self._client = self._manager.client()
            self._client.start_channels(hb=False)
            await self._client.wait_for_ready(timeout=START_TIMEOUT_S)

    async def execute(
        self, code: str, timeout: float, signal: AbortSignal | None, on_output: OutputListener | None = None
    ) -> CellOutcome:
        """Run ``code``; returns its outputs (an exception in the cell is ``error``, not raised).

        ``on_output`` gets the cell's text so far whenever it grows.
        """
        async with self._lock:
            if self._manager is None:
                await self._start()
            return await self._execute(code, timeout, signal, on_output)

    async def _execute(
        self, code: str, timeout: float, signal: AbortSignal | None, on_output: OutputListener | None
    ) -> CellOutcome:
        client = self._client
        outcome = CellOutcome()
        started = time.monotonic()
        parts: list[str] = []
        interrupted = asyncio.Event()

        def interrupt() -> None:
            interrupted.set()

        remove = signal.add_callback(interrupt) if signal is not None else None
        msg_id = client.execute(code, store_history=True, allow_stdin=False)
        deadline = started + timeout
        interrupt_sent = False
        try:
            while True:
                if (interrupted.is_set() or time.monotonic() > deadline) and not interrupt_sent:
                    outcome.aborted = interrupted.is_set()
                    outcome.timed_out = not outcome.aborted
                    await self._manager.interrupt_kernel()
                    interrupt_sent = True
                    deadline = time.monotonic() + 10
                elif interrupt_sent and time.monotonic() > deadline:
                    raise ToolError("The Python kernel did not respond to an interrupt; use reset: true.")
                try:
                    message = await client.get_iopub_msg(timeout=0.1)
                except Exception:  # queue.Empty: nothing published yet
                    continue
                if message.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = message["msg_type"]
                content = message["content"]
                if kind == "stream":
                    parts.append(content.get("text", ""))
                elif kind in ("execute_result", "display_data"):
                    self._rich(content.get("data", {}), parts, outcome)
                if kind in ("stream", "execute_result", "display_data") and on_output is not None:
                    on_output("".join(parts))
                elif kind == "error":
                    traceback = (
                        "\n".join(content.get("traceback", []))
                        or f"{content.get('ename')}: {content.get('evalue')}"
                    )
                    outcome.error = _ANSI_RE.sub("", traceback)
                elif kind == "status" and content.get("execution_state") == "idle":
                    break
        except asyncio.CancelledError:
            # the call was abandoned (a cell still running 3 s after an abort: it ignores the
            # interrupt) or its run cancelled: the cell must not go on changing things unseen
            self.kill()
            raise
        finally:
            if remove is not None:
                remove()
        with contextlib.suppress(Exception):
            await client.get_shell_msg(timeout=1)
        outcome.text = "".join(parts)
        outcome.duration_ms = int((time.monotonic() - started) * 1000)
        return outcome

    @staticmethod
    def _rich(data: dict[str, Any], parts: list[str], outcome: CellOutcome) -> None:
        if "image/png" in data:
            outcome.images.append(
                {"type": "image", "data": str(data["image/png"]).replace("\n", ""), "mimeType": "image/png"}
            )
        if "application/json" in data:
            outcome.json.append(data["application/json"])
        text = data.get("text/plain")
        if text is not None and "image/png" not in data:
            parts.append(str(text) + "\n")

    def kill(self) -> None:
        """End the kernel and its process group now (synchronous; for session shutdown)."""
        manager, client, pid = self._manager, self._client, self._pid
        self._manager = self._client = self._pid = None
        if manager is None:
            return
        if client is not None:
            with contextlib.suppress(Exception):
                client.stop_channels()
        _end_group(pid, release=False)
        provisioner = getattr(manager, "provisioner", None)
        process = getattr(provisioner, "process", None)
        if process is not None:
            with contextlib.suppress(Exception):
                process.kill()
                process.wait(timeout=5)
        if pid is not None:
            watchdog.release(pid)  # once reaped: an empty group is forgotten at once
        with contextlib.suppress(Exception):
            manager.cleanup_connection_file()
        # the zmq contexts (each holds sockets, an epoll and its threads' wake-up descriptors)
        # end now, not when the garbage collector finds the manager and client: a session that
        # kills or restarts kernels, or a test suite, would otherwise hold their descriptors
        for owner in (client, manager):
            context = getattr(owner, "context", None)
            if context is not None:
                with contextlib.suppress(Exception):
                    context.destroy(linger=0)


def _guard(manager: Any) -> int | None:
    """Hand the started kernel's process group to the watchdog; the kernel's pid (None if unknown)."""
    process = getattr(getattr(manager, "provisioner", None), "process", None)
    pid = getattr(process, "pid", None)
    if not isinstance(pid, int):
        logger.warning("the python kernel's process is unknown: it is not guarded by the watchdog")
        return None
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:  # jupyter-client made it a group leader (POSIX)
            watchdog.guard(pid)
            return pid
    return None


def _end_group(pid: int | None, *, release: bool = True) -> None:
    """SIGKILL the kernel's process group (the kernel and what its cells started), then release it."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal_module.SIGKILL)
    if release:
        watchdog.release(pid)


def _kernel_env() -> dict[str, str]:
    """The tool environment (no provider credentials, see ``xcsh.coding.secrets``) for the kernel."""
    from xcsh.coding.secrets import tool_environment

    env = tool_environment()
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    env.pop("PYTHONSTARTUP", None)
    return env
