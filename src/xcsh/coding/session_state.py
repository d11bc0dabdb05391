"""The session's configuration (how it was started) and its snapshot (what ``get_state`` reports).

Plain values of the session core (:mod:`xcsh.coding.session`), and :func:`take_snapshot`,
which reads them off the agent and the store; modes shape the snapshot into their wire format.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from xcsh.agent.tool import AgentTool

if TYPE_CHECKING:
    from xcsh.agent.agent import Agent
    from xcsh.ai.types import Model, ThinkingLevel
    from xcsh.coding.project_context import ProjectContext
    from xcsh.coding.sessions.store import SessionStore


class SessionConfig(msgspec.Struct, kw_only=True):
    """How the session was started (CLI options that stay relevant while it runs)."""

    cwd: Path
    agent_dir: Path
    custom_prompt: str | None = None
    append_prompt: str | None = None
    scoped_models: list[tuple[Model, ThinkingLevel | None]] = msgspec.field(default_factory=list)
    session_dir: Path | None = None
    persist: bool = True
    project: ProjectContext | None = None
    """Discovered context files, skills, rules and commands (None: none were looked for)."""
    locale: str | None = None
    """The initial answer language (``$XCSH_LOCALE``, ``$LANG``…); ``set_locale`` changes it."""


class SessionSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """The session's observable state at one moment (modes shape it into their wire format)."""

    model: Model
    thinking_level: ThinkingLevel | None
    is_streaming: bool
    is_compacting: bool
    steering_mode: str
    follow_up_mode: str
    interrupt_mode: str
    session_file: str | None
    session_id: str
    session_name: str | None
    message_count: int
    queued_count: int
    system_prompt: str
    tools: tuple[AgentTool, ...]
    auto_compaction_enabled: bool


def take_snapshot(
    agent: Agent,
    store: SessionStore,
    *,
    is_streaming: bool,
    is_compacting: bool,
    queued_count: int,
    auto_compaction_enabled: bool,
) -> SessionSnapshot:
    """The snapshot of ``agent`` and ``store`` now, with what only the session knows passed in."""
    return SessionSnapshot(
        model=agent.model,
        thinking_level=agent.thinking_level,
        is_streaming=is_streaming,
        is_compacting=is_compacting,
        steering_mode=agent.steering.mode,
        follow_up_mode=agent.follow_ups.mode,
        interrupt_mode=agent.interrupt_mode,
        session_file=str(store.path) if store.path is not None else None,
        session_id=store.session_id,
        session_name=store.title or None,
        message_count=len(agent.messages),
        queued_count=queued_count,
        system_prompt=agent.system_prompt,
        tools=tuple(agent.tools),
        auto_compaction_enabled=auto_compaction_enabled,
    )
