"""Agent: live state around the loop — context, queues, abort, subscribers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from xcsh.agent.queue import MessageQueue
from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortController, AbortSignal
from xcsh.ai.options import StreamOptions

if TYPE_CHECKING:
    from xcsh.agent.loop import RecoveryHook, StreamFn
    from xcsh.agent.tool_calls import AfterToolCall, BeforeToolCall
    from xcsh.agent.types import AgentEvent, AgentMessage
    from xcsh.ai.types import Message, Model, ThinkingLevel

logger = logging.getLogger(__name__)

LLM_ROLES = frozenset({"user", "developer", "assistant", "toolResult"})


class AgentBusyError(RuntimeError):
    """A run is already in progress."""


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    return [cast("Message", m) for m in messages if m.get("role") in LLM_ROLES]


class Agent:
    """Holds the live context and runs the loop over it, one run at a time.

    ``subscribe`` receives every event synchronously, in order. ``prompt`` and
    ``continue_run`` return when the run has ended; ``abort`` ends it early.
    """

    def __init__(
        self,
        *,
        model: Model,
        system_prompt: str = "",
        tools: list[AgentTool] | None = None,
        thinking_level: ThinkingLevel | None = None,
        convert_to_llm: Callable[[list[AgentMessage]], list[Message]] = default_convert_to_llm,
        get_api_key: Callable[[str], str | None] = lambda provider: None,
        stream_fn: StreamFn | None = None,
        steering_mode: str = "one-at-a-time",
        follow_up_mode: str = "one-at-a-time",
        interrupt_mode: str = "wait",
        intent_tracing: bool | Callable[[Model], bool] = True,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        options_factory: Callable[[Model, AbortSignal], StreamOptions] | None = None,
        recovery_message: RecoveryHook | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.tools: list[AgentTool] = list(tools or [])
        self.thinking_level = thinking_level
        self.messages: list[AgentMessage] = []
        self.convert_to_llm = convert_to_llm
        self.get_api_key = get_api_key
        self.steering = MessageQueue(steering_mode)
        self.follow_ups = MessageQueue(follow_up_mode)
        self.interrupt_mode = interrupt_mode
        # a bool, or a per-model decision (small constrained models do better without the field)
        self.intent_tracing = intent_tracing
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        # one more turn for a model that stopped too early (see loop: recovery turns)
        self.recovery_message = recovery_message
        # how the grace an aborted tool call gets before it is abandoned is waited out (tests inject one)
        self._sleep = sleep
        self.next_tool_choice: str | None = None
        self._stream_fn = stream_fn
        self._options_factory = options_factory
        self._subscribers: list[Callable[[AgentEvent], None]] = []
        self._controller: AbortController | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    # ---- events ----------------------------------------------------------------------
    def subscribe(self, listener: Callable[[AgentEvent], None]) -> Callable[[], None]:
        self._subscribers.append(listener)
        return lambda: self._subscribers.remove(listener) if listener in self._subscribers else None

    def _emit(self, event: AgentEvent) -> None:
        for listener in list(self._subscribers):
            listener(event)

    # ---- state -----------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        return not self._idle.is_set()

    def steer(self, message: AgentMessage) -> None:
        self.steering.push(message)

    def follow_up(self, message: AgentMessage) -> None:
        self.follow_ups.push(message)

    def clear_queues(self) -> None:
        self.steering.clear()
        self.follow_ups.clear()

    @property
    def queued_count(self) -> int:
        return len(self.steering) + len(self.follow_ups)

    def abort(self, reason: str | None = None) -> None:
        if self._controller is not None:
            self._controller.abort(reason)

    @property
    def signal(self) -> AbortSignal | None:
        return self._controller.signal if self._controller is not None else None

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    # ---- runs ------------------------------------------------------------------------
    async def prompt(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        """Start a run with ``messages`` as its initial messages and wait for it to end."""
        return await self._run(messages)

    async def continue_run(self) -> list[AgentMessage]:
        """Start a run without new messages (retry, compaction recovery, reminders)."""
        return await self._run([])

    def begin_run(self) -> None:
        """Mark the agent busy synchronously (so a second prompt is refused at once)."""
        if self.is_running:
            raise AgentBusyError("Agent is already running")
        self._idle.clear()
        self._controller = AbortController()

    async def _run(self, initial: list[AgentMessage]) -> list[AgentMessage]:
        if self._controller is None or self._idle.is_set():
            self.begin_run()
        controller = self._controller
        assert controller is not None
        # the loop and tool execution load with the first run (or the idle warm-up), not at start-up
        from xcsh.agent.loop import LoopHooks, failure_message, run_loop

        hooks = LoopHooks(
            emit=self._emit,
            messages=self.messages,
            get_model=lambda: self.model,
            get_system_prompt=lambda: self.system_prompt,
            get_tools=lambda: self.tools,
            make_options=self._make_options,
            convert_to_llm=self.convert_to_llm,
            stream_fn=self._resolve_stream_fn(),
            dequeue_steering=self.steering.drain,
            dequeue_follow_up=self.follow_ups.drain,
            interrupt_immediate=lambda: self.interrupt_mode != "wait",
            intent_tracing=self._intent_tracing_for,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            take_tool_choice=self._take_tool_choice,
            recovery_message=self.recovery_message,
            sleep=self._sleep,
        )
        try:
            return await run_loop(hooks, initial, controller.signal)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # loop boundary: an internal failure still ends the run with agent_end
            logger.exception("agent loop failed")
            message = failure_message(
                self.model, str(exc) or type(exc).__name__, aborted=controller.signal.aborted
            )
            # the failure stays visible in the context (and to post-run handlers such as retry)
            self.messages.append(message)
            self._emit({"type": "agent_end", "messages": [message]})
            return [message]
        finally:
            self._controller = None
            self._idle.set()

    def _intent_tracing_for(self, model: Model) -> bool:
        tracing = self.intent_tracing
        return tracing(model) if callable(tracing) else tracing

    def _take_tool_choice(self) -> str | None:
        choice, self.next_tool_choice = self.next_tool_choice, None
        return choice

    def _resolve_stream_fn(self) -> StreamFn:
        if self._stream_fn is not None:
            return self._stream_fn
        from xcsh.ai.registry import stream

        return stream

    def _make_options(self, model: Model, signal: AbortSignal) -> StreamOptions:
        if self._options_factory is not None:
            options = self._options_factory(model, signal)
        else:
            options = StreamOptions(
                api_key=self.get_api_key(model["provider"]), reasoning=self.thinking_level
            )
        options.signal = signal
        return options
