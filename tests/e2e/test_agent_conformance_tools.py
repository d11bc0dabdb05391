"""Tool calls under the wire (agent-behaviour §3, §4.3, §13), checked against the real process."""

from __future__ import annotations

import json
from typing import Any

from conftest import Workspace, tool_results
from e2e.agent_harness import ECHO, Frame, spawn
from e2e.helpers import of_call, text_of
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# ---- §4.3: immediate interrupts --------------------------------------------------------------------


async def test_a_call_skipped_before_it_started_reports_is_warning_false(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """Every executed-path tool result carries a boolean isWarning, the never-started skipped one too."""
    fake_llm.script(
        script.tool_calls(
            ("c1", "echo_host", {"message": "a"}), ("c2", "write", {"path": "x.txt", "content": "x"})
        ),
        script.text("done"),
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session", "--tools", "write") as client:
        await client.set_interrupt_mode("immediate")
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        call = await client.wait_for(lambda f: f.get("type") == "host_tool_call", since=start)
        await client.steer("stop after this")
        client.send_raw(
            {
                "type": "host_tool_result",
                "id": call["id"],
                "result": {"content": [{"type": "text", "text": "a"}]},
            }
        )
        frames = await client.wait_for_idle(since=start)
    end = next(f for f in frames if of_call("tool_execution_end", "c2")(f))
    assert end["isError"] is True and text_of(end["result"]) == "Skipped due to queued user message."
    assert end["isWarning"] is False
    result = next(
        f["message"] for f in frames if f["type"] == "message_end" and f["message"].get("toolCallId") == "c2"
    )
    assert result["isWarning"] is False
    assert not (workspace.proj / "x.txt").exists()


# ---- §3.3: validation -----------------------------------------------------------------------------


async def test_a_missing_required_argument_is_reported_under_its_own_name(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """`Validation failed …:\\n  - <path>: <message>`: a missing property's path is the property."""
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"note": "n"})), script.text("ok"))
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        await client.set_host_tools([ECHO])
        frames = await client.prompt_and_wait("go?")
    end = next(f for f in frames if of_call("tool_execution_end", "c1")(f))
    lines = text_of(end["result"]).split("\n")
    assert end["isError"] is True and lines[0] == 'Validation failed for tool "echo_host":'
    assert lines[1].startswith("  - message: ") and "message" in lines[1].removeprefix("  - message: ")
    assert lines[2:4] == ["", "Received arguments:"]
    assert json.loads("\n".join(lines[4:])) == {"note": "n"}


# ---- §3.4: synthetic results for the tool calls of a failed or aborted response ------------------------


def _synthetic(frames: list[Frame], call_id: str) -> tuple[Frame, Frame, Frame]:
    start = next(f for f in frames if of_call("tool_execution_start", call_id)(f))
    end = next(f for f in frames if of_call("tool_execution_end", call_id)(f))
    result = next(
        f["message"]
        for f in frames
        if f["type"] == "message_end" and f["message"].get("toolCallId") == call_id
    )
    return start, end, result


