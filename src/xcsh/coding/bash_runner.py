"""Shell execution shared by the RPC ``bash`` command (user bash) and the ``bash`` tool.

Process contract (both callers):

- ``bash -c`` in its own session/process group (``start_new_session=True``), stdin
  ``/dev/null``, stdout and stderr merged into one pipe so output keeps arrival order.
  Child output only ever goes to that pipe, never to our stdout.
- Abort (an :class:`~xcsh.ai.abort.AbortSignal`) or timeout sends SIGTERM to the
  whole group, then SIGKILL after a short grace, and stops waiting for the pipe
  shortly after the shell is gone (background children may hold it open).
- Output is decoded as UTF-8 with invalid bytes replaced, ANSI/OSC escape
  sequences and other control characters (except tab and newline; CR is dropped)
  removed, then streamed to ``on_output`` in sanitised chunks.
- Only the last 51 200 bytes are kept (whole lines, unless one line alone is
  larger); when more was produced the full sanitised output is spilled to a temp
  file named in the result. Line counts follow rpc-protocol §5.8: newline count + 1,
  0 for no output.

:class:`BashSession` adds the persistent shell state of agent-behaviour §10.1: every
command runs in a fresh ``bash -c`` wrapper that starts in the saved working
directory with the saved exported environment and, on exit (an EXIT trap), saves
``pwd`` and ``env -0`` to a private state directory. So ``cd`` and ``export``
persist; unexported shell variables, functions and aliases do not, and a command
that replaces the shell (``exec``) or installs its own EXIT trap does not save state.

Results: ``BashRunResult.output`` is the retained text prefixed by
``[Command cancelled]\n`` or ``[Command timed out after N seconds]\n`` when so; the
line/byte counts include that prefix. ``bash_result_wire`` gives the §5.8 dict
(``exitCode`` omitted when None; ``newCwd`` only when the command changed the
directory, so a plain ``echo`` matches S42 exactly). ``bash_execution_message`` and
``bash_execution_to_text`` build the recorded message and the model's view (§10.2-3).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import signal as signal_module
import tempfile
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from xcsh.ai.abort import AbortSignal

OUTPUT_LIMIT_BYTES = 51_200
DEFAULT_TIMEOUT_S = 300.0
KILL_GRACE_S = 0.5
_DRAIN_AFTER_EXIT_S = 1.0
_MAX_PENDING_CHARS = 8192

NON_INTERACTIVE_ENV: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "DEBIAN_FRONTEND": "noninteractive",
}

_ESCAPE_RE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC … BEL/ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS/SOS/PM/APC
    r"|\x1b[ -/]*[0-~]?"  # other ESC sequences (and a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]")


class BashLaunchError(RuntimeError):
    """The shell could not be started (missing cwd, no bash, …)."""


def sanitize_output(text: str) -> str:
    """Remove terminal escape sequences and control characters (tab and newline stay)."""
    return _CONTROL_RE.sub("", _ESCAPE_RE.sub("", text))


def count_lines(text: str) -> int:
    """Newline count + 1, or 0 for empty text (rpc-protocol §5.8)."""
    return text.count("\n") + 1 if text else 0


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


class OutputCapture:
    """Decode, sanitise, count and tail-buffer a byte stream; spill everything to a file past the limit."""

    def __init__(
        self, *, limit_bytes: int = OUTPUT_LIMIT_BYTES, on_output: Callable[[str], None] | None = None
    ):
        self._limit = limit_bytes
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._chunks: deque[tuple[str, int]] = deque()
        self._kept_bytes = 0
        self._spill: IO[str] | None = None
        self.total_bytes = 0
        self.total_newlines = 0
        self.spill_path: str | None = None

    def feed(self, data: bytes) -> None:
        text = self._pending + self._decoder.decode(data)
        # Sanitise whole lines only, so an escape sequence split across reads is still recognised.
        cut = text.rfind("\n")
        if cut < 0 and len(text) < _MAX_PENDING_CHARS:
            self._pending = text
            return
        if cut < 0:
            cut = len(text) - 1
        self._pending = text[cut + 1 :]
        self._emit(sanitize_output(text[: cut + 1]))

    def finish(self) -> None:
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        if text:
            self._emit(sanitize_output(text))
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def _emit(self, text: str) -> None:
        if not text:
            return
        size = _utf8_len(text)
        self.total_bytes += size
        self.total_newlines += text.count("\n")
        self._chunks.append((text, size))
        self._kept_bytes += size
        if self._spill is not None:
            self._spill.write(text)
        elif self.total_bytes > self._limit:
            fd, path = tempfile.mkstemp(prefix="xcsh-bash-", suffix=".log")
            self._spill = open(fd, "w", encoding="utf-8")  # noqa: SIM115 - closed in finish()
            self.spill_path = path
            for chunk, _ in self._chunks:
                self._spill.write(chunk)
        while len(self._chunks) > 1 and self._kept_bytes - self._chunks[0][1] >= self._limit:
            self._kept_bytes -= self._chunks.popleft()[1]
        if self._on_output is not None:
            self._on_output(text)

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self._limit

    def tail(self) -> str:
        """The retained text: the last ``limit`` bytes, starting at a line boundary when possible."""
        text = "".join(chunk for chunk, _ in self._chunks)
        data = text.encode("utf-8")
        if len(data) <= self._limit:
            return text
        start = len(data) - self._limit
        if data[start - 1] != 0x0A:
            newline = data.find(b"\n", start)
            if newline != -1 and newline + 1 < len(data):
                start = newline + 1
        while start < len(data) and data[start] & 0xC0 == 0x80:
            start += 1
        return data[start:].decode("utf-8")


@dataclass(slots=True, kw_only=True)
class ProcessOutcome:
    """How a shell process ended and what it printed (no notices added)."""

    capture: OutputCapture
    exit_code: int | None
    aborted: bool
    timed_out: bool


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


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
    read_fd, write_fd = os.pipe()
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
    except OSError as exc:
        os.close(read_fd)
        raise BashLaunchError(f"Could not start shell in {cwd}: {exc.strerror or exc}") from exc
    finally:
        os.close(write_fd)
    reader = asyncio.StreamReader(limit=1 << 20)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader),
        open(read_fd, "rb", buffering=0),  # noqa: SIM115 - a pipe fd; the transport owns and closes it
    )

    async def pump() -> None:
        while chunk := await reader.read(65_536):
            capture.feed(chunk)

    pump_task = asyncio.create_task(pump())
    wait_task = asyncio.create_task(proc.wait())
    abort_task = asyncio.create_task(signal.wait()) if signal is not None else None
    aborted = timed_out = False
    try:
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
        for task in (pump_task, wait_task, abort_task):
            if task is not None and not task.done():
                task.cancel()
        await asyncio.gather(
            pump_task, wait_task, *([abort_task] if abort_task else []), return_exceptions=True
        )
        transport.close()
        if proc.returncode is None:
            _kill_group(proc.pid, signal_module.SIGKILL)
        capture.finish()
    exit_code = None if (aborted or timed_out) else proc.returncode
    return ProcessOutcome(capture=capture, exit_code=exit_code, aborted=aborted, timed_out=timed_out)


async def _terminate(pid: int, wait_task: asyncio.Task[int], grace_s: float) -> None:
    _kill_group(pid, signal_module.SIGTERM)
    done, _ = await asyncio.wait({wait_task}, timeout=grace_s)
    if not done:
        _kill_group(pid, signal_module.SIGKILL)
        await asyncio.wait({wait_task}, timeout=5.0)


def shell_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment plus the non-interactive defaults and ``extra`` (which wins)."""
    env = dict(os.environ)
    env.update(NON_INTERACTIVE_ENV)
    if extra:
        env.update(extra)
    return env


