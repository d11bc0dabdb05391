"""The session's configuration (how it was started) and its snapshot (what ``get_state`` reports).

Plain values of the session core (:mod:`xcsh.coding.session`); modes shape the snapshot
into their wire format.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from xcsh.agent.tool import AgentTool

if TYPE_CHECKING:
    from xcsh.ai.types import Model, ThinkingLevel
    from xcsh.coding.project_context import ProjectContext


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
