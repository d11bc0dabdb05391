"""Defects the fuzzing campaign against the real `xcsh --mode rpc` found, each kept as a test.

Each test sends the shortest input that broke the process and checks what the protocol
requires instead (rpc-protocol.md). Several frames go in one write where the defect needs
them to be read in one loop turn (the server then handles them without a turn in between).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from conftest import BASE_ARGS, Workspace, user_texts
from e2e.helpers import spawn_rpc
from xcsh.rpc.client import RpcClient
from xcsh.rpc.schema import FrameChecker
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]


def _lines(*frames: bytes) -> bytes:
    return b"".join(frame + b"\n" for frame in frames)


def _responses(frames: list[Frame], cid: str) -> list[Frame]:
    return [f for f in frames if f["type"] == "response" and f.get("id") == cid]


def _last_user_text(request: Any) -> str:
    """The host's words in a recorded request (after any reminder the agent put before them)."""
    return user_texts(request)[-1].rsplit("\n", 1)[-1]


async def test_abort_and_prompt_read_with_the_prompt_it_aborts_runs_its_own_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the queued command before the prompt makes the prompt and abort_and_prompt run in one
    # loop turn: the prompt is accepted but its task has not started when the abort comes
    fake_llm.script(script.text("second answer"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        client.send_raw(
            _lines(
                b'{"id":"mode","type":"set_steering_mode","mode":"all"}',
                b'{"id":"first","type":"prompt","message":"first"}',
                b'{"id":"second","type":"abort_and_prompt","message":"second"}',
            )
        )
        await client.wait_for(lambda f: f.get("id") == "second", since=start, timeout=30)
        await client.wait_for_type("agent_end", since=start, timeout=30)
        state = await client.request({"id": "state", "type": "get_state"}, timeout=30)
        frames = client.frames[start:]
    assert [r["success"] for r in _responses(frames, "second")] == [True]
    # the first prompt never ran: its host is told so (the late error), not left waiting
    assert [r["success"] for r in _responses(frames, "first")] == [True, False]
    assert _responses(frames, "first")[1]["error"] == "Prompt aborted before its run started"
    assert state["data"]["isStreaming"] is False
    assert [_last_user_text(r.json) for r in fake_llm.requests] == ["second"]
    ends = [f for f in frames if f["type"] == "agent_end"]
    assert len(ends) == 1 and ends[0]["messages"][-1]["content"][0]["text"] == "second answer"


async def test_a_prompt_read_right_after_an_abort_runs_once_the_abort_is_done(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # `abort` is a control command (it acts at once) but answers once the session is idle
    # (rpc-protocol §5.1); an ordinary command read after it is handled after that, in
    # arrival order, so a host's "abort, then prompt" burst is not refused as busy
    fake_llm.script(script.hold("first answer"), script.text("third answer"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        await client.request({"id": "first", "type": "prompt", "message": "first"}, timeout=30)
        await client.wait_for(lambda f: f.get("type") == "message_update", since=start, timeout=30)
        client.send_raw(
            _lines(
                b'{"id":"stop","type":"abort"}',
                b'{"id":"third","type":"prompt","message":"third"}',
            )
        )
        await client.wait_for(lambda f: f.get("id") == "third", since=start, timeout=30)
        ends = 0

        def second_end(frame: Frame) -> bool:
            nonlocal ends
            ends += frame.get("type") == "agent_end"
            return ends == 2

        await client.wait_for(second_end, since=start, timeout=30)
        frames = client.frames[start:]
    assert [r["success"] for r in _responses(frames, "stop")] == [True]
    assert [r["success"] for r in _responses(frames, "third")] == [True]
    assert [_last_user_text(r.json) for r in fake_llm.requests] == ["first", "third"]
    ids = [f.get("id") for f in frames if f["type"] == "response"]
    assert ids.index("stop") < ids.index("third")


async def test_the_client_reads_frames_that_echo_a_lone_surrogate_the_host_sent(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # "\ud800" is a valid JSON escape; the server keeps it and echoes it escaped the same way,
    # so the client must read those frames (before: kept as "invalid", the request never answered)
    fake_llm.script(script.text("answer"))
    async with RpcClient.spawn(
        args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=30, run_timeout=30
    ) as client:
        client.send_raw(b'{"id":"p","type":"prompt","message":"a\\ud800b"}\n')
        start = await client.wait_for(
            lambda f: f.get("type") == "message_start" and f["message"]["role"] == "user", timeout=30
        )
        await client.wait_for_idle(timeout=30)
        messages = await client.get_messages()
    assert start["message"]["content"] == [{"type": "text", "text": "a\ud800b"}]
    users = [m for m in messages if m["role"] == "user"]
    assert [u["content"] for u in users] == [[{"type": "text", "text": "a\ud800b"}]]
    assert messages[-1]["role"] == "assistant"


ECHO_HOST = {
    "name": "echo_host",
    "description": "echo",
    "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
}


async def test_malformed_blocks_of_a_host_tool_result_become_text_and_the_session_keeps_working(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # a block without "type" made every later provider request fail ("'type'"), in this
    # process and in any that resumed the session: it is kept as a text block with its JSON
    fake_llm.script(
        script.tool_calls(("call_1", "echo_host", {"message": "hi"})),
        script.text("after the tool"),
        script.text("next answer"),
    )
    good = {"type": "text", "text": "fine"}
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=30) as client:
        await client.request({"type": "set_host_tools", "tools": [ECHO_HOST]}, timeout=30)
        start = client.mark()
        await client.request({"type": "prompt", "message": "go"}, timeout=30)
        call = await client.wait_for_type("host_tool_call", since=start, timeout=30)
        result = {"content": [good, {"text": "no type"}, "bare", 5, {"type": "image"}]}
        client.send_raw({"type": "host_tool_result", "id": call["id"], "result": result})
        await client.wait_for_type("agent_end", since=start, timeout=30)
        second = client.mark()
        await client.request({"type": "prompt", "message": "again"}, timeout=30)
        await client.wait_for_type("agent_end", since=second, timeout=30)
        frames = client.frames[start:]
    tool_result = next(
        f["message"] for f in frames if f["type"] == "message_end" and f["message"]["role"] == "toolResult"
    )
    assert tool_result["content"] == [
        good,
        {"type": "text", "text": '{"text": "no type"}'},
        {"type": "text", "text": '"bare"'},
        {"type": "text", "text": "5"},
        {"type": "text", "text": '{"type": "image"}'},
    ]
    answers = [
        f["message"] for f in frames if f["type"] == "message_end" and f["message"]["role"] == "assistant"
    ]
    assert [a["stopReason"] for a in answers] == ["toolUse", "stop", "stop"]
    assert len(fake_llm.requests) == 3


async def test_malformed_blocks_of_a_host_tool_update_become_text_in_the_update_frame(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # round 3: an update's blocks were forwarded verbatim, so tool_execution_update left the schema
    fake_llm.script(script.tool_calls(("call_1", "echo_host", {"message": "hi"})), script.text("done"))
    good = {"type": "text", "text": "working"}
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=30) as client:
        await client.request({"type": "set_host_tools", "tools": [ECHO_HOST]}, timeout=30)
        start = client.mark()
        await client.request({"type": "prompt", "message": "go"}, timeout=30)
        call = await client.wait_for_type("host_tool_call", since=start, timeout=30)
        partial = {"content": [good, {"type": "text", "text": 5}, {"type": "image", "data": 5}]}
        client.send_raw({"type": "host_tool_update", "id": call["id"], "partialResult": partial})
        update = await client.wait_for_type("tool_execution_update", since=start, timeout=30)
        client.send_raw({"type": "host_tool_result", "id": call["id"], "result": {"content": [good]}})
        await client.wait_for_type("agent_end", since=start, timeout=30)
    assert update["partialResult"]["content"] == [
        good,
        {"type": "text", "text": '{"type": "text", "text": 5}'},
        {"type": "text", "text": '{"type": "image", "data": 5}'},
    ]
    assert FrameChecker().violations(update) == []


def _entry(entry_id: str, parent: str | None, message: object) -> str:
    return json.dumps(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-07-02T18:38:57.000Z",
            "message": message,
        }
    )


# messages written by another program (or edited by hand) that the agent cannot use
UNUSABLE_MESSAGES: dict[str, object] = {
    "not an object": 5,
    "assistant without a timestamp": {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "ls"}}],
        "stopReason": "toolUse",
    },
    "user content that is a number": {"role": "user", "content": 5},
    "tool call without an id": {
        "role": "assistant",
        "content": [{"type": "toolCall", "name": "bash", "arguments": {}}],
        "stopReason": "toolUse",
        "timestamp": 1,
    },
}


async def test_a_session_file_with_messages_the_agent_cannot_use_is_switched_to_and_keeps_working(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # each unusable message, the last entry of its file, made the switch fail (after adopting the
    # file: 'int' object has no attribute 'get') or every later prompt of the session fail in
    # the agent loop (KeyError 'timestamp', 'id'; TypeError); it is skipped like
    # an unparseable line (session-format §2: readers are lenient) and the rest is kept
    header = json.dumps(
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-07-02T18:38:56.123Z", "cwd": "/"}
    )
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "first answer"}],
        "stopReason": "stop",
        "timestamp": 1,
    }
    paths = []
    for n, message in enumerate(UNUSABLE_MESSAGES.values()):
        path = workspace.sess / f"foreign-{n}.jsonl"
        lines = [
            header,
            _entry("a", None, {"role": "user", "content": "first question", "timestamp": 1}),
            _entry("b", "a", answer),
            _entry("c", "b", message),
        ]
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
        fake_llm.script(script.text(f"answer {n}"))
    async with RpcClient.spawn(
        args=BASE_ARGS[:-1], cwd=workspace.proj, env=workspace.env, timeout=30
    ) as client:
        for n, (name, path) in enumerate(zip(UNUSABLE_MESSAGES, paths, strict=True)):
            switched = await client.request(
                {"id": f"s{n}", "type": "switch_session", "sessionPath": str(path)}
            )
            assert switched["success"], (name, switched)
            start = client.mark()
            await client.request({"type": "prompt", "message": f"question {n}"}, timeout=30)
            end = await client.wait_for_type("agent_end", since=start, timeout=30)
            final = end["messages"][-1]
            assert final["role"] == "assistant" and final["content"] == [
                {"type": "text", "text": f"answer {n}"}
            ], (name, final.get("errorMessage"))
            assert "first question" in json.dumps(fake_llm.requests[-1].json), name


