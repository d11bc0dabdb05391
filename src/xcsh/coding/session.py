"""AgentSession: the facade that wires the agent, the session store, models and settings.

It owns the "run chain": a prompt starts a run, and post-run handlers (retry,
compaction, reminders, TTSR) may continue it; ``is_streaming`` stays true until the
whole chain ends. Every event goes to subscribers after anything it reports has been
persisted. Features live in their own modules and plug in through :class:`SessionHooks`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.agent.agent import Agent
from xcsh.agent.types import AgentEvent, AgentMessage, AgentTool
from xcsh.ai.abort import AbortSignal
from xcsh.ai.options import StreamOptions
from xcsh.ai.thinking import resolve_level
from xcsh.ai.types import Model, ThinkingLevel
from xcsh.coding.errors import BUSY_TEXT, BusyError, CommandError, no_api_key_text
from xcsh.coding.file_mentions import build_file_mention
from xcsh.coding.hooks import RunAction, SessionHooks, SlashCommand
from xcsh.coding.messages import convert_to_llm, user_message
from xcsh.coding.models import ModelRegistry
from xcsh.coding.recovery import recovery_message
from xcsh.coding.secrets import public_model
from xcsh.coding.sessions.store import SessionStore, SessionWriteError
from xcsh.coding.settings import Settings
from xcsh.coding.system_prompt import build_system_prompt

if TYPE_CHECKING:
    from xcsh.coding.project_context import ProjectContext

logger = logging.getLogger(__name__)


def model_ref(model: Model) -> str:
    return f"{model['provider']}/{model['id']}"


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
        self.config = config
        self.cwd = config.cwd
        self.registry = registry
        self.settings = settings
        self.store = store
        self.hooks = SessionHooks()
        self.tool_registry: dict[str, AgentTool] = {t.name: t for t in tools}
        self.active_tool_names: list[str] = [n for n in active_tool_names if n in self.tool_registry]
        self.agent = Agent(
            model=model,
            thinking_level=thinking_level,
            convert_to_llm=convert_to_llm,
            steering_mode=str(settings.get("steeringMode", "one-at-a-time")),
            follow_up_mode=str(settings.get("followUpMode", "one-at-a-time")),
            interrupt_mode=str(settings.get("interruptMode", "wait")),
            intent_tracing=self._intent_tracing_for,
            options_factory=self._stream_options,
            recovery_message=recovery_message,
        )
        self.agent.subscribe(self._on_agent_event)
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._busy = False
        # the host's run has not reached its agent_end yet (a second prompt is refused);
        # after it, runs the agent starts by itself never make a prompt fail (rpc-protocol §5.1)
        self._host_run_open = False
        self._between_runs = True
        self._next_prompt: tuple[str, list[dict[str, Any]] | None] | None = None
        self._chain: asyncio.Task[None] | None = None
        self._generation = 0
        self.is_compacting = False
        self.hidden_next_turn: list[AgentMessage] = []
        self.pending_bash_messages: list[AgentMessage] = []
        self.locale: str | None = config.locale
        from xcsh.coding.commands import CommandRegistry

        self.commands = CommandRegistry(self.hooks.commands)
        if config.project is not None:
            project = config.project
            self.commands.set_sources(
                commands=project.commands, templates=project.templates, skills=project.skills
            )
        self.todo_provider: Callable[[], list[dict[str, Any]]] | None = None
        self.refresh_tools()

    # ---- events ----------------------------------------------------------------------
    def subscribe(self, listener: Callable[[AgentEvent], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: AgentEvent) -> None:
        """Send an event to every subscriber (after persisting what it reports)."""
        for listener in list(self._listeners):
            listener(event)

    def _on_agent_event(self, event: AgentEvent) -> None:
        kind = event["type"]
        if kind == "message_end":
            self._persist_message(event["message"])
        elif kind == "agent_start":
            self._between_runs = False
        elif kind == "agent_end":
            self._between_runs = True
            self._host_run_open = False
        self.emit(event)

    def _persist_message(self, message: AgentMessage) -> None:
        if message.get("role") in ("compactionSummary", "branchSummary"):
            return
        try:
            self.store.append_message(message)
        except SessionWriteError:
            # the store latched and logged the failure; later explicit writes report it, but
            # it must not break the run or hold back this message's events
            pass

    # ---- state -----------------------------------------------------------------------
    @property
    def model(self) -> Model:
        return self.agent.model

    @property
    def thinking_level(self) -> ThinkingLevel | None:
        return self.agent.thinking_level

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.messages

    @property
    def is_streaming(self) -> bool:
        return self._busy

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def queued_count(self) -> int:
        return self.agent.queued_count + len(self.hidden_next_turn)

    @property
    def system_prompt(self) -> str:
        return self.agent.system_prompt

    def active_tools(self) -> list[AgentTool]:
        return [self.tool_registry[n] for n in self.active_tool_names if n in self.tool_registry]

    def refresh_tools(self) -> None:
        """Recompute the active tool list and the system prompt from live state."""
        self.agent.tools = self.active_tools()
        self.agent.system_prompt = build_system_prompt(
            cwd=self.cwd,
            tools=self.agent.tools,
            custom_prompt=self.config.custom_prompt,
            append_prompt=self.config.append_prompt,
            project=self.config.project,
            locale=self.locale,
        )

    def set_locale(self, locale: str | None) -> None:
        """Answer in ``locale`` from the next model call on (rebuilds the system prompt)."""
        self.locale = locale or None
        self.refresh_tools()

    def _intent_tracing_for(self, model: Model) -> bool:
        """The ``_i`` intent field is sent unless disabled, or for small schema-constrained models."""
        if not self.settings.get_bool("tools.intentTracing", True):
            return False
        return not model.get("compat", {}).get("constrainedToolCalls")

    def _stream_options(self, model: Model, signal: AbortSignal) -> StreamOptions:
        budgets = self.settings.get("thinkingBudgets") or {}
        options = StreamOptions(
            api_key=self.registry.api_key_for(model["provider"]),
            signal=signal,
            reasoning=self.agent.thinking_level,
            session_id=self.store.session_id,
        )
        if isinstance(budgets, dict):
            options.thinking_budgets.update({k: int(v) for k, v in budgets.items() if isinstance(v, int)})
        return options

    # ---- prompting -------------------------------------------------------------------
    def start_prompt(
        self, text: str, images: list[dict[str, Any]] | None = None, streaming_behavior: str | None = None
    ) -> asyncio.Task[None] | None:
        """Accept a prompt synchronously; returns the task that runs it (None when queued).

        Raises :class:`BusyError` when busy without a streaming behaviour, or
        :class:`CommandError` when the model has no API key. Slash commands and the
        rest of the work happen in the returned task.
        """
        if not isinstance(text, str):
            raise CommandError("message must be a string")
        command = self.find_command(text)
        if command is not None:
            return asyncio.ensure_future(command.run(self, text))
        text = self.commands.expand(text)
        if self._busy:
            if streaming_behavior == "steer":
                self.steer(text, images)
                return None
            if streaming_behavior == "followUp":
                self.follow_up(text, images)
                return None
            if self._host_run_open:
                raise BusyError(BUSY_TEXT)
            self._require_api_key()
            self._supersede_continuation(text, images)
            return None
        self._require_api_key()
        self._busy = True
        self._host_run_open = True
        return asyncio.ensure_future(self._prompt(text, images, self._generation))

    def _supersede_continuation(self, text: str, images: list[dict[str, Any]] | None) -> None:
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
        if not self.is_compacting:
            for handler in self.hooks.post_run:
                handler.cancel()

    def find_command(self, text: str) -> SlashCommand | None:
        """The extension command that runs ``text``, or None."""
        return self.commands.runnable_for(text)

    def _require_api_key(self) -> None:
        model = self.agent.model
        if not self.registry.api_key_for(model["provider"]) and not self.registry.is_keyless(
            model["provider"]
        ):
            raise CommandError(no_api_key_text(model["provider"]))

    async def _prompt(self, text: str, images: list[dict[str, Any]] | None, generation: int) -> None:
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

    async def _prompt_messages(self, text: str, images: list[dict[str, Any]] | None) -> list[AgentMessage]:
        """The initial messages of a prompt's run (pre-prompt checks run first)."""
        self.flush_pending_bash()
        for check in self.hooks.pre_prompt:
            await check(self)
        initial: list[AgentMessage] = []
        for contribute in self.hooks.before_user_message:
            initial.extend(contribute(self, text))
        initial.append(user_message(text, images))
        initial.extend(self.hidden_next_turn)
        self.hidden_next_turn = []
        mention = build_file_mention(text, self.cwd)
        if mention is not None:
            initial.append(mention)
        for contribute in self.hooks.after_user_message:
            initial.extend(contribute(self, text))
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
            added = await self.agent.prompt(initial)
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
                    added = await self.agent.prompt(initial)
                    continue
                if action is None:
                    break
                if action.kind == "continue":
                    added = await self.agent.continue_run()
                else:
                    added = await self.agent.prompt(action.messages)
        finally:
            self._chain = None
            self._busy = False
            self._host_run_open = False
            self._next_prompt = None

    async def _after_run(self, added: list[AgentMessage]) -> RunAction | None:
        for handler in self.hooks.post_run:
            action = await handler.after_run(self, added)
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

    def steer(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        self._queueable(text)
        self.agent.steer(user_message(self.commands.expand(text), images))

    def follow_up(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        self._queueable(text)
        self.agent.follow_up(user_message(self.commands.expand(text), images))

    async def abort(self) -> None:
        """Cancel pending continuations and the active run; return once idle."""
        self._generation += 1
        self._next_prompt = None
        for handler in self.hooks.post_run:
            handler.cancel()
        self.agent.abort("aborted")
        chain = self._chain
        if chain is not None and chain is not asyncio.current_task():
            await asyncio.wait({chain})
        await self.agent.wait_for_idle()

    def flush_pending_bash(self) -> None:
        """Record user-bash results held back during a run (keeps tool pairs adjacent)."""
        for message in self.pending_bash_messages:
            self.agent.messages.append(message)
            self.store.append_message(message)
        self.pending_bash_messages = []

    def record_bash_message(self, message: AgentMessage) -> None:
        if self._busy:
            self.pending_bash_messages.append(message)
        else:
            self.agent.messages.append(message)
            self.store.append_message(message)

    # ---- models and thinking -----------------------------------------------------------
    def apply_thinking_level(self, level: str | None, *, record: bool = True) -> ThinkingLevel | None:
        """Resolve ``level`` against the model and apply it; record an entry if it changed."""
        resolved = resolve_level(self.agent.model, level)
        changed = resolved != self.agent.thinking_level
        self.agent.thinking_level = resolved
        if changed and record:
            self.store.append_thinking_level_change(resolved)
        return resolved

    def switch_model(
        self, model: Model, thinking: str | _KeepLevel | None = KEEP_LEVEL, *, role: str | None = "default"
    ) -> None:
        """Make ``model`` current (recording it), then apply ``thinking`` (None = unset).

        By default the current thinking level is re-resolved against the new model.
        """
        if not self.registry.api_key_for(model["provider"]) and not self.registry.is_keyless(
            model["provider"]
        ):
            raise CommandError(f"No API key for {model_ref(model)}")
        self.agent.model = model
        self.store.append_model_change(model_ref(model), role)
        # keeping re-clamps the current level; an unset level stays unset (agent-behaviour §9.3)
        requested = self.agent.thinking_level if isinstance(thinking, _KeepLevel) else thinking
        self.apply_thinking_level(requested)

    def state(self) -> dict[str, Any]:
        """The ``get_state`` payload."""
        data: dict[str, Any] = {
            "model": public_model(self.agent.model),
            "thinkingLevel": self.agent.thinking_level or "off",
            "isStreaming": self._busy,
            "isCompacting": self.is_compacting,
            "steeringMode": self.agent.steering.mode,
            "followUpMode": self.agent.follow_ups.mode,
            "interruptMode": self.agent.interrupt_mode,
        }
        if self.store.path is not None:
            data["sessionFile"] = str(self.store.path)
        data["sessionId"] = self.store.session_id
        if self.store.title:
            data["sessionName"] = self.store.title
        data["autoCompactionEnabled"] = bool(
            self.settings.get_bool("compaction.enabled", True)
            and self.settings.get("compaction.strategy") != "off"
        )
        data["messageCount"] = len(self.agent.messages)
        data["queuedMessageCount"] = self.queued_count
        data["todoPhases"] = self.todo_phases()
        data["systemPrompt"] = self.agent.system_prompt
        data["dumpTools"] = [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in self.agent.tools
        ]
        return data

    def todo_phases(self) -> list[dict[str, Any]]:
        """Current todo phases (the todo feature replaces this through ``todo_provider``)."""
        return self.todo_provider() if self.todo_provider is not None else []

    def shutdown(self) -> None:
        """Release the session file (called when the process is about to exit)."""
        for callback in self.hooks.on_shutdown:
            callback(self)
        self.store.close()
