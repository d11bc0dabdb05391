"""The built-in tools run for real behind the RPC process, with the session cwd as base."""

from __future__ import annotations

import json

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_agent_writes_a_file_then_reads_it_back(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        script.tool_calls(
            ("w1", "write", {"_i": "create it", "path": "notes/hello.txt", "content": "hello world\n"})
        ),
        script.tool_calls(("r1", "read", {"path": "notes/hello.txt"})),
        script.text("The file says hello world."),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "read,write"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        state = await client.get_state()
        frames = await client.prompt_and_wait("Create notes/hello.txt and read it back?")
    assert [t["name"] for t in state["dumpTools"]] == ["read", "write"]
    assert (workspace.proj / "notes" / "hello.txt").read_text() == "hello world\n"
    ends = [f for f in frames if f["type"] == "tool_execution_end"]
    assert [e["toolName"] for e in ends] == ["write", "read"]
    assert all(e["isError"] is False for e in ends)
    assert "hello world" in ends[1]["result"]["content"][0]["text"]
    start = next(f for f in frames if f["type"] == "tool_execution_start")
    assert start["intent"] == "create it" and "_i" not in start["args"]
    tools = fake_llm.requests[0].json["tools"]
    assert {t["function"]["name"] for t in tools} == {"read", "write"}
    assert fake_llm.requests[0].json["tools"][0]["function"]["parameters"]["required"][0] == "_i"
    tool_messages = [m for m in fake_llm.requests[2].json["messages"] if m["role"] == "tool"]
    assert "hello world" in tool_messages[-1]["content"]


async def test_stray_output_of_a_tool_child_process_never_reaches_the_protocol_stream(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    command = "echo LEAK-OUT; echo LEAK-ERR >&2; (echo LEAK-BG &) ; printf 'LEAK\\n' > /dev/stderr"
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": command})), script.text("done"))
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "bash"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("run it?")
        raw_frames = list(client.frames)
    for frame in raw_frames:
        assert isinstance(frame, dict) and frame.get("type") != "invalid"
    end = next(f for f in raw_frames if f["type"] == "tool_execution_end")
    assert "LEAK-OUT" in end["result"]["content"][0]["text"]


STRAY_SITECUSTOMIZE = """
import os, sys, threading, time

def _leak():
    deadline = time.time() + 20
    while sys.stdout is not sys.stderr and time.time() < deadline:
        time.sleep(0.01)
    print("STRAY-PRINT")
    sys.stdout.flush()
    os.write(1, b"STRAY-FD1\\n")
    os.system("echo STRAY-CHILD")
    sys.stderr.write("LEAK-DONE\\n")
    sys.stderr.flush()

threading.Thread(target=_leak, daemon=True).start()
"""


async def test_stray_prints_fd1_writes_and_child_processes_go_to_stderr(
    workspace: Workspace, tmp_path: object
) -> None:
    import asyncio
    from pathlib import Path

    site = Path(str(tmp_path)) / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STRAY_SITECUSTOMIZE)
    env = dict(workspace.env)
    env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"
    args = ["--model", "fake/fake-model", "--no-session", "--no-tools"]
    async with RpcClient.spawn(
        args=args, cwd=workspace.proj, env=env, stderr=asyncio.subprocess.PIPE
    ) as client:
        assert client.process.stderr is not None
        stderr = b""
        async with asyncio.timeout(20):
            while b"LEAK-DONE" not in stderr:
                line = await client.process.stderr.readline()
                assert line, "the process ended before the leaking thread finished"
                stderr += line
        state = await client.get_state()
    assert state["isStreaming"] is False
    assert all(f.get("type") != "invalid" for f in client.frames)
    for marker in (b"STRAY-PRINT", b"STRAY-FD1", b"STRAY-CHILD"):
        assert marker in stderr


async def test_schema_constrained_models_get_tool_schemas_without_the_intent_field(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    from conftest import fake_models_yml

    extra = "      - id: small-model\n        contextWindow: 16384\n        maxTokens: 512\n        compat: { constrainedToolCalls: true }\n"
    (workspace.agent / "models.yml").write_text(fake_models_yml(fake_llm.base_url, extra_models=extra))
    fake_llm.script(script.text('{"final": "nothing to do"}'), script.text("ok"))
    args = ["--model", "fake/small-model", "--no-session", "--tools", "read"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("anything to do?")
        assert await client.get_last_assistant_text() == "nothing to do"
        await client.set_model("fake", "fake-model")
        await client.prompt_and_wait("and now?")
    constrained = json.dumps(fake_llm.requests[0].json["response_format"])
    assert '"path"' in constrained and '"_i"' not in constrained
    regular = fake_llm.requests[1].json["tools"][0]["function"]["parameters"]
    assert regular["required"][0] == "_i"