def find_bash() -> str:
    """Path of the bash executable."""
    return shutil.which("bash") or "/bin/bash"


# The wrapper restores nothing itself (cwd and environment are passed to the
# process); it only saves them on exit. $1 is the state directory.
_WRAPPER = (
    "__xcsh_state=$1; shift; "
    "__xcsh_save() { local __xcsh_status=$?; "
    'command -p env -0 > "$__xcsh_state/env.tmp" 2>/dev/null '
    '&& command -p mv -f "$__xcsh_state/env.tmp" "$__xcsh_state/env" 2>/dev/null; '
    'pwd > "$__xcsh_state/cwd.tmp" 2>/dev/null '
    '&& command -p mv -f "$__xcsh_state/cwd.tmp" "$__xcsh_state/cwd" 2>/dev/null; '
    "return $__xcsh_status; }; "
    "trap __xcsh_save EXIT; "
    'eval "$(< "$__xcsh_state/command")"'
)
# Variables bash maintains itself; restoring them would be wrong or noisy.
_VOLATILE_VARS = frozenset({"_", "PWD", "SHLVL"})


@dataclass(slots=True, kw_only=True)
class BashRunResult:
    """Outcome of one user bash command (see rpc-protocol §5.8 for the field rules)."""

    output: str
    exit_code: int | None
    cancelled: bool
    timed_out: bool
    truncated: bool
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    full_output_path: str | None
    new_cwd: str | None
    cwd_changed: bool = False