async def test_tool_call_arguments_nested_deeper_than_the_parser_follows_end_the_run_with_a_tool_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the partial-JSON parser raised RecursionError inside the provider, and again in the
    # builder's failure path: the assistant message never ended and the run hung until an abort
    depth = 1_500
    arguments = '{"command":"ls","x":' + '{"a":' * depth + "1" + "}" * depth + "}"
    fake_llm.script(
        script.Reply(tool_calls=[script.ToolCallSpec("call_deep", "bash", arguments, 500)]),
        script.text("after the tool"),
        script.text("next answer"),
    )
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=30) as client:
        start = client.mark()
        await client.request({"type": "prompt", "message": "go"}, timeout=30)
        end = await client.wait_for_type("agent_end", since=start, timeout=30)
        second = client.mark()
        await client.request({"type": "prompt", "message": "again"}, timeout=30)
        again = await client.wait_for_type("agent_end", since=second, timeout=30)
    call, result, answer = end["messages"][-3:]
    assert call["role"] == "assistant" and call["content"][0]["arguments"] == {}
    assert result["role"] == "toolResult" and result["isError"] is True
    assert answer["content"] == [{"type": "text", "text": "after the tool"}]
    assert again["messages"][-1]["content"] == [{"type": "text", "text": "next answer"}]