async def test_abort_while_the_model_emits_a_tool_call_gives_it_an_aborted_result(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    gate = script.Gate()
    fake_llm.script(
        script.Reply(tool_calls=[script.ToolCallSpec("c1", "echo_host", '{"message":"hi"}')], gate=gate)
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        await client.wait_for(lambda f: f.get("type") == "message_update", since=start)
        await client.abort()
        gate.release()
        frames = client.frames[start:]
        messages = await client.get_messages()
    assert not [f for f in frames if f["type"] == "host_tool_call"]
    assistant = next(
        f["message"] for f in frames if f["type"] == "message_end" and f["message"]["role"] == "assistant"
    )
    assert assistant["stopReason"] == "aborted" and assistant["errorMessage"] == "Request was aborted"
    assert [b["id"] for b in assistant["content"] if b["type"] == "toolCall"] == ["c1"]
    tool_start, end, result = _synthetic(frames, "c1")
    text = "Tool execution was aborted: Request was aborted"
    assert tool_start["toolName"] == "echo_host"
    assert end == {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "echo_host",
        "result": {"content": [{"type": "text", "text": text}], "details": {}},
        "isError": True,
    }
    assert result["isError"] is True and result["details"] == {} and "isWarning" not in result
    assert result["content"] == [{"type": "text", "text": text}]
    turn_end = next(f for f in frames if f["type"] == "turn_end")
    assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["c1"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]


async def test_a_response_cut_while_emitting_a_tool_call_gives_it_a_failed_result(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.Reply(tool_calls=[script.ToolCallSpec("c1", "echo_host", '{"message":"hi"}')], cut=True)
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        await client.set_auto_retry(False)
        await client.set_host_tools([ECHO])
        frames = await client.prompt_and_wait("go?")
    assistant = next(
        f["message"] for f in frames if f["type"] == "message_end" and f["message"]["role"] == "assistant"
    )
    assert assistant["stopReason"] == "error" and assistant["errorMessage"]
    _, end, result = _synthetic(frames, "c1")
    text = f"Tool execution failed due to an error: {assistant['errorMessage']}"
    assert end["isError"] is True and end["result"]["content"] == [{"type": "text", "text": text}]
    assert "isWarning" not in end and result["content"] == [{"type": "text", "text": text}]
    assert not [f for f in frames if f["type"] == "host_tool_call"]
    assert [f["type"] for f in frames][-2:] == ["turn_end", "agent_end"]


# ---- §3.3: concurrency classes -----------------------------------------------------------------------


async def test_an_exclusive_call_waits_for_earlier_calls_and_later_calls_wait_for_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """shared c1 ‖ shared c2 → exclusive write c3 → shared c4; results in completion order."""
    fake_llm.script(
        script.tool_calls(
            ("c1", "echo_host", {"message": "1"}),
            ("c2", "echo_host", {"message": "2"}),
            ("c3", "write", {"path": "x.txt", "content": "x"}),
            ("c4", "echo_host", {"message": "4"}),
        ),
        script.text("done"),
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session", "--tools", "write") as client:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        calls = {}
        for call_id in ("c1", "c2"):
            frame = await client.wait_for(of_call("host_tool_call", call_id), since=start)
            calls[call_id] = frame["id"]
        for call_id, text in (("c2", "two"), ("c1", "one")):
            client.send_raw(
                {
                    "type": "host_tool_result",
                    "id": calls[call_id],
                    "result": {"content": [{"type": "text", "text": text}]},
                }
            )
            await client.wait_for(of_call("tool_execution_end", call_id), since=start)
        c4 = await client.wait_for(of_call("host_tool_call", "c4"), since=start)
        client.send_raw(
            {
                "type": "host_tool_result",
                "id": c4["id"],
                "result": {"content": [{"type": "text", "text": "4"}]},
            }
        )
        frames = await client.wait_for_idle(since=start)
    order = [
        (f["type"].removeprefix("tool_execution_"), f["toolCallId"])
        for f in frames
        if f["type"] in ("tool_execution_start", "tool_execution_end")
    ]
    assert order == [
        ("start", "c1"),
        ("start", "c2"),
        ("end", "c2"),
        ("end", "c1"),
        ("start", "c3"),
        ("end", "c3"),
        ("start", "c4"),
        ("end", "c4"),
    ]
    turn_end = next(f for f in frames if f["type"] == "turn_end")
    assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["c2", "c1", "c3", "c4"]
    assert list(tool_results(fake_llm.requests[1].json)) == ["c2", "c1", "c3", "c4"]
    assert (workspace.proj / "x.txt").read_text() == "x"


# ---- §3.3: events of one call carry the same args -------------------------------------------------------


async def test_progress_updates_carry_the_same_args_as_the_start_event(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """args of tool_execution_update = args of tool_execution_start (validation may only clean the tool's copy)."""
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"message": "a", "note": None})), script.text("ok"))
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        call = await client.wait_for_type("host_tool_call", since=start)
        client.send_raw(
            {
                "type": "host_tool_update",
                "id": call["id"],
                "partialResult": {"content": [{"type": "text", "text": "…"}]},
            }
        )
        update = await client.wait_for_type("tool_execution_update", since=start)
        client.send_raw(
            {
                "type": "host_tool_result",
                "id": call["id"],
                "result": {"content": [{"type": "text", "text": "a"}]},
            }
        )
        frames = await client.wait_for_idle(since=start)
    tool_start = next(f for f in frames if of_call("tool_execution_start", "c1")(f))
    assert tool_start["args"] == {"message": "a", "note": None}
    assert update["args"] == tool_start["args"]
    assert call["arguments"] == {"message": "a"}


# ---- §3.3 step 7 / §13: isWarning comes from the tool's result ---------------------------------------------


async def test_a_search_without_matches_is_a_warning_not_an_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "a.txt").write_text("alpha\n")
    fake_llm.script(
        script.tool_calls(("g1", "grep", {"pattern": "zebra"}), ("f1", "find", {"pattern": "*.nothing"})),
        script.text("none"),
    )
    async with spawn(
        workspace, "--model", "fake/fake-model", "--no-session", "--tools", "grep,find"
    ) as client:
        frames = await client.prompt_and_wait("search?")
    for call_id, text in (("g1", "No matches found"), ("f1", "No files found matching pattern")):
        end = next(f for f in frames if of_call("tool_execution_end", call_id)(f))
        assert (end["isError"], end["isWarning"], text_of(end["result"])) == (False, True, text)
        message = next(
            f["message"]
            for f in frames
            if f["type"] == "message_end" and f["message"].get("toolCallId") == call_id
        )
        assert (message["isError"], message["isWarning"]) == (False, True)


# ---- §3.3 step 3: intent on the event and on the toolCall block ---------------------------------------------


async def test_the_trimmed_intent_is_also_set_on_the_tool_call_block(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.tool_calls(("c1", "echo_host", {"_i": "  say hi ", "message": "hi"})), script.text("ok")
    )

    async def echo(args: dict[str, Any], update: Any) -> str:
        return "hi"

    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        client.on_host_tool("echo_host", echo)
        await client.set_host_tools([ECHO])
        await client.prompt_and_wait("go?")
        messages = await client.get_messages()
    call = next(
        b for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"
    )
    assert call["intent"] == "say hi"
    assert call["arguments"] == {
        "_i": "  say hi ",
        "message": "hi",
    }  # as the model produced them (decisions.md)
