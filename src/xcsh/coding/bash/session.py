"""Persistent shell state for user bash (agent-behaviour §10.1).

Every command runs in a fresh ``bash -c`` wrapper that starts in the saved working
directory with the saved exported environment and, on exit (an EXIT trap), saves
``pwd`` and ``env -0`` to a private state directory. So ``cd`` and ``export``
persist; unexported shell variables, functions and aliases do not, and a command
that replaces the shell (``exec``) or installs its own EXIT trap does not save state.

``BashRunResult.output`` is the retained text prefixed by ``[Command cancelled]\n``
or ``[Command timed out after N seconds]\n`` when so; the line/byte counts include
that prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from xcsh.ai.abort import AbortSignal
from xcsh.coding.bash.capture import count_lines, utf8_len
from xcsh.coding.bash.process import (
    KILL_GRACE_S,
    ProcessOutcome,
    find_bash,
    run_shell_process,
    shell_environment,
)

DEFAULT_TIMEOUT_S = 300.0

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
            import shutil  # only when a shell ran

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
            import tempfile  # on first use only

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
    total_text_bytes = capture.total_bytes + utf8_len(prefix)
    return BashRunResult(
        output=output,
        exit_code=outcome.exit_code,
        cancelled=outcome.aborted or outcome.timed_out,
        timed_out=outcome.timed_out,
        truncated=capture.truncated,
        total_lines=(capture.total_newlines + prefix.count("\n") + 1) if total_text_bytes else 0,
        total_bytes=total_text_bytes,
        output_lines=count_lines(output),
        output_bytes=utf8_len(output),
        full_output_path=capture.spill_path,
        new_cwd=str(new_cwd),
        cwd_changed=cwd_changed,
    )


def _format_seconds(value: float | None) -> str:
    if value is None:
        return "0"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