async def test_a_host_tool_schema_whose_properties_or_required_have_the_wrong_type_is_taken_and_the_session_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the reference takes such schemas (its only checks are the table of spec §set_host_tools).
    # Taking one once failed every later prompt of the session ("'int' object is not a mapping"
    # while the request's tool definitions were built), and a call of the tool ended the run
    # ("agent loop failed"); the call is now a tool error naming the tool, and the run goes on
    bad = [
        {"type": "object", "properties": 5},
        {"type": "object", "properties": {}, "required": 5},
        {"type": "object", "properties": {"a": {"type": "object", "properties": [1]}}},
    ]
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=30) as client:
        for n, schema in enumerate(bad):
            fake_llm.script(
                script.tool_calls((f"call_{n}", "echo_host", {"a": {"b": 1}})),
                script.text(f"still answering {n}"),
            )
            tool = {**ECHO_HOST, "parameters": schema}
            answer = await client.request({"id": f"h{n}", "type": "set_host_tools", "tools": [tool]})
            assert answer["success"] is True, answer
            start = client.mark()
            await client.request({"type": "prompt", "message": "go"}, timeout=30)
            end = await client.wait_for_type("agent_end", since=start, timeout=30)
            result = next(m for m in end["messages"] if m["role"] == "toolResult")
            assert result["isError"] is True
            assert result["content"][0]["text"].startswith('Validation failed for tool "echo_host"')
            assert end["messages"][-1]["content"] == [{"type": "text", "text": f"still answering {n}"}]
            assert end["messages"][-1]["stopReason"] == "stop"


