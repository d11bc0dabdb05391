"""The agent loop: model call → tool calls → results → next call, until the model stops.

One run emits ``agent_start`` … ``agent_end``. Steering messages are delivered at the
start of a run and after each turn; follow-ups only when the agent would otherwise stop.

Recovery turns: when the model's reply would end the run (an answer, no tool call, stop
reason ``stop``, nothing queued), ``recovery_message`` (if given) is asked whether the
model gets one more turn. It sees the unresolved failures and the run's messages, and
returns a ``RecoveryTurn`` (a message delivered like a steering message, and the tool
choice for that turn) or None. A failed tool call stays unresolved until a later call of
the same tool succeeds, or a later call of a tool that may change things (concurrency
``exclusive``: edit, write, bash …) succeeds; successful reads and searches resolve
nothing. At most ``MAX_RECOVERY_TURNS`` per run, so a run always ends.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable
from operator import is_
from typing import TYPE_CHECKING, Any, cast

import msgspec

from xcsh.agent.tool import INTENT_FIELD, AgentTool
from xcsh.agent.types import AgentEvent, AgentMessage
from xcsh.ai.abort import AbortSignal
from xcsh.ai.builder import ABORTED_MESSAGE, empty_assistant_message
from xcsh.ai.options import StreamOptions
from xcsh.ai.stream import AssistantMessageStream
from xcsh.ai.types import AssistantMessage, Context, Message, Model, Tool, ToolCall, ToolResultMessage

if TYPE_CHECKING:
    from xcsh.agent.tool_calls import AfterToolCall, BeforeToolCall, ToolRunContext

StreamFn = Callable[[Model, Context, StreamOptions], AssistantMessageStream]

MAX_RECOVERY_TURNS = 2


class RecoveryTurn(msgspec.Struct, frozen=True):
    """One more turn for a model that stopped too early: what it is told, and its tool choice."""

    message: AgentMessage
    tool_choice: str | None = None


# (model, unresolved failed results, the run's messages so far) → a turn, or None to end
RecoveryHook = Callable[[Model, list[ToolResultMessage], list[AgentMessage]], RecoveryTurn | None]

INTENT_SCHEMA = {
    "type": "string",
    "description": "A few words on why you are calling this tool (shown to the user).",
}


class LoopHooks(msgspec.Struct, kw_only=True):
    """What the loop reads from live state at each turn, and how it reports."""

    emit: Callable[[AgentEvent], None]
    messages: list[AgentMessage]
    get_model: Callable[[], Model]
    get_system_prompt: Callable[[], str]
    get_tools: Callable[[], list[AgentTool]]
    make_options: Callable[[Model, AbortSignal], StreamOptions]
    convert_to_llm: Callable[[list[AgentMessage]], list[Message]]
    stream_fn: StreamFn
    dequeue_steering: Callable[[], list[AgentMessage]]
    dequeue_follow_up: Callable[[], list[AgentMessage]]
    interrupt_immediate: Callable[[], bool]
    intent_tracing: Callable[[Model], bool] = lambda model: True
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    take_tool_choice: Callable[[], str | None] = lambda: None
    recovery_message: RecoveryHook | None = None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep  # the grace of an aborted tool call


def llm_tool(tool: AgentTool, intent_tracing: bool) -> Tool:
    """The model-facing definition of ``tool`` (with the intent field when tracing)."""
    params = tool.parameters
    # a schema whose properties/required have another shape (a host's) goes to the model as given
    if (
        intent_tracing
        and params.get("type") == "object"
        and isinstance(params.get("properties", {}), dict)
        and isinstance(params.get("required", []), list)
    ):
        params = dict(params)
        params["properties"] = {INTENT_FIELD: INTENT_SCHEMA, **(params.get("properties") or {})}
        params["required"] = [INTENT_FIELD, *[r for r in params.get("required") or [] if r != INTENT_FIELD]]
    return {"name": tool.name, "description": tool.description, "parameters": params}


class _Definitions:
    """:func:`llm_tool` over the agent's tools, the same definition objects again while neither a
    tool nor any field :func:`llm_tool` reads has changed (by identity), so the providers can keep
    their converted and encoded form (``xcsh.ai.tool_defs``). The latest list only."""

    __slots__ = ("_latest",)

    def __init__(self) -> None:
        # key and definitions replaced as one tuple: safe when sessions run on several threads
        self._latest: tuple[list[Any], list[Tool]] = ([], [])

    def __call__(self, tools: list[AgentTool], tracing: bool) -> list[Tool]:
        key: list[Any] = [tracing]
        for tool in tools:
            key += (tool, tool.name, tool.description, tool.parameters)
        known, defs = self._latest
        if len(key) == len(known) and all(map(is_, key, known)):
            return list(defs)
        defs = [llm_tool(tool, tracing) for tool in tools]
        self._latest = (key, defs)
        return list(defs)


_definitions = _Definitions()


async def run_loop(hooks: LoopHooks, initial: list[AgentMessage], signal: AbortSignal) -> list[AgentMessage]:
    """Run one agent run; returns the messages it added (also carried by ``agent_end``)."""
    added: list[AgentMessage] = []
    emit = hooks.emit
    emit({"type": "agent_start"})
    emit({"type": "turn_start"})
    for message in initial:
        hooks.messages.append(message)
        added.append(message)
        emit({"type": "message_start", "message": message})
        emit({"type": "message_end", "message": message})
    pending = hooks.dequeue_steering()
    first_turn = True
    failed: dict[str, ToolResultMessage] = {}  # unresolved failures: tool name → its last failed result
    recoveries = 0
    forced_choice: str | None = None
    while True:
        has_tool_calls = True
        while has_tool_calls or pending:
            if not first_turn:
                emit({"type": "turn_start"})
            first_turn = False
            for message in pending:
                hooks.messages.append(message)
                added.append(message)
                emit({"type": "message_start", "message": message})
                emit({"type": "message_end", "message": message})
            pending = []
            assistant = await _stream_assistant(hooks, signal, forced_choice)
            # tool execution loads once a first answer is in, not before the first request
            # (docs/performance.md, "Fifth session: immediate prompt")
            from xcsh.agent.tool_calls import execute_tool_calls, synthesize_failed_results

            forced_choice = None
            added.append(assistant)
            ctx = _tool_context(hooks, signal, added)
            if assistant["stopReason"] in ("error", "aborted"):
                synthesized = synthesize_failed_results(ctx, assistant)
                emit({"type": "turn_end", "message": assistant, "toolResults": synthesized})
                emit({"type": "agent_end", "messages": added})
                return added
            calls: list[ToolCall] = [b for b in assistant["content"] if b["type"] == "toolCall"]
            has_tool_calls = bool(calls)
            results: list[ToolResultMessage] = []
            steering: list[AgentMessage] = []
            if calls:
                results, steering = await execute_tool_calls(calls, ctx)
            emit({"type": "turn_end", "message": assistant, "toolResults": results})
            pending = steering or hooks.dequeue_steering()
            _track_failures(failed, results, ctx.tools)
            if (
                not (calls or pending)
                and hooks.recovery_message is not None
                and recoveries < MAX_RECOVERY_TURNS
                and assistant["stopReason"] == "stop"
            ):
                turn = hooks.recovery_message(hooks.get_model(), list(failed.values()), list(added))
                if turn is not None:
                    recoveries += 1
                    pending = [turn.message]
                    forced_choice = turn.tool_choice
        follow_ups = hooks.dequeue_follow_up()
        if follow_ups:
            pending = follow_ups
            continue
        break
    emit({"type": "agent_end", "messages": added})
    return added


def _track_failures(
    failed: dict[str, ToolResultMessage], results: list[ToolResultMessage], tools: dict[str, AgentTool]
) -> None:
    """Update the unresolved failures (tool name → last failed result) with a turn's results."""
    for result in results:
        name = result["toolName"]
        if result["isError"]:
            failed[name] = result
        elif name in tools and tools[name].concurrency == "exclusive":
            failed.clear()  # the model changed something since: it moved on
        else:
            failed.pop(name, None)


