"""AgentSession: the session core. It owns the agent, the session store, the tools and the run chain.

Its fields are private. Modes and features change it only through the named
operations below (append a message, reload the context, adopt a store, set the
active tools, queue a hidden next turn, set or cycle the model, set queue modes …),
so rules such as "every message is persisted exactly once" hold in one place.

A prompt starts a *run chain*: after each run the after-run hooks (retry, compaction,
TTSR, reminders, in :data:`~xcsh.coding.hooks.AFTER_RUN_ORDER`) may continue it;
``is_streaming`` stays true until the whole chain ends. Every event reaches
subscribers after anything it reports has been persisted. Features plug in through
:class:`~xcsh.coding.hooks.SessionHooks` and :class:`~xcsh.coding.hooks.FeatureState`
(see :mod:`xcsh.coding.features`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.agent.agent import Agent
from xcsh.agent.queue import normalize_queue_mode
from xcsh.agent.types import AgentEvent, AgentMessage, AgentTool, AgentToolResult
from xcsh.ai.abort import AbortSignal
from xcsh.ai.options import StreamOptions
from xcsh.ai.thinking import next_level, resolve_level
from xcsh.ai.types import ImageContent, Model, ThinkingLevel, ToolCall
from xcsh.coding import auto_settings
from xcsh.coding.auto_settings import auto_compaction_enabled
from xcsh.coding.errors import BUSY_TEXT, BusyError, CommandError, no_api_key_text
from xcsh.coding.events import SessionEvent
from xcsh.coding.file_mentions import build_file_mention
from xcsh.coding.hooks import FeatureState, RunAction, SessionHooks, SlashCommand
from xcsh.coding.messages import convert_to_llm, user_message
from xcsh.coding.model_choice import ModelCycle, model_ref, next_in_cycle, remembered_default
from xcsh.coding.models import ModelRegistry
from xcsh.coding.recovery import recovery_message
from xcsh.coding.sessions.branching import branch_to_new_file
from xcsh.coding.sessions.context import SessionContext, build_session_context, message_text, session_stats
from xcsh.coding.sessions.loading import NotASessionError
from xcsh.coding.sessions.lock import SessionLockedError
from xcsh.coding.sessions.store import SessionStore, SessionWriteError, sanitize_title
from xcsh.coding.settings import Settings
from xcsh.coding.system_prompt import build_system_prompt

if TYPE_CHECKING:
    from xcsh.coding.commands import CommandRegistry
    from xcsh.coding.project_context import ProjectContext

logger = logging.getLogger(__name__)

__all__ = ["KEEP_LEVEL", "AgentSession", "SessionConfig", "SessionSnapshot", "model_ref"]


class _KeepLevel:
    """Sentinel of :meth:`AgentSession.switch_model`: keep (re-resolve) the current thinking level."""


KEEP_LEVEL = _KeepLevel()


@dataclass(slots=True, kw_only=True)
class SessionConfig:
    """How the session was started (CLI options that stay relevant while it runs)."""

    cwd: Path
    agent_dir: Path
    custom_prompt: str | None = None
    append_prompt: str | None = None
    scoped_models: list[tuple[Model, ThinkingLevel | None]] = field(default_factory=list)
    session_dir: Path | None = None
    persist: bool = True
    project: ProjectContext | None = None
    """Discovered context files, skills, rules and commands (None: none were looked for)."""
    locale: str | None = None
    """The initial answer language (``$XCSH_LOCALE``, ``$LANG``…); ``set_locale`` changes it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSnapshot:
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
        self._tool_registry: dict[str, AgentTool] = {t.name: t for t in tools}
        self._active_tool_names: list[str] = [n for n in active_tool_names if n in self._tool_registry]
        self._agent = Agent(
            model=model,
            thinking_level=thinking_level,
            convert_to_llm=convert_to_llm,
            steering_mode=str(settings.get("steeringMode", "one-at-a-time")),
            follow_up_mode=str(settings.get("followUpMode", "one-at-a-time")),
            interrupt_mode=str(settings.get("interruptMode", "wait")),
            intent_tracing=self._intent_tracing_for,
            options_factory=self._stream_options,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            recovery_message=recovery_message,
        )
        self._agent.subscribe(self._on_agent_event)
        self._listeners: list[Callable[[SessionEvent], None]] = []
        self._busy = False
        # the host's run has not reached its agent_end yet (a second prompt is refused);
        # after it, runs the agent starts by itself never make a prompt fail (rpc-protocol §5.1)
        self._host_run_open = False
        self._between_runs = True
        self._next_prompt: tuple[str, list[ImageContent] | None] | None = None
        self._chain: asyncio.Task[None] | None = None
        self._generation = 0
        self._compacting = False
        self._hidden_next_turn: list[AgentMessage] = []
        self._pending_bash: list[AgentMessage] = []
        self._locale: str | None = config.locale
        from xcsh.coding.commands import CommandRegistry

        self._commands = CommandRegistry(self._hooks.commands)
        if config.project is not None:
            project = config.project
            self._commands.set_sources(
                commands=project.commands, templates=project.templates, skills=project.skills
            )
        self._refresh_tools()

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
        return self._locale

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
        return self._busy

    @property
    def is_compacting(self) -> bool:
        return self._compacting

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def queued_count(self) -> int:
        return self._agent.queued_count + len(self._hidden_next_turn)

    @property
    def system_prompt(self) -> str:
        return self._agent.system_prompt

    @property
    def run_signal(self) -> AbortSignal | None:
        """The abort signal of the current run (None between runs)."""
        return self._agent.signal

    def has_tool(self, name: str) -> bool:
        """Whether a tool ``name`` is registered (active or not)."""
        return name in self._tool_registry

    def tool(self, name: str) -> AgentTool | None:
        """The registered tool ``name`` (active or not)."""
        return self._tool_registry.get(name)

    def registered_tools(self) -> list[AgentTool]:
        """Every registered tool (active or not), in registration order."""
        return list(self._tool_registry.values())

    @property
    def active_tool_names(self) -> list[str]:
        return list(self._active_tool_names)

    def active_tools(self) -> list[AgentTool]:
        return [self._tool_registry[n] for n in self._active_tool_names if n in self._tool_registry]

    def snapshot(self) -> SessionSnapshot:
        """The state ``get_state`` reports, typed; the RPC layer shapes the wire payload."""
        store = self._store
        return SessionSnapshot(
            model=self._agent.model,
            thinking_level=self._agent.thinking_level,
            is_streaming=self._busy,
            is_compacting=self._compacting,
            steering_mode=self._agent.steering.mode,
            follow_up_mode=self._agent.follow_ups.mode,
            interrupt_mode=self._agent.interrupt_mode,
            session_file=str(store.path) if store.path is not None else None,
            session_id=store.session_id,
            session_name=store.title or None,
            message_count=len(self._agent.messages),
            queued_count=self.queued_count,
            system_prompt=self._agent.system_prompt,
            tools=tuple(self._agent.tools),
            auto_compaction_enabled=auto_compaction_enabled(self._settings),
        )

    def stats(self) -> dict[str, Any]:
        """The ``get_session_stats`` figures over the live context (no file: ``sessionFile`` omitted)."""
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
            self._persist(event["message"])
        elif event["type"] == "agent_start":
            self._between_runs = False
        elif event["type"] == "agent_end":
            self._between_runs = True
            self._host_run_open = False
        self.emit(event)

    def _persist(self, message: AgentMessage) -> None:
        if message.get("role") in ("compactionSummary", "branchSummary"):
            return
        try:
            self._store.append_message(message)
        except SessionWriteError:
            # the store latched and logged the failure; later explicit writes report it, but
            # it must not break the run or hold back this message's events
            pass

    # ---- the live context --------------------------------------------------------------
    def append_message(self, message: AgentMessage, *, persist: bool = True) -> None:
        """Append ``message`` to the live context; with ``persist`` also to the session file.

        Emits no event (messages that hosts see go through a run). A write failure of an
        explicit append raises :class:`~xcsh.coding.sessions.store.SessionWriteError`.
        """
        self._agent.messages.append(message)
        if persist:
            self._store.append_message(message)

    def truncate_context_at(self, message: AgentMessage) -> bool:
        """Drop ``message`` (by identity) and everything after it from the live context.

        The session file keeps them. False when ``message`` is not in the context.
        """
        messages = self._agent.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is message:
                del messages[index:]
                return True
        return False

    def replace_messages(self, replacements: Mapping[int, AgentMessage]) -> None:
        """Replace live-context messages by index (pruned tool outputs); the store is not touched."""
        messages = self._agent.messages
        for index, message in replacements.items():
            messages[index] = message

    def reload_context(self) -> SessionContext:
        """Rebuild the live context from the store's current branch; returns what was read."""
        context = build_session_context(self._store.entries, self._store.leaf_id)
        self._agent.messages[:] = context.messages
        return context

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
        self._hidden_next_turn.append(message)

    def queue_steer(self, message: AgentMessage) -> None:
        """Queue ``message`` as steering for the active run."""
        self._agent.steer(message)

    def queue_follow_up(self, message: AgentMessage) -> None:
        """Queue ``message`` for when the active run would otherwise stop."""
        self._agent.follow_up(message)

    def queued_messages(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Copies of the queued (steering, follow-up) messages, oldest first."""
        return self._agent.steering.peek_all(), self._agent.follow_ups.peek_all()

    def drop_queued(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Drop the queued steering and follow-up messages; return what was dropped."""
        dropped = self.queued_messages()
        self._agent.clear_queues()
        return dropped

    def take_queued(self) -> list[AgentMessage]:
        """Take queued steering messages, else follow-ups (per their delivery modes)."""
        return self._agent.steering.drain() or self._agent.follow_ups.drain()

    def clear_queues(self) -> None:
        """Drop queued steering, follow-ups, hidden next-turn and held-back bash messages."""
        self._agent.clear_queues()
        self._hidden_next_turn = []
        self._pending_bash = []

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

    # ---- tools -------------------------------------------------------------------------
    def update_tools(
        self,
        *,
        add: Iterable[AgentTool] = (),
        remove: Iterable[str] = (),
        active: Sequence[str] | None = None,
    ) -> None:
        """Unregister ``remove``, register ``add``, then set the active names (unknown ones dropped).

        ``active`` None keeps the current active list. The model sees the change at its next call.
        """
        for name in remove:
            self._tool_registry.pop(name, None)
        for tool in add:
            self._tool_registry[tool.name] = tool
        names = self._active_tool_names if active is None else active
        self._active_tool_names = [n for n in dict.fromkeys(names) if n in self._tool_registry]
        self._refresh_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Choose which registered tools the model sees (unknown names are ignored)."""
        self.update_tools(active=names)

    def _refresh_tools(self) -> None:
        """Recompute the active tool list and the system prompt from live state."""
        self._agent.tools = self.active_tools()
        self._agent.system_prompt = build_system_prompt(
            cwd=self.cwd,
            tools=self._agent.tools,
            custom_prompt=self._config.custom_prompt,
            append_prompt=self._config.append_prompt,
            project=self._config.project,
            locale=self._locale,
        )

    def set_locale(self, locale: str | None) -> None:
        """Answer in ``locale`` from the next model call on (rebuilds the system prompt)."""
        self._locale = locale or None
        self._refresh_tools()

    async def check_tool_call(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        """The session's tool-call gate: the first ``before_tool_call`` hook that blocks wins.

        Returns the text the model reads instead of a result, or None when the call may run
        (subagents put their parent's gate in front of their own calls).
        """
        return await self._before_tool_call(call, args)

    async def _before_tool_call(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        for hook in list(self._hooks.before_tool_call):
            blocked = await hook(call, args)
            if blocked:
                return blocked
        return None

    async def _after_tool_call(
        self, call: ToolCall, result: AgentToolResult, is_error: bool
    ) -> AgentToolResult | None:
        replaced: AgentToolResult | None = None
        for hook in list(self._hooks.after_tool_call):
            ours = await hook(call, replaced if replaced is not None else result, is_error)
            if ours is not None:
                replaced = ours
        return replaced

    def _intent_tracing_for(self, model: Model) -> bool:
        """The ``_i`` intent field is sent unless disabled, or for small schema-constrained models."""
        if not self._settings.get_bool("tools.intentTracing", True):
            return False
        return not model.get("compat", {}).get("constrainedToolCalls")

    def _stream_options(self, model: Model, signal: AbortSignal) -> StreamOptions:
        budgets = self._settings.get("thinkingBudgets") or {}
        options = StreamOptions(
            api_key=self._registry.api_key_for(model["provider"]),
            signal=signal,
            reasoning=self._agent.thinking_level,
            session_id=self._store.session_id,
        )
        if isinstance(budgets, dict):
            options.thinking_budgets.update({k: int(v) for k, v in budgets.items() if isinstance(v, int)})
        return options

    # ---- prompting -------------------------------------------------------------------
    def start_prompt(
        self, text: str, images: list[ImageContent] | None = None, streaming_behavior: str | None = None
    ) -> asyncio.Task[None] | None:
        """Accept a prompt synchronously; returns the task that runs it (None when queued).

        Raises :class:`BusyError` when busy without a streaming behaviour, or
        :class:`CommandError` when the model is not available. Slash commands and the
        rest of the work happen in the returned task.
        """
        if not isinstance(text, str):
            raise CommandError("message must be a string")
        command = self.find_command(text)
        if command is not None:
            return asyncio.ensure_future(command.run(text))
        text = self._commands.expand(text)
        if self._busy:
            if streaming_behavior == "steer":
                self.steer(text, images)
                return None
            if streaming_behavior == "followUp":
                self.follow_up(text, images)
                return None
            if self._host_run_open:
                raise BusyError(BUSY_TEXT)
            self._require_available_model()
            self._supersede_continuation(text, images)
            return None
        self._require_available_model()
        self._busy = True
        self._host_run_open = True
        return asyncio.ensure_future(self._prompt(text, images, self._generation))

    def _require_available_model(self) -> None:
        if not self._registry.is_available(self._agent.model):
            raise CommandError(no_api_key_text(self._agent.model["provider"]))

    def _supersede_continuation(self, text: str, images: list[ImageContent] | None) -> None:
        """A prompt after the host's ``agent_end`` while the agent continues by itself.

        A continuation run already streaming finishes and takes the prompt as a follow-up;
        one not started yet (a retry back-off, a reminder or the continue after a
        compaction) is dropped and the prompt runs in its place (rpc-protocol §5.1 decision).
        A compaction in progress finishes first.
        """
        if not self._between_runs:
            self.follow_up(text, images)
            return
        self._next_prompt = (text, images)
        self._host_run_open = True
        if not self._compacting:
            for hook in self._hooks.after_run_hooks():
                hook.cancel()

    def find_command(self, text: str) -> SlashCommand | None:
        """The extension command that runs ``text``, or None."""
        return self._commands.runnable_for(text)

    async def _prompt(self, text: str, images: list[ImageContent] | None, generation: int) -> None:
        try:
            if generation != self._generation:
                return  # aborted before the prompt got to run
            initial = await self._prompt_messages(text, images)
            if generation != self._generation:
                return  # aborted while the pre-prompt checks ran
            await self._run_chain(initial)
        finally:
            if self._chain is None:
                self._busy = False
                self._host_run_open = False

    async def _prompt_messages(self, text: str, images: list[ImageContent] | None) -> list[AgentMessage]:
        """The initial messages of a prompt's run (pre-prompt checks run first)."""
        self._flush_pending_bash()
        for check in self._hooks.pre_prompt_checks():
            await check()
        initial: list[AgentMessage] = []
        for contribute in self._hooks.before_user_message:
            initial.extend(contribute(text))
        initial.append(user_message(text, images))
        initial.extend(self._hidden_next_turn)
        self._hidden_next_turn = []
        mention = build_file_mention(text, self.cwd)
        if mention is not None:
            initial.append(mention)
        for contribute in self._hooks.after_user_message:
            initial.extend(contribute(text))
        return initial

    async def run_chain_now(self, initial: list[AgentMessage]) -> None:
        """Start a run chain from feature code (e.g. a continuation prompt) when idle."""
        if self._busy:
            raise BusyError(BUSY_TEXT)
        self._busy = True
        try:
            await self._run_chain(initial)
        finally:
            self._busy = self._chain is not None

    async def _run_chain(self, initial: list[AgentMessage]) -> None:
        generation = self._generation
        self._chain = asyncio.current_task()
        try:
            added = await self._agent.prompt(initial)
            while generation == self._generation:
                action = await self._after_run(added)
                if generation != self._generation:
                    break
                if self._next_prompt is not None:
                    # a host prompt that arrived after agent_end replaces the continuation
                    text, images = self._next_prompt
                    self._next_prompt = None
                    initial = await self._prompt_messages(text, images)
                    if generation != self._generation:
                        break
                    added = await self._agent.prompt(initial)
                    continue
                if action is None:
                    break
                if action.kind == "continue":
                    added = await self._agent.continue_run()
                else:
                    added = await self._agent.prompt(action.messages)
        finally:
            self._chain = None
            self._busy = False
            self._host_run_open = False
            self._next_prompt = None

    async def _after_run(self, added: list[AgentMessage]) -> RunAction | None:
        for hook in self._hooks.after_run_hooks():
            action = await hook.after_run(added)
            if action is not None:
                return action
        return None

    def _queueable(self, text: str) -> None:
        command = self.find_command(text)
        if command is not None:
            name = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
            raise ValueError(
                f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command when not streaming.'
            )

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self._queueable(text)
        self._agent.steer(user_message(self._commands.expand(text), images))

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self._queueable(text)
        self._agent.follow_up(user_message(self._commands.expand(text), images))

    async def abort(self) -> None:
        """Cancel pending continuations and the active run; return once idle."""
        self._generation += 1
        self._next_prompt = None
        for hook in self._hooks.after_run_hooks():
            hook.cancel()
        self._agent.abort("aborted")
        chain = self._chain
        if chain is not None and chain is not asyncio.current_task():
            await asyncio.wait({chain})
        await self._agent.wait_for_idle()

    async def wait_for_idle(self) -> None:
        """Return once no agent run is active."""
        await self._agent.wait_for_idle()

    def _flush_pending_bash(self) -> None:
        """Record user-bash results held back during a run (keeps tool pairs adjacent)."""
        for message in self._pending_bash:
            self.append_message(message)
        self._pending_bash = []

    def record_bash_message(self, message: AgentMessage) -> None:
        """Record a user-bash result: at once when idle, else held back until the next prompt."""
        if self._busy:
            self._pending_bash.append(message)
        else:
            self.append_message(message)

    # ---- models and thinking -----------------------------------------------------------
    def apply_thinking_level(self, level: str | None, *, record: bool = True) -> ThinkingLevel | None:
        """Resolve ``level`` against the model and apply it; record an entry if it changed."""
        resolved = resolve_level(self._agent.model, level)
        changed = resolved != self._agent.thinking_level
        self._agent.thinking_level = resolved
        if changed and record:
            self._store.append_thinking_level_change(resolved)
        return resolved

    def cycle_thinking_level(self) -> ThinkingLevel | None:
        """Apply the model's next thinking level; None (nothing changed) without reasoning."""
        level = next_level(self._agent.model, self._agent.thinking_level)
        if level is None:
            return None
        self.apply_thinking_level(level)
        return self._agent.thinking_level or "off"

    def switch_model(
        self, model: Model, thinking: str | _KeepLevel | None = KEEP_LEVEL, *, role: str | None = "default"
    ) -> None:
        """Make ``model`` current (recording it), then apply ``thinking`` (None = unset).

        By default the current thinking level is re-resolved against the new model.
        """
        if not self._registry.is_available(model):
            raise CommandError(f"No API key for {model_ref(model)}")
        self._agent.model = model
        self._store.append_model_change(model_ref(model), role)
        # keeping re-clamps the current level; an unset level stays unset (agent-behaviour §9.3)
        requested = self._agent.thinking_level if isinstance(thinking, _KeepLevel) else thinking
        self.apply_thinking_level(requested)

    def set_model(self, provider: str, model_id: str) -> Model:
        """Switch to an available model and remember it as the default of later processes."""
        model = next(
            (
                m
                for m in self._registry.available_models()
                if m["provider"] == provider and m["id"] == model_id
            ),
            None,
        )
        if model is None:
            raise CommandError(f"Model not found: {provider}/{model_id}")
        self.switch_model(model)
        self._remember_default(model)
        return model

    def cycle_model(self) -> ModelCycle | None:
        """The next scoped model (with its own level), else the next available model; None below two."""
        scoped = [(m, level) for m, level in self._config.scoped_models if self._registry.is_available(m)]
        current = self._agent.model
        if scoped:
            chosen = next_in_cycle(scoped, current, lambda item: item[0])
            if chosen is None:
                return None
            model, level = chosen
            # the scoped model's own level, applied as is: unset stays unset
            self.switch_model(model, level)
        else:
            found = next_in_cycle(self._registry.available_models(), current, lambda m: m)
            if found is None:
                return None
            model = found
            self.switch_model(model)
        self._remember_default(model)
        return ModelCycle(model=model, thinking_level=self._agent.thinking_level, is_scoped=bool(scoped))

    def _remember_default(self, model: Model) -> None:
        """Record ``model`` as the default of later processes (setting ``modelRoles.default``)."""
        previous = self._settings.get("modelRoles.default")
        self._settings.set("modelRoles.default", remembered_default(previous, model))

    def _restore_model_and_level(self, context: SessionContext) -> None:
        ref = context.models.get("default")
        if ref and "/" in ref:
            provider, model_id = ref.split("/", 1)
            model = self._registry.find(provider, model_id)
            if model is not None and self._registry.is_available(model):
                self._agent.model = model
        level = context.thinking_level
        requested = level if level is not None else str(self._settings.get("defaultThinkingLevel", "xhigh"))
        self.apply_thinking_level(requested, record=False)

    # ---- queue and interrupt modes -------------------------------------------------------
    def set_steering_mode(self, mode: object) -> None:
        """Set (and save) how queued steering messages are delivered."""
        self._agent.steering.mode = normalize_queue_mode(mode)
        self._settings.set("steeringMode", mode)

    def set_follow_up_mode(self, mode: object) -> None:
        """Set (and save) how queued follow-ups are delivered."""
        self._agent.follow_ups.mode = normalize_queue_mode(mode)
        self._settings.set("followUpMode", mode)

    def set_interrupt_mode(self, mode: object) -> None:
        """Set (and save) whether steering interrupts tool calls (``immediate``) or waits."""
        self._agent.interrupt_mode = "wait" if mode == "wait" else "immediate"
        self._settings.set("interruptMode", mode)

    # ---- automatic continuations (saved to settings) ----------------------------------------
    def set_auto_compaction(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (enabling also turns an ``off`` strategy back on)."""
        auto_settings.set_auto_compaction(self._settings, enabled)

    def set_auto_retry(self, enabled: bool) -> None:
        """Turn automatic retry of retryable errors on or off."""
        auto_settings.set_auto_retry(self._settings, enabled)

    # ---- whole sessions ------------------------------------------------------------------
    def _blob_dir(self) -> Path:
        return self._config.agent_dir / "blobs"

    async def _prepare_switch(self, reason: str, target: str | None = None) -> bool:
        """Ask the veto hooks, then abort work and clear queues; False when cancelled."""
        for check in self._hooks.before_switch:
            if await check(reason, target):
                return False
        await self.abort()
        self.clear_queues()
        return True

    async def new_session(self, parent_session: str | None) -> bool:
        """Start a fresh session file (or in-memory store); False when an extension cancelled."""
        if not await self._prepare_switch("new"):
            return False
        directory = self._store.session_dir or self._config.session_dir
        parent = parent_session or None
        if self._config.persist and directory is not None:
            store = SessionStore.create(directory, self.cwd, parent_session=parent, blob_dir=self._blob_dir())
        else:
            store = SessionStore.in_memory(self.cwd, parent_session=parent)
        self.adopt_store(store, "new")
        store.append_thinking_level_change(self.thinking_level)
        store.append_service_tier_change(None)
        return True

    async def switch_session(self, session_path: str) -> bool:
        """Resume the session file at ``session_path``; False when an extension cancelled."""
        if not await self._prepare_switch("resume", session_path):
            return False
        path = Path(os.path.abspath(os.path.expanduser(session_path)))
        current = self._store.path
        try:
            if current is not None and Path(current) == path:
                self._store.close()
            store = SessionStore.open(path, cwd_for_new=self.cwd, blob_dir=self._blob_dir())
        except (SessionLockedError, NotASessionError) as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise ValueError(f"Could not open session {session_path}: {exc.strerror or exc}") from exc
        self._restore_model_and_level(self.adopt_store(store, "resume"))
        return True

    async def branch(self, entry_id: str) -> tuple[str, bool]:
        """Branch into a new file before user message ``entry_id``: (its text, cancelled)."""
        entry = self._store.get_entry(entry_id)
        if entry is None or entry.get("type") != "message" or entry.get("message", {}).get("role") != "user":
            raise ValueError("Invalid entry ID for branching")
        text = message_text(entry["message"])
        for check in self._hooks.before_branch:
            if await check("branch", entry_id):
                return text, True
        store = branch_to_new_file(self._store, entry_id)
        self._hidden_next_turn = []
        self.adopt_store(store, "branch")
        return text, False

    def branch_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of the user messages one can branch from."""
        out = []
        for entry in self._store.user_message_entries():
            text = message_text(entry["message"])
            if text:
                out.append((entry["id"], text))
        return out

    def set_session_name(self, name: str) -> None:
        if not sanitize_title(name):
            raise CommandError("Session name cannot be empty")
        self._store.set_title(name, "user")

    def shutdown(self) -> None:
        """Release the session file (called when the process is about to exit)."""
        for callback in self._hooks.on_shutdown:
            callback()
        self._store.close()
