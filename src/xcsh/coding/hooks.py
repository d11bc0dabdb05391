"""The seams between the session core and its features.

A feature (retry, compaction, todos, TTSR, extensions, user bash, host tools) is
installed by :mod:`xcsh.coding.features`; it registers callbacks here and keeps its
per-session state in :class:`FeatureState`. Callbacks receive no session argument:
a feature holds the session it was installed on. This module imports nothing of the
session, so features and the core never form an import cycle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import msgspec

if TYPE_CHECKING:
    from xcsh.agent.tool_calls import AfterToolCall, BeforeToolCall
    from xcsh.agent.types import AgentMessage, AgentToolResult
    from xcsh.ai.types import ToolCall

    # Typing only: a Protocol class costs ~0.13 M instructions to create, and nothing checks it
    # at run time (docs/performance.md, "Seventh session: start-up").
    class AfterRunHook(Protocol):
        """Decides whether a finished run is followed by another (retry, compaction, reminders…)."""

        async def after_run(self, added: list[AgentMessage]) -> RunAction | None: ...

        def cancel(self) -> None:
            """Cancel anything pending (a retry back-off); called by abort and session switches."""

    class SlashCommand(Protocol):
        """A ``/name args`` command that consumes a prompt instead of starting a run."""

        def matches(self, text: str) -> bool: ...

        async def run(self, text: str) -> None: ...


# The one list that orders after-run hooks: the first hook returning an action wins.
# Retry decides before compaction (agent-behaviour §7.2); TTSR recovery comes next; the
# todo reminder only speaks when nobody else continued the chain.
AFTER_RUN_ORDER: tuple[str, ...] = ("retry", "compaction", "ttsr", "todo-reminders")


class RunAction(msgspec.Struct):
    """What to do after a run ends: continue without new messages, or prompt with messages."""

    kind: Literal["continue", "prompt"]
    messages: list[AgentMessage] = msgspec.field(default_factory=list)


# (prompt text) → messages to place before/after the user message
PromptContributor = Callable[[str], "list[AgentMessage]"]
PrePromptCheck = Callable[[], Awaitable[None]]
# (reason, target) → True cancels the switch
SwitchCheck = Callable[[str, str | None], Awaitable[bool]]

T = TypeVar("T")


class FeatureState:
    """Per-session feature objects, one per type: the one way to find a feature's state.

    ``session.features.get(Compactor)`` returns the session's compactor (None when the
    feature is not installed).
    """

    def __init__(self) -> None:
        self._items: dict[type, object] = {}

    def put(self, item: object) -> None:
        """Store ``item`` under its type, replacing an earlier one."""
        self._items[type(item)] = item

    def get(self, kind: type[T]) -> T | None:
        item = self._items.get(kind)
        return item if isinstance(item, kind) else None


class SessionHooks(msgspec.Struct):
    """Registered feature callbacks; lists are called in registration order."""

    # messages placed before the user message (eager todo prelude)
    before_user_message: list[PromptContributor] = msgspec.field(default_factory=list)
    # messages placed after the user message (extension-provided)
    after_user_message: list[PromptContributor] = msgspec.field(default_factory=list)
    # slash commands checked before anything else (run even while streaming)
    commands: list[SlashCommand] = msgspec.field(default_factory=list)
    # asked before new_session/switch_session/branch; returning True cancels (reason, target)
    before_switch: list[SwitchCheck] = msgspec.field(default_factory=list)
    before_branch: list[SwitchCheck] = msgspec.field(default_factory=list)
    # called once before the process exits
    on_shutdown: list[Callable[[], None]] = msgspec.field(default_factory=list)
    # notified when the session's store is replaced (reason: new/resume/branch)
    on_session_change: list[Callable[[str], None]] = msgspec.field(default_factory=list)
    # tool-call interception, chained in registration order (first block / last replacement wins)
    before_tool_call: list[BeforeToolCall] = msgspec.field(default_factory=list)
    after_tool_call: list[AfterToolCall] = msgspec.field(default_factory=list)
    _after_run: dict[str, AfterRunHook] = msgspec.field(default_factory=dict)
    _pre_prompt: dict[str, PrePromptCheck] = msgspec.field(default_factory=dict)

    def set_after_run(self, name: str, hook: AfterRunHook) -> AfterRunHook | None:
        """Register (or replace) the after-run hook ``name``; returns the one it replaced.

        ``name`` must be listed in :data:`AFTER_RUN_ORDER`, which alone decides the order.
        """
        if name not in AFTER_RUN_ORDER:
            raise ValueError(f"after-run hook {name!r} is not listed in AFTER_RUN_ORDER")
        old = self._after_run.get(name)
        self._after_run[name] = hook
        return old

    def after_run_hooks(self) -> list[AfterRunHook]:
        """The registered after-run hooks in :data:`AFTER_RUN_ORDER`."""
        return [self._after_run[name] for name in AFTER_RUN_ORDER if name in self._after_run]

    def set_pre_prompt(self, name: str, check: PrePromptCheck) -> None:
        """Register (or replace, keeping its place) the check ``name`` awaited before each prompt."""
        self._pre_prompt[name] = check

    def pre_prompt_checks(self) -> list[PrePromptCheck]:
        return list(self._pre_prompt.values())

    async def check_tool_call(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        """The tool-call gate: the first ``before_tool_call`` hook that blocks wins.

        Returns the text the model reads instead of a result, or None when the call may run.
        """
        for hook in list(self.before_tool_call):
            blocked = await hook(call, args)
            if blocked:
                return blocked
        return None

    async def replace_tool_result(
        self, call: ToolCall, result: AgentToolResult, is_error: bool
    ) -> AgentToolResult | None:
        """Chain the ``after_tool_call`` hooks (each sees the latest result); None when none replaced it."""
        replaced: AgentToolResult | None = None
        for hook in list(self.after_tool_call):
            ours = await hook(call, replaced if replaced is not None else result, is_error)
            if ours is not None:
                replaced = ours
        return replaced