class BashSession:
    """A persistent shell state (cwd + exported variables) for one agent session.

    Commands run one at a time (concurrent ``run`` calls queue). ``close()`` removes
    the private state directory; the session must not be used afterwards.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        environment: Mapping[str, str] | None = None,
        kill_grace_s: float = KILL_GRACE_S,
    ) -> None:
        self._home = Path(cwd)
        self._cwd = Path(cwd)
        self._env = shell_environment(environment)
        self._kill_grace_s = kill_grace_s
        self._state_dir: Path | None = None
        self._lock = asyncio.Lock()

    @property
    def cwd(self) -> Path:
        """The shell's current directory (changes with ``cd``)."""
        return self._cwd

    @property
    def environment(self) -> dict[str, str]:
        """A copy of the environment the next command starts with."""
        return dict(self._env)

    def close(self) -> None:
        if self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            self._state_dir = None

    async def run(
        self,
        command: str,
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        signal: AbortSignal | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> BashRunResult:
        """Run ``command``; a non-zero exit is reported, not raised. Raises BashLaunchError."""
        async with self._lock:
            return await self._run_locked(command, timeout_s=timeout_s, signal=signal, on_output=on_output)

    async def _run_locked(
        self,
        command: str,
        *,
        timeout_s: float | None,
        signal: AbortSignal | None,
        on_output: Callable[[str], None] | None,
    ) -> BashRunResult:
        if self._state_dir is None or not self._state_dir.is_dir():
            self._state_dir = Path(tempfile.mkdtemp(prefix="xcsh-shell-"))
        state = self._state_dir
        for name in ("env", "cwd"):
            (state / name).unlink(missing_ok=True)
        (state / "command").write_text(command, encoding="utf-8")
        start_dir = self._cwd if self._cwd.is_dir() else self._home
        env = dict(self._env)
        env["PWD"] = str(start_dir)
        outcome = await run_shell_process(
            [find_bash(), "-c", _WRAPPER, "bash", str(state)],
            cwd=start_dir,
            env=env,
            timeout_s=timeout_s,
            signal=signal,
            on_output=on_output,
            kill_grace_s=self._kill_grace_s,
        )
        before = self._cwd
        self._load_state(state, fallback_cwd=start_dir)
        return _session_result(
            outcome, timeout_s=timeout_s, new_cwd=self._cwd, cwd_changed=self._cwd != before
        )

    def _load_state(self, state: Path, *, fallback_cwd: Path) -> None:
        self._cwd = fallback_cwd
        with contextlib.suppress(OSError):
            saved_cwd = (state / "cwd").read_bytes().rstrip(b"\n")
            if saved_cwd:
                self._cwd = Path(os.fsdecode(saved_cwd))
        try:
            raw = (state / "env").read_bytes()
        except OSError:
            return
        env: dict[str, str] = {}
        for item in raw.split(b"\0"):
            name, sep, value = item.partition(b"=")
            if sep and name:
                env[os.fsdecode(name)] = os.fsdecode(value)
        for volatile in _VOLATILE_VARS:
            env.pop(volatile, None)
            if volatile in self._env:
                env[volatile] = self._env[volatile]
        self._env = env


def _session_result(
    outcome: ProcessOutcome, *, timeout_s: float | None, new_cwd: Path, cwd_changed: bool
) -> BashRunResult:
    capture = outcome.capture
    body = capture.tail()
    prefix = ""
    if outcome.timed_out:
        prefix = f"[Command timed out after {_format_seconds(timeout_s)} seconds]\n"
    elif outcome.aborted:
        prefix = "[Command cancelled]\n"
    output = prefix + body
    total_text_bytes = capture.total_bytes + _utf8_len(prefix)
    return BashRunResult(
        output=output,
        exit_code=outcome.exit_code,
        cancelled=outcome.aborted or outcome.timed_out,
        timed_out=outcome.timed_out,
        truncated=capture.truncated,
        total_lines=(capture.total_newlines + prefix.count("\n") + 1) if total_text_bytes else 0,
        total_bytes=total_text_bytes,
        output_lines=count_lines(output),
        output_bytes=_utf8_len(output),
        full_output_path=capture.spill_path,
        new_cwd=str(new_cwd),
        cwd_changed=cwd_changed,
    )


def _format_seconds(value: float | None) -> str:
    if value is None:
        return "0"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def bash_result_wire(result: BashRunResult) -> dict[str, Any]:
    """The ``BashResult`` wire dict of rpc-protocol §5.8 (``exitCode`` omitted when None,
    ``newCwd`` only when the command changed directory)."""
    wire: dict[str, Any] = {"output": result.output}
    if result.exit_code is not None:
        wire["exitCode"] = result.exit_code
    wire.update(
        {
            "cancelled": result.cancelled,
            "truncated": result.truncated,
            "totalBytes": result.total_bytes,
            "outputBytes": result.output_bytes,
            "totalLines": result.total_lines,
            "outputLines": result.output_lines,
        }
    )
    if result.cwd_changed and result.new_cwd is not None:
        wire["newCwd"] = result.new_cwd
    return wire


def truncation_meta(result: BashRunResult) -> dict[str, Any] | None:
    """``meta.truncation`` for a bashExecution message (agent-behaviour §10.2), None if not truncated."""
    if not result.truncated:
        return None
    start = max(1, result.total_lines - result.output_lines + 1)
    return {
        "direction": "tail",
        "truncatedBy": "bytes",
        "totalLines": result.total_lines,
        "totalBytes": result.total_bytes,
        "outputLines": result.output_lines,
        "outputBytes": result.output_bytes,
        "shownRange": {"start": start, "end": result.total_lines},
    }


def bash_execution_message(
    command: str,
    result: BashRunResult,
    *,
    timestamp_ms: int | None = None,
    exclude_from_context: bool = False,
) -> dict[str, Any]:
    """The ``bashExecution`` agent message recording a user bash run."""
    message: dict[str, Any] = {"role": "bashExecution", "command": command, "output": result.output}
    if result.exit_code is not None:
        message["exitCode"] = result.exit_code
    message["cancelled"] = result.cancelled
    message["truncated"] = result.truncated
    meta = truncation_meta(result)
    if meta is not None:
        message["meta"] = {"truncation": meta}
    message["timestamp"] = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
    if exclude_from_context:
        message["excludeFromContext"] = True
    return message


def bash_execution_to_text(message: Mapping[str, Any]) -> str:
    """The user text the model sees for a ``bashExecution`` message (agent-behaviour §10.3)."""
    output = str(message.get("output") or "")
    text = f"Ran `{message.get('command', '')}`\n"
    if output:
        body = output[:-1] if output.endswith("\n") else output
        text += f"```\n{body}\n```"
    else:
        text += "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    meta = message.get("meta")
    truncation = meta.get("truncation") if isinstance(meta, Mapping) else None
    if message.get("truncated") and isinstance(truncation, Mapping):
        shown = truncation.get("shownRange") or {}
        notice = f"[Showing lines {shown.get('start', 1)}-{shown.get('end', 0)} of {truncation.get('totalLines', 0)}"
        if truncation.get("truncatedBy") == "bytes":
            notice += f" ({_format_size(OUTPUT_LIMIT_BYTES)} limit)"
        text += f"\n\n{notice}]"
    elif message.get("truncated"):
        text += "\n\n[Output truncated]"
    return text


def _format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"
