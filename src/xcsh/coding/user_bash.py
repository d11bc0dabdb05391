"""User bash: the RPC ``bash`` command and ``abort_bash`` (agent-behaviour §10).

Each agent session has one persistent shell state (cwd and exported variables carry
over between commands). A result is recorded as a ``bashExecution`` message — in the
live context and the session file at once when idle, held back until the next prompt
while a run is active — so the model sees it with its next call. ``abort_bash`` kills
the running command's whole process group at once; the ``bash`` response then says
``cancelled: true``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from xcsh.ai.abort import AbortController

if TYPE_CHECKING:
    from xcsh.agent.types import BashExecutionMessage
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession


class UserBash:
    """Runs user commands for one session; at most one at a time (later ones queue)."""

    def __init__(
        self, cwd: Path, *, environment: dict[str, str] | None = None, timeout_s: float | None = None
    ):
        """``timeout_s`` None: the shell's default (:data:`xcsh.coding.bash.session.DEFAULT_TIMEOUT_S`)."""
        from xcsh.coding.bash.session import DEFAULT_TIMEOUT_S, BashSession  # the shell: loaded on first use

        self._shell = BashSession(cwd, environment=environment)
        self._timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        self._running: set[AbortController] = set()

    @property
    def is_running(self) -> bool:
        return bool(self._running)

    async def run(self, command: str) -> tuple[dict[str, Any], BashExecutionMessage]:
        """Run ``command``; returns (BashResult wire dict, bashExecution message).

        A non-zero exit status is a normal result. Raises
        :class:`~xcsh.coding.bash.process.BashLaunchError` when the shell cannot start.
        """
        from xcsh.coding.bash.wire import bash_execution_message, bash_result_wire

        controller = AbortController()
        self._running.add(controller)
        try:
            result = await self._shell.run(command, timeout_s=self._timeout_s, signal=controller.signal)
        finally:
            self._running.discard(controller)
        return bash_result_wire(result), bash_execution_message(command, result)

    def abort(self) -> None:
        """Kill the running (and any queued) command; a no-op when idle."""
        for controller in list(self._running):
            controller.abort("abort_bash")

    def close(self) -> None:
        self.abort()
        self._shell.close()


class UserBashFeature:
    """The session's user-bash runner, created (starting in the session cwd) on first use."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self._runner: UserBash | None = None

    @property
    def runner(self) -> UserBash:
        if self._runner is None:
            self._runner = UserBash(self._session.cwd, environment=_environment(self._session))
        return self._runner

    def abort(self) -> None:
        if self._runner is not None:
            self._runner.abort()

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()


def _environment(session: AgentSession) -> dict[str, str] | None:
    configured = session.settings.get("bash.environment")
    if not isinstance(configured, dict):
        return None
    return {str(k): str(v) for k, v in configured.items() if v is not None}


class UserBashConfig(msgspec.Struct, frozen=True):
    """User bash has no start-up options (its environment comes from settings)."""


def configure(options: StartupOptions) -> UserBashConfig:
    return UserBashConfig()


def install(session: AgentSession, config: UserBashConfig) -> UserBashFeature:
    feature = UserBashFeature(session)
    session.features.put(feature)
    session.hooks.on_shutdown.append(feature.close)
    return feature


def _feature(session: AgentSession) -> UserBashFeature:
    feature = session.features.get(UserBashFeature)
    if feature is None:
        raise RuntimeError("user bash is not available in this session")
    return feature


async def run_user_bash(session: AgentSession, command: str) -> dict[str, Any]:
    """The ``bash`` command: run, record the ``bashExecution`` message, return the BashResult."""
    wire, message = await _feature(session).runner.run(command)
    session.record_bash_message(message)
    return wire


def abort_user_bash(session: AgentSession) -> None:
    """The ``abort_bash`` command."""
    _feature(session).abort()
