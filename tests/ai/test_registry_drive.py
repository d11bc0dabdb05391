"""How a model call's stream ends: the provider runs in the stream's own task (registry._drive)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from conftest import wire_model
from xcsh.ai.abort import AbortController
from xcsh.ai.builder import MessageBuilder
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import register_provider, stream
from xcsh.ai.types import Context, Model


def _model(api: str) -> Model:
    """A catalogue entry whose ``api`` is a provider the test registers."""
    return cast(Model, {**wire_model("", "openai-completions", provider="test"), "api": api})


CONTEXT: Any = {"messages": []}


async def test_an_abort_while_the_provider_waits_ends_the_answer_aborted_and_runs_its_cleanup() -> None:
    cleaned: list[str] = []
    waiting = asyncio.Event()

    async def slow(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        builder.start()
        builder.text("partial")
        try:
            waiting.set()
            await asyncio.Event().wait()  # never set: only the abort ends this
        finally:
            cleaned.append("closed")

    register_provider("test-slow", slow)
    controller = AbortController()
    answer = stream(_model("test-slow"), CONTEXT, StreamOptions(signal=controller.signal))
    await asyncio.wait_for(waiting.wait(), 10)
    controller.abort()
    message = await asyncio.wait_for(answer.result(), 10)
    assert message["stopReason"] == "aborted" and cleaned == ["closed"]
    assert answer.task is not None
    await asyncio.wait_for(answer.task, 10)
    assert not answer.task.cancelled()  # the abort's cancellation ended inside the call


async def test_a_cancellation_raised_by_the_provider_itself_is_an_error_of_the_call() -> None:
    async def gives_up(
        model: Model, context: Context, options: StreamOptions, builder: MessageBuilder
    ) -> None:
        builder.start()
        raise asyncio.CancelledError

    register_provider("test-gives-up", gives_up)
    message = await asyncio.wait_for(stream(_model("test-gives-up"), CONTEXT, StreamOptions()).result(), 10)
    assert message["stopReason"] == "error" and message.get("errorMessage")


async def test_cancelling_the_calls_task_from_outside_ends_the_answer_aborted_and_the_task_cancelled() -> (
    None
):
    waiting = asyncio.Event()

    async def slow(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        builder.start()
        waiting.set()
        await asyncio.Event().wait()

    register_provider("test-outside", slow)
    answer = stream(_model("test-outside"), CONTEXT, StreamOptions(signal=AbortController().signal))
    await asyncio.wait_for(waiting.wait(), 10)
    assert answer.task is not None
    answer.task.cancel()
    message = await asyncio.wait_for(answer.result(), 10)
    assert message["stopReason"] == "aborted"
    await asyncio.wait({answer.task})
    assert answer.task.cancelled()


async def test_an_abort_and_a_cancellation_from_outside_together_leave_the_task_cancelled() -> None:
    waiting = asyncio.Event()

    async def slow(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        builder.start()
        waiting.set()
        await asyncio.Event().wait()

    register_provider("test-both", slow)
    controller = AbortController()
    answer = stream(_model("test-both"), CONTEXT, StreamOptions(signal=controller.signal))
    await asyncio.wait_for(waiting.wait(), 10)
    assert answer.task is not None
    controller.abort()  # cancels the task through the signal's callback...
    answer.task.cancel()  # ...and its owner cancels it too, before it runs again
    message = await asyncio.wait_for(answer.result(), 10)
    assert message["stopReason"] == "aborted"
    await asyncio.wait({answer.task})
    assert answer.task.cancelled()  # the owner's cancellation is not swallowed with the abort's


async def test_an_abort_after_the_provider_returned_changes_nothing() -> None:
    async def quick(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        builder.start()
        builder.text("done")
        builder.finish()

    register_provider("test-quick", quick)
    controller = AbortController()
    answer = stream(_model("test-quick"), CONTEXT, StreamOptions(signal=controller.signal))
    message = await asyncio.wait_for(answer.result(), 10)
    assert answer.task is not None
    await asyncio.wait_for(answer.task, 10)
    controller.abort()
    assert message["stopReason"] == "stop" and [b.get("text") for b in message["content"]] == ["done"]
