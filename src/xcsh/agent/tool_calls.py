"""Execute one assistant message's tool calls: validation, hooks, concurrency, interrupts.

Concurrency: a ``shared`` call starts once every earlier ``exclusive`` call has finished;
an ``exclusive`` call starts once every earlier call has finished. Results are emitted
and returned in completion order. In ``immediate`` interrupt mode, pending steering
checked after each completed call skips the calls that have not finished.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from xcsh.agent.commit_gate import enter_commit_gate, leave_commit_gate
from xcsh.agent.tool import INTENT_FIELD, AgentTool
from xcsh.agent.types import (
    AgentEvent,
    AgentMessage,
    AgentToolResult,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from xcsh.agent.validation import ArgumentValidationError, validate_arguments
from xcsh.ai.abort import AbortController, AbortSignal, linked_controller
from xcsh.ai.types import AssistantMessage, ToolCall, ToolResultMessage

SKIPPED_TEXT = "Skipped due to queued user message."

BeforeToolCall = Callable[[ToolCall, dict[str, Any]], Awaitable[str | None]]
AfterToolCall = Callable[[ToolCall, AgentToolResult, bool], Awaitable[AgentToolResult | None]]


class ToolRunContext(msgspec.Struct, kw_only=True):
    """What tool execution needs from the loop."""

    tools: dict[str, AgentTool]
    signal: AbortSignal
    emit: Callable[[AgentEvent], None]
    on_result: Callable[[ToolResultMessage], None]
    check_steering: Callable[[], list[AgentMessage]] | None = None
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    """How the grace an aborted call gets (:data:`ABANDON_AFTER_S`) is waited out; tests inject one."""


def split_intent(args: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Remove the injected intent field; return the clean arguments and the trimmed intent."""
    if INTENT_FIELD not in args:
        return args, None
    clean = {k: v for k, v in args.items() if k != INTENT_FIELD}
    raw = args.get(INTENT_FIELD)
    intent = raw.strip() if isinstance(raw, str) and raw.strip() else None
    return clean, intent


def _text_result(text: str) -> AgentToolResult:
    return {"content": [{"type": "text", "text": text}], "details": {}}


def _result_message(
    call: ToolCall, result: AgentToolResult, is_error: bool, is_warning: bool | None
) -> ToolResultMessage:
    message: ToolResultMessage = {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": list(result.get("content", [])),
        "details": result.get("details", {}),
        "isError": is_error,
        "timestamp": int(time.time() * 1000),
    }
    if is_warning is not None:
        message["isWarning"] = is_warning
    return message


def emit_result(
    ctx: ToolRunContext, call: ToolCall, result: AgentToolResult, is_error: bool, *, is_warning: bool | None
) -> ToolResultMessage:
    """Emit ``tool_execution_end`` and the toolResult message events; return the message."""
    end: ToolExecutionEndEvent = {
        "type": "tool_execution_end",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "result": result,
        "isError": is_error,
    }
    if is_warning is not None:
        end["isWarning"] = is_warning
    ctx.emit(end)
    message = _result_message(call, result, is_error, is_warning)
    ctx.on_result(message)
    ctx.emit({"type": "message_start", "message": message})
    ctx.emit({"type": "message_end", "message": message})
    return message


def emit_start(ctx: ToolRunContext, call: ToolCall, args: dict[str, Any], intent: str | None) -> None:
    start: ToolExecutionStartEvent = {
        "type": "tool_execution_start",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "args": args,
    }
    if intent:
        start["intent"] = intent
    ctx.emit(start)