async def test_a_host_tool_whose_schema_cannot_be_applied_answers_the_call_with_a_tool_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the argument validation raised (jsonschema UnknownType): the run ended in an error instead
    # of a tool result the model could read
    fake_llm.script(
        script.tool_calls(("call_1", "echo_host", {"message": "hi"})),
        script.text("read the tool error"),
    )
    tool = {**ECHO_HOST, "parameters": {"type": "banana"}}
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=30) as client:
        await client.request({"type": "set_host_tools", "tools": [tool]}, timeout=30)
        start = client.mark()
        await client.request({"type": "prompt", "message": "go"}, timeout=30)
        end = await client.wait_for_type("agent_end", since=start, timeout=30)
    call, result, answer = end["messages"][-3:]
    assert call["stopReason"] == "toolUse"
    assert result["role"] == "toolResult" and result["isError"] is True
    assert "parameter schema cannot be used" in result["content"][0]["text"]
    assert answer["content"] == [{"type": "text", "text": "read the tool error"}]


async def test_switch_session_and_export_html_to_a_pipe_are_refused_and_leave_it_a_pipe(
    workspace: Workspace, tmp_path: Path
) -> None:
    # switch_session opened the FIFO to read it and the whole process waited for a writer; an
    # export (or a new session at a device path) renamed a file over it: as root, over /dev/null
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    try:
        async with RpcClient.spawn(
            args=BASE_ARGS[:-1], cwd=workspace.proj, env=workspace.env, timeout=20
        ) as client:
            switched = await client.request({"id": "s", "type": "switch_session", "sessionPath": str(fifo)})
            exported = await client.request({"id": "e", "type": "export_html", "outputPath": str(fifo)})
            state = await client.get_state()
    finally:
        with contextlib.suppress(OSError):  # only a failing run left a reader waiting on it
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert switched["success"] is False and "not a regular file" in switched["error"]
    assert exported["success"] is False and "not a regular file" in exported["error"]
    assert state["sessionFile"] != str(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


async def test_stdin_ending_while_a_compact_waits_on_the_model_ends_the_process(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # commands received before EOF are answered before the exit, and a compact whose summary
    # stream never ended held the process forever (found by the second fuzzing round, seed 810)
    turns = 8
    fake_llm.script(*[script.text("answer " + "z" * 20_000) for _ in range(turns)], script.hold("summary"))
    prompts = b"".join(
        json.dumps({"id": f"p{i}", "type": "prompt", "message": f"question {i}"}).encode() + b"\n"
        for i in range(turns)
    )
    process = await spawn_rpc(workspace.proj, workspace.env, *BASE_ARGS)
    assert process.stdin is not None and process.stdout is not None
    try:
        async with asyncio.timeout(30):
            for line in prompts.splitlines(keepends=True):
                process.stdin.write(line)
                while json.loads(await process.stdout.readline()).get("type") != "agent_end":
                    pass
            process.stdin.write(b'{"id":"c","type":"compact"}\n')
            await process.stdin.drain()
            await asyncio.to_thread(fake_llm.wait_for_requests, turns + 1, 20)  # the summary is streaming
            process.stdin.close()
            rest = [json.loads(line) async for line in process.stdout]
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert code == 0
    compact = [f for f in rest if f.get("type") == "response" and f.get("command") in ("compact", "parse")]
    assert len(compact) == 1 and compact[0]["success"] is False  # answered: cancelled