def _tool_context(hooks: LoopHooks, signal: AbortSignal, added: list[AgentMessage]) -> ToolRunContext:
    from xcsh.agent.tool_calls import ToolRunContext

    def on_result(message: ToolResultMessage) -> None:
        hooks.messages.append(message)
        added.append(message)

    return ToolRunContext(
        tools={t.name: t for t in hooks.get_tools()},
        signal=signal,
        emit=hooks.emit,
        on_result=on_result,
        check_steering=hooks.dequeue_steering if hooks.interrupt_immediate() else None,
        before_tool_call=hooks.before_tool_call,
        after_tool_call=hooks.after_tool_call,
        sleep=hooks.sleep,
    )


async def _stream_assistant(
    hooks: LoopHooks, signal: AbortSignal, forced_choice: str | None = None
) -> AssistantMessage:
    model = hooks.get_model()
    tools = [t for t in hooks.get_tools() if not t.hidden]
    context: Context = {
        "systemPrompt": hooks.get_system_prompt(),
        "messages": hooks.convert_to_llm(hooks.messages),
    }
    if tools:
        tracing = hooks.intent_tracing(model)
        context["tools"] = _definitions(tools, tracing)
    options = hooks.make_options(model, signal)
    choice = hooks.take_tool_choice() or forced_choice
    if choice:
        options.tool_choice = choice
    stream = hooks.stream_fn(model, context, options)
    started = False
    partial: AssistantMessage | None = None
    seen: AssistantMessage | None = None
    first_delta_out = False
    async for event in stream:
        if event["type"] == "start":
            partial = event["partial"]
            started = True
            hooks.emit({"type": "message_start", "message": partial})
        elif event["type"] == "done" or event["type"] == "error":
            continue
        else:
            seen = event["partial"]
            hooks.emit({"type": "message_update", "assistantMessageEvent": event, "message": seen})
            if not first_delta_out and event["type"].endswith("_delta"):
                first_delta_out = True
                # one turn of the event loop, so listeners that deliver at the end of a turn (the
                # RPC frame writer) send the first token now, not after the rest of a burst that
                # arrived with it has been handled (the answer's end, its persisting …)
                await asyncio.sleep(0)
        if signal.aborted:
            break  # abandoned at the next event, even if the provider already buffered more
    final = await stream.result()
    if signal.aborted and final["stopReason"] not in ("aborted", "error"):
        final = _aborted_copy(seen or partial or final)
    # a response joins the live context when it ends, as every other message does
    hooks.messages.append(final)
    if not started:
        hooks.emit({"type": "message_start", "message": final})
    hooks.emit({"type": "message_end", "message": final})
    return final