def synthesize_failed_results(ctx: ToolRunContext, assistant: AssistantMessage) -> list[ToolResultMessage]:
    """Results for the tool calls of an errored or aborted assistant message (no execution)."""
    error = assistant.get("errorMessage")
    if assistant["stopReason"] == "aborted":
        text = f"Tool execution was aborted: {error}" if error else "Tool execution was aborted."
    else:
        text = (
            f"Tool execution failed due to an error: {error}"
            if error
            else "Tool execution failed due to an error."
        )
    out = []
    for block in assistant["content"]:
        if block["type"] != "toolCall":
            continue
        emit_start(ctx, block, block.get("arguments", {}), None)
        out.append(emit_result(ctx, block, _text_result(text), True, is_warning=None))
    return out


class _Batch(msgspec.Struct):
    ctx: ToolRunContext
    calls: list[ToolCall]
    results: list[ToolResultMessage] = msgspec.field(default_factory=list)
    steering: list[AgentMessage] = msgspec.field(default_factory=list)
    interrupted: bool = False
    controllers: dict[int, AbortController] = msgspec.field(default_factory=dict)
    finished: set[int] = msgspec.field(default_factory=set)
    started: set[int] = msgspec.field(default_factory=set)


async def execute_tool_calls(
    calls: list[ToolCall], ctx: ToolRunContext
) -> tuple[list[ToolResultMessage], list[AgentMessage]]:
    """Run ``calls``; return tool results (completion order) and steering that interrupted them."""
    batch = _Batch(ctx, calls)
    tasks: list[asyncio.Task[None]] = []
    exclusive_before: list[asyncio.Task[None]] = []
    for index, call in enumerate(calls):
        tool = ctx.tools.get(call["name"])
        exclusive = tool is not None and tool.concurrency == "exclusive"
        prerequisites = list(tasks) if exclusive else list(exclusive_before)
        task = asyncio.ensure_future(_run_call(batch, index, call, tool, prerequisites))
        tasks.append(task)
        if exclusive:
            exclusive_before.append(task)
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
    return batch.results, batch.steering


async def _run_call(
    batch: _Batch, index: int, call: ToolCall, tool: AgentTool | None, prerequisites: list[asyncio.Task[None]]
) -> None:
    ctx = batch.ctx
    if prerequisites:
        await asyncio.wait(prerequisites)
    args, intent = split_intent(call.get("arguments") or {})
    if intent:
        call["intent"] = intent
    if batch.interrupted:
        emit_start(ctx, call, args, intent)
        _finish(batch, index, call, _text_result(SKIPPED_TEXT), True, False)
        return
    batch.started.add(index)
    emit_start(ctx, call, args, intent)
    result, is_error = await _execute(batch, index, call, tool, args)
    is_warning = bool(result.get("isWarning", False)) if not is_error else False
    if batch.interrupted:
        result, is_error, is_warning = _text_result(SKIPPED_TEXT), True, False
    _finish(batch, index, call, result, is_error, is_warning)


async def _execute(
    batch: _Batch, index: int, call: ToolCall, tool: AgentTool | None, args: dict[str, Any]
) -> tuple[AgentToolResult, bool]:
    ctx = batch.ctx
    if tool is None:
        return _text_result(f"Tool {call['name']} not found"), True
    # events keep showing the arguments of tool_execution_start; the tool gets the validated copy
    shown = args
    if not tool.lenient:
        try:
            args = validate_arguments(tool.name, args, tool.parameters)
        except ArgumentValidationError as exc:
            return _text_result(str(exc)), True
    if ctx.before_tool_call is not None:
        blocked = await ctx.before_tool_call(call, args)
        if blocked:
            return _text_result(blocked), True
    controller, unlink = linked_controller(ctx.signal)
    batch.controllers[index] = controller

    def on_update(partial: AgentToolResult) -> None:
        if index in batch.finished:
            return
        ctx.emit(
            {
                "type": "tool_execution_update",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "args": shown,
                "partialResult": partial,
            }
        )

    is_error = False
    try:
        signal = controller.signal if tool.abortable else None
        result = await _unless_stuck(tool, lambda: tool.execute(call["id"], args, signal, on_update), ctx)
        if not isinstance(result, dict) or not isinstance(result.get("content"), list):
            result = _text_result(json.dumps(result, default=str) if result is not None else "")
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise
        # raised by the tool's own code while nobody cancels the run: an ordinary failure
        result, is_error = _text_result("CancelledError"), True
    except Exception as exc:  # tool boundary: every tool failure becomes an error result for the model
        result, is_error = _text_result(str(exc) or type(exc).__name__), True
    finally:
        unlink()
        batch.controllers.pop(index, None)
    if ctx.after_tool_call is not None:
        replaced = await ctx.after_tool_call(call, result, is_error)
        if replaced is not None:
            result = replaced
    return result, is_error


