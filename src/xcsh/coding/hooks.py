"""Extension points of the session, used by features that live in their own modules.

Retry, compaction, todos, TTSR and extensions plug into the session through these
seams instead of growing the facade.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from xcsh.agent.types import AgentEvent, AgentMessage

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession


@dataclass(slots=True)
class RunAction:
    """What to do after a run ends: continue without new messages, or prompt with messages."""

    kind: Literal["continue", "prompt"]
    messages: list[AgentMessage] = field(default_factory=list)


class PostRunHandler(Protocol):
    """Decides whether a finished run is followed by another (retry, compaction, reminders…)."""

    async def after_run(self, session: AgentSession, added: list[AgentMessage]) -> RunAction | None: ...

    def cancel(self) -> None:
        """Cancel anything pending (a retry back-off); called by abort and session switches."""


class SlashCommand(Protocol):
    """A ``/name args`` command that consumes a prompt instead of starting a run."""

    def matches(self, text: str) -> bool: ...

    async def run(self, session: AgentSession, text: str) -> None: ...


PromptContributor = Callable[["AgentSession", str], list[AgentMessage]]
PrePromptCheck = Callable[["AgentSession"], Awaitable[None]]
SwitchCheck = Callable[["AgentSession", str, str | None], Awaitable[bool]]
EventListener = Callable[[AgentEvent], None]


@dataclass(slots=True)
class SessionHooks:
    """Registered feature hooks, called in registration order."""

    post_run: list[PostRunHandler] = field(default_factory=list)
    # messages placed before the user message (eager todo prelude)
    before_user_message: list[PromptContributor] = field(default_factory=list)
    # messages placed after the user message (extension-provided)
    after_user_message: list[PromptContributor] = field(default_factory=list)
    # awaited before a prompt starts its run (compaction check)
    pre_prompt: list[PrePromptCheck] = field(default_factory=list)
    # slash commands checked before anything else (run even while streaming)
    commands: list[SlashCommand] = field(default_factory=list)
    # asked before new_session/switch_session/branch; returning True cancels (reason, target)
    before_switch: list[SwitchCheck] = field(default_factory=list)
    before_branch: list[SwitchCheck] = field(default_factory=list)
    # called once before the process exits
    on_shutdown: list[Callable[[AgentSession], None]] = field(default_factory=list)
    # notified when the session is replaced (new/switch/branch)
    on_session_change: list[Callable[[AgentSession, str], None]] = field(default_factory=list)
