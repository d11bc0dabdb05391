"""The agent loop in-process (fake LLM on loopback, real tools): concurrency, steering, abort, queues."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal, cast

from agent.test_agent_failures import fake_model, user
from conftest import user_texts, wire_model
from xcsh.agent.agent import Agent
from xcsh.agent.tool import AgentTool
from xcsh.agent.tool_calls import SKIPPED_TEXT
from xcsh.agent.types import AgentEvent, AgentToolResult
from xcsh.ai.abort import AbortSignal
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

if TYPE_CHECKING:
    from xcsh.agent.tool import ToolExecutor

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def ok(text: str) -> AgentToolResult:
    return {"content": [{"type": "text", "text": text}]}


def tool(
    name: str, execute: ToolExecutor, concurrency: Literal["shared", "exclusive"] = "shared"
) -> AgentTool:
    return AgentTool(name=name, description=name, parameters=SCHEMA, execute=execute, concurrency=concurrency)


def agent_for(fake: FakeLLM, tools: list[AgentTool], **options: Any) -> tuple[Agent, list[AgentEvent]]:
    agent = Agent(model=fake_model(fake), tools=tools, get_api_key=lambda provider: "test-key", **options)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    return agent, events


def results(events: list[AgentEvent]) -> dict[str, tuple[str, bool]]:
    """toolCallId → (result text, isError) from the ``tool_execution_end`` events."""
    return {
        e["toolCallId"]: (e["result"]["content"][0]["text"], e["isError"])
        for e in events
        if e["type"] == "tool_execution_end"
    }


async def test_shared_tool_calls_run_together_and_an_exclusive_call_waits_for_both(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        script.tool_calls(("a", "wait", {}), ("b", "wait", {}), ("c", "solo", {})), script.text("done")
    )
    log: list[str] = []
    both_running = asyncio.Event()
    release = asyncio.Event()

    async def wait(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any
    ) -> AgentToolResult:
        log.append(f"start {call_id}")
        if log.count("start a") + log.count("start b") == 2:
            both_running.set()
        await release.wait()
        log.append(f"end {call_id}")
        return ok(call_id)

    async def solo(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any
    ) -> AgentToolResult:
        log.append(f"start {call_id}")
        return ok(call_id)

    agent, events = agent_for(fake_llm, [tool("wait", wait), tool("solo", solo, "exclusive")])
    run = asyncio.ensure_future(agent.prompt([user("go")]))
    async with asyncio.timeout(10):
        await both_running.wait()
        assert log == ["start a", "start b"]  # the exclusive call has not started
        release.set()
        await run
    assert log[:2] == ["start a", "start b"] and log[-1] == "start c"
    assert set(log[2:4]) == {"end a", "end b"}
    assert results(events) == {"a": ("a", False), "b": ("b", False), "c": ("c", False)}
    assert len(fake_llm.requests) == 2


async def test_steering_in_immediate_mode_skips_the_unfinished_calls_and_is_sent_next(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script(script.tool_calls(("a", "quick", {}), ("b", "slow", {})), script.text("changed course"))
    quick_started = asyncio.Event()
    release_quick = asyncio.Event()
    slow_aborted = asyncio.Event()

    async def quick(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any
    ) -> AgentToolResult:
        quick_started.set()
        await release_quick.wait()
        return ok("quick done")

    async def slow(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any
    ) -> AgentToolResult:
        assert signal is not None
        signal.add_callback(slow_aborted.set)
        await slow_aborted.wait()
        return ok("slow stopped")

    agent, events = agent_for(
        fake_llm, [tool("quick", quick), tool("slow", slow)], interrupt_mode="immediate"
    )
    run = asyncio.ensure_future(agent.prompt([user("go")]))
    async with asyncio.timeout(10):
        await quick_started.wait()
        agent.steer(user("stop that, do this"))
        release_quick.set()
        await run
    assert results(events) == {"a": ("quick done", False), "b": (SKIPPED_TEXT, True)}
    assert slow_aborted.is_set()
    assert user_texts(fake_llm.requests[1].json)[-1] == "stop that, do this"
    assert [m["role"] for m in agent.messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "user",
        "assistant",
    ]


async def test_steering_in_wait_mode_lets_every_call_finish_before_it_is_sent(fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("a", "quick", {}), ("b", "quick", {})), script.text("ok"))
    first_started = asyncio.Event()
    release = asyncio.Event()

    async def quick(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any
    ) -> AgentToolResult:
        first_started.set()
        await release.wait()
        return ok(f"{call_id} done")

    agent, events = agent_for(fake_llm, [tool("quick", quick)], interrupt_mode="wait")
    run = asyncio.ensure_future(agent.prompt([user("go")]))
    async with asyncio.timeout(10):
        await first_started.wait()
        agent.steer(user("after the tools"))
        release.set()
        await run
    assert results(events) == {"a": ("a done", False), "b": ("b done", False)}
    assert user_texts(fake_llm.requests[1].json)[-1] == "after the tools"


async def test_abort_during_a_tool_call_signals_the_tool_and_ends_the_run(fake_llm: FakeLLM) -> None:
    fake_llm.script(script.tool_calls(("a", "slow", {})))
    started = asyncio.Event()

    async def slow(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any
    ) -> AgentToolResult:
        assert signal is not None
        stopped = asyncio.Event()
        signal.add_callback(stopped.set)
        started.set()
        await stopped.wait()
        raise RuntimeError("interrupted by abort")

    agent, events = agent_for(fake_llm, [tool("slow", slow)])
    run = asyncio.ensure_future(agent.prompt([user("go")]))
    async with asyncio.timeout(10):
        await started.wait()
        agent.abort("aborted")
        added = await run
    assert results(events) == {"a": ("interrupted by abort", True)}
    assert events[-1]["type"] == "agent_end" and not agent.is_running
    assert added[-1]["role"] == "assistant" and added[-1]["stopReason"] == "aborted"
    assert len(fake_llm.requests) == 1  # no model call after the abort


async def run_with_two_follow_ups(fake: FakeLLM, mode: str, replies: int) -> tuple[Agent, list[AgentEvent]]:
    gate = script.Gate()
    fake.script(script.hold("first", gate), *(script.text(f"reply {i}") for i in range(replies)))
    agent, events = agent_for(fake, [], follow_up_mode=mode)
    streaming = asyncio.Event()
    agent.subscribe(lambda e: streaming.set() if e["type"] == "message_update" else None)
    run = asyncio.ensure_future(agent.prompt([user("go")]))
    async with asyncio.timeout(10):
        await streaming.wait()
        agent.follow_up(user("f1"))
        agent.follow_up(user("f2"))
        gate.release()
        await run
    return agent, events


async def test_one_at_a_time_follow_ups_are_drained_one_per_turn(fake_llm: FakeLLM) -> None:
    agent, events = await run_with_two_follow_ups(fake_llm, "one-at-a-time", 2)
    assert [user_texts(r.json)[-1] for r in fake_llm.requests] == ["go", "f1", "f2"]
    assert [e["type"] for e in events].count("agent_end") == 1 and agent.queued_count == 0


async def test_all_mode_follow_ups_are_drained_together(fake_llm: FakeLLM) -> None:
    agent, _ = await run_with_two_follow_ups(fake_llm, "all", 1)
    assert len(fake_llm.requests) == 2
    assert user_texts(fake_llm.requests[1].json)[-2:] == ["f1", "f2"]
    assert agent.queued_count == 0


async def test_the_first_token_of_an_answer_that_arrived_in_one_burst_is_handed_on_before_the_rest() -> None:
    # One network read can carry a whole short answer. Listeners that deliver at the end of a
    # loop turn (the RPC frame writer gathers small frames until then) must get a turn after
    # the first delta, not only once the answer has ended and been persisted.
    from xcsh.ai.builder import MessageBuilder
    from xcsh.ai.options import StreamOptions
    from xcsh.ai.registry import register_provider
    from xcsh.ai.types import Context, Model

    async def burst(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        builder.start()
        for piece in ("one ", "two ", "three"):
            builder.text(piece)

    register_provider("test-burst", burst)
    model = cast(Model, {**wire_model("", "openai-completions", provider="test"), "api": "test-burst"})
    agent = Agent(model=model, tools=[], get_api_key=lambda provider: "k")
    loop = asyncio.get_running_loop()
    turns: list[str] = []
    at_end: list[int] = []

    def listen(event: AgentEvent) -> None:
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            if not turns and not at_end:
                loop.call_soon(turns.append, "a loop turn after the first delta")
        elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
            at_end.append(len(turns))

    agent.subscribe(listen)
    async with asyncio.timeout(10):
        await agent.prompt([user("hi")])
    assert at_end == [1]


async def test_an_abort_after_the_answer_streamed_ends_it_aborted_even_with_deeply_nested_arguments(
    fake_llm: FakeLLM,
) -> None:
    # the aborted copy of a message the provider had already finished was a recursive deepcopy:
    # tool arguments nested a few hundred levels raised RecursionError, the loop failed and the
    # message never ended (found by the second fuzzing round, seed 708)
    depth = 600
    arguments = '{"x":' + '{"a":' * depth + "1" + "}" * depth + "}"
    fake_llm.script(script.Reply(tool_calls=[script.ToolCallSpec("deep", "never_run", arguments, 400)]))

    async def never_run(call_id: str, args: dict[str, Any], signal: AbortSignal | None, update: Any) -> Any:
        raise AssertionError("an aborted answer's tool is not run")

    agent, events = agent_for(fake_llm, [tool("never_run", never_run)])

    def abort_at_the_end_of_the_call(event: AgentEvent) -> None:
        update = event.get("assistantMessageEvent") if event["type"] == "message_update" else None
        if update is not None and update["type"] == "toolcall_end":
            agent.abort("aborted")  # the provider has read the whole answer by now

    agent.subscribe(abort_at_the_end_of_the_call)
    async with asyncio.timeout(10):
        added = await agent.prompt([user("go")])
    kinds = [e["type"] for e in events]
    assert kinds.count("message_start") == kinds.count("message_end")
    answer, result = added[-2:]
    assert answer["role"] == "assistant" and answer["stopReason"] == "aborted"
    assert [b["type"] for b in answer["content"]] == ["toolCall"]
    assert "partialJson" not in answer["content"][0]
    assert result["role"] == "toolResult" and result["isError"] is True  # the call is answered, not run