ABANDON_AFTER_S = 3.0
"""How long a tool call may go on after its run was aborted before it is abandoned."""


async def _unless_stuck(tool: AgentTool, start: Callable[[], Awaitable[Any]], ctx: ToolRunContext) -> Any:
    """``await start()``, but once the run's signal fires give the call :data:`ABANDON_AFTER_S` to
    end and then abandon it: its task is cancelled and, if it waits on a thread (a read blocked on
    a FIFO or a hung network file system, an extension's blocking call), the thread is left to
    itself and the loop gets a fresh default executor, so the abort answers, later calls do not
    queue behind the stuck thread and the process can still exit. Non-abortable tools run to
    completion as before whenever they finish within that time.

    The call runs with a commit gate of its own (:mod:`xcsh.agent.commit_gate`), closed when the
    call is abandoned, cancelled or done: a file write staged by a thread left behind is then
    discarded, never committed after the call's result (or the abort) was reported. A call that had already begun
    committing gets one more :data:`ABANDON_AFTER_S` to finish, and if it is abandoned even so,
    its result says that files may have changed."""
    gate, token = enter_commit_gate()
    try:
        task = asyncio.ensure_future(start())  # the task's context holds the gate
    finally:
        leave_commit_gate(token)
    aborted = asyncio.ensure_future(ctx.signal.wait())
    changing = False
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            await _until_done_or(task, ctx.sleep(ABANDON_AFTER_S))
        if not task.done():
            changing = not gate.close()
            if changing:  # it is writing its files: that takes no time unless the disk hangs
                await _until_done_or(task, ctx.sleep(ABANDON_AFTER_S))
    except asyncio.CancelledError:
        gate.close()
        task.cancel()
        raise
    finally:
        aborted.cancel()
    if not task.done():
        task.cancel()
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        from concurrent.futures import ThreadPoolExecutor

        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(thread_name_prefix="xcsh-after-abandon")
        )
        text = (
            f"Aborted: {tool.name} did not finish within {ABANDON_AFTER_S:g} s of the abort and was abandoned"
        )
        if changing:
            raise RuntimeError(f"{text} while it was writing its files: some of them may have changed.")
        raise RuntimeError(f"{text}.")
    try:
        return await task
    finally:
        gate.close(finished=True)  # its result is out: a thread it left behind changes nothing any more


async def _until_done_or(task: asyncio.Future[Any], pause: Awaitable[Any]) -> None:
    """Wait until ``task`` is done or ``pause`` is over, whichever comes first."""
    timer = asyncio.ensure_future(pause)
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        timer.cancel()


def _finish(
    batch: _Batch,
    index: int,
    call: ToolCall,
    result: AgentToolResult,
    is_error: bool,
    is_warning: bool | None,
) -> None:
    ctx = batch.ctx
    batch.finished.add(index)
    batch.results.append(emit_result(ctx, call, result, is_error, is_warning=is_warning))
    if batch.interrupted or ctx.check_steering is None:
        return
    if len(batch.finished) == len(batch.calls):
        return
    steering = ctx.check_steering()
    if not steering:
        return
    batch.interrupted = True
    batch.steering = steering
    for other, controller in list(batch.controllers.items()):
        if other not in batch.finished:
            controller.abort("Skipped due to queued user message")