def _aborted_copy(snapshot: AssistantMessage) -> AssistantMessage:
    """The message as far as it was streamed, ended as aborted (the provider finished too late).

    The message, its block list, its blocks and its usage are copied (the snapshot went out in
    events); block values such as tool-call arguments are shared, never changed once made, and
    may be nested deeper than a recursive copy follows (a model's arguments, ~1,000 levels).
    """
    message = cast(AssistantMessage, dict(snapshot))
    content: list[Any] = []
    for block in snapshot["content"]:
        copied = dict(block)
        if copied["type"] == "toolCall":
            copied.pop("partialJson", None)
            copied.pop("partialArgs", None)
        content.append(copied)
    message["content"] = content
    if isinstance(snapshot.get("usage"), dict):
        message["usage"] = copy.deepcopy(snapshot["usage"])
    message["stopReason"] = "aborted"
    message["errorMessage"] = ABORTED_MESSAGE
    return message


def failure_message(model: Model, error: str, *, aborted: bool) -> AssistantMessage:
    """The lone assistant message of an ``agent_end`` after an unexpected loop failure."""
    message = empty_assistant_message(model)
    message["content"] = [{"type": "text", "text": ""}]
    message["stopReason"] = "aborted" if aborted else "error"
    message["errorMessage"] = error
    message["timestamp"] = int(time.time() * 1000)
    return copy.deepcopy(message)
