"""The conformance scenarios (a fast subset of shared/spec/scenarios.md, by the same names).

Each scenario scripts the fake LLM, drives the agent through a :class:`ScenarioContext`
and records differences; it never inspects the agent's files or internals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from xcsh.conformance.driver import Frame, ScenarioContext
from xcsh.conformance.match import ABSENT, Pred, non_empty_string
from xcsh.testing import script

BUSY = "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion."

ECHO_TOOL = {
    "name": "echo_host",
    "label": "Echo Host",
    "description": "Echo a value",
    "parameters": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": False,
    },
}


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    summary: str
    run: Callable[[ScenarioContext], Awaitable[None]]
    args: tuple[str, ...] = field(default=())


def ok(cid: str, command: str) -> Frame:
    return {"id": cid, "type": "response", "command": command, "success": True}


def user(text: str) -> Frame:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str, stop: str = "stop") -> Frame:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": stop,
        "provider": "fake",
        "model": "fake-model",
    }


def run_frames(u: str, r: str) -> list[Frame]:
    """RUN(u, r) of scenarios.md §0.3 without its message_update frames."""
    return [
        {"type": "agent_start"},
        {"type": "turn_start"},
        {"type": "message_start", "message": user(u)},
        {"type": "message_end", "message": user(u)},
        {"type": "message_start", "message": {"role": "assistant", "content": []}},
        {"type": "message_end", "message": assistant(r)},
        {"type": "turn_end", "message": {"role": "assistant"}, "toolResults": []},
        {"type": "agent_end", "messages": [{"role": "user"}, {"role": "assistant"}]},
    ]


def deltas_join_to(reply: str) -> Any:
    def test(frames: list[Frame]) -> bool:
        events = [f["assistantMessageEvent"] for f in frames if f.get("type") == "message_update"]
        deltas = [e.get("delta", "") for e in events if e.get("type") == "text_delta"]
        return bool(deltas) and "".join(deltas) == reply

    return Pred(f"text_delta frames joining to {reply!r}", test)


async def ready_and_state(ctx: ScenarioContext) -> None:
    """S01: the first frame is ``ready``; get_state reports an idle, empty session."""
    await ctx.expect("ready", [{"type": "ready", "version": non_empty_string()}], skip=())
    state = await ctx.request({"id": "s1", "type": "get_state"})
    ctx.check(
        "get_state",
        {
            **ok("s1", "get_state"),
            "data": {
                "model": {"provider": "fake", "id": "fake-model"},
                "isStreaming": False,
                "isCompacting": False,
                "messageCount": 0,
                "queuedMessageCount": 0,
                "thinkingLevel": "off",
                "sessionId": non_empty_string(),
            },
        },
        state,
    )


async def ids_and_unknown_commands(ctx: ScenarioContext) -> None:
    """S02/S03: ids are echoed, omitted when absent; unknown commands fail without an id."""
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    ctx.send({"id": "x-1", "type": "set_steering_mode", "mode": "all"})
    await ctx.expect("id echoed", [ok("x-1", "set_steering_mode")])
    ctx.send({"type": "set_steering_mode", "mode": "one-at-a-time"})
    await ctx.expect(
        "id omitted", [{"type": "response", "command": "set_steering_mode", "success": True, "id": ABSENT}]
    )
    ctx.send({"id": "u1", "type": "frobnicate"})
    await ctx.expect(
        "unknown command",
        [
            {
                "type": "response",
                "command": "frobnicate",
                "success": False,
                "error": "Unknown command: frobnicate",
                "id": ABSENT,
            }
        ],
    )


async def malformed_json(ctx: ScenarioContext) -> None:
    """S04: a line that is not JSON gets a ``parse`` error; blank lines are ignored."""
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    ctx.send(b"\n{not json\n")
    parse_error = Pred(
        "starts with 'Failed to parse command:'", lambda v: v.startswith("Failed to parse command:")
    )
    await ctx.expect(
        "parse error", [{"type": "response", "command": "parse", "success": False, "error": parse_error}]
    )
    await ctx.request({"id": "after", "type": "get_state"})


async def simple_prompt(ctx: ScenarioContext) -> None:
    """S07: a prompt is acknowledged, then RUN(u, r); S08: the getters see the run."""
    ctx.llm.script(script.text("Hello there."))
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    ctx.send({"id": "p1", "type": "prompt", "message": "Say hello?"})
    await ctx.expect("run", [ok("p1", "prompt"), *run_frames("Say hello?", "Hello there.")])
    ctx.check("message_update deltas", deltas_join_to("Hello there."), ctx.agent.frames)
    text = await ctx.request({"id": "t", "type": "get_last_assistant_text"})
    ctx.check(
        "get_last_assistant_text",
        {**ok("t", "get_last_assistant_text"), "data": {"text": "Hello there."}},
        text,
    )
    messages = await ctx.request({"id": "m", "type": "get_messages"})
    ctx.check(
        "get_messages",
        {**ok("m", "get_messages"), "data": {"messages": [user("Say hello?"), assistant("Hello there.")]}},
        messages,
    )


async def prompt_while_busy(ctx: ScenarioContext) -> None:
    """S11 + S17: a second prompt is refused while streaming; abort ends the run as aborted."""
    ctx.llm.script(script.hold("Work"))
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    ctx.send({"id": "p1", "type": "prompt", "message": "long task?"})
    await ctx.take(lambda f: f.get("type") == "message_update", "first message_update")
    ctx.send({"id": "p2", "type": "prompt", "message": "another?"})
    await ctx.expect_unordered(
        "busy prompt",
        [
            ok("p2", "prompt"),
            {"id": "p2", "type": "response", "command": "prompt", "success": False, "error": BUSY},
        ],
    )
    ctx.send({"id": "ab", "type": "abort"})
    aborted = {"role": "assistant", "stopReason": "aborted", "content": [{"type": "text", "text": "Work"}]}
    frames = await ctx.until("abort", "agent_end")
    ended = [f for f in frames if f.get("type") == "message_end"]
    ctx.check(
        "aborted message_end", {"type": "message_end", "message": aborted}, ended[-1] if ended else None
    )
    await ctx.expect_unordered("abort response", [ok("ab", "abort")])
    state = await ctx.request({"id": "q", "type": "get_state"})
    ctx.check("idle after abort", {**ok("q", "get_state"), "data": {"isStreaming": False}}, state)


async def follow_up_while_streaming(ctx: ScenarioContext) -> None:
    """S12: a follow-up sent while streaming runs as a second turn of the same run."""
    ctx.llm.script(script.text("Part one done.", delay_ms=400), script.text("Risks: none."))
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    ctx.send({"id": "p1", "type": "prompt", "message": "Summarize this repo?"})
    await ctx.take(lambda f: f.get("type") == "message_update", "first message_update")
    follow = {"id": "p2", "type": "prompt", "message": "Also include risks", "streamingBehavior": "followUp"}
    await ctx.request(follow)
    frames = await ctx.until("run", "agent_end")
    kinds = [f["type"] for f in frames if f.get("type") not in ("message_update", "response")]
    ctx.check(
        "one run, two turns",
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ],
        kinds,
    )
    ctx.check(
        "agent_end messages",
        {
            "messages": [
                user("Summarize this repo?"),
                assistant("Part one done."),
                user("Also include risks"),
                assistant("Risks: none."),
            ]
        },
        frames[-1],
    )


async def host_tool_round_trip(ctx: ScenarioContext) -> None:
    """S33: a host tool call goes to the host, its progress and result come back as events."""
    ctx.llm.script(script.tool_calls(("call_1", "echo_host", {"message": "hello"})), script.text("finished"))
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    registered = await ctx.request({"id": "h", "type": "set_host_tools", "tools": [ECHO_TOOL]})
    ctx.check(
        "set_host_tools", {**ok("h", "set_host_tools"), "data": {"toolNames": ["echo_host"]}}, registered
    )
    ctx.send({"id": "p1", "type": "prompt", "message": "use the tool?"})
    call = await ctx.take(lambda f: f.get("type") == "host_tool_call", "host_tool_call")
    ctx.check(
        "host_tool_call",
        {
            "type": "host_tool_call",
            "id": non_empty_string(),
            "toolCallId": "call_1",
            "toolName": "echo_host",
            "arguments": {"message": "hello"},
        },
        call,
    )
    progress = {"content": [{"type": "text", "text": "working"}]}
    ctx.send({"type": "host_tool_update", "id": call["id"], "partialResult": progress})
    update = await ctx.take(lambda f: f.get("type") == "tool_execution_update", "tool_execution_update")
    ctx.check("tool_execution_update", {"toolCallId": "call_1", "partialResult": progress}, update)
    result = {"content": [{"type": "text", "text": "done"}], "details": {"k": 1}}
    ctx.send({"type": "host_tool_result", "id": call["id"], "result": result})
    frames = await ctx.until("run", "agent_end")
    ends = [f for f in frames if f.get("type") == "tool_execution_end"]
    ctx.check(
        "tool_execution_end",
        [
            {
                "type": "tool_execution_end",
                "toolCallId": "call_1",
                "toolName": "echo_host",
                "result": result,
                "isError": False,
            }
        ],
        ends,
    )
    ctx.check(
        "final answer",
        {
            "type": "agent_end",
            "messages": [
                {"role": "user"},
                {"role": "assistant", "stopReason": "toolUse"},
                {"role": "toolResult", "toolCallId": "call_1"},
                assistant("finished"),
            ],
        },
        frames[-1],
    )
    request = ctx.llm.requests[-1].json if len(ctx.llm.requests) == 2 else None
    tool_messages = [m for m in (request or {}).get("messages", []) if m.get("role") == "tool"]
    ctx.check(
        "request 2 carries the tool result", [{"tool_call_id": "call_1", "content": "done"}], tool_messages
    )


async def new_session_resets(ctx: ScenarioContext) -> None:
    """S22: new_session answers ``cancelled: false`` and empties the conversation."""
    ctx.llm.script(script.text("ok"))
    await ctx.expect("ready", [{"type": "ready"}], skip=())
    ctx.send({"id": "p1", "type": "prompt", "message": "hi?"})
    await ctx.until("run", "agent_end")
    fresh = await ctx.request({"id": "n", "type": "new_session"})
    ctx.check("new_session", {**ok("n", "new_session"), "data": {"cancelled": False}}, fresh)
    state = await ctx.request({"id": "s", "type": "get_state"})
    ctx.check("empty after new_session", {"data": {"messageCount": 0, "isStreaming": False}}, state)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("ready_and_state", "ready comes first; get_state of a fresh session", ready_and_state),
    Scenario("ids_and_unknown_commands", "id echo and omission; unknown commands", ids_and_unknown_commands),
    Scenario("malformed_json", "parse errors for bad lines; blank lines ignored", malformed_json),
    Scenario("simple_prompt", "prompt ack, the standard run, getters after it", simple_prompt),
    Scenario("prompt_while_busy", "busy prompt refused; abort while streaming", prompt_while_busy),
    Scenario("follow_up_while_streaming", "a follow-up becomes a second turn", follow_up_while_streaming),
    Scenario("host_tool_round_trip", "host tool call, progress and result", host_tool_round_trip),
    Scenario("new_session_resets", "new_session empties the conversation", new_session_resets),
)
