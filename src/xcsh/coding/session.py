"""AgentSession: the session core. It owns the agent, the session store, the tools and the run chain.

Its fields are private. Modes and features change it only through the named
operations below (append a message, reload the context, adopt a store, set the
active tools, queue a hidden next turn, set or cycle the model, set queue modes …),
so rules such as "every message is persisted exactly once" hold in one place.

The session keeps the agent, the store and the event fan-out (every event reaches
subscribers after anything it reports has been persisted); the rest is done by
collaborators it creates and owns: :class:`~xcsh.coding.session_context.LiveContext`
(the live context and its persistence), :class:`~xcsh.coding.session_runs.RunChain`
(prompts and the run chain), :class:`~xcsh.coding.session_models.ModelControl` (model and
thinking level), :class:`~xcsh.coding.session_queues.MessageQueues` (queued messages and
their delivery modes), :class:`~xcsh.coding.session_switching.SessionSwitcher` (new, resume,
branch) and :class:`~xcsh.coding.session_tools.ToolSet` (tools and system prompt).
Features plug in through :class:`~xcsh.coding.hooks.SessionHooks` and
:class:`~xcsh.coding.hooks.FeatureState` (see :mod:`xcsh.coding.features`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.agent.agent import Agent
from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortSignal
from xcsh.coding import auto_settings
from xcsh.coding.auto_settings import auto_compaction_enabled
from xcsh.coding.errors import CommandError
from xcsh.coding.hooks import FeatureState, SessionHooks
from xcsh.coding.messages import convert_to_llm
from xcsh.coding.model_choice import ModelCycle
from xcsh.coding.models import ModelRegistry
from xcsh.coding.recovery import recovery_message
from xcsh.coding.session_context import LiveContext
from xcsh.coding.session_models import ModelControl
from xcsh.coding.session_queues import MessageQueues
from xcsh.coding.session_runs import RunChain
from xcsh.coding.session_state import SessionConfig, SessionSnapshot, take_snapshot
from xcsh.coding.session_switching import SessionSwitcher
from xcsh.coding.session_tools import ToolSet
from xcsh.coding.sessions.context import SessionContext, SessionStats, session_stats
from xcsh.coding.sessions.store import SessionStore, sanitize_title
from xcsh.coding.settings import Settings

if TYPE_CHECKING:
    from xcsh.agent.types import AgentEvent, AgentMessage
    from xcsh.ai.types import ImageContent, Model, ThinkingLevel, ToolCall
    from xcsh.coding.commands import CommandRegistry
    from xcsh.coding.events import SessionEvent
    from xcsh.coding.hooks import SlashCommand

logger = logging.getLogger(__name__)

__all__ = ["AgentSession", "SessionConfig", "SessionSnapshot"]


class AgentSession:
    """One conversation with the coding agent, as hosts see it."""

    def __init__(
        self,
        *,
        config: SessionConfig,
        registry: ModelRegistry,
        settings: Settings,
        store: SessionStore,
        model: Model,
        thinking_level: ThinkingLevel | None,
        tools: list[AgentTool],
        active_tool_names: list[str],
    ) -> None:
        self._config = config
        self._registry = registry
        self._settings = settings
        self._store = store
        self._hooks = SessionHooks()
        self._features = FeatureState()
        self._agent = Agent(
            model=model,
            thinking_level=thinking_level,
            convert_to_llm=convert_to_llm,
            steering_mode=settings.choice("steeringMode"),
            follow_up_mode=settings.choice("followUpMode"),
            interrupt_mode=settings.choice("interruptMode"),
            intent_tracing=lambda model: self._models.intent_tracing_for(model),
            options_factory=lambda model, signal: self._models.stream_options(model, signal),
            before_tool_call=self._hooks.check_tool_call,
            after_tool_call=self._hooks.replace_tool_result,
            recovery_message=recovery_message,
        )
        self._agent.subscribe(self._on_agent_event)
        self._listeners: list[Callable[[SessionEvent], None]] = []
        self._compacting = False
        self._auto_compaction: tuple[int, bool] = (-1, False)  # (settings.version, value)
        from xcsh.coding.commands import CommandRegistry

        self._commands = CommandRegistry(self._hooks.commands)
        if config.project is not None:
            project = config.project
            self._commands.set_sources(
                commands=project.commands, templates=project.templates, skills=project.skills
            )
        # the collaborators the session owns (the session core: docs/architecture.md)
        self._context = LiveContext(self._agent, lambda: self._store)
        self._models = ModelControl(
            self._agent,
            registry=registry,
            settings=settings,
            store=lambda: self._store,
            scoped_models=config.scoped_models,
        )
        self._runs = RunChain(
            self._agent,
            hooks=self._hooks,
            commands=self._commands,
            cwd=config.cwd,
            require_model=self._models.require_available,
            is_compacting=lambda: self._compacting,
            record=self.append_message,
        )
        self._queues = MessageQueues(self._agent, settings, self._runs)
        self._switcher = SessionSwitcher(
            config,
            hooks=self._hooks,
            store=lambda: self._store,
            adopt=self.adopt_store,
            stop=self._stop_for_switch,
            restore=self._models.restore,
            drop_hidden=lambda: self._runs.drop_held(bash=False),
            thinking_level=lambda: self._agent.thinking_level,
        )
        self._tools = ToolSet(self._agent, tools, active_tool_names, config)

    # ---- read-only views ---------------------------------------------------------------
    @property
    def config(self) -> SessionConfig:
        return self._config

    @property
    def cwd(self) -> Path:
        return self._config.cwd

    @property
    def registry(self) -> ModelRegistry:
        return self._registry

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def store(self) -> SessionStore:
        """The current session store (replaced only by :meth:`adopt_store`)."""
        return self._store

    @property
    def commands(self) -> CommandRegistry:
        """Every ``/name`` the session understands (extension commands, file commands, skills)."""
        return self._commands

    @property
    def locale(self) -> str | None:
        return self._tools.locale

    @property
    def hooks(self) -> SessionHooks:
        return self._hooks

    @property
    def features(self) -> FeatureState:
        return self._features

    @property
    def model(self) -> Model:
        return self._agent.model

    @property
    def thinking_level(self) -> ThinkingLevel | None:
        return self._agent.thinking_level

    @property
    def messages(self) -> Sequence[AgentMessage]:
        """The live context (read-only: change it through the named operations)."""
        return self._agent.messages

    @property
    def is_streaming(self) -> bool:
        return self._runs.busy

    @property
    def is_compacting(self) -> bool:
        return self._compacting

    @property
    def queued_count(self) -> int:
        return self._queues.count

    @property
    def system_prompt(self) -> str:
        return self._agent.system_prompt

    @property
    def run_signal(self) -> AbortSignal | None:
        """The abort signal of the current run (None between runs)."""
        return self._agent.signal

    def has_tool(self, name: str) -> bool:
        """Whether a tool ``name`` is registered (active or not)."""
        return self._tools.get(name) is not None

    def tool(self, name: str) -> AgentTool | None:
        """The registered tool ``name`` (active or not)."""
        return self._tools.get(name)

    def registered_tools(self) -> list[AgentTool]:
        """Every registered tool (active or not), in registration order."""
        return self._tools.registered()

    @property
    def active_tool_names(self) -> list[str]:
        return self._tools.active_names

    def active_tools(self) -> list[AgentTool]:
        return self._tools.active()

    def snapshot(self) -> SessionSnapshot:
        """The state ``get_state`` reports, typed; the RPC layer shapes the wire payload.

        Two snapshots compare equal exactly when everything they report is equal (the model and
        the tools by identity first: they are replaced, never changed in place), so a mode may
        reuse what it built from an equal snapshot.
        """
        settings = self._settings
        if self._auto_compaction[0] != settings.version:
            self._auto_compaction = (settings.version, auto_compaction_enabled(settings))
        return take_snapshot(
            self._agent,
            self._store,
            is_streaming=self._runs.busy,
            is_compacting=self._compacting,
            queued_count=self.queued_count,
            auto_compaction_enabled=self._auto_compaction[1],
        )

    def stats(self) -> SessionStats:
        """Counts and usage over the live context (``session_file`` None for an in-memory session)."""
        path = self._store.path
        return session_stats(
            self._agent.messages, session_id=self._store.session_id, session_file=str(path) if path else None
        )

    # ---- events ----------------------------------------------------------------------
    def subscribe(self, listener: Callable[[SessionEvent], None]) -> Callable[[], None]:
        """Receive every event (agent and session events), after it has been persisted."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def subscribe_after(self, listener: Callable[[AgentEvent], None]) -> Callable[[], None]:
        """Receive each agent event after every :meth:`subscribe` listener has seen it.

        For features that react to what hosts have already been told (retry success,
        TTSR stream watching).
        """
        return self._agent.subscribe(listener)

    def emit(self, event: SessionEvent) -> None:
        """Send a session event (``auto_retry_start`` …) to every subscriber."""
        for listener in list(self._listeners):
            listener(event)

    def _on_agent_event(self, event: AgentEvent) -> None:
        if event["type"] == "message_end":
            self._context.persist_ended(event["message"])
        self._runs.on_agent_event(event)
        self.emit(event)

    # ---- the live context --------------------------------------------------------------
    def append_message(self, message: AgentMessage, *, persist: bool = True) -> None:
        """Append ``message`` to the live context; with ``persist`` also to the session file.

        Emits no event (messages that hosts see go through a run). A write failure of an
        explicit append raises :class:`~xcsh.coding.sessions.store.SessionWriteError`.
        """
        self._context.append(message, persist=persist)

    def truncate_context_at(self, message: AgentMessage) -> bool:
        """Drop ``message`` (by identity) and what follows from the live context (the file keeps them)."""
        return self._context.truncate_at(message)

    def replace_messages(self, replacements: Mapping[int, AgentMessage]) -> None:
        """Replace live-context messages by index (pruned tool outputs); the store is not touched."""
        self._context.replace(replacements)

    def reload_context(self) -> SessionContext:
        """Rebuild the live context from the store's current branch; returns what was read."""
        return self._context.reload()

    def adopt_store(self, store: SessionStore, reason: str) -> SessionContext:
        """Make ``store`` current (closing the old one), reload the context, tell the features."""
        old = self._store
        self._store = store
        if old is not store:
            old.close()
        context = self.reload_context()
        for callback in self._hooks.on_session_change:
            callback(reason)
        return context

    def queue_hidden_next_turn(self, message: AgentMessage) -> None:
        """Deliver ``message`` with the next user prompt (after the user message)."""
        self._runs.queue_hidden_next_turn(message)

    def interrupt_run(self, reason: str) -> None:
        """Abort the active run only; the chain's after-run hooks still decide what follows."""
        self._agent.abort(reason)

    def force_next_tool(self, name: str) -> None:
        """Make the next model call use tool ``name`` (one call only)."""
        self._agent.next_tool_choice = name

    @contextmanager
    def compacting(self) -> Iterator[None]:
        """Mark the session as compacting (``isCompacting``) for the duration of the block."""
        self._compacting = True
        try:
            yield
        finally:
            self._compacting = False

    # ---- tools and the system prompt (coding/session_tools.py) -----------------------------
    def update_tools(
        self,
        *,
        add: Iterable[AgentTool] = (),
        remove: Iterable[str] = (),
        active: Sequence[str] | None = None,
    ) -> None:
        """Unregister ``remove``, register ``add``, then set the active names (None keeps them)."""
        self._tools.update(add=add, remove=remove, active=active)

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Choose which registered tools the model sees (unknown names are ignored)."""
        self._tools.update(active=names)

    def set_locale(self, locale: str | None) -> None:
        """Answer in ``locale`` from the next model call on (rebuilds the system prompt)."""
        self._tools.set_locale(locale)

    async def check_tool_call(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        """The session's tool-call gate (subagents put their parent's in front of their own calls)."""
        return await self._hooks.check_tool_call(call, args)

    # ---- prompting (the run chain, coding/session_runs.py) ------------------------------------
    def start_prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        streaming_behavior: str | None = None,
        *,
        read_mentions: bool = True,
    ) -> asyncio.Future[None] | None:
        """Accept a prompt (see :meth:`RunChain.start_prompt`): its task, or None when queued."""
        return self._runs.start_prompt(text, images, streaming_behavior, read_mentions=read_mentions)

    def find_command(self, text: str) -> SlashCommand | None:
        """The extension command that runs ``text``, or None."""
        return self._runs.find_command(text)

    async def run_chain_now(self, initial: list[AgentMessage]) -> None:
        """Start a run chain from feature code (e.g. a continuation prompt) when idle."""
        await self._runs.run_chain_now(initial)

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self._runs.steer(text, images)

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self._runs.follow_up(text, images)

    async def abort(self) -> None:
        """Cancel pending continuations and the active run; return once idle."""
        await self._runs.abort()

    async def wait_for_idle(self) -> None:
        """Return once no agent run is active."""
        await self._agent.wait_for_idle()

    def record_bash_message(self, message: AgentMessage) -> None:
        """Record a user-bash result: at once when idle, else held back until the next prompt."""
        self._runs.record_bash_message(message)

    # ---- models and thinking (coding/session_models.py) -----------------------------------
    def apply_thinking_level(self, level: str | None, *, record: bool = True) -> ThinkingLevel | None:
        """Resolve ``level`` against the model and apply it; record an entry if it changed."""
        return self._models.apply_thinking_level(level, record=record)

    def cycle_thinking_level(self) -> ThinkingLevel | None:
        """Apply the model's next thinking level; None (nothing changed) without reasoning."""
        return self._models.cycle_thinking_level()

    def set_model(self, provider: str, model_id: str) -> Model:
        """Switch to an available model and remember it as the default of later processes."""
        return self._models.set_model(provider, model_id)

    def cycle_model(self) -> ModelCycle | None:
        """The next scoped model (with its own level), else the next available model; None below two."""
        return self._models.cycle_model()

    # ---- queued messages and their modes (coding/session_queues.py) --------------------------
    def queue_steer(self, message: AgentMessage) -> None:
        """Queue ``message`` as steering for the active run."""
        self._queues.steer(message)

    def queue_follow_up(self, message: AgentMessage) -> None:
        """Queue ``message`` for when the active run would otherwise stop."""
        self._queues.follow_up(message)

    def queued_messages(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Copies of the queued (steering, follow-up) messages, oldest first."""
        return self._queues.peek()

    def drop_queued(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Drop the queued steering and follow-up messages; return what was dropped."""
        return self._queues.drop()

    def take_queued(self) -> list[AgentMessage]:
        """Take queued steering messages, else follow-ups (per their delivery modes)."""
        return self._queues.take()

    def clear_queues(self) -> None:
        """Drop queued steering, follow-ups, hidden next-turn and held-back bash messages."""
        self._queues.clear()

    def set_steering_mode(self, mode: object) -> None:
        """Set (and save) how queued steering messages are delivered."""
        self._queues.set_steering_mode(mode)

    def set_follow_up_mode(self, mode: object) -> None:
        """Set (and save) how queued follow-ups are delivered."""
        self._queues.set_follow_up_mode(mode)

    def set_interrupt_mode(self, mode: object) -> None:
        """Set (and save) whether steering interrupts tool calls (``immediate``) or waits."""
        self._queues.set_interrupt_mode(mode)

    # ---- automatic continuations (saved to settings) ----------------------------------------
    def set_auto_compaction(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (enabling also turns an ``off`` strategy back on)."""
        auto_settings.set_auto_compaction(self._settings, enabled)

    def set_auto_retry(self, enabled: bool) -> None:
        """Turn automatic retry of retryable errors on or off."""
        auto_settings.set_auto_retry(self._settings, enabled)

    # ---- whole sessions (coding/session_switching.py) ---------------------------------------
    async def new_session(self, parent_session: str | None) -> bool:
        """Start a fresh session file (or in-memory store); False when an extension cancelled."""
        return await self._switcher.new_session(parent_session)

    async def switch_session(self, session_path: str) -> bool:
        """Resume the session file at ``session_path``; False when an extension cancelled."""
        return await self._switcher.switch_session(session_path)

    async def branch(self, entry_id: str) -> tuple[str, bool]:
        """Branch into a new file before user message ``entry_id``: (its text, cancelled)."""
        return await self._switcher.branch(entry_id)

    def branch_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of the user messages one can branch from."""
        return self._switcher.branch_messages()

    async def _stop_for_switch(self) -> None:
        await self.abort()
        self.clear_queues()

    def set_session_name(self, name: str) -> None:
        if not sanitize_title(name):
            raise CommandError("Session name cannot be empty")
        self._store.set_title(name, "user")

    def shutdown(self) -> None:
        """Release the session file (called when the process is about to exit); waits, on the
        calling thread, for a rewrite of the file in progress (:meth:`shutdown_async` waits off
        the event loop)."""
        self._switcher.close()

    async def shutdown_async(self) -> None:
        """:meth:`shutdown` for a caller on the event loop: the ``on_shutdown`` hooks, then the
        wait for a rewrite of the session file in progress (a long pruning rewrite) on a worker
        thread, so the loop keeps running meanwhile — a second stop signal exits at once — then
        the file is closed."""
        await self._switcher.close_async()
